/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host agent's counters, each listed once. Columns (dp_counters.h):
 *
 *     X(name, show, status, help, metric)
 *
 * The printed summary gives every counter a line of its own, named. The
 * list makes the struct the lcore counts in (struct ha_counters), the
 * summary, the JSON summary and /sluice/agent/stats (ha_stats.c), the
 * STATUS counters (ha_update.c) and the Prometheus metrics (ha_metrics.c:
 * sluice_<metric>, help as its HELP). To add a counter, add its line and
 * count it in the lcore. "drops", every drop reason together, is computed when
 * read, for STATUS; its place there is below.
 */
#ifndef HA_COUNTERS_H
#define HA_COUNTERS_H

#include <stdint.h>

#include "dp_counters.h"
#include "lb_drop.h"

/* One counter per line: clang-format keeps this layout (not a mixed one). */
#define HA_COUNTERS(X)                                                                             \
	X(uplink_rx, DP_SHOW, 0, "frames taken from the uplink", "uplink_received_packets_total")  \
	X(decap, DP_SHOW, 1, "tunnel packets decapsulated and delivered to a VM",                  \
		"decapsulated_packets_total")                                                      \
	X(vm_rx, DP_SHOW, 0, "frames taken from the VMs' ports", "vm_received_packets_total")      \
	X(dsr, DP_SHOW, 2, "replies of a load-balanced DIP:port sent as from VIP:port",            \
		"dsr_packets_total")                                                               \
	X(passthrough, DP_SHOW, 0, "other VM traffic, sent out untouched",                         \
		"passthrough_packets_total")                                                       \
	X(probe_in, DP_SHOW, 0, "a health prober's packets delivered to a VM",                     \
		"probe_packets_delivered_total")                                                   \
	X(probe_out, DP_SHOW, 0, "a VM's answers to a prober, sent out untouched",                 \
		"probe_replies_sent_total")                                                        \
	X(icmp_translated, DP_SHOW, 0, "ICMP errors whose quoted header was translated",           \
		"icmp_translated_total")                                                           \
	X(mss_clamped, DP_SHOW, 0, "SYNs whose MSS option was lowered", "mss_clamped_total")       \
	X(arp_replies, DP_SHOW, 0, "ARP requests answered", "arp_replies_total")                   \
	X(nd_replies, DP_SHOW, 0, "neighbor solicitations answered (PA6, the VMs' gateway6)",      \
		"nd_replies_total")                                                                \
	X(echo_replies, DP_SHOW, 0, "ICMP echo requests answered", "echo_replies_total")           \
	X(frags_in, DP_SHOW, 0, "outer fragments (IPv4 or IPv6) taken for reassembly",             \
		"fragments_received_total")                                                        \
	X(reassembled, DP_SHOW, 0, "tunnel datagrams reassembled from those fragments",            \
		"reassembled_total")                                                               \
	X(ecn_ce, DP_SHOW, 0,                                                                      \
		"tunnel packets whose outer CE mark was carried to the inner header",              \
		"ecn_ce_total")                                                                    \
	X(tx, DP_SHOW, 0, "packets the ports took", "transmitted_packets_total")                   \
	X(idle_sleeps, DP_TEL, 0, "naps of the idle lcore", "idle_naps_total")                     \
	X(idle_wakes, DP_TEL, 0, "naps a frame on an af_packet port ended (dp_wake.h)",            \
		"idle_wakes_total")

/* The place in STATUS of the sum of the drops. */
#define HA_STATUS_DROPS 3

/* The lcore's counters, written by it alone. */
struct ha_counters {
	HA_COUNTERS(DP_FIELD)
	uint64_t drops[LB_DROP_MAX];
};

#endif /* HA_COUNTERS_H */
