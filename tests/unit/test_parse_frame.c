/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_parse's frame builder: Ethernet (tagged or not), IPv4 with options,
 * TCP, UDP, ICMP echoes and errors with their quotes, ARP, and the edits a
 * row applies. Lengths and checksums are kept right, so a row changes only
 * what it names.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "test_parse_frame.h"
#include "test_parse_util.h"

static const uint8_t mux_mac[LB_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t router_mac[LB_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0xfe};

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

struct lb_ipv4_hdr *
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
void
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

struct lb_tcp_hdr *
tcp_of(struct frame *f)
{
	return (struct lb_tcp_hdr *)(f->b + f->l4);
}

struct lb_udp_hdr *
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

void
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

void
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

void
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
void
build_echo(struct frame *f, int type)
{
	put_eth(f, LB_ETHERTYPE_IPV4);
	f->l3 = put_ipv4(f, LB_IPPROTO_ICMP, CLIENT, VIP, 5);
	put_icmp(f, (uint8_t)type, 0, (uint32_t)ECHO_ID << 16 | 1);
	put_payload(f, 16, 0x5a);
	finish(f);
}

/* Router asks who has the VIP (op: LB_ARP_OP_*, with TAGGED or not). */
void
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
void
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
void
build_vlan_then_qinq(struct frame *f, int arg)
{
	(void)arg;
	put_eth(f, LB_ETHERTYPE_VLAN);
	put_vlan(f, 100, LB_ETHERTYPE_QINQ);
	put_payload(f, 60, 0);
}

/* 60 bytes under another ethertype (with TAGGED: behind a tag); an IPv6
 * payload starts with its version nibble. */
void
build_ethertype(struct frame *f, int type)
{
	put_l2(f, type & TAGGED ? VLAN_TCI : -1, (uint16_t)type);
	put_payload(f, 60, (type & 0xffff) == LB_ETHERTYPE_IPV6 ? 0x60 : 0);
}

/* 24 bytes of IP in the frame, IHL claims 28. */
void
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
void
e_tot_plus(struct frame *f, int v)
{
	ip_set_tot(f, (uint32_t)((int)(f->len - f->l3) + v));
}

/* The outer header checksum broken: one checksum bit, or a bit of byte v of the header. */
void
e_bad_csum(struct frame *f, int v)
{
	(void)v;
	ip_at(f, f->l3)->csum ^= lb_cpu_to_be16(0x0100);
}

void
e_flip_hdr_byte(struct frame *f, int v)
{
	f->b[f->l3 + (uint32_t)v] ^= 0x80;
}

/* Padding holds the last UDP byte: the UDP length must fit the IP payload. */
void
e_udp_len_past_ip(struct frame *f, int v)
{
	(void)v;
	put_payload(f, 10, 0);
	ip_set_tot(f, 20 + 8 + 9);
}

void
e_ip_option(struct frame *f, int v)
{
	uint8_t *o = f->b + f->l3 + 20 + ((uint32_t)v >> 16);

	o[0] = (uint8_t)v;	  /* type */
	o[1] = 7;		  /* one address */
	o[2] = (uint8_t)(v >> 8); /* the pointer: 4 the address, 8 past it */
	memcpy(o + 3, "\x0a\x09\x09\x09", 4);
	ip_recsum(f);
}

/* The quote v bytes shorter, the outer datagram closed again around it. */
void
e_quote_shorten(struct frame *f, int v)
{
	f->len -= (uint32_t)v;
	finish(f);
}
