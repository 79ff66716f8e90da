/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Uplink -> VM. What arrives on the uplink is either for the agent itself
 * (ARP, neighbor discovery and ping for its PAs) or a tunnel from a mux. A
 * tunnel packet is accepted only if it is addressed to our PA of its outer
 * family and sent by a listed mux of that family (4in4 and 6in4 to pa from
 * an IPv4 mux, 4in6 and 6in6 to pa6 from an IPv6 one), its outer header is
 * sound, and its inner packet (IPv4 behind protocol 4, IPv6 behind 41)
 * parses and is addressed to a DIP of a local VM. The outer header is
 * stripped by writing the VM's Ethernet header over its last 14 bytes: no
 * copy of the payload. Its ECN field is not: a router between mux and
 * host may have marked it CE, and the mark goes on to the inner header
 * (RFC 6040 4.2, below).
 */
/* rte_ip_frag_table_del_expired_entries() is still experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API

#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "dp_mbuf.h"
#include "ha_agent.h"
#include "ha_track.h"
#include "ha_icmp.h"
#include "lb_addr.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "lb_reply.h"
#include "lb_tcp.h"

/* ARP on a port: answer requests for `owned` (or for anything but `not`). */
void
ha_arp(struct ha_worker *w, uint16_t port, const struct rte_ether_addr *mac, struct rte_mbuf *m,
	const struct lb_pkt *pi, int proxy, lb_be32_t addr)
{
	int ours = proxy ? pi->arp_tpa != addr : pi->arp_tpa == addr && addr != 0;

	if (pi->arp_op != LB_ARP_OP_REQUEST || !ours) {
		ha_drop(w, m, LB_DROP_ARP_IGNORED);
		return;
	}
	lb_reply_arp(rte_pktmbuf_mtod(m, uint8_t *), pi, mac);
	w->cnt.arp_replies++;
	ha_enqueue(w, port, m);
}

void
ha_nd(struct ha_worker *w, uint16_t port, const struct rte_ether_addr *mac, struct rte_mbuf *m,
	const struct lb_pkt *pi, const uint8_t *addr, int router)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	enum lb_drop why;

	if (pi->nd_type != LB_ICMP6_ND_NS || addr == NULL ||
		memcmp(p + pi->quote_off, addr, 16) != 0) {
		ha_drop(w, m, LB_DROP_ND_IGNORED);
		return;
	}
	if ((why = dp_reply_nd(m, pi, mac, router)) != LB_DROP_NONE) {
		ha_drop(w, m, why);
		return;
	}
	w->cnt.nd_replies++;
	ha_enqueue(w, port, m);
}

void
ha_echo(struct ha_worker *w, uint16_t port, const struct rte_ether_addr *mac, struct rte_mbuf *m,
	const struct lb_pkt *pi)
{
	dp_trim_to(m, lb_reply_echo(rte_pktmbuf_mtod(m, uint8_t *), pi, mac));
	w->cnt.echo_replies++;
	ha_enqueue(w, port, m);
}

static int
vm_of_dip(const struct ha_worker *w, lb_be32_t dip)
{
	uint16_t i;

	for (i = 0; i < w->n_vms; i++)
		if (w->vms[i].dip == dip && dip != 0)
			return i;
	return -1;
}

static int
vm_of_dip6(const struct ha_worker *w, const uint8_t *dip)
{
	uint16_t i;

	for (i = 0; i < w->n_vms; i++)
		if (w->vms[i].has_dip6 && memcmp(w->vms[i].dip6, dip, 16) == 0)
			return i;
	return -1;
}

/* The VM a packet of family v6 is addressed to (its header's destination), or -1. */
static int
vm_of(const struct ha_worker *w, const uint8_t *p, const struct lb_pkt *pi)
{
	return pi->v6 ? vm_of_dip6(w, lb_pkt_ip_dst6(p, pi)) : vm_of_dip(w, pi->ip_dst);
}

/*
 * Whether the outer header pi (parsed from p) is a tunnel we take: to our
 * PA of its family, from a listed mux of that family. 0 or a drop reason.
 */
