/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_parse() on IPv6: a table of frames built field by field and their
 * verdicts (extension chains, truncated and malformed headers, ICMPv6
 * errors and their quotes, neighbor discovery), every truncation of a few
 * good frames, then random one-byte mutations of good frames and random
 * noise under the IPv6 ethertype.
 *
 * A row names what it is made of with named fields, as test_parse.c's do:
 * a datagram (struct frame6_spec: the upper layer, the extension headers in
 * front of it, an ICMPv6 type and the quote of an error), then at most one
 * edit (a field of the IPv6 header, of the upper layer, of the quote, the
 * frame cut or lengthened). The builder keeps everything else right:
 * payload length, upper-layer checksums. The parser always reads from a
 * heap block of exactly the frame's length, so ASan traps any read past it.
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
#include "test_parse6_frame.h"

/* --- The table ---------------------------------------------------------------- */

struct parse6_case {
	const char *desc;
	struct frame6_spec frame;
	int want;	/* 0 (accepted) or enum lb_drop */
	uint8_t kind;	/* when accepted */
	uint8_t proto;	/* the flow's protocol, when accepted */
	bool turned;	/* an error: the tuple is the quote's, turned around */
	uint16_t sport; /* 0: CPORT (an echo: ECHO_ID) */
};

static const struct parse6_case cases[] = {
	/* Forwarded traffic. */
	{.desc = "TCP SYN client to VIP", .frame = V6(TCP, .pay = 10), FWD(TCP)},
	{.desc = "UDP client to VIP", .frame = V6(UDP, .pay = 10), FWD(UDP)},
	{.desc = "802.1Q-tagged UDP", .frame = V6(UDP, .tagged = true, .pay = 3), FWD(UDP)},
	{.desc = "TCP with 40 bytes of options", .frame = V6(TCP, .tcp_opt_words = 10), FWD(TCP)},
	{.desc = "UDP with Ethernet padding after it",
		.frame = V6(UDP, .pay = 0, APPEND(16)),
		FWD(UDP)},
	{.desc = "hop limit 1 is reported, not judged", .frame = V6(TCP, .hop = 1), FWD(TCP)},

	/* Extension headers: skipped, at most four, in RFC 8200's order. */
	{.desc = "hop-by-hop options, then TCP",
		.frame = V6(TCP, .n_ext = 1, .ext = {EXT(HOPOPTS)}),
		FWD(TCP)},
	{.desc = "destination options of 16 bytes, then UDP",
		.frame = V6(UDP, .n_ext = 1, .ext = {EXT(DSTOPTS, .len = 1)}),
		FWD(UDP)},
	{.desc = "routing header with no segments left, then TCP",
		.frame = V6(TCP, .n_ext = 1, .ext = {EXT(ROUTING, .len = 2)}),
		FWD(TCP)},
	{.desc = "the longest chain: hop-by-hop, destination, routing, destination",
		.frame = V6(TCP, .n_ext = 4,
			.ext = {EXT(HOPOPTS), EXT(DSTOPTS), EXT(ROUTING), EXT(DSTOPTS)}),
		FWD(TCP)},
	{.desc = "five extension headers: past the bound",
		.frame = V6(TCP, .n_ext = 5,
			.ext = {EXT(HOPOPTS), EXT(DSTOPTS), EXT(ROUTING), EXT(DSTOPTS),
				EXT(DSTOPTS)}),
		.want = LB_DROP_IPV6_EXT},
	{.desc = "hop-by-hop after destination options",
		.frame = V6(TCP, .n_ext = 2, .ext = {EXT(DSTOPTS), EXT(HOPOPTS)}),
		.want = LB_DROP_IPV6_EXT},
	{.desc = "routing header with a segment left: not the final destination",
		.frame = V6(TCP, .n_ext = 1, .ext = {EXT(ROUTING, .segments = 1)}),
		.want = LB_DROP_IPV6_EXT},
	{.desc = "an extension header longer than the payload",
		.frame = V6(TCP, .n_ext = 1, .ext = {EXT(DSTOPTS)}, EDIT(e_ext_longer, 5)),
		.want = LB_DROP_IPV6_EXT},
	/* 40 + 8 + 4: the payload ends half-way into the second header. */
	{.desc = "payload ends inside an extension header",
		.frame = V6(
			TCP, .n_ext = 2, .ext = {EXT(HOPOPTS), EXT(DSTOPTS)}, EDIT(e_cut, 20 + 4)),
		.want = LB_DROP_IPV6_EXT},
	{.desc = "first fragment",
		.frame = V6(TCP, .n_ext = 1, .ext = {EXT(FRAGMENT, .frag = 1)}),
		.want = LB_DROP_IPV6_FRAGMENT},
	{.desc = "later fragment behind hop-by-hop",
		.frame =
			V6(UDP, .n_ext = 2, .ext = {EXT(HOPOPTS), EXT(FRAGMENT, .frag = 185 << 3)}),
		.want = LB_DROP_IPV6_FRAGMENT},
	{.desc = "ESP", .frame = V6(UDP, IP6_FIELD(next_hdr, 50)), .want = LB_DROP_PROTO},
	{.desc = "no next header (59)",
		.frame = V6(UDP, IP6_FIELD(next_hdr, 59)),
		.want = LB_DROP_PROTO},
	{.desc = "SCTP behind destination options",
		.frame = {.upper = 132, .n_ext = 1, .ext = {EXT(DSTOPTS)}, .pay = 12},
		.want = LB_DROP_PROTO},
	{.desc = "IPv4 in IPv6",
		.frame = V6(UDP, IP6_FIELD(next_hdr, LB_IPPROTO_IPIP)),
		.want = LB_DROP_TUNNEL},
	{.desc = "IPv6 in IPv6",
		.frame = V6(UDP, IP6_FIELD(next_hdr, LB_IPPROTO_IPV6)),
		.want = LB_DROP_TUNNEL},

	/* The fixed header. */
	{.desc = "frame ends one byte into the fixed header",
		.frame = V6(TCP, CUT_TO(14 + 39)),
		.want = LB_DROP_TRUNCATED},
	{.desc = "version 4 under the IPv6 ethertype",
		.frame = V6(TCP, .edit = {.at = AT_L3, .size = 1, .value = 0x45}),
		.want = LB_DROP_IP_VERSION},
	{.desc = "payload length one past the frame",
		.frame = V6(TCP, EDIT(e_payload_plus, 1)),
		.want = LB_DROP_IP_LEN},
	{.desc = "payload length 0 (a jumbogram's)",
		.frame = V6(UDP, IP6_FIELD(payload_len, 0)),
		.want = LB_DROP_IP_LEN},

	/* TCP and UDP. */
	{.desc = "19-byte TCP segment",
		.frame = V6(TCP, EDIT(e_cut, 1)),
		.want = LB_DROP_L4_TRUNCATED},
	{.desc = "TCP data offset past the segment",
		.frame = V6(TCP, L4_BYTE(12, 6 << 4)),
		.want = LB_DROP_L4_LEN},
	{.desc = "UDP length 7", .frame = V6(UDP, .pay = 4, L4_WORD(4, 7)), .want = LB_DROP_L4_LEN},
	{.desc = "UDP length past the payload",
		.frame = V6(UDP, .pay = 4, L4_WORD(4, 13)),
		.want = LB_DROP_L4_LEN},

	/* ICMPv6. */
	{.desc = "echo request",
		.frame = ICMP6(LB_ICMP6_ECHO, .pay = 16),
		.kind = LB_PKT_ICMP_ECHO,
		.proto = LB_IPPROTO_ICMPV6,
		.sport = ECHO_ID},
	{.desc = "echo request behind hop-by-hop",
		.frame = ICMP6(LB_ICMP6_ECHO, .n_ext = 1, .ext = {EXT(HOPOPTS)}),
		.kind = LB_PKT_ICMP_ECHO,
		.proto = LB_IPPROTO_ICMPV6,
		.sport = ECHO_ID},
	{.desc = "echo reply", .frame = ICMP6(LB_ICMP6_ECHO_REPLY), .want = LB_DROP_ICMP_TYPE},
	{.desc = "router solicitation", .frame = ICMP6(133), .want = LB_DROP_ICMP_TYPE},
	{.desc = "MLD report", .frame = ICMP6(143, .pay = 20), .want = LB_DROP_ICMP_TYPE},
	{.desc = "7-byte ICMPv6 message",
		.frame = ICMP6(LB_ICMP6_ECHO, EDIT(e_cut, 1)),
		.want = LB_DROP_L4_TRUNCATED},
	{.desc = "port unreachable quoting TCP",
		.frame = ICMP6(LB_ICMP6_UNREACH, QUOTE(TCP, PORTS8)),
		ERR(TCP)},
	{.desc = "packet too big quoting TCP",
		.frame = ICMP6(LB_ICMP6_TOO_BIG, QUOTE(TCP, PORTS8)),
		ERR(TCP)},
	{.desc = "time exceeded quoting UDP",
		.frame = ICMP6(LB_ICMP6_TIME_EXCEEDED, QUOTE(UDP, PORTS8)),
		ERR(UDP)},
	{.desc = "parameter problem quoting TCP, 4 bytes of it",
		.frame = ICMP6(LB_ICMP6_PARAM_PROBLEM, QUOTE(TCP, .ports = 4)),
		ERR(TCP)},
	{.desc = "a quote with destination options",
		.frame = ICMP6(LB_ICMP6_TOO_BIG,
			QUOTE(TCP, .n_ext = 1, .ext = {EXT(DSTOPTS, .len = 1)}, PORTS8)),
		ERR(TCP)},
	{.desc = "a quote of a first fragment",
		.frame = ICMP6(LB_ICMP6_UNREACH,
			QUOTE(UDP, .n_ext = 1, .ext = {EXT(FRAGMENT, .frag = 1)}, PORTS8)),
		ERR(UDP)},
	{.desc = "a quote of a later fragment",
		.frame = ICMP6(LB_ICMP6_UNREACH,
			QUOTE(UDP, .n_ext = 1, .ext = {EXT(FRAGMENT, .frag = 100 << 3)}, PORTS8)),
		.want = LB_DROP_ICMP_QUOTE},
	{.desc = "a quote cut inside its extension header",
		.frame = ICMP6(LB_ICMP6_UNREACH,
			QUOTE(UDP, .ports = 0, .n_ext = 1, .ext = {EXT(DSTOPTS)}), EDIT(e_cut, 4)),
		.want = LB_DROP_ICMP_QUOTE},
	{.desc = "a quote with 3 bytes of ports",
		.frame = ICMP6(LB_ICMP6_UNREACH, QUOTE(TCP, .ports = 3)),
		.want = LB_DROP_ICMP_QUOTE},
	{.desc = "a quote one byte short of an IPv6 header",
		.frame = ICMP6(LB_ICMP6_UNREACH, QUOTE(TCP, .ports = 0), EDIT(e_cut, 1)),
		.want = LB_DROP_ICMP_QUOTE},
	{.desc = "a quote of version 4",
		.frame = ICMP6(LB_ICMP6_UNREACH, QUOTE(TCP, .version = 4, PORTS8)),
		.want = LB_DROP_ICMP_QUOTE},
	{.desc = "a quote of an ICMPv6 message",
		.frame = ICMP6(LB_ICMP6_UNREACH, QUOTE(ICMPV6, PORTS8)),
		.want = LB_DROP_ICMP_QUOTE},

	/* Neighbor discovery, checked as RFC 4861 7.1 says. */
	{.desc = "neighbor solicitation with a source link-layer option",
		.frame = ND(NS_SLLA),
		.kind = LB_PKT_ND},
	{.desc = "neighbor solicitation, no option", .frame = ND(NS_BARE), .kind = LB_PKT_ND},
	{.desc = "neighbor advertisement", .frame = ND(NA), .kind = LB_PKT_ND},
	{.desc = "duplicate address detection", .frame = ND(NS_DAD), .kind = LB_PKT_ND},
	{.desc = "DAD with a source link-layer option",
		.frame = ND(NS_DAD_SLLA),
		.want = LB_DROP_ND_MALFORMED},
	{.desc = "DAD not to a solicited-node group",
		.frame = ND(NS_DAD_UNICAST),
		.want = LB_DROP_ND_MALFORMED},
	{.desc = "a multicast target", .frame = ND(NS_MCAST_TARGET), .want = LB_DROP_ND_MALFORMED},
	{.desc = "an option of length 0", .frame = ND(NS_OPT_ZERO), .want = LB_DROP_ND_MALFORMED},
	{.desc = "an option past the message",
		.frame = ND(NS_OPT_PAST),
		.want = LB_DROP_ND_MALFORMED},
	{.desc = "hop limit 254: routed, not from this link",
		.frame = {.build = build_nd, .arg = NS_SLLA, IP6_FIELD(hop_limit, 254)},
		.want = LB_DROP_ND_MALFORMED},
	{.desc = "code 1",
		.frame = {.build = build_nd, .arg = NS_SLLA, L4_BYTE(1, 1)},
		.want = LB_DROP_ND_MALFORMED},
	{.desc = "23 bytes",
		.frame = {.build = build_nd, .arg = NS_BARE, EDIT(e_cut, 1)},
		.want = LB_DROP_ND_MALFORMED},
};
/* clang-format on */

