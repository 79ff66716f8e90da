/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Uplink -> VM. What arrives on the uplink is either for the agent itself
 * (ARP and ping for its PA) or IP-in-IP from a mux. A tunnel packet is
 * accepted only if it is addressed to our PA and sent by a listed mux, its
 * outer header is sound, and its inner packet parses and is addressed to a
 * DIP of a local VM. The outer header is stripped by writing the VM's
 * Ethernet header over its last 14 bytes: no copy of the payload.
 */
/* rte_ip_frag_table_del_expired_entries() is still experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API

#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "ha_agent.h"
#include "ha_icmp.h"
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
	int ours = proxy ? pi->arp_tpa != addr : pi->arp_tpa == addr;

	if (pi->arp_op != LB_ARP_OP_REQUEST || !ours) {
		ha_drop(w, m, LB_DROP_ARP_IGNORED);
		return;
	}
	lb_reply_arp(rte_pktmbuf_mtod(m, uint8_t *), pi, mac);
	w->cnt.arp_replies++;
	ha_enqueue(w, port, m);
}

static void
reply_echo(struct ha_worker *w, struct rte_mbuf *m, const struct lb_pkt *pi)
{
	uint32_t len = lb_reply_echo(rte_pktmbuf_mtod(m, uint8_t *), pi, &w->uplink_mac);

	if (m->data_len > len)
		rte_pktmbuf_trim(m, (uint16_t)(m->data_len - len));
	w->cnt.echo_replies++;
	ha_enqueue(w, w->uplink, m);
}

static int
is_mux(const struct ha_worker *w, lb_be32_t a)
{
	uint16_t i;

	for (i = 0; i < w->n_muxes; i++)
		if (w->muxes[i] == a)
			return 1;
	return 0;
}

static int
vm_of_dip(const struct ha_worker *w, lb_be32_t dip)
{
	uint16_t i;

	for (i = 0; i < w->n_vms; i++)
		if (w->vms[i].dip == dip)
			return i;
	return -1;
}

/*
 * An outer fragment. The mux copies DF from the client's packet, so a
 * router between mux and host may split a tunnel packet the client let be
 * fragmented. Fragments of a tunnel from a known mux to our PA (header
 * already checked by lb_parse) wait in DPDK's reassembly table; the whole
 * datagram comes back as one segment with its outer header made whole and
 * goes the way of any tunnel packet. Anything else stays a drop. Returns the
 * whole datagram, or NULL: m was held, or dropped under its reason.
 */
static struct rte_mbuf *
reassemble(struct ha_worker *w, struct rte_mbuf *m, uint16_t l2)
{
	struct lb_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct lb_ipv4_hdr *, l2);
	uint32_t ihl = (uint32_t)lb_ipv4_ihl(ip) * 4;
	uint32_t frame = l2 + (uint32_t)lb_be16_to_cpu(ip->total_len);
	struct rte_mbuf *whole;
	int rc = 0;

	if (ip->proto != LB_IPPROTO_IPIP || w->frag_tbl == NULL)
		rc = LB_DROP_FRAGMENT;
	else if (ip->dst != w->pa)
		rc = LB_DROP_NOT_OUR_PA;
	else if (!is_mux(w, ip->src))
		rc = LB_DROP_UNKNOWN_MUX;
	if (rc != 0) {
		ha_drop(w, m, rc);
		return NULL;
	}
	/* Ethernet padding would land inside the reassembled datagram. */
	if (m->data_len > frame)
		rte_pktmbuf_trim(m, (uint16_t)(m->data_len - frame));
	m->l2_len = l2;
	m->l3_len = ihl;
	w->cnt.frags_in++;
	whole = rte_ipv4_frag_reassemble_packet(
		w->frag_tbl, &w->frag_dr, m, rte_rdtsc(), (struct rte_ipv4_hdr *)ip);
	if (whole == NULL)
		return NULL; /* held; or given up, in the death row */
	if (whole->nb_segs != 1 && rte_pktmbuf_linearize(whole) != 0) {
		ha_drop(w, whole, LB_DROP_REASSEMBLY_TOO_BIG);
		return NULL;
	}
	/* The library leaves the checksum for a TX offload we do not ask for. */
	whole->ol_flags &= ~RTE_MBUF_F_TX_IP_CKSUM;
	ip = rte_pktmbuf_mtod_offset(whole, struct lb_ipv4_hdr *, whole->l2_len);
	ip->csum = 0;
	ip->csum = lb_ipv4_hdr_csum(ip, whole->l3_len);
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

/* Outer header checks; returns 0 or a drop reason, and the outer IHL. */
static int
check_outer(struct ha_worker *w, const uint8_t *p, uint32_t len, uint32_t l2, uint32_t *ihl)
{
	const struct lb_ipv4_hdr *ip = (const struct lb_ipv4_hdr *)(p + l2);
	uint32_t tot;

	*ihl = (uint32_t)lb_ipv4_ihl(ip) * 4;
	/* IPv6-in-IPv4 is not a Sluice tunnel. */
	if (ip->proto != LB_IPPROTO_IPIP)
		return LB_DROP_NOT_TUNNEL;
	/* Addressed elsewhere, or not from a mux we know: not ours to open. */
	if (ip->dst != w->pa)
		return LB_DROP_NOT_OUR_PA;
	if (!is_mux(w, ip->src))
		return LB_DROP_UNKNOWN_MUX;
	tot = lb_be16_to_cpu(ip->total_len);
	/* Room for at least an inner IPv4 header after the outer one. */
	if (tot < *ihl + sizeof(struct lb_ipv4_hdr) || len < l2 + tot)
		return LB_DROP_INNER_MALFORMED;
	return 0;
}

