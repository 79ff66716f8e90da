/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Top talkers: a fixed-size heavy-hitter summary (Metwally, Agrawal and El
 * Abbadi's space-saving algorithm) of the sources of a service's new
 * connections, one per service per worker, written by its worker alone.
 *
 * LB_TOPK counters. A key seen is counted in its counter; a new key takes
 * a free counter, or the one with the smallest count, inheriting that count
 * as its error. So, with N keys added in all:
 *   - a key's true count lies in [count - err, count];
 *   - every key whose true count exceeds N / LB_TOPK is in the summary.
 * Summaries of several workers merge by adding the counts and errors of the
 * same key; a key missing from one summary may have up to that summary's
 * smallest count there, which the merged error adds (lb_topk_merge()): a
 * merged key's true count lies within err of its count.
 *
 * Static inline, without DPDK: the mux runs it on its fast path (no
 * allocation, LB_TOPK compares per added key), the unit tests check it
 * against exact counts on skewed input.
 */
#ifndef LB_TOPK_H
#define LB_TOPK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define LB_TOPK 8

struct lb_topk {
	uint32_t key[LB_TOPK];
	uint32_t count[LB_TOPK]; /* 0: a free counter */
	uint32_t err[LB_TOPK];
};

static inline void
lb_topk_add(struct lb_topk *t, uint32_t key)
{
	uint32_t i, min = 0;

	for (i = 0; i < LB_TOPK; i++) {
		if (t->count[i] != 0 && t->key[i] == key) {
			t->count[i]++;
			return;
		}
		if (t->count[i] < t->count[min])
			min = i;
	}
	t->err[min] = t->count[min];
	t->key[min] = key;
	t->count[min]++;
}

/*
 * A copy of t, which its worker may be writing, for another thread: read
 * until two reads in a row agree (at most a few tries; a worker adds at a
 * few a microsecond), so that a key is not paired with another's count.
 * The worker writes as it always does, with no fence: the reader's is the
 * whole cost. Returns false if no two reads agreed (dst is the last).
 */
static inline bool
lb_topk_copy(struct lb_topk *dst, const struct lb_topk *t)
{
	const volatile uint32_t *s = (const volatile uint32_t *)t;
	uint32_t a[sizeof(*t) / 4], try, i;
	bool same = false;

	for (try = 0; try < 8 && !same; try++) {
		for (i = 0; i < sizeof(*t) / 4; i++)
			a[i] = s[i];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		same = true;
		for (i = 0; i < sizeof(*t) / 4; i++)
			same &= a[i] == s[i];
	}
	memcpy(dst, a, sizeof(*dst));
	return same;
}

/* The smallest count of a full summary (0 while a counter is free). */
static inline uint32_t
lb_topk_floor(const struct lb_topk *t)
{
	uint32_t i, m = UINT32_MAX;

	for (i = 0; i < LB_TOPK; i++)
		if (t->count[i] < m)
			m = t->count[i];
	return m;
}

/* A merged entry: counts summed over summaries, the error bound with them. */
struct lb_topk_entry {
	uint32_t key;
	uint64_t count;
	uint64_t err;
};

/*
 * Merge n summaries into out (room for n * LB_TOPK entries), sorted by
 * count, largest first. A key absent from a full summary may have had up to
 * its floor there: that is added to its error. Returns the entries.
 */
uint32_t lb_topk_merge(const struct lb_topk *const *t, uint32_t n, struct lb_topk_entry *out);

#endif /* LB_TOPK_H */
