/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Maglev lookup table (Eisenbud et al., NSDI 2016), weighted.
 *
 * A table of a prime number of slots, each naming one backend. Every backend
 * walks its own permutation of the slots (offset and skip derived from its
 * identity) and claims the next free slot on its turn; a backend's turns are
 * proportional to its weight. The result spreads slots by weight and moves
 * few slots when a backend comes or goes.
 *
 * Deterministic: the table depends only on the set of (identity, weight)
 * pairs, not on the order the caller lists them in, so every mux given the
 * same pool builds the same table. Entries are indices into the caller's
 * array, so two callers listing the same pool in different orders get tables
 * whose entries name the same backends.
 */
#ifndef LB_MAGLEV_H
#define LB_MAGLEV_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_flow.h"

#define LB_MAGLEV_DEFAULT_SIZE 65537u
#define LB_MAGLEV_MIN_SIZE 251u
#define LB_MAGLEV_MAX_SIZE 16777213u /* largest prime below 2^24 */
/* Slot value of an empty table (every backend has weight zero). */
#define LB_MAGLEV_EMPTY 0xffffu
#define LB_MAGLEV_MAX_BACKENDS 0xfffeu
#define LB_MAGLEV_MAX_WEIGHT 65535u

struct lb_maglev_backend {
	uint64_t ident;	 /* stable identity, see lb_maglev_ident() */
	uint32_t weight; /* 0 = no slots; at most LB_MAGLEV_MAX_WEIGHT */
};

/* Identity of a backend from its DIP and port (host byte order port). */
uint64_t lb_maglev_ident(const struct lb_addr *dip, uint8_t af, uint16_t port);

/* True if n is prime. */
bool lb_is_prime(uint32_t n);

/*
 * Fill table[0..size) with indices into b[0..n). size must be a prime in
 * [LB_MAGLEV_MIN_SIZE, LB_MAGLEV_MAX_SIZE]. If every weight is zero (or n is
 * zero) every slot is LB_MAGLEV_EMPTY.
 *
 * Returns 0, or:
 *   -LB_EINVAL  size not prime or out of range, n too large, NULL arguments
 *   -LB_ERANGE  a weight above LB_MAGLEV_MAX_WEIGHT
 *   -LB_EEXIST  two backends share an identity
 *   -LB_ENOMEM  scratch allocation failed
 */
int lb_maglev_build(uint16_t *table, uint32_t size, const struct lb_maglev_backend *b, uint32_t n);

/* The backend index for a flow hash (see lb_flow_slot()). */
static inline uint16_t
lb_maglev_lookup(const uint16_t *table, uint32_t size, uint64_t flow_hash)
{
	return table[lb_flow_slot(flow_hash, size)];
}

#endif /* LB_MAGLEV_H */
