/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internet checksums: the full computations against a textbook RFC 1071 sum
 * and against DPDK's rte_ipv4_cksum() / rte_ipv4_udptcp_cksum(), and the
 * RFC 1624 incremental updates against full recomputation after the
 * rewrites the data planes make: the mux's DNAT (destination address,
 * destination port, TTL), the agent's SNAT of a reply (source address and
 * port) and its translation of an ICMP error's quote. Each rewrite both as a
 * chain of single updates (lb_csum_update16/32) and as the data planes do
 * it, deltas summed and folded once per checksum (lb_csum_delta16/32,
 * lb_csum_apply), which must agree bit for bit.
 *
 * Packets are random: IHL 5..15, TCP options, payloads of every parity. A
 * fixed seed makes a failure reproduce.
 *
 * One's complement has two zeros, 0x0000 and 0xffff. A full checksum of
 * data that is not all zero is ~(a sum in 1..0xffff), never 0xffff, and so is
 * the RFC 1624 eqn. 3 update, so for TCP and the IP header the two must agree
 * bit for bit. UDP is the exception: RFC 768 sends a computed 0x0000 as 0xffff
 * because 0x0000 means "no checksum"; the update helpers do not know the
 * protocol, see incremental_udp_zero.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <rte_ip.h>

#include "ha_icmp.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "test_util.h"

#define N_PACKETS 5000
#define MAX_PAYLOAD 1400
#define PKT_MAX (60 + 60 + MAX_PAYLOAD)

struct pkt {
	uint8_t b[PKT_MAX] __attribute__((aligned(8)));
	uint32_t ihl;	 /* bytes */
	uint32_t l4_len; /* L4 header and payload */
	uint8_t proto;
};

/* A 16-bit value that is 0x0000 or 0xffff more often than chance would have it. */
static uint16_t
rnd16(uint64_t *s)
{
	return (uint16_t)rnd_edgy(s, 8, 0xffff);
}

static uint16_t
get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static void
put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static struct lb_ipv4_hdr *
ip_of(struct pkt *p)
{
	return (struct lb_ipv4_hdr *)p->b;
}

static uint8_t *
l4_of(struct pkt *p)
{
	return p->b + p->ihl;
}

/* Offset of the checksum inside the L4 header. */
static uint32_t
l4_csum_off(uint8_t proto)
{
	return proto == LB_IPPROTO_TCP ? 16 : 6;
}

/* Reference header checksum, host order. */
static uint16_t
ref_ip_csum(const struct pkt *p)
{
	uint8_t h[60];

	memcpy(h, p->b, p->ihl);
	h[10] = h[11] = 0;
	return (uint16_t)~ref_sum(h, p->ihl, 0);
}

/* One's-complement sum of pseudo-header and segment (checksum field zeroed), host order. */
static uint32_t
ref_l4_sum(const struct pkt *p)
{
	uint8_t ph[12];
	uint8_t seg[PKT_MAX];
	uint32_t sum;

	memcpy(ph, p->b + 12, 8);
	ph[8] = 0;
	ph[9] = p->proto;
	ph[10] = (uint8_t)(p->l4_len >> 8);
	ph[11] = (uint8_t)p->l4_len;
	memcpy(seg, p->b + p->ihl, p->l4_len);
	seg[l4_csum_off(p->proto)] = seg[l4_csum_off(p->proto) + 1] = 0;
	sum = ref_sum(ph, sizeof(ph), 0);
	return ref_sum(seg, p->l4_len, sum);
}

/* Reference TCP/UDP checksum, host order, with RFC 768's zero rule for UDP. */
static uint16_t
ref_l4_csum(const struct pkt *p)
{
	uint16_t c = (uint16_t)~ref_l4_sum(p);

	if (p->proto == LB_IPPROTO_UDP && c == 0)
		c = 0xffff;
	return c;
}

static lb_be16_t
l4_csum_get(struct pkt *p)
{
	return get16(l4_of(p) + l4_csum_off(p->proto));
}

