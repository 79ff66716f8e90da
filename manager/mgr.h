/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager daemon's state, shared by its modules:
 *
 *   mgr_main.c   start-up, recovery from the store, the event loop
 *   mgr_round.c  drives the two-phase commit (mgr_commit.c): batching of
 *                desired changes into versions, the actions, outcomes
 *   mgr_net.c    nng sockets, the member protocol, paced sends, snapshots
 *   mgr_ctl.c    the operator API (sluicectl); mgr_view.c what it shows
 *   mgr_store.c  SQLite; mgr_config.c the configuration file
 *   mgr_pool.c   pool options; mgr_health.c DIP probes (mgr_dip_probe.c);
 *                mgr_effective.c the effective table; mgr_vip_probe.c VIP
 *                probes through every mux
 *
 * One thread owns all of it: nng's own threads only move bytes, and the
 * one callback they run (a pipe closing) writes the pipe id into a
 * self-pipe that the loop reads; probes are non-blocking sockets in an
 * epoll set the loop polls. Four tables matter: `desired` (what operators
 * asked for, with its pool options, stored before they get their answer),
 * `effective` (desired as health, draining, slow start and fail-open make
 * it: what members should run), the round's `next` (being voted on) and
 * `committed` (what the members run). A round carries the effective table
 * as it was when the round began.
 */
#ifndef MGR_H
#define MGR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_codec.h"
#include "mgr_commit.h"
#include "mgr_config.h"
#include "mgr_health.h"
#include "mgr_pool.h"
#include "mgr_store.h"
#include "mgr_text.h"
#include "mgr_transport.h"
#include "mgr_vip_probe.h"

#define MGR_GRACE_MS 1000      /* after start: members reconnect before any round */
#define MGR_SILENT_MS 5000     /* a connected member quiet this long is reported */
#define MGR_SNAP_RETRY_MS 5000 /* a fenced member not back in sync gets another snapshot */
#define MGR_SNAP_RETRY_MAX_MS 60000
#define MGR_STORE_RETRY_MS 1000 /* a round the store refused is retried, doubling */
#define MGR_STORE_RETRY_MAX_MS 30000
#define MGR_REJECT_RETRY_MS 1000 /* after a "no" vote, the next round waits, doubling */
#define MGR_REJECT_RETRY_MAX_MS 30000
#define MGR_PROMISES 4096
#define MGR_REJECTIONS 32
#define MGR_COMMITS 256

/* What the daemon knows of member i beyond mgr_commit's members[i]. */
struct mgr_peer {
	uint32_t mp_pipe; /* its connection */
	bool mp_connected;
	uint64_t mp_since_ms; /* connected / disconnected at */
	uint64_t mp_last_contact_ms;
	uint32_t mp_n_counters;
	struct lb_counter mp_counters[LB_MSG_MAX_COUNTERS];
	uint64_t mp_bad_msgs;
	bool mp_bad_logged;
	bool mp_silent_logged;
	struct mgr_sendq mp_q; /* paced sends */
	/* snapshots */
	uint64_t mp_snap_version;
	uint64_t mp_snap_ms;
	uint32_t mp_snap_backoff_ms;
	uint64_t mp_snaps;
	uint32_t mp_proven_pipe; /* the connection its id was proven on (0: none) */
};

/* The round in flight. */
struct mgr_round {
	bool r_active;
	uint64_t r_version;
	uint8_t r_digest[LB_DIGEST_LEN];
	int64_t r_id;	/* its row in the store */
	uint64_t r_seq; /* the last accepted change it carries */
	uint64_t r_started_ms;
	struct lb_ftable r_next;
	uint8_t *r_prepare; /* the encoded PREPARE, the same for every member */
	size_t r_prepare_len;
	char r_summary[512];
	/* desired when the round began: what a later rejection reverts to */
	struct lb_ftable r_desired;
	struct mgr_pools r_pools;
};

/* An accepted operator change and the version it was told it commits as. */
struct mgr_promise {
	uint64_t p_version;
	uint64_t p_seq;
};

