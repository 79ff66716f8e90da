/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffered transmit (dp_tx.h). Results of a burst collect per port in the
 * worker's TX buffer and leave in one rte_eth_tx_burst per port at the end
 * of the loop (or earlier, when a buffer fills), on the worker's own TX
 * queue. What a port refuses is freed and counted as tx_full.
 */
#include "mux_worker.h"

void
mux_flush(struct mux_worker *w)
{
	w->cnt.tx_pkts += dp_flush(w->tx, w->ctx->n_ports, w->idx, w->cnt.drops);
}
