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
	X(ETHERTYPE, "ethertype")		    /* neither IPv4 nor ARP */                     \
	X(IPV6, "ipv6_unsupported")		    /* IPv6 not forwarded yet */                   \
	X(IP_VERSION, "ip_version")		    /* version nibble is not 4 */                  \
	X(IP_IHL, "ip_ihl")			    /* IHL below 5 or past the end */              \
	X(IP_LEN, "ip_len")			    /* total length vs frame */                    \
	X(IP_CSUM, "ip_csum")			    /* bad IPv4 header checksum */                 \
	X(FRAGMENT, "fragment")			    /* no L4 header to hash on */                  \
	X(TTL, "ttl_expired")			    /* TTL 0 or 1 on arrival */                    \
	X(PROTO, "proto")			    /* not TCP, UDP or ICMP */                     \
	X(TUNNEL, "tunnel_inbound")		    /* IP-in-IP sent to a mux */                   \
	X(L4_TRUNCATED, "l4_truncated")		    /* L4 header past IP end */                    \
	X(L4_LEN, "l4_len")			    /* UDP length or TCP offset */                 \
	X(ICMP_TYPE, "icmp_type")		    /* ICMP type not handled */                    \
	X(ICMP_QUOTE, "icmp_quote")		    /* quote short or not ours */                  \
	X(NO_SERVICE, "no_service")		    /* no VIP:port for the flow */                 \
	X(NO_BACKEND, "no_backend")		    /* pool has no usable backend */               \
	X(TOO_BIG, "too_big")			    /* DF and no room after encap */               \
	X(TOO_BIG_NO_DF, "too_big_no_df")	    /* no room, fragmenting off */                 \
	X(ARP_IGNORED, "arp_ignored")		    /* ARP not for an owned IP */                  \
	X(ARP_MALFORMED, "arp_malformed")	    /* not Ethernet/IPv4 ARP */                    \
	X(NO_MBUF, "no_mbuf")			    /* pool empty for a reply */                   \
	X(NO_HEADROOM, "no_headroom")		    /* cannot prepend outer hdr */                 \
	X(TX_FULL, "tx_full")			    /* port refused the burst */                   \
	X(NOT_OUR_PA, "not_our_pa")		    /* agent: tunnel to another PA */              \
	X(UNKNOWN_MUX, "unknown_mux")		    /* agent: tunnel from a stranger */            \
	X(INNER_MALFORMED, "inner_malformed")	    /* agent: bad encapsulated packet */           \
	X(NO_LOCAL_DIP, "no_local_dip")		    /* agent: DIP not on this host */              \
	X(NOT_TUNNEL, "not_tunnel")		    /* agent: uplink IPv4 not IP-in-IP */          \
	X(SPOOFED, "spoofed_src")		    /* agent: VM sent from not its DIP */          \
	X(REASSEMBLY_FAILED, "reassembly_failed")   /* agent: fragment expired or rejected */      \
	X(REASSEMBLY_TOO_BIG, "reassembly_too_big") /* agent: whole datagram past one mbuf */      \
	X(LIMIT, "limit_refused")		    /* mux: an admission rule refused it */

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