/* Changes seq_lo..seq_hi were thrown away (a member voted no). */
struct mgr_rejection {
	uint64_t rj_lo, rj_hi;
	uint64_t rj_version;
	char rj_reason[LB_MSG_TEXT];
};

/* Version v committed every change up to seq. */
struct mgr_commit_rec {
	uint64_t cr_version;
	uint64_t cr_seq;
};

struct mgr {
	struct mgr_config cfg;
	struct mgr_store *store;
	struct mgr_meta meta;
	bool stopping;
	uint64_t start_ms;
	bool recovered; /* the grace period is over and recovery ran */

	/* recovery, decided at start from the store, acted on after the grace */
	bool rec_pending;
	bool rec_decided;
	uint64_t rec_version;
	uint8_t rec_digest[LB_DIGEST_LEN];
	uint64_t rec_abort_version; /* members saying hello get ABORT for it */

	/* the two-phase commit */
	struct mgr_commit *commit;
	struct mgr_action *acts;      /* a copy of mgr_commit's actions being run */
	uint64_t skip_commit_version; /* its commit record failed: no COMMIT goes out */
	struct mgr_peer peers[MGR_MAX_MEMBERS];
	/*
	 * The committed table as this daemon holds it. mgr_commit counts a
	 * version committed as soon as the votes are in; these move when the
	 * COMMITTED action runs, so a snapshot never pairs N with N-1's table.
	 */
	struct lb_ftable committed;
	uint64_t committed_version;
	uint8_t committed_digest[LB_DIGEST_LEN];
	struct lb_ftable desired;
	uint8_t desired_digest[LB_DIGEST_LEN];
	struct mgr_pools pools; /* desired's pool options */
	/* desired as it was when the committed version's round began */
	struct lb_ftable base_desired;
	struct mgr_pools base_pools;
	/* the effective table: desired as the backends' health makes it */
	struct mgr_health *health;
	struct mgr_dip_prober *dip; /* runs health's probes */
	struct mgr_vip_probe *vip;  /* VIP probes through the muxes */
	struct lb_ftable effective;
	uint8_t effective_digest[LB_DIGEST_LEN];
	bool eff_dirty;	       /* health or timers moved: rebuild before use */
	uint64_t eff_timer_ms; /* when it changes by itself (drain, slow start) */
	struct mgr_round round;
	struct mgr_snap *snap; /* the committed version, encoded for resyncs */

	/* batching */
	uint64_t batch_deadline_ms; /* 0: no change waiting for its window */
	bool start_now;
	uint64_t store_retry_ms; /* 0: the store is fine */
	uint32_t store_backoff_ms;
	uint64_t reject_retry_ms; /* 0: the last round was not voted down */
	uint32_t reject_backoff_ms;
	char store_err[512]; /* the last store error, "" when none since */

	/* changes and what became of them */
	uint64_t accepted_seq, committed_seq;
	struct mgr_promise promises[MGR_PROMISES];
	uint32_t n_promises; /* total ever; ring index = n % MGR_PROMISES */
	struct mgr_rejection rejections[MGR_REJECTIONS];
	uint32_t n_rejections;
	struct mgr_commit_rec commits[MGR_COMMITS];
	uint32_t n_commits;
	char last_outcome[LB_MSG_TEXT + 64];
	uint64_t last_outcome_ms;
	uint64_t n_committed, n_aborted;

	struct mgr_transport *transport; /* sockets, TLS, paced sends */
	struct mgr_guard *guard;	 /* the listeners' guard, on a thread of its own */
	uint64_t n_unexpected;
	/* who asked for the changes since the last round began (history says) */
	char askers[192];
};

/* ---- mgr_round.c ---- */

/* Run the actions mgr_commit produced, until it produces none. */
void mgr_run_actions(struct mgr *m, uint64_t now);

/* Timers: grace, vote deadline, batch window; starts a round when due. */
void mgr_round_tick(struct mgr *m, uint64_t now);

/* The earliest time mgr_round_tick has something to do (UINT64_MAX: none). */
uint64_t mgr_round_next_deadline(const struct mgr *m);

