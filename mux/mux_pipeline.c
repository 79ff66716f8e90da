/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-burst packet path, in the order of the packet walk:
 *   1. parse every packet; ARP and pings are answered on the spot;
 *   2. look up the services of the rest in one bulk hash lookup;
 *   3. hash each flow once, and look the flows up in the connection table
 *      in bulk with that hash as the precomputed signature;
 *   4. per packet: backend from the table, else from Maglev on the same
 *      hash; DNAT, TTL, encapsulation, and onto the TX buffer.
 */
#include <string.h>

#include <rte_hash.h>
#include <rte_mbuf.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_maglev.h"
#include "lb_parse.h"
#include "mux_conn.h"
#include "mux_gen.h"
#include "mux_worker.h"

static inline uint32_t
conn_expiry(const struct mux_conn_table *ct, const struct lb_pkt *pi, uint32_t now)
{
	if (pi->proto == LB_IPPROTO_UDP)
		return now + ct->timeout[MUX_CONN_UDP];
	if (pi->tcp_flags & (LB_TCP_FIN | LB_TCP_RST))
		return now + ct->timeout[MUX_CONN_TCP_FIN];
	return now + ct->timeout[MUX_CONN_TCP];
}

/* DNAT VIP:port -> DIP:port and decrement TTL, fixing checksums incrementally. */
static inline void
rewrite_inner(uint8_t *p, const struct lb_pkt *pi, const struct mux_backend *be)
{
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi->l2_len);
	rte_be16_t old_tp, new_tp;

	if (pi->kind == LB_PKT_L4) {
		if (pi->proto == LB_IPPROTO_TCP) {
			struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(p + pi->l4_off);

			tcp->csum = lb_csum_update32(tcp->csum, ip->dst, be->dip);
			tcp->csum = lb_csum_update16(tcp->csum, tcp->dport, be->port);
			tcp->dport = be->port;
		} else {
			struct lb_udp_hdr *udp = (struct lb_udp_hdr *)(p + pi->l4_off);

			/* Zero means the sender computed no checksum: keep it so. */
			if (udp->csum != 0) {
				udp->csum = lb_csum_update32(udp->csum, ip->dst, be->dip);
				udp->csum = lb_csum_update16(udp->csum, udp->dport, be->port);
				if (udp->csum == 0)
					udp->csum = 0xffff;
			}
			udp->dport = be->port;
		}
	}
	/* An ICMP error keeps its quote; the host agent translates that. */
	ip->csum = lb_csum_update32(ip->csum, ip->dst, be->dip);
	ip->dst = be->dip;

	memcpy(&old_tp, &ip->ttl, 2);
	ip->ttl--;
	memcpy(&new_tp, &ip->ttl, 2);
	ip->csum = lb_csum_update16(ip->csum, old_tp, new_tp);
}

/*
 * Wrap the inner IPv4 packet in an outer one to the backend's host
 * (RFC 2003). DSCP and ECN are copied from the inner header (RFC 6040 normal
 * mode, and the uniform DSCP model of RFC 2983); DF is copied, so a packet
 * the sender allowed to fragment can still be fragmented on the way to the
 * host, and one it did not allow never is.
 */