static void
l4_csum_set(struct pkt *p, lb_be16_t c)
{
	put16(l4_of(p) + l4_csum_off(p->proto), c);
}

/* Full L4 checksum by lb_ipv4_l4_csum(), leaving the packet as it was. */
static lb_be16_t
lb_l4_full(struct pkt *p)
{
	lb_be16_t saved = l4_csum_get(p), c;

	l4_csum_set(p, 0);
	c = lb_ipv4_l4_csum(ip_of(p)->src, ip_of(p)->dst, p->proto, l4_of(p), p->l4_len);
	l4_csum_set(p, saved);
	return c;
}

/* Set both checksums the way a sender would. */
static void
fill_csums(struct pkt *p)
{
	ip_of(p)->csum = lb_ipv4_hdr_csum(p->b, p->ihl);
	l4_csum_set(p, lb_l4_full(p));
}

/* Random TCP or UDP packet with correct checksums. */
static void
random_packet(struct pkt *p, uint8_t proto, uint64_t *rng)
{
	struct lb_ipv4_hdr *ip = ip_of(p);
	uint32_t l4_hdr, pay, i, total;

	p->proto = proto;
	p->ihl = rnd(rng, 2) ? 20 : 20 + 4 * rnd(rng, 11);
	l4_hdr = proto == LB_IPPROTO_TCP ? 20 + 4 * rnd(rng, 11) : 8;
	switch (rnd(rng, 8)) {
	case 0:
		pay = rnd(rng, 4); /* 0..3: both parities at the edge */
		break;
	default:
		pay = rnd(rng, MAX_PAYLOAD + 1);
	}
	p->l4_len = l4_hdr + pay;
	total = p->ihl + p->l4_len;
	for (i = 0; i < total; i++)
		p->b[i] = (uint8_t)splitmix64(rng);
	ip->ver_ihl = (uint8_t)(0x40 | p->ihl / 4);
	ip->total_len = lb_cpu_to_be16((uint16_t)total);
	ip->frag_off = rnd(rng, 2) ? lb_cpu_to_be16(LB_IPV4_DF) : 0;
	ip->ttl = (uint8_t)(2 + rnd(rng, 254));
	ip->proto = proto;
	if (proto == LB_IPPROTO_TCP)
		l4_of(p)[12] = (uint8_t)((l4_hdr / 4) << 4);
	else
		put16(l4_of(p) + 4, lb_cpu_to_be16((uint16_t)p->l4_len));
	fill_csums(p);
}

/* Packet i of a test's sequence: UDP when i is odd, TCP when even. */
static uint8_t
packet_i(struct pkt *p, int i, uint64_t *rng)
{
	uint8_t proto = i & 1 ? LB_IPPROTO_UDP : LB_IPPROTO_TCP;

	random_packet(p, proto, rng);
	return proto;
}

/* Checks one packet; i names it in the messages. */
typedef void packet_check(struct pkt *p, uint8_t proto, int i);

/* Runs check on N_PACKETS random packets from seed, TCP and UDP in turn. */
static void
each_packet(uint64_t seed, packet_check *check)
{
	int i;

	for (i = 0; i < N_PACKETS; i++) {
		struct pkt p;
		uint8_t proto = packet_i(&p, i, &seed);

		check(&p, proto, i);
	}
}

static void
check_reference(struct pkt *p, uint8_t proto, int i)
{
	uint16_t got, want;

	got = lb_be16_to_cpu(ip_of(p)->csum);
	want = ref_ip_csum(p);
	cr_assert_eq(got, want, "packet %d: IP header checksum %#06x, want %#06x", i, got, want);
	/* The receiver's check: the header with its checksum sums to all ones. */
	cr_assert_eq(ref_sum(p->b, p->ihl, 0), 0xffff, "packet %d: header does not verify", i);
	got = lb_be16_to_cpu(l4_csum_get(p));
	want = ref_l4_csum(p);
	cr_assert_eq(got, want, "packet %d (%s, %u bytes): L4 checksum %#06x, want %#06x", i,
		proto == LB_IPPROTO_TCP ? "TCP" : "UDP", p->l4_len, got, want);
	cr_assert_neq(got, proto == LB_IPPROTO_UDP ? 0 : 0xffff,
		"packet %d: checksum %#06x is never sent", i, got);
}

