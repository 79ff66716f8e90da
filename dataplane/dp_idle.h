/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An idle worker's nap, and the signals that end it.
 *
 * DPDK's net_tap raises a realtime signal for every frame its tap receives
 * (the Rx trigger: F_SETSIG and O_ASYNC on the tap's descriptor, the
 * process as owner), so that an empty rx_burst need not read(). The
 * kernel hands a signal sent to the process to any thread that does not
 * block it. It used to be the daemon's main thread, asleep in its control
 * loop: woken, the handler run, the sleep restarted, for every frame a VM
 * sent (13% of a core for the lab's two agents under wrk,
 * docs/performance.md). dp_eal_start() blocks the realtime signals before
 * the EAL makes its threads, which inherit that; each worker lcore lets
 * them in again (dp_worker_signals()) and naps with dp_wake_nap() (dp_wake.h), which a
 * signal ends: a VM's frame wakes the worker that reads it, at once, where
 * a timed nap would have slept on.
 */
#ifndef DP_IDLE_H
#define DP_IDLE_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

/* The realtime signals the C library leaves to applications (net_tap picks one). */
static inline void
dp_rt_signals(sigset_t *set)
{
	int s;

	sigemptyset(set);
	for (s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaddset(set, s);
}

/* The calling thread, and every thread it starts from now on, blocks them. */
static inline void
dp_rt_signals_block(void)
{
	sigset_t set;

	dp_rt_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* A worker lcore takes them: at the start of its loop. */
static inline void
dp_worker_signals(void)
{
	sigset_t set;

	dp_rt_signals(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

#endif /* DP_IDLE_H */
