/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_parse(): a table of hand-built frames and their verdicts, every
 * truncation of a few good frames, then random frames and random one-byte
 * mutations of good ones.
 *
 * Frames are built field by field, so a case names the one thing it changes
 * and the builder keeps everything else (lengths, checksums) right. The parser
 * always reads from a heap copy of exactly len bytes: under AddressSanitizer a
 * read past the frame is a crash instead of a lucky pass. Random tests use a
 * fixed seed so that a failure reproduces.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_csum.h"
#include "lb_drop.h"
#include "lb_hdr.h"
#include "lb_parse.h"

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

/*
 * Parse f[0..len) from a heap block of exactly len bytes, so that ASan traps
 * the first byte read past the end. Also proves the parser writes nothing.
 */
static int
parse_exact(const uint8_t *frame, uint32_t len, struct lb_pkt *pkt)
{
	uint8_t *h = malloc(len);
	int rc;

	cr_assert(h != NULL || len == 0, "malloc");
	if (len)
		memcpy(h, frame, len);
	rc = lb_parse(h, len, pkt);
	cr_assert(len == 0 || memcmp(h, frame, len) == 0, "lb_parse wrote into the frame");
	free(h);
	return rc;
}

/* --- Frame builder --------------------------------------------------------- */

static uint8_t *
put(struct frame *f, uint32_t n)
{
	uint8_t *p = f->b + f->len;

	cr_assert_leq(f->len + n, FRAME_MAX, "test frame overflows its buffer");
	memset(p, 0, n);
	f->len += n;
	return p;
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

static struct lb_arp_hdr *
arp_of(struct frame *f)
{
	return (struct lb_arp_hdr *)(f->b + f->l3);
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

/* client:5555 -> VIP:80 carrying pay bytes; untagged when tci < 0. */
static void
build_l4(struct frame *f, int tci, uint8_t proto, uint8_t ihl, uint8_t tcp_opt_words, uint32_t pay)
{
	put_l2(f, tci, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, proto, CLIENT, VIP, ihl);
	if (proto == LB_IPPROTO_TCP)
		put_tcp(f, CPORT, VPORT, LB_TCP_SYN, tcp_opt_words);
	else
		put_udp(f, CPORT, VPORT);
	put_payload(f, pay, 0xab);
	finish(f);
}

/*
 * Router -> VIP: an ICMP error about a packet VIP:80 -> client:5555, quoting
 * its IPv4 header (qihl words) and qbytes of its L4 header. The quoted
 * datagram was a full 1500-byte packet, as for a "fragmentation needed".
 */
static void
build_icmp_err(
	struct frame *f, uint8_t type, uint8_t code, uint8_t qproto, uint8_t qihl, uint32_t qbytes)
{
	put_eth(f, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_ICMP, ROUTER, VIP, 5);
	put_icmp(f, type, code,
		type == LB_ICMP_UNREACH && code == LB_ICMP_UNREACH_NEEDFRAG ? 1400 : 0);
	f->quote = put_ipv4(f, qproto, VIP, CLIENT, qihl);
	ip_fix(f, f->quote, 1500);
	put_ports(f, VPORT, CPORT, qbytes);
	finish(f);
}

static void
build_echo(struct frame *f, uint8_t type)
{
	put_eth(f, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_ICMP, CLIENT, VIP, 5);
	put_icmp(f, type, 0, (uint32_t)ECHO_ID << 16 | 1);
	put_payload(f, 16, 0x5a);
	finish(f);
}

/* Router asks who has the VIP. */
static void
build_arp(struct frame *f, int tci, uint16_t op)
{
	struct lb_arp_hdr *a;
	lb_be32_t spa = lb_cpu_to_be32(ROUTER), tpa = lb_cpu_to_be32(VIP);

	put_l2(f, tci, LB_ETHERTYPE_ARP);
	f->l3 = f->len;
	a = (struct lb_arp_hdr *)put(f, sizeof(*a));
	a->hrd = lb_cpu_to_be16(LB_ARP_HRD_ETHER);
	a->pro = lb_cpu_to_be16(LB_ETHERTYPE_IPV4);
	a->hln = LB_ETH_ALEN;
	a->pln = 4;
	a->op = lb_cpu_to_be16(op);
	memcpy(a->sha, router_mac, LB_ETH_ALEN);
	memcpy(&a->spa, &spa, 4);
	memcpy(&a->tpa, &tpa, 4);
}

/* --- The table ------------------------------------------------------------ */

struct tuple {
	uint32_t src, dst; /* host order */
	uint16_t sport, dport;
	uint8_t proto;
};

struct parse_case {
	const char *desc;
	void (*build)(struct frame *f);
	int want; /* 0 or enum lb_drop */
	uint8_t kind;
	struct tuple tuple; /* checked when want == 0 and kind != ARP */
	void (*check)(const char *desc, const struct lb_pkt *pkt);
};

/* clang-format off */
#define FWD(proto) {CLIENT, VIP, CPORT, VPORT, LB_IPPROTO_##proto}
#define ECHO_TUPLE {CLIENT, VIP, ECHO_ID, ECHO_ID, LB_IPPROTO_ICMP}
/* clang-format on */

static void
c_tcp(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_TCP, 5, 0, 10);
}

static void
c_udp(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_UDP, 5, 0, 10);
}

