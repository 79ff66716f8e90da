/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every wire format Sluice reads or writes, in one header.
 *
 * Fields are in network byte order and typed lb_be16_t / lb_be32_t
 * (lb_types.h) so a missing conversion is visible at the use site. Each
 * struct carries a static_assert on its size: a padding mistake fails the
 * build, not a packet.
 * The structs are packed and may sit at any alignment inside a frame.
 */
#ifndef LB_HDR_H
#define LB_HDR_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "lb_types.h"

#define LB_ETH_ALEN 6

#define LB_ETHERTYPE_IPV4 0x0800
#define LB_ETHERTYPE_ARP 0x0806
#define LB_ETHERTYPE_VLAN 0x8100
#define LB_ETHERTYPE_QINQ 0x88a8
#define LB_ETHERTYPE_IPV6 0x86dd

#define LB_IPPROTO_HOPOPTS 0 /* IPv6 extension headers (RFC 8200 4) */
#define LB_IPPROTO_ICMP 1
#define LB_IPPROTO_IPIP 4
#define LB_IPPROTO_TCP 6
#define LB_IPPROTO_UDP 17
#define LB_IPPROTO_IPV6 41
#define LB_IPPROTO_ROUTING 43
#define LB_IPPROTO_FRAGMENT 44
#define LB_IPPROTO_ICMPV6 58
#define LB_IPPROTO_DSTOPTS 60

struct lb_eth_hdr {
	uint8_t dst[LB_ETH_ALEN];
	uint8_t src[LB_ETH_ALEN];
	lb_be16_t type;
} __attribute__((packed));
static_assert(sizeof(struct lb_eth_hdr) == 14, "ethernet header is 14 bytes");

/* The 802.1Q tag as it follows the source MAC: TCI, then the inner type. */
struct lb_vlan_hdr {
	lb_be16_t tci;
	lb_be16_t type;
} __attribute__((packed));
static_assert(sizeof(struct lb_vlan_hdr) == 4, "802.1Q tag is 4 bytes");

#define LB_ARP_HRD_ETHER 1
#define LB_ARP_OP_REQUEST 1
#define LB_ARP_OP_REPLY 2

struct lb_arp_hdr {
	lb_be16_t hrd;
	lb_be16_t pro;
	uint8_t hln;
	uint8_t pln;
	lb_be16_t op;
	uint8_t sha[LB_ETH_ALEN];
	lb_be32_t spa;
	uint8_t tha[LB_ETH_ALEN];
	lb_be32_t tpa;
} __attribute__((packed));
static_assert(sizeof(struct lb_arp_hdr) == 28, "ARP for IPv4 over Ethernet is 28 bytes");

#define LB_IPV4_DF 0x4000
#define LB_IPV4_MF 0x2000
#define LB_IPV4_OFFMASK 0x1fff
#define LB_IPV4_MIN_IHL 5
#define LB_IP_ECN_MASK 0x03 /* the ECN field: the TOS's, or the traffic class's, low bits */

/* IPv4 option types (RFC 791 3.1) the parser looks at. */
#define LB_IPOPT_EOL 0
#define LB_IPOPT_NOP 1
#define LB_IPOPT_LSRR 131
#define LB_IPOPT_SSRR 137

struct lb_ipv4_hdr {
	uint8_t ver_ihl;
	uint8_t tos; /* DSCP (6 bits) and ECN (2 bits) */
	lb_be16_t total_len;
	lb_be16_t id;
	lb_be16_t frag_off; /* flags (3 bits) and fragment offset */
	uint8_t ttl;
	uint8_t proto;
	lb_be16_t csum;
	lb_be32_t src;
	lb_be32_t dst;
} __attribute__((packed));
static_assert(sizeof(struct lb_ipv4_hdr) == 20, "IPv4 header without options is 20 bytes");

struct lb_ipv6_hdr {
	lb_be32_t vtc_flow; /* version, traffic class, flow label */
	lb_be16_t payload_len;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
} __attribute__((packed));
static_assert(sizeof(struct lb_ipv6_hdr) == 40, "IPv6 fixed header is 40 bytes");

#define LB_IPV6_MIN_MTU 1280 /* RFC 8200 5: every link carries this much */

/* The first two bytes of every extension header but the fragment header. */
struct lb_ipv6_ext {
	uint8_t next_hdr;
	uint8_t len; /* in 8-byte units, not counting the first 8 */
	uint8_t data[6];
} __attribute__((packed));
static_assert(sizeof(struct lb_ipv6_ext) == 8, "an extension header is 8 bytes at least");

