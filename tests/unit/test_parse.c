/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_parse(): a table of hand-built frames and their verdicts, every
 * truncation of a few good frames, then random frames and random one-byte
 * mutations of good ones.
 *
 * Frames are built field by field, so a case names the one thing it changes
 * and the builder keeps everything else (lengths, checksums) right. A row of
 * the table says it with named fields: the frame (struct frame_spec: a TCP or
 * UDP datagram, an ICMP error or a builder of its own, then one edit such as
 * IP_FIELD(ttl, 1)), the verdict (.want, a drop reason) or, when accepted,
 * its kind and tuple and a check of its own. The parser
 * always reads from a heap copy of exactly len bytes: under AddressSanitizer a
 * read past the frame is a crash instead of a lucky pass. Random tests use a
 * fixed seed so that a failure reproduces.
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

/* --- The table ------------------------------------------------------------ */

struct tuple {
	uint32_t src, dst; /* host order */
	uint16_t sport, dport;
	uint8_t proto;
};

struct parse_case {
	const char *desc;
	struct frame_spec frame;
	int want;	    /* 0 (accepted) or enum lb_drop */
	uint8_t kind;	    /* when accepted */
	struct tuple tuple; /* checked when accepted and kind != ARP */
	void (*check)(const char *desc, const struct lb_pkt *pkt);
};

static void
check_syn(const char *desc, const struct lb_pkt *pkt)
{
	cr_expect_eq(pkt->tcp_flags, LB_TCP_SYN, "%s: tcp_flags %#x", desc, pkt->tcp_flags);
	cr_expect_eq(pkt->ttl, 64, "%s: ttl %u", desc, pkt->ttl);
	cr_expect_eq(pkt->df, 1, "%s: df %u", desc, pkt->df);
	cr_expect_eq(pkt->has_vlan, 0, "%s: has_vlan %u", desc, pkt->has_vlan);
}

static void
check_vlan(const char *desc, const struct lb_pkt *pkt)
{
	cr_expect_eq(pkt->has_vlan, 1, "%s: has_vlan %u", desc, pkt->has_vlan);
	cr_expect_eq(pkt->vlan_tci, VLAN_TCI, "%s: vlan_tci %#x", desc, pkt->vlan_tci);
}

static void
check_df_clear(const char *desc, const struct lb_pkt *pkt)
{
	cr_expect_eq(pkt->df, 0, "%s: df %u", desc, pkt->df);
}

/* The parser reports TTL; the caller decides what TTL 1 means. */
static void
check_ttl1(const char *desc, const struct lb_pkt *pkt)
{
	cr_expect_eq(pkt->ttl, 1, "%s: ttl %u", desc, pkt->ttl);
}

static void
check_arp(const char *desc, const struct lb_pkt *pkt, uint16_t op)
{
	cr_expect_eq(pkt->arp_op, op, "%s: arp_op %u", desc, pkt->arp_op);
	cr_expect_eq(lb_be32_to_cpu(pkt->arp_spa), ROUTER, "%s: arp_spa %#x", desc,
		lb_be32_to_cpu(pkt->arp_spa));
	cr_expect_eq(lb_be32_to_cpu(pkt->arp_tpa), VIP, "%s: arp_tpa %#x", desc,
		lb_be32_to_cpu(pkt->arp_tpa));
}

static void
check_arp_request(const char *desc, const struct lb_pkt *pkt)
{
	check_arp(desc, pkt, LB_ARP_OP_REQUEST);
	cr_expect_eq(pkt->has_vlan, 0, "%s: has_vlan %u", desc, pkt->has_vlan);
}

static void
check_arp_reply(const char *desc, const struct lb_pkt *pkt)
{
	check_arp(desc, pkt, LB_ARP_OP_REPLY);
}

static void
check_arp_vlan(const char *desc, const struct lb_pkt *pkt)
{
	check_arp(desc, pkt, LB_ARP_OP_REQUEST);
	check_vlan(desc, pkt);
}

