/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VM -> uplink: direct server return. The VM answers from DIP:dport; if
 * that endpoint is load-balanced (the mapping says so, traffic never does),
 * the source becomes VIP:vport and the packet goes straight to the router,
 * never back through a mux. ICMP errors a VM sends about a client's flow
 * get their source and quote translated the same way. Anything else the
 * VM sends from its own DIP passes through untouched but for its Ethernet
 * header; other sources, and tunnels, are dropped. The agent
 * is the VM's gateway: it answers every ARP request that is not for the
 * VM's own address.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "ha_agent.h"
#include "ha_icmp.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "lb_tcp.h"

/*
 * SNAT DIP:dport -> VIP:vport on a reply, checksums updated incrementally:
 * the address change is summed once for both checksums, and each checksum
 * is folded once.
 */
static void
rewrite_reply(uint8_t *p, const struct lb_pkt *pi, const struct ha_lb *lb, uint16_t clamp,
	uint64_t *clamped)
{
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi->l2_len);
	uint32_t saddr = lb_csum_delta32(ip->src, lb->vip);

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

		if (udp->csum != 0) {
			udp->csum = lb_csum_apply(
				udp->csum, saddr + lb_csum_delta16(udp->sport, lb->vport));
			if (udp->csum == 0)
				udp->csum = 0xffff;
		}
		udp->sport = lb->vport;
	}
	ip->csum = lb_csum_apply(ip->csum, saddr);
	ip->src = lb->vip;
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
	/*
	 * Unparseable for balancing but sound IPv4 (fragments, other protocols,
	 * other ICMP): not ours to touch; pass it on.
	 */
	if (rc != 0 && rc != LB_DROP_FRAGMENT && rc != LB_DROP_PROTO && rc != LB_DROP_ICMP_TYPE &&
		rc != LB_DROP_ICMP_QUOTE) {
		ha_drop(w, m, rc);
		return;
	}
	/*
	 * A VM speaks only from its own DIP: a forged source could pose as
	 * another tenant's VIP, and IP-in-IP from a VM (tunnel_inbound above)
	 * could pose as a mux to another host's agent.
	 */
	if (((const struct lb_ipv4_hdr *)(p + pi.l2_len))->src != v->dip) {
		ha_drop(w, m, LB_DROP_SPOOFED);
		return;
	}
	if (rc == 0 && w->n_probers != 0 && ha_is_prober(w, pi.ip_dst)) {
		/* A VM answering a health probe: from its DIP, as the prober expects. */
		w->cnt.probe_out++;
	} else if (rc == 0 && pi.src == v->dip && pi.kind != LB_PKT_ICMP_ECHO &&
		   /* An ICMP error must come from the VM itself, too. */
		   (pi.kind != LB_PKT_ICMP_ERR ||
			   ((const struct lb_ipv4_hdr *)(p + pi.l2_len))->src == v->dip) &&
		   (lb = ha_map_by_dip(w->map, pi.src, pi.sport, pi.proto)) != NULL) {
		if (pi.kind == LB_PKT_L4) {
			rewrite_reply(p, &pi, lb, w->mss_clamp, &w->cnt.mss_clamped);
		} else {
			/* ICMP error from the VM: outer source and the quoted destination. */
			struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi.l2_len);

			ha_quote_rewrite(p, &pi, 0, lb->vip, lb->vport);
			ip->csum = lb_csum_update32(ip->csum, ip->src, lb->vip);
			ip->src = lb->vip;
			w->cnt.icmp_translated++;
		}
		w->cnt.dsr++;
	} else {
		w->cnt.passthrough++;
	}
	ha_set_eth(
		m, pi.l2_len ? pi.l2_len : sizeof(struct lb_eth_hdr), &w->next_hop, &w->uplink_mac);
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