static void
c_udp_empty(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_UDP, 5, 0, 0);
}

static void
c_vlan_tcp(struct frame *f)
{
	build_l4(f, VLAN_TCI, LB_IPPROTO_TCP, 5, 0, 10);
}

static void
c_ip_opts_tcp(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_TCP, 15, 0, 10);
}

static void
c_ip_opts_vlan_udp(struct frame *f)
{
	build_l4(f, VLAN_TCI, LB_IPPROTO_UDP, 6, 0, 10);
}

static void
c_tcp_opts(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_TCP, 5, 10, 0);
}

/* A bare SYN is 54 bytes; the NIC pads it to the 60-byte minimum. */
static void
c_tcp_padded(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_TCP, 5, 0, 0);
	put_payload(f, 6, 0);
}

static void
c_udp_trailer(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_UDP, 5, 0, 3);
	put_payload(f, 40, 0xff);
}

static void
c_df_clear(struct frame *f)
{
	c_tcp(f);
	ip_at(f, f->l3)->frag_off = 0;
	ip_recsum(f);
}

static void
c_ttl1(struct frame *f)
{
	c_tcp(f);
	ip_at(f, f->l3)->ttl = 1;
	ip_recsum(f);
}

static void
c_runt(struct frame *f)
{
	c_tcp(f);
	f->len = 13;
}

static void
c_vlan_runt(struct frame *f)
{
	c_vlan_tcp(f);
	f->len = 16;
}

static void
c_vlan_in_vlan(struct frame *f)
{
	put_eth(f, LB_ETHERTYPE_VLAN);
	put_vlan(f, 100, LB_ETHERTYPE_VLAN);
	put_vlan(f, 200, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_UDP, CLIENT, VIP, 5);
	put_udp(f, CPORT, VPORT);
	finish(f);
}

static void
c_qinq(struct frame *f)
{
	put_eth(f, LB_ETHERTYPE_QINQ);
	put_vlan(f, 100, LB_ETHERTYPE_VLAN);
	put_vlan(f, 200, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_UDP, CLIENT, VIP, 5);
	put_udp(f, CPORT, VPORT);
	finish(f);
}

static void
c_vlan_then_qinq(struct frame *f)
{
	put_eth(f, LB_ETHERTYPE_VLAN);
	put_vlan(f, 100, LB_ETHERTYPE_QINQ);
	put_payload(f, 60, 0);
}