/* clang-format off */
static const struct parse_case cases[] = {
	/* Forwarded traffic. */
	{.desc = "TCP SYN client to VIP", .frame = {TCP(.pay = 10)},
	 .kind = LB_PKT_L4, .tuple = FWD(TCP), .check = check_syn},
	{.desc = "UDP client to VIP", .frame = {UDP(.pay = 10)},
	 .kind = LB_PKT_L4, .tuple = FWD(UDP)},
	{.desc = "UDP header only", .frame = {UDP(.pay = 0)}, .kind = LB_PKT_L4, .tuple = FWD(UDP)},
	{.desc = "802.1Q-tagged TCP", .frame = {TCP(.tagged = true, .pay = 10)},
	 .kind = LB_PKT_L4, .tuple = FWD(TCP), .check = check_vlan},
	{.desc = "IPv4 options, IHL 15", .frame = {TCP(.ihl = 15, .pay = 10)},
	 .kind = LB_PKT_L4, .tuple = FWD(TCP)},
	{.desc = "a loose source route visited to its end",
	 .frame = {TCP(.ihl = 15, .pay = 10), .edit = IP_OPT(LB_IPOPT_LSRR, 8, 1)},
	 .kind = LB_PKT_L4, .tuple = FWD(TCP)},
	{.desc = "IPv4 options, IHL 6, tagged UDP",
	 .frame = {UDP(.tagged = true, .ihl = 6, .pay = 10)},
	 .kind = LB_PKT_L4, .tuple = FWD(UDP), .check = check_vlan},
	{.desc = "TCP options, data offset 15", .frame = {TCP(.tcp_opt_words = 10)},
	 .kind = LB_PKT_L4, .tuple = FWD(TCP)},
	/* A bare SYN is 54 bytes; the NIC pads it to the 60-byte minimum. */
	{.desc = "SYN padded to 60 bytes", .frame = {TCP(.pay = 0), .edit = APPEND(6, 0)},
	 .kind = LB_PKT_L4, .tuple = FWD(TCP)},
	{.desc = "UDP with 40 bytes of trailer", .frame = {UDP(.pay = 3), .edit = APPEND(40, 0xff)},
	 .kind = LB_PKT_L4, .tuple = FWD(UDP)},
	{.desc = "DF clear", .frame = {TCP(.pay = 10), .edit = IP_FIELD(frag_off, 0)},
	 .kind = LB_PKT_L4, .tuple = FWD(TCP), .check = check_df_clear},
	{.desc = "TTL 1 is reported, not judged",
	 .frame = {TCP(.pay = 10), .edit = IP_FIELD(ttl, 1)},
	 .kind = LB_PKT_L4, .tuple = FWD(TCP), .check = check_ttl1},

	/* Layer 2. */
	{.desc = "13-byte runt", .frame = {TCP(.pay = 10), .edit = CUT_TO(13)},
	 .want = LB_DROP_TRUNCATED},
	{.desc = "tag announced, frame ends inside it",
	 .frame = {TCP(.tagged = true, .pay = 10), .edit = CUT_TO(16)}, .want = LB_DROP_TRUNCATED},
	{.desc = "802.1Q inside 802.1Q",
	 .frame = {.build = build_two_tags, .arg = LB_ETHERTYPE_VLAN},
	 .want = LB_DROP_VLAN_STACKED},
	{.desc = "802.1ad S-tag outside",
	 .frame = {.build = build_two_tags, .arg = LB_ETHERTYPE_QINQ},
	 .want = LB_DROP_VLAN_STACKED},
	{.desc = "802.1ad inside 802.1Q", .frame = {.build = build_vlan_then_qinq},
	 .want = LB_DROP_VLAN_STACKED},
	/* IPv6 has rows of its own (test_parse6.c); 60 bytes of 0x60 claim 0x6060 bytes. */
	{.desc = "IPv6 past its frame", .frame = {.build = build_ethertype, .arg = LB_ETHERTYPE_IPV6},
	 .want = LB_DROP_IP_LEN},
	{.desc = "tagged IPv6 past its frame",
	 .frame = {.build = build_ethertype, .arg = LB_ETHERTYPE_IPV6 | TAGGED},
	 .want = LB_DROP_IP_LEN},
	{.desc = "LLDP", .frame = {.build = build_ethertype, .arg = 0x88cc},
	 .want = LB_DROP_ETHERTYPE},
	{.desc = "tagged unknown ethertype",
	 .frame = {.build = build_ethertype, .arg = 0x9000 | TAGGED}, .want = LB_DROP_ETHERTYPE},

	/* IPv4 header. */
	{.desc = "version 6 under the IPv4 ethertype",
	 .frame = {TCP(.pay = 10), .edit = IP_FIELD(ver_ihl, 0x65)}, .want = LB_DROP_IP_VERSION},
	{.desc = "version 0", .frame = {TCP(.pay = 10), .edit = IP_FIELD(ver_ihl, 0x05)},
	 .want = LB_DROP_IP_VERSION},
	/* The VIP is not the last hop: as IPv6's routing header with segments left. */
	{.desc = "loose source route, a hop to go",
	 .frame = {TCP(.ihl = 15, .pay = 10), .edit = IP_OPT(LB_IPOPT_LSRR, 4, 0)},
	 .want = LB_DROP_IP_SRCROUTE},
	{.desc = "strict source route after 3 NOPs, a hop to go",
	 .frame = {UDP(.ihl = 15, .pay = 10), .edit = IP_OPT(LB_IPOPT_SSRR, 4, 3)},
	 .want = LB_DROP_IP_SRCROUTE},
	{.desc = "IHL 4", .frame = {TCP(.pay = 10), .edit = IP_FIELD_RAW(ver_ihl, 0x44)},
	 .want = LB_DROP_IP_IHL},
	{.desc = "IHL 0", .frame = {TCP(.pay = 10), .edit = IP_FIELD_RAW(ver_ihl, 0x40)},
	 .want = LB_DROP_IP_IHL},
	/* A 42-byte UDP frame has 28 bytes of IP; IHL 15 claims 60. */
	{.desc = "IHL 15 in a 42-byte frame",
	 .frame = {UDP(.pay = 0), .edit = IP_FIELD_RAW(ver_ihl, 0x4f)}, .want = LB_DROP_IP_IHL},
	{.desc = "IHL one word past the frame", .frame = {.build = build_ihl_one_word_past},
	 .want = LB_DROP_IP_IHL},
	{.desc = "total length one past the frame",
	 .frame = {TCP(.pay = 10), .edit = EDIT(e_tot_plus, 1)}, .want = LB_DROP_IP_LEN},
	{.desc = "total length 19", .frame = {TCP(.pay = 10), .edit = IP_FIELD(total_len, 19)},
	 .want = LB_DROP_IP_LEN},
	{.desc = "total length 20 with IHL 6",
	 .frame = {TCP(.ihl = 6, .pay = 10), .edit = IP_FIELD(total_len, 20)},
	 .want = LB_DROP_IP_LEN},
	/* What a TSO-sized packet carries; never valid on the wire. */
	{.desc = "total length 0 (TSO)", .frame = {TCP(.pay = 10), .edit = IP_FIELD(total_len, 0)},
	 .want = LB_DROP_IP_LEN},
	{.desc = "bad header checksum", .frame = {TCP(.pay = 10), .edit = EDIT(e_bad_csum, 0)},
	 .want = LB_DROP_IP_CSUM},
	/* an option byte the checksum covers */
	{.desc = "option byte flipped",
	 .frame = {TCP(.ihl = 15, .pay = 10), .edit = EDIT(e_flip_hdr_byte, 40)},
	 .want = LB_DROP_IP_CSUM},
	{.desc = "first fragment (MF)",
	 .frame = {TCP(.pay = 10), .edit = IP_FIELD(frag_off, LB_IPV4_MF)},
	 .want = LB_DROP_FRAGMENT},
	/* offset 185 words: 1480 bytes */
	{.desc = "last fragment (offset)",
	 .frame = {UDP(.pay = 10), .edit = IP_FIELD(frag_off, 185)}, .want = LB_DROP_FRAGMENT},
	{.desc = "middle fragment (MF, offset)",
	 .frame = {UDP(.pay = 10), .edit = IP_FIELD(frag_off, LB_IPV4_MF | 1)},
	 .want = LB_DROP_FRAGMENT},
	{.desc = "IP-in-IP", .frame = {TCP(.pay = 10), .edit = IP_FIELD(proto, LB_IPPROTO_IPIP)},
	 .want = LB_DROP_TUNNEL},
	{.desc = "IPv6-in-IPv4",
	 .frame = {TCP(.pay = 10), .edit = IP_FIELD(proto, LB_IPPROTO_IPV6)},
	 .want = LB_DROP_TUNNEL},
	{.desc = "GRE", .frame = {TCP(.pay = 10), .edit = IP_FIELD(proto, 47)},
	 .want = LB_DROP_PROTO},
	{.desc = "SCTP", .frame = {TCP(.pay = 10), .edit = IP_FIELD(proto, 132)},
	 .want = LB_DROP_PROTO},

	/* TCP and UDP headers. */
	{.desc = "TCP data offset 4",
	 .frame = {TCP(.pay = 10), .edit = TCP_FIELD(data_off, 4 << 4)}, .want = LB_DROP_L4_LEN},
	{.desc = "TCP data offset 0", .frame = {TCP(.pay = 10), .edit = TCP_FIELD(data_off, 0)},
	 .want = LB_DROP_L4_LEN},
	/* 30-byte segment, data offset 60. */
	{.desc = "TCP data offset past the segment",
	 .frame = {TCP(.pay = 10), .edit = TCP_FIELD(data_off, 15 << 4)}, .want = LB_DROP_L4_LEN},
	/* Options run into the Ethernet padding: only the IP total length counts. */
	{.desc = "TCP options past IP length",
	 .frame = {TCP(.tcp_opt_words = 3), .edit = EDIT(e_tot_plus, -4)}, .want = LB_DROP_L4_LEN},
	{.desc = "19-byte TCP segment",
	 .frame = {TCP(.pay = 10), .edit = IP_FIELD(total_len, 20 + 19)},
	 .want = LB_DROP_L4_TRUNCATED},
	{.desc = "UDP length 7", .frame = {UDP(.pay = 10), .edit = UDP_FIELD(len, 7)},
	 .want = LB_DROP_L4_LEN},
	{.desc = "UDP length 0", .frame = {UDP(.pay = 10), .edit = UDP_FIELD(len, 0)},
	 .want = LB_DROP_L4_LEN},
	{.desc = "UDP length past the datagram",
	 .frame = {UDP(.pay = 10), .edit = UDP_FIELD(len, 8 + 10 + 1)}, .want = LB_DROP_L4_LEN},
	{.desc = "UDP length past IP length",
	 .frame = {UDP(.pay = 10), .edit = EDIT(e_udp_len_past_ip, 0)}, .want = LB_DROP_L4_LEN},
	{.desc = "7-byte UDP datagram",
	 .frame = {UDP(.pay = 10), .edit = IP_FIELD(total_len, 20 + 7)},
	 .want = LB_DROP_L4_TRUNCATED},

	/* ARP. */
	{.desc = "ARP request", .frame = {ARP(LB_ARP_OP_REQUEST)},
	 .kind = LB_PKT_ARP, .check = check_arp_request},
	{.desc = "ARP reply", .frame = {ARP(LB_ARP_OP_REPLY)},
	 .kind = LB_PKT_ARP, .check = check_arp_reply},
	{.desc = "tagged ARP", .frame = {ARP(LB_ARP_OP_REQUEST | TAGGED)},
	 .kind = LB_PKT_ARP, .check = check_arp_vlan},
	{.desc = "ARP padded to 60 bytes", .frame = {ARP(LB_ARP_OP_REQUEST), .edit = APPEND(18, 0)},
	 .kind = LB_PKT_ARP, .check = check_arp_request},
	{.desc = "ARP hln 8", .frame = {ARP(LB_ARP_OP_REQUEST), .edit = ARP_FIELD(hln, 8)},
	 .want = LB_DROP_ARP_MALFORMED},
	{.desc = "ARP pln 16", .frame = {ARP(LB_ARP_OP_REQUEST), .edit = ARP_FIELD(pln, 16)},
	 .want = LB_DROP_ARP_MALFORMED},
	{.desc = "ARP hrd IEEE 802", .frame = {ARP(LB_ARP_OP_REQUEST), .edit = ARP_FIELD(hrd, 6)},
	 .want = LB_DROP_ARP_MALFORMED},
	{.desc = "ARP for IPv6",
	 .frame = {ARP(LB_ARP_OP_REQUEST), .edit = ARP_FIELD(pro, LB_ETHERTYPE_IPV6)},
	 .want = LB_DROP_ARP_MALFORMED},
	{.desc = "ARP one byte short", .frame = {ARP(LB_ARP_OP_REQUEST), .edit = SHORTEN(1)},
	 .want = LB_DROP_TRUNCATED},

	/* ICMP. */
	{.desc = "echo request", .frame = {ECHO(LB_ICMP_ECHO)},
	 .kind = LB_PKT_ICMP_ECHO, .tuple = ECHO_TUPLE},
	{.desc = "echo reply", .frame = {ECHO(LB_ICMP_ECHO_REPLY)}, .want = LB_DROP_ICMP_TYPE},
	{.desc = "redirect", .frame = {ECHO(5)}, .want = LB_DROP_ICMP_TYPE},
	{.desc = "7-byte ICMP message",
	 .frame = {ECHO(LB_ICMP_ECHO), .edit = IP_FIELD(total_len, 20 + 7)},
	 .want = LB_DROP_L4_TRUNCATED},
	{.desc = "port unreachable, TCP", .frame = {PORT_UNREACH(QTCP8)},
	 .kind = LB_PKT_ICMP_ERR, .tuple = FWD(TCP)},
	{.desc = "fragmentation needed, TCP", .frame = {FRAG_NEEDED(QTCP8)},
	 .kind = LB_PKT_ICMP_ERR, .tuple = FWD(TCP)},
	{.desc = "time exceeded, TCP", .frame = {TIME_EXCEEDED(0, QTCP8)},
	 .kind = LB_PKT_ICMP_ERR, .tuple = FWD(TCP)},
	{.desc = "parameter problem, TCP",
	 .frame = {.icmp = {.type = LB_ICMP_PARAM_PROBLEM, QTCP8}},
	 .kind = LB_PKT_ICMP_ERR, .tuple = FWD(TCP)},
	{.desc = "port unreachable, UDP",
	 .frame = {PORT_UNREACH(.qproto = LB_IPPROTO_UDP, .qbytes = 8)},
	 .kind = LB_PKT_ICMP_ERR, .tuple = FWD(UDP)},
	{.desc = "quote with IHL 15", .frame = {FRAG_NEEDED(QTCP8, .qihl = 15)},
	 .kind = LB_PKT_ICMP_ERR, .tuple = FWD(TCP)},
	{.desc = "quote of the IP header only", .frame = {FRAG_NEEDED(.qproto = LB_IPPROTO_TCP)},
	 .want = LB_DROP_ICMP_QUOTE},
	{.desc = "quote with 3 bytes of ports",
	 .frame = {FRAG_NEEDED(.qproto = LB_IPPROTO_TCP, .qbytes = 3)}, .want = LB_DROP_ICMP_QUOTE},
	{.desc = "quote of 19 bytes",
	 .frame = {FRAG_NEEDED(.qproto = LB_IPPROTO_TCP), .edit = EDIT(e_quote_shorten, 1)},
	 .want = LB_DROP_ICMP_QUOTE},
	/* Options of the quoted header are quoted, its ports are not. */
	{.desc = "quote with options, no ports",
	 .frame = {FRAG_NEEDED(.qproto = LB_IPPROTO_TCP, .qihl = 15)}, .want = LB_DROP_ICMP_QUOTE},
	{.desc = "quote of an ICMP packet",
	 .frame = {PORT_UNREACH(.qproto = LB_IPPROTO_ICMP, .qbytes = 8)},
	 .want = LB_DROP_ICMP_QUOTE},
	{.desc = "quote of version 6",
	 .frame = {PORT_UNREACH(QTCP8), .edit = QUOTE_FIELD(ver_ihl, 0x65)},
	 .want = LB_DROP_ICMP_QUOTE},
	{.desc = "quote with IHL 4",
	 .frame = {PORT_UNREACH(QTCP8), .edit = QUOTE_FIELD(ver_ihl, 0x44)},
	 .want = LB_DROP_ICMP_QUOTE},
	{.desc = "quote of a later fragment",
	 .frame = {TIME_EXCEEDED(1, .qproto = LB_IPPROTO_UDP, .qbytes = 8),
		   .edit = QUOTE_FIELD(frag_off, 185)},
	 .want = LB_DROP_ICMP_QUOTE},
	/* The ports sit in Ethernet padding, past the outer IP total length. */
	{.desc = "quoted ports past IP length",
	 .frame = {PORT_UNREACH(QTCP8), .edit = EDIT(e_tot_plus, -8)}, .want = LB_DROP_ICMP_QUOTE},
};
/* clang-format on */

