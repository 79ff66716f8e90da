/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A managed daemon's member of the manager's commit (lb_member.h), as the
 * data plane holds it. Only the executables link the member library (and
 * so nng): the daemons' libraries, the benchmark and the fuzzers see this
 * struct and call lb_member_connected() and lb_member_synced() through
 * its pointers, which the daemon (dp_member_create(), dp_daemon.h) sets.
 */
#ifndef DP_MEMBER_H
#define DP_MEMBER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct lb_member;

struct dp_member {
	struct lb_member *m; /* NULL: standalone, or stopped */
	bool (*connected)(const struct lb_member *m);
	/* lb_member_lkg_verdict(): serving without a manager, and what to announce */
	bool (*lkg_verdict)(const struct lb_member *m, bool *announce, char *why, size_t len);
	bool (*synced)(const struct lb_member *m);
	pthread_mutex_t *lock; /* the daemon's: telemetry reads m under it */
	pthread_t thread;      /* the member's control thread ... */
	bool running;	       /* ... when it was started */
};

/* Connected to the manager right now. Call with dm->lock held. */
static inline bool
dp_member_connected(const struct dp_member *dm)
{
	return dm->m != NULL && dm->connected(dm->m);
}

/*
 * Is the member serving without a manager (its last known good table, or
 * the table it had when the managers went)? Then *announce and why say
 * what the mux announces meanwhile (docs/manager.md, "What a member
 * serves without a manager") and it returns true; false: standalone, or
 * a leader manages it and its in-sync word decides. This is the one call
 * the PoP's announcement makes:
 *
 *   if (dp_member_lkg_verdict(&app->member, &in, why, sizeof(why)))
 *           mux_announce_sync(ann, in, why);
 *
 * Call with dm->lock held.
 */
static inline bool
dp_member_lkg_verdict(const struct dp_member *dm, bool *announce, char *why, size_t len)
{
	*announce = true;
	if (len > 0)
		why[0] = '\0';
	return dm->m != NULL && dm->lkg_verdict(dm->m, announce, why, len);
}

/* Runs what the manager committed (lb_member_synced()). Call with dm->lock held. */
static inline bool
dp_member_synced(const struct dp_member *dm)
{
	return dm->m != NULL && dm->synced(dm->m);
}

#endif /* DP_MEMBER_H */
