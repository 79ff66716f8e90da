/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replies a data plane builds in place of the request that asked for them:
 * the frame is turned around (Ethernet source becomes destination, `mac`
 * becomes the source) and rewritten; the caller trims the buffer to the
 * returned length and sends it back out of the port it came in on. Shared
 * by the mux and the host agent so both answer ARP, neighbor discovery and
 * ping alike.
 *
 * Checksums of what is built here are computed whole, never updated: an
 * update of an all-zero echo message turns the correct checksum 0xffff
 * into 0x0000 (RFC 1624 5), which receivers reject.
 */
#ifndef LB_REPLY_H
#define LB_REPLY_H

#include <stdint.h>
#include <string.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"

static inline void
lb_reply_turn_eth(uint8_t *p, const void *mac)
{
	struct lb_eth_hdr *eth = (struct lb_eth_hdr *)p;

	memcpy(eth->dst, eth->src, LB_ETH_ALEN);
	memcpy(eth->src, mac, LB_ETH_ALEN);
}

/* ARP request (parsed into pi) -> reply saying pi->arp_tpa is at mac. */
static inline void
lb_reply_arp(uint8_t *p, const struct lb_pkt *pi, const void *mac)
{
	struct lb_arp_hdr *arp = (struct lb_arp_hdr *)(p + pi->l2_len);

	lb_reply_turn_eth(p, mac);
	arp->op = lb_cpu_to_be16(LB_ARP_OP_REPLY);
	memcpy(arp->tha, arp->sha, LB_ETH_ALEN);
	memcpy(arp->sha, mac, LB_ETH_ALEN);
	memcpy(&arp->tpa, &pi->arp_spa, 4);
	memcpy(&arp->spa, &pi->arp_tpa, 4);
}

/* Swap the 16-byte addresses at a and b. */
static inline void
lb_reply_swap16(uint8_t *a, uint8_t *b)
{
	uint8_t t[16];

	memcpy(t, a, 16);
	memcpy(a, b, 16);
	memcpy(b, t, 16);
}

/*
 * ICMP or ICMPv6 echo request -> echo reply; returns the frame length
 * (padding dropped). An IPv6 request's extension headers are not echoed:
 * the message moves up behind the fixed header.
 */
static inline uint32_t
lb_reply_echo(uint8_t *p, const struct lb_pkt *pi, const void *mac)
{
	struct lb_icmp_hdr *icmp;
	uint32_t icmp_len = (uint32_t)pi->l2_len + pi->l3_len - pi->l4_off;

	lb_reply_turn_eth(p, mac);
	if (pi->v6) {
		struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)(p + pi->l2_len);

		icmp = (struct lb_icmp_hdr *)(ip + 1);
		if ((uint8_t *)icmp != p + pi->l4_off)
			memmove(icmp, p + pi->l4_off, icmp_len);
		ip->vtc_flow = lb_cpu_to_be32(lb_ipv6_vtc(0, 0));
		ip->payload_len = lb_cpu_to_be16((uint16_t)icmp_len);
		ip->next_hdr = LB_IPPROTO_ICMPV6;
		ip->hop_limit = 64;
		lb_reply_swap16(ip->src, ip->dst);
		icmp->type = LB_ICMP6_ECHO_REPLY;
		icmp->csum = 0;
		icmp->csum = lb_ipv6_l4_csum(ip->src, ip->dst, LB_IPPROTO_ICMPV6, icmp, icmp_len);
		return (uint32_t)pi->l2_len + sizeof(*ip) + icmp_len;
	} else {
		struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi->l2_len);

		ip->dst = pi->src;
		ip->src = pi->dst;
		ip->ttl = 64;
		ip->csum = 0;
		ip->csum = lb_ipv4_hdr_csum(ip, (size_t)(pi->l4_off - pi->l2_len));
		icmp = (struct lb_icmp_hdr *)(p + pi->l4_off);
		icmp->type = LB_ICMP_ECHO_REPLY;
		icmp->csum = 0;
		icmp->csum = lb_icmp_csum(icmp, icmp_len);
	}
	return (uint32_t)pi->l2_len + pi->l3_len;
}

/* The frame length of a neighbor advertisement (lb_reply_na()) after l2_len bytes of L2. */
#define LB_REPLY_NA_LEN                                                                            \
	(sizeof(struct lb_ipv6_hdr) + sizeof(struct lb_nd_msg) + sizeof(struct lb_nd_opt_lla))

/* The ICMPv6 checksum of the message pi parsed is right. */
static inline int
lb_reply_icmp6_ok(const uint8_t *p, const struct lb_pkt *pi)
{
	return lb_ipv6_l4_csum(lb_pkt_src6(p, pi), lb_pkt_ip_dst6(p, pi), LB_IPPROTO_ICMPV6,
		       p + pi->l4_off, (size_t)pi->l2_len + pi->l3_len - pi->l4_off) == 0;
}

/*
 * Neighbor solicitation (parsed into pi) -> advertisement that its target
 * is at mac (RFC 4861 7.2.4), in place: from the target, to the soliciting
 * address with the solicited flag, or to all nodes (ff02::1) when the
 * solicitation came from the unspecified address (duplicate address
 * detection); override set, router set when router. The caller makes sure
 * the buffer holds l2_len + LB_REPLY_NA_LEN bytes; returns that length.
 */
static inline uint32_t
lb_reply_na(uint8_t *p, const struct lb_pkt *pi, const void *mac, int router)
{
	static const uint8_t unspecified[16];
	static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
	static const uint8_t all_nodes_mac[LB_ETH_ALEN] = {0x33, 0x33, 0, 0, 0, 1};
	struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)(p + pi->l2_len);
	struct lb_nd_msg *na = (struct lb_nd_msg *)(ip + 1);
	struct lb_nd_opt_lla *o = (struct lb_nd_opt_lla *)(na + 1);
	uint8_t target[16], to[16];
	int dad;

	memcpy(target, p + pi->quote_off, 16);
	memcpy(to, lb_pkt_src6(p, pi), 16);
	dad = memcmp(to, unspecified, 16) == 0;
	lb_reply_turn_eth(p, mac);
	if (dad) {
		memcpy(to, all_nodes, 16);
		memcpy(((struct lb_eth_hdr *)p)->dst, all_nodes_mac, LB_ETH_ALEN);
	}
	lb_ipv6_hdr_init(ip, LB_IPPROTO_ICMPV6, target, to, sizeof(*na) + sizeof(*o), 255);
	na->type = LB_ICMP6_ND_NA;
	na->code = 0;
	na->flags = lb_cpu_to_be32((router ? LB_ND_NA_ROUTER : 0) | (dad ? 0 : LB_ND_NA_SOLICITED) |
				   LB_ND_NA_OVERRIDE);
	memcpy(na->target, target, 16);
	o->type = LB_ND_OPT_TLLA;
	o->len = 1;
	memcpy(o->mac, mac, LB_ETH_ALEN);
	na->csum = 0;
	na->csum =
		lb_ipv6_l4_csum(ip->src, ip->dst, LB_IPPROTO_ICMPV6, na, sizeof(*na) + sizeof(*o));
	return (uint32_t)(pi->l2_len + LB_REPLY_NA_LEN);
}

#endif /* LB_REPLY_H */