/* Offsets the builder knows, and the tuple, checked for every accepted frame. */
static void
expect_accepted(const struct parse6_case *c, struct frame6 *f, const struct lb_pkt *pkt)
{
	const uint8_t *src = c->turned ? VIP6 : CLIENT6, *dst = c->turned ? CLIENT6 : VIP6;
	uint16_t sport = c->sport ? c->sport : CPORT, dport = c->sport ? c->sport : VPORT;

	cr_expect_eq(pkt->kind, c->kind, "%s: kind %u, want %u", c->desc, pkt->kind, c->kind);
	cr_expect_eq(pkt->v6, 1, "%s: v6", c->desc);
	cr_expect_eq(pkt->l2_len, f->l3, "%s: l2_len %u", c->desc, pkt->l2_len);
	cr_expect_eq(pkt->l3_len, 40 + lb_be16_to_cpu(ip6_at(f, f->l3)->payload_len),
		"%s: l3_len %u", c->desc, pkt->l3_len);
	cr_expect_eq(pkt->l4_off, f->l4, "%s: l4_off %u, want %u", c->desc, pkt->l4_off, f->l4);
	cr_expect_eq(pkt->ttl, ip6_at(f, f->l3)->hop_limit, "%s: ttl", c->desc);
	cr_expect_eq(pkt->ip_dst6_off, f->l3 + 24, "%s: ip_dst6_off", c->desc);
	if (c->kind == LB_PKT_ND) {
		cr_expect_eq(
			pkt->quote_off, f->l4 + 8, "%s: target at %u", c->desc, pkt->quote_off);
		cr_expect_eq(pkt->nd_type, f->b[f->l4], "%s: nd_type", c->desc);
		return;
	}
	if (c->turned) {
		cr_expect_eq(pkt->quote_off, f->quote, "%s: quote_off %u", c->desc, pkt->quote_off);
		cr_expect_eq(pkt->quote_l4_off, f->quote_l4, "%s: quote_l4_off %u", c->desc,
			pkt->quote_l4_off);
		/* Turned around: the error about VIP -> client carries client -> VIP. */
		src = CLIENT6;
		dst = VIP6;
	}
	cr_expect_eq(pkt->proto, c->proto, "%s: proto %u", c->desc, pkt->proto);
	cr_expect(memcmp(f->b + pkt->src6_off, src, 16) == 0, "%s: src", c->desc);
	cr_expect(memcmp(f->b + pkt->dst6_off, dst, 16) == 0, "%s: dst", c->desc);
	cr_expect_eq(lb_be16_to_cpu(pkt->sport), sport, "%s: sport %u", c->desc,
		lb_be16_to_cpu(pkt->sport));
	cr_expect_eq(lb_be16_to_cpu(pkt->dport), dport, "%s: dport %u", c->desc,
		lb_be16_to_cpu(pkt->dport));
}