Test(csum, full_matches_reference)
{
	each_packet(0xc5c5c5c5, check_reference);
}

static void
check_dpdk(struct pkt *p, uint8_t proto, int i)
{
	const struct rte_ipv4_hdr *rip = (const struct rte_ipv4_hdr *)p->b;
	lb_be16_t lb_ip = ip_of(p)->csum, lb_l4 = l4_csum_get(p);
	uint16_t dp_ip, dp_l4;

	/* DPDK sums the fields as they are: both checksums must be zero. */
	ip_of(p)->csum = 0;
	l4_csum_set(p, 0);
	dp_ip = rte_ipv4_cksum(rip);
	dp_l4 = rte_ipv4_udptcp_cksum(rip, l4_of(p));
	cr_assert_eq(lb_ip, dp_ip, "packet %d (IHL %u): lb %#06x, rte_ipv4_cksum %#06x", i,
		p->ihl / 4, lb_ip, dp_ip);
	cr_assert_eq(lb_l4, dp_l4,
		"packet %d (%s, %u bytes): lb %#06x, rte_ipv4_udptcp_cksum %#06x", i,
		proto == LB_IPPROTO_TCP ? "TCP" : "UDP", p->l4_len, lb_l4, dp_l4);
}

Test(csum, matches_dpdk)
{
	each_packet(0xd7d7d7d7, check_dpdk);
}

/*
 * A DNAT as the data plane does it: new destination address and port, TTL
 * down by one, both checksums patched, never recomputed.
 */
struct rewrite {
	lb_be32_t dst;
	lb_be16_t dport;
};

static void
rewrite_incremental(struct pkt *p, const struct rewrite *rw)
{
	struct lb_ipv4_hdr *ip = ip_of(p);
	lb_be32_t old_dst = ip->dst;
	lb_be16_t old_ttl_proto = get16(p->b + 8), old_dport = get16(l4_of(p) + 2);
	lb_be16_t c;

	ip->ttl--;
	ip->dst = rw->dst;
	ip->csum = lb_csum_update32(ip->csum, old_dst, rw->dst);
	ip->csum = lb_csum_update16(ip->csum, old_ttl_proto, get16(p->b + 8));

	put16(l4_of(p) + 2, rw->dport);
	c = l4_csum_get(p);
	c = lb_csum_update32(c, old_dst, rw->dst); /* the pseudo-header holds dst */
	c = lb_csum_update16(c, old_dport, rw->dport);
	l4_csum_set(p, c);
}

static void
random_rewrite(struct rewrite *rw, const struct pkt *p, uint64_t *rng)
{
	switch (rnd(rng, 16)) {
	case 0: /* no change at all */
		memcpy(&rw->dst, p->b + 16, 4);
		rw->dport = get16(p->b + p->ihl + 2);
		break;
	default:
		rw->dst = (lb_be32_t)((uint32_t)rnd16(rng) << 16 | rnd16(rng));
		rw->dport = rnd16(rng);
	}
}

