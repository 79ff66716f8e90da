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

#define FRAME_MAX 512

/* Host-order addresses and ports of the flow most cases carry. */
#define HOST_IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define CLIENT HOST_IP(198, 51, 100, 7)
#define VIP HOST_IP(192, 0, 2, 10)
#define ROUTER HOST_IP(203, 0, 113, 1)
#define CPORT 5555
#define VPORT 80
#define ECHO_ID 0x4242
#define VLAN_TCI 0x2064 /* priority 1, VLAN 100 */

static const uint8_t mux_mac[LB_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t router_mac[LB_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0xfe};

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint32_t l3;	/* outer IPv4 or ARP header */
	uint32_t l4;	/* outer L4 header */
	uint32_t quote; /* ICMP error: the quoted IPv4 header */
};

/* --- Frame builder --------------------------------------------------------- */

static uint8_t *
put(struct frame *f, uint32_t n)
{
	return frame_put(f->b, &f->len, FRAME_MAX, n);
}

static void
put_eth(struct frame *f, uint16_t type)
{
	struct lb_eth_hdr *e = (struct lb_eth_hdr *)put(f, sizeof(*e));

	memcpy(e->dst, mux_mac, LB_ETH_ALEN);
	memcpy(e->src, router_mac, LB_ETH_ALEN);
	e->type = lb_cpu_to_be16(type);
}

static void
put_vlan(struct frame *f, uint16_t tci, uint16_t type)
{
	struct lb_vlan_hdr *v = (struct lb_vlan_hdr *)put(f, sizeof(*v));

	v->tci = lb_cpu_to_be16(tci);
	v->type = lb_cpu_to_be16(type);
}

/* Ethernet, tagged when tci >= 0. */
static void
put_l2(struct frame *f, int tci, uint16_t type)
{
	if (tci < 0) {
		put_eth(f, type);
	} else {
		put_eth(f, LB_ETHERTYPE_VLAN);
		put_vlan(f, (uint16_t)tci, type);
	}
}

static struct lb_ipv4_hdr *
ip_at(struct frame *f, uint32_t off)
{
	return (struct lb_ipv4_hdr *)(f->b + off);
}

/* IPv4 header of ihl (>= 5) words, options all NOPs; see ip_fix() for the rest. */
static uint32_t
put_ipv4(struct frame *f, uint8_t proto, uint32_t src, uint32_t dst, uint8_t ihl)
{
	uint32_t off = f->len;
	uint8_t *p = put(f, ihl * 4u);
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)p;

	ip->ver_ihl = (uint8_t)(0x40 | ihl);
	ip->id = lb_cpu_to_be16(0x1234);
	ip->frag_off = lb_cpu_to_be16(LB_IPV4_DF);
	ip->ttl = 64;
	ip->proto = proto;
	ip->src = lb_cpu_to_be32(src);
	ip->dst = lb_cpu_to_be32(dst);
	memset(p + sizeof(*ip), 1, ihl * 4u - sizeof(*ip));
	return off;
}

/* Total length and a correct header checksum for the header at off. */
static void
ip_fix(struct frame *f, uint32_t off, uint32_t tot)
{
	struct lb_ipv4_hdr *ip = ip_at(f, off);

	ip->total_len = lb_cpu_to_be16((uint16_t)tot);
	ip->csum = lb_ipv4_hdr_csum(ip, lb_ipv4_ihl(ip) * 4u);
}

/* After a case edits the outer header: keep its checksum right (IHL >= 5). */
static void
ip_recsum(struct frame *f)
{
	struct lb_ipv4_hdr *ip = ip_at(f, f->l3);

	ip->csum = lb_ipv4_hdr_csum(ip, lb_ipv4_ihl(ip) * 4u);
}

/* Set the outer total length, keeping the checksum right. */
static void
ip_set_tot(struct frame *f, uint32_t tot)
{
	ip_fix(f, f->l3, tot);
}

static void
put_tcp(struct frame *f, uint16_t sport, uint16_t dport, uint8_t flags, uint8_t opt_words)
{
	struct lb_tcp_hdr *t;
	uint8_t *p;

	f->l4 = f->len;
	p = put(f, sizeof(*t) + opt_words * 4u);
	t = (struct lb_tcp_hdr *)p;
	t->sport = lb_cpu_to_be16(sport);
	t->dport = lb_cpu_to_be16(dport);
	t->seq = lb_cpu_to_be32(0x01020304);
	t->data_off = (uint8_t)((5 + opt_words) << 4);
	t->flags = flags;
	t->window = lb_cpu_to_be16(65535);
	memset(p + sizeof(*t), 1, opt_words * 4u);
}

