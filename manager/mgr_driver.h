/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commit driver: the desired table's changes become versions, and the
 * two-phase commit state machine (core/mgr_commit.h) is driven through
 * them. The driver feeds the state machine its events and runs the actions
 * it answers with; it owns the tables, the store's records of rounds, and
 * what became of every change.
 *
 * Order of a round, so that a kill -9 anywhere is safe:
 *   1. the round is stored as 'prepared' with its table;
 *   2. PREPARE(N, delta from N-1, digest) goes to every in-sync member;
 *   3. all voted yes: MGR_ACT_RECORD_COMMIT stores, in one transaction,
 *      the version row, the round 'committed' and the committed pointer;
 *   4. only then COMMIT(N) goes out.
 * A restart finds either no commit record (the round is aborted and ABORT
 * goes to whoever prepared it) or one (COMMIT is sent again).
 *
 * Batching: a change waits batch_ms for others to join it; a round carries
 * everything pending when it begins; changes made during a round wait for
 * the next one, which starts as soon as this one ends. A round carries the
 * effective table (desired as health makes it, mgr_health.h); health and
 * timer changes wait health_batch_ms, so that a backend that flaps, or a
 * thousand that fail within one probe interval, make a handful of versions.
 *
 * Four tables matter: desired (what operators asked for, with its pool
 * options, stored before they get their answer), effective (desired as
 * health, draining, slow start and fail-open make it: what members should
 * run), the round's next (being voted on) and committed (what the members
 * run). A round carries the effective table as it was when it began.
 *
 * What the actions send goes through the callbacks the driver is given
 * (struct mgr_driver_out): the member protocol delivers them. The driver
 * reads no clock and no socket: the time is an argument. Only the loop
 * thread uses it.
 */
#ifndef MGR_DRIVER_H
#define MGR_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_codec.h"
#include "mgr_commit.h"
#include "mgr_config.h"
#include "mgr_health.h"
#include "mgr_pool.h"
#include "mgr_store.h"

#define MGR_GRACE_MS 1000 /* after start: members reconnect before any round */

struct mgr_driver;

/* How the actions reach the members (the member protocol's). */
struct mgr_driver_out {
	void *ctx;
	/* One encoded message to member i (copied); dropped if it is not connected. */
	void (*send)(void *ctx, int member, const uint8_t *buf, size_t len, uint64_t now);
	/* One message to member i, encoded by the sender. */
	void (*send_msg)(void *ctx, int member, const struct lb_msg *msg, uint64_t now);
	/* The committed version's snapshot to member i. */
	void (*snapshot)(void *ctx, int member, uint64_t now);
	/* A new version committed: the last one's snapshot is of no more use. */
	void (*committed)(void *ctx);
};

/* NULL when out of memory. It uses cfg, store and health, which outlive it. */
struct mgr_driver *mgr_driver_new(
	const struct mgr_config *cfg, struct mgr_store *store, struct mgr_health *health);

void mgr_driver_free(struct mgr_driver *d);

void mgr_driver_set_out(struct mgr_driver *d, const struct mgr_driver_out *out);

/*
 * Start-up from the store: the seed and id counters (the configuration's
 * seed wins), the committed version and its table, the desired table (the
 * services file replaces it when set), health from what members run, and
 * the round a crash left (acted on after the grace period). Returns 0, or
 * -1 after logging why.
 */
int mgr_driver_load(struct mgr_driver *d, uint64_t now);

/* The grace period (MGR_GRACE_MS) for members to reconnect begins at now. */
void mgr_driver_start(struct mgr_driver *d, uint64_t now);

/* ---- events; mgr_driver_run() runs the actions they make ---- */

/*
 * A member's hello: registered, judged (in sync, or fenced and to be sent a
 * snapshot). Returns its index, or -1 when there are MGR_MAX_MEMBERS
 * already. The caller welcomes it, then runs the actions.
 */
int mgr_driver_hello(struct mgr_driver *d, const struct lb_msg *hello, uint64_t now);

/* Member i's vote. */
void mgr_driver_vote(struct mgr_driver *d, int member, const struct lb_msg *vote, uint64_t now);

/*
 * An agent's STATUS counters c[0..n): the load of its backends
 * (core/mgr_load.h); prev[0..n_prev) its STATUS before, whose backends c
 * no longer names are unknown again. The agent gone: its last as prev,
 * none as c.
 */
void mgr_driver_loads(struct mgr_driver *d, const struct lb_counter *prev, uint32_t n_prev,
	const struct lb_counter *c, uint32_t n);

/* Member i's STATUS: the version it runs. */
void mgr_driver_status(struct mgr_driver *d, int member, uint64_t applied, uint64_t now);

