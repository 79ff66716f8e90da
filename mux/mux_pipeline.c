/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-burst packet path, in the order of the packet walk:
 *   1. parse every packet; ARP, pings and the manager's VIP probes are
 *      answered on the spot;
 *   2. look up the service of the rest in the generation's service table;
 *   3. hash each flow once, and look the flows up in the connection table
 *      in bulk with that hash (its bucket fetched as soon as it is known);
 *   4. per packet: backend from the table (unless it is in maintenance),
 *      else from Maglev on the same hash (mux_choose.h); the size check
 *      once the PA's family fixes the outer header (mux_encap.h), the flow
 *      recorded; DNAT, TTL, encapsulation, and onto the TX buffer (or as
 *      outer fragments).
 * IPv6 packets leave after step 1 for mux_pipeline6.c, one by one, with
 * their own connection table: the IPv4 burst stays as it was.
 */
#include <stdbool.h>
#include <string.h>

#include <rte_mbuf.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_maglev.h"
#include "lb_parse.h"
#include "mux_choose.h"
#include "mux_conn.h"
#include "mux_encap.h"
#include "mux_gen.h"
#include "mux_limit.h"
#include "mux_worker.h"

/*

 * DNAT VIP:port -> DIP:port and decrement TTL, fixing checksums
 * incrementally: the address change is summed once for both checksums, and
 * each checksum is folded once (the same value as one update per field).
 */
static inline void
rewrite_inner(uint8_t *p, const struct lb_pkt *pi, const struct mux_backend *be)
{
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi->l2_len);
	uint32_t daddr = lb_csum_delta32(ip->dst, be->dip);
	lb_be16_t old_tp, new_tp;
	uint8_t ttl;

	if (pi->kind == LB_PKT_L4) {
		if (pi->proto == LB_IPPROTO_TCP) {
			struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(p + pi->l4_off);

			tcp->csum = lb_csum_apply(
				tcp->csum, daddr + lb_csum_delta16(tcp->dport, be->port));
			tcp->dport = be->port;
		} else {
			struct lb_udp_hdr *udp = (struct lb_udp_hdr *)(p + pi->l4_off);

			udp->csum = lb_csum_apply_udp(
				udp->csum, daddr + lb_csum_delta16(udp->dport, be->port));
			udp->dport = be->port;
		}
	}
	/* An ICMP error keeps its quote; the host agent translates that. */
	ttl = ip->ttl;
	old_tp = mux_mem16(ttl, ip->proto);
	new_tp = mux_mem16((uint8_t)(ttl - 1), ip->proto);
	ip->dst = be->dip;
	ip->ttl = (uint8_t)(ttl - 1);
	ip->csum = lb_csum_apply(ip->csum, daddr + lb_csum_delta16(old_tp, new_tp));
}

/*
 * Choose the backend of one packet and send it there. pos is the flow's
 * position in the connection table, or negative for a miss; a miss of an L4
 * packet inserts the flow, and *pos then says where (for later packets of
 * the same new flow in this burst).
 */
static inline void
forward(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t svc, const struct mux_conn_key *key, uint64_t fh,
	int32_t *pos, uint32_t now, struct mux_burst_cnt *bc)
{
	struct mux_conn *ce = *pos >= 0 ? mux_conn_at(w->conn, *pos) : NULL;
	const struct mux_backend *be;
	struct mux_choice c;
	struct mux_conn rec;
	bool frag, made = true;

	be = mux_decide(w, g, port, m, pi, svc, ce, fh, now, &c, &frag);
	if (be == NULL)
		return;
	if (pi->kind == LB_PKT_L4) {
		uint32_t sid = g->services[svc].sid;
		bool add = mux_conn_write(ce, w->conn->timeout, g, pi, &c, now, &rec);
		uint32_t owner = mux_conn_owner_word(sid, &rec);

		if (!add) {
			/* Closing, reopened or reused: the service's live count follows. */
			mux_conn_set_owner(w->conn, *pos, owner);
		} else if (unlikely(w->conn->svc_held[sid] >= w->conn->quota)) {
			/* The service holds its share of the table: Maglev alone. */
			made = mux_no_entry(pi, &w->cnt.conn_quota);
		} else {
			/* Not in the table (nor added earlier in this burst): a new slot. */
			*pos = mux_conn_add(w->conn, key, fh, rec, owner);
			if (unlikely(*pos < 0))
				made = mux_no_entry(pi, &w->cnt.conn_full);
		}
	}
	mux_count_choice(w, g, svc, pi, &c, made, bc);
	rewrite_inner(rte_pktmbuf_mtod(m, uint8_t *), pi, be);
	mux_send(w, g, port, m, pi, svc, c.id, fh, frag, false, bc);
}