Test(parse6, table)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse6_case *c = &cases[i];
		struct frame6 f;
		struct lb_pkt pkt;

		build(&f, &c->frame);
		if (expect_verdict(c->desc, f.b, f.len, c->want, &pkt))
			expect_accepted(c, &f, &pkt);
	}
}

/* A fragment stops the parse with the fragment header's place: the agent reassembles there. */
Test(parse6, fragment_header_is_located)
{
	static const struct frame6_spec s =
		V6(UDP, .n_ext = 2, .ext = {EXT(HOPOPTS), EXT(FRAGMENT, .frag = 1)});
	struct frame6 f;
	struct lb_pkt pkt;

	build(&f, &s);
	cr_assert_eq(parse_exact(f.b, f.len, &pkt), LB_DROP_IPV6_FRAGMENT);
	cr_expect_eq(pkt.l4_off, f.l3 + 40 + 8, "l4_off %u", pkt.l4_off);
	cr_expect_eq(pkt.l3_len, f.len - f.l3);
	cr_expect_eq(pkt.v6, 1);
}

/*
 * A fragment header cut short (the datagram ends inside its 8 bytes) is
 * malformed, not a fragment: reassembly would read the whole header.
 */
Test(parse6, a_cut_fragment_header_is_malformed)
{
	static const struct frame6_spec s = V6(UDP, .n_ext = 1, .ext = {EXT(FRAGMENT, .frag = 1)});
	struct frame6 full, f;
	struct lb_pkt pkt;
	uint32_t k;

	build(&full, &s);
	for (k = 1; k < 8; k++) { /* 0: a payload length of 0, ip_len */
		f = full;
		f.len = full.l3 + 40 + k;
		e_payload_plus(&f, 0);
		cr_expect_eq(parse_exact(f.b, f.len, &pkt), LB_DROP_IPV6_EXT,
			"%u bytes of the fragment header", k);
	}
}