/* Offsets and lengths the builder knows, checked for every accepted frame. */
static void
expect_layout(const char *desc, struct frame *f, const struct lb_pkt *pkt)
{
	cr_expect_eq(pkt->l2_len, f->l3, "%s: l2_len %u, want %u", desc, pkt->l2_len, f->l3);
	if (pkt->kind == LB_PKT_ARP)
		return;
	cr_expect_eq(pkt->l3_len, lb_be16_to_cpu(ip_at(f, f->l3)->total_len), "%s: l3_len %u", desc,
		pkt->l3_len);
	cr_expect_eq(pkt->l4_off, f->l4, "%s: l4_off %u, want %u", desc, pkt->l4_off, f->l4);
	if (pkt->kind == LB_PKT_ICMP_ERR)
		cr_expect_eq(pkt->quote_off, f->quote, "%s: quote_off %u, want %u", desc,
			pkt->quote_off, f->quote);
}

static void
expect_tuple(const char *desc, const struct lb_pkt *pkt, const struct tuple *t)
{
	cr_expect_eq(pkt->proto, t->proto, "%s: proto %u, want %u", desc, pkt->proto, t->proto);
	cr_expect_eq(lb_be32_to_cpu(pkt->src), t->src, "%s: src %#x, want %#x", desc,
		lb_be32_to_cpu(pkt->src), t->src);
	cr_expect_eq(lb_be32_to_cpu(pkt->dst), t->dst, "%s: dst %#x, want %#x", desc,
		lb_be32_to_cpu(pkt->dst), t->dst);
	cr_expect_eq(lb_be16_to_cpu(pkt->sport), t->sport, "%s: sport %u, want %u", desc,
		lb_be16_to_cpu(pkt->sport), t->sport);
	cr_expect_eq(lb_be16_to_cpu(pkt->dport), t->dport, "%s: dport %u, want %u", desc,
		lb_be16_to_cpu(pkt->dport), t->dport);
}

