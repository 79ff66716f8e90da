/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output of a data-plane worker, the same in the mux and the agent: every
 * packet a burst produces goes into the worker's TX buffer for its port,
 * and the buffers leave in one rte_eth_tx_burst() per port at the end of
 * the loop (or earlier, when one fills). What a port refuses is freed and
 * counted as tx_full: never retried in a loop that could stall the lcore.
 * Every packet not forwarded is freed with dp_drop() under a reason.
 *
 * All of it is static inline: these run per packet, and each daemon's
 * wrappers (mux_drop, ha_enqueue ...), made by DP_WORKER_TX below, compile
 * to what they were when each had its own copy, with no call or
 * indirection added.
 */
#ifndef DP_TX_H
#define DP_TX_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "lb_drop.h"

/* Packets a port's TX buffer holds before it is flushed. */
#define DP_TXBUF 64

struct dp_txbuf {
	uint16_t n;
	struct rte_mbuf *pkts[DP_TXBUF];
};

/* Free m, counted under reason in drops[] (a worker's own counters). */
static inline void
dp_drop(uint64_t *drops, struct rte_mbuf *m, int reason)
{
	drops[reason]++;
	rte_pktmbuf_free(m);
}

/* No room for another packet: flush before dp_txbuf_add(). */
static inline bool
dp_txbuf_full(const struct dp_txbuf *t)
{
	return t->n == DP_TXBUF;
}

static inline void
dp_txbuf_add(struct dp_txbuf *t, struct rte_mbuf *m)
{
	t->pkts[t->n++] = m;
}

/*
 * Send what tx[0 .. n_ports) hold on TX queue txq of each port. What a
 * port refuses is dropped as tx_full into drops[]. Returns the packets sent.
 */
static inline uint64_t
dp_flush(struct dp_txbuf *tx, uint16_t n_ports, uint16_t txq, uint64_t *drops)
{
	uint64_t total = 0;
	uint16_t port, sent, i;

	for (port = 0; port < n_ports; port++) {
		struct dp_txbuf *t = &tx[port];

		if (t->n == 0)
			continue;
		sent = rte_eth_tx_burst(port, txq, t->pkts, t->n);
		total += sent;
		for (i = sent; i < t->n; i++)
			dp_drop(drops, t->pkts[i], LB_DROP_TX_FULL);
		t->n = 0;
	}
	return total;
}

/*
 * A daemon's per-packet output for its worker type W: prefix_drop(w, m,
 * reason) frees m counted in w->cnt.drops[reason]; prefix_enqueue(w, port,
 * m) adds m to w->tx[port], first flushing every port with the daemon's
 * prefix_flush(w) when that buffer is full. The mux and the agent each
 * declare theirs with one line, so that the two cannot drift apart.
 */
#define DP_WORKER_TX(prefix, W)                                                                    \
	static inline void prefix##_drop(W *w, struct rte_mbuf *m, int reason)                     \
	{                                                                                          \
		dp_drop(w->cnt.drops, m, reason);                                                  \
	}                                                                                          \
	static inline void prefix##_enqueue(W *w, uint16_t port, struct rte_mbuf *m)               \
	{                                                                                          \
		if (unlikely(dp_txbuf_full(&w->tx[port])))                                         \
			prefix##_flush(w);                                                         \
		dp_txbuf_add(&w->tx[port], m);                                                     \
	}

#endif /* DP_TX_H */