/* --- Truncation ----------------------------------------------------------- */

/* clang-format off */
static const struct {
	const char *name;
	struct frame6_spec frame;
} trunc_frames[] = {
	{"TCP behind two extension headers",
	 V6(TCP, .n_ext = 2, .ext = {EXT(HOPOPTS), EXT(DSTOPTS, .len = 1)}, .tcp_opt_words = 2,
		.pay = 5)},
	{"UDP", V6(UDP, .pay = 7)},
	{"packet too big quoting TCP", ICMP6(LB_ICMP6_TOO_BIG, QUOTE(TCP, PORTS8))},
	{"neighbor solicitation", ND(NS_SLLA)},
};
/* clang-format on */
#define N_TRUNC (sizeof(trunc_frames) / sizeof(trunc_frames[0]))

/*
 * Every prefix of the frame: the payload length still claims the whole
 * datagram, so once the fixed header is in, every short prefix is ip_len.
 */
static int
prefix_want(uint32_t cut, const void *arg)
{
	const struct frame6 *f = arg;

	return cut < f->l3 + 40 ? LB_DROP_TRUNCATED : cut < f->len ? LB_DROP_IP_LEN : 0;
}

Test(parse6, every_prefix)
{
	size_t i;

	for (i = 0; i < N_TRUNC; i++) {
		struct frame6 f;

		build(&f, &trunc_frames[i].frame);
		expect_every_prefix(trunc_frames[i].name, f.b, f.len, prefix_want, &f);
	}
}

