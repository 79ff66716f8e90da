/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A member of the manager's two-phase commit: the control thread of a mux
 * or a host agent. It owns the connection to the manager (nng pair1 over
 * tls+tcp:// with a client certificate, or ipc://) and the protocol; the
 * data plane supplies three callbacks and never blocks on any of this.
 *
 *   HELLO     on every (re)connection: id, role, the applied version and
 *             its table digest (the manager fences a member whose hello
 *             comes mid-round: it must have lost what it prepared).
 *   STATUS    every heartbeat: the applied version and counters, a mux's
 *             per-service and per-backend counters (at most
 *             LB_MSG_MAX_FLOWS; the next ones in the next STATUS) and (a
 *             mux with BGP) its routes.
 *   PREPARE   N on base N-1 == applied: the delta is applied to a copy of
 *             the applied table, the digest checked, and ops->build() makes
 *             the data plane's structures off the fast path; the vote says
 *             yes only if all of that worked. A PREPARE on another base is
 *             refused (vote no) and a snapshot is asked for.
 *   COMMIT    N with the prepared digest: ops->publish() (one pointer store
 *             in the data plane). A COMMIT for anything else is ignored; one
 *             for a version past the applied one without a PREPARE asks for
 *             a snapshot.
 *   ABORT     N: ops->discard() the prepared build.
 *   SNAPSHOT  chunks of version V: assembled, validated, digest checked,
 *             built and published directly (the manager committed V).
 *   WELCOME   resync set: ask for a snapshot.
 *   SYNC      the manager's word on announcing (a mux): ops->sync().
 *
 * Every message is keyed by (version, digest): a duplicate PREPARE is
 * answered with the same vote, a duplicate COMMIT changes nothing.
 *
 * Several managers (docs/manager.md, "High availability"): `urls` lists
 * them; a standby refuses the hello with the leader's URL (REFUSED,
 * not_leader) and the member dials that one, or the next of its list.
 * Messages carry the leader's term and a member refuses an older term
 * than the highest it has seen (lb_fence.h). A leader answers every
 * STATUS with a WELCOME: a member that has had such answers and then
 * hears nothing for LB_MEMBER_LEADER_SILENT heartbeats takes the leader
 * for frozen and dials the next manager.
 *
 * Last known good (lb_lkg.h): every table the member comes to run from a
 * manager (COMMIT, snapshot) is written to `state_file`. At start, if no
 * manager has welcomed it within `lkg_wait_ms`, it loads that file and
 * runs it (build, publish) at its version; a manager then brings it to
 * the committed version by delta or snapshot as usual. A file that does
 * not decode whole is logged and ignored: the member starts empty.
 */
#ifndef LB_MEMBER_H
#define LB_MEMBER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_codec.h"
#include "lb_config.h"

struct lb_member;

struct lb_member_ops {
	/*
	 * Build the data plane's structures for `next` (version `version`),
	 * off the fast path. Returns an opaque handle, or NULL with the
	 * reason in err (the member then votes no with it).
	 */
	void *(*build)(
		void *arg, const struct lb_ftable *next, uint64_t version, char *err, size_t len);
	/* Make a build the running one (the old one is the callee's to free). */
	void (*publish)(void *arg, void *built, uint64_t version);
	/* Throw a build away unpublished. */
	void (*discard)(void *arg, void *built);
	/* Optional: counters for the STATUS heartbeat (at most `max`). */
	uint32_t (*counters)(void *arg, struct lb_counter *out, uint32_t max);
	/* Optional: the routes for STATUS; false: none to report. */
	bool (*route)(void *arg, struct lb_route_state *out);
	/*
	 * Optional: the manager's word on announcing (SyncState): in sync
	 * from `version` on, or not and why.
	 */
	void (*sync)(void *arg, bool in_sync, uint64_t version, const char *why);
	/* Optional: a mux's share of the admission limits (SHARES: index of divisor). */
	void (*shares)(void *arg, uint32_t divisor, uint32_t index);
	/*
	 * Optional (a mux): its services' and backends' counters for STATUS,
	 * from index `first` of the *total it has, at most `max` into out.
	 * Returns how many it wrote.
	 */
	uint32_t (*flows)(void *arg, struct lb_flow_count *out, uint32_t max, uint32_t first,
		uint32_t *total);
};

#define LB_MEMBER_URLS 8		      /* managers a member may list */
#define LB_MEMBER_STATE_DIR "/var/lib/sluice" /* the default state_file's folder */
#define LB_MEMBER_LKG_WAIT_MS 2000	      /* no manager this long at start: last known good */
#define LB_MEMBER_LEADER_SILENT 4	      /* heartbeats without a leader's answer: frozen */