/* The routing header's fixed part (RFC 8200 4.4). */
struct lb_ipv6_rthdr {
	uint8_t next_hdr;
	uint8_t len;
	uint8_t type;
	uint8_t segments_left;
	uint8_t data[4];
} __attribute__((packed));
static_assert(sizeof(struct lb_ipv6_rthdr) == 8, "routing header is 8 bytes at least");

#define LB_IPV6_FRAG_OFFMASK 0xfff8 /* of frag_data, host order; offset in 8-byte units */
#define LB_IPV6_FRAG_MF 0x0001

struct lb_ipv6_frag_hdr {
	uint8_t next_hdr;
	uint8_t reserved;
	lb_be16_t frag_data; /* offset (13 bits), 2 reserved, M */
	lb_be32_t id;
} __attribute__((packed));
static_assert(sizeof(struct lb_ipv6_frag_hdr) == 8, "fragment header is 8 bytes");

static inline uint32_t
lb_ipv6_vtc(uint8_t tclass, uint32_t flow)
{
	return 6u << 28 | (uint32_t)tclass << 20 | (flow & 0xfffff);
}

/* DSCP and ECN of the IP header at l3: IPv4's TOS, or IPv6's traffic class (v6). */
static inline uint8_t
lb_ip_tclass(const uint8_t *l3, int v6)
{
	if (!v6)
		return ((const struct lb_ipv4_hdr *)l3)->tos;
	return (uint8_t)((l3[0] & 0x0f) << 4 | l3[1] >> 4);
}

#define LB_TCP_FIN 0x01
#define LB_TCP_SYN 0x02
#define LB_TCP_RST 0x04
#define LB_TCP_ACK 0x10

struct lb_tcp_hdr {
	lb_be16_t sport;
	lb_be16_t dport;
	lb_be32_t seq;
	lb_be32_t ack;
	uint8_t data_off; /* upper 4 bits: header length in words */
	uint8_t flags;
	lb_be16_t window;
	lb_be16_t csum;
	lb_be16_t urg;
} __attribute__((packed));
static_assert(sizeof(struct lb_tcp_hdr) == 20, "TCP header without options is 20 bytes");

struct lb_udp_hdr {
	lb_be16_t sport;
	lb_be16_t dport;
	lb_be16_t len;
	lb_be16_t csum;
} __attribute__((packed));
static_assert(sizeof(struct lb_udp_hdr) == 8, "UDP header is 8 bytes");

#define LB_ICMP_ECHO_REPLY 0
#define LB_ICMP_UNREACH 3
#define LB_ICMP_UNREACH_NEEDFRAG 4
#define LB_ICMP_UNREACH_ADMIN 13 /* communication administratively prohibited */
#define LB_ICMP_UNREACH_PORT 3
#define LB_ICMP_ECHO 8
#define LB_ICMP_TIME_EXCEEDED 11
#define LB_ICMP_PARAM_PROBLEM 12

/* ICMP and ICMPv6 share this header (RFC 4443 2.1; the same 8 bytes). */
struct lb_icmp_hdr {
	uint8_t type;
	uint8_t code;
	lb_be16_t csum;
	union {
		struct {
			lb_be16_t id;
			lb_be16_t seq;
		} echo;
		struct {
			lb_be16_t unused;
			lb_be16_t mtu; /* next-hop MTU, RFC 1191 */
		} frag;
		lb_be32_t mtu6; /* ICMPv6 packet too big: the MTU, 32 bits (RFC 4443 3.2) */
		lb_be32_t rest;
	};
} __attribute__((packed));
static_assert(sizeof(struct lb_icmp_hdr) == 8, "ICMP header is 8 bytes");

#define LB_ICMP6_UNREACH 1
#define LB_ICMP6_UNREACH_ADMIN 1 /* its code: communication administratively prohibited */
#define LB_ICMP6_UNREACH_PORT 4
#define LB_ICMP6_TOO_BIG 2
#define LB_ICMP6_TIME_EXCEEDED 3
#define LB_ICMP6_PARAM_PROBLEM 4
#define LB_ICMP6_ECHO 128
#define LB_ICMP6_ECHO_REPLY 129
#define LB_ICMP6_ND_NS 135
#define LB_ICMP6_ND_NA 136

