/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"

static const char *const lb_drop_names[] = {[LB_DROP_NONE] = "none",
#define LB_DROP_NAME(name, str) [LB_DROP_##name] = str,
	LB_DROP_MAP(LB_DROP_NAME)
#undef LB_DROP_NAME
};

const char *
lb_drop_name(enum lb_drop reason)
{
	if ((unsigned)reason >= LB_DROP_MAX)
		return "unknown";
	return lb_drop_names[reason];
}

static int
parse_arp(const uint8_t *p, uint32_t len, struct lb_pkt *pkt)
{
	const struct lb_arp_hdr *arp = (const struct lb_arp_hdr *)(p + pkt->l2_len);

	/* Frame too short for Ethernet/IPv4 ARP. */
	if (len < pkt->l2_len + sizeof(*arp))
		return LB_DROP_TRUNCATED;
	/* Some other hardware or protocol family: not ours to answer. */
	if (arp->hrd != lb_cpu_to_be16(LB_ARP_HRD_ETHER) ||
		arp->pro != lb_cpu_to_be16(LB_ETHERTYPE_IPV4) || arp->hln != LB_ETH_ALEN ||
		arp->pln != 4)
		return LB_DROP_ARP_MALFORMED;
	pkt->kind = LB_PKT_ARP;
	pkt->arp_op = lb_be16_to_cpu(arp->op);
	memcpy(&pkt->arp_spa, &arp->spa, 4);
	memcpy(&pkt->arp_tpa, &arp->tpa, 4);
	return 0;
}

/*
 * The quoted header of an ICMP error: at least the IP header and the four
 * bytes of L4 that hold the ports (RFC 792 promises eight), from a TCP or UDP
 * first fragment. Whether the quote was sent by the address the error is
 * addressed to is the caller's to judge (pkt->ip_dst keeps that address).
 */
static int
parse_quote(const uint8_t *p, uint32_t end, struct lb_pkt *pkt)
{
	const struct lb_ipv4_hdr *q;
	uint32_t off = pkt->l4_off + sizeof(struct lb_icmp_hdr);
	uint32_t qhl;
	lb_be16_t ports[2];

	/* Quote shorter than an IPv4 header. */
	if (end < off + sizeof(*q))
		return LB_DROP_ICMP_QUOTE;
	q = (const struct lb_ipv4_hdr *)(p + off);
	qhl = (uint32_t)lb_ipv4_ihl(q) * 4;
	/* Quoted header is not IPv4, or claims a length below the minimum. */
	if (lb_ipv4_version(q) != 4 || qhl < 20)
		return LB_DROP_ICMP_QUOTE;
	/* Quote ends before the ports. */
	if (end < off + qhl + 4)
		return LB_DROP_ICMP_QUOTE;
	/* A later fragment carries no ports; only TCP and UDP are balanced. */
	if ((lb_be16_to_cpu(q->frag_off) & LB_IPV4_OFFMASK) != 0 ||
		(q->proto != LB_IPPROTO_TCP && q->proto != LB_IPPROTO_UDP))
		return LB_DROP_ICMP_QUOTE;
	memcpy(ports, p + off + qhl, 4);
	pkt->quote_off = (uint16_t)off;
	pkt->quote_l4_off = (uint16_t)(off + qhl);
	pkt->proto = q->proto;
	/* The quote travelled VIP -> client: turn it around. */
	memcpy(&pkt->src, &q->dst, 4);
	memcpy(&pkt->dst, &q->src, 4);
	pkt->sport = ports[1];
	pkt->dport = ports[0];
	pkt->kind = LB_PKT_ICMP_ERR;
	return 0;
}

/* The ICMP or ICMPv6 header at l4_off, or NULL when the frame ends inside it. */
static const struct lb_icmp_hdr *
icmp_hdr(const uint8_t *p, uint32_t end, const struct lb_pkt *pkt)
{
	/* Not even the fixed ICMP header. */
	if (end < pkt->l4_off + sizeof(struct lb_icmp_hdr))
		return NULL;
	return (const struct lb_icmp_hdr *)(p + pkt->l4_off);
}