static void
put_udp(struct frame *f, uint16_t sport, uint16_t dport)
{
	struct lb_udp_hdr *u;

	f->l4 = f->len;
	u = (struct lb_udp_hdr *)put(f, sizeof(*u));
	u->sport = lb_cpu_to_be16(sport);
	u->dport = lb_cpu_to_be16(dport);
}

static void
put_icmp(struct frame *f, uint8_t type, uint8_t code, uint32_t rest)
{
	struct lb_icmp_hdr *i;

	f->l4 = f->len;
	i = (struct lb_icmp_hdr *)put(f, sizeof(*i));
	i->type = type;
	i->code = code;
	i->rest = lb_cpu_to_be32(rest);
}

static void
put_payload(struct frame *f, uint32_t n, uint8_t fill)
{
	memset(put(f, n), fill, n);
}

/* The first n (<= 8) bytes of a TCP/UDP header: ports, then seq or len/csum. */
static void
put_ports(struct frame *f, uint16_t sport, uint16_t dport, uint32_t n)
{
	uint8_t h[8] = {sport >> 8, sport & 0xff, dport >> 8, dport & 0xff, 0xde, 0xad, 0xbe, 0xef};

	memcpy(put(f, n), h, n);
}

static struct lb_tcp_hdr *
tcp_of(struct frame *f)
{
	return (struct lb_tcp_hdr *)(f->b + f->l4);
}

static struct lb_udp_hdr *
udp_of(struct frame *f)
{
	return (struct lb_udp_hdr *)(f->b + f->l4);
}

static struct lb_icmp_hdr *
icmp_of(struct frame *f)
{
	return (struct lb_icmp_hdr *)(f->b + f->l4);
}

/*
 * Close the outer datagram at the current end of the frame: total length,
 * UDP length, header and L4 checksums. L4 checksums are not the parser's
 * business, but the frames should be what a wire carries.
 */
static void
finish(struct frame *f)
{
	struct lb_ipv4_hdr *ip = ip_at(f, f->l3);
	uint32_t l4_len = f->len - f->l4;

	ip_fix(f, f->l3, f->len - f->l3);
	switch (ip->proto) {
	case LB_IPPROTO_TCP:
		tcp_of(f)->csum = 0;
		tcp_of(f)->csum = lb_ipv4_l4_csum(ip->src, ip->dst, ip->proto, tcp_of(f), l4_len);
		break;
	case LB_IPPROTO_UDP:
		udp_of(f)->len = lb_cpu_to_be16((uint16_t)l4_len);
		udp_of(f)->csum = 0;
		udp_of(f)->csum = lb_ipv4_l4_csum(ip->src, ip->dst, ip->proto, udp_of(f), l4_len);
		break;
	case LB_IPPROTO_ICMP:
		icmp_of(f)->csum = 0;
		icmp_of(f)->csum = lb_icmp_csum(icmp_of(f), l4_len);
		break;
	}
}

/*
 * What a case's frame is made of: client:5555 -> VIP:80 over TCP or UDP
 * (l4), or an ICMP error about VIP:80 -> client:5555 (icmp), or a builder of
 * its own; then, if given, the one thing the case changes (edit, with its
 * value). Zero fields are the defaults: untagged, IHL 5, no options.
 */
struct l4_spec {
	uint8_t proto; /* LB_IPPROTO_TCP or LB_IPPROTO_UDP */
	bool tagged;   /* 802.1Q tag VLAN_TCI */
	uint8_t ihl;   /* IPv4 header length in words (0: 5) */
	uint8_t tcp_opt_words;
	uint32_t pay; /* payload bytes */
};

/* From the router to the VIP, quoting a full 1500-byte VIP -> client datagram. */
struct icmp_err_spec {
	uint8_t type, code;
	uint8_t qproto;	 /* the quoted datagram's protocol */
	uint8_t qihl;	 /* its header length in words (0: 5) */
	uint32_t qbytes; /* bytes of its L4 header quoted (up to 8) */
};

/*
 * One change to a built frame: a header field set to value (IP_FIELD(ttl, 1):
 * the outer IPv4 header's TTL, its checksum made right again), bytes added
 * (APPEND(6, 0): Ethernet padding) or the frame cut (CUT_TO(13)), or fn called
 * with value (EDIT(e_tot_plus, 1)).
 */
enum edit_at { AT_L3 = 1, AT_L4, AT_QUOTE, AT_END, AT_LEN };