/* Member i's connection closed. */
void mgr_driver_gone(struct mgr_driver *d, int member);

/* Fence member i for a reason found outside the protocol (its VIP probes). */
void mgr_driver_fence(struct mgr_driver *d, int member, const char *why);

/* Run the actions the state machine asked for, until it asks for none. */
void mgr_driver_run(struct mgr_driver *d, uint64_t now);

/* Health or a timer moved: the effective table is rebuilt, batched (health_batch_ms). */
void mgr_driver_health(struct mgr_driver *d, uint64_t now);

/* ---- time ---- */

/* Timers: grace, recovery, vote deadline, batch window; starts a round when due. */
void mgr_driver_tick(struct mgr_driver *d, uint64_t now);

/* The earliest time mgr_driver_tick has something to do (UINT64_MAX: none). */
uint64_t mgr_driver_next_deadline(const struct mgr_driver *d, uint64_t now);

/* Is the grace period over (and recovery done)? */
bool mgr_driver_started(const struct mgr_driver *d);

/* ---- changes ---- */

/*
 * Make `next` the desired table and `pools` its pool options (both taken
 * over, even on error) with `meta` (id counters, seed): validated, stored
 * durably, then swapped in; the effective table follows. asker (NULL:
 * nobody) is named in the history of the version that carries it. On
 * success *version is the version the change will commit as. Returns 0,
 * or -LB_EINVAL / -LB_EIO with the reason in err (nothing changed).
 */
int mgr_driver_set_desired(struct mgr_driver *d, struct lb_ftable *next, struct mgr_pools *pools,
	const struct mgr_meta *meta, const char *asker, uint64_t *version, char *err, size_t len,
	uint64_t now);

/*
 * An operator's change that changes nothing: the desired table as it
 * stands is what was asked for. Returns the version to tell. While changes
 * this run accepted wait, it is mgr_driver_target_version(), promised for
 * them, so that WAIT answers for it even when it is a version health's
 * news will take (a round in flight, and the table moved since: committed
 * + 2); otherwise the round in flight's version if it carries the table,
 * else mgr_driver_target_version(), answered by the version alone.
 */
uint64_t mgr_driver_promise_unchanged(struct mgr_driver *d);

/* Rebuild the effective table if health or a timer moved since it was built. */
void mgr_driver_refresh(struct mgr_driver *d, uint64_t now);

enum mgr_wait_state { MGR_WAIT_PENDING, MGR_WAIT_COMMITTED, MGR_WAIT_ABORTED, MGR_WAIT_UNKNOWN };

/* What became of the change(s) told they commit as `version`. */
enum mgr_wait_state mgr_driver_wait(
	const struct mgr_driver *d, uint64_t version, uint64_t *committed_as, const char **reason);

/* ---- reads ---- */

/* The commit state machine: its members, the committed version, the round's deadline. */
const struct mgr_commit *mgr_driver_commit(const struct mgr_driver *d);

/*
 * The committed table as the daemon holds it (it moves when COMMITTED is
 * run, so that a snapshot never pairs N with N-1's table), its version and
 * digest.
 */
const struct lb_ftable *mgr_driver_committed(
	const struct mgr_driver *d, uint64_t *version, const uint8_t **digest);

/*
 * A hello at the committed version may hold what a round before our
 * restart prepared: true with the ABORT to send (version, digest, text).
 */
bool mgr_driver_hello_abort(const struct mgr_driver *d, struct lb_msg *abort);

/* The leader's term every message carries (0: a single manager). */
uint64_t mgr_driver_term(const struct mgr_driver *d);

/* What the operator API shows (pointers valid until the next event). */
struct mgr_driver_view {
	const struct mgr_commit *commit;
	const struct lb_ftable *committed;
	const uint8_t *committed_digest;
	const struct lb_ftable *desired;
	const uint8_t *desired_digest;
	const struct mgr_pools *pools; /* desired's pool options */
	const struct mgr_meta *meta;   /* id counters, seed */
	const struct lb_ftable *effective;
	bool round; /* a round in flight: */
	uint64_t round_version;
	const uint8_t *round_digest;
	uint64_t round_started_ms;
	const char *round_summary;
	uint64_t pending_changes; /* accepted and not yet carried by a version */
	bool pending;		  /* the effective table is not on its way yet */
	uint64_t target_version;  /* the version desired commits as */
	const char *last_outcome; /* "" when none */
	uint64_t last_outcome_ms;
	const char *store_err; /* the last store error, "" when none since */
	uint64_t n_committed, n_aborted;
};

void mgr_driver_view(const struct mgr_driver *d, struct mgr_driver_view *v);

#endif /* MGR_DRIVER_H */