Test(csum, incremental_dnat)
{
	uint64_t rng = 0x1c1c1c1c;
	uint32_t udp_zero = 0;
	int i;

	for (i = 0; i < N_PACKETS; i++) {
		struct rewrite rw;
		struct pkt p;
		uint8_t proto = packet_i(&p, i, &rng);
		lb_be16_t got, want;

		random_rewrite(&rw, &p, &rng);
		rewrite_incremental(&p, &rw);

		got = ip_of(&p)->csum;
		want = lb_ipv4_hdr_csum(p.b, p.ihl);
		cr_assert_eq(got, want, "packet %d: IP checksum after rewrite %#06x, full %#06x", i,
			got, want);
		got = l4_csum_get(&p);
		want = lb_l4_full(&p);
		if (proto == LB_IPPROTO_UDP && got == 0 && want == 0xffff) {
			udp_zero++;
			continue;
		}
		cr_assert_eq(got, want,
			"packet %d (%s, %u bytes): L4 after rewrite %#06x, full %#06x", i,
			proto == LB_IPPROTO_TCP ? "TCP" : "UDP", p.l4_len, got, want);
		/* And independently of lb_csum: the rewritten segment verifies. */
		cr_assert_eq(
			lb_be16_to_cpu(got), ref_l4_csum(&p), "packet %d: reference disagrees", i);
	}
	/* 1 in 65535 per UDP packet; incremental_udp_zero makes it happen on purpose. */
	cr_expect_leq(udp_zero, 2, "%u UDP rewrites came out 0x0000", udp_zero);
}

/*
 * A UDP datagram whose checksum after the rewrite is zero. RFC 768 sends it
 * as 0xffff, and lb_ipv4_l4_csum() does; the RFC 1624 update cannot know the
 * field is UDP's and yields 0x0000, which a receiver reads as "no checksum".
 * Whoever rewrites UDP must therefore map 0x0000 to 0xffff after the update
 * (and skip the update when the datagram arrived with checksum 0).
 */
Test(csum, incremental_udp_zero)
{
	uint64_t rng = 0x0dd0dd0d;
	int i;

	for (i = 0; i < 200; i++) {
		struct pkt p, q;
		struct rewrite rw;
		uint32_t s;
		uint16_t w;
		lb_be16_t inc, full;

		do {
			random_packet(&p, LB_IPPROTO_UDP, &rng);
		} while (p.l4_len < 10);
		random_rewrite(&rw, &p, &rng);
		/* Choose the first payload word so that the rewritten sum is 0xffff. */
		q = p;
		memcpy(q.b + 16, &rw.dst, 4);
		put16(l4_of(&q) + 2, rw.dport);
		put16(l4_of(&q) + 8, 0);
		s = ref_l4_sum(&q);
		w = (uint16_t)(0xffff - s);
		put16(l4_of(&p) + 8, lb_cpu_to_be16(w));
		fill_csums(&p);

		rewrite_incremental(&p, &rw);
		inc = l4_csum_get(&p);
		full = lb_l4_full(&p);
		cr_assert_eq(full, 0xffff, "case %d: lb_ipv4_l4_csum gave %#06x for a zero sum", i,
			full);
		cr_assert_eq(inc, 0, "case %d: update gave %#06x", i, inc);
		cr_assert_eq(
			inc == 0 ? 0xffff : inc, full, "case %d: fixed-up update %#06x", i, inc);
	}
}

/* The zero rule itself, for lb and DPDK alike. */
Test(csum, udp_zero_rule)
{
	uint64_t rng = 0x2e202e20;
	int i;

	for (i = 0; i < 200; i++) {
		struct pkt p;
		uint16_t w;
		lb_be16_t tcp_view;

		do {
			random_packet(&p, LB_IPPROTO_UDP, &rng);
		} while (p.l4_len < 10);
		put16(l4_of(&p) + 8, 0);
		w = (uint16_t)(0xffff - ref_l4_sum(&p));
		put16(l4_of(&p) + 8, lb_cpu_to_be16(w));
		fill_csums(&p);
		cr_assert_eq(
			l4_csum_get(&p), 0xffff, "case %d: UDP checksum %#06x", i, l4_csum_get(&p));
		l4_csum_set(&p, 0);
		cr_assert_eq(rte_ipv4_udptcp_cksum((const struct rte_ipv4_hdr *)p.b, l4_of(&p)),
			0xffff, "case %d: DPDK disagrees", i);
		/*
		 * The same bytes under TCP's pseudo-header: protocol 6 instead of
		 * 17 takes 11 off a sum of (negative) zero, so the checksum is 11.
		 */
		tcp_view = lb_ipv4_l4_csum(
			ip_of(&p)->src, ip_of(&p)->dst, LB_IPPROTO_TCP, l4_of(&p), p.l4_len);
		cr_assert_eq(lb_be16_to_cpu(tcp_view), LB_IPPROTO_UDP - LB_IPPROTO_TCP,
			"case %d: TCP view %#06x", i, lb_be16_to_cpu(tcp_view));
	}
}

