/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host agent's counters, each listed once. Columns (dp_counters.h):
 *
 *     X(name, show, status, help)
 *
 * The printed summary gives every counter a line of its own, named. The
 * list makes the struct the lcore counts in (struct ha_counters), the
 * summary, the JSON summary and /sluice/agent/stats (ha_stats.c), and the
 * STATUS counters (ha_update.c). To add a counter, add its line and count
 * it in the lcore. "drops", every drop reason together, is computed when
 * read, for STATUS; its place there is below.
 */
#ifndef HA_COUNTERS_H
#define HA_COUNTERS_H

#include <stdint.h>

#include "dp_counters.h"
#include "lb_drop.h"

/* One counter per line: clang-format keeps this layout (not a mixed one). */
#define HA_COUNTERS(X)                                                                             \
	X(uplink_rx, DP_SHOW, 0, "frames taken from the uplink")                                   \
	X(decap, DP_SHOW, 1, "tunnel packets decapsulated and delivered to a VM")                  \
	X(vm_rx, DP_SHOW, 0, "frames taken from the VMs' ports")                                   \
	X(dsr, DP_SHOW, 2, "replies of a load-balanced DIP:port sent as from VIP:port")            \
	X(passthrough, DP_SHOW, 0, "other VM traffic, sent out untouched")                         \
	X(probe_in, DP_SHOW, 0, "a health prober's packets delivered to a VM")                     \
	X(probe_out, DP_SHOW, 0, "a VM's answers to a prober, sent out untouched")                 \
	X(icmp_translated, DP_SHOW, 0, "ICMP errors whose quoted header was translated")           \
	X(mss_clamped, DP_SHOW, 0, "SYNs whose MSS option was lowered")                            \
	X(arp_replies, DP_SHOW, 0, "ARP requests answered")                                        \
	X(echo_replies, DP_SHOW, 0, "ICMP echo requests answered")                                 \
	X(frags_in, DP_SHOW, 0, "outer fragments taken for reassembly")                            \
	X(reassembled, DP_SHOW, 0, "... and the whole datagrams they made")                        \
	X(tx, DP_SHOW, 0, "packets the ports took")

/* The place in STATUS of the sum of the drops. */
#define HA_STATUS_DROPS 3

/* The lcore's counters, written by it alone. */
struct ha_counters {
	HA_COUNTERS(DP_FIELD)
	uint64_t drops[LB_DROP_MAX];
};

#endif /* HA_COUNTERS_H */