static void
c_ipv6(struct frame *f)
{
	put_eth(f, LB_ETHERTYPE_IPV6);
	put_payload(f, 60, 0x60);
}

static void
c_vlan_ipv6(struct frame *f)
{
	put_l2(f, VLAN_TCI, LB_ETHERTYPE_IPV6);
	put_payload(f, 60, 0x60);
}

static void
c_lldp(struct frame *f)
{
	put_eth(f, 0x88cc);
	put_payload(f, 60, 0);
}

static void
c_vlan_unknown(struct frame *f)
{
	put_l2(f, VLAN_TCI, 0x9000);
	put_payload(f, 60, 0);
}

static void
c_version6(struct frame *f)
{
	c_tcp(f);
	ip_at(f, f->l3)->ver_ihl = 0x65;
	ip_recsum(f);
}

static void
c_version0(struct frame *f)
{
	c_tcp(f);
	ip_at(f, f->l3)->ver_ihl = 0x05;
	ip_recsum(f);
}

/* IHL below 5: no checksum to fix, the header has no valid length. */
static void
c_ihl4(struct frame *f)
{
	c_tcp(f);
	ip_at(f, f->l3)->ver_ihl = 0x44;
}

static void
c_ihl0(struct frame *f)
{
	c_tcp(f);
	ip_at(f, f->l3)->ver_ihl = 0x40;
}

/* A 42-byte UDP frame has 28 bytes of IP; IHL 15 claims 60. */
static void
c_ihl_past_frame(struct frame *f)
{
	c_udp_empty(f);
	ip_at(f, f->l3)->ver_ihl = 0x4f;
}

/* 24 bytes of IP in the frame, IHL claims 28. */
static void
c_ihl_one_word_past(struct frame *f)
{
	put_eth(f, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_TCP, CLIENT, VIP, 6);
	ip_fix(f, f->l3, 24);
	ip_at(f, f->l3)->ver_ihl = 0x47;
}

static void
c_tot_past_frame(struct frame *f)
{
	c_tcp(f);
	ip_set_tot(f, f->len - f->l3 + 1);
}

static void
c_tot_below_ihl(struct frame *f)
{
	c_tcp(f);
	ip_set_tot(f, 19);
}

static void
c_tot_below_opts(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_TCP, 6, 0, 10);
	ip_set_tot(f, 20);
}

/* What a TSO-sized packet carries; never valid on the wire. */
static void
c_tot_zero(struct frame *f)
{
	c_tcp(f);
	ip_set_tot(f, 0);
}

static void
c_bad_csum(struct frame *f)
{
	c_tcp(f);
	ip_at(f, f->l3)->csum ^= lb_cpu_to_be16(0x0100);
}

static void
c_bad_csum_opts(struct frame *f)
{
	c_ip_opts_tcp(f);
	f->b[f->l3 + 40] ^= 0x80; /* an option byte the checksum covers */
}

static void
c_first_fragment(struct frame *f)
{
	c_tcp(f);
	ip_at(f, f->l3)->frag_off = lb_cpu_to_be16(LB_IPV4_MF);
	ip_recsum(f);
}

static void
c_later_fragment(struct frame *f)
{
	c_udp(f);
	ip_at(f, f->l3)->frag_off = lb_cpu_to_be16(185); /* offset 1480 */
	ip_recsum(f);
}

static void
c_middle_fragment(struct frame *f)
{
	c_udp(f);
	ip_at(f, f->l3)->frag_off = lb_cpu_to_be16(LB_IPV4_MF | 1);
	ip_recsum(f);
}

static void
set_proto(struct frame *f, uint8_t proto)
{
	c_tcp(f);
	ip_at(f, f->l3)->proto = proto;
	ip_recsum(f);
}

static void
c_ipip(struct frame *f)
{
	set_proto(f, LB_IPPROTO_IPIP);
}

static void
c_6in4(struct frame *f)
{
	set_proto(f, LB_IPPROTO_IPV6);
}