static int
tunnel_ours(const struct ha_worker *w, const uint8_t *p, const struct lb_pkt *pi)
{
	if (pi->v6) {
		if (!w->has_pa6 || memcmp(lb_pkt_ip_dst6(p, pi), w->pa6, 16) != 0)
			return LB_DROP_NOT_OUR_PA;
		if (!lb_addr6_in(lb_pkt_src6(p, pi), w->muxes6, w->n_muxes6))
			return LB_DROP_UNKNOWN_MUX;
		return 0;
	}
	if (w->pa == 0 || pi->ip_dst != w->pa)
		return LB_DROP_NOT_OUR_PA;
	return lb_addr4_in(pi->src, w->muxes, w->n_muxes) ? 0 : LB_DROP_UNKNOWN_MUX;
}

/* The ECN field's codepoints (RFC 3168 5): the low two bits of the TOS or traffic class. */
enum { ECN_NOT_ECT = 0, ECN_ECT1 = 1, ECN_ECT0 = 2, ECN_CE = 3 };

/* The ECN field of the IPv4 or IPv6 header at l3. */
static inline uint8_t
ecn_of(const uint8_t *l3, int v6)
{
	return lb_ip_tclass(l3, v6) & LB_IP_ECN_MASK;
}

/*
 * Set the ECN field of the IPv4 or IPv6 header at l3 to ecn. IPv4's
 * header checksum follows its first word, where the TOS is.
 */
static inline void
ecn_set(uint8_t *l3, int v6, uint8_t ecn)
{
	if (v6) {
		struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)l3;
		uint32_t vtc = lb_be32_to_cpu(ip->vtc_flow);

		ip->vtc_flow = lb_cpu_to_be32(
			(vtc & ~((uint32_t)LB_IP_ECN_MASK << 20)) | (uint32_t)ecn << 20);
	} else {
		struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)l3;
		lb_be16_t old, new;

		memcpy(&old, l3, 2);
		ip->tos = (uint8_t)((ip->tos & ~LB_IP_ECN_MASK) | ecn);
		memcpy(&new, l3, 2);
		ip->csum = lb_csum_update16(ip->csum, old, new);
	}
}

/*
 * The inner header's ECN field on leaving the tunnel, given the outer's
 * (RFC 6040 4.2, figure 4), or -1: drop it. The mux copied the inner field
 * into the outer one, so what differs is a router's doing on the way:
 * CE (congestion) goes on to an ECN-capable inner header; over a Not-ECT
 * one, whose transport would not heed it, the packet is dropped, as that
 * router would have dropped it. An outer ECT(1) over an inner ECT(0) gives
 * ECT(1). The combinations the RFC calls currently unused (an outer ECT
 * over an inner Not-ECT, an outer ECT(1) over an inner CE) leave the inner
 * field as it is, as its table says; they are not logged (no logging on
 * the fast path) nor counted.
 */
static inline int
ecn_decap(uint8_t outer, uint8_t inner)
{
	if (outer == ECN_CE)
		return inner == ECN_NOT_ECT ? -1 : ECN_CE;
	if (outer == ECN_ECT1 && inner == ECN_ECT0)
		return ECN_ECT1;
	return inner;
}

/*
 * The outer ECN field of a datagram reassembled from the fragments
 * chained at m, each one's in its mbuf (reassemble()). The first
 * fragment's header is the datagram's, but a router may have marked any
 * of them, and reassembly must not lose the mark (RFC 3168 5.3): CE if
 * one is CE, or -1 (drop) if another is also Not-ECT, where CE may not be
 * set; otherwise 0, the first header's field stands.
 */
static int
frag_ecn(const struct rte_mbuf *m)
{
	int ce = 0, not_ect = 0;

	for (; m != NULL; m = m->next) {
		ce |= m->hash.usr == ECN_CE;
		not_ect |= m->hash.usr == ECN_NOT_ECT;
	}
	return ce ? (not_ect ? -1 : ECN_CE) : 0;
}

/*
 * An outer fragment. A router between mux and host may split a tunnel
 * packet the client let be fragmented (the mux copies DF into 4in4), and
 * the mux itself splits the outer datagram of what does not fit its MTU
 * (mux_frag.c). Fragments of a tunnel from a known mux to our PA (header
 * already checked by lb_parse) wait in DPDK's reassembly table, which
 * takes both families; the whole datagram comes back as one segment (an
 * IPv4 one with its header checksum made whole) and goes the way of any
 * tunnel packet. An IPv6 fragment header must follow the fixed header
 * directly, as the mux sends it: DPDK 22.11's reassembly assumes so. Any
 * other fragment stays a drop. Returns the whole datagram, or NULL: m was
 * held, or dropped under its reason.
 */
