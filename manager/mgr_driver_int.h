/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the commit driver: what its three files share. Not for other
 * modules.
 *
 *   mgr_driver.c       rounds: begin, the actions, commit and abort,
 *                      recovery, timers; the events members bring
 *   mgr_desired.c      the desired and effective tables, changes and what
 *                      became of them (promises, rejections, WAIT)
 *   mgr_driver_load.c  start-up from the store
 */
#ifndef MGR_DRIVER_INT_H
#define MGR_DRIVER_INT_H

#include <string.h>

#include "mgr_driver.h"

#define MGR_STORE_RETRY_MS 1000 /* a round the store refused is retried, doubling */
#define MGR_STORE_RETRY_MAX_MS 30000
#define MGR_REJECT_RETRY_MS 1000 /* after a "no" vote, the next round waits, doubling */
#define MGR_REJECT_RETRY_MAX_MS 30000
#define MGR_PROMISES 4096
#define MGR_REJECTIONS 32
#define MGR_COMMITS 256

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

struct mgr_driver {
	const struct mgr_config *cfg;
	struct mgr_store *store;
	struct mgr_health *health;
	struct mgr_driver_out out;
	struct mgr_meta meta;
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
	struct lb_ftable effective;
	uint8_t effective_digest[LB_DIGEST_LEN];
	bool eff_dirty;	       /* health or timers moved: rebuild before use */
	uint64_t eff_timer_ms; /* when it changes by itself (drain, slow start) */
	struct mgr_round round;

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
	/* who asked for the changes since the last round began (history says) */
	char askers[192];
};

static inline bool
mgr_same_digest(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, LB_DIGEST_LEN) == 0;
}

/* ---- mgr_desired.c ---- */

/* The desired table changed: health follows it, and the effective table. */
void mgr_driver_desired_changed(struct mgr_driver *d, uint64_t now);

/*
 * Throw away every change no version carries: desired goes back to the
 * committed version's and whoever waits for them hears `reason`.
 */
void mgr_driver_reject_pending(
	struct mgr_driver *d, uint64_t version, const char *reason, uint64_t now);

/* Version `version` carries every change up to `seq` (for WAIT). */
void mgr_driver_commit_rec(struct mgr_driver *d, uint64_t version, uint64_t seq);

/* The round's desired table and pools become the committed version's base. */
void mgr_driver_base_from_round(struct mgr_driver *d, struct mgr_round *r);

/* Is there anything in the effective table that no round carries yet? */
bool mgr_driver_pending(const struct mgr_driver *d);

/* The version desired will commit as when nothing more changes. */
uint64_t mgr_driver_target_version(const struct mgr_driver *d);

#endif /* MGR_DRIVER_INT_H */