struct lb_member_cfg {
	char id[LB_MSG_ID];		       /* unique per member, e.g. "mux1" */
	enum lb_role role;		       /* LB_ROLE_MUX or LB_ROLE_AGENT */
	char url[256];			       /* tls+tcp://host:port or ipc:///path: urls[0] */
	char urls[LB_MEMBER_URLS][LB_MSG_URL]; /* every manager (url: just one) */
	uint32_t n_urls;
	char ca[LB_CFG_FILE_LEN];   /* tls+tcp: CA that signed the manager's certificate */
	char cert[LB_CFG_FILE_LEN]; /* tls+tcp: this member's certificate ... */
	char key[LB_CFG_FILE_LEN];  /* ... and its key */
	char server_name[128];	    /* tls+tcp: name in the manager's certificate */
	uint32_t heartbeat_ms;	    /* STATUS period (default 1000) */
	lb_be32_t probe_addr;	    /* sent in HELLO: a mux's tunnel address, or 0 */
	struct lb_addr probe_addr6; /* sent in HELLO: a mux's IPv6 one, or all zero */
	/* sent in HELLO: an agent's PAs and its VMs' DIPs (the manager checks
	 * backends' hosts against them) */
	uint32_t n_pas, n_dips;
	struct lb_host_addr pas[LB_MSG_MAX_PAS];
	struct lb_host_addr dips[LB_MSG_MAX_DIPS];
	char state_file[256];	/* the last known good table ("": none kept) */
	uint32_t lkg_wait_ms;	/* at start, no manager this long: load state_file */
	uint32_t lkg_max_age_s; /* serving without a manager this long: withdraw (0: never) */
};

/*
 * Parse the optional "manager" group of a daemon's config into cfg
 * (lb_member_cfg.c):
 *   manager = { url = "tls+tcp://10.99.0.1:7400"; id = "mux1";
 *               ca = "ca.pem"; cert = "mux1.pem"; key = "mux1.key";
 *               server_name = "sluice-manager"; heartbeat_ms = 1000;
 *               state_file = "/var/lib/sluice/mux1.lkg"; lkg_wait_ms = 2000;
 *               lkg_max_age_s = 0; };
 * or urls = [ "tls+tcp://10.99.0.1:7400", "tls+tcp://10.99.0.2:7400" ] in
 * place of url. Relative paths are taken from the config file's folder.
 * Returns 1 when the group is there, 0 when it is not, -LB_ECONFIG with
 * err set.
 */
int lb_member_cfg_load(const config_setting_t *root, const char *cfg_path,
	struct lb_member_cfg *cfg, struct lb_cfg_err *err);

/*
 * Group g's TLS files, its members "ca", "cert" and "key": required where
 * its URLs are tls+tcp://, each readable, a relative path taken from the
 * folder of the configuration file at path. The manager group and the
 * credits group name them alike. 0 or -LB_ECONFIG.
 */
int lb_cfg_tls_files(const config_setting_t *g, bool required, const char *path,
	char ca[LB_CFG_FILE_LEN], char cert[LB_CFG_FILE_LEN], char key[LB_CFG_FILE_LEN],
	struct lb_cfg_err *err);

/*
 * Create a member whose applied table is `initial` at `version` (copied;
 * version 0 and an empty table for a member that starts empty). Dials the
 * manager in the background (nng reconnects by itself). Returns NULL with
 * the reason in err (bad URL, unreadable certificate ...).
 */
struct lb_member *lb_member_create(const struct lb_member_cfg *cfg, const struct lb_member_ops *ops,
	void *arg, const struct lb_ftable *initial, uint64_t version, char *err, size_t len);

/* The control loop: returns after lb_member_stop(). Run it on its own thread. */
void *lb_member_run(void *member);

void lb_member_stop(struct lb_member *m);

/*
 * Stop the member and wait for its thread at most timeout_ms. false: the
 * thread is stuck (seen in nng 1.5.2 calls that never return); the caller
 * should then leave the member alone rather than free it, and exit anyway.
 */
bool lb_member_join(struct lb_member *m, pthread_t thread, unsigned timeout_ms);

/* Close the connection and free what the member holds (after run returned). */
void lb_member_destroy(struct lb_member *m);

/* What the member has applied (any thread). */
uint64_t lb_member_applied(const struct lb_member *m);

/* Connected to the manager right now (any thread). */
bool lb_member_connected(const struct lb_member *m);

/*
 * Is the member serving without a manager (no leader has welcomed it on
 * its current connection)? Then *announce and why say what its routing
 * should do (lb_lkg_verdict(): announce "serving last known good v7 (no
 * manager for 42 s)", or withdraw and why) and it returns true. false: a
 * leader manages it, whose word decides. Any thread.
 */
bool lb_member_lkg_verdict(const struct lb_member *m, bool *announce, char *why, size_t len);

/*
 * Runs what the manager committed (any thread): welcomed without being
 * told to resync, or a snapshot or commit applied since. A daemon is
 * ready (sd_notify) once this is first true.
 */
bool lb_member_synced(const struct lb_member *m);

#endif /* LB_MEMBER_H */
