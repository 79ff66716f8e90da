/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffered transmit. Results of a burst collect per port in the worker's TX
 * buffer and leave in one rte_eth_tx_burst per port at the end of the loop
 * (or earlier, when a buffer fills). What a port refuses is freed and counted
 * as tx_full: never retried in a loop that could stall the lcore.
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "mux_worker.h"

void
mux_flush(struct mux_worker *w)
{
	uint16_t port, sent, i;

	for (port = 0; port < w->ctx->n_ports; port++) {
		struct mux_txbuf *t = &w->tx[port];

		if (t->n == 0)
			continue;
		sent = rte_eth_tx_burst(port, w->idx, t->pkts, t->n);
		w->cnt.tx_pkts += sent;
		for (i = sent; i < t->n; i++)
			mux_drop(w, t->pkts[i], LB_DROP_TX_FULL);
		t->n = 0;
	}
}