/* RFC 4443 2.4(c): an ICMPv6 error stays within the minimum MTU. */
#define LB_ICMP6_ERR_MAX LB_IPV6_MIN_MTU

/* Neighbor solicitation and advertisement (RFC 4861 4.3, 4.4), options follow. */
#define LB_ND_NA_ROUTER 0x80000000u
#define LB_ND_NA_SOLICITED 0x40000000u
#define LB_ND_NA_OVERRIDE 0x20000000u

struct lb_nd_msg {
	uint8_t type;
	uint8_t code;
	lb_be16_t csum;
	lb_be32_t flags; /* NA: R, S, O; NS: reserved */
	uint8_t target[16];
} __attribute__((packed));
static_assert(sizeof(struct lb_nd_msg) == 24, "NS/NA are 24 bytes before options");

#define LB_ND_OPT_SLLA 1 /* source link-layer address */
#define LB_ND_OPT_TLLA 2 /* target link-layer address */

struct lb_nd_opt_lla {
	uint8_t type;
	uint8_t len; /* in 8-byte units */
	uint8_t mac[LB_ETH_ALEN];
} __attribute__((packed));
static_assert(sizeof(struct lb_nd_opt_lla) == 8, "a link-layer address option is 8 bytes");

/*
 * A VIP probe: the manager sends an ICMP echo request to a VIP, wrapped in
 * IP-in-IP to one mux's tunnel address, with this payload. The mux answers
 * it itself (an echo reply from the VIP, not encapsulated) with `version`
 * set to the flow-table version it runs, so that the manager learns both
 * that this mux serves the VIP and what it serves it with.
 */
#define LB_VPROBE_MAGIC "SLUICE-VIPPROBE" /* 16 bytes with the NUL */

struct lb_vprobe {
	uint8_t magic[16];
	uint8_t nonce[8];  /* the manager's, echoed back */
	lb_be64_t version; /* request: zero; reply: the mux's version */
} __attribute__((__packed__));
static_assert(sizeof(struct lb_vprobe) == 32, "VIP probe payload is 32 bytes");
static_assert(sizeof(LB_VPROBE_MAGIC) == 16, "VIP probe magic is 16 bytes");

/*
 * Outer header Sluice prepends between Ethernet and the client's packet:
 * IPv4 towards an IPv4 PA, IPv6 (no extension headers) towards an IPv6 one.
 */
#define LB_ENCAP_LEN sizeof(struct lb_ipv4_hdr)
#define LB_ENCAP6_LEN sizeof(struct lb_ipv6_hdr)

static inline uint8_t
lb_ipv4_ihl(const struct lb_ipv4_hdr *ip)
{
	return ip->ver_ihl & 0x0f;
}

static inline uint8_t
lb_ipv4_version(const struct lb_ipv4_hdr *ip)
{
	return ip->ver_ihl >> 4;
}

/*
 * A fresh IPv4 header without options, its checksum field zero: what every
 * packet Sluice writes from nothing starts as. tos, id and frag_off are 0
 * (the caller sets DF or an id where it wants one, then the checksum).
 */
static inline void
lb_ipv4_hdr_init(struct lb_ipv4_hdr *ip, uint8_t proto, lb_be32_t src, lb_be32_t dst,
	uint16_t total_len, uint8_t ttl)
{
	ip->ver_ihl = 0x45;
	ip->tos = 0;
	ip->total_len = lb_cpu_to_be16(total_len);
	ip->id = 0;
	ip->frag_off = 0;
	ip->ttl = ttl;
	ip->proto = proto;
	ip->csum = 0;
	ip->src = src;
	ip->dst = dst;
}

/*
 * A fresh IPv6 header: traffic class and flow label 0, next the header that
 * follows. src and dst may point into the packet (even at ip's own fields).
 */
static inline void
lb_ipv6_hdr_init(struct lb_ipv6_hdr *ip, uint8_t next, const uint8_t *src, const uint8_t *dst,
	uint16_t payload_len, uint8_t hop_limit)
{
	ip->vtc_flow = lb_cpu_to_be32(lb_ipv6_vtc(0, 0));
	ip->payload_len = lb_cpu_to_be16(payload_len);
	ip->next_hdr = next;
	ip->hop_limit = hop_limit;
	memmove(ip->src, src, 16);
	memmove(ip->dst, dst, 16);
}

#endif /* LB_HDR_H */