/* An echo request of either family: a flow keyed by its identifier both ways. */
static int
parse_echo(const struct lb_icmp_hdr *icmp, struct lb_pkt *pkt)
{
	pkt->kind = LB_PKT_ICMP_ECHO;
	pkt->sport = icmp->echo.id;
	pkt->dport = icmp->echo.id;
	return 0;
}

static int
parse_icmp(const uint8_t *p, uint32_t end, struct lb_pkt *pkt)
{
	const struct lb_icmp_hdr *icmp = icmp_hdr(p, end, pkt);

	if (icmp == NULL)
		return LB_DROP_L4_TRUNCATED;
	switch (icmp->type) {
	case LB_ICMP_ECHO:
		return parse_echo(icmp, pkt);
	case LB_ICMP_UNREACH:
	case LB_ICMP_TIME_EXCEEDED:
	case LB_ICMP_PARAM_PROBLEM:
		return parse_quote(p, end, pkt);
	default:
		return LB_DROP_ICMP_TYPE;
	}
}

static int
parse_l4(const uint8_t *p, uint32_t end, struct lb_pkt *pkt)
{
	uint32_t avail = end - pkt->l4_off;

	if (pkt->proto == LB_IPPROTO_TCP) {
		const struct lb_tcp_hdr *tcp = (const struct lb_tcp_hdr *)(p + pkt->l4_off);
		uint32_t doff;

		/* Segment shorter than a TCP header. */
		if (avail < sizeof(*tcp))
			return LB_DROP_L4_TRUNCATED;
		doff = (uint32_t)(tcp->data_off >> 4) * 4;
		/* Data offset below the header or past the datagram. */
		if (doff < sizeof(*tcp) || doff > avail)
			return LB_DROP_L4_LEN;
		pkt->sport = tcp->sport;
		pkt->dport = tcp->dport;
		pkt->tcp_flags = tcp->flags;
	} else {
		const struct lb_udp_hdr *udp = (const struct lb_udp_hdr *)(p + pkt->l4_off);
		uint32_t ulen;

		/* Datagram shorter than a UDP header. */
		if (avail < sizeof(*udp))
			return LB_DROP_L4_TRUNCATED;
		ulen = lb_be16_to_cpu(udp->len);
		/* UDP length below its header or beyond the IP payload. */
		if (ulen < sizeof(*udp) || ulen > avail)
			return LB_DROP_L4_LEN;
		pkt->sport = udp->sport;
		pkt->dport = udp->dport;
	}
	pkt->kind = LB_PKT_L4;
	return 0;
}

/*
 * IPv4 options o[0..n) carry a loose or strict source route with an
 * address still to visit (RFC 791 3.1: pointer within the option): the
 * destination is not the last hop, as for IPv6's routing header with
 * segments left. A route visited to its end is harmless. The walk stops at
 * an option whose length is missing, too small or past the end.
 */
static bool
source_routed(const uint8_t *o, uint32_t n)
{
	uint32_t i = 0;

	while (i < n && o[i] != LB_IPOPT_EOL) {
		if (o[i] == LB_IPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 2 > n || o[i + 1] < 2 || i + o[i + 1] > n)
			return false;
		if ((o[i] == LB_IPOPT_LSRR || o[i] == LB_IPOPT_SSRR) && o[i + 1] >= 3 &&
			o[i + 2] <= o[i + 1])
			return true;
		i += o[i + 1];
	}
	return false;
}

