/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The counters a member sends in its STATUS heartbeat, placed by the
 * status column of the daemon's counter list (dp_counters.h): the manager
 * keeps their order, and its status line shows the first four. Only the
 * member's callbacks (mux_update.c, ha_update.c) use this.
 */
#ifndef DP_STATUS_H
#define DP_STATUS_H

#include <stdint.h>

#include "lb_member.h"

#define DP_STATUS_MAX 8

struct dp_status {
	const char *name[DP_STATUS_MAX]; /* NULL: no counter in that place */
	uint64_t value[DP_STATUS_MAX];
};

/* Put name = v in place (1 first); place 0 means not sent. */
static inline void
dp_status_set(struct dp_status *s, unsigned place, const char *name, uint64_t v)
{
	if (place == 0 || place > DP_STATUS_MAX)
		return;
	s->name[place - 1] = name;
	s->value[place - 1] = v;
}

/* The placed counters, in order, into out (at most max). Returns how many. */
static inline uint32_t
dp_status_put(const struct dp_status *s, struct lb_counter *out, uint32_t max)
{
	uint32_t i, n = 0;

	for (i = 0; i < DP_STATUS_MAX; i++)
		if (s->name[i] != NULL)
			lb_counter_put(out, &n, max, s->name[i], s->value[i]);
	return n;
}

#endif /* DP_STATUS_H */