static struct rte_mbuf *
reassemble(struct ha_worker *w, struct rte_mbuf *m, const struct lb_pkt *outer)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t frame = (uint32_t)outer->l2_len + outer->l3_len;
	uint8_t *l3 = p + outer->l2_len;
	struct rte_mbuf *whole;
	uint8_t inner;
	int rc = 0, ecn;

	if (outer->v6) {
		const struct lb_ipv6_frag_hdr *fh =
			(const struct lb_ipv6_frag_hdr *)(p + outer->l4_off);

		inner = outer->l4_off == outer->l2_len + sizeof(struct lb_ipv6_hdr) ? fh->next_hdr
										    : 0;
	} else {
		inner = ((const struct lb_ipv4_hdr *)l3)->proto;
	}
	if ((inner != LB_IPPROTO_IPIP && inner != LB_IPPROTO_IPV6) || w->frag_tbl == NULL)
		rc = outer->v6 ? LB_DROP_IPV6_FRAGMENT : LB_DROP_FRAGMENT;
	else
		rc = tunnel_ours(w, p, outer);
	if (rc != 0) {
		ha_drop(w, m, rc);
		return NULL;
	}
	/* Ethernet padding would land inside the reassembled datagram. */
	dp_trim_to(m, frame);
	m->l2_len = outer->l2_len;
	/*
	 * The library keeps the first fragment's header alone: each
	 * fragment's ECN field rides in its own mbuf for frag_ecn() (hash.usr;
	 * the agent never reads the RSS hash that shares its word).
	 */
	m->hash.usr = ecn_of(l3, outer->v6);
	w->cnt.frags_in++;
	if (outer->v6) {
		m->l3_len = sizeof(struct lb_ipv6_hdr) + sizeof(struct lb_ipv6_frag_hdr);
		whole = rte_ipv6_frag_reassemble_packet(w->frag_tbl, &w->frag_dr, m, rte_rdtsc(),
			(struct rte_ipv6_hdr *)l3,
			(struct rte_ipv6_fragment_ext *)(p + outer->l4_off));
	} else {
		m->l3_len = outer->l4_off - outer->l2_len;
		whole = rte_ipv4_frag_reassemble_packet(
			w->frag_tbl, &w->frag_dr, m, rte_rdtsc(), (struct rte_ipv4_hdr *)l3);
	}
	if (whole == NULL)
		return NULL; /* held; or given up, in the death row */
	/* Each fragment is still a segment of its own, until linearized. */
	ecn = frag_ecn(whole);
	if (ecn < 0) {
		ha_drop(w, whole, LB_DROP_ECN_NOT_ECT);
		return NULL;
	}
	if (whole->nb_segs != 1 && rte_pktmbuf_linearize(whole) != 0) {
		ha_drop(w, whole, LB_DROP_REASSEMBLY_TOO_BIG);
		return NULL;
	}
	/* The library leaves the IPv4 checksum for a TX offload we do not ask for. */
	whole->ol_flags &= ~RTE_MBUF_F_TX_IP_CKSUM;
	l3 = rte_pktmbuf_mtod_offset(whole, uint8_t *, whole->l2_len);
	if (ecn == ECN_CE)
		ecn_set(l3, outer->v6, ECN_CE);
	if (!outer->v6) {
		struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)l3;

		ip->csum = 0;
		ip->csum = lb_ipv4_hdr_csum(ip, whole->l3_len);
	}
	w->cnt.reassembled++;
	return whole;
}

/* Free the fragments reassembly gave up on: each one a drop. */
static inline void
frag_reap(struct ha_worker *w)
{
	if (w->frag_dr.cnt != 0) {
		w->cnt.drops[LB_DROP_REASSEMBLY_FAILED] += w->frag_dr.cnt;
		rte_ip_frag_free_death_row(&w->frag_dr, 0);
	}
}

void
ha_frag_expire(struct ha_worker *w, uint64_t tsc)
{
	if (w->frag_tbl != NULL)
		rte_ip_frag_table_del_expired_entries(w->frag_tbl, &w->frag_dr, tsc);
	frag_reap(w);
}

