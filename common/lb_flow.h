/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow keys, service keys and the symmetric flow hash.
 *
 * Addresses are 16 bytes for both families: an IPv4 address sits in the
 * first four bytes and the rest stays zero, so one key layout serves IPv4
 * today and IPv6 later, and keys can be compared and hashed as raw bytes.
 *
 * The flow key is canonical: of the two endpoints, the lower (address, port)
 * pair comes first. Both directions of a connection, and an ICMP error
 * quoting it, therefore produce the same key and the same hash.
 *
 * The hash is SipHash-1-3 keyed with a 128-bit secret every mux shares. It is
 * computed once per packet: its low 32 bits are the connection table's
 * precomputed signature and its high 32 bits index the Maglev table. Keyed,
 * so nobody outside can aim flows at one backend; 64 bits wide, so unlike the
 * symmetric Toeplitz RSS hash it does not fold tuples into 16 bits.
 */
#ifndef LB_FLOW_H
#define LB_FLOW_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lb_hdr.h"
#include "lb_types.h"

enum lb_af { LB_AF_NONE = 0, LB_AF_INET = 4, LB_AF_INET6 = 6 };

struct lb_addr {
	union {
		uint8_t a8[16];
		lb_be32_t a32[4];
		uint64_t a64[2];
	};
};
static_assert(sizeof(struct lb_addr) == 16, "addresses are 16 bytes");

/* Connection-table key; zero-padded so it hashes and compares as bytes. */
struct lb_flow_key {
	struct lb_addr lo_addr;
	struct lb_addr hi_addr;
	lb_be16_t lo_port;
	lb_be16_t hi_port;
	uint8_t proto;
	uint8_t af;
	uint8_t pad[2];
};
static_assert(sizeof(struct lb_flow_key) == 40, "flow key is 40 bytes");

/* Service-table key: (VIP, protocol, port). */
struct lb_svc_key {
	struct lb_addr vip;
	lb_be16_t port;
	uint8_t proto;
	uint8_t af;
	uint8_t pad[4];
};
static_assert(sizeof(struct lb_svc_key) == 24, "service key is 24 bytes");

struct lb_hash_seed {
	uint64_t k0;
	uint64_t k1;
};

static inline void
lb_addr_v4(struct lb_addr *a, lb_be32_t v4)
{
	a->a64[0] = 0;
	a->a64[1] = 0;
	a->a32[0] = v4;
}

/*
 * Canonical IPv4 flow key from one direction's tuple. Ports are zero for
 * protocols without them; ICMP echo uses the identifier on both sides.
 */
static inline void
lb_flow_key_v4(struct lb_flow_key *k, lb_be32_t src, lb_be16_t sport, lb_be32_t dst,
	lb_be16_t dport, uint8_t proto)
{
	uint64_t s = ((uint64_t)lb_be32_to_cpu(src) << 16) | lb_be16_to_cpu(sport);
	uint64_t d = ((uint64_t)lb_be32_to_cpu(dst) << 16) | lb_be16_to_cpu(dport);

	memset(k, 0, sizeof(*k));
	if (s <= d) {
		k->lo_addr.a32[0] = src;
		k->lo_port = sport;
		k->hi_addr.a32[0] = dst;
		k->hi_port = dport;
	} else {
		k->lo_addr.a32[0] = dst;
		k->lo_port = dport;
		k->hi_addr.a32[0] = src;
		k->hi_port = sport;
	}
	k->proto = proto;
	k->af = LB_AF_INET;
}

static inline void
lb_svc_key_v4(struct lb_svc_key *k, lb_be32_t vip, lb_be16_t port, uint8_t proto)
{
	memset(k, 0, sizeof(*k));
	k->vip.a32[0] = vip;
	k->port = port;
	k->proto = proto;
	k->af = LB_AF_INET;
}

/*
 * Canonical IPv6 flow key: the same order as lb_flow_key_v4(), (address,
 * port) compared as the big-endian numbers they are, lower endpoint first.
 * Addresses are 16 bytes as they lie in the packet.
 */
static inline void
lb_flow_key_v6(struct lb_flow_key *k, const uint8_t *src, lb_be16_t sport, const uint8_t *dst,
	lb_be16_t dport, uint8_t proto)
{
	int c = memcmp(src, dst, 16);

	memset(k, 0, sizeof(*k));
	if (c < 0 || (c == 0 && lb_be16_to_cpu(sport) <= lb_be16_to_cpu(dport))) {
		memcpy(k->lo_addr.a8, src, 16);
		k->lo_port = sport;
		memcpy(k->hi_addr.a8, dst, 16);
		k->hi_port = dport;
	} else {
		memcpy(k->lo_addr.a8, dst, 16);
		k->lo_port = dport;
		memcpy(k->hi_addr.a8, src, 16);
		k->hi_port = sport;
	}
	k->proto = proto;
	k->af = LB_AF_INET6;
}