static void
c_gre(struct frame *f)
{
	set_proto(f, 47);
}

static void
c_sctp(struct frame *f)
{
	set_proto(f, 132);
}

static void
c_tcp_doff4(struct frame *f)
{
	c_tcp(f);
	tcp_of(f)->data_off = 4 << 4;
}

static void
c_tcp_doff0(struct frame *f)
{
	c_tcp(f);
	tcp_of(f)->data_off = 0;
}

/* 30-byte segment, data offset 60. */
static void
c_tcp_doff_past(struct frame *f)
{
	c_tcp(f);
	tcp_of(f)->data_off = 15 << 4;
}

/* Options run into the Ethernet padding: only the IP total length counts. */
static void
c_tcp_opts_past_ip(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_TCP, 5, 3, 0);
	ip_set_tot(f, f->len - f->l3 - 4);
}

static void
c_tcp_short(struct frame *f)
{
	c_tcp(f);
	ip_set_tot(f, 20 + 19);
}

static void
c_udp_len7(struct frame *f)
{
	c_udp(f);
	udp_of(f)->len = lb_cpu_to_be16(7);
}

static void
c_udp_len0(struct frame *f)
{
	c_udp(f);
	udp_of(f)->len = 0;
}

static void
c_udp_len_past(struct frame *f)
{
	c_udp(f);
	udp_of(f)->len = lb_cpu_to_be16(8 + 10 + 1);
}

/* Padding holds the last UDP byte: the UDP length must fit the IP payload. */
static void
c_udp_len_past_ip(struct frame *f)
{
	c_udp(f);
	put_payload(f, 10, 0);
	ip_set_tot(f, 20 + 8 + 9);
}

static void
c_udp_short(struct frame *f)
{
	c_udp(f);
	ip_set_tot(f, 20 + 7);
}

static void
c_arp_request(struct frame *f)
{
	build_arp(f, -1, LB_ARP_OP_REQUEST);
}

static void
c_arp_reply(struct frame *f)
{
	build_arp(f, -1, LB_ARP_OP_REPLY);
}

static void
c_arp_vlan(struct frame *f)
{
	build_arp(f, VLAN_TCI, LB_ARP_OP_REQUEST);
}

static void
c_arp_padded(struct frame *f)
{
	build_arp(f, -1, LB_ARP_OP_REQUEST);
	put_payload(f, 18, 0);
}

static void
c_arp_hln8(struct frame *f)
{
	build_arp(f, -1, LB_ARP_OP_REQUEST);
	arp_of(f)->hln = 8;
}

static void
c_arp_pln16(struct frame *f)
{
	build_arp(f, -1, LB_ARP_OP_REQUEST);
	arp_of(f)->pln = 16;
}

static void
c_arp_hrd_ieee802(struct frame *f)
{
	build_arp(f, -1, LB_ARP_OP_REQUEST);
	arp_of(f)->hrd = lb_cpu_to_be16(6);
}

static void
c_arp_pro_ipv6(struct frame *f)
{
	build_arp(f, -1, LB_ARP_OP_REQUEST);
	arp_of(f)->pro = lb_cpu_to_be16(LB_ETHERTYPE_IPV6);
}

static void
c_arp_short(struct frame *f)
{
	build_arp(f, -1, LB_ARP_OP_REQUEST);
	f->len--;
}

static void
c_echo(struct frame *f)
{
	build_echo(f, LB_ICMP_ECHO);
}

static void
c_echo_reply(struct frame *f)
{
	build_echo(f, LB_ICMP_ECHO_REPLY);
}

static void
c_redirect(struct frame *f)
{
	build_echo(f, 5);
}

static void
c_icmp_short(struct frame *f)
{
	build_echo(f, LB_ICMP_ECHO);
	ip_set_tot(f, 20 + 7);
}

static void
c_port_unreach(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, 3, LB_IPPROTO_TCP, 5, 8);
}

