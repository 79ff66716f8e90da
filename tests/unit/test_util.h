/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the unit tests share: a random generator with a seed of the test's
 * choosing (SplitMix64, Steele et al. 2014), so that a random test that
 * fails fails again the same way. Not for anything but tests: it is fast and
 * well mixed, nothing more.
 */
#ifndef SLUICE_TEST_UTIL_H
#define SLUICE_TEST_UTIL_H

#include <stdint.h>

/* The next 64 random bits of the sequence *s. */
static inline uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A number in 0..n-1 (n > 0; the bias of the modulo is below 2^-32). */
static inline uint32_t
rnd(uint64_t *s, uint32_t n)
{
	return (uint32_t)(splitmix64(s) % n);
}

#endif
