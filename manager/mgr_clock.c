/* SPDX-License-Identifier: BSD-3-Clause */
#include <time.h>

#include "mgr_clock.h"

uint64_t
mgr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
