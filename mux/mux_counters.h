/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's counters, each listed once. Columns (dp_counters.h):
 *
 *     X(name, show, status, summary, help, metric)
 *
 * summary is the counter's piece of the printed summary, a printf format
 * for its value (a piece ending in "\n" ends a line), or NULL when the
 * summary leaves it out. The list makes the struct each worker counts in
 * (struct mux_counters), the summary, the JSON summary and /sluice/stats
 * (mux_stats.c), the STATUS counters (mux_update.c) and the Prometheus
 * metrics (mux_metrics.c: sluice_<metric>, help as its HELP). To add a
 * counter, add its line and count it in the worker.
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
		"frames taken from the RX queues", "received_packets_total")                       \
	X(rx_bytes, DP_SHOW, 0, " %14" PRIu64 " bytes\n", "bytes of the frames received",          \
		"received_bytes_total")                                                            \
	X(fwd_pkts, DP_SHOW, 2, "  forwarded    %12" PRIu64 " packets",                            \
		"encapsulated and queued to a backend's host", "forwarded_packets_total")          \
	X(fwd_bytes, DP_SHOW, 0, " %14" PRIu64 " bytes (inner)\n",                                 \
		"inner IP bytes of the packets forwarded", "forwarded_bytes_total")                \
	X(fwd6_pkts, DP_SHOW, 0, "    of them IPv6 %9" PRIu64 " packets\n",                        \
		"forwarded packets whose inner header is IPv6", "forwarded_ipv6_packets_total")    \
	X(tx_pkts, DP_SHOW, 0, "  transmitted  %12" PRIu64 " packets\n",                           \
		"packets the ports took: forwarded ones and replies", "transmitted_packets_total") \
	X(icmp_err_fwd, DP_SHOW, 0, "  icmp errors forwarded %" PRIu64,                            \
		"ICMP errors about a flow, forwarded to its backend",                              \
		"icmp_errors_forwarded_total")                                                     \
	X(echo_replies, DP_SHOW, 0, ", echo replies %" PRIu64, "ICMP echo requests answered",      \
		"echo_replies_total")                                                              \
	X(arp_replies, DP_SHOW, 0, ", arp replies %" PRIu64, "ARP requests answered",              \
		"arp_replies_total")                                                               \
	X(nd_replies, DP_SHOW, 0, ", nd replies %" PRIu64 "\n",                                    \
		"IPv6 neighbor solicitations answered (advertisements sent)", "nd_replies_total")  \
	X(too_big_sent, DP_SHOW, 0, "  frag-needed sent %" PRIu64,                                 \
		"ICMP fragmentation-needed sent for DF packets too big to encapsulate",            \
		"frag_needed_sent_total")                                                          \
	X(ptb_sent, DP_SHOW, 0, ", packet-too-big sent %" PRIu64,                                  \
		"ICMPv6 packet too big sent for IPv6 packets too big to encapsulate",              \
		"packet_too_big_sent_total")                                                       \
	X(vip_probes, DP_SHOW, 0, ", vip probes %" PRIu64 "\n",                                    \
		"VIP probes from the manager answered", "vip_probes_answered_total")               \
	X(frag_out, DP_SHOW, 0, "  outer fragmentation: datagrams %" PRIu64,                       \
		"oversize packets sent as outer fragments (IPv4 without DF; IPv6 of 1280 bytes "   \
		"at most)",                                                                        \
		"outer_fragmented_packets_total")                                                  \
	X(frag_out_pkts, DP_SHOW, 0, ", fragments %" PRIu64 "\n",                                  \
		"outer fragments sent for those packets", "outer_fragments_sent_total")            \
	X(limit_checked, DP_SHOW, 0, "  limits: checked %" PRIu64,                                 \
		"admission rules checked for new connections", "limit_checks_total")               \
	X(limit_would_deny, DP_SHOW, 0, ", would deny %" PRIu64,                                   \
		"checks a monitor rule failed (the connection went through)",                      \
		"limit_would_deny_total")                                                          \
	X(limit_denied, DP_SHOW, 0, ", denied %" PRIu64,                                           \
		"new connections an intercept rule refused", "limit_denied_total")                 \
	X(limit_rst_sent, DP_SHOW, 0, ", rst sent %" PRIu64,                                       \
		"TCP RSTs sent from the VIP to refused clients", "limit_rst_sent_total")           \
	X(limit_icmp_sent, DP_SHOW, 0, ", icmp sent %" PRIu64 "\n",                                \
		"ICMP administratively prohibited sent to refused clients",                        \
		"limit_icmp_sent_total")                                                           \
	X(unusable_rejected, DP_SHOW, 0, "  unusable: rejected %" PRIu64,                          \
		"new flows the reject policy refused: their first choice was not usable",          \
		"unusable_rejected_total")                                                         \
	X(unusable_rst_sent, DP_SHOW, 0, ", rst sent %" PRIu64,                                    \
		"TCP RSTs sent from the VIP for rejected flows", "unusable_rst_sent_total")        \
	X(unusable_icmp_sent, DP_SHOW, 0, ", icmp sent %" PRIu64 "\n",                             \
		"ICMP port unreachable sent for rejected UDP flows", "unusable_icmp_sent_total")   \
	X(credit_moved, DP_SHOW, 0, "  credits: moved %" PRIu64,                                   \
		"new connections sent past a capped backend without credit to the next one",       \
		"credit_moved_total")                                                              \
	X(credit_none, DP_SHOW, 0, ", none anywhere %" PRIu64 "\n",                                \
		"new connections no backend had a credit for (failure policy applied)",            \
		"credit_none_total")                                                               \
	X(conn_new, DP_SHOW, 5, "  connections: new %" PRIu64,                                     \
		"new connections: entries made, and opening packets of flows given none",          \
		"new_connections_total")                                                           \
	X(conn_hit, DP_SHOW, 0, ", hits %" PRIu64, "packets of a flow the table knew",             \
		"conn_table_hits_total")                                                           \
	X(conn_full, DP_SHOW, 0, ", table full %" PRIu64,                                          \
		"new flows forwarded by Maglev alone: the table was full",                         \
		"conn_table_full_total")                                                           \
	X(conn_quota, DP_SHOW, 0, ", service quota %" PRIu64,                                      \
		"new flows forwarded by Maglev alone: their service held its quota of entries",    \
		"conn_table_quota_total")                                                          \
	X(conn_swept, DP_JSON, 0, NULL, "expired entries the sweep removed",                       \
		"conn_table_expired_total")                                                        \
	X(idle_sleeps, DP_TEL, 0, NULL, "naps of an idle worker", "idle_naps_total")               \
	X(idle_wakes, DP_TEL, 0, NULL, "naps a frame on an af_packet port ended (dp_wake.h)",      \
		"idle_wakes_total")

/* The places in STATUS of the values computed when read. */
#define MUX_STATUS_DROPS 3
#define MUX_STATUS_CONN_LIVE 4

/* A worker's counters, written by its lcore alone. */
struct mux_counters {
	MUX_COUNTERS(DP_FIELD)
	uint64_t drops[LB_DROP_MAX];
};

#endif /* MUX_COUNTERS_H */