/*
 * What is not a tunnel: ARP, neighbor discovery and ping for our PAs, and
 * a health prober's plain TCP/UDP to a local DIP (delivered as sent). The
 * rest is not_tunnel.
 */
static void
for_the_agent(struct ha_worker *w, struct rte_mbuf *m, const struct lb_pkt *pi)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	int vm;

	switch (pi->kind) {
	case LB_PKT_ARP:
		ha_arp(w, w->uplink, &w->uplink_mac, m, pi, 0, w->pa);
		return;
	case LB_PKT_ND:
		ha_nd(w, w->uplink, &w->uplink_mac, m, pi, w->has_pa6 ? w->pa6 : NULL, 0);
		return;
	case LB_PKT_ICMP_ECHO:
		if (pi->v6 ? w->has_pa6 && memcmp(lb_pkt_ip_dst6(p, pi), w->pa6, 16) == 0
			   : w->pa != 0 && pi->dst == w->pa) {
			ha_echo(w, w->uplink, &w->uplink_mac, m, pi);
			return;
		}
		break;
	case LB_PKT_L4:
		/* A health probe: plain TCP/UDP from a prober to a local DIP. */
		if ((pi->v6 ? lb_addr6_in(lb_pkt_src6(p, pi), w->probers6, w->n_probers6)
			    : lb_addr4_in(pi->src, w->probers, w->n_probers)) &&
			(vm = vm_of(w, p, pi)) >= 0) {
			dp_trim_to(m, pi->l2_len + pi->l3_len);
			ha_set_eth(m, pi->l2_len, &w->vms[vm].mac, &w->vms[vm].port_mac, pi->v6);
			w->cnt.probe_in++;
			w->vm_tx[vm]++;
			ha_enqueue(w, w->vms[vm].port, m);
			return;
		}
		break;
	default:
		break;
	}
	ha_drop(w, m, LB_DROP_NOT_TUNNEL);
}

/*
 * The tunnel's outer header (outer, parsed from p): a tunnel we take (to
 * our PA, from a mux), with room for the inner header its protocol
 * announces. 0 or a drop reason.
 */
static int
check_outer(struct ha_worker *w, const uint8_t *p, const struct lb_pkt *outer)
{
	uint32_t hl = outer->l4_off - outer->l2_len;
	uint32_t need = outer->proto == LB_IPPROTO_IPV6 ? sizeof(struct lb_ipv6_hdr)
							: sizeof(struct lb_ipv4_hdr);
	int rc = tunnel_ours(w, p, outer);

	if (rc != 0)
		return rc;
	/* Room for at least the inner header after the outer one. */
	return outer->l3_len < hl + need ? LB_DROP_INNER_MALFORMED : 0;
}

/* The inner packet pi, parsed at p: an ICMP error's quote translated, or a SYN's MSS clamped. */
static void
fix_inner(struct ha_worker *w, uint8_t *p, const struct lb_pkt *pi)
{
	if (pi->kind == LB_PKT_ICMP_ERR) {
		/* The quote shows VIP:vport -> client; the VM sent DIP:dport -> client. */
		const struct ha_lb *lb;

		if (pi->v6) {
			lb = ha_map_by_vip(w->map, LB_AF_INET6, lb_pkt_dst6(p, pi), pi->dport,
				pi->proto, lb_pkt_ip_dst6(p, pi));
			if (lb != NULL)
				ha_quote_rewrite6(p, pi, 1, lb->dip.a8, lb->dport);
		} else {
			lb = ha_map_by_vip(
				w->map, LB_AF_INET, &pi->dst, pi->dport, pi->proto, &pi->ip_dst);
			if (lb != NULL)
				ha_quote_rewrite(p, pi, 1, lb->dip.a32[0], lb->dport);
		}
		w->cnt.icmp_translated += lb != NULL;
	} else if (pi->kind == LB_PKT_L4 && pi->proto == LB_IPPROTO_TCP &&
		   (pi->tcp_flags & LB_TCP_SYN)) {
		struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(p + pi->l4_off);
		uint16_t clamp = pi->v6 ? w->mss_clamp6 : w->mss_clamp;

		if (clamp != 0)
			w->cnt.mss_clamped +=
				lb_tcp_mss_clamp(tcp, (uint32_t)(tcp->data_off >> 4) * 4, clamp);
	}
}