/*
 * The datagram cut at every length with the payload length made to match,
 * so each cut reaches the checks behind the fixed header: what remains
 * must hold every extension header, the TCP header with its options, the
 * UDP datagram, the quote's ports, the solicitation and its option whole.
 */
Test(parse6, every_short_datagram)
{
	size_t i;

	for (i = 0; i < N_TRUNC; i++) {
		struct frame6 full;
		uint32_t len;

		build(&full, &trunc_frames[i].frame);
		for (len = full.l3 + 40 + 1; len <= full.len; len++) {
			struct frame6 f = full;
			uint8_t upper = trunc_frames[i].frame.upper;
			uint32_t avail = len > f.l4 ? len - f.l4 : 0;
			int want;

			f.len = len;
			e_payload_plus(&f, 0);
			if (len < f.l4)
				want = LB_DROP_IPV6_EXT;
			else if (upper == LB_IPPROTO_TCP)
				want = avail < 20    ? LB_DROP_L4_TRUNCATED
				       : avail < 28u ? LB_DROP_L4_LEN
						     : 0;
			else if (upper == LB_IPPROTO_UDP)
				want = avail < 8     ? LB_DROP_L4_TRUNCATED
				       : avail < 15u ? LB_DROP_L4_LEN
						     : 0;
			else if (trunc_frames[i].frame.build == NULL)
				want = avail < 8		? LB_DROP_L4_TRUNCATED
				       : len < f.quote + 40 + 4 ? LB_DROP_ICMP_QUOTE
								: 0;
			else if (avail < 8)
				want = LB_DROP_L4_TRUNCATED;
			else /* the message's 24 bytes, then none or all of its option */
				want = len < f.opt || (len > f.opt && len < f.opt + 8)
					       ? LB_DROP_ND_MALFORMED
					       : 0;
			expect_cut(trunc_frames[i].name, f.b, f.len, full.len, want);
		}
	}
}

