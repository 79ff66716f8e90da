/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_parse() on cut frames and random input: every truncation of a few good
 * frames (cut frames, then datagrams shortened with their lengths made to
 * match), random frames (half steered to plausible headers) and random
 * one-byte mutations of good frames. Fixed seeds, so a failure reproduces.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_csum.h"
#include "lb_drop.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "test_parse_util.h"
#include "test_util.h"
#include "test_parse_frame.h"

/* --- Truncation ----------------------------------------------------------- */

/* clang-format off */
static const struct {
	const char *name;
	struct frame_spec frame;
} trunc_frames[] = {
	{"TCP", {TCP(.tcp_opt_words = 3, .pay = 10)}},
	{"TCP with IP options", {TCP(.ihl = 8, .pay = 10)}},
	{"UDP", {UDP(.pay = 10)}},
	{"tagged TCP", {TCP(.tagged = true, .tcp_opt_words = 3, .pay = 10)}},
	{"ICMP frag needed", {FRAG_NEEDED(QTCP8)}},
};
/* clang-format on */
#define N_TRUNC (sizeof(trunc_frames) / sizeof(trunc_frames[0]))

/* Truncation frame i, built into f; returns its outer IPv4 header's length. */
static uint32_t
trunc_frame(size_t i, struct frame *f)
{
	memset(f, 0, sizeof(*f));
	build(f, &trunc_frames[i].frame);
	return lb_ipv4_ihl(ip_at(f, f->l3)) * 4u;
}

/*
 * The frame cut at every length: the IP total length still claims the whole
 * datagram, so once the headers up to IHL are in, every prefix is IP_LEN.
 */
static int
prefix_want(uint32_t cut, const void *arg)
{
	const struct frame *f = arg;
	const struct lb_ipv4_hdr *ip = (const struct lb_ipv4_hdr *)(f->b + f->l3);

	if (cut < f->l3 + sizeof(*ip))
		return LB_DROP_TRUNCATED;
	if (cut < f->l3 + lb_ipv4_ihl(ip) * 4u)
		return LB_DROP_IP_IHL;
	return cut < f->len ? LB_DROP_IP_LEN : 0;
}

Test(parse, every_prefix)
{
	size_t i;

	for (i = 0; i < N_TRUNC; i++) {
		struct frame f;

		trunc_frame(i, &f);
		expect_every_prefix(trunc_frames[i].name, f.b, f.len, prefix_want, &f);
	}
}

/*
 * The datagram cut at every length with total length and checksum made to
 * match, so each cut reaches the L4 checks: what remains must hold the
 * whole TCP header with options, the whole UDP datagram, or the quote's ports.
 */
Test(parse, every_short_datagram)
{
	size_t i;

	for (i = 0; i < N_TRUNC; i++) {
		struct frame full;
		uint32_t len, ihl = trunc_frame(i, &full);

		for (len = full.l3 + ihl; len <= full.len; len++) {
			struct frame f = full;
			uint32_t avail = len - f.l4;
			int want;

			f.len = len;
			ip_set_tot(&f, len - f.l3);
			switch (ip_at(&f, f.l3)->proto) {
			case LB_IPPROTO_TCP:
				if (avail < sizeof(struct lb_tcp_hdr))
					want = LB_DROP_L4_TRUNCATED;
				else if (avail < (tcp_of(&f)->data_off >> 4) * 4u)
					want = LB_DROP_L4_LEN;
				else
					want = 0;
				break;
			case LB_IPPROTO_UDP:
				if (avail < sizeof(struct lb_udp_hdr))
					want = LB_DROP_L4_TRUNCATED;
				else if (avail < lb_be16_to_cpu(udp_of(&f)->len))
					want = LB_DROP_L4_LEN;
				else
					want = 0;
				break;
			default:
				if (avail < sizeof(struct lb_icmp_hdr))
					want = LB_DROP_L4_TRUNCATED;
				else if (len < f.quote + sizeof(struct lb_ipv4_hdr) + 4)
					want = LB_DROP_ICMP_QUOTE;
				else
					want = 0;
				break;
			}
			expect_cut(trunc_frames[i].name, f.b, f.len, full.len, want);
		}
	}
}

/* --- Random input ----------------------------------------------------------- */

#define RANDOM_FRAMES 200000
#define RANDOM_MUTATIONS 200000
#define RANDOM_MAX_LEN 300

/*
 * Whatever the input, an accepted frame's offsets must lie inside it and
 * inside the IP datagram, with room for the header its kind implies.
 */