/* How many packets ahead the forward loop fetches a backend. */
#define MUX_AHEAD 4

/*
 * Fetch the backend forward() will use for a packet: by the record's stable
 * id for a hit, by the Maglev slot for a miss. Only a hint: a stale
 * position or a record forward() will reject fetches a line for nothing.
 */
static inline void
prefetch_backend(
	const struct mux_worker *w, const struct mux_gen *g, int32_t pos, uint32_t svc, uint64_t fh)
{
	if (pos >= 0) {
		uint32_t sid = mux_conn_at(w->conn, pos)->backend & ~MUX_CONN_CLOSING;
		uint32_t idx;

		if (sid < g->cap_backends && (idx = g->by_sid[sid]) != MUX_GEN_NONE)
			rte_prefetch0(&g->backends[idx]);
	} else {
		const struct mux_service *s = &g->services[svc];
		uint16_t slot = s->maglev[lb_flow_slot(fh, g->maglev_size)];

		if (slot != LB_MAGLEV_EMPTY)
			rte_prefetch0(&g->backends[s->first_backend + slot]);
	}
}

/*
 * Index of an earlier packet of this burst with the same flow as packet i,
 * both having missed the table, or -1. The first of them inserts the flow;
 * the others then use its entry, as they would have found it had they come
 * in the next burst. Chained per 6 bits of signature, so linear in misses.
 */
static inline int
earlier_miss(uint8_t head[64], uint8_t chain[MUX_BURST], const uint32_t *sig,
	const struct mux_conn_key *key, uint16_t i)
{
	uint8_t *b = &head[sig[i] & 63];
	int j;

	for (j = *b - 1; j >= 0; j = chain[j] - 1)
		if (sig[j] == sig[i] && memcmp(&key[j], &key[i], sizeof(key[i])) == 0)
			return j;
	chain[i] = *b;
	*b = (uint8_t)(i + 1);
	return -1;
}

