/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 packet path. mux_burst() parses every packet; an IPv6 one comes
 * here and goes the walk of an IPv4 one, one packet at a time:
 *   1. what is addressed to the mux itself is answered (neighbor
 *      solicitations, echo requests: mux_reply6.c);
 *   2. the service, in the generation's IPv6 service table;
 *   3. the flow hash of the canonical IPv6 tuple, and the worker's IPv6
 *      connection table;
 *   4. the backend (mux_choose.h, as for IPv4), the size check, the flow
 *      recorded, DNAT (destination and port; no header checksum, the
 *      TCP/UDP/ICMPv6 checksum covers the pseudo-header), hop limit, and
 *      the outer header of the PA's family (mux_encap.h).
 * IPv4 flows never touch this file or its table.
 */
#include <stdbool.h>
#include <string.h>

#include <rte_mbuf.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "mux_choose.h"
#include "mux_conn.h"
#include "mux_encap.h"
#include "mux_gen.h"
#include "mux_worker.h"

/*
 * DNAT VIP6:port -> DIP6:port and hop limit - 1. IPv6 has no header
 * checksum; the upper layer's covers the destination through the
 * pseudo-header, so the address change and the port change are summed and
 * applied once. An ICMPv6 error keeps its quote (the agent translates it),
 * but its checksum covers the new destination too.
 */
static void
rewrite_inner6(uint8_t *p, const struct lb_pkt *pi, const uint8_t *dip, lb_be16_t port)
{
	struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)(p + pi->l2_len);
	uint32_t daddr = lb_csum_delta128(ip->dst, dip);

	if (pi->kind == LB_PKT_L4 && pi->proto == LB_IPPROTO_TCP) {
		struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(p + pi->l4_off);

		tcp->csum = lb_csum_apply(tcp->csum, daddr + lb_csum_delta16(tcp->dport, port));
		tcp->dport = port;
	} else if (pi->kind == LB_PKT_L4) {
		struct lb_udp_hdr *udp = (struct lb_udp_hdr *)(p + pi->l4_off);

		/* Zero is no checksum, which IPv6 forbids: it stays as the sender made it. */
		udp->csum = lb_csum_apply_udp(udp->csum, daddr + lb_csum_delta16(udp->dport, port));
		udp->dport = port;
	} else {
		struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(p + pi->l4_off);

		icmp->csum = lb_csum_apply(icmp->csum, daddr);
	}
	memcpy(ip->dst, dip, 16);
	ip->hop_limit--;
}

static void
forward6(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t svc, uint32_t now)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	struct mux_burst_cnt bc = {0, 0, 0, 0};
	const struct mux_backend *be;
	struct mux_conn *ce = NULL;
	struct lb_flow_key key;
	struct mux_choice c;
	struct mux_conn rec;
	bool frag = false, made = true;
	uint64_t fh;
	int32_t pos;

	lb_flow_key_v6(
		&key, lb_pkt_src6(p, pi), pi->sport, lb_pkt_dst6(p, pi), pi->dport, pi->proto);
	fh = mux_conn6_hash(&g->seed, &key);
	pos = mux_conn6_lookup(w->conn6, &key, fh);
	if (pos >= 0)
		ce = mux_conn6_at(w->conn6, pos);
	be = mux_decide(w, g, port, m, pi, svc, ce, fh, now, &c, &frag);
	if (be == NULL)
		return;
	if (pi->kind == LB_PKT_L4) {
		uint32_t sid = g->services[svc].sid;
		bool add = mux_conn_write(ce, w->conn6->timeout, g, pi, &c, now, &rec);
		uint32_t owner = mux_conn_owner_word(sid, &rec);

		/* As for IPv4: the owner follows the record, the quota bounds adds. */
		if (!add)
			mux_conn6_set_owner(w->conn6, pos, owner);
		else if (unlikely(w->conn6->svc_held[sid] >= w->conn6->quota))
			made = mux_no_entry(pi, &w->cnt.conn_quota);
		else if (mux_conn6_add(w->conn6, &key, fh, rec, owner) < 0)
			made = mux_no_entry(pi, &w->cnt.conn_full);
	}
	mux_count_choice(w, g, svc, pi, &c, made, &bc);
	rewrite_inner6(rte_pktmbuf_mtod(m, uint8_t *), pi, g->addr6[c.id].dip, be->port);
	mux_send(w, g, port, m, pi, svc, c.id, fh, frag, true, &bc);
	w->cnt.fwd_pkts += bc.fwd_pkts;
	w->cnt.fwd6_pkts += bc.fwd_pkts;
	w->cnt.fwd_bytes += bc.fwd_bytes;
	w->cnt.conn_hit += bc.conn_hit;
	w->cnt.conn_new += bc.conn_new;
}

void
mux_packet6(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	struct lb_pkt *pi, uint32_t now)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t sv;

	switch (pi->kind) {
	case LB_PKT_ND:
		mux_reply_nd(w, g, port, m, pi);
		return;
	case LB_PKT_ICMP_ECHO:
		mux_reply_echo(w, g, port, m, pi);
		return;
	case LB_PKT_ICMP_ERR:
		/* An error about VIP -> client is sent to the VIP; anything else is forged. */
		if (memcmp(lb_pkt_dst6(p, pi), lb_pkt_ip_dst6(p, pi), 16) != 0) {
			mux_drop(w, m, LB_DROP_ICMP_QUOTE);
			return;
		}
		break;
	default:
		break;
	}
	sv = mux_gen_svc6(g, lb_pkt_dst6(p, pi), pi->dport, pi->proto);
	/* Not a VIP:port we balance (a bare VIP hit is the marker). */
	if (sv >= MUX_GEN_NONE) {
		mux_drop(w, m, LB_DROP_NO_SERVICE);
		return;
	}
	/* Forwarding would bring the hop limit to zero. */
	if (pi->ttl <= 1) {
		mux_drop(w, m, LB_DROP_TTL);
		return;
	}
	forward6(w, g, port, m, pi, sv, now);
}
