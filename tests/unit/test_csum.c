/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internet checksums: the full computations against a textbook RFC 1071 sum
 * and against DPDK's rte_ipv4_cksum() / rte_ipv4_udptcp_cksum(), and the
 * RFC 1624 incremental updates against full recomputation after a DNAT-style
 * rewrite (destination address, destination port, TTL).
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
	switch (rnd(s, 8)) {
	case 0:
		return 0;
	case 1:
		return 0xffff;
	default:
		return (uint16_t)splitmix64(s);
	}
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

/*
 * RFC 1071 as the textbook writes it: big-endian 16-bit words, host-order
 * accumulator, odd byte padded on the right. Deliberately unlike
 * lb_csum_partial(), which sums words in memory order.
 */
static uint32_t
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

static rte_be16_t
l4_csum_get(struct pkt *p)
{
	return get16(l4_of(p) + l4_csum_off(p->proto));
}

static void
l4_csum_set(struct pkt *p, rte_be16_t c)
{
	put16(l4_of(p) + l4_csum_off(p->proto), c);
}

/* Full L4 checksum by lb_ipv4_l4_csum(), leaving the packet as it was. */
static rte_be16_t
lb_l4_full(struct pkt *p)
{
	rte_be16_t saved = l4_csum_get(p), c;

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
	ip->total_len = rte_cpu_to_be_16((uint16_t)total);
	ip->frag_off = rnd(rng, 2) ? rte_cpu_to_be_16(LB_IPV4_DF) : 0;
	ip->ttl = (uint8_t)(2 + rnd(rng, 254));
	ip->proto = proto;
	if (proto == LB_IPPROTO_TCP)
		l4_of(p)[12] = (uint8_t)((l4_hdr / 4) << 4);
	else
		put16(l4_of(p) + 4, rte_cpu_to_be_16((uint16_t)p->l4_len));
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

Test(csum, full_matches_reference)
{
	uint64_t rng = 0xc5c5c5c5;
	int i;

	for (i = 0; i < N_PACKETS; i++) {
		struct pkt p;
		uint8_t proto = packet_i(&p, i, &rng);
		uint16_t got, want;

		got = rte_be_to_cpu_16(ip_of(&p)->csum);
		want = ref_ip_csum(&p);
		cr_assert_eq(
			got, want, "packet %d: IP header checksum %#06x, want %#06x", i, got, want);
		/* The receiver's check: the header with its checksum sums to all ones. */
		cr_assert_eq(
			ref_sum(p.b, p.ihl, 0), 0xffff, "packet %d: header does not verify", i);
		got = rte_be_to_cpu_16(l4_csum_get(&p));
		want = ref_l4_csum(&p);
		cr_assert_eq(got, want, "packet %d (%s, %u bytes): L4 checksum %#06x, want %#06x",
			i, proto == LB_IPPROTO_TCP ? "TCP" : "UDP", p.l4_len, got, want);
		cr_assert_neq(got, proto == LB_IPPROTO_UDP ? 0 : 0xffff,
			"packet %d: checksum %#06x is never sent", i, got);
	}
}

Test(csum, matches_dpdk)
{
	uint64_t rng = 0xd7d7d7d7;
	int i;

	for (i = 0; i < N_PACKETS; i++) {
		struct pkt p;
		uint8_t proto = packet_i(&p, i, &rng);
		const struct rte_ipv4_hdr *rip = (const struct rte_ipv4_hdr *)p.b;
		rte_be16_t lb_ip, lb_l4;
		uint16_t dp_ip, dp_l4;

		lb_ip = ip_of(&p)->csum;
		lb_l4 = l4_csum_get(&p);
		/* DPDK sums the fields as they are: both checksums must be zero. */
		ip_of(&p)->csum = 0;
		l4_csum_set(&p, 0);
		dp_ip = rte_ipv4_cksum(rip);
		dp_l4 = rte_ipv4_udptcp_cksum(rip, l4_of(&p));
		cr_assert_eq(lb_ip, dp_ip, "packet %d (IHL %u): lb %#06x, rte_ipv4_cksum %#06x", i,
			p.ihl / 4, lb_ip, dp_ip);
		cr_assert_eq(lb_l4, dp_l4,
			"packet %d (%s, %u bytes): lb %#06x, rte_ipv4_udptcp_cksum %#06x", i,
			proto == LB_IPPROTO_TCP ? "TCP" : "UDP", p.l4_len, lb_l4, dp_l4);
	}
}

/*
 * A DNAT as the data plane does it: new destination address and port, TTL
 * down by one, both checksums patched, never recomputed.
 */
struct rewrite {
	rte_be32_t dst;
	rte_be16_t dport;
};

static void
rewrite_incremental(struct pkt *p, const struct rewrite *rw)
{
	struct lb_ipv4_hdr *ip = ip_of(p);
	rte_be32_t old_dst = ip->dst;
	rte_be16_t old_ttl_proto = get16(p->b + 8), old_dport = get16(l4_of(p) + 2);
	rte_be16_t c;

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
		rw->dst = (rte_be32_t)((uint32_t)rnd16(rng) << 16 | rnd16(rng));
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
		rte_be16_t got, want;

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
		cr_assert_eq(rte_be_to_cpu_16(got), ref_l4_csum(&p),
			"packet %d: reference disagrees", i);
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
		rte_be16_t inc, full;

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
		put16(l4_of(&p) + 8, rte_cpu_to_be_16(w));
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
		rte_be16_t tcp_view;

		do {
			random_packet(&p, LB_IPPROTO_UDP, &rng);
		} while (p.l4_len < 10);
		put16(l4_of(&p) + 8, 0);
		w = (uint16_t)(0xffff - ref_l4_sum(&p));
		put16(l4_of(&p) + 8, rte_cpu_to_be_16(w));
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
		cr_assert_eq(rte_be_to_cpu_16(tcp_view), LB_IPPROTO_UDP - LB_IPPROTO_TCP,
			"case %d: TCP view %#06x", i, rte_be_to_cpu_16(tcp_view));
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
		rte_be16_t c, full;
		bool zero = true;

		for (j = 0; j < len; j++)
			buf[j] = rnd(&rng, 4) ? (uint8_t)splitmix64(&rng) : 0;
		put16(buf + 2, 0); /* the checksum field */
		c = lb_icmp_csum(buf, len);
		if (i & 1) {
			rte_be16_t old, new = rnd16(&rng);

			off = 4 + 2 * rnd(&rng, (len - 4) / 2);
			old = get16(buf + off);
			put16(buf + off, new);
			c = lb_csum_update16(c, old, new);
		} else {
			rte_be32_t old,
				new = (rte_be32_t)((uint32_t)rnd16(&rng) << 16 | rnd16(&rng));

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