static void
c_frag_needed(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, LB_ICMP_UNREACH_NEEDFRAG, LB_IPPROTO_TCP, 5, 8);
}

static void
c_time_exceeded(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_TIME_EXCEEDED, 0, LB_IPPROTO_TCP, 5, 8);
}

static void
c_param_problem(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_PARAM_PROBLEM, 0, LB_IPPROTO_TCP, 5, 8);
}

static void
c_unreach_udp(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, 3, LB_IPPROTO_UDP, 5, 8);
}

static void
c_quote_opts(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, LB_ICMP_UNREACH_NEEDFRAG, LB_IPPROTO_TCP, 15, 8);
}

static void
c_quote_ip_only(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, LB_ICMP_UNREACH_NEEDFRAG, LB_IPPROTO_TCP, 5, 0);
}

static void
c_quote_3_bytes(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, LB_ICMP_UNREACH_NEEDFRAG, LB_IPPROTO_TCP, 5, 3);
}

static void
c_quote_19_bytes(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, LB_ICMP_UNREACH_NEEDFRAG, LB_IPPROTO_TCP, 5, 0);
	f->len--;
	finish(f);
}

/* Options of the quoted header are quoted, its ports are not. */
static void
c_quote_opts_no_ports(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, LB_ICMP_UNREACH_NEEDFRAG, LB_IPPROTO_TCP, 15, 0);
}

static void
c_quote_icmp(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, 3, LB_IPPROTO_ICMP, 5, 8);
}

static void
c_quote_v6(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, 3, LB_IPPROTO_TCP, 5, 8);
	ip_at(f, f->quote)->ver_ihl = 0x65;
}

static void
c_quote_ihl4(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, 3, LB_IPPROTO_TCP, 5, 8);
	ip_at(f, f->quote)->ver_ihl = 0x44;
}

static void
c_quote_later_fragment(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_TIME_EXCEEDED, 1, LB_IPPROTO_UDP, 5, 8);
	ip_at(f, f->quote)->frag_off = lb_cpu_to_be16(185);
}

/* The ports sit in Ethernet padding, past the outer IP total length. */
static void
c_quote_past_ip(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_UNREACH, 3, LB_IPPROTO_TCP, 5, 8);
	ip_set_tot(f, f->len - f->l3 - 8);
}

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