/*
 * Single words and address-sized pairs changed in a plain buffer, with the
 * extreme values 0x0000 and 0xffff on both sides, against lb_icmp_csum()
 * (no pseudo-header) over the changed buffer.
 */
Test(csum, incremental_words)
{
	uint64_t rng = 0x3a3a3a3a;
	uint8_t buf[64] __attribute__((aligned(4)));
	int i;

	for (i = 0; i < 100000; i++) {
		uint32_t len = 6 + 2 * rnd(&rng, 29), j, off = 0;
		lb_be16_t c, full;
		bool zero = true;

		for (j = 0; j < len; j++)
			buf[j] = rnd(&rng, 4) ? (uint8_t)splitmix64(&rng) : 0;
		put16(buf + 2, 0); /* the checksum field */
		c = lb_icmp_csum(buf, len);
		if (i & 1) {
			lb_be16_t old, new = rnd16(&rng);

			off = 4 + 2 * rnd(&rng, (len - 4) / 2);
			old = get16(buf + off);
			put16(buf + off, new);
			c = lb_csum_update16(c, old, new);
		} else {
			lb_be32_t old, new = (lb_be32_t)((uint32_t)rnd16(&rng) << 16 | rnd16(&rng));

			if (len < 8)
				continue;
			off = 4 + 4 * rnd(&rng, (len - 4) / 4);
			memcpy(&old, buf + off, 4);
			memcpy(buf + off, &new, 4);
			c = lb_csum_update32(c, old, new);
		}
		full = lb_icmp_csum(buf, len);
		for (j = 0; j < len; j++)
			zero &= buf[j] == 0;
		/*
		 * All-zero data is the one case where the two zeros differ: the
		 * full sum is ~0x0000 = 0xffff, the update ~0xffff = 0x0000.
		 */
		if (zero)
			cr_assert(c == 0 && full == 0xffff,
				"case %d: all-zero buffer: %#06x / %#06x", i, c, full);
		else
			cr_assert_eq(c, full, "case %d (len %u, off %u): update %#06x, full %#06x",
				i, len, off, c, full);
	}
}

static uint32_t
rnd32(uint64_t *s)
{
	return (uint32_t)rnd16(s) << 16 | rnd16(s);
}

/*
 * Several changes under one checksum: their deltas summed and applied once
 * equal one update per change, whatever the values (0x0000 and 0xffff,
 * one's complement's two zeros, on every side, checksum included).
 */
Test(csum, delta_apply_equals_chained_updates)
{
	uint64_t rng = 0x4b4b4b4b;
	int i;

	for (i = 0; i < 1000000; i++) {
		lb_be16_t c0 = rnd16(&rng), chained = c0, once;
		uint32_t delta = 0, n = 1 + rnd(&rng, 5), j;

		for (j = 0; j < n; j++) {
			if (rnd(&rng, 2)) {
				lb_be16_t old = rnd16(&rng), new = rnd16(&rng);

				chained = lb_csum_update16(chained, old, new);
				delta += lb_csum_delta16(old, new);
			} else {
				lb_be32_t old = rnd32(&rng), new = rnd32(&rng);

				chained = lb_csum_update32(chained, old, new);
				delta += lb_csum_delta32(old, new);
			}
		}
		once = lb_csum_apply(c0, delta);
		cr_assert_eq(once, chained,
			"case %d (%u changes, checksum %#06x): one fold %#06x, chained %#06x", i, n,
			c0, once, chained);
	}
}

/*
 * The mux's DNAT (mux_pipeline.c, rewrite_inner): the address delta summed
 * once for both checksums, each checksum folded once, UDP's zero rule
 * applied by the caller.
 */
