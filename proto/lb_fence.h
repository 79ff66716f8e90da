/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Term fencing on a member's side: the rule that keeps a deposed manager
 * from committing anything.
 *
 * With several managers on etcd the leader's term is its leader key's
 * create_revision, which grows with every new leader (docs/manager.md,
 * "High availability"). Every PREPARE, COMMIT, ABORT, snapshot chunk and
 * WELCOME carries it. A member remembers the highest term it has seen
 * (kept in its last-known-good file too, so a restart does not forget
 * it) and refuses anything from an older one: it votes no on such a
 * PREPARE, saying which term it has seen, and ignores such a COMMIT. A
 * leader frozen, then resumed after another took over, can therefore
 * reach no member that heard of the new one.
 *
 * A single manager (no election) sends term 0, which is accepted as long
 * as no higher term was ever seen. Pure: the member library feeds it.
 */
#ifndef LB_FENCE_H
#define LB_FENCE_H

#include <stdbool.h>
#include <stdint.h>

struct lb_fence {
	uint64_t highest; /* the highest term seen */
};

enum lb_fence_verdict {
	LB_FENCE_SAME = 0, /* the term seen before: take the message */
	LB_FENCE_NEWER,	   /* a new leader: take it, and refuse the older from now on */
	LB_FENCE_STALE,	   /* older than one seen: refuse the message */
};

/* Judge a message's term, and remember it when it is the highest. */
static inline enum lb_fence_verdict
lb_fence_check(struct lb_fence *f, uint64_t term)
{
	if (term < f->highest)
		return LB_FENCE_STALE;
	if (term == f->highest)
		return LB_FENCE_SAME;
	f->highest = term;
	return LB_FENCE_NEWER;
}

/* Judge without remembering (a message that will not be taken anyway). */
static inline bool
lb_fence_stale(const struct lb_fence *f, uint64_t term)
{
	return term < f->highest;
}

#endif /* LB_FENCE_H */
