/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packets the mux originates: ARP replies, echo replies for VIPs and the
 * tunnel address, and ICMP "fragmentation needed" for packets that would not
 * fit once encapsulated. Each is built in place of the packet that caused
 * it, so no allocation happens on the fast path, and goes back out of the
 * port it came in on, VLAN tag and all.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "lb_reply.h"
#include "mux_gen.h"
#include "mux_worker.h"

/* RFC 1812 4.3.2.3: an ICMP error should quote as much as fits in 576 bytes. */
#define MUX_ICMP_ERR_MAX 576

static void
trim_to(struct rte_mbuf *m, uint32_t len)
{
	if (m->data_len > len)
		rte_pktmbuf_trim(m, (uint16_t)(m->data_len - len));
}

void
mux_reply_arp(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi)
{
	const struct mux_ctx *ctx = w->ctx;

	if (pi->arp_op != LB_ARP_OP_REQUEST ||
		(pi->arp_tpa != ctx->tunnel_addr &&
			!(ctx->arp_for_vips && mux_gen_is_vip(g, pi->arp_tpa)))) {
		mux_drop(w, m, LB_DROP_ARP_IGNORED);
		return;
	}
	lb_reply_arp(rte_pktmbuf_mtod(m, uint8_t *), pi, &ctx->port_mac[port]);
	w->cnt.arp_replies++;
	mux_enqueue(w, port, m);
}

void
mux_reply_echo(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi)
{
	if (pi->dst != w->ctx->tunnel_addr && !mux_gen_is_vip(g, pi->dst)) {
		mux_drop(w, m, LB_DROP_NO_SERVICE);
		return;
	}
	trim_to(m, lb_reply_echo(rte_pktmbuf_mtod(m, uint8_t *), pi, &w->ctx->port_mac[port]));
	w->cnt.echo_replies++;
	mux_enqueue(w, port, m);
}

void
mux_reply_too_big(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi)
{
	const uint32_t hdrs = sizeof(struct lb_ipv4_hdr) + sizeof(struct lb_icmp_hdr);
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *l3 = p + pi->l2_len;
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)l3;
	struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(l3 + sizeof(*ip));
	uint32_t quote = RTE_MIN((uint32_t)pi->l3_len, MUX_ICMP_ERR_MAX - hdrs);

	/*
	 * The quote is the start of the original packet, moved up to make room
	 * for the new IP and ICMP headers; the original is at least the MTU
	 * long, so the reply fits in the same buffer.
	 */
	memmove(l3 + hdrs, l3, quote);
	lb_reply_turn_eth(p, &w->ctx->port_mac[port]);
	ip->ver_ihl = 0x45;
	ip->tos = 0;
	ip->total_len = rte_cpu_to_be_16((uint16_t)(hdrs + quote));
	ip->id = 0;
	ip->frag_off = 0;
	ip->ttl = 64;
	ip->proto = LB_IPPROTO_ICMP;
	/* From the VIP: the address the client sent to, and so can route back. */
	ip->src = pi->dst;
	ip->dst = pi->src;
	ip->csum = 0;
	ip->csum = lb_ipv4_hdr_csum(ip, sizeof(*ip));
	icmp->type = LB_ICMP_UNREACH;
	icmp->code = LB_ICMP_UNREACH_NEEDFRAG;
	icmp->frag.unused = 0;
	icmp->frag.mtu = rte_cpu_to_be_16((uint16_t)(w->ctx->mtu - LB_ENCAP_LEN));
	icmp->csum = 0;
	icmp->csum = lb_icmp_csum(icmp, sizeof(*icmp) + quote);
	trim_to(m, pi->l2_len + hdrs + quote);
	w->cnt.too_big_sent++;
	w->cnt.drops[LB_DROP_TOO_BIG]++;
	mux_enqueue(w, port, m);
}
