/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packet parser shared by the mux, the host agent, the tests and the
 * fuzzers. It takes a frame as (bytes, length) so that tests need neither
 * mbufs nor EAL, reads nothing past len, and writes nothing.
 *
 * It classifies the frame and, for traffic a mux might forward, fills the
 * flow tuple in client-to-VIP orientation. For an ICMP or ICMPv6 error the
 * tuple is taken from the quoted header and turned around, so the error
 * about a VIP-to-client packet yields the same tuple, key and hash as the
 * client's own packets of that flow.
 *
 * IPv4 addresses are copied into the tuple; IPv6 ones are not (48 bytes a
 * packet): for an IPv6 packet (v6 = 1) the tuple's addresses are offsets
 * of the 16 bytes in the frame, which the caller holds anyway
 * (lb_pkt_src6() and friends). An IPv4 packet leaves v6 zero, so the IPv4
 * path pays nothing for the field.
 *
 * IPv6 extension headers: hop-by-hop options (first only), destination
 * options and routing headers with no segments left are skipped, at most
 * LB_PARSE_MAX_EXT of them, the longest chain RFC 8200 4.1's order allows
 * without fragmentation or IPsec (hop-by-hop, destination options, routing,
 * destination options). A fragment header stops the parse
 * (ipv6_fragment); a routing header with segments left (the VIP is not the
 * final destination), a chain longer than the bound, out of order or
 * running past the payload stop it too (ipv6_ext); anything else that is
 * not TCP, UDP or ICMPv6 is proto.
 */
#ifndef LB_PARSE_H
#define LB_PARSE_H

#include <stdint.h>

#include "lb_drop.h"
#include "lb_types.h"

#define LB_PARSE_MAX_EXT 4

enum lb_pkt_kind {
	LB_PKT_L4 = 1,	  /* TCP or UDP */
	LB_PKT_ICMP_ECHO, /* ICMP or ICMPv6 echo request */
	LB_PKT_ICMP_ERR,  /* ICMP or ICMPv6 error quoting a TCP/UDP flow */
	LB_PKT_ARP,	  /* Ethernet/IPv4 ARP */
	LB_PKT_ND,	  /* IPv6 neighbor solicitation or advertisement */
};

struct lb_pkt {
	uint16_t l2_len; /* Ethernet header plus the 802.1Q tag if any */
	uint16_t l3_len; /* IPv4 total length, IPv6 40 + payload length (no padding) */
	/*
	 * Offset of the L4 header from the frame start, past any IPv6
	 * extension headers. ipv6_fragment: of the fragment header.
	 */
	uint16_t l4_off;
	/*
	 * ICMP error: offset of the quoted IP header. Neighbor discovery:
	 * of the target address.
	 */
	uint16_t quote_off;
	uint16_t quote_l4_off; /* ICMP error: of the quoted ports (past any extension headers) */
	uint16_t vlan_tci;     /* host order; valid if has_vlan */
	uint8_t has_vlan;
	uint8_t kind;	   /* enum lb_pkt_kind */
	uint8_t proto;	   /* flow protocol: TCP/UDP, or ICMP / ICMPv6 for echo */
	uint8_t tcp_flags; /* LB_PKT_L4 over TCP */
	uint8_t ttl;	   /* TTL, or hop limit */
	uint8_t df;	   /* IPv4 don't-fragment flag set; 1 for IPv6 (never split en route) */
	uint8_t v6;	   /* 0: IPv4 or ARP; 1: IPv6 (addresses: the *6_off fields) */
	uint8_t nd_type;   /* LB_PKT_ND: LB_ICMP6_ND_NS or LB_ICMP6_ND_NA */
	/* Flow tuple, client to VIP. ICMP echo: ports hold the identifier. */
	lb_be32_t src;
	lb_be32_t dst;
	lb_be16_t sport;
	lb_be16_t dport;
	/* Destination of the IPv4 header itself (differs from dst for ICMP errors). */
	lb_be32_t ip_dst;
	union {
		/* IPv6: the tuple's addresses and the header's destination, as offsets. */
		struct {
			uint16_t src6_off;
			uint16_t dst6_off;
			uint16_t ip_dst6_off;
		};
		/* ARP: operation (host order), sender and target addresses. */
		struct {
			uint16_t arp_op;
			lb_be32_t arp_spa;
			lb_be32_t arp_tpa;
		};
	};
};

/*
 * Parse the frame p[0..len). Returns 0 with *pkt filled, or a positive
 * enum lb_drop naming why the frame cannot be forwarded (*pkt is then
 * partially filled and must not be used, with exceptions the host agent
 * relies on: at LB_DROP_TUNNEL and LB_DROP_FRAGMENT, the IP header's
 * fields (l2_len, l3_len, l4_off, proto, src, dst, ip_dst, or v6 and the
 * address offsets), and at LB_DROP_IPV6_FRAGMENT, the same with l4_off at
 * the fragment header).
 */
int lb_parse(const uint8_t *p, uint32_t len, struct lb_pkt *pkt);

/* The 16 bytes of an IPv6 packet's tuple source, destination, header destination. */
static inline const uint8_t *
lb_pkt_src6(const uint8_t *p, const struct lb_pkt *pkt)
{
	return p + pkt->src6_off;
}

static inline const uint8_t *
lb_pkt_dst6(const uint8_t *p, const struct lb_pkt *pkt)
{
	return p + pkt->dst6_off;
}

static inline const uint8_t *
lb_pkt_ip_dst6(const uint8_t *p, const struct lb_pkt *pkt)
{
	return p + pkt->ip_dst6_off;
}

#endif /* LB_PARSE_H */
