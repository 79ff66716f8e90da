/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Weighted Maglev population (Eisenbud et al., NSDI 2016, section 3.4).
 *
 * Every backend gets a permutation of the slots, offset + j * skip mod size.
 * Because size is prime and 0 < skip < size, the walk visits every slot once,
 * so a backend always finds a free slot on its turn. Instead of walking the
 * permutation from the start each turn, each backend keeps its position and
 * only moves forward while the slot under it is taken: a slot once filled
 * stays filled, so a skipped slot never needs revisiting.
 *
 * Weights use credits: each round every backend earns its weight, and spends
 * the largest weight per slot claimed. The heaviest backend claims exactly one
 * slot per round; a backend of half that weight claims one every other round.
 * A round visits every live backend, so the fill costs about
 * size * (max weight / mean weight) visits on top of Maglev's size * log(size)
 * probes: 2 ms for 65537 slots and 100 equal backends, but ~60 ms when one
 * backend of weight 65535 sits among 999 of weight 1. Keep weights on a
 * modest scale.
 *
 * Nothing here depends on the flow-hash secret or on the caller's ordering:
 * the permutations come from fixed seeds and the fill runs in identity order,
 * so every mux fed the same pool builds the same table.
 */
#include <stdlib.h>

#include "lb_err.h"
#include "lb_maglev.h"

/*
 * Fixed seeds. Changing any of them reshuffles every table in the fleet, and
 * muxes running different versions would then disagree on backend choice.
 */
static const struct lb_hash_seed maglev_ident_seed = {
	.k0 = 0x736c756963652d69ULL, /* "sluice-i" */
	.k1 = 0x64656e746974792eULL, /* "dentity." */
};
static const struct lb_hash_seed maglev_offset_seed = {
	.k0 = 0x6d61676c65762d6fULL, /* "maglev-o" */
	.k1 = 0x66667365742d3031ULL, /* "ffset-01" */
};
static const struct lb_hash_seed maglev_skip_seed = {
	.k0 = 0x6d61676c65762d73ULL, /* "maglev-s" */
	.k1 = 0x6b69702d2d2d3031ULL, /* "kip---01" */
};

/* Per-backend fill state, kept in identity order. */
struct maglev_walk {
	uint64_t mw_ident;
	uint32_t mw_weight;
	uint32_t mw_credit;
	uint32_t mw_pos; /* current slot of the permutation */
	uint32_t mw_skip;
	uint16_t mw_index; /* position in the caller's array */
};

uint64_t
lb_maglev_ident(const struct lb_addr *dip, uint8_t af, uint16_t port)
{
	/* Explicit byte layout so the identity is the same on any host. */
	uint8_t buf[1 + 16 + 2];

	buf[0] = af;
	memcpy(buf + 1, dip->a8, 16);
	buf[17] = (uint8_t)(port >> 8);
	buf[18] = (uint8_t)port;
	return lb_siphash13(&maglev_ident_seed, buf, sizeof(buf));
}

bool
lb_is_prime(uint32_t n)
{
	uint32_t d;

	if (n < 4)
		return n >= 2;
	if (n % 2 == 0 || n % 3 == 0)
		return false;
	/* Divisors up to sqrt(2^32) = 65536; d * d cannot overflow 64 bits. */
	for (d = 5; (uint64_t)d * d <= n; d += 6) {
		if (n % d == 0 || n % (d + 2) == 0)
			return false;
	}
	return true;
}

static uint64_t
ident_hash(const struct lb_hash_seed *seed, uint64_t ident)
{
	/* Little-endian bytes, so big-endian hosts derive the same permutation. */
	uint8_t buf[8];
	int i;

	for (i = 0; i < 8; i++)
		buf[i] = (uint8_t)(ident >> (8 * i));
	return lb_siphash13(seed, buf, sizeof(buf));
}

static int
walk_cmp(const void *a, const void *b)
{
	const struct maglev_walk *x = a;
	const struct maglev_walk *y = b;

	if (x->mw_ident != y->mw_ident)
		return x->mw_ident < y->mw_ident ? -1 : 1;
	return 0;
}

static void
fill_empty(uint16_t *table, uint32_t size)
{
	uint32_t i;

	for (i = 0; i < size; i++)
		table[i] = LB_MAGLEV_EMPTY;
}

/* Claim w's next free slot; one exists because the table is not yet full. */
static void
claim(uint16_t *table, uint32_t size, struct maglev_walk *w)
{
	uint32_t pos = w->mw_pos;

	while (table[pos] != LB_MAGLEV_EMPTY) {
		pos += w->mw_skip;
		if (pos >= size)
			pos -= size;
	}
	table[pos] = w->mw_index;
	pos += w->mw_skip;
	if (pos >= size)
		pos -= size;
	w->mw_pos = pos;
}

int
lb_maglev_build(uint16_t *table, uint32_t size, const struct lb_maglev_backend *b, uint32_t n)
{
	struct maglev_walk *w;
	uint32_t i, live, max_weight, filled;

	if (table == NULL || (b == NULL && n != 0))
		return -LB_EINVAL;
	if (size < LB_MAGLEV_MIN_SIZE || size > LB_MAGLEV_MAX_SIZE || !lb_is_prime(size))
		return -LB_EINVAL;
	/* Indices must stay below LB_MAGLEV_EMPTY, which marks free slots. */
	if (n > LB_MAGLEV_MAX_BACKENDS)
		return -LB_EINVAL;
	for (i = 0; i < n; i++) {
		if (b[i].weight > LB_MAGLEV_MAX_WEIGHT)
			return -LB_ERANGE;
	}
	if (n == 0) {
		fill_empty(table, size);
		return 0;
	}

	w = calloc(n, sizeof(*w));
	if (w == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < n; i++) {
		w[i].mw_ident = b[i].ident;
		w[i].mw_weight = b[i].weight;
		w[i].mw_index = (uint16_t)i;
	}
	qsort(w, n, sizeof(*w), walk_cmp);

	/* Compact out weight-zero backends; they would only waste turns. */
	live = 0;
	max_weight = 0;
	for (i = 0; i < n; i++) {
		if (i > 0 && w[i].mw_ident == w[i - 1].mw_ident) {
			free(w);
			return -LB_EEXIST;
		}
		if (w[i].mw_weight == 0)
			continue;
		if (w[i].mw_weight > max_weight)
			max_weight = w[i].mw_weight;
		w[live++] = w[i];
	}

	fill_empty(table, size);
	for (i = 0; i < live; i++) {
		w[i].mw_pos = (uint32_t)(ident_hash(&maglev_offset_seed, w[i].mw_ident) % size);
		w[i].mw_skip =
			(uint32_t)(ident_hash(&maglev_skip_seed, w[i].mw_ident) % (size - 1)) + 1;
	}

	/*
	 * credit < max_weight before a round and grows by at most max_weight,
	 * so it stays below 2^17 and a backend claims at most one slot per
	 * round. The heaviest backend claims every round, so the loop ends.
	 */
	filled = live == 0 ? size : 0;
	while (filled < size) {
		for (i = 0; i < live && filled < size; i++) {
			w[i].mw_credit += w[i].mw_weight;
			if (w[i].mw_credit < max_weight)
				continue;
			w[i].mw_credit -= max_weight;
			claim(table, size, &w[i]);
			filled++;
		}
	}

	free(w);
	return 0;
}
