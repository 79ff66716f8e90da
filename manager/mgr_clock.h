/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's clock: monotonic milliseconds. Every timer of the daemon
 * (rounds, batching, pacing, probes, the guard's checks) reads this one;
 * the core (core/) reads none and is given the time.
 */
#ifndef MGR_CLOCK_H
#define MGR_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. Safe on any thread. */
uint64_t mgr_now_ms(void);

#endif /* MGR_CLOCK_H */
