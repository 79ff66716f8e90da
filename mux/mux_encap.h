/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The outer header, by the family of the backend's PA and of the packet:
 *
 *     inner   PA     outer                          RFC
 *     IPv4    IPv4   IPv4, protocol 4 (4in4)        2003
 *     IPv4    IPv6   IPv6, next header 4 (4in6)     2473
 *     IPv6    IPv4   IPv4, protocol 41 (6in4)       4213
 *     IPv6    IPv6   IPv6, next header 41 (6in6)    2473
 *
 * Every form copies DSCP and ECN from the inner header into the outer TOS
 * or traffic class (RFC 6040 normal mode; RFC 2983's uniform DSCP) and
 * sets the TTL or hop limit to tunnel_ttl. An outer IPv6 header carries a
 * flow label made from the flow hash (RFC 6438), so that routers between
 * the mux and the host spread flows as ECMP would on the inner tuple, and
 * the same flow keeps one label on every mux. 4in4 copies DF from the
 * client's packet; 6in4 leaves it clear (RFC 4213 3.2.1: the tunnel's MTU
 * is static, a router may split what the mux sends and the agent joins
 * it). Ethernet: next_hop_mac, or next_hop_mac6 to an IPv6 PA; the output
 * is untagged.
 *
 * 4in4, the common case, is inline here; the other three are mux_encap.c's.
 * What does not fit the MTU once encapsulated is mux_fits()'s to decide.
 */
#ifndef MUX_ENCAP_H
#define MUX_ENCAP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dp_mbuf.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "mux_choose.h"
#include "mux_gen.h"
#include "mux_worker.h"

/* Two bytes as the 16-bit word they make in memory (shifts, not a store and a load). */
static inline uint16_t
mux_mem16(uint8_t first, uint8_t second)
{
#if LB_LITTLE_ENDIAN
	return (uint16_t)(first | (uint16_t)second << 8);
#else
	return (uint16_t)((uint16_t)first << 8 | second);
#endif
}

/* Bytes of outer header towards backend be's host. */
static inline uint32_t
mux_encap_len(const struct mux_backend *be)
{
	return be->flags & MUX_BE_HOST6 ? LB_ENCAP6_LEN : LB_ENCAP_LEN;
}

/* The outer flow label of a flow: 20 bits of its hash, never 0 (RFC 6437: "no label"). */
static inline uint32_t
mux_flow_label(uint64_t fh)
{
	uint32_t fl = (uint32_t)(fh >> 40) & 0xfffff;

	return fl != 0 ? fl : 1;
}

/*
 * 4in4 (RFC 2003): the inner IPv4 packet wrapped in an outer one to the
 * backend's host. DF is copied, so a packet the sender allowed to fragment
 * can still be fragmented on the way to the host, and one it did not
 * allow never is. Returns 0 or a drop reason.
 */
static inline int
mux_encap_4in4(struct mux_worker *w, struct rte_mbuf *m, const struct lb_pkt *pi,
	const struct mux_backend *be, uint16_t port)
{
	const struct mux_ctx *ctx = w->ctx;
	const struct lb_ipv4_hdr *inner;
	struct lb_eth_hdr *eth;
	struct lb_ipv4_hdr *outer;
	uint32_t frame = (uint32_t)pi->l2_len + pi->l3_len;
	uint16_t grow = (uint16_t)(sizeof(*eth) + LB_ENCAP_LEN - pi->l2_len);
	lb_be16_t tot, id, frag;
	uint32_t sum;
	uint8_t *p;
	uint8_t tos;

	/* Ethernet padding must not travel inside the tunnel. */
	dp_trim_to(m, frame);
	inner = rte_pktmbuf_mtod_offset(m, const struct lb_ipv4_hdr *, pi->l2_len);
	tos = inner->tos;

	p = (uint8_t *)rte_pktmbuf_prepend(m, grow);
	if (unlikely(p == NULL))
		return LB_DROP_NO_HEADROOM;
	eth = (struct lb_eth_hdr *)p;
	outer = (struct lb_ipv4_hdr *)(p + sizeof(*eth));
	memcpy(eth->dst, &ctx->next_hop, LB_ETH_ALEN);
	memcpy(eth->src, &ctx->port_mac[port], LB_ETH_ALEN);
	eth->type = lb_cpu_to_be16(LB_ETHERTYPE_IPV4);

	tot = lb_cpu_to_be16((uint16_t)(pi->l3_len + LB_ENCAP_LEN));
	if (pi->df) {
		frag = lb_cpu_to_be16(LB_IPV4_DF);
		id = 0; /* RFC 6864: the id of an atomic datagram is unused */
	} else {
		frag = 0;
		id = lb_cpu_to_be16(mux_worker_ip_id(w));
	}
	outer->ver_ihl = 0x45;
	outer->tos = tos;
	outer->total_len = tot;
	outer->id = id;
	outer->frag_off = frag;
	outer->ttl = ctx->tunnel_ttl;
	outer->proto = LB_IPPROTO_IPIP;
	outer->src = ctx->tunnel_addr;
	outer->dst = be->host;
	/*
	 * Summed from the values, not read back from the header just written
	 * (loads spanning several narrower stores wait for them to retire).
	 */
	sum = (uint32_t)mux_mem16(0x45, tos) + tot + id + frag +
	      mux_mem16(ctx->tunnel_ttl, LB_IPPROTO_IPIP) + (ctx->tunnel_addr & 0xffff) +
	      (ctx->tunnel_addr >> 16) + (be->host & 0xffff) + (be->host >> 16);
	outer->csum = (lb_be16_t)~lb_csum_fold(sum);
	return 0;
}

