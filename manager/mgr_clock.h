/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's clock: monotonic milliseconds (lb_clock.h's). Every timer
 * of the daemon (rounds, batching, pacing, probes, the guard's checks)
 * reads this one; the core (core/) reads none and is given the time.
 */
#ifndef MGR_CLOCK_H
#define MGR_CLOCK_H

#include "lb_clock.h"

/* CLOCK_MONOTONIC in milliseconds. Safe on any thread. */
static inline uint64_t
mgr_now_ms(void)
{
	return lb_now_ms();
}

#endif /* MGR_CLOCK_H */
