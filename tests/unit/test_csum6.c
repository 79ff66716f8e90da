/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 checksums: lb_ipv6_l4_csum() against a textbook RFC 1071 sum over
 * the RFC 8200 pseudo-header and against DPDK's rte_ipv6_udptcp_cksum(),
 * and the incremental updates over the pseudo-header (lb_csum_delta128()
 * for an address, lb_csum_delta16() for a port, summed and applied once)
 * against full recomputation after the rewrites the data planes make on
 * IPv6: the mux's DNAT (destination address and port), the agent's SNAT
 * of a reply (source address and port), the mux's rewrite of an ICMPv6
 * error's destination (the ICMPv6 checksum covers the pseudo-header, unlike
 * ICMP's) and the agent's translation of the error's quote.
 *
 * IPv6 has no header checksum: the hop limit the mux decrements is covered
 * by nothing. Packets are random (addresses with 0x0000 and 0xffff words
 * more often than chance, payloads of every parity) from fixed seeds.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <rte_ip.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "test_util.h"

#define N_PACKETS 5000
#define MAX_PAYLOAD 1400
#define PKT_MAX (40 + 60 + MAX_PAYLOAD)

struct pkt6 {
	uint8_t b[PKT_MAX] __attribute__((aligned(8)));
	uint32_t l4_len; /* upper-layer header and payload */
	uint8_t proto;	 /* TCP, UDP or ICMPv6 */
};

static struct lb_ipv6_hdr *
ip6(struct pkt6 *p)
{
	return (struct lb_ipv6_hdr *)p->b;
}

static uint8_t *
l4(struct pkt6 *p)
{
	return p->b + sizeof(struct lb_ipv6_hdr);
}

static uint32_t
csum_off(uint8_t proto)
{
	return proto == LB_IPPROTO_TCP ? 16 : proto == LB_IPPROTO_UDP ? 6 : 2;
}

static lb_be16_t
csum_get(struct pkt6 *p)
{
	lb_be16_t v;

	memcpy(&v, l4(p) + csum_off(p->proto), 2);
	return v;
}

static void
csum_set(struct pkt6 *p, lb_be16_t v)
{
	memcpy(l4(p) + csum_off(p->proto), &v, 2);
}

/* Bytes that are 0x00 or 0xff often: words at the edges of one's complement. */
static uint8_t
rnd8_edgy(uint64_t *s)
{
	return (uint8_t)rnd_edgy(s, 6, 0xff);
}

static void
rnd_addr(uint8_t *a, uint64_t *s)
{
	int i;

	for (i = 0; i < 16; i += 2)
		a[i] = a[i + 1] = rnd8_edgy(s); /* whole words at the edges */
	if (rnd(s, 2))
		for (i = 0; i < 16; i++)
			a[i] = (uint8_t)splitmix64(s);
}

/* Reference checksum (host order) of the packet as it is, its field taken as zero. */
static uint16_t
ref_csum(struct pkt6 *p)
{
	uint8_t ph[40], seg[PKT_MAX];
	uint16_t c;

	memcpy(ph, ip6(p)->src, 32);
	ph[32] = (uint8_t)(p->l4_len >> 24);
	ph[33] = (uint8_t)(p->l4_len >> 16);
	ph[34] = (uint8_t)(p->l4_len >> 8);
	ph[35] = (uint8_t)p->l4_len;
	ph[36] = ph[37] = ph[38] = 0;
	ph[39] = p->proto;
	memcpy(seg, l4(p), p->l4_len);
	seg[csum_off(p->proto)] = seg[csum_off(p->proto) + 1] = 0;
	c = (uint16_t)~ref_sum(seg, p->l4_len, ref_sum(ph, sizeof(ph), 0));
	return p->proto == LB_IPPROTO_UDP && c == 0 ? 0xffff : c;
}

