/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packet parser shared by the mux, the host agent, the tests and the
 * fuzzers. It takes a frame as (bytes, length) so that tests need neither
 * mbufs nor EAL, reads nothing past len, and writes nothing.
 *
 * It classifies the frame and, for IPv4 traffic a mux might forward, fills
 * the flow tuple in client-to-VIP orientation. For an ICMP error the tuple is
 * taken from the quoted header and turned around, so the error about a
 * VIP-to-client packet yields the same tuple, key and hash as the client's
 * own packets of that flow.
 */
#ifndef LB_PARSE_H
#define LB_PARSE_H

#include <stdint.h>

#include "lb_drop.h"
#include "lb_types.h"

enum lb_pkt_kind {
	LB_PKT_L4 = 1,	  /* TCP or UDP */
	LB_PKT_ICMP_ECHO, /* ICMP echo request */
	LB_PKT_ICMP_ERR,  /* ICMP error quoting a TCP/UDP flow */
	LB_PKT_ARP,	  /* Ethernet/IPv4 ARP */
};

struct lb_pkt {
	uint16_t l2_len;    /* Ethernet header plus the 802.1Q tag if any */
	uint16_t l3_len;    /* IPv4 total length (frame may carry padding) */
	uint16_t l4_off;    /* offset of the L4 header from the frame start */
	uint16_t quote_off; /* ICMP error: offset of the quoted IPv4 header */
	uint16_t vlan_tci;  /* host order; valid if has_vlan */
	uint8_t has_vlan;
	uint8_t kind;	   /* enum lb_pkt_kind */
	uint8_t proto;	   /* flow protocol: TCP/UDP, or ICMP for echo */
	uint8_t tcp_flags; /* LB_PKT_L4 over TCP */
	uint8_t ttl;
	uint8_t df; /* IPv4 don't-fragment flag set */
	/* Flow tuple, client to VIP. ICMP echo: ports hold the identifier. */
	lb_be32_t src;
	lb_be32_t dst;
	lb_be16_t sport;
	lb_be16_t dport;
	/* Destination of the IPv4 header itself (differs from dst for ICMP errors). */
	lb_be32_t ip_dst;
	/* ARP: operation (host order), sender and target addresses. */
	uint16_t arp_op;
	lb_be32_t arp_spa;
	lb_be32_t arp_tpa;
};

/*
 * Parse the frame p[0..len). Returns 0 with *pkt filled, or a positive
 * enum lb_drop naming why the frame cannot be forwarded (*pkt is then
 * partially filled and must not be used).
 */
int lb_parse(const uint8_t *p, uint32_t len, struct lb_pkt *pkt);

#endif /* LB_PARSE_H */