static int
parse_ipv4(const uint8_t *p, uint32_t len, struct lb_pkt *pkt)
{
	const struct lb_ipv4_hdr *ip;
	uint32_t off = pkt->l2_len;
	uint32_t ihl, tot;
	uint16_t frag;

	/* Frame ends inside the fixed IPv4 header. */
	if (len < off + sizeof(*ip))
		return LB_DROP_TRUNCATED;
	ip = (const struct lb_ipv4_hdr *)(p + off);
	/* Ethertype says IPv4, the header says otherwise. */
	if (lb_ipv4_version(ip) != 4)
		return LB_DROP_IP_VERSION;
	ihl = (uint32_t)lb_ipv4_ihl(ip) * 4;
	/* IHL below five words, or options running past the frame. */
	if (ihl < 20 || len < off + ihl)
		return LB_DROP_IP_IHL;
	tot = lb_be16_to_cpu(ip->total_len);
	/* Total length shorter than the header or longer than the frame. */
	if (tot < ihl || len < off + tot)
		return LB_DROP_IP_LEN;
	if (lb_ipv4_hdr_csum(ip, ihl) != ip->csum)
		return LB_DROP_IP_CSUM;
	if (ihl > 20 && source_routed(p + off + 20, ihl - 20))
		return LB_DROP_IP_SRCROUTE;
	frag = lb_be16_to_cpu(ip->frag_off);
	pkt->l3_len = (uint16_t)tot;
	pkt->l4_off = (uint16_t)(off + ihl);
	pkt->ttl = ip->ttl;
	pkt->df = (frag & LB_IPV4_DF) != 0;
	pkt->proto = ip->proto;
	memcpy(&pkt->src, &ip->src, 4);
	memcpy(&pkt->dst, &ip->dst, 4);
	pkt->ip_dst = pkt->dst;
	/* Fragments: later ones have no ports, first ones are incomplete. */
	if (frag & (LB_IPV4_MF | LB_IPV4_OFFMASK))
		return LB_DROP_FRAGMENT;

	switch (ip->proto) {
	case LB_IPPROTO_TCP:
	case LB_IPPROTO_UDP:
		return parse_l4(p, off + tot, pkt);
	case LB_IPPROTO_ICMP:
		return parse_icmp(p, off + tot, pkt);
	case LB_IPPROTO_IPIP:
	case LB_IPPROTO_IPV6:
		return LB_DROP_TUNNEL;
	default:
		return LB_DROP_PROTO;
	}
}

/* ---- IPv6 ---- */

/*
 * Walk the extension headers from *nh at *off, inside the datagram ending
 * at end: skip hop-by-hop options (first only), destination options and
 * routing headers with no segments left, LB_PARSE_MAX_EXT at most; with
 * first_frag, also the fragment header of a first fragment (an ICMPv6
 * quote: its ports are there). Returns 0 with *nh the upper layer at *off,
 * LB_DROP_IPV6_FRAGMENT with *off at a fragment header, or
 * LB_DROP_IPV6_EXT.
 */
static int
skip_ext(const uint8_t *p, uint32_t end, uint8_t *nh, uint32_t *off, bool first_frag)
{
	uint32_t n, hl;

	for (n = 0;; n++) {
		const struct lb_ipv6_ext *e = (const struct lb_ipv6_ext *)(p + *off);

		switch (*nh) {
		case LB_IPPROTO_HOPOPTS:
			/* Hop-by-hop options come first or not at all (RFC 8200 4.3). */
			if (n != 0)
				return LB_DROP_IPV6_EXT;
			break;
		case LB_IPPROTO_DSTOPTS:
		case LB_IPPROTO_ROUTING:
			break;
		case LB_IPPROTO_FRAGMENT:
			if (first_frag)
				break;
			/* Reassembly reads the whole header: one cut short is malformed. */
			return end < *off + sizeof(struct lb_ipv6_frag_hdr) ? LB_DROP_IPV6_EXT
									    : LB_DROP_IPV6_FRAGMENT;
		default:
			return 0;
		}
		/* More headers than RFC 8200's order allows without fragments or IPsec. */
		if (n == LB_PARSE_MAX_EXT)
			return LB_DROP_IPV6_EXT;
		/* Not even the 8 bytes every extension header has. */
		if (end < *off + sizeof(*e))
			return LB_DROP_IPV6_EXT;
		if (*nh == LB_IPPROTO_FRAGMENT) {
			const struct lb_ipv6_frag_hdr *f = (const struct lb_ipv6_frag_hdr *)e;

			/* A later fragment carries no ports. */
			if (lb_be16_to_cpu(f->frag_data) & LB_IPV6_FRAG_OFFMASK)
				return LB_DROP_IPV6_FRAGMENT;
			hl = sizeof(*f);
		} else {
			hl = ((uint32_t)e->len + 1) * 8;
		}
		/* The header runs past the payload. */
		if (end < *off + hl)
			return LB_DROP_IPV6_EXT;
		/* Segments left: on its way elsewhere, the VIP is no final destination (RFC
		 * 8200 4.4). */
		if (*nh == LB_IPPROTO_ROUTING &&
			((const struct lb_ipv6_rthdr *)e)->segments_left != 0)
			return LB_DROP_IPV6_EXT;
		*nh = e->next_hdr;
		*off += hl;
	}
}

