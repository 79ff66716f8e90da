/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow keys and the flow hash: symmetry, spread, seed sensitivity, parsing;
 * and the byte-order helpers of lb_types.h they are built on.
 *
 * SipHash-1-3 has no published test vectors, so the hash is checked for the
 * properties the mux relies on rather than against numbers made up here.
 * Random tuples come from a fixed-seed generator so a failure reproduces.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "lb_err.h"
#include "lb_flow.h"
#include "lb_types.h"
#include "test_util.h"

#define NTUPLES 200000u
#define NSLOTS 65537u

static const struct lb_hash_seed seed_a = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
static const struct lb_hash_seed seed_b = {0x0123456789abcdefULL, 0xfedcba9876543211ULL};

struct tuple {
	lb_be32_t src, dst;
	lb_be16_t sport, dport;
};

static void
random_tuple(struct tuple *t, uint64_t *rng)
{
	uint64_t r = splitmix64(rng);
	uint64_t q = splitmix64(rng);

	t->src = lb_cpu_to_be32((uint32_t)r);
	t->dst = lb_cpu_to_be32((uint32_t)(r >> 32));
	t->sport = lb_cpu_to_be16((uint16_t)q);
	t->dport = lb_cpu_to_be16((uint16_t)(q >> 16));
}

/*
 * The TCP key of tuple i of a set that is distinct by construction: clients
 * come from 10.0.0.0/8 with a unique (address, port) each, servers from
 * 192.0.0.0/8, so no two tuples, in either direction, can canonicalise to
 * one key.
 */