/*
 * Make `next` the desired table and `pools` its pool options (both taken
 * over, even on error) with `meta` (id counters, seed): validated, stored
 * durably, then swapped in; the effective table follows. On success
 * *version is the version the change will commit as. Returns 0, or
 * -LB_EINVAL / -LB_EIO with the reason in err (nothing changed).
 */
int mgr_set_desired(struct mgr *m, struct lb_ftable *next, struct mgr_pools *pools,
	const struct mgr_meta *meta, const char *asker, uint64_t *version, char *err, size_t len);

/* Health or a timer moved: the effective table is rebuilt, batched (health_batch_ms). */
void mgr_effective_touch(struct mgr *m, uint64_t now);

/* Rebuild the effective table if something moved since it was built. */
void mgr_effective_refresh(struct mgr *m, uint64_t now);

/* Is there anything in the effective table that no round carries yet? */
bool mgr_pending(const struct mgr *m);

/* The version desired will commit as when nothing more changes. */
uint64_t mgr_target_version(const struct mgr *m);

enum mgr_wait_state { MGR_WAIT_PENDING, MGR_WAIT_COMMITTED, MGR_WAIT_ABORTED, MGR_WAIT_UNKNOWN };

/* What became of the change(s) told they commit as `version`. */
enum mgr_wait_state mgr_wait(
	const struct mgr *m, uint64_t version, uint64_t *committed_as, const char **reason);

/* What the VIP prober reads of m (mgr_main.c). */
void mgr_vip_env(const struct mgr *m, struct mgr_vip_env *e);

/* ---- mgr_net.c ---- */

/* The transport's events: a member's message, a bad one, a closed connection. */
void mgr_net_member_msg(struct mgr *m, uint32_t pipe, const struct lb_msg *msg, uint64_t now);
void mgr_net_member_malformed(struct mgr *m, uint32_t pipe, const char *why, bool first);
void mgr_net_gone(struct mgr *m, uint32_t pipe, uint64_t now);

/* Hand queued messages to nng as their connections can take them. */
void mgr_net_pump(struct mgr *m, uint64_t now);

uint64_t mgr_net_next_deadline(const struct mgr *m, uint64_t now);

/* Queue one encoded message for member i (copied); dropped if it is not connected. */
void mgr_send(struct mgr *m, int i, const uint8_t *buf, size_t len, uint64_t now);
void mgr_send_msg(struct mgr *m, int i, const struct lb_msg *msg, uint64_t now);
void mgr_send_snapshot(struct mgr *m, int i, uint64_t now);

/* ---- mgr_ctl.c ---- */

/* Answer one operator request; rep is filled (body/json malloc'd). */
void mgr_ctl_handle(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep,
	uint64_t now);

/*
 * The flow_table group of a services file already read into `c` (APPLY's
 * text or services_file) as a desired table: the manager's seed and Maglev
 * size unless the file sets them, ids kept for services and backends that
 * stay in m->desired (same service key, DIP and port), fresh ids from
 * meta's counters for the others. Errors are "FILE:LINE: field: message",
 * FILE being `name` when the text has no file. Returns 0 or -LB_ECONFIG /
 * -LB_ENOMEM; *out is empty on error.
 */
int mgr_services_load(const struct mgr *m, config_t *c, const char *name, struct mgr_meta *meta,
	struct lb_ftable *out, struct mgr_pools *pools, char *err, size_t len);

/* ---- mgr_view.c ---- */

/* vip list: the committed table with each backend's health, and what comes next. */
/* The table members run (and the one to come); only: one service, or NULL for all. */
void mgr_view_vip_list(struct mgr *m, const struct lb_svc_key *only, struct mgr_buf *b,
	struct mgr_buf *j, uint64_t now);

/* status: the probes and the pools that fail open ("FAIL-OPEN ..."). */
void mgr_view_health(struct mgr *m, struct mgr_buf *b, struct mgr_buf *j, uint64_t now);

/* config export: the desired table and its pools as a services file. */
int mgr_view_export(struct mgr *m, char **text);

#endif /* MGR_H */