static void
rewrite_one_fold(struct pkt *p, const struct rewrite *rw)
{
	struct lb_ipv4_hdr *ip = ip_of(p);
	uint32_t daddr = lb_csum_delta32(ip->dst, rw->dst);
	lb_be16_t old_tp = get16(p->b + 8), old_dport = get16(l4_of(p) + 2), c;

	ip->ttl--;
	ip->dst = rw->dst;
	ip->csum = lb_csum_apply(ip->csum, daddr + lb_csum_delta16(old_tp, get16(p->b + 8)));
	put16(l4_of(p) + 2, rw->dport);
	c = l4_csum_get(p);
	if (p->proto == LB_IPPROTO_TCP) {
		c = lb_csum_apply(c, daddr + lb_csum_delta16(old_dport, rw->dport));
	} else if (c != 0) {
		c = lb_csum_apply(c, daddr + lb_csum_delta16(old_dport, rw->dport));
		if (c == 0)
			c = 0xffff;
	}
	l4_csum_set(p, c);
}

Test(csum, incremental_dnat_one_fold)
{
	uint64_t rng = 0x5c5c5c5c;
	int i;

	for (i = 0; i < N_PACKETS; i++) {
		uint8_t proto = i & 1 ? LB_IPPROTO_UDP : LB_IPPROTO_TCP;
		struct rewrite rw;
		struct pkt p, q;
		lb_be16_t got, want;

		random_packet(&p, proto, &rng);
		random_rewrite(&rw, &p, &rng);
		q = p;
		rewrite_one_fold(&p, &rw);
		rewrite_incremental(&q, &rw);

		got = ip_of(&p)->csum;
		want = lb_ipv4_hdr_csum(p.b, p.ihl);
		cr_assert_eq(got, want, "packet %d: IP checksum after rewrite %#06x, full %#06x", i,
			got, want);
		cr_assert_eq(got, ip_of(&q)->csum,
			"packet %d: IP checksum, one fold %#06x, chained %#06x", i, got,
			ip_of(&q)->csum);
		got = l4_csum_get(&p);
		want = lb_l4_full(&p);
		cr_assert_eq(got, want,
			"packet %d (%s, %u bytes): L4 after rewrite %#06x, full %#06x", i,
			proto == LB_IPPROTO_TCP ? "TCP" : "UDP", p.l4_len, got, want);
		cr_assert_eq(
			lb_be16_to_cpu(got), ref_l4_csum(&p), "packet %d: reference disagrees", i);
		/* The chained updates lack UDP's zero rule only (incremental_udp_zero). */
		if (!(proto == LB_IPPROTO_UDP && got == 0xffff && l4_csum_get(&q) == 0))
			cr_assert_eq(got, l4_csum_get(&q),
				"packet %d: L4 checksum, one fold %#06x, chained %#06x", i, got,
				l4_csum_get(&q));
	}
}

/*
 * The agent's SNAT of a reply (ha_return.c, rewrite_reply): source address
 * and port, the address delta shared, one fold per checksum.
 */
Test(csum, incremental_snat_one_fold)
{
	uint64_t rng = 0x6d6d6d6d;
	int i;

	for (i = 0; i < N_PACKETS; i++) {
		uint8_t proto = i & 1 ? LB_IPPROTO_UDP : LB_IPPROTO_TCP;
		struct lb_ipv4_hdr *ip;
		lb_be32_t vip = rnd32(&rng);
		lb_be16_t vport = rnd16(&rng), old_sport, c, got, want;
		uint32_t saddr;
		struct pkt p;

		random_packet(&p, proto, &rng);
		ip = ip_of(&p);
		old_sport = get16(l4_of(&p));
		saddr = lb_csum_delta32(ip->src, vip);
		c = l4_csum_get(&p);
		if (proto == LB_IPPROTO_TCP) {
			c = lb_csum_apply(c, saddr + lb_csum_delta16(old_sport, vport));
		} else if (c != 0) {
			c = lb_csum_apply(c, saddr + lb_csum_delta16(old_sport, vport));
			if (c == 0)
				c = 0xffff;
		}
		l4_csum_set(&p, c);
		put16(l4_of(&p), vport);
		ip->csum = lb_csum_apply(ip->csum, saddr);
		ip->src = vip;

		got = ip->csum;
		want = lb_ipv4_hdr_csum(p.b, p.ihl);
		cr_assert_eq(got, want, "packet %d: IP checksum after SNAT %#06x, full %#06x", i,
			got, want);
		got = l4_csum_get(&p);
		want = lb_l4_full(&p);
		cr_assert_eq(got, want, "packet %d (%s, %u bytes): L4 after SNAT %#06x, full %#06x",
			i, proto == LB_IPPROTO_TCP ? "TCP" : "UDP", p.l4_len, got, want);
		cr_assert_eq(
			lb_be16_to_cpu(got), ref_l4_csum(&p), "packet %d: reference disagrees", i);
	}
}

