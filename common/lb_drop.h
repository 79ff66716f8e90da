/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drop reasons. Every packet a data plane does not forward is counted under
 * exactly one of these; the parser returns them and the lcores index their
 * counter arrays with them. One X-macro list gives the enum and the names
 * that appear in summaries and telemetry.
 */
#ifndef LB_DROP_H
#define LB_DROP_H

#define LB_DROP_MAP(X)                                                                             \
	X(TRUNCATED, "truncated")		    /* frame ends inside a header */               \
	X(OVERSIZE, "oversize")			    /* frame spans several mbufs */                \
	X(VLAN_STACKED, "vlan_stacked")		    /* QinQ or a second tag */                     \
	X(ETHERTYPE, "ethertype")		    /* neither IPv4, IPv6 nor ARP */               \
	X(IP_VERSION, "ip_version")		    /* version nibble vs ethertype */              \
	X(IP_IHL, "ip_ihl")			    /* IHL below 5 or past the end */              \
	X(IP_LEN, "ip_len")			    /* total/payload length vs frame */            \
	X(IP_CSUM, "ip_csum")			    /* bad IPv4 header checksum */                 \
	X(FRAGMENT, "fragment")			    /* no L4 header to hash on */                  \
	X(IPV6_FRAGMENT, "ipv6_fragment")	    /* IPv6 fragment header */                     \
	X(IPV6_EXT, "ipv6_ext")			    /* bad, routed or long ext chain */            \
	X(TTL, "ttl_expired")			    /* TTL or hop limit 0 or 1 */                  \
	X(PROTO, "proto")			    /* not TCP, UDP, ICMP or ICMPv6 */             \
	X(TUNNEL, "tunnel_inbound")		    /* a tunnel sent to a mux */                   \
	X(L4_TRUNCATED, "l4_truncated")		    /* L4 header past IP end */                    \
	X(L4_LEN, "l4_len")			    /* UDP length or TCP offset */                 \
	X(ICMP_TYPE, "icmp_type")		    /* ICMP type not handled */                    \
	X(ICMP_QUOTE, "icmp_quote")		    /* quote short or not ours */                  \
	X(NO_SERVICE, "no_service")		    /* no VIP:port for the flow */                 \
	X(NO_BACKEND, "no_backend")		    /* pool has no usable backend */               \
	X(TOO_BIG, "too_big")			    /* DF and no room after encap */               \
	X(ARP_IGNORED, "arp_ignored")		    /* ARP not for an owned IP */                  \
	X(ARP_MALFORMED, "arp_malformed")	    /* not Ethernet/IPv4 ARP */                    \
	X(ND_IGNORED, "nd_ignored")		    /* ND not for an owned IP */                   \
	X(ND_MALFORMED, "nd_malformed")		    /* ND failing RFC 4861 7.1 */                  \
	X(NO_MBUF, "no_mbuf")			    /* pool empty: reply, fragment */              \
	X(NO_HEADROOM, "no_headroom")		    /* cannot prepend outer hdr */                 \
	X(TX_FULL, "tx_full")			    /* port refused the burst */                   \
	X(NOT_OUR_PA, "not_our_pa")		    /* agent: tunnel to another PA */              \
	X(UNKNOWN_MUX, "unknown_mux")		    /* agent: tunnel from a stranger */            \
	X(INNER_MALFORMED, "inner_malformed")	    /* agent: bad encapsulated packet */           \
	X(NO_LOCAL_DIP, "no_local_dip")		    /* agent: DIP not on this host */              \
	X(NOT_TUNNEL, "not_tunnel")		    /* agent: uplink IPv4 not IP-in-IP */          \
	X(SPOOFED, "spoofed_src")		    /* agent: VM sent from not its DIP */          \
	X(VM_LINK_LOCAL, "vm_link_local")	    /* agent: VM's link-scope IPv6 */              \
	X(REASSEMBLY_FAILED, "reassembly_failed")   /* agent: fragment expired or rejected */      \
	X(REASSEMBLY_TOO_BIG, "reassembly_too_big") /* agent: whole datagram past one mbuf */      \
	X(LIMIT, "limit_refused")		    /* mux: an admission rule refused it */        \
	X(UNUSABLE, "backend_unusable")		    /* mux: reject policy, not answerable */       \
	X(NO_CREDIT, "no_credit")		    /* mux: capped pool, no credit anywhere */     \
	X(IP_SRCROUTE, "ip_source_route")	    /* IPv4 source route with hops left */         \
	X(ECN_NOT_ECT, "ecn_not_ect")		    /* agent: CE on a packet not ECN-capable */

enum lb_drop {
	LB_DROP_NONE = 0,
#define LB_DROP_ENUM(name, str) LB_DROP_##name,
	LB_DROP_MAP(LB_DROP_ENUM)
#undef LB_DROP_ENUM
		LB_DROP_MAX
};

/* Name of a drop reason as shown to operators ("ip_csum"). */
const char *lb_drop_name(enum lb_drop reason);

#endif /* LB_DROP_H */
