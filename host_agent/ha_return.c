/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VM -> uplink: direct server return. The VM answers from DIP:dport; if
 * that endpoint is load-balanced (the mapping says so, traffic never does),
 * the source becomes VIP:vport and the packet goes straight to the router,
 * never back through a mux. ICMP and ICMPv6 errors a VM sends about a
 * client's flow get their source and quote translated the same way.
 * Anything else the VM sends from its own DIP passes through untouched but
 * for its Ethernet header; other sources, and tunnels, are dropped. The
 * agent is the VM's gateway: it answers every ARP request that is not for
 * the VM's own address, and neighbor solicitations for gateway6; what else
 * an IPv6 VM says to its link (router solicitations, MLD reports: from its
 * link-local address, to a link-local address or to a multicast group)
 * stays on the link.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "ha_agent.h"
#include "ha_track.h"
#include "ha_icmp.h"
#include "lb_addr.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "lb_tcp.h"

/*
 * SNAT DIP:dport -> VIP:vport on a reply, checksums updated incrementally:
 * the address change is summed once for the IPv4 header and the
 * pseudo-header (IPv6: the pseudo-header only, there being no header
 * checksum), and each checksum is folded once.
 */
static void
rewrite_reply(uint8_t *p, const struct lb_pkt *pi, const struct ha_lb *lb, uint16_t clamp,
	uint64_t *clamped)
{
	uint8_t *src = pi->v6 ? p + pi->src6_off
			      : (uint8_t *)&((struct lb_ipv4_hdr *)(p + pi->l2_len))->src;
	uint32_t saddr = pi->v6 ? lb_csum_delta128(src, lb->vip.a8)
				: lb_csum_delta32(pi->src, lb->vip.a32[0]);

	if (pi->proto == LB_IPPROTO_TCP) {
		struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(p + pi->l4_off);

		tcp->csum =
			lb_csum_apply(tcp->csum, saddr + lb_csum_delta16(tcp->sport, lb->vport));
		tcp->sport = lb->vport;
		if ((tcp->flags & LB_TCP_SYN) && clamp != 0)
			*clamped +=
				lb_tcp_mss_clamp(tcp, (uint32_t)(tcp->data_off >> 4) * 4, clamp);
	} else {
		struct lb_udp_hdr *udp = (struct lb_udp_hdr *)(p + pi->l4_off);

		udp->csum = lb_csum_apply_udp(
			udp->csum, saddr + lb_csum_delta16(udp->sport, lb->vport));
		udp->sport = lb->vport;
	}
	if (!pi->v6) {
		struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi->l2_len);

		ip->csum = lb_csum_apply(ip->csum, saddr);
	}
	memcpy(src, lb->vip.a8, pi->v6 ? 16 : 4);
}

/* The source of the IP header itself (not the tuple's): 4 or 16 bytes. */
static const uint8_t *
ip_src(const uint8_t *p, const struct lb_pkt *pi)
{
	return pi->v6 ? p + pi->l2_len + offsetof(struct lb_ipv6_hdr, src)
		      : p + pi->l2_len + offsetof(struct lb_ipv4_hdr, src);
}

/* The 4 or 16 bytes at a are the VM's DIP of that family. */
static int
is_dip(const struct ha_vm *v, const uint8_t *a, int v6)
{
	return v6 ? v->has_dip6 && memcmp(a, v->dip6, 16) == 0
		  : v->dip != 0 && memcmp(a, &v->dip, 4) == 0;
}