static inline int
encapsulate(struct mux_worker *w, struct rte_mbuf *m, const struct lb_pkt *pi,
	const struct mux_backend *be, uint16_t port)
{
	const struct mux_ctx *ctx = w->ctx;
	const struct lb_ipv4_hdr *inner;
	struct lb_eth_hdr *eth;
	struct lb_ipv4_hdr *outer;
	uint32_t frame = (uint32_t)pi->l2_len + pi->l3_len;
	uint16_t grow = (uint16_t)(sizeof(*eth) + LB_ENCAP_LEN - pi->l2_len);
	uint8_t *p;
	uint8_t tos;

	/* Ethernet padding must not travel inside the tunnel. */
	if (m->data_len > frame)
		rte_pktmbuf_trim(m, (uint16_t)(m->data_len - frame));
	inner = rte_pktmbuf_mtod_offset(m, const struct lb_ipv4_hdr *, pi->l2_len);
	tos = inner->tos;

	p = (uint8_t *)rte_pktmbuf_prepend(m, grow);
	if (unlikely(p == NULL))
		return LB_DROP_NO_HEADROOM;
	eth = (struct lb_eth_hdr *)p;
	outer = (struct lb_ipv4_hdr *)(p + sizeof(*eth));
	memcpy(eth->dst, &ctx->next_hop, LB_ETH_ALEN);
	memcpy(eth->src, &ctx->port_mac[port], LB_ETH_ALEN);
	eth->type = rte_cpu_to_be_16(LB_ETHERTYPE_IPV4);

	outer->ver_ihl = 0x45;
	outer->tos = tos;
	outer->total_len = rte_cpu_to_be_16((uint16_t)(pi->l3_len + LB_ENCAP_LEN));
	if (pi->df) {
		outer->frag_off = rte_cpu_to_be_16(LB_IPV4_DF);
		outer->id = 0; /* RFC 6864: the id of an atomic datagram is unused */
	} else {
		outer->frag_off = 0;
		outer->id = rte_cpu_to_be_16(w->ip_id++);
	}
	outer->ttl = ctx->tunnel_ttl;
	outer->proto = LB_IPPROTO_IPIP;
	outer->src = ctx->tunnel_addr;
	outer->dst = be->host;
	outer->csum = 0;
	outer->csum = lb_ipv4_hdr_csum(outer, sizeof(*outer));
	return 0;
}

static inline void
forward(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t svc, const struct lb_flow_key *key, uint64_t fh,
	int32_t pos, uint32_t now)
{
	struct mux_conn_table *ct = w->conn;
	const struct mux_service *s = &g->services[svc];
	const struct mux_backend *be;
	struct mux_conn *ce = NULL;
	uint32_t id = UINT32_MAX;
	uint16_t slot;
	int rc;

	/* Would not fit once encapsulated: tell the client, never lose it silently. */
	if (unlikely(pi->l3_len + LB_ENCAP_LEN > w->ctx->mtu)) {
		if (pi->df && pi->kind == LB_PKT_L4)
			mux_reply_too_big(w, port, m, pi);
		else
			mux_drop(w, m, pi->df ? LB_DROP_TOO_BIG : LB_DROP_TOO_BIG_NO_DF);
		return;
	}
	/*
	 * A miss may be a flow that an earlier packet of this burst has just
	 * added. Adding returns the existing entry then, and a live entry found
	 * that way is a hit; a fresh slot has expiry 0 (never used, or swept).
	 * Errors about a flow follow it; they never start one.
	 */
	if (pos < 0 && pi->kind == LB_PKT_L4) {
		pos = rte_hash_add_key_with_hash(ct->h, key, lb_flow_sig(fh));
		if (unlikely(pos < 0))
			w->cnt.conn_full++;
	}
	if (pos >= 0) {
		ce = &ct->ent[pos];
		/* Expired, or pinned to a backend this service no longer has. */
		if ((int32_t)(ce->expires - now) > 0 && ce->backend < g->n_backends &&
			g->backends[ce->backend].svc == svc) {
			id = ce->backend;
			w->cnt.conn_hit++;
		}
	}
	if (id == UINT32_MAX) {
		slot = lb_maglev_lookup(s->maglev, g->maglev_size, fh);
		if (unlikely(slot == LB_MAGLEV_EMPTY)) {
			mux_drop(w, m, LB_DROP_NO_BACKEND);
			return;
		}
		id = s->first_backend + slot;
		if (pi->kind == LB_PKT_L4) {
			w->cnt.conn_new++;
			w->svc_cnt[svc].new_conns++;
			w->be_cnt[id].new_conns++;
		}
	}
	if (ce != NULL && pi->kind == LB_PKT_L4) {
		ce->backend = id;
		ce->expires = conn_expiry(ct, pi, now);
	}

	be = &g->backends[id];
	rewrite_inner(rte_pktmbuf_mtod(m, uint8_t *), pi, be);
	rc = encapsulate(w, m, pi, be, port);
	if (unlikely(rc != 0)) {
		mux_drop(w, m, rc);
		return;
	}
	w->cnt.fwd_pkts++;
	w->cnt.fwd_bytes += pi->l3_len;
	if (pi->kind == LB_PKT_ICMP_ERR)
		w->cnt.icmp_err_fwd++;
	w->svc_cnt[svc].pkts++;
	w->svc_cnt[svc].bytes += pi->l3_len;
	w->be_cnt[id].pkts++;
	w->be_cnt[id].bytes += pi->l3_len;
	mux_enqueue(w, port, m);
}

