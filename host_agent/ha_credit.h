/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's end of the capacity-credit channel (lb_credit_net.h): a
 * thread that, every interval_ms, reads which local backends are capped
 * (the running map) and how many connections each holds (the tracker),
 * then asks every mux in turn with its grants and takes the reports
 * (ha_grant.h does the arithmetic). Only the daemon links it (nng).
 */
#ifndef HA_CREDIT_H
#define HA_CREDIT_H

#include <stdio.h>

#include "lb_credit_net.h"

struct ha_update;
struct ha_credit;

/* Start granting as cfg says. NULL with the reason in err. */
struct ha_credit *ha_credit_start(
	struct ha_update *u, const struct lb_credit_cfg *cfg, char *err, size_t len);

/* Stop the thread, close the sockets (bounded) and free. NULL: nothing. */
void ha_credit_stop(struct ha_credit *c);

#endif /* HA_CREDIT_H */