/* --- Random input --------------------------------------------------------- */

#define RANDOM_MUTATIONS 200000
#define RANDOM_FRAMES 100000

/*
 * Whatever the input, an accepted IPv6 frame's offsets lie inside the
 * datagram, with room for what its kind implies.
 */
static void
check_accepted(uint32_t len, const struct lb_pkt *pkt, uint32_t iter)
{
	uint32_t end = (uint32_t)pkt->l2_len + pkt->l3_len;

	cr_assert(pkt->v6, "%u: not IPv6", iter);
	cr_assert(pkt->l2_len == 14 || pkt->l2_len == 18, "%u: l2_len %u", iter, pkt->l2_len);
	cr_assert_leq(end, len, "%u: datagram past the frame", iter);
	cr_assert_geq(pkt->l4_off, pkt->l2_len + 40u, "%u: l4_off %u", iter, pkt->l4_off);
	cr_assert_leq(pkt->src6_off + 16u, end, "%u: src past the datagram", iter);
	cr_assert_leq(pkt->dst6_off + 16u, end, "%u: dst past the datagram", iter);
	cr_assert_eq(pkt->ip_dst6_off, pkt->l2_len + 24u, "%u: ip_dst6_off", iter);
	switch (pkt->kind) {
	case LB_PKT_L4:
		cr_assert(pkt->proto == LB_IPPROTO_TCP || pkt->proto == LB_IPPROTO_UDP,
			"%u: proto %u", iter, pkt->proto);
		cr_assert_leq(pkt->l4_off + (pkt->proto == LB_IPPROTO_TCP ? 20u : 8u), end,
			"%u: L4 header past the datagram", iter);
		break;
	case LB_PKT_ICMP_ECHO:
		cr_assert_eq(pkt->proto, LB_IPPROTO_ICMPV6, "%u: proto %u", iter, pkt->proto);
		cr_assert_leq(pkt->l4_off + 8u, end, "%u: ICMPv6 past the datagram", iter);
		break;
	case LB_PKT_ICMP_ERR:
		cr_assert(pkt->proto == LB_IPPROTO_TCP || pkt->proto == LB_IPPROTO_UDP,
			"%u: quoted proto %u", iter, pkt->proto);
		cr_assert_eq(pkt->quote_off, pkt->l4_off + 8u, "%u: quote_off", iter);
		cr_assert_geq(pkt->quote_l4_off, pkt->quote_off + 40u, "%u: quote_l4_off", iter);
		cr_assert_leq(pkt->quote_l4_off + 4u, end, "%u: quoted ports past the end", iter);
		break;
	case LB_PKT_ND:
		cr_assert_eq(pkt->ttl, 255, "%u: ND hop limit %u", iter, pkt->ttl);
		cr_assert_leq(pkt->quote_off + 16u, end, "%u: ND target past the end", iter);
		break;
	default:
		cr_assert(false, "%u: kind %u", iter, pkt->kind);
	}
}