static void
distinct_key(struct lb_flow_key *k, uint32_t i, uint64_t *rng)
{
	uint64_t r = splitmix64(rng);

	lb_flow_key_v4(k, lb_cpu_to_be32(0x0a000000u | (i >> 4)),
		lb_cpu_to_be16((uint16_t)(1024 + (i & 15))),
		lb_cpu_to_be32(0xc0000000u | ((uint32_t)r & 0x00ffffffu)),
		lb_cpu_to_be16((uint16_t)(r >> 32)), 6);
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t
count_distinct(uint64_t *v, uint32_t n)
{
	uint32_t i, d = n > 0;

	qsort(v, n, sizeof(*v), u64_cmp);
	for (i = 1; i < n; i++)
		d += v[i] != v[i - 1];
	return d;
}

/*
 * The distinct slots of NSLOTS that n hashes fall in, expected within 2% of
 * balls into bins (*want: m(1 - e^(-k/m))). h is left as it was.
 */
static uint32_t
expect_slot_spread(const uint64_t *h, uint32_t n, double *want)
{
	uint64_t *s = malloc(n * sizeof(*s));
	uint32_t i, dslot;

	cr_assert(s != NULL);
	for (i = 0; i < n; i++)
		s[i] = lb_flow_slot(h[i], NSLOTS);
	dslot = count_distinct(s, n);
	free(s);
	*want = NSLOTS * (1.0 - exp(-(double)n / NSLOTS));
	cr_expect_lt(
		fabs(dslot - *want) / *want, 0.02, "%u distinct slots, want %.0f", dslot, *want);
	return dslot;
}

Test(siphash, deterministic_and_keyed)
{
	static const char msg[] = "sluice flow hash";
	uint64_t h = lb_siphash13(&seed_a, msg, sizeof(msg));

	cr_expect_eq(lb_siphash13(&seed_a, msg, sizeof(msg)), h);
	cr_expect_neq(lb_siphash13(&seed_b, msg, sizeof(msg)), h, "seeds differ in one bit");
	cr_expect_neq(lb_siphash13(&seed_a, msg, sizeof(msg) - 1), h, "length is hashed");
}

Test(siphash, every_length_and_byte_counts)
{
	/*
	 * Lengths 0..64 cover the 8-byte loop and every tail case; a zero
	 * appended must change the value, as must a flip of any single byte.
	 */
	uint8_t buf[64] = {0};
	uint64_t h[65 + 64];
	uint32_t len, i, n = 0;

	for (len = 0; len <= 64; len++)
		h[n++] = lb_siphash13(&seed_a, buf, len);
	for (i = 0; i < 64; i++) {
		buf[i] = 0x80;
		h[n++] = lb_siphash13(&seed_a, buf, sizeof(buf));
		buf[i] = 0;
	}
	cr_expect_eq(count_distinct(h, n), n, "some inputs hash alike");
}

Test(flow, key_symmetric)
{
	uint64_t rng = 1;
	struct lb_flow_key fwd, rev;
	struct tuple t;
	uint32_t i;

	for (i = 0; i < 20000; i++) {
		random_tuple(&t, &rng);
		if (i % 8 == 0)
			t.dst = t.src; /* same address: ports decide the order */
		lb_flow_key_v4(&fwd, t.src, t.sport, t.dst, t.dport, 17);
		lb_flow_key_v4(&rev, t.dst, t.dport, t.src, t.sport, 17);
		cr_assert_arr_eq(&fwd, &rev, sizeof(fwd), "tuple %u", i);
		cr_assert_eq(lb_flow_hash(&seed_a, &fwd), lb_flow_hash(&seed_a, &rev));
	}
}

Test(flow, key_keeps_pairs)
{
	/* Canonical order swaps whole endpoints, never an address from its port. */
	struct lb_flow_key k1, k2;
	lb_be32_t a = lb_cpu_to_be32(0x0a000001), b = lb_cpu_to_be32(0x0a000002);
	lb_be16_t p = lb_cpu_to_be16(1000), q = lb_cpu_to_be16(2000);

	lb_flow_key_v4(&k1, a, p, b, q, 6);
	lb_flow_key_v4(&k2, a, q, b, p, 6);
	cr_expect_arr_neq(&k1, &k2, sizeof(k1));
	cr_expect_neq(lb_flow_hash(&seed_a, &k1), lb_flow_hash(&seed_a, &k2));
	cr_expect_eq(k1.lo_addr.a32[0], a);
	cr_expect_eq(k1.lo_port, p);

	lb_flow_key_v4(&k2, a, p, b, q, 17);
	cr_expect_neq(lb_flow_hash(&seed_a, &k1), lb_flow_hash(&seed_a, &k2), "proto counts");
}

Test(flow, spread)
{
	uint64_t *h = malloc(NTUPLES * sizeof(*h));
	uint64_t *s = malloc(NTUPLES * sizeof(*s));
	uint64_t rng = 2;
	double want, dist;
	struct lb_flow_key k;
	uint32_t i, d64, dslot, dsig;

	cr_assert(h != NULL && s != NULL);
	for (i = 0; i < NTUPLES; i++) {
		distinct_key(&k, i, &rng);
		h[i] = lb_flow_hash(&seed_a, &k);
	}
	for (i = 0; i < NTUPLES; i++)
		s[i] = lb_flow_sig(h[i]);
	dsig = count_distinct(s, NTUPLES);
	/*
	 * Balls into bins: expected occupied bins m(1 - e^(-k/m)) ~ 62438,
	 * standard deviation ~50, so 2% (~1250) is far outside chance.
	 */
	dslot = expect_slot_spread(h, NTUPLES, &want);
	dist = fabs(dslot - want) / want;
	d64 = count_distinct(h, NTUPLES);

	/*
	 * 200k values in 2^64 collide with probability ~1e-9, and the inputs
	 * are fixed: any collision means the hash is broken, not unlucky.
	 */
	cr_expect_eq(d64, NTUPLES, "%u 64-bit collisions", NTUPLES - d64);

	cr_log_info("flow spread: %u tuples -> %u distinct 64-bit hashes, %u distinct 32-bit "
		    "signatures (%.1f collisions expected), %u distinct slots of %u (birthday "
		    "expectation %.0f, off by %.2f%%)",
		NTUPLES, d64, dsig, (double)NTUPLES * (NTUPLES - 1) / 2 / 4294967296.0, dslot,
		NSLOTS, want, 100 * dist);
	free(h);
	free(s);
}

Test(flow, seed_changes_choice)
{
	uint64_t rng = 3;
	struct lb_flow_key k;
	uint32_t i, same = 0;

	for (i = 0; i < NTUPLES; i++) {
		distinct_key(&k, i, &rng);
		same += lb_flow_slot(lb_flow_hash(&seed_a, &k), NSLOTS) ==
			lb_flow_slot(lb_flow_hash(&seed_b, &k), NSLOTS);
	}
	/* Independent hashes agree on 1/65537 of tuples: about 3 of 200k. */
	cr_expect_lt(
		(double)same / NTUPLES, 0.01, "%u of %u tuples kept their slot", same, NTUPLES);
	cr_log_info("flow seed change: %u of %u tuples kept their slot (%.1f expected)", same,
		NTUPLES, (double)NTUPLES / NSLOTS);
}

Test(flow, slot_in_range)
{
	uint64_t rng = 4;
	uint32_t i;

	cr_expect_eq(lb_flow_slot(0, NSLOTS), 0);
	cr_expect_eq(lb_flow_slot(UINT64_MAX, NSLOTS), NSLOTS - 1);
	for (i = 0; i < 100000; i++)
		cr_assert_lt(lb_flow_slot(splitmix64(&rng), NSLOTS), NSLOTS);
}

Test(flow, seed_parse)
{
	struct lb_hash_seed s;

	cr_assert_eq(lb_hash_seed_parse(&s, "000102030405060708090a0b0c0d0e0f"), 0);
	cr_expect_eq(s.k0, 0x0001020304050607ULL);
	cr_expect_eq(s.k1, 0x08090a0b0c0d0e0fULL);
	cr_assert_eq(lb_hash_seed_parse(&s, "FFEEDDCCBBAA99887766554433221100"), 0);
	cr_expect_eq(s.k0, 0xffeeddccbbaa9988ULL);
	cr_expect_eq(s.k1, 0x7766554433221100ULL);

	cr_expect_eq(
		lb_hash_seed_parse(&s, "000102030405060708090a0b0c0d0e0"), -LB_EPARSE, "31 digits");
	cr_expect_eq(lb_hash_seed_parse(&s, "000102030405060708090a0b0c0d0e0f0"), -LB_EPARSE,
		"33 digits");
	cr_expect_eq(lb_hash_seed_parse(&s, ""), -LB_EPARSE, "empty");
	cr_expect_eq(lb_hash_seed_parse(&s, NULL), -LB_EPARSE, "NULL");
	cr_expect_eq(lb_hash_seed_parse(&s, "000102030405060708090a0b0c0d0e0g"), -LB_EPARSE,
		"non-hex digit");
	cr_expect_eq(lb_hash_seed_parse(&s, "0x0102030405060708090a0b0c0d0e0f"), -LB_EPARSE,
		"0x prefix");
	cr_expect_eq(
		lb_hash_seed_parse(&s, "00010203040506 708090a0b0c0d0e0f"), -LB_EPARSE, "space");
}

/*
 * The IPv4 fast path of lb_flow_hash() is SipHash-1-3 of the 13 bytes
 * lo addr, hi addr, lo port, hi port, proto: the generic function over that
 * buffer must agree on every key, or muxes built differently would disagree.
 */
Test(flow, v4_fast_path_equals_generic)
{
	uint64_t rng = 99;
	struct lb_flow_key k;
	struct tuple t;
	uint8_t buf[13];
	uint32_t i;

	for (i = 0; i < 100000; i++) {
		random_tuple(&t, &rng);
		lb_flow_key_v4(&k, t.src, t.sport, t.dst, t.dport, (uint8_t)(i & 0xff));
		memcpy(buf, &k.lo_addr.a32[0], 4);
		memcpy(buf + 4, &k.hi_addr.a32[0], 4);
		memcpy(buf + 8, &k.lo_port, 2);
		memcpy(buf + 10, &k.hi_port, 2);
		buf[12] = k.proto;
		cr_assert_eq(lb_flow_hash(&seed_a, &k), lb_siphash13(&seed_a, buf, sizeof(buf)),
			"tuple %u: fast path and generic SipHash differ", i);
	}
}

/* lb_types.h against libc's conversions and against the bytes in memory. */
/* --- IPv6 ------------------------------------------------------------------ */

struct tuple6 {
	uint8_t src[16], dst[16];
	lb_be16_t sport, dport;
};

/*
 * Tuple i of a distinct set, as distinct_key(): clients in
 * 2001:db8:c::/48 with a unique (address, port) each, servers in
 * 2001:db8:5::/48; addresses share long prefixes, as real ones do.
 */
static void
distinct_tuple6(struct tuple6 *t, uint32_t i, uint64_t *rng)
{
	static const uint8_t c[6] = {0x20, 0x01, 0x0d, 0xb8, 0x00, 0x0c};
	static const uint8_t v[6] = {0x20, 0x01, 0x0d, 0xb8, 0x00, 0x05};
	uint64_t r = splitmix64(rng);
	uint32_t host = lb_cpu_to_be32(i >> 4);

	memset(t, 0, sizeof(*t));
	memcpy(t->src, c, 6);
	memcpy(t->src + 12, &host, 4);
	t->sport = lb_cpu_to_be16((uint16_t)(1024 + (i & 15)));
	memcpy(t->dst, v, 6);
	memcpy(t->dst + 8, &r, 8);
	t->dport = lb_cpu_to_be16((uint16_t)(r >> 48));
}

static uint64_t
tuple6_hash(const struct lb_hash_seed *seed, const struct tuple6 *t)
{
	struct lb_flow_key k;

	lb_flow_key_v6(&k, t->src, t->sport, t->dst, t->dport, 6);
	return lb_flow_hash(seed, &k);
}

/* Both directions of a flow, and so an ICMPv6 error quoting it, hash alike. */
Test(flow6, key_symmetric)
{
	uint64_t rng = 61;
	struct lb_flow_key fwd, rev;
	struct tuple6 t;
	uint32_t i;

	for (i = 0; i < 20000; i++) {
		distinct_tuple6(&t, i, &rng);
		if (i % 3 == 0) /* the same /64: the order is decided late in the address */
			memcpy(t.dst, t.src, 8);
		if (i % 8 == 0) /* the same address: ports decide */
			memcpy(t.dst, t.src, 16);
		if (i % 2)
			t.sport = (lb_be16_t)splitmix64(&rng);
		lb_flow_key_v6(&fwd, t.src, t.sport, t.dst, t.dport, 17);
		lb_flow_key_v6(&rev, t.dst, t.dport, t.src, t.sport, 17);
		cr_assert_arr_eq(&fwd, &rev, sizeof(fwd), "tuple %u", i);
		cr_assert_eq(
			lb_flow_hash(&seed_a, &fwd), lb_flow_hash(&seed_a, &rev), "tuple %u", i);
		/* The lower endpoint first: numeric order of (address, port). */
		cr_assert(
			memcmp(fwd.lo_addr.a8, fwd.hi_addr.a8, 16) < 0 ||
				(memcmp(fwd.lo_addr.a8, fwd.hi_addr.a8, 16) == 0 &&
					lb_be16_to_cpu(fwd.lo_port) <= lb_be16_to_cpu(fwd.hi_port)),
			"tuple %u: not canonical", i);
		cr_assert_eq(fwd.af, LB_AF_INET6);
		/* What is hashed: the 38 bytes before the padding. */
		cr_assert_eq(lb_flow_hash(&seed_a, &fwd),
			lb_siphash13(&seed_a, &fwd, offsetof(struct lb_flow_key, pad)));
	}
}

Test(flow6, key_keeps_pairs_and_protocol)
{
	struct tuple6 t;
	struct lb_flow_key k1, k2;
	uint64_t rng = 62;

	distinct_tuple6(&t, 7, &rng);
	lb_flow_key_v6(&k1, t.src, t.sport, t.dst, t.dport, 6);
	lb_flow_key_v6(&k2, t.src, t.dport, t.dst, t.sport, 6);
	cr_expect_neq(lb_flow_hash(&seed_a, &k1), lb_flow_hash(&seed_a, &k2), "ports swapped");
	lb_flow_key_v6(&k2, t.src, t.sport, t.dst, t.dport, 17);
	cr_expect_neq(lb_flow_hash(&seed_a, &k1), lb_flow_hash(&seed_a, &k2), "proto counts");
	cr_expect_neq(lb_flow_hash(&seed_a, &k1), lb_flow_hash(&seed_b, &k1), "seed counts");
}

/* The same bytes in two families are two flows (1.2.3.4 and 102:304:: look alike). */
Test(flow6, family_counts)
{
	uint8_t a6[16] = {1, 2, 3, 4}, b6[16] = {10, 0, 0, 1};
	lb_be32_t a4, b4;
	struct lb_flow_key k4, k6;

	memcpy(&a4, a6, 4);
	memcpy(&b4, b6, 4);
	lb_flow_key_v4(&k4, a4, lb_cpu_to_be16(1000), b4, lb_cpu_to_be16(80), 6);
	lb_flow_key_v6(&k6, a6, lb_cpu_to_be16(1000), b6, lb_cpu_to_be16(80), 6);
	cr_expect_arr_eq(&k4.lo_addr, &k6.lo_addr, 16, "the same address bytes");
	cr_expect_neq(lb_flow_hash(&seed_a, &k4), lb_flow_hash(&seed_a, &k6));
}

Test(flow6, spread)
{
	uint64_t *h = malloc(NTUPLES * sizeof(*h));
	uint64_t rng = 63;
	struct tuple6 t;
	uint32_t i, d64, dslot, same = 0;
	double want;

	cr_assert(h != NULL);
	for (i = 0; i < NTUPLES; i++) {
		distinct_tuple6(&t, i, &rng);
		h[i] = tuple6_hash(&seed_a, &t);
		same += lb_flow_slot(h[i], NSLOTS) ==
			lb_flow_slot(tuple6_hash(&seed_b, &t), NSLOTS);
	}
	/* Slots: the balls-into-bins expectation, as for IPv4. */
	dslot = expect_slot_spread(h, NTUPLES, &want);
	d64 = count_distinct(h, NTUPLES);
	cr_expect_eq(d64, NTUPLES, "%u 64-bit collisions", NTUPLES - d64);
	cr_expect_lt(
		(double)same / NTUPLES, 0.01, "%u tuples kept their slot under a new seed", same);
	cr_log_info("flow6 spread: %u IPv6 tuples -> %u distinct 64-bit hashes, %u distinct "
		    "slots of %u (expectation %.0f); %u kept their slot under another seed",
		NTUPLES, d64, dslot, NSLOTS, want, same);
	free(h);
}

Test(types, byte_order)
{
	static const uint8_t be[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
	uint64_t rng = 0x7e7e7e7e;
	lb_be16_t v16;
	lb_be32_t v32;
	lb_be64_t v64;
	int i;

	memcpy(&v16, be, 2);
	memcpy(&v32, be, 4);
	memcpy(&v64, be, 8);
	cr_assert_eq(lb_be16_to_cpu(v16), 0x0123);
	cr_assert_eq(lb_be32_to_cpu(v32), 0x01234567u);
	cr_assert_eq(lb_be64_to_cpu(v64), 0x0123456789abcdefULL);
	cr_assert_eq(lb_cpu_to_be16(0x0123), v16);
	cr_assert_eq(lb_cpu_to_be32(0x01234567u), v32);
	cr_assert_eq(lb_cpu_to_be64(0x0123456789abcdefULL), v64);
	memcpy(&v64, be, 8);
	cr_assert_eq(lb_le64_to_cpu(v64), 0xefcdab8967452301ULL);
	cr_assert_eq(LB_LITTLE_ENDIAN, __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	for (i = 0; i < 100000; i++) {
		uint64_t x;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		x = rng;
		cr_assert_eq(lb_cpu_to_be16((uint16_t)x), htons((uint16_t)x));
		cr_assert_eq(lb_be16_to_cpu((uint16_t)x), ntohs((uint16_t)x));
		cr_assert_eq(lb_cpu_to_be32((uint32_t)x), htonl((uint32_t)x));
		cr_assert_eq(lb_be32_to_cpu((uint32_t)x), ntohl((uint32_t)x));
		cr_assert_eq(lb_cpu_to_be64(x), htobe64(x));
		cr_assert_eq(lb_be64_to_cpu(x), be64toh(x));
		cr_assert_eq(lb_le64_to_cpu(x), le64toh(x));
		cr_assert_eq(lb_bswap16(lb_bswap16((uint16_t)x)), (uint16_t)x);
	}
}