/* Service key of either family (vip in lb_addr form, af LB_AF_INET or LB_AF_INET6). */
static inline void
lb_svc_key_make(
	struct lb_svc_key *k, uint8_t af, const struct lb_addr *vip, lb_be16_t port, uint8_t proto)
{
	memset(k, 0, sizeof(*k));
	k->vip = *vip;
	k->port = port;
	k->proto = proto;
	k->af = af;
}

/*
 * Format an IPv4 lb_addr into buf (at least 16 bytes). lb_addr_ntop()
 * (lb_addr.h) formats either family.
 */
const char *lb_addr_str(const struct lb_addr *a, char *buf, size_t len);

/* SipHash-1-3 of an arbitrary buffer (used for keys, seeds and tests). */
uint64_t lb_siphash13(const struct lb_hash_seed *seed, const void *data, size_t len);

/*
 * The flow hash of a canonical key. IPv4 keys hash only their 13 meaningful
 * bytes, so the common case costs two SipHash compressions; IPv6 keys hash
 * their 38 bytes up to the padding (addresses, ports, protocol, family):
 * five.
 */
uint64_t lb_flow_hash(const struct lb_hash_seed *seed, const struct lb_flow_key *k);

#define LB_ROTL64(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define LB_SIPROUND(v0, v1, v2, v3)                                                                \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = LB_ROTL64(v1, 13);                                                            \
		v1 ^= v0;                                                                          \
		v0 = LB_ROTL64(v0, 32);                                                            \
		v2 += v3;                                                                          \
		v3 = LB_ROTL64(v3, 16);                                                            \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = LB_ROTL64(v3, 21);                                                            \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = LB_ROTL64(v1, 17);                                                            \
		v1 ^= v2;                                                                          \
		v2 = LB_ROTL64(v2, 32);                                                            \
	} while (0)

/*
 * SipHash-1-3 in three steps, shared by lb_siphash13() and the inline IPv4
 * flow hash: the keyed state, one compression round a message word (read
 * little-endian), and the last word (the message's tail with its length in
 * the top byte) followed by the three finalization rounds.
 */
struct lb_sip {
	uint64_t v0, v1, v2, v3;
};

static inline void
lb_sip_init(struct lb_sip *s, const struct lb_hash_seed *seed)
{
	s->v0 = 0x736f6d6570736575ULL ^ seed->k0;
	s->v1 = 0x646f72616e646f6dULL ^ seed->k1;
	s->v2 = 0x6c7967656e657261ULL ^ seed->k0;
	s->v3 = 0x7465646279746573ULL ^ seed->k1;
}

static inline void
lb_sip_word(struct lb_sip *s, uint64_t m)
{
	s->v3 ^= m;
	LB_SIPROUND(s->v0, s->v1, s->v2, s->v3);
	s->v0 ^= m;
}

static inline uint64_t
lb_sip_final(struct lb_sip *s, uint64_t last)
{
	lb_sip_word(s, last);
	s->v2 ^= 0xff;
	LB_SIPROUND(s->v0, s->v1, s->v2, s->v3);
	LB_SIPROUND(s->v0, s->v1, s->v2, s->v3);
	LB_SIPROUND(s->v0, s->v1, s->v2, s->v3);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/*
 * lb_flow_hash() of the canonical IPv4 key (lo_addr, hi_addr, lo_port,
 * hi_port, proto), taken from the fields themselves: SipHash-1-3 of those 13
 * bytes, as one full block and a tail, inline for the fast path. The value
 * is exactly lb_flow_hash()'s (which calls this for IPv4 keys).
 */
static inline uint64_t
lb_flow_hash_v4(const struct lb_hash_seed *seed, lb_be32_t lo_addr, lb_be32_t hi_addr,
	lb_be16_t lo_port, lb_be16_t hi_port, uint8_t proto)
{
	struct lb_sip s;
	uint64_t m, b;

	/* The message bytes are read little-endian, whatever the host order. */
#if LB_LITTLE_ENDIAN
	m = (uint64_t)lo_addr | (uint64_t)hi_addr << 32;
	b = (uint64_t)lo_port | (uint64_t)hi_port << 16 | (uint64_t)proto << 32;
#else
	m = (uint64_t)lb_bswap32(lo_addr) | (uint64_t)lb_bswap32(hi_addr) << 32;
	b = (uint64_t)lb_be16_to_cpu(lo_port) | (uint64_t)lb_be16_to_cpu(hi_port) << 16 |
	    (uint64_t)proto << 32;
#endif
	lb_sip_init(&s, seed);
	lb_sip_word(&s, m);
	return lb_sip_final(&s, b | (uint64_t)13 << 56);
}

/* Signature for the connection table and index source for Maglev. */
static inline uint32_t
lb_flow_sig(uint64_t h)
{
	return (uint32_t)h;
}

/* Map a flow hash onto [0, n) without a division (Lemire's multiply-shift). */
static inline uint32_t
lb_flow_slot(uint64_t h, uint32_t n)
{
	return (uint32_t)(((h >> 32) * (uint64_t)n) >> 32);
}

/*
 * Parse a seed written as 32 hex digits. Returns 0 or -LB_EPARSE.
 */
int lb_hash_seed_parse(struct lb_hash_seed *seed, const char *hex);

#endif /* LB_FLOW_H */