/* lb_ipv6_l4_csum() of the packet, leaving it as it was. */
static lb_be16_t
full(struct pkt6 *p)
{
	lb_be16_t saved = csum_get(p), c;

	csum_set(p, 0);
	c = lb_ipv6_l4_csum(ip6(p)->src, ip6(p)->dst, p->proto, l4(p), p->l4_len);
	csum_set(p, saved);
	return c;
}

static void
random_packet(struct pkt6 *p, uint8_t proto, uint64_t *s)
{
	uint32_t hdr = proto == LB_IPPROTO_TCP	 ? 20 + 4 * rnd(s, 11)
		       : proto == LB_IPPROTO_UDP ? 8
						 : 8 + 48 * rnd(s, 2); /* an error quotes */
	uint32_t pay = rnd(s, 4) ? rnd(s, MAX_PAYLOAD + 1) : rnd(s, 4), i;

	p->proto = proto;
	p->l4_len = hdr + pay;
	for (i = 0; i < 40 + p->l4_len; i++)
		p->b[i] = (uint8_t)splitmix64(s);
	ip6(p)->vtc_flow = lb_cpu_to_be32(6u << 28 | (uint32_t)rnd(s, 1u << 28));
	ip6(p)->payload_len = lb_cpu_to_be16((uint16_t)p->l4_len);
	ip6(p)->next_hdr = proto;
	rnd_addr(ip6(p)->src, s);
	rnd_addr(ip6(p)->dst, s);
	if (proto == LB_IPPROTO_TCP)
		l4(p)[12] = (uint8_t)((hdr / 4) << 4);
	if (proto == LB_IPPROTO_UDP) {
		l4(p)[4] = (uint8_t)(p->l4_len >> 8);
		l4(p)[5] = (uint8_t)p->l4_len;
	}
	csum_set(p, full(p));
}

static uint8_t
proto_i(int i)
{
	static const uint8_t protos[3] = {LB_IPPROTO_TCP, LB_IPPROTO_UDP, LB_IPPROTO_ICMPV6};

	return protos[i % 3];
}

Test(csum6, full_matches_reference_and_dpdk)
{
	uint64_t rng = 0x6c6c6c6c;
	int i;

	for (i = 0; i < N_PACKETS; i++) {
		struct pkt6 p;
		uint16_t got, want;

		random_packet(&p, proto_i(i), &rng);
		got = lb_be16_to_cpu(csum_get(&p));
		want = ref_csum(&p);
		cr_assert_eq(got, want, "packet %d (proto %u, %u bytes): %#06x, want %#06x", i,
			p.proto, p.l4_len, got, want);
		/* The receiver's check: pseudo-header and segment sum to all ones. */
		if (p.proto != LB_IPPROTO_ICMPV6) {
			lb_be16_t lb = csum_get(&p);
			uint16_t dp;

			csum_set(&p, 0);
			dp = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)p.b, l4(&p));
			csum_set(&p, lb);
			cr_assert_eq(lb, dp, "packet %d: lb %#06x, rte_ipv6_udptcp_cksum %#06x", i,
				lb, dp);
		}
	}
}

/* The rewrites, as the data planes make them: deltas summed, applied once. */
enum rw_kind { RW_DNAT, RW_SNAT, RW_ICMP_DST, RW_QUOTE };