/*
 * The quote of an ICMPv6 error: the invoking packet's IPv6 header, its
 * extension headers by the rules above, and the four bytes of ports of a
 * TCP or UDP first fragment. Turned around as the IPv4 quote is.
 */
static int
parse_quote6(const uint8_t *p, uint32_t end, struct lb_pkt *pkt)
{
	uint32_t off = pkt->l4_off + sizeof(struct lb_icmp_hdr),
		 l4 = off + sizeof(struct lb_ipv6_hdr);
	lb_be16_t ports[2];
	uint8_t nh;

	/* Quote shorter than an IPv6 header, or not IPv6. */
	if (end < l4 || (p[off] >> 4) != 6)
		return LB_DROP_ICMP_QUOTE;
	nh = ((const struct lb_ipv6_hdr *)(p + off))->next_hdr;
	/* Extension headers cut short or malformed, or a later fragment. */
	if (skip_ext(p, end, &nh, &l4, true) != 0)
		return LB_DROP_ICMP_QUOTE;
	/* Quote ends before the ports; only TCP and UDP are balanced. */
	if (end < l4 + 4 || (nh != LB_IPPROTO_TCP && nh != LB_IPPROTO_UDP))
		return LB_DROP_ICMP_QUOTE;
	memcpy(ports, p + l4, 4);
	pkt->quote_off = (uint16_t)off;
	pkt->quote_l4_off = (uint16_t)l4;
	pkt->proto = nh;
	/* The quote travelled VIP -> client: its destination is our source. */
	pkt->src6_off = (uint16_t)(off + offsetof(struct lb_ipv6_hdr, dst));
	pkt->dst6_off = (uint16_t)(off + offsetof(struct lb_ipv6_hdr, src));
	pkt->sport = ports[1];
	pkt->dport = ports[0];
	pkt->kind = LB_PKT_ICMP_ERR;
	return 0;
}

/* ff02::1:ffXX:XXXX, the solicited-node group of an address (RFC 4291 2.7.1). */
static bool
solicited_node(const uint8_t *a)
{
	static const uint8_t prefix[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff};

	return memcmp(a, prefix, sizeof(prefix)) == 0;
}

/*
 * Neighbor solicitation or advertisement, checked as RFC 4861 7.1.1 and
 * 7.1.2 ask of a receiver. The checksum is the replier's to verify.
 */
static int
parse_nd(const uint8_t *p, uint32_t end, struct lb_pkt *pkt)
{
	static const uint8_t unspecified[16];
	const struct lb_nd_msg *nd = (const struct lb_nd_msg *)(p + pkt->l4_off);
	uint32_t o = pkt->l4_off + sizeof(*nd);
	bool slla = false;

	/* Hop limit below 255: a router forwarded it, so it is not from this link. */
	if (pkt->ttl != 255)
		return LB_DROP_ND_MALFORMED;
	/* Shorter than the message, another code, or a multicast target. */
	if (end < o || nd->code != 0 || nd->target[0] == 0xff)
		return LB_DROP_ND_MALFORMED;
	while (o < end) {
		/* An option cut short, of length 0 (a loop), or past the message. */
		if (end < o + 2 || p[o + 1] == 0 || end < o + p[o + 1] * 8u)
			return LB_DROP_ND_MALFORMED;
		slla |= p[o] == LB_ND_OPT_SLLA;
		o += p[o + 1] * 8u;
	}
	/* Duplicate address detection: to a solicited-node group, no source MAC to learn. */
	if (nd->type == LB_ICMP6_ND_NS && memcmp(p + pkt->src6_off, unspecified, 16) == 0 &&
		(slla || !solicited_node(p + pkt->ip_dst6_off)))
		return LB_DROP_ND_MALFORMED;
	pkt->kind = LB_PKT_ND;
	pkt->nd_type = nd->type;
	pkt->quote_off = (uint16_t)(pkt->l4_off + offsetof(struct lb_nd_msg, target));
	return 0;
}