/*
 * The agent's translation of an ICMP error's quote (ha_icmp.h): the quoted
 * source or destination address and port change, the quoted header's
 * checksum follows, and the ICMP checksum covers all three changes with one
 * fold. Against full recomputation of both.
 */
Test(csum, incremental_quote_one_fold)
{
	uint64_t rng = 0x7e7e7e7e;
	uint8_t m[8 + 60 + 8 + 64] __attribute__((aligned(4)));
	int i;

	for (i = 0; i < 100000; i++) {
		uint32_t ihl = 20 + 4 * rnd(&rng, 11), len = 8 + ihl + 8 + rnd(&rng, 65), j;
		struct lb_ipv4_hdr *q = (struct lb_ipv4_hdr *)(m + 8);
		int src_side = (int)rnd(&rng, 2);
		const struct lb_pkt pi = {
			.l4_off = 0, .quote_off = 8, .quote_l4_off = (uint16_t)(8 + ihl)};
		lb_be32_t addr = rnd32(&rng);
		lb_be16_t port = rnd16(&rng), new_c, icmp_c;

		for (j = 0; j < len; j++)
			m[j] = (uint8_t)splitmix64(&rng);
		m[0] = LB_ICMP_UNREACH;
		m[1] = 3;
		q->ver_ihl = (uint8_t)(0x40 | ihl / 4);
		q->csum = lb_ipv4_hdr_csum(q, ihl);
		put16(m + 2, 0);
		put16(m + 2, lb_icmp_csum(m, len));

		ha_quote_rewrite(m, &pi, src_side, addr, port);
		new_c = q->csum;
		icmp_c = get16(m + 2);

		cr_assert_eq(new_c, lb_ipv4_hdr_csum(q, ihl),
			"case %d: quoted IP checksum %#06x, full %#06x", i, new_c,
			lb_ipv4_hdr_csum(q, ihl));
		put16(m + 2, 0);
		cr_assert_eq(icmp_c, lb_icmp_csum(m, len),
			"case %d (%u bytes): ICMP checksum %#06x, full %#06x", i, len, icmp_c,
			lb_icmp_csum(m, len));
	}
}

/*
 * lb_icmp_csum() against the textbook sum, as the manager's VIP prober
 * computed it before it used lb_csum.h: big-endian words, odd byte padded,
 * complemented, sent in network order. Every length, all-zero buffers too.
 */
Test(csum, icmp_full_matches_reference)
{
	uint64_t rng = 0x8f8f8f8f;
	uint8_t buf[256];
	int i;

	for (i = 0; i < 100000; i++) {
		uint32_t len = 1 + rnd(&rng, sizeof(buf)), j;
		bool zero = rnd(&rng, 64) == 0;
		uint16_t want;

		for (j = 0; j < len; j++)
			buf[j] = zero ? 0 : (uint8_t)splitmix64(&rng);
		want = htons((uint16_t)~ref_sum(buf, len, 0));
		cr_assert_eq(lb_icmp_csum(buf, len), want, "case %d (%u bytes): %#06x, want %#06x",
			i, len, lb_icmp_csum(buf, len), want);
	}
}
