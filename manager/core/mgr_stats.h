/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the muxes' STATUS reports say of every service and backend (struct
 * lb_flow_count: packets, bytes, new connections since the id was given),
 * turned into rates: what `sluicectl stats` sums over the muxes, and what
 * the metrics divide into each mux's share of a VIP's new connections
 * (Ananta's hash deviation). Pure logic: it is given the time.
 *
 * Per member, per flow, two samples: the latest (cur) and one at least
 * MGR_STATS_WINDOW_MS older (base); a flow's rate is the difference over
 * that span, between one and two windows long, so one late heartbeat
 * neither doubles nor zeroes it. A counter that goes back (the mux
 * restarted, an id given anew) starts the span over. A mux with more flows
 * than one STATUS holds reports them in windows, round and round
 * (flows_first, flows_total); a flow it stopped reporting is dropped after
 * two whole rounds without it. At most MGR_STATS_MAX_FLOWS per member.
 */
#ifndef MGR_STATS_H
#define MGR_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_codec.h"

#define MGR_STATS_WINDOW_MS 5000
#define MGR_STATS_MAX_FLOWS 131072

struct mgr_stats;

/* NULL when out of memory. */
struct mgr_stats *mgr_stats_new(void);

void mgr_stats_free(struct mgr_stats *st);

/*
 * Member i's STATUS at now: n flows from index first of the total it has.
 * Returns 0, or -LB_ENOMEM (the flows that found no room are left out).
 */
int mgr_stats_status(struct mgr_stats *st, int member, const struct lb_flow_count *f, uint32_t n,
	uint32_t first, uint32_t total, uint64_t now);

/* Member i is gone: its flows go. */
void mgr_stats_forget(struct mgr_stats *st, int member);

/* A flow's rates per second, over its span (0 until it has one). */
struct mgr_rate {
	double pps, bps, cps;
};

/* One service or backend over the members summed. */
struct mgr_flow_sum {
	struct lb_flow_count f; /* the key, and the counters summed */
	struct mgr_rate rate;	/* summed */
	uint32_t members;	/* how many report it */
};

/*
 * Every flow of the members for which in[i] is true, summed: sorted by
 * service, each service before its backends (ordered by DIP and port).
 * *out is malloc'd (NULL when there are none). Returns how many, or
 * -LB_ENOMEM.
 */
int mgr_stats_sum(const struct mgr_stats *st, const bool *in, struct mgr_flow_sum **out);

/*
 * Member i's rates for the flow of key (its vip, port, proto, dip,
 * dip_port); false when member i does not report it.
 */
bool mgr_stats_rate(const struct mgr_stats *st, int member, const struct lb_flow_count *key,
	struct mgr_rate *r);

/* Flows held for member i (tests, status). */
uint32_t mgr_stats_count(const struct mgr_stats *st, int member);

#endif /* MGR_STATS_H */