static int
parse_icmp6(const uint8_t *p, uint32_t end, struct lb_pkt *pkt)
{
	const struct lb_icmp_hdr *icmp = icmp_hdr(p, end, pkt);

	if (icmp == NULL)
		return LB_DROP_L4_TRUNCATED;
	switch (icmp->type) {
	case LB_ICMP6_ECHO:
		return parse_echo(icmp, pkt);
	case LB_ICMP6_UNREACH:
	case LB_ICMP6_TOO_BIG:
	case LB_ICMP6_TIME_EXCEEDED:
	case LB_ICMP6_PARAM_PROBLEM:
		return parse_quote6(p, end, pkt);
	case LB_ICMP6_ND_NS:
	case LB_ICMP6_ND_NA:
		return parse_nd(p, end, pkt);
	default:
		return LB_DROP_ICMP_TYPE;
	}
}

static int
parse_ipv6(const uint8_t *p, uint32_t len, struct lb_pkt *pkt)
{
	const struct lb_ipv6_hdr *ip;
	uint32_t off = pkt->l2_len, end, l4 = off + sizeof(*ip);
	uint8_t nh;
	int rc;

	/* Frame ends inside the fixed IPv6 header. */
	if (len < l4)
		return LB_DROP_TRUNCATED;
	ip = (const struct lb_ipv6_hdr *)(p + off);
	/* Ethertype says IPv6, the header says otherwise. */
	if ((p[off] >> 4) != 6)
		return LB_DROP_IP_VERSION;
	end = l4 + lb_be16_to_cpu(ip->payload_len);
	/*
	 * Payload past the frame; or 0, a jumbogram's (RFC 2675), which no
	 * Ethernet frame holds; or more than l3_len can say.
	 */
	if (ip->payload_len == 0 || len < end || end - off > UINT16_MAX)
		return LB_DROP_IP_LEN;
	pkt->v6 = 1;
	pkt->l3_len = (uint16_t)(end - off);
	pkt->ttl = ip->hop_limit;
	pkt->df = 1;
	pkt->src6_off = (uint16_t)(off + offsetof(struct lb_ipv6_hdr, src));
	pkt->dst6_off = (uint16_t)(off + offsetof(struct lb_ipv6_hdr, dst));
	pkt->ip_dst6_off = pkt->dst6_off;
	nh = ip->next_hdr;
	rc = skip_ext(p, end, &nh, &l4, false);
	pkt->l4_off = (uint16_t)l4;
	if (rc != 0)
		return rc;
	pkt->proto = nh;
	switch (nh) {
	case LB_IPPROTO_TCP:
	case LB_IPPROTO_UDP:
		return parse_l4(p, end, pkt);
	case LB_IPPROTO_ICMPV6:
		return parse_icmp6(p, end, pkt);
	case LB_IPPROTO_IPIP:
	case LB_IPPROTO_IPV6:
		return LB_DROP_TUNNEL;
	default:
		return LB_DROP_PROTO;
	}
}

/*
 * The common frame, untagged IPv4 without options carrying a whole TCP
 * segment, in one pass: the same checks and the same result as the general
 * path below. Returns 0 if it parsed the frame, -1 to leave it (and any
 * verdict on it) to the general path.
 */
