/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replies a data plane builds in place of the request that asked for them:
 * the frame is turned around (Ethernet source becomes destination, `mac`
 * becomes the source) and rewritten; the caller trims the buffer to the
 * returned length and sends it back out of the port it came in on. Shared
 * by the mux and the host agent so both answer ARP and ping alike.
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

/* ICMP echo request -> echo reply; returns the frame length (padding dropped). */
static inline uint32_t
lb_reply_echo(uint8_t *p, const struct lb_pkt *pi, const void *mac)
{
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi->l2_len);
	struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(p + pi->l4_off);
	lb_be16_t old_tc, new_tc;

	lb_reply_turn_eth(p, mac);
	ip->dst = pi->src;
	ip->src = pi->dst;
	ip->ttl = 64;
	ip->csum = 0;
	ip->csum = lb_ipv4_hdr_csum(ip, (size_t)(pi->l4_off - pi->l2_len));
	memcpy(&old_tc, &icmp->type, 2);
	icmp->type = LB_ICMP_ECHO_REPLY;
	memcpy(&new_tc, &icmp->type, 2);
	icmp->csum = lb_csum_update16(icmp->csum, old_tc, new_tc);
	return (uint32_t)pi->l2_len + pi->l3_len;
}

#endif /* LB_REPLY_H */