/*
 * The other three forms (mux_encap.c): packet pi, parsed from m, to
 * backend id of g; fh is the flow hash (the outer flow label). Returns 0
 * or a drop reason.
 */
int mux_encap_other(struct mux_worker *w, const struct mux_gen *g, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t id, uint16_t port, uint64_t fh);

/*
 * Any form, for a packet of family v6 (a constant where this is inlined:
 * the IPv4 path tests the PA's family only).
 */
static inline int
mux_encapsulate(struct mux_worker *w, const struct mux_gen *g, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t id, uint16_t port, uint64_t fh, bool v6)
{
	const struct mux_backend *be = &g->backends[id];

	if (likely(!v6 && !(be->flags & MUX_BE_HOST6)))
		return mux_encap_4in4(w, m, pi, be, port);
	return mux_encap_other(w, g, m, pi, id, port, fh);
}

/*
 * Packet pi does not fit the MTU once encapsulated with outer bytes of
 * header. IPv4 with DF, or IPv6 longer than the MTU it could be told
 * (the room left, but never below IPv6's 1280): the client is told the
 * room with ICMP fragmentation needed or ICMPv6 packet too big (an ICMP
 * error about a flow, which no one may answer with an error, is dropped
 * too_big). IPv4 without DF, or IPv6 of 1280 bytes at most (which every
 * IPv6 link must carry, RFC 8200 5): sent on as outer fragments, which
 * the agent reassembles; without fragment pools, dropped too_big.
 * Returns true if the packet was dealt with here, false if it is to be
 * sent as fragments.
 */
static inline bool
mux_too_big(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi,
	uint32_t outer)
{
	uint32_t room = w->ctx->mtu - outer;
	uint32_t tell = pi->v6 && room < LB_IPV6_MIN_MTU ? LB_IPV6_MIN_MTU : room;
	bool split = pi->v6 ? pi->l3_len <= tell : !pi->df;

	if (split && w->ctx->frag_indirect != NULL)
		return false;
	if (!split && pi->kind == LB_PKT_L4)
		mux_reply_too_big(w, port, m, pi, (uint16_t)tell);
	else
		mux_drop(w, m, LB_DROP_TOO_BIG);
	return true;
}

/*
 * Packet pi encapsulated for backend be: does it fit the MTU? If not, the
 * client is told or it is dropped (mux_too_big(); false: m is gone), or it
 * goes as outer fragments (*frag).
 */
static inline bool
mux_size_ok(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi,
	const struct mux_backend *be, bool *frag)
{
	*frag = false;
	/* The common case first: 20 bytes of outer header fit, and the PA is IPv4. */
	if (likely(pi->l3_len + LB_ENCAP_LEN <= w->ctx->mtu && !(be->flags & MUX_BE_HOST6)))
		return true;
	if (pi->l3_len + mux_encap_len(be) <= w->ctx->mtu)
		return true;
	if (mux_too_big(w, port, m, pi, mux_encap_len(be)))
		return false;
	*frag = true;
	return true;
}

/*
 * The decision for a packet to forward, one sequence for both families:
 * its backend (mux_choose(), ce its connection-table entry or NULL),
 * whether it fits once encapsulated, the admission rules, and only then a
 * capped backend's credit (a SYN the rules refuse spends none). NULL: m
 * is answered or dropped. Otherwise its backend, with c and *frag set.
 */
static inline const struct mux_backend *
mux_decide(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t svc, const struct mux_conn *ce, uint64_t fh, uint32_t now,
	struct mux_choice *c, bool *frag)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	if (unlikely(!mux_choose(g, svc, ce, pi, p, fh, now, c))) {
		mux_no_choice(w, port, m, pi, c);
		return NULL;
	}
	/* Would not fit once encapsulated: the client is told, or it goes in fragments. */
	if (!mux_size_ok(w, port, m, pi, &g->backends[c->id], frag))
		return NULL;
	if (!mux_admit(w, g, port, m, pi, svc, c))
		return NULL;
	if (unlikely(c->credit)) {
		if (!mux_choose_credit(w, g, svc, pi, p, fh, c)) {
			mux_no_choice(w, port, m, pi, c);
			return NULL;
		}
		/* Moved to a backend whose outer header may be larger: rare. */
		if (!mux_size_ok(w, port, m, pi, &g->backends[c->id], frag))
			return NULL;
	}
	return &g->backends[c->id];
}

/*
 * The end of the forwarding path, the same for both families: packet pi
 * (of family v6) of service svc, rewritten for backend id, encapsulated
 * and queued (or sent as outer fragments: frag), and counted.
 */
static inline void
mux_send(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t svc, uint32_t id, uint64_t fh, bool frag, bool v6,
	struct mux_burst_cnt *bc)
{
	const struct mux_backend *be = &g->backends[id];
	uint32_t ssid = g->services[svc].sid;
	int rc = mux_encapsulate(w, g, m, pi, id, port, fh, v6);

	if (unlikely(rc != 0)) {
		mux_drop(w, m, rc);
		return;
	}
	/* Counted as forwarded only once on its way: fragmenting can fail (no_mbuf). */
	if (unlikely(frag) && !mux_send_fragments(w, port, m, (be->flags & MUX_BE_HOST6) != 0))
		return;
	bc->fwd_pkts++;
	bc->fwd_bytes += pi->l3_len;
	if (pi->kind == LB_PKT_ICMP_ERR)
		w->cnt.icmp_err_fwd++;
	w->svc_cnt[ssid].pkts++;
	w->svc_cnt[ssid].bytes += pi->l3_len;
	w->be_cnt[be->sid].pkts++;
	w->be_cnt[be->sid].bytes += pi->l3_len;
	if (likely(!frag))
		mux_enqueue(w, port, m);
}

#endif /* MUX_ENCAP_H */