/* An accepted frame: its kind, its offsets and, but for ARP, its tuple. */
static void
expect_accepted(const char *desc, struct frame *f, const struct lb_pkt *pkt, uint8_t kind,
	const struct tuple *t)
{
	cr_expect_eq(pkt->kind, kind, "%s: kind %u, want %u", desc, pkt->kind, kind);
	expect_layout(desc, f, pkt);
	if (kind != LB_PKT_ARP)
		expect_tuple(desc, pkt, t);
}

Test(parse, table)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct frame f = {0};
		struct lb_pkt pkt;

		build(&f, &c->frame);
		if (!expect_verdict(c->desc, f.b, f.len, c->want, &pkt))
			continue;
		expect_accepted(c->desc, &f, &pkt, c->kind, &c->tuple);
		if (c->check != NULL)
			c->check(c->desc, &pkt);
	}
}

/* Every IHL from 5 to 15, tagged or not, TCP or UDP; and in an ICMP quote. */
Test(parse, ipv4_options)
{
	static const struct tuple tcp = FWD(TCP), udp = FWD(UDP);
	uint8_t ihl;
	int tagged, p;

	for (ihl = 5; ihl <= 15; ihl++) {
		for (tagged = 0; tagged < 2; tagged++) {
			for (p = 0; p < 2; p++) {
				uint8_t proto = p ? LB_IPPROTO_UDP : LB_IPPROTO_TCP;
				struct frame f = {0};
				struct lb_pkt pkt;
				char desc[64];

				snprintf(desc, sizeof(desc), "IHL %u, %s, %s", ihl,
					tagged ? "tagged" : "untagged", p ? "UDP" : "TCP");
				build_l4(&f, &(struct l4_spec){.proto = proto,
						     .tagged = tagged,
						     .ihl = ihl,
						     .pay = 7});
				if (!expect_verdict(desc, f.b, f.len, 0, &pkt))
					continue;
				expect_accepted(desc, &f, &pkt, LB_PKT_L4, p ? &udp : &tcp);
				cr_expect_eq(pkt.l4_off, (tagged ? 18u : 14u) + ihl * 4u,
					"%s: l4_off %u", desc, pkt.l4_off);
			}
		}
		{
			struct frame f = {0};
			struct lb_pkt pkt;
			char desc[64];

			snprintf(desc, sizeof(desc), "quote with IHL %u", ihl);
			build_icmp_err(&f, &(struct icmp_err_spec){.type = LB_ICMP_UNREACH,
						   .code = LB_ICMP_UNREACH_NEEDFRAG,
						   .qproto = LB_IPPROTO_TCP,
						   .qihl = ihl,
						   .qbytes = 8});
			if (expect_verdict(desc, f.b, f.len, 0, &pkt))
				expect_accepted(desc, &f, &pkt, LB_PKT_ICMP_ERR, &tcp);
		}
	}
}