static const struct parse_case cases[] = {
	/* Forwarded traffic. */
	{"TCP SYN client to VIP", c_tcp, 0, LB_PKT_L4, FWD(TCP), check_syn},
	{"UDP client to VIP", c_udp, 0, LB_PKT_L4, FWD(UDP), NULL},
	{"UDP header only", c_udp_empty, 0, LB_PKT_L4, FWD(UDP), NULL},
	{"802.1Q-tagged TCP", c_vlan_tcp, 0, LB_PKT_L4, FWD(TCP), check_vlan},
	{"IPv4 options, IHL 15", c_ip_opts_tcp, 0, LB_PKT_L4, FWD(TCP), NULL},
	{"IPv4 options, IHL 6, tagged UDP", c_ip_opts_vlan_udp, 0, LB_PKT_L4, FWD(UDP), check_vlan},
	{"TCP options, data offset 15", c_tcp_opts, 0, LB_PKT_L4, FWD(TCP), NULL},
	{"SYN padded to 60 bytes", c_tcp_padded, 0, LB_PKT_L4, FWD(TCP), NULL},
	{"UDP with 40 bytes of trailer", c_udp_trailer, 0, LB_PKT_L4, FWD(UDP), NULL},
	{"DF clear", c_df_clear, 0, LB_PKT_L4, FWD(TCP), check_df_clear},
	{"TTL 1 is reported, not judged", c_ttl1, 0, LB_PKT_L4, FWD(TCP), check_ttl1},

	/* Layer 2. */
	{"13-byte runt", c_runt, LB_DROP_TRUNCATED, 0, {0}, NULL},
	{"tag announced, frame ends inside it", c_vlan_runt, LB_DROP_TRUNCATED, 0, {0}, NULL},
	{"802.1Q inside 802.1Q", c_vlan_in_vlan, LB_DROP_VLAN_STACKED, 0, {0}, NULL},
	{"802.1ad S-tag outside", c_qinq, LB_DROP_VLAN_STACKED, 0, {0}, NULL},
	{"802.1ad inside 802.1Q", c_vlan_then_qinq, LB_DROP_VLAN_STACKED, 0, {0}, NULL},
	{"IPv6", c_ipv6, LB_DROP_IPV6, 0, {0}, NULL},
	{"tagged IPv6", c_vlan_ipv6, LB_DROP_IPV6, 0, {0}, NULL},
	{"LLDP", c_lldp, LB_DROP_ETHERTYPE, 0, {0}, NULL},
	{"tagged unknown ethertype", c_vlan_unknown, LB_DROP_ETHERTYPE, 0, {0}, NULL},

	/* IPv4 header. */
	{"version 6 under the IPv4 ethertype", c_version6, LB_DROP_IP_VERSION, 0, {0}, NULL},
	{"version 0", c_version0, LB_DROP_IP_VERSION, 0, {0}, NULL},
	{"IHL 4", c_ihl4, LB_DROP_IP_IHL, 0, {0}, NULL},
	{"IHL 0", c_ihl0, LB_DROP_IP_IHL, 0, {0}, NULL},
	{"IHL 15 in a 42-byte frame", c_ihl_past_frame, LB_DROP_IP_IHL, 0, {0}, NULL},
	{"IHL one word past the frame", c_ihl_one_word_past, LB_DROP_IP_IHL, 0, {0}, NULL},
	{"total length one past the frame", c_tot_past_frame, LB_DROP_IP_LEN, 0, {0}, NULL},
	{"total length 19", c_tot_below_ihl, LB_DROP_IP_LEN, 0, {0}, NULL},
	{"total length 20 with IHL 6", c_tot_below_opts, LB_DROP_IP_LEN, 0, {0}, NULL},
	{"total length 0 (TSO)", c_tot_zero, LB_DROP_IP_LEN, 0, {0}, NULL},
	{"bad header checksum", c_bad_csum, LB_DROP_IP_CSUM, 0, {0}, NULL},
	{"option byte flipped", c_bad_csum_opts, LB_DROP_IP_CSUM, 0, {0}, NULL},
	{"first fragment (MF)", c_first_fragment, LB_DROP_FRAGMENT, 0, {0}, NULL},
	{"last fragment (offset)", c_later_fragment, LB_DROP_FRAGMENT, 0, {0}, NULL},
	{"middle fragment (MF, offset)", c_middle_fragment, LB_DROP_FRAGMENT, 0, {0}, NULL},
	{"IP-in-IP", c_ipip, LB_DROP_TUNNEL, 0, {0}, NULL},
	{"IPv6-in-IPv4", c_6in4, LB_DROP_TUNNEL, 0, {0}, NULL},
	{"GRE", c_gre, LB_DROP_PROTO, 0, {0}, NULL},
	{"SCTP", c_sctp, LB_DROP_PROTO, 0, {0}, NULL},

	/* TCP and UDP headers. */
	{"TCP data offset 4", c_tcp_doff4, LB_DROP_L4_LEN, 0, {0}, NULL},
	{"TCP data offset 0", c_tcp_doff0, LB_DROP_L4_LEN, 0, {0}, NULL},
	{"TCP data offset past the segment", c_tcp_doff_past, LB_DROP_L4_LEN, 0, {0}, NULL},
	{"TCP options past IP length", c_tcp_opts_past_ip, LB_DROP_L4_LEN, 0, {0}, NULL},
	{"19-byte TCP segment", c_tcp_short, LB_DROP_L4_TRUNCATED, 0, {0}, NULL},
	{"UDP length 7", c_udp_len7, LB_DROP_L4_LEN, 0, {0}, NULL},
	{"UDP length 0", c_udp_len0, LB_DROP_L4_LEN, 0, {0}, NULL},
	{"UDP length past the datagram", c_udp_len_past, LB_DROP_L4_LEN, 0, {0}, NULL},
	{"UDP length past IP length", c_udp_len_past_ip, LB_DROP_L4_LEN, 0, {0}, NULL},
	{"7-byte UDP datagram", c_udp_short, LB_DROP_L4_TRUNCATED, 0, {0}, NULL},

	/* ARP. */
	{"ARP request", c_arp_request, 0, LB_PKT_ARP, {0}, check_arp_request},
	{"ARP reply", c_arp_reply, 0, LB_PKT_ARP, {0}, check_arp_reply},
	{"tagged ARP", c_arp_vlan, 0, LB_PKT_ARP, {0}, check_arp_vlan},
	{"ARP padded to 60 bytes", c_arp_padded, 0, LB_PKT_ARP, {0}, check_arp_request},
	{"ARP hln 8", c_arp_hln8, LB_DROP_ARP_MALFORMED, 0, {0}, NULL},
	{"ARP pln 16", c_arp_pln16, LB_DROP_ARP_MALFORMED, 0, {0}, NULL},
	{"ARP hrd IEEE 802", c_arp_hrd_ieee802, LB_DROP_ARP_MALFORMED, 0, {0}, NULL},
	{"ARP for IPv6", c_arp_pro_ipv6, LB_DROP_ARP_MALFORMED, 0, {0}, NULL},
	{"ARP one byte short", c_arp_short, LB_DROP_TRUNCATED, 0, {0}, NULL},

	/* ICMP. */
	{"echo request", c_echo, 0, LB_PKT_ICMP_ECHO, ECHO_TUPLE, NULL},
	{"echo reply", c_echo_reply, LB_DROP_ICMP_TYPE, 0, {0}, NULL},
	{"redirect", c_redirect, LB_DROP_ICMP_TYPE, 0, {0}, NULL},
	{"7-byte ICMP message", c_icmp_short, LB_DROP_L4_TRUNCATED, 0, {0}, NULL},
	{"port unreachable, TCP", c_port_unreach, 0, LB_PKT_ICMP_ERR, FWD(TCP), NULL},
	{"fragmentation needed, TCP", c_frag_needed, 0, LB_PKT_ICMP_ERR, FWD(TCP), NULL},
	{"time exceeded, TCP", c_time_exceeded, 0, LB_PKT_ICMP_ERR, FWD(TCP), NULL},
	{"parameter problem, TCP", c_param_problem, 0, LB_PKT_ICMP_ERR, FWD(TCP), NULL},
	{"port unreachable, UDP", c_unreach_udp, 0, LB_PKT_ICMP_ERR, FWD(UDP), NULL},
	{"quote with IHL 15", c_quote_opts, 0, LB_PKT_ICMP_ERR, FWD(TCP), NULL},
	{"quote of the IP header only", c_quote_ip_only, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
	{"quote with 3 bytes of ports", c_quote_3_bytes, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
	{"quote of 19 bytes", c_quote_19_bytes, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
	{"quote with options, no ports", c_quote_opts_no_ports, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
	{"quote of an ICMP packet", c_quote_icmp, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
	{"quote of version 6", c_quote_v6, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
	{"quote with IHL 4", c_quote_ihl4, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
	{"quote of a later fragment", c_quote_later_fragment, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
	{"quoted ports past IP length", c_quote_past_ip, LB_DROP_ICMP_QUOTE, 0, {0}, NULL},
};

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

		c->build(&f);
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
				build_l4(&f, tagged ? VLAN_TCI : -1, proto, ihl, 0, 7);
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
			build_icmp_err(&f, LB_ICMP_UNREACH, LB_ICMP_UNREACH_NEEDFRAG,
				LB_IPPROTO_TCP, ihl, 8);
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

static void
trunc_tcp(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_TCP, 5, 3, 10);
}

static void
trunc_tcp_ip_opts(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_TCP, 8, 0, 10);
}

static void
trunc_udp(struct frame *f)
{
	build_l4(f, -1, LB_IPPROTO_UDP, 5, 0, 10);
}

static void
trunc_vlan_tcp(struct frame *f)
{
	build_l4(f, VLAN_TCI, LB_IPPROTO_TCP, 5, 3, 10);
}

static void
trunc_icmp_err(struct frame *f)
{
	c_frag_needed(f);
}

/* clang-format off */
static void (*const trunc_frames[])(struct frame *) = {
	trunc_tcp, trunc_tcp_ip_opts, trunc_udp, trunc_vlan_tcp, trunc_icmp_err,
};

static const char *const trunc_names[] = {
	"TCP", "TCP with IP options", "UDP", "tagged TCP", "ICMP frag needed",
};
/* clang-format on */

/*
 * The frame cut at every length: the IP total length still claims the whole
 * datagram, so once the headers up to IHL are in, every prefix is IP_LEN.
 */
Test(parse, every_prefix)
{
	size_t i;

	for (i = 0; i < sizeof(trunc_frames) / sizeof(trunc_frames[0]); i++) {
		struct frame f = {0};
		uint32_t len, ihl;

		trunc_frames[i](&f);
		ihl = lb_ipv4_ihl(ip_at(&f, f.l3)) * 4u;
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
				trunc_names[i], len, f.len, lb_drop_name(rc), lb_drop_name(want));
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

	for (i = 0; i < sizeof(trunc_frames) / sizeof(trunc_frames[0]); i++) {
		struct frame full = {0};
		uint32_t len, ihl;

		trunc_frames[i](&full);
		ihl = lb_ipv4_ihl(ip_at(&full, full.l3)) * 4u;
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
				trunc_names[i], len, full.len, lb_drop_name(rc),
				lb_drop_name(want));
		}
	}
}

/* --- Random input ----------------------------------------------------------- */

#define RANDOM_FRAMES 200000
#define RANDOM_MUTATIONS 200000
#define RANDOM_MAX_LEN 300

static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t
rnd(uint64_t *s, uint32_t n)
{
	return (uint32_t)(splitmix64(s) % n);
}

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
	cr_assert(pkt->kind >= LB_PKT_L4 && pkt->kind <= LB_PKT_ARP, "%s %u: kind %u", what, iter,
		pkt->kind);
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

static void
mut_arp(struct frame *f)
{
	build_arp(f, VLAN_TCI, LB_ARP_OP_REQUEST);
}

static void
mut_echo(struct frame *f)
{
	c_echo(f);
}

static void
mut_udp_quote(struct frame *f)
{
	build_icmp_err(f, LB_ICMP_TIME_EXCEEDED, 0, LB_IPPROTO_UDP, 7, 8);
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
	static void (*const good[])(struct frame *) = {
		trunc_tcp,
		trunc_tcp_ip_opts,
		trunc_udp,
		trunc_vlan_tcp,
		trunc_icmp_err,
		c_ip_opts_vlan_udp,
		c_tcp_padded,
		mut_arp,
		mut_echo,
		mut_udp_quote,
	};
	const uint32_t n_good = sizeof(good) / sizeof(good[0]);
	struct frame frames[sizeof(good) / sizeof(good[0])];
	uint64_t rng = 0x5eed0002;
	uint32_t i, accepted = 0;

	for (i = 0; i < n_good; i++) {
		struct lb_pkt pkt;

		memset(&frames[i], 0, sizeof(frames[i]));
		good[i](&frames[i]);
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