static void
rewrite(struct pkt6 *p, enum rw_kind k, const uint8_t *addr, lb_be16_t port)
{
	uint8_t *a = k == RW_SNAT ? ip6(p)->src : ip6(p)->dst;
	uint8_t *q = l4(p) + 8; /* RW_QUOTE: an ICMPv6 error quoting an IPv6 header */
	uint32_t delta;
	lb_be16_t old_port;

	switch (k) {
	case RW_DNAT:
	case RW_SNAT:
		/* The address is under the pseudo-header, the port in the segment. */
		memcpy(&old_port, l4(p) + (k == RW_SNAT ? 0 : 2), 2);
		delta = lb_csum_delta128(a, addr) + lb_csum_delta16(old_port, port);
		memcpy(a, addr, 16);
		memcpy(l4(p) + (k == RW_SNAT ? 0 : 2), &port, 2);
		break;
	case RW_ICMP_DST:
		/* The mux: only the destination changes, but ICMPv6 covers it. */
		delta = lb_csum_delta128(a, addr);
		memcpy(a, addr, 16);
		break;
	default:
		/* The agent: the quoted source and port; no quoted header checksum. */
		memcpy(&old_port, q + 40, 2);
		delta = lb_csum_delta128(q + 8, addr) + lb_csum_delta16(old_port, port);
		memcpy(q + 8, addr, 16);
		memcpy(q + 40, &port, 2);
		break;
	}
	if (p->proto == LB_IPPROTO_UDP && csum_get(p) == 0)
		return; /* never sent so on IPv6, but kept as it came */
	csum_set(p, lb_csum_apply(csum_get(p), delta));
	if (p->proto == LB_IPPROTO_UDP && csum_get(p) == 0)
		csum_set(p, 0xffff);
}

static void
check_rewrites(enum rw_kind k, uint64_t seed)
{
	uint64_t rng = seed;
	int i;

	for (i = 0; i < N_PACKETS; i++) {
		uint8_t proto = k >= RW_ICMP_DST	       ? LB_IPPROTO_ICMPV6
				: proto_i(i) == LB_IPPROTO_UDP ? LB_IPPROTO_UDP
							       : LB_IPPROTO_TCP;
		struct pkt6 p;
		uint8_t addr[16];
		lb_be16_t port = (lb_be16_t)splitmix64(&rng), got, want;

		random_packet(&p, proto, &rng);
		if (k == RW_QUOTE && p.l4_len < 8 + 44)
			continue;
		rnd_addr(addr, &rng);
		if (rnd(&rng, 16) == 0) /* no change at all */
			memcpy(addr, k == RW_SNAT ? ip6(&p)->src : ip6(&p)->dst, 16);
		rewrite(&p, k, addr, port);
		got = csum_get(&p);
		want = full(&p);
		cr_assert_eq(got, want,
			"rewrite %d, packet %d (proto %u, %u bytes): incremental %#06x, full %#06x",
			k, i, p.proto, p.l4_len, got, want);
		cr_assert_eq(
			lb_be16_to_cpu(got), ref_csum(&p), "packet %d: reference disagrees", i);
	}
}

Test(csum6, incremental_dnat)
{
	check_rewrites(RW_DNAT, 0x1d1d1d1d);
}

Test(csum6, incremental_snat)
{
	check_rewrites(RW_SNAT, 0x2e2e2e2e);
}

Test(csum6, incremental_icmp6_error_destination)
{
	check_rewrites(RW_ICMP_DST, 0x3f3f3f3f);
}

Test(csum6, incremental_icmp6_quote)
{
	check_rewrites(RW_QUOTE, 0x4a4a4a4a);
}

/*
 * lb_csum_delta128() is eight 16-bit deltas: against one lb_csum_update16()
 * per word, with the extreme words on both sides.
 */
Test(csum6, delta128_equals_eight_updates)
{
	uint64_t rng = 0x5b5b5b5b;
	int i, w;

	for (i = 0; i < 200000; i++) {
		uint8_t o[16], n[16];
		lb_be16_t c0 = (lb_be16_t)((uint16_t)rnd8_edgy(&rng) << 8 | rnd8_edgy(&rng)),
			  c = c0;

		rnd_addr(o, &rng);
		rnd_addr(n, &rng);
		for (w = 0; w < 16; w += 2) {
			lb_be16_t ow, nw;

			memcpy(&ow, o + w, 2);
			memcpy(&nw, n + w, 2);
			c = lb_csum_update16(c, ow, nw);
		}
		cr_assert_eq(lb_csum_apply(c0, lb_csum_delta128(o, n)), c,
			"case %d: delta128 from %#06x", i, c0);
	}
}