void
mux_burst(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf **pkts,
	uint16_t n, uint32_t now)
{
	struct lb_pkt info[MUX_BURST];
	struct rte_mbuf *fw[MUX_BURST];
	struct lb_svc_key skey[MUX_BURST];
	struct lb_flow_key fkey[MUX_BURST];
	const void *kp[MUX_BURST];
	void *sdata[MUX_BURST];
	uint32_t svc[MUX_BURST];
	hash_sig_t sig[MUX_BURST];
	uint64_t fh[MUX_BURST];
	int32_t pos[MUX_BURST];
	uint64_t hits = 0;
	uint16_t i, k = 0, j = 0;
	int rc;

	/* 1. Parse; answer what is addressed to the mux itself. */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct lb_pkt *pi = &info[k];

		w->cnt.rx_pkts++;
		w->cnt.rx_bytes += m->pkt_len;
		if (unlikely(m->nb_segs != 1)) {
			mux_drop(w, m, LB_DROP_OVERSIZE);
			continue;
		}
		rc = lb_parse(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, pi);
		if (unlikely(rc != 0)) {
			mux_drop(w, m, rc);
			continue;
		}
		switch (pi->kind) {
		case LB_PKT_ARP:
			mux_reply_arp(w, g, port, m, pi);
			continue;
		case LB_PKT_ICMP_ECHO:
			mux_reply_echo(w, g, port, m, pi);
			continue;
		default:
			break;
		}
		lb_svc_key_v4(&skey[k], pi->dst, pi->dport, pi->proto);
		kp[k] = &skey[k];
		fw[k++] = m;
	}
	if (k == 0)
		return;

	/* 2. Services, in bulk. */
	rte_hash_lookup_bulk_data(g->svc_hash, kp, k, &hits, sdata);
	for (i = 0; i < k; i++) {
		uint32_t sv = (uint32_t)(uintptr_t)sdata[i];

		/* Not a VIP:port we balance (a bare VIP hit is the marker). */
		if (!(hits & (1ULL << i)) || sv == MUX_GEN_VIP) {
			mux_drop(w, fw[i], LB_DROP_NO_SERVICE);
			continue;
		}
		/* Forwarding would bring the TTL to zero. */
		if (unlikely(info[i].ttl <= 1)) {
			mux_drop(w, fw[i], LB_DROP_TTL);
			continue;
		}
		/* 3. One flow hash per packet. */
		lb_flow_key_v4(&fkey[j], info[i].src, info[i].sport, info[i].dst, info[i].dport,
			info[i].proto);
		fh[j] = lb_flow_hash(&g->seed, &fkey[j]);
		sig[j] = lb_flow_sig(fh[j]);
		kp[j] = &fkey[j];
		svc[j] = sv;
		fw[j] = fw[i];
		if (j != i)
			info[j] = info[i];
		j++;
	}
	if (j == 0)
		return;
	rte_hash_lookup_with_hash_bulk(w->conn->h, kp, sig, j, pos);
	/* The hits' records and backends: one miss each, overlapped across the burst. */
	for (i = 0; i < j; i++)
		if (pos[i] >= 0)
			rte_prefetch0(&w->conn->ent[pos[i]]);

	/* 4. Choose, rewrite, encapsulate, queue. */
	for (i = 0; i < j; i++)
		forward(w, g, port, fw[i], &info[i], svc[i], &fkey[i], fh[i], pos[i], now);
}