/*
 * The inner header at l3 (IPv6 if v6) given what RFC 6040 makes of its
 * ECN field and the outer one's, outer. 0, or -1: drop it (CE over
 * Not-ECT). Only a CE set from the outer header is counted: the mux copied
 * the inner field out, so that is congestion between mux and host.
 */
static int
decap_ecn(struct ha_worker *w, uint8_t *l3, int v6, uint8_t outer)
{
	uint8_t inner = ecn_of(l3, v6);
	int ecn = ecn_decap(outer, inner);

	if (ecn < 0)
		return -1;
	if (ecn != inner) {
		ecn_set(l3, v6, (uint8_t)ecn);
		w->cnt.ecn_ce += ecn == ECN_CE;
	}
	return 0;
}

static void
deliver(struct ha_worker *w, struct rte_mbuf *m)
{
	const uint8_t *p0 = rte_pktmbuf_mtod(m, const uint8_t *);
	struct lb_pkt outer, pi;
	uint32_t len = m->data_len;
	uint8_t *p, ecn;
	int rc, vm, inner6;

	rc = lb_parse(p0, len, &outer);
	if (unlikely(rc == LB_DROP_FRAGMENT || rc == LB_DROP_IPV6_FRAGMENT)) {
		m = reassemble(w, m, &outer);
		if (m == NULL)
			return;
		p0 = rte_pktmbuf_mtod(m, const uint8_t *);
		len = m->data_len;
		rc = lb_parse(p0, len, &outer);
	}
	/* The outer frame must itself be sound; lb_parse stops at a tunnel. */
	if (rc == 0) {
		for_the_agent(w, m, &outer);
		return;
	}
	if (rc == LB_DROP_TUNNEL)
		rc = check_outer(w, p0, &outer);
	if (rc != 0) {
		ha_drop(w, m, rc);
		return;
	}
	inner6 = outer.proto == LB_IPPROTO_IPV6;
	/* Read before the Ethernet header goes over the outer one. */
	ecn = ecn_of(p0 + outer.l2_len, outer.v6);
	dp_trim_to(m, outer.l2_len + outer.l3_len);
	/* Drop the outer header; the Ethernet header goes over its tail. */
	p = (uint8_t *)rte_pktmbuf_adj(m, (uint16_t)(outer.l4_off - sizeof(struct lb_eth_hdr)));
	((struct lb_eth_hdr *)p)->type =
		lb_cpu_to_be16(inner6 ? LB_ETHERTYPE_IPV6 : LB_ETHERTYPE_IPV4);
	rc = lb_parse(p, m->data_len, &pi);
	if (rc != 0 || (pi.kind != LB_PKT_L4 && pi.kind != LB_PKT_ICMP_ERR &&
			       pi.kind != LB_PKT_ICMP_ECHO)) {
		ha_drop(w, m, LB_DROP_INNER_MALFORMED);
		return;
	}
	/* Bytes past the inner datagram are not the VM's to see. */
	dp_trim_to(m, pi.l2_len + pi.l3_len);
	vm = vm_of(w, p, &pi);
	if (vm < 0) {
		ha_drop(w, m, LB_DROP_NO_LOCAL_DIP);
		return;
	}
	/* An outer Not-ECT leaves the inner field as it is. */
	if (ecn != ECN_NOT_ECT && decap_ecn(w, p + pi.l2_len, inner6, ecn) != 0) {
		ha_drop(w, m, LB_DROP_ECN_NOT_ECT);
		return;
	}
	fix_inner(w, p, &pi);
	if (pi.kind == LB_PKT_L4 && pi.proto == LB_IPPROTO_TCP)
		ha_track_in(w, p, &pi);
	ha_set_eth(m, sizeof(struct lb_eth_hdr), &w->vms[vm].mac, &w->vms[vm].port_mac, inner6);
	w->cnt.decap++;
	w->vm_tx[vm]++;
	ha_enqueue(w, w->vms[vm].port, m);
}

void
ha_uplink_burst(struct ha_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		w->cnt.uplink_rx++;
		if (unlikely(pkts[i]->nb_segs != 1)) {
			ha_drop(w, pkts[i], LB_DROP_OVERSIZE);
			continue;
		}
		deliver(w, pkts[i]);
	}
	/* What reassembly gave up on in this burst (overlaps, too many fragments). */
	frag_reap(w);
}