struct edit {
	uint8_t at;	   /* enum edit_at: whose header, or the end, or the length */
	uint8_t off, size; /* a header field: offset, 1 or 2 bytes (network order) */
	bool recsum;	   /* the outer IPv4 checksum made right afterwards */
	uint8_t fill;	   /* AT_END: the bytes added */
	void (*fn)(struct frame *f, int value);
	int value; /* the field's value; bytes added; the length (below 0: shorter by) */
};

/* A builder's argument: its frame carries an 802.1Q tag (VLAN_TCI). */
#define TAGGED 0x10000

struct frame_spec {
	struct l4_spec l4;			 /* when l4.proto is set */
	struct icmp_err_spec icmp;		 /* when icmp.type is set */
	void (*build)(struct frame *f, int arg); /* otherwise, called with arg */
	int arg;
	struct edit edit; /* then */
};

static void
build_l4(struct frame *f, const struct l4_spec *s)
{
	put_l2(f, s->tagged ? VLAN_TCI : -1, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, s->proto, CLIENT, VIP, s->ihl ? s->ihl : 5);
	if (s->proto == LB_IPPROTO_TCP)
		put_tcp(f, CPORT, VPORT, LB_TCP_SYN, s->tcp_opt_words);
	else
		put_udp(f, CPORT, VPORT);
	put_payload(f, s->pay, 0xab);
	finish(f);
}

static void
build_icmp_err(struct frame *f, const struct icmp_err_spec *s)
{
	put_eth(f, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_ICMP, ROUTER, VIP, 5);
	put_icmp(f, s->type, s->code,
		s->type == LB_ICMP_UNREACH && s->code == LB_ICMP_UNREACH_NEEDFRAG ? 1400 : 0);
	f->quote = put_ipv4(f, s->qproto, VIP, CLIENT, s->qihl ? s->qihl : 5);
	ip_fix(f, f->quote, 1500);
	put_ports(f, VPORT, CPORT, s->qbytes);
	finish(f);
}

static void
apply(struct frame *f, const struct edit *e)
{
	uint32_t hdr;
	uint8_t *p;

	if (e->fn != NULL) {
		e->fn(f, e->value);
		return;
	}
	if (e->at == 0)
		return;
	if (e->at == AT_END) {
		put_payload(f, (uint32_t)e->value, e->fill);
		return;
	}
	if (e->at == AT_LEN) {
		f->len = e->value >= 0 ? (uint32_t)e->value : f->len - (uint32_t)-e->value;
		return;
	}
	hdr = e->at == AT_L3 ? f->l3 : e->at == AT_L4 ? f->l4 : f->quote;
	p = f->b + hdr + e->off;
	if (e->size == 1) {
		p[0] = (uint8_t)e->value;
	} else {
		p[0] = (uint8_t)(e->value >> 8);
		p[1] = (uint8_t)e->value;
	}
	if (e->recsum)
		ip_recsum(f);
}

static void
build(struct frame *f, const struct frame_spec *s)
{
	if (s->build != NULL)
		s->build(f, s->arg);
	else if (s->icmp.type != 0)
		build_icmp_err(f, &s->icmp);
	else
		build_l4(f, &s->l4);
	apply(f, &s->edit);
}

/* Client pings the VIP: an ICMP message of that type, echo-shaped. */
static void
build_echo(struct frame *f, int type)
{
	put_eth(f, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_ICMP, CLIENT, VIP, 5);
	put_icmp(f, (uint8_t)type, 0, (uint32_t)ECHO_ID << 16 | 1);
	put_payload(f, 16, 0x5a);
	finish(f);
}

/* Router asks who has the VIP (op: LB_ARP_OP_*, with TAGGED or not). */
static void
build_arp(struct frame *f, int op)
{
	struct lb_arp_hdr *a;
	lb_be32_t spa = lb_cpu_to_be32(ROUTER), tpa = lb_cpu_to_be32(VIP);

	put_l2(f, op & TAGGED ? VLAN_TCI : -1, LB_ETHERTYPE_ARP);
	f->l3 = f->len;
	a = (struct lb_arp_hdr *)put(f, sizeof(*a));
	a->hrd = lb_cpu_to_be16(LB_ARP_HRD_ETHER);
	a->pro = lb_cpu_to_be16(LB_ETHERTYPE_IPV4);
	a->hln = LB_ETH_ALEN;
	a->pln = 4;
	a->op = lb_cpu_to_be16((uint16_t)op);
	memcpy(a->sha, router_mac, LB_ETH_ALEN);
	memcpy(&a->spa, &spa, 4);
	memcpy(&a->tpa, &tpa, 4);
}

/* --- Frames no spec describes --------------------------------------------- */

