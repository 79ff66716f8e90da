/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the unit tests share: a random generator with a seed of the test's
 * choosing (SplitMix64, Steele et al. 2014), so that a random test that
 * fails fails again the same way (not for anything but tests: it is fast and
 * well mixed, nothing more); and, for the checksum tests, values at the
 * edges of one's complement and a reference sum.
 */
#ifndef SLUICE_TEST_UTIL_H
#define SLUICE_TEST_UTIL_H

#include <stddef.h>
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

/*
 * A random value of mask's bits that is all zeros or all ones (one's
 * complement's two zeros, where update bugs hide) one time in `odds` each,
 * rather than one in 2^16.
 */
static inline uint32_t
rnd_edgy(uint64_t *s, uint32_t odds, uint32_t mask)
{
	switch (rnd(s, odds)) {
	case 0:
		return 0;
	case 1:
		return mask;
	default:
		return (uint32_t)splitmix64(s) & mask;
	}
}

/*
 * RFC 1071 as the textbook writes it, for the checksum tests' references:
 * big-endian 16-bit words added to sum in host order, an odd byte padded
 * on the right, folded to 16 bits. Deliberately unlike lb_csum_partial(),
 * which sums words in memory order.
 */
static inline uint32_t
ref_sum(const uint8_t *p, size_t len, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

#endif
