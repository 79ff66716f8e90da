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

struct lb_member;

struct dp_member {
	struct lb_member *m; /* NULL: standalone, or stopped */
	bool (*connected)(const struct lb_member *m);
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

/* Runs what the manager committed (lb_member_synced()). Call with dm->lock held. */
static inline bool
dp_member_synced(const struct dp_member *dm)
{
	return dm->m != NULL && dm->synced(dm->m);
}

#endif /* DP_MEMBER_H */