/* Two tags, the outer one of type outer, around a UDP datagram. */
static void
build_two_tags(struct frame *f, int outer)
{
	put_eth(f, (uint16_t)outer);
	put_vlan(f, 100, LB_ETHERTYPE_VLAN);
	put_vlan(f, 200, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_UDP, CLIENT, VIP, 5);
	put_udp(f, CPORT, VPORT);
	finish(f);
}

/* An 802.1Q tag that announces an 802.1ad one. */
static void
build_vlan_then_qinq(struct frame *f, int arg)
{
	(void)arg;
	put_eth(f, LB_ETHERTYPE_VLAN);
	put_vlan(f, 100, LB_ETHERTYPE_QINQ);
	put_payload(f, 60, 0);
}

/* 60 bytes under another ethertype (with TAGGED: behind a tag); an IPv6
 * payload starts with its version nibble. */
static void
build_ethertype(struct frame *f, int type)
{
	put_l2(f, type & TAGGED ? VLAN_TCI : -1, (uint16_t)type);
	put_payload(f, 60, (type & 0xffff) == LB_ETHERTYPE_IPV6 ? 0x60 : 0);
}

/* 24 bytes of IP in the frame, IHL claims 28. */
static void
build_ihl_one_word_past(struct frame *f, int arg)
{
	(void)arg;
	put_eth(f, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_TCP, CLIENT, VIP, 6);
	ip_fix(f, f->l3, 24);
	ip_at(f, f->l3)->ver_ihl = 0x47;
}

/* --- Edits: the one thing a case changes ---------------------------------- */

/* The outer total length set to the datagram's length plus v. */
static void
e_tot_plus(struct frame *f, int v)
{
	ip_set_tot(f, (uint32_t)((int)(f->len - f->l3) + v));
}

/* The outer header checksum broken: one checksum bit, or a bit of byte v of the header. */
static void
e_bad_csum(struct frame *f, int v)
{
	(void)v;
	ip_at(f, f->l3)->csum ^= lb_cpu_to_be16(0x0100);
}

static void
e_flip_hdr_byte(struct frame *f, int v)
{
	f->b[f->l3 + (uint32_t)v] ^= 0x80;
}

/* Padding holds the last UDP byte: the UDP length must fit the IP payload. */
static void
e_udp_len_past_ip(struct frame *f, int v)
{
	(void)v;
	put_payload(f, 10, 0);
	ip_set_tot(f, 20 + 8 + 9);
}

/* The quote v bytes shorter, the outer datagram closed again around it. */
static void
e_quote_shorten(struct frame *f, int v)
{
	f->len -= (uint32_t)v;
	finish(f);
}

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

/* clang-format off */
/* client:5555 -> VIP:80, TCP SYN or UDP (l4_spec), and the tuple it parses to */
#define TCP(...) .l4 = {.proto = LB_IPPROTO_TCP, __VA_ARGS__}
#define UDP(...) .l4 = {.proto = LB_IPPROTO_UDP, __VA_ARGS__}
#define FWD(proto) {CLIENT, VIP, CPORT, VPORT, LB_IPPROTO_##proto}
#define ECHO_TUPLE {CLIENT, VIP, ECHO_ID, ECHO_ID, LB_IPPROTO_ICMP}
/* ICMP errors (icmp_err_spec) */
#define UNREACH(c, ...) .icmp = {.type = LB_ICMP_UNREACH, .code = (c), __VA_ARGS__}
#define FRAG_NEEDED(...) UNREACH(LB_ICMP_UNREACH_NEEDFRAG, __VA_ARGS__)
#define PORT_UNREACH(...) UNREACH(3, __VA_ARGS__)
#define TIME_EXCEEDED(c, ...) .icmp = {.type = LB_ICMP_TIME_EXCEEDED, .code = (c), __VA_ARGS__}
#define QTCP8 .qproto = LB_IPPROTO_TCP, .qbytes = 8 /* the quote: IPv4 + 8 bytes of TCP */
/* Edits (struct edit): a field of a header set, or a function called */
#define FIELD(at_, type, field, v, fix) {.at = (at_), .off = offsetof(type, field), \
	.size = sizeof(((type *)0)->field), .recsum = (fix), .value = (v)}
