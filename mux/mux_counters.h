/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's counters, each listed once. Columns (dp_counters.h):
 *
 *     X(name, show, status, summary, help)
 *
 * summary is the counter's piece of the printed summary, a printf format
 * for its value (a piece ending in "\n" ends a line), or NULL when the
 * summary leaves it out. The list makes the struct each worker counts in
 * (struct mux_counters), the summary, the JSON summary and /sluice/stats
 * (mux_stats.c), and the STATUS counters (mux_update.c). To add a counter,
 * add its line and count it in the worker.
 *
 * Two values are computed when read, not counted: conn_live, the live
 * entries of every connection table, ends the summary's connections line
 * and follows the list in the JSON and telemetry; "drops", every drop
 * reason together, goes to STATUS. Their places there are below.
 */
#ifndef MUX_COUNTERS_H
#define MUX_COUNTERS_H

#include <inttypes.h>
#include <stdint.h>

#include "dp_counters.h"
#include "lb_drop.h"

/* One counter per line: clang-format keeps this layout (not a mixed one). */
#define MUX_COUNTERS(X)                                                                            \
	X(rx_pkts, DP_SHOW, 1, "  received     %12" PRIu64 " packets",                             \
		"frames taken from the RX queues")                                                 \
	X(rx_bytes, DP_SHOW, 0, " %14" PRIu64 " bytes\n", "their bytes")                           \
	X(fwd_pkts, DP_SHOW, 2, "  forwarded    %12" PRIu64 " packets",                            \
		"encapsulated and queued to a backend's host")                                     \
	X(fwd_bytes, DP_SHOW, 0, " %14" PRIu64 " bytes (inner)\n", "their inner IP bytes")         \
	X(tx_pkts, DP_SHOW, 0, "  transmitted  %12" PRIu64 " packets\n",                           \
		"packets the ports took: forwarded ones and replies")                              \
	X(icmp_err_fwd, DP_SHOW, 0, "  icmp errors forwarded %" PRIu64,                            \
		"ICMP errors about a flow, forwarded to its backend")                              \
	X(echo_replies, DP_SHOW, 0, ", echo replies %" PRIu64, "ICMP echo requests answered")      \
	X(arp_replies, DP_SHOW, 0, ", arp replies %" PRIu64, "ARP requests answered")              \
	X(too_big_sent, DP_SHOW, 0, ", frag-needed sent %" PRIu64,                                 \
		"ICMP fragmentation-needed sent for DF packets too big to encapsulate")            \
	X(vip_probes, DP_SHOW, 0, ", vip probes %" PRIu64 "\n",                                    \
		"VIP probes from the manager answered")                                            \
	X(limit_checked, DP_SHOW, 0, "  limits: checked %" PRIu64,                                 \
		"admission rules checked for new connections")                                     \
	X(limit_would_deny, DP_SHOW, 0, ", would deny %" PRIu64,                                   \
		"checks a monitor rule failed (the connection went through)")                      \
	X(limit_denied, DP_SHOW, 0, ", denied %" PRIu64,                                           \
		"new connections an intercept rule refused")                                       \
	X(limit_rst_sent, DP_SHOW, 0, ", rst sent %" PRIu64,                                       \
		"TCP RSTs sent from the VIP to refused clients")                                   \
	X(limit_icmp_sent, DP_SHOW, 0, ", icmp sent %" PRIu64 "\n",                                \
		"ICMP administratively prohibited sent to refused clients")                        \
	X(conn_new, DP_SHOW, 5, "  connections: new %" PRIu64, "connection-table entries made")    \
	X(conn_hit, DP_SHOW, 0, ", hits %" PRIu64, "packets of a flow the table knew")             \
	X(conn_full, DP_SHOW, 0, ", table full %" PRIu64,                                          \
		"new flows forwarded by Maglev alone: the table was full")                         \
	X(conn_quota, DP_SHOW, 0, ", service quota %" PRIu64,                                      \
		"new flows forwarded by Maglev alone: their service held its quota of entries")    \
	X(conn_swept, DP_JSON, 0, NULL, "expired entries the sweep removed")                       \
	X(idle_sleeps, DP_TEL, 0, NULL, "naps of an idle worker")

/* The places in STATUS of the values computed when read. */
#define MUX_STATUS_DROPS 3
#define MUX_STATUS_CONN_LIVE 4

/* A worker's counters, written by its lcore alone. */
struct mux_counters {
	MUX_COUNTERS(DP_FIELD)
	uint64_t drops[LB_DROP_MAX];
};

#endif /* MUX_COUNTERS_H */