void
mux_burst(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf **pkts,
	uint16_t n, uint32_t now)
{
	struct lb_pkt info[MUX_BURST];
	struct rte_mbuf *fw[MUX_BURST];
	struct mux_conn_key ckey[MUX_BURST];
	uint64_t skey[MUX_BURST];
	uint32_t svc[MUX_BURST];
	uint32_t sig[MUX_BURST];
	uint64_t fh[MUX_BURST];
	int32_t pos[MUX_BURST];
	uint8_t head[64], chain[MUX_BURST];
	struct mux_burst_cnt bc = {0, 0, 0, 0};
	uint64_t moves;
	uint64_t rx_bytes = 0;
	bool misses = false;
	uint16_t i, k = 0, j = 0;
	int rc;

	/* 1. Parse; answer what is addressed to the mux itself. */
	w->cnt.rx_pkts += n;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct lb_pkt *pi = &info[k];

		rx_bytes += m->pkt_len;
		if (unlikely(m->nb_segs != 1)) {
			mux_drop(w, m, LB_DROP_OVERSIZE);
			continue;
		}
		rc = lb_parse(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, pi);
		if (unlikely(rc != 0)) {
			/* A tunnel may be the manager's VIP probe; it drops what is not. */
			if (rc == LB_DROP_TUNNEL && (w->ctx->n_probers | w->ctx->n_probers6) != 0)
				mux_reply_vip_probe(w, g, port, m, pi);
			else
				mux_drop(w, m, rc);
			continue;
		}
		/* IPv6, answered or forwarded, has a path of its own. */
		if (unlikely(pi->v6)) {
			mux_packet6(w, g, port, m, pi, now);
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
		/* An error about VIP -> client is sent to the VIP; anything else is forged. */
		if (unlikely(pi->kind == LB_PKT_ICMP_ERR && pi->dst != pi->ip_dst)) {
			mux_drop(w, m, LB_DROP_ICMP_QUOTE);
			continue;
		}
		/* The service table slot, fetched while the rest of the burst parses. */
		skey[k] = mux_gen_svc_key(pi->dst, pi->dport, pi->proto);
		svc[k] = mux_gen_svc_home(g, skey[k]);
		rte_prefetch0(&g->svc_tab[svc[k]]);
		/* One flow hash per packet; its connection bucket, fetched early. */
		mux_conn_key_v4(&ckey[k], pi->src, pi->sport, pi->dst, pi->dport, pi->proto);
		fh[k] = mux_conn_hash(&g->seed, &ckey[k]);
		mux_conn_prefetch(w->conn, fh[k]);
		fw[k++] = m;
	}
	w->cnt.rx_bytes += rx_bytes;

	/* 2. Services. */
	for (i = 0; i < k; i++) {
		uint32_t sv = mux_gen_svc_find(g, skey[i], svc[i]);
		struct lb_pkt *pi = &info[i];

		/* Not a VIP:port we balance (a bare VIP hit is the marker). */
		if (unlikely(sv >= MUX_GEN_NONE)) {
			mux_drop(w, fw[i], LB_DROP_NO_SERVICE);
			continue;
		}
		/* Forwarding would bring the TTL to zero. */
		if (unlikely(pi->ttl <= 1)) {
			mux_drop(w, fw[i], LB_DROP_TTL);
			continue;
		}
		svc[j] = sv;
		fw[j] = fw[i];
		if (j != i) {
			info[j] = *pi;
			ckey[j] = ckey[i];
			fh[j] = fh[i];
		}
		sig[j] = lb_flow_sig(fh[j]);
		j++;
	}
	if (j == 0)
		return;
	mux_conn_lookup_bulk(w->conn, ckey, fh, j, pos);
	moves = w->conn->moves;
	/*
	 * What forward() will read next, fetched for the whole burst at once:
	 * a hit's backend and its counters (the record is in the key slot the
	 * lookup has just read), a miss's Maglev slot, every service's counters.
	 * With many services and backends each is a miss; this overlaps them.
	 */
	for (i = 0; i < j; i++) {
		if (pos[i] >= 0) {
			uint32_t sid = mux_conn_at(w->conn, pos[i])->backend & ~MUX_CONN_CLOSING;

			if (likely(sid < g->cap_backends)) {
				rte_prefetch0(&g->by_sid[sid]);
				rte_prefetch0(&w->be_cnt[sid]);
			}
		} else {
			const uint16_t *mt = g->services[svc[i]].maglev;

			rte_prefetch0(&mt[lb_flow_slot(fh[i], g->maglev_size)]);
		}
		rte_prefetch0(&w->svc_cnt[g->services[svc[i]].sid]);
	}

	/* 4. Choose, rewrite, encapsulate, queue. */
	for (i = 0; i < j; i++) {
		/* The backend of a packet a few ahead: its by_sid entry was fetched above. */
		if (i + MUX_AHEAD < j)
			prefetch_backend(
				w, g, pos[i + MUX_AHEAD], svc[i + MUX_AHEAD], fh[i + MUX_AHEAD]);
		/*
		 * An insert earlier in this burst moved entries, so the positions
		 * found above may be stale: look this flow up again (which also
		 * finds a flow inserted earlier in the burst).
		 */
		if (unlikely(w->conn->moves != moves))
			pos[i] = mux_conn_lookup(w->conn, &ckey[i], fh[i]);
		else if (pos[i] < 0 && info[i].kind == LB_PKT_L4) {
			int e;

			if (!misses) {
				memset(head, 0, sizeof(head));
				misses = true;
			}
			e = earlier_miss(head, chain, sig, ckey, i);
			if (e >= 0)
				pos[i] = pos[e];
		}
		forward(w, g, port, fw[i], &info[i], svc[i], &ckey[i], fh[i], &pos[i], now, &bc);
	}
	w->cnt.fwd_pkts += bc.fwd_pkts;
	w->cnt.fwd_bytes += bc.fwd_bytes;
	w->cnt.conn_hit += bc.conn_hit;
	w->cnt.conn_new += bc.conn_new;
}
