/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's end of the capacity-credit channel (lb_credit_net.h): a
 * thread that answers every agent's request, taking its grants into the
 * workers' lanes (mux_credit_take()) and replying with the report. Only
 * the daemon links it (nng).
 */
#ifndef MUX_CREDIT_CHAN_H
#define MUX_CREDIT_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "lb_credit_net.h"

struct mux_credit;
struct mux_credit_chan;

/*
 * Listen on cfg->listen as mux id and start the thread. NULL with the
 * reason in err.
 */
struct mux_credit_chan *mux_credit_chan_start(struct mux_credit *c, const struct lb_credit_cfg *cfg,
	const char *id, char *err, size_t len);

/* Requests answered, and refused (undecodable, or a grant refused whole). */
void mux_credit_chan_counts(
	const struct mux_credit_chan *ch, uint64_t *answered, uint64_t *refused);

/* Stop the thread, close the socket (bounded) and free. NULL: nothing. */
void mux_credit_chan_stop(struct mux_credit_chan *ch);

#endif /* MUX_CREDIT_CHAN_H */