/* The IPv6 address at a is link-local (fe80::/10). */
static inline int
link_local(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

/*
 * IPv6 that is the link's business and no one's beyond it: from or to a
 * link-local address (fe80::/10; RFC 4291 2.5.6: no router forwards
 * either, whatever the other address is: a VM's packet from its global
 * DIP6 to gateway6 fe80::1 is for its link), or to a multicast group.
 */
static int
link_scope(const uint8_t *p, const struct lb_pkt *pi)
{
	const uint8_t *d = lb_pkt_ip_dst6(p, pi);

	return link_local(ip_src(p, pi)) || link_local(d) || d[0] == 0xff;
}

static void
from_vm(struct ha_worker *w, int vm, struct rte_mbuf *m)
{
	const struct ha_vm *v = &w->vms[vm];
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	const struct ha_lb *lb;
	struct lb_pkt pi;
	int rc;

	w->vm_rx[vm]++;
	rc = lb_parse(p, m->data_len, &pi);
	if (rc == 0 && pi.kind == LB_PKT_ARP) {
		ha_arp(w, v->port, &v->port_mac, m, &pi, 1, v->dip);
		return;
	}
	/* The VM asks for its gateway: the agent is its router (R set). */
	if (rc == 0 && pi.kind == LB_PKT_ND) {
		ha_nd(w, v->port, &v->port_mac, m, &pi, w->has_gateway6 ? w->gateway6 : NULL, 1);
		return;
	}
	/*
	 * Unparseable for balancing but sound IP (fragments, other protocols,
	 * other ICMP): not ours to touch; pass it on.
	 */
	if (rc != 0 && rc != LB_DROP_FRAGMENT && rc != LB_DROP_IPV6_FRAGMENT &&
		rc != LB_DROP_PROTO && rc != LB_DROP_ICMP_TYPE && rc != LB_DROP_ICMP_QUOTE) {
		ha_drop(w, m, rc);
		return;
	}
	if (pi.v6 && link_scope(p, &pi)) {
		ha_drop(w, m, LB_DROP_VM_LINK_LOCAL);
		return;
	}
	/*
	 * A VM speaks only from its own DIP: a forged source could pose as
	 * another tenant's VIP, and a tunnel from a VM (tunnel_inbound above)
	 * could pose as a mux to another host's agent.
	 */
	if (!is_dip(v, ip_src(p, &pi), pi.v6)) {
		ha_drop(w, m, LB_DROP_SPOOFED);
		return;
	}
	if (rc == 0 && (pi.v6 ? lb_addr6_in(lb_pkt_ip_dst6(p, &pi), w->probers6, w->n_probers6)
			      : lb_addr4_in(pi.ip_dst, w->probers, w->n_probers))) {
		/* A VM answering a health probe: from its DIP, as the prober expects. */
		w->cnt.probe_out++;
	} else if (rc == 0 && pi.kind != LB_PKT_ICMP_ECHO &&
		   /* The tuple's source (for an error, the quote's destination) too. */
		   is_dip(v, pi.v6 ? lb_pkt_src6(p, &pi) : (const uint8_t *)&pi.src, pi.v6) &&
		   (lb = ha_map_by_dip(w->map, pi.v6 ? LB_AF_INET6 : LB_AF_INET,
			    pi.v6 ? lb_pkt_src6(p, &pi) : (const uint8_t *)&pi.src, pi.sport,
			    pi.proto)) != NULL) {
		if (pi.kind == LB_PKT_L4) {
			if (pi.proto == LB_IPPROTO_TCP)
				ha_track_out(w, p, &pi); /* before the source becomes the VIP */
			rewrite_reply(p, &pi, lb, pi.v6 ? w->mss_clamp6 : w->mss_clamp,
				&w->cnt.mss_clamped);
		} else if (pi.v6) {
			/* ICMPv6 error from the VM: its source and the quoted destination. */
			ha_quote_rewrite6(p, &pi, 0, lb->vip.a8, lb->vport);
			ha_icmp6_src_rewrite(p, &pi, lb->vip.a8);
			w->cnt.icmp_translated++;
		} else {
			/* ICMP error from the VM: outer source and the quoted destination. */
			struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi.l2_len);

			ha_quote_rewrite(p, &pi, 0, lb->vip.a32[0], lb->vport);
			ip->csum = lb_csum_update32(ip->csum, ip->src, lb->vip.a32[0]);
			ip->src = lb->vip.a32[0];
			w->cnt.icmp_translated++;
		}
		w->cnt.dsr++;
	} else {
		w->cnt.passthrough++;
	}
	ha_set_eth(m, pi.l2_len ? pi.l2_len : sizeof(struct lb_eth_hdr), &w->next_hop,
		&w->uplink_mac, pi.v6);
	ha_enqueue(w, w->uplink, m);
}

void
ha_vm_burst(struct ha_worker *w, int vm, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		w->cnt.vm_rx++;
		if (unlikely(pkts[i]->nb_segs != 1)) {
			w->vm_rx[vm]++;
			ha_drop(w, pkts[i], LB_DROP_OVERSIZE);
			continue;
		}
		from_vm(w, vm, pkts[i]);
	}
}