Test(parse6, random_mutations)
{
	/* clang-format off */
	static const struct frame6_spec good[] = {
		V6(TCP, .tcp_opt_words = 2, .pay = 10),
		V6(UDP, .tagged = true, .pay = 9),
		V6(TCP, .n_ext = 3, .ext = {EXT(HOPOPTS), EXT(DSTOPTS), EXT(ROUTING)}),
		ICMP6(LB_ICMP6_ECHO, .pay = 12),
		ICMP6(LB_ICMP6_TOO_BIG, QUOTE(TCP, .n_ext = 1, .ext = {EXT(DSTOPTS)}, PORTS8)),
		ICMP6(LB_ICMP6_TIME_EXCEEDED, QUOTE(UDP, PORTS8)),
		ND(NS_SLLA),
		ND(NS_DAD),
	};
	/* clang-format on */
	const uint32_t n_good = sizeof(good) / sizeof(good[0]);
	struct frame6 frames[sizeof(good) / sizeof(good[0])];
	uint64_t rng = 0x5eed0006;
	uint32_t i, accepted = 0;

	for (i = 0; i < n_good; i++) {
		struct lb_pkt pkt;

		build(&frames[i], &good[i]);
		cr_assert_eq(lb_parse(frames[i].b, frames[i].len, &pkt), 0, "good frame %u", i);
	}
	for (i = 0; i < RANDOM_MUTATIONS; i++) {
		struct frame6 f = frames[rnd(&rng, n_good)];
		struct lb_pkt pkt;
		int rc;

		f.b[rnd(&rng, f.len)] = (uint8_t)splitmix64(&rng);
		if (rnd(&rng, 4) == 0) /* and now and then a second byte */
			f.b[rnd(&rng, f.len)] = (uint8_t)splitmix64(&rng);
		rc = parse_exact(f.b, f.len, &pkt);
		cr_assert(rc >= 0 && rc < LB_DROP_MAX, "%u: return %d", i, rc);
		if (rc == 0 && pkt.v6)
			check_accepted(f.len, &pkt, i);
		accepted += rc == 0;
	}
	cr_expect_gt(accepted, RANDOM_MUTATIONS / 10, "only %u mutated frames accepted", accepted);
}

/* Noise behind an IPv6 header whose version and payload length are right. */
Test(parse6, random_frames)
{
	static const uint8_t nexts[] = {LB_IPPROTO_TCP, LB_IPPROTO_UDP, LB_IPPROTO_ICMPV6,
		LB_IPPROTO_HOPOPTS, LB_IPPROTO_DSTOPTS, LB_IPPROTO_ROUTING, LB_IPPROTO_FRAGMENT};
	uint64_t rng = 0x5eed0007;
	uint8_t b[300];
	uint32_t i, j, accepted = 0;

	for (i = 0; i < RANDOM_FRAMES; i++) {
		uint32_t len = 14 + 40 + rnd(&rng, 300 - 54 + 1);
		struct lb_pkt pkt;
		int rc;

		for (j = 0; j < len; j++)
			b[j] = (uint8_t)splitmix64(&rng);
		b[12] = 0x86;
		b[13] = 0xdd;
		b[14] = (uint8_t)(0x60 | (b[14] & 0x0f));
		b[14 + 4] = (uint8_t)((len - 54) >> 8);
		b[14 + 5] = (uint8_t)(len - 54);
		b[14 + 6] = nexts[rnd(&rng, sizeof(nexts))];
		if (rnd(&rng, 2)) /* extension headers short enough to chain */
			for (j = 54; j + 1 < len; j += 8)
				b[j + 1] = (uint8_t)rnd(&rng, 2);
		rc = parse_exact(b, len, &pkt);
		cr_assert(rc >= 0 && rc < LB_DROP_MAX, "%u: return %d", i, rc);
		if (rc == 0)
			check_accepted(len, &pkt, i);
		accepted += rc == 0;
	}
	cr_expect_gt(accepted, RANDOM_FRAMES / 100, "only %u random frames accepted", accepted);
}