static void
check_accepted(uint32_t len, const struct lb_pkt *pkt, const char *what, uint32_t iter)
{
	uint32_t end = (uint32_t)pkt->l2_len + pkt->l3_len;

	cr_assert(pkt->l2_len == 14 || pkt->l2_len == 18, "%s %u: l2_len %u", what, iter,
		pkt->l2_len);
	cr_assert(pkt->kind >= LB_PKT_L4 && pkt->kind <= LB_PKT_ND, "%s %u: kind %u", what, iter,
		pkt->kind);
	/* Noise may say IPv6 now and then: test_parse6.c checks what that accepts. */
	if (pkt->v6)
		return;
	if (pkt->kind == LB_PKT_ARP) {
		cr_assert_leq(pkt->l2_len + sizeof(struct lb_arp_hdr), len, "%s %u: ARP past end",
			what, iter);
		return;
	}
	cr_assert_leq(end, len, "%s %u: l2_len %u + l3_len %u > len %u", what, iter, pkt->l2_len,
		pkt->l3_len, len);
	cr_assert_lt(pkt->l4_off, len, "%s %u: l4_off %u >= len %u", what, iter, pkt->l4_off, len);
	cr_assert_geq(pkt->l4_off, pkt->l2_len + sizeof(struct lb_ipv4_hdr), "%s %u: l4_off %u",
		what, iter, pkt->l4_off);
	switch (pkt->kind) {
	case LB_PKT_L4:
		cr_assert(pkt->proto == LB_IPPROTO_TCP || pkt->proto == LB_IPPROTO_UDP,
			"%s %u: proto %u", what, iter, pkt->proto);
		cr_assert_leq(pkt->l4_off + (pkt->proto == LB_IPPROTO_TCP ? 20u : 8u), end,
			"%s %u: L4 header past the datagram", what, iter);
		break;
	case LB_PKT_ICMP_ECHO:
		cr_assert_eq(
			pkt->proto, LB_IPPROTO_ICMP, "%s %u: proto %u", what, iter, pkt->proto);
		cr_assert_leq(pkt->l4_off + 8u, end, "%s %u: ICMP past the datagram", what, iter);
		break;
	case LB_PKT_ICMP_ERR:
		cr_assert(pkt->proto == LB_IPPROTO_TCP || pkt->proto == LB_IPPROTO_UDP,
			"%s %u: quoted proto %u", what, iter, pkt->proto);
		cr_assert_eq(pkt->quote_off, pkt->l4_off + 8u, "%s %u: quote_off %u", what, iter,
			pkt->quote_off);
		cr_assert_leq(pkt->quote_off + 20u + 4u, end, "%s %u: quote past the datagram",
			what, iter);
		break;
	}
}

static void
check_verdict(uint32_t len, int rc, const struct lb_pkt *pkt, const char *what, uint32_t iter)
{
	cr_assert(
		rc >= 0 && rc < LB_DROP_MAX, "%s %u: return %d is no drop reason", what, iter, rc);
	if (rc == 0)
		check_accepted(len, pkt, what, iter);
}

/*
 * Half the frames are pure noise. The other half get a plausible ethertype,
 * version/IHL, total length and checksum, so they reach the L4 and ICMP code
 * instead of all dying at the ethertype.
 */
static void
steer(uint8_t *b, uint32_t len, uint64_t *rng)
{
	static const uint16_t types[] = {
		LB_ETHERTYPE_IPV4, LB_ETHERTYPE_IPV4, LB_ETHERTYPE_VLAN, LB_ETHERTYPE_ARP};
	static const uint8_t protos[] = {LB_IPPROTO_TCP, LB_IPPROTO_UDP, LB_IPPROTO_ICMP};
	static const uint8_t icmp_types[] = {
		LB_ICMP_ECHO, LB_ICMP_UNREACH, LB_ICMP_TIME_EXCEEDED, LB_ICMP_PARAM_PROBLEM};
	uint16_t type = types[rnd(rng, 4)];
	uint32_t l2 = 14, ihl, tot;
	struct lb_ipv4_hdr *ip;

	if (len < 14)
		return;
	b[12] = type >> 8;
	b[13] = type & 0xff;
	if (type == LB_ETHERTYPE_VLAN) {
		if (len < 18)
			return;
		type = rnd(rng, 4) ? LB_ETHERTYPE_IPV4 : LB_ETHERTYPE_ARP;
		b[16] = type >> 8;
		b[17] = type & 0xff;
		l2 = 18;
	}
	if (type == LB_ETHERTYPE_ARP) {
		if (len >= l2 + 6 && rnd(rng, 2)) {
			memcpy(b + l2, "\x00\x01\x08\x00\x06\x04", 6);
		}
		return;
	}
	if (len < l2 + sizeof(*ip))
		return;
	ip = (struct lb_ipv4_hdr *)(b + l2);
	ihl = rnd(rng, 3) ? 5 : 5 + rnd(rng, 11);
	ip->ver_ihl = (uint8_t)(0x40 | ihl);
	if (rnd(rng, 4))
		ip->frag_off = 0;
	ip->proto = protos[rnd(rng, 3)];
	tot = len - l2;
	if (rnd(rng, 4) == 0)
		tot -= rnd(rng, tot + 1);
	ip->total_len = lb_cpu_to_be16((uint16_t)tot);
	if (l2 + ihl * 4 + 8 <= len) {
		uint8_t *l4 = b + l2 + ihl * 4;

		if (ip->proto == LB_IPPROTO_TCP && rnd(rng, 2))
			l4[12] = (uint8_t)((5 + rnd(rng, 3)) << 4);
		if (ip->proto == LB_IPPROTO_UDP && rnd(rng, 2)) {
			uint16_t ulen = (uint16_t)(tot > ihl * 4 ? tot - ihl * 4 : 0);

			l4[4] = ulen >> 8;
			l4[5] = ulen & 0xff;
		}
		if (ip->proto == LB_IPPROTO_ICMP) {
			l4[0] = icmp_types[rnd(rng, 4)];
			if (l2 + ihl * 4 + 8 + 20 <= len && rnd(rng, 2)) {
				l4[8] = rnd(rng, 4) ? 0x45 : (uint8_t)(0x40 | rnd(rng, 16));
				l4[8 + 9] = protos[rnd(rng, 2)];
				l4[8 + 6] = 0;
				l4[8 + 7] = 0;
			}
		}
	}
	if (l2 + ihl * 4 <= len && rnd(rng, 8))
		ip->csum = lb_ipv4_hdr_csum(ip, ihl * 4);
}

