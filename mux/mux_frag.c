/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Outer fragmentation: an encapsulated packet longer than the MTU whose
 * client allowed fragmentation (IPv4 without DF), or an IPv6 packet of at
 * most 1280 bytes (which every IPv6 link must carry, RFC 8200 5, and so
 * every tunnel, RFC 2473 7.1), goes out as fragments of its OUTER datagram.
 * RFC 2003 and RFC 2473 allow it; the client's own packet is never split,
 * and the host agent reassembles the outer datagram (rte_ip_frag) before
 * it decapsulates.
 *
 * DPDK's fragmenters (rte_ipv4_fragment_packet(), rte_ipv6_fragment_packet())
 * do the work without copying the payload: each fragment is a new header
 * mbuf from frag_direct chained to an indirect mbuf (frag_indirect) that
 * references the original's data. That allocates mbufs, which the fast
 * path otherwise never does; this is an exception path, counted
 * (frag_out, frag_out_pkts), and an empty pool is a drop (no_mbuf). Two
 * things the library leaves to us, as of 22.11: the IPv4 fragments'
 * header checksums are zero, and every IPv6 fragment header's
 * identification is 0, which would let an agent join fragments of
 * different datagrams: we set a per-worker id (RFC 8200 4.5 wants it
 * unique per source and destination for the reassembly's lifetime;
 * workers interleave theirs, so one mux never repeats one soon).
 */
#include <string.h>

#include <rte_ip_frag.h>
#include <rte_mbuf.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "mux_worker.h"

/* 2 fragments carry what fits one 2 KiB mbuf at the smallest MTU (596); room for more. */
#define MUX_MAX_FRAGS 8

bool
mux_send_fragments(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, bool outer6)
{
	const struct mux_ctx *ctx = w->ctx;
	struct rte_mbuf *frags[MUX_MAX_FRAGS];
	struct lb_eth_hdr eth;
	uint32_t id6 = 0;
	int32_t n, i;

	memcpy(&eth, rte_pktmbuf_mtod(m, const void *), sizeof(eth));
	rte_pktmbuf_adj(m, sizeof(eth));
	if (outer6) {
		n = rte_ipv6_fragment_packet(
			m, frags, MUX_MAX_FRAGS, ctx->mtu, ctx->frag_direct, ctx->frag_indirect);
		id6 = w->frag6_id++ * MUX_MAX_WORKERS + w->idx;
	} else {
		n = rte_ipv4_fragment_packet(
			m, frags, MUX_MAX_FRAGS, ctx->mtu, ctx->frag_direct, ctx->frag_indirect);
	}
	/* The fragments hold their own references to the data. */
	rte_pktmbuf_free(m);
	if (n <= 0) {
		w->cnt.drops[n == -ENOMEM ? LB_DROP_NO_MBUF : LB_DROP_TOO_BIG]++;
		return false;
	}
	/* All of them or none: the packet is counted once, as sent or as dropped. */
	for (i = 0; i < n; i++)
		if (rte_pktmbuf_headroom(frags[i]) < sizeof(eth)) {
			rte_pktmbuf_free_bulk(frags, (unsigned)n);
			w->cnt.drops[LB_DROP_NO_HEADROOM]++;
			return false;
		}
	for (i = 0; i < n; i++) {
		uint8_t *p = (uint8_t *)rte_pktmbuf_prepend(frags[i], sizeof(eth));

		memcpy(p, &eth, sizeof(eth));
		if (outer6) {
			struct lb_ipv6_frag_hdr *fh =
				(struct lb_ipv6_frag_hdr *)(p + sizeof(eth) +
							    sizeof(struct lb_ipv6_hdr));

			fh->id = lb_cpu_to_be32(id6);
		} else {
			struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + sizeof(eth));

			ip->csum = 0;
			ip->csum = lb_ipv4_hdr_csum(ip, (size_t)lb_ipv4_ihl(ip) * 4);
		}
		w->cnt.frag_out_pkts++;
		mux_enqueue(w, port, frags[i]);
	}
	w->cnt.frag_out++;
	return true;
}
