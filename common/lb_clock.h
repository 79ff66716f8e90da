/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clocks every part reads: monotonic milliseconds and microseconds,
 * and a deadline some milliseconds from now for the pthread timed waits.
 * Safe on any thread; the same clock in every process of the machine (the
 * mux and its BGP speaker compare times across their shared page).
 */
#ifndef LB_CLOCK_H
#define LB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
lb_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static inline uint64_t
lb_now_ms(void)
{
	return lb_now_us() / 1000;
}

/* CLOCK now plus ms, for pthread_cond_timedwait() or pthread_timedjoin_np(). */
static inline struct timespec
lb_deadline(clockid_t clock, unsigned ms)
{
	struct timespec t;

	clock_gettime(clock, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

#endif /* LB_CLOCK_H */