#define IP_FIELD(field, v) FIELD(AT_L3, struct lb_ipv4_hdr, field, v, true)
#define IP_FIELD_RAW(field, v) FIELD(AT_L3, struct lb_ipv4_hdr, field, v, false) /* checksum left */
#define ARP_FIELD(field, v) FIELD(AT_L3, struct lb_arp_hdr, field, v, false)
#define TCP_FIELD(field, v) FIELD(AT_L4, struct lb_tcp_hdr, field, v, false)
#define UDP_FIELD(field, v) FIELD(AT_L4, struct lb_udp_hdr, field, v, false)
#define QUOTE_FIELD(field, v) FIELD(AT_QUOTE, struct lb_ipv4_hdr, field, v, false)
#define APPEND(n, fill_) {.at = AT_END, .value = (n), .fill = (fill_)}
#define CUT_TO(n) {.at = AT_LEN, .value = (n)}
#define SHORTEN(n) {.at = AT_LEN, .value = -(n)}
#define EDIT(fn_, v) {.fn = (fn_), .value = (v)}
/* Frames of their own builders */
#define ARP(op) .build = build_arp, .arg = (op)
#define ECHO(type) .build = build_echo, .arg = (type)
/* clang-format on */

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

Test(parse, table)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct frame f = {0};
		struct lb_pkt pkt;
		int rc;

		build(&f, &c->frame);
		rc = parse_exact(f.b, f.len, &pkt);
		cr_expect_eq(rc, c->want, "%s: got %d (%s), want %d (%s)", c->desc, rc,
			lb_drop_name(rc), c->want, lb_drop_name(c->want));
		if (rc != 0 || c->want != 0)
			continue;
		cr_expect_eq(pkt.kind, c->kind, "%s: kind %u, want %u", c->desc, pkt.kind, c->kind);
		expect_layout(c->desc, &f, &pkt);
		if (c->kind != LB_PKT_ARP)
			expect_tuple(c->desc, &pkt, &c->tuple);
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
				int rc;

				snprintf(desc, sizeof(desc), "IHL %u, %s, %s", ihl,
					tagged ? "tagged" : "untagged", p ? "UDP" : "TCP");
				build_l4(&f, &(struct l4_spec){.proto = proto,
						     .tagged = tagged,
						     .ihl = ihl,
						     .pay = 7});
				rc = parse_exact(f.b, f.len, &pkt);
				cr_expect_eq(rc, 0, "%s: got %s", desc, lb_drop_name(rc));
				if (rc != 0)
					continue;
				cr_expect_eq(pkt.l4_off, (tagged ? 18u : 14u) + ihl * 4u,
					"%s: l4_off %u", desc, pkt.l4_off);
				expect_layout(desc, &f, &pkt);
				expect_tuple(desc, &pkt, p ? &udp : &tcp);
			}
		}
		{
			struct frame f = {0};
			struct lb_pkt pkt;
			char desc[64];
			int rc;

			snprintf(desc, sizeof(desc), "quote with IHL %u", ihl);
			build_icmp_err(&f, &(struct icmp_err_spec){.type = LB_ICMP_UNREACH,
						   .code = LB_ICMP_UNREACH_NEEDFRAG,
						   .qproto = LB_IPPROTO_TCP,
						   .qihl = ihl,
						   .qbytes = 8});
			rc = parse_exact(f.b, f.len, &pkt);
			cr_expect_eq(rc, 0, "%s: got %s", desc, lb_drop_name(rc));
			if (rc != 0)
				continue;
			cr_expect_eq(pkt.kind, LB_PKT_ICMP_ERR, "%s: kind %u", desc, pkt.kind);
			expect_layout(desc, &f, &pkt);
			expect_tuple(desc, &pkt, &tcp);
		}
	}
}

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
Test(parse, every_prefix)
{
	size_t i;

	for (i = 0; i < N_TRUNC; i++) {
		struct frame f;
		uint32_t len, ihl = trunc_frame(i, &f);

		for (len = 0; len <= f.len; len++) {
			struct lb_pkt pkt;
			int rc = parse_exact(f.b, len, &pkt), want;

			if (len < f.l3 + sizeof(struct lb_ipv4_hdr))
				want = LB_DROP_TRUNCATED;
			else if (len < f.l3 + ihl)
				want = LB_DROP_IP_IHL;
			else if (len < f.len)
				want = LB_DROP_IP_LEN;
			else
				want = 0;
			cr_expect_eq(rc, want, "%s cut to %u of %u bytes: got %s, want %s",
				trunc_frames[i].name, len, f.len, lb_drop_name(rc),
				lb_drop_name(want));
		}
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
			struct lb_pkt pkt;
			int rc, want;

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
			rc = parse_exact(f.b, f.len, &pkt);
			cr_expect_eq(rc, want,
				"%s, datagram cut to %u of %u bytes: got %s, want %s",
				trunc_frames[i].name, len, full.len, lb_drop_name(rc),
				lb_drop_name(want));
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