static inline int
parse_fast(const uint8_t *p, uint32_t len, struct lb_pkt *pkt)
{
	const struct lb_eth_hdr *eth = (const struct lb_eth_hdr *)p;
	const struct lb_ipv4_hdr *ip = (const struct lb_ipv4_hdr *)(p + sizeof(*eth));
	const struct lb_tcp_hdr *tcp;
	uint32_t tot, doff;
	uint16_t frag;

	if (len < sizeof(*eth) + sizeof(*ip) + sizeof(*tcp) ||
		eth->type != lb_cpu_to_be16(LB_ETHERTYPE_IPV4) || ip->ver_ihl != 0x45 ||
		ip->proto != LB_IPPROTO_TCP)
		return -1;
	tot = lb_be16_to_cpu(ip->total_len);
	frag = lb_be16_to_cpu(ip->frag_off);
	tcp = (const struct lb_tcp_hdr *)(ip + 1);
	doff = (uint32_t)(tcp->data_off >> 4) * 4;
	if (tot < sizeof(*ip) + sizeof(*tcp) || len < sizeof(*eth) + tot ||
		(frag & (LB_IPV4_MF | LB_IPV4_OFFMASK)) != 0 || doff < sizeof(*tcp) ||
		doff > tot - sizeof(*ip) || lb_ipv4_hdr_csum(ip, sizeof(*ip)) != ip->csum)
		return -1;
	memset(pkt, 0, sizeof(*pkt));
	pkt->l2_len = sizeof(*eth);
	pkt->l3_len = (uint16_t)tot;
	pkt->l4_off = sizeof(*eth) + sizeof(*ip);
	pkt->kind = LB_PKT_L4;
	pkt->proto = LB_IPPROTO_TCP;
	pkt->tcp_flags = tcp->flags;
	pkt->ttl = ip->ttl;
	pkt->df = (frag & LB_IPV4_DF) != 0;
	pkt->sport = tcp->sport;
	pkt->dport = tcp->dport;
	memcpy(&pkt->src, &ip->src, 4);
	memcpy(&pkt->dst, &ip->dst, 4);
	pkt->ip_dst = pkt->dst;
	return 0;
}

/*
 * Every frame the fast path leaves: tags, options, other protocols, ARP,
 * IPv6, and every verdict. Out of line, so that lb_parse() itself stays a
 * leaf with the fast path's few registers: inlined, IPv6's code made its
 * prologue save and restore more of them for every packet.
 */
static __attribute__((noinline)) int
parse_slow(const uint8_t *p, uint32_t len, struct lb_pkt *pkt)
{
	const struct lb_eth_hdr *eth = (const struct lb_eth_hdr *)p;
	uint16_t type;

	memset(pkt, 0, sizeof(*pkt));
	/* Runt: not even an Ethernet header. */
	if (len < sizeof(*eth))
		return LB_DROP_TRUNCATED;
	type = lb_be16_to_cpu(eth->type);
	pkt->l2_len = sizeof(*eth);
	if (type == LB_ETHERTYPE_VLAN) {
		const struct lb_vlan_hdr *vlan = (const struct lb_vlan_hdr *)(p + sizeof(*eth));

		/* Tag announced, frame ends before it. */
		if (len < sizeof(*eth) + sizeof(*vlan))
			return LB_DROP_TRUNCATED;
		pkt->has_vlan = 1;
		pkt->vlan_tci = lb_be16_to_cpu(vlan->tci);
		type = lb_be16_to_cpu(vlan->type);
		pkt->l2_len += sizeof(*vlan);
	}
	switch (type) {
	case LB_ETHERTYPE_IPV4:
		return parse_ipv4(p, len, pkt);
	case LB_ETHERTYPE_ARP:
		return parse_arp(p, len, pkt);
	case LB_ETHERTYPE_IPV6:
		return parse_ipv6(p, len, pkt);
	case LB_ETHERTYPE_VLAN:
	case LB_ETHERTYPE_QINQ:
		return LB_DROP_VLAN_STACKED;
	default:
		return LB_DROP_ETHERTYPE;
	}
}

int
lb_parse(const uint8_t *p, uint32_t len, struct lb_pkt *pkt)
{
	if (__builtin_expect(parse_fast(p, len, pkt) == 0, 1))
		return 0;
	return parse_slow(p, len, pkt);
}