static void
deliver(struct ha_worker *w, struct rte_mbuf *m)
{
	const uint8_t *p0 = rte_pktmbuf_mtod(m, const uint8_t *);
	struct lb_pkt outer, pi;
	uint32_t ihl, len = m->data_len;
	uint8_t *p;
	int rc, vm;

	rc = lb_parse(p0, len, &outer);
	if (unlikely(rc == LB_DROP_FRAGMENT)) {
		m = reassemble(w, m, outer.l2_len);
		if (m == NULL)
			return;
		p0 = rte_pktmbuf_mtod(m, const uint8_t *);
		len = m->data_len;
		rc = lb_parse(p0, len, &outer);
	}
	/* The outer frame must itself be sound; lb_parse stops at proto 4. */
	if (rc == 0) {
		if (outer.kind == LB_PKT_ARP) {
			ha_arp(w, w->uplink, &w->uplink_mac, m, &outer, 0, w->pa);
			return;
		}
		if (outer.kind == LB_PKT_ICMP_ECHO && outer.dst == w->pa) {
			reply_echo(w, m, &outer);
			return;
		}
		/* A health probe: plain TCP/UDP from a prober to a local DIP. */
		if (outer.kind == LB_PKT_L4 && w->n_probers != 0 && ha_is_prober(w, outer.src) &&
			(vm = vm_of_dip(w, outer.ip_dst)) >= 0) {
			if (m->data_len > outer.l2_len + outer.l3_len)
				rte_pktmbuf_trim(
					m, (uint16_t)(m->data_len - outer.l2_len - outer.l3_len));
			ha_set_eth(m, outer.l2_len, &w->vms[vm].mac, &w->vms[vm].port_mac);
			w->cnt.probe_in++;
			w->vm_tx[vm]++;
			ha_enqueue(w, w->vms[vm].port, m);
			return;
		}
		ha_drop(w, m, LB_DROP_NOT_TUNNEL);
		return;
	}
	if (rc != LB_DROP_TUNNEL) {
		ha_drop(w, m, rc);
		return;
	}
	rc = check_outer(w, p0, len, outer.l2_len, &ihl);
	if (rc != 0) {
		ha_drop(w, m, rc);
		return;
	}
	if (m->data_len >
		outer.l2_len +
			lb_be16_to_cpu(
				((const struct lb_ipv4_hdr *)(p0 + outer.l2_len))->total_len))
		rte_pktmbuf_trim(m,
			(uint16_t)(m->data_len - outer.l2_len -
				   lb_be16_to_cpu(((const struct lb_ipv4_hdr *)(p0 + outer.l2_len))
							  ->total_len)));
	/* Drop the outer header; the Ethernet header goes over its tail. */
	p = (uint8_t *)rte_pktmbuf_adj(
		m, (uint16_t)(outer.l2_len + ihl - sizeof(struct lb_eth_hdr)));
	((struct lb_eth_hdr *)p)->type = lb_cpu_to_be16(LB_ETHERTYPE_IPV4);
	rc = lb_parse(p, m->data_len, &pi);
	if (rc != 0 || (pi.kind != LB_PKT_L4 && pi.kind != LB_PKT_ICMP_ERR &&
			       pi.kind != LB_PKT_ICMP_ECHO)) {
		ha_drop(w, m, LB_DROP_INNER_MALFORMED);
		return;
	}
	/* Bytes past the inner datagram are not the VM's to see. */
	if (m->data_len > pi.l2_len + pi.l3_len)
		rte_pktmbuf_trim(m, (uint16_t)(m->data_len - pi.l2_len - pi.l3_len));
	vm = vm_of_dip(w, pi.ip_dst);
	if (vm < 0) {
		ha_drop(w, m, LB_DROP_NO_LOCAL_DIP);
		return;
	}
	if (pi.kind == LB_PKT_ICMP_ERR) {
		/* The quote shows VIP:vport -> client; the VM sent DIP:dport -> client. */
		const struct ha_lb *lb =
			ha_map_by_vip(w->map, pi.dst, pi.dport, pi.proto, pi.ip_dst);

		if (lb != NULL) {
			ha_quote_rewrite(p, &pi, 1, lb->dip, lb->dport);
			w->cnt.icmp_translated++;
		}
	} else if (pi.kind == LB_PKT_L4 && pi.proto == LB_IPPROTO_TCP &&
		   (pi.tcp_flags & LB_TCP_SYN) && w->mss_clamp != 0) {
		struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(p + pi.l4_off);

		w->cnt.mss_clamped +=
			lb_tcp_mss_clamp(tcp, (uint32_t)(tcp->data_off >> 4) * 4, w->mss_clamp);
	}
	ha_set_eth(m, sizeof(struct lb_eth_hdr), &w->vms[vm].mac, &w->vms[vm].port_mac);
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