Test(parse, random_frames)
{
	uint64_t rng = 0x5eed0001;
	uint8_t b[RANDOM_MAX_LEN];
	uint32_t i, j, accepted = 0;

	for (i = 0; i < RANDOM_FRAMES; i++) {
		uint32_t len = rnd(&rng, RANDOM_MAX_LEN + 1);
		struct lb_pkt pkt;
		int rc;

		for (j = 0; j < len; j++)
			b[j] = (uint8_t)splitmix64(&rng);
		if (i & 1)
			steer(b, len, &rng);
		rc = parse_exact(b, len, &pkt);
		check_verdict(len, rc, &pkt, "random frame", i);
		accepted += rc == 0;
	}
	/* Steering must reach the accepting paths, or the test proves little. */
	cr_expect_gt(accepted, RANDOM_FRAMES / 100, "only %u random frames accepted", accepted);
}

/* The (possibly mutated) ethertype in front of the L3 header says IPv4. */
static bool
is_ipv4(const struct frame *f)
{
	return f->b[f->l3 - 2] == LB_ETHERTYPE_IPV4 >> 8 &&
	       f->b[f->l3 - 1] == (LB_ETHERTYPE_IPV4 & 0xff);
}

/*
 * One byte of a good frame set to a random value. Half the time the outer
 * header checksum is then made right again, so that changes to the IP header
 * get past the checksum and test what lies behind it.
 */
Test(parse, random_mutations)
{
	/* clang-format off */
	static const struct frame_spec good[] = {
		{TCP(.tcp_opt_words = 3, .pay = 10)},
		{TCP(.ihl = 8, .pay = 10)},
		{UDP(.pay = 10)},
		{TCP(.tagged = true, .tcp_opt_words = 3, .pay = 10)},
		{FRAG_NEEDED(QTCP8)},
		{UDP(.tagged = true, .ihl = 6, .pay = 10)},
		{TCP(.pay = 0), .edit = APPEND(6, 0)},
		{ARP(LB_ARP_OP_REQUEST | TAGGED)},
		{ECHO(LB_ICMP_ECHO)},
		{TIME_EXCEEDED(0, .qproto = LB_IPPROTO_UDP, .qihl = 7, .qbytes = 8)},
	};
	/* clang-format on */
	const uint32_t n_good = sizeof(good) / sizeof(good[0]);
	struct frame frames[sizeof(good) / sizeof(good[0])];
	uint64_t rng = 0x5eed0002;
	uint32_t i, accepted = 0;

	for (i = 0; i < n_good; i++) {
		struct lb_pkt pkt;

		memset(&frames[i], 0, sizeof(frames[i]));
		build(&frames[i], &good[i]);
		cr_assert_eq(lb_parse(frames[i].b, frames[i].len, &pkt), 0, "good frame %u", i);
	}
	for (i = 0; i < RANDOM_MUTATIONS; i++) {
		struct frame f = frames[rnd(&rng, n_good)];
		uint32_t pos = rnd(&rng, f.len);
		struct lb_ipv4_hdr *ip = ip_at(&f, f.l3);
		struct lb_pkt pkt;
		uint32_t ihl;
		int rc;

		f.b[pos] = (uint8_t)splitmix64(&rng);
		ihl = lb_ipv4_ihl(ip) * 4u;
		if (is_ipv4(&f) && rnd(&rng, 2) && ihl >= 20 && f.l3 + ihl <= f.len)
			ip->csum = lb_ipv4_hdr_csum(ip, ihl);
		rc = parse_exact(f.b, f.len, &pkt);
		check_verdict(f.len, rc, &pkt, "mutation", i);
		accepted += rc == 0;
	}
	cr_expect_gt(accepted, RANDOM_MUTATIONS / 10, "only %u mutated frames accepted", accepted);
}
