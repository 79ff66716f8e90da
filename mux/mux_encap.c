/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 4in6, 6in4 and 6in6 (mux_encap.h has the rules and 4in4). Out of line:
 * the IPv4-to-IPv4 path never calls them.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "mux_encap.h"

/*
 * Room for the outer header in front of the inner packet (whose own L2
 * header, and Ethernet padding, are dropped): the new frame start, or NULL.
 */
static uint8_t *
make_room(struct rte_mbuf *m, const struct lb_pkt *pi, uint32_t outer, const struct mux_ctx *ctx,
	uint16_t port, bool v6)
{
	uint32_t frame = (uint32_t)pi->l2_len + pi->l3_len;
	struct lb_eth_hdr *eth;
	uint8_t *p;

	dp_trim_to(m, frame);
	p = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)(sizeof(*eth) + outer - pi->l2_len));
	if (p == NULL)
		return NULL;
	eth = (struct lb_eth_hdr *)p;
	memcpy(eth->dst, v6 ? &ctx->next_hop6 : &ctx->next_hop, LB_ETH_ALEN);
	memcpy(eth->src, &ctx->port_mac[port], LB_ETH_ALEN);
	eth->type = lb_cpu_to_be16(v6 ? LB_ETHERTYPE_IPV6 : LB_ETHERTYPE_IPV4);
	return p;
}

int
mux_encap_other(struct mux_worker *w, const struct mux_gen *g, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t id, uint16_t port, uint64_t fh)
{
	const struct mux_ctx *ctx = w->ctx;
	const struct mux_backend *be = &g->backends[id];
	uint8_t tc = lb_ip_tclass(rte_pktmbuf_mtod_offset(m, const uint8_t *, pi->l2_len), pi->v6);
	uint8_t *p;

	if (be->flags & MUX_BE_HOST6) {
		/* 4in6, 6in6: RFC 2473, no extension headers. */
		struct lb_ipv6_hdr *o;

		p = make_room(m, pi, LB_ENCAP6_LEN, ctx, port, true);
		if (p == NULL)
			return LB_DROP_NO_HEADROOM;
		o = (struct lb_ipv6_hdr *)(p + sizeof(struct lb_eth_hdr));
		o->vtc_flow = lb_cpu_to_be32(lb_ipv6_vtc(tc, mux_flow_label(fh)));
		o->payload_len = lb_cpu_to_be16(pi->l3_len);
		o->next_hdr = pi->v6 ? LB_IPPROTO_IPV6 : LB_IPPROTO_IPIP;
		o->hop_limit = ctx->tunnel_ttl;
		memcpy(o->src, ctx->tunnel_addr6, 16);
		memcpy(o->dst, g->addr6[id].host, 16);
	} else {
		/* 6in4: RFC 4213, DF clear (its static tunnel MTU, 3.2.1). */
		struct lb_ipv4_hdr *o;

		p = make_room(m, pi, LB_ENCAP_LEN, ctx, port, false);
		if (p == NULL)
			return LB_DROP_NO_HEADROOM;
		o = (struct lb_ipv4_hdr *)(p + sizeof(struct lb_eth_hdr));
		o->ver_ihl = 0x45;
		o->tos = tc;
		o->total_len = lb_cpu_to_be16((uint16_t)(pi->l3_len + LB_ENCAP_LEN));
		o->id = lb_cpu_to_be16(mux_worker_ip_id(w));
		o->frag_off = 0;
		o->ttl = ctx->tunnel_ttl;
		o->proto = LB_IPPROTO_IPV6;
		o->src = ctx->tunnel_addr;
		o->dst = be->host;
		o->csum = 0;
		o->csum = lb_ipv4_hdr_csum(o, sizeof(*o));
	}
	return 0;
}
