/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packets the mux originates: ARP replies and neighbor advertisements for
 * its tunnel addresses (and VIPs when asked), echo replies for VIPs and the
 * tunnel addresses, answers to the manager's VIP probes (inside IPv4 or
 * IPv6 tunnels, about IPv4 or IPv6 VIPs), and ICMP "fragmentation needed"
 * or ICMPv6 "packet too big" for packets that would not fit once
 * encapsulated. Each is built in place of the packet that caused it, so no
 * allocation happens on the fast path, and goes back out of the port it
 * came in on, VLAN tag and all. Checksums are computed whole (lb_reply.h
 * says why).
 */
#include <stdbool.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dp_mbuf.h"
#include "lb_addr.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "lb_reply.h"
#include "mux_gen.h"
#include "mux_worker.h"

/* RFC 1812 4.3.2.3: an ICMP error should quote as much as fits in 576 bytes. */
#define MUX_ICMP_ERR_MAX 576

void
mux_reply_arp(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi)
{
	const struct mux_ctx *ctx = w->ctx;

	if (pi->arp_op != LB_ARP_OP_REQUEST ||
		((pi->arp_tpa != ctx->tunnel_addr || ctx->tunnel_addr == 0) &&
			!(ctx->arp_for_vips && mux_gen_is_vip(g, pi->arp_tpa)))) {
		mux_drop(w, m, LB_DROP_ARP_IGNORED);
		return;
	}
	lb_reply_arp(rte_pktmbuf_mtod(m, uint8_t *), pi, &ctx->port_mac[port]);
	w->cnt.arp_replies++;
	mux_enqueue(w, port, m);
}

/* The 16 bytes at a are the mux's IPv6 tunnel address. */
static inline int
is_tunnel6(const struct mux_ctx *ctx, const uint8_t *a)
{
	return ctx->has_tunnel6 && memcmp(a, ctx->tunnel_addr6, 16) == 0;
}

void
mux_reply_echo(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	int ours = pi->v6 ? is_tunnel6(w->ctx, lb_pkt_dst6(p, pi)) ||
				    mux_gen_is_vip6(g, lb_pkt_dst6(p, pi))
			  : (pi->dst == w->ctx->tunnel_addr && pi->dst != 0) ||
				    mux_gen_is_vip(g, pi->dst);

	if (!ours) {
		mux_drop(w, m, LB_DROP_NO_SERVICE);
		return;
	}
	dp_trim_to(m, lb_reply_echo(rte_pktmbuf_mtod(m, uint8_t *), pi, &w->ctx->port_mac[port]));
	w->cnt.echo_replies++;
	mux_enqueue(w, port, m);
}

/*
 * A neighbor solicitation for the IPv6 tunnel address, or for an IPv6 VIP
 * with nd_for_vips, is answered with an advertisement naming the port's
 * MAC (as ARP is answered for IPv4). Advertisements, and solicitations for
 * other addresses, are nd_ignored; one whose checksum is wrong, which RFC
 * 4861 7.1.1 says to discard, nd_malformed.
 */
void
mux_reply_nd(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi)
{
	const struct mux_ctx *ctx = w->ctx;
	const uint8_t *target = rte_pktmbuf_mtod(m, const uint8_t *) + pi->quote_off;
	enum lb_drop why;

	if (pi->nd_type != LB_ICMP6_ND_NS ||
		(!is_tunnel6(ctx, target) && !(ctx->nd_for_vips && mux_gen_is_vip6(g, target)))) {
		mux_drop(w, m, LB_DROP_ND_IGNORED);
		return;
	}
	if ((why = dp_reply_nd(m, pi, &ctx->port_mac[port], 0)) != LB_DROP_NONE) {
		mux_drop(w, m, why);
		return;
	}
	w->cnt.nd_replies++;
	mux_enqueue(w, port, m);
}

/* The probe's payload: the manager's magic, after an echo request's header. */
static int
is_vprobe(const struct lb_icmp_hdr *icmp, uint32_t icmp_len, uint8_t echo_type)
{
	const struct lb_vprobe *vp = (const struct lb_vprobe *)(icmp + 1);

	/* Too short for the echo header and the probe payload. */
	if (icmp_len < sizeof(*icmp) + sizeof(*vp))
		return 0;
	/* Some other ICMP, or an echo request that is not the manager's probe. */
	return icmp->type == echo_type && icmp->code == 0 &&
	       memcmp(vp->magic, LB_VPROBE_MAGIC, sizeof(vp->magic)) == 0;
}

/*
 * The inner IPv4 packet at p + off (len bytes of outer payload), if it is
 * a VIP probe: returns its ICMP header and sets *ihl and *icmp_len, or
 * NULL. Anything that is not exactly a probe keeps the tunnel's drop reason.
 */
static struct lb_icmp_hdr *
vprobe_parse(uint8_t *p, uint32_t off, uint32_t len, uint32_t *ihl, uint32_t *icmp_len)
{
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + off);
	struct lb_icmp_hdr *icmp;
	uint32_t tot;

	/* Outer payload shorter than an IPv4 header. */
	if (len < sizeof(*ip))
		return NULL;
	*ihl = (uint32_t)lb_ipv4_ihl(ip) * 4;
	tot = lb_be16_to_cpu(ip->total_len);
	/* Not IPv4, a header running past its total length, a total past the outer payload. */
	if (lb_ipv4_version(ip) != 4 || *ihl < 20 || tot < *ihl || tot > len)
		return NULL;
	/* A corrupt or fragmented inner packet, or not ICMP. */
	if (lb_ipv4_hdr_csum(ip, *ihl) != ip->csum ||
		(lb_be16_to_cpu(ip->frag_off) & (LB_IPV4_MF | LB_IPV4_OFFMASK)) != 0 ||
		ip->proto != LB_IPPROTO_ICMP)
		return NULL;
	*icmp_len = tot - *ihl;
	icmp = (struct lb_icmp_hdr *)(p + off + *ihl);
	return is_vprobe(icmp, *icmp_len, LB_ICMP_ECHO) ? icmp : NULL;
}

/*
 * The same for an inner IPv6 packet: a fixed header directly followed by
 * an ICMPv6 echo request (a probe carries no extension headers).
 */
static struct lb_icmp_hdr *
vprobe_parse6(uint8_t *p, uint32_t off, uint32_t len, uint32_t *icmp_len)
{
	struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)(p + off);
	struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(ip + 1);

	/* Outer payload shorter than an IPv6 header, or not IPv6. */
	if (len < sizeof(*ip) || (p[off] >> 4) != 6)
		return NULL;
	*icmp_len = lb_be16_to_cpu(ip->payload_len);
	/* A payload past the outer one, or something else than ICMPv6 next. */
	if (*icmp_len > len - sizeof(*ip) || ip->next_hdr != LB_IPPROTO_ICMPV6)
		return NULL;
	return is_vprobe(icmp, *icmp_len, LB_ICMP6_ECHO) ? icmp : NULL;
}

/* The ethertype of a frame whose L2 header is l2_len bytes long. */
static void
set_ethertype(uint8_t *p, uint16_t l2_len, uint16_t type)
{
	lb_be16_t t = lb_cpu_to_be16(type);

	memcpy(p + l2_len - 2, &t, 2);
}

/*
 * A tunnel to the mux (pi as lb_parse() left it: the outer header, IPv4 or
 * IPv6). A VIP probe from a configured prober of the outer family to the
 * tunnel address of that family, for a VIP of the running generation
 * (IPv4 inside protocol 4, IPv6 inside 41), is answered: the inner echo
 * request becomes an echo reply from the VIP to its sender carrying
 * g->version, sent without the outer header to the next hop of its
 * family. The checksums are computed whole (this is a few packets a
 * second, not the fast path).
 */
void
mux_reply_vip_probe(struct mux_worker *w, const struct mux_gen *g, uint16_t port,
	struct rte_mbuf *m, const struct lb_pkt *pi)
{
	const struct mux_ctx *ctx = w->ctx;
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t outer_hl = pi->l4_off - pi->l2_len, len = pi->l3_len - outer_hl;
	uint32_t ihl = sizeof(struct lb_ipv6_hdr), icmp_len, tot;
	int inner6 = pi->proto == LB_IPPROTO_IPV6, vip;
	struct lb_icmp_hdr *icmp;
	struct lb_vprobe *vp;
	struct lb_eth_hdr *eth;

	if (pi->v6 ? !is_tunnel6(ctx, lb_pkt_dst6(p, pi)) ||
				!lb_addr6_in(lb_pkt_src6(p, pi), ctx->probers6, ctx->n_probers6)
		   : pi->dst != ctx->tunnel_addr || pi->dst == 0 ||
				!lb_addr4_in(pi->src, ctx->probers, ctx->n_probers)) {
		mux_drop(w, m, LB_DROP_TUNNEL);
		return;
	}
	icmp = inner6 ? vprobe_parse6(p, pi->l4_off, len, &icmp_len)
		      : vprobe_parse(p, pi->l4_off, len, &ihl, &icmp_len);
	if (icmp == NULL) {
		mux_drop(w, m, LB_DROP_TUNNEL);
		return;
	}
	/* A VIP this mux does not serve (any more): no answer is the answer. */
	if (inner6) {
		struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)(p + pi->l4_off);

		vip = mux_gen_is_vip6(g, ip->dst);
	} else {
		vip = mux_gen_is_vip(g, ((struct lb_ipv4_hdr *)(p + pi->l4_off))->dst);
	}
	if (!vip) {
		mux_drop(w, m, LB_DROP_NO_SERVICE);
		return;
	}
	vp = (struct lb_vprobe *)(icmp + 1);
	vp->version = lb_cpu_to_be64(g->version);
	icmp->csum = 0;
	if (inner6) {
		struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)(p + pi->l4_off);

		icmp->type = LB_ICMP6_ECHO_REPLY;
		lb_reply_swap16(ip->src, ip->dst);
		ip->hop_limit = 64;
		icmp->csum = lb_ipv6_l4_csum(ip->src, ip->dst, LB_IPPROTO_ICMPV6, icmp, icmp_len);
		tot = ihl + icmp_len;
	} else {
		struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(p + pi->l4_off);
		lb_be32_t src = ip->src;

		icmp->type = LB_ICMP_ECHO_REPLY;
		icmp->csum = lb_icmp_csum(icmp, icmp_len);
		ip->src = ip->dst;
		ip->dst = src;
		ip->ttl = 64;
		ip->csum = 0;
		ip->csum = lb_ipv4_hdr_csum(ip, ihl);
		tot = lb_be16_to_cpu(ip->total_len);
	}
	/* Drop the outer header: the Ethernet header (and tag) moves up to the inner one. */
	memmove(p + outer_hl, p, pi->l2_len);
	p = (uint8_t *)rte_pktmbuf_adj(m, (uint16_t)outer_hl);
	eth = (struct lb_eth_hdr *)p;
	memcpy(eth->dst, inner6 ? &ctx->next_hop6 : &ctx->next_hop, LB_ETH_ALEN);
	memcpy(eth->src, &ctx->port_mac[port], LB_ETH_ALEN);
	set_ethertype(p, pi->l2_len, inner6 ? LB_ETHERTYPE_IPV6 : LB_ETHERTYPE_IPV4);
	dp_trim_to(m, pi->l2_len + tot);
	w->cnt.vip_probes++;
	mux_enqueue(w, port, m);
}

/*
 * Room in m for an ICMP error's headers (hdrs bytes) before the first
 * quote bytes of the packet at L3, in place: the frame grows at its tail
 * to l2_len + hdrs + quote when it is shorter, the quote moves up, and the
 * Ethernet header turns back to the sender. The L3 start, or NULL if the
 * frame cannot grow.
 */
static uint8_t *
error_room(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi,
	uint32_t hdrs, uint32_t quote)
{
	uint32_t need = pi->l2_len + hdrs + quote;
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

	if (m->data_len < need && rte_pktmbuf_append(m, (uint16_t)(need - m->data_len)) == NULL)
		return NULL;
	memmove(p + pi->l2_len + hdrs, p + pi->l2_len, quote);
	lb_reply_turn_eth(p, &w->ctx->port_mac[port]);
	return p + pi->l2_len;
}

/*
 * An ICMPv6 error (RFC 4443) to the client, from the VIP it sent to: type,
 * code, the word after the checksum (packet too big's MTU), and as much of
 * its packet as keeps the error within 1280 bytes. In place; the buffer
 * grows at its tail when the packet was shorter than the error. Returns 0,
 * or -1 if it cannot grow.
 */
static int
icmp6_error(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi,
	uint8_t type, uint8_t code, uint32_t word)
{
	const uint32_t hdrs = sizeof(struct lb_ipv6_hdr) + sizeof(struct lb_icmp_hdr);
	uint32_t quote = RTE_MIN((uint32_t)pi->l3_len, LB_ICMP6_ERR_MAX - hdrs);
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint8_t *l3, src[16], dst[16];
	struct lb_ipv6_hdr *ip;
	struct lb_icmp_hdr *icmp;

	/* The addresses, turned, before the quote moves over them. */
	memcpy(src, lb_pkt_dst6(p, pi), 16);
	memcpy(dst, lb_pkt_src6(p, pi), 16);
	if ((l3 = error_room(w, port, m, pi, hdrs, quote)) == NULL)
		return -1;
	ip = (struct lb_ipv6_hdr *)l3;
	icmp = (struct lb_icmp_hdr *)(l3 + sizeof(*ip));
	lb_ipv6_hdr_init(ip, LB_IPPROTO_ICMPV6, src, dst, (uint16_t)(sizeof(*icmp) + quote), 64);
	icmp->type = type;
	icmp->code = code;
	icmp->mtu6 = lb_cpu_to_be32(word);
	icmp->csum = 0;
	icmp->csum =
		lb_ipv6_l4_csum(ip->src, ip->dst, LB_IPPROTO_ICMPV6, icmp, sizeof(*icmp) + quote);
	dp_trim_to(m, pi->l2_len + hdrs + quote);
	return 0;
}

/* The IPv4 header of a reply from the VIP to the client (pi), no options, TTL 64. */
static void
reply_ip(struct lb_ipv4_hdr *ip, const struct lb_pkt *pi, uint16_t total, bool df, uint8_t proto)
{
	/* From the VIP: the address the client sent to, and so can route back. */
	lb_ipv4_hdr_init(ip, proto, pi->dst, pi->src, total, 64);
	if (df)
		ip->frag_off = lb_cpu_to_be16(LB_IPV4_DF);
	ip->csum = lb_ipv4_hdr_csum(ip, sizeof(*ip));
}

/*
 * Turn the packet in m into an ICMP destination unreachable (code, and
 * rest as the header's second word) from the VIP it was sent to, the
 * address the client can route back to, quoting the start of the packet
 * within 576 bytes in all (RFC 1812 4.3.2.3). The quote moves up to make
 * room for the new headers; the buffer grows at its tail when the packet
 * was shorter than the reply. Returns 0, or -1 if it cannot grow.
 */
static int
icmp_unreach(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi,
	uint8_t code, lb_be32_t rest)
{
	const uint32_t hdrs = sizeof(struct lb_ipv4_hdr) + sizeof(struct lb_icmp_hdr);
	uint32_t quote = RTE_MIN((uint32_t)pi->l3_len, MUX_ICMP_ERR_MAX - hdrs);
	struct lb_ipv4_hdr *ip;
	struct lb_icmp_hdr *icmp;
	uint8_t *l3;

	if ((l3 = error_room(w, port, m, pi, hdrs, quote)) == NULL)
		return -1;
	ip = (struct lb_ipv4_hdr *)l3;
	icmp = (struct lb_icmp_hdr *)(l3 + sizeof(*ip));
	reply_ip(ip, pi, (uint16_t)(hdrs + quote), false, LB_IPPROTO_ICMP);
	icmp->type = LB_ICMP_UNREACH;
	icmp->code = code;
	icmp->rest = rest;
	icmp->csum = 0;
	icmp->csum = lb_icmp_csum(icmp, sizeof(*icmp) + quote);
	dp_trim_to(m, pi->l2_len + hdrs + quote);
	return 0;
}

/*
 * An ICMP error to the client in its packet's family: ICMPv6 type6/code6,
 * or IPv4 destination unreachable code4; mtu (0: none) in the second word
 * (ICMPv6 packet too big's MTU; IPv4: the next-hop MTU in its low half,
 * RFC 1191). 0, or -1 if the buffer cannot grow.
 */
static int
icmp_back(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi,
	uint8_t type6, uint8_t code6, uint8_t code4, uint16_t mtu)
{
	if (pi->v6)
		return icmp6_error(w, port, m, pi, type6, code6, mtu);
	return icmp_unreach(w, port, m, pi, code4, lb_cpu_to_be32(mtu));
}

/*
 * IPv6: packet too big (RFC 4443 3.2), the MTU the client may use (the
 * packet is over 1280); IPv4: fragmentation needed.
 */
void
mux_reply_too_big(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi,
	uint16_t mtu)
{
	if (icmp_back(w, port, m, pi, LB_ICMP6_TOO_BIG, 0, LB_ICMP_UNREACH_NEEDFRAG, mtu) != 0) {
		mux_drop(w, m, LB_DROP_TOO_BIG);
		return;
	}
	if (pi->v6)
		w->cnt.ptb_sent++;
	else
		w->cnt.too_big_sent++;
	w->cnt.drops[LB_DROP_TOO_BIG]++;
	mux_enqueue(w, port, m);
}

/*
 * A TCP RST from the VIP, in place: the client's own connection (VIP:port
 * to client:port), no options, window 0. For a segment without ACK (a
 * SYN): seq 0, RST|ACK acking its sequence plus the SYN and any payload;
 * with ACK: seq = its ack, RST alone (RFC 793's two resets). Both
 * checksums are computed whole: this answers a refusal, not a forwarded
 * packet. IPv6: a fresh header from VIP6 (no extension headers), hop
 * limit 64, the TCP checksum over its pseudo-header. Sent and counted by
 * the caller.
 */
static void
reply_rst(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *), *l3 = p + pi->l2_len;
	uint8_t src[16] = {0}, dst[16] = {0}; /* IPv6's, turned around */
	const struct lb_tcp_hdr *in = (const struct lb_tcp_hdr *)(p + pi->l4_off);
	uint32_t l3_hdr = pi->v6 ? sizeof(struct lb_ipv6_hdr) : sizeof(struct lb_ipv4_hdr);
	struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(l3 + l3_hdr);
	uint32_t payload =
		pi->l3_len - (pi->l4_off - pi->l2_len) - (uint32_t)(in->data_off >> 4) * 4;
	uint32_t syn = (pi->tcp_flags & LB_TCP_SYN) ? 1 : 0;
	uint32_t ack = lb_be32_to_cpu(in->seq) + syn + payload;
	lb_be32_t seq = in->ack;
	bool has_ack = (pi->tcp_flags & LB_TCP_ACK) != 0;
	lb_be16_t sport = in->sport, dport = in->dport;

	if (pi->v6) {
		memcpy(src, lb_pkt_dst6(p, pi), 16);
		memcpy(dst, lb_pkt_src6(p, pi), 16);
	}
	lb_reply_turn_eth(p, &w->ctx->port_mac[port]);
	if (pi->v6)
		lb_ipv6_hdr_init(
			(struct lb_ipv6_hdr *)l3, LB_IPPROTO_TCP, src, dst, sizeof(*tcp), 64);
	else
		reply_ip((struct lb_ipv4_hdr *)l3, pi, (uint16_t)(l3_hdr + sizeof(*tcp)), true,
			LB_IPPROTO_TCP);
	memset(tcp, 0, sizeof(*tcp));
	tcp->sport = dport;
	tcp->dport = sport;
	if (has_ack) {
		tcp->seq = seq;
		tcp->flags = LB_TCP_RST;
	} else {
		tcp->ack = lb_cpu_to_be32(ack);
		tcp->flags = LB_TCP_RST | LB_TCP_ACK;
	}
	tcp->data_off = 5 << 4;
	if (pi->v6) {
		const struct lb_ipv6_hdr *ip = (const struct lb_ipv6_hdr *)l3;

		tcp->csum = lb_ipv6_l4_csum(ip->src, ip->dst, LB_IPPROTO_TCP, tcp, sizeof(*tcp));
	} else {
		const struct lb_ipv4_hdr *ip = (const struct lb_ipv4_hdr *)l3;

		tcp->csum = lb_ipv4_l4_csum(ip->src, ip->dst, LB_IPPROTO_TCP, tcp, sizeof(*tcp));
	}
	dp_trim_to(m, pi->l2_len + l3_hdr + sizeof(*tcp));
}

/*
 * ICMP administratively prohibited for a refused SYN: IPv4 type 3 code 13
 * (RFC 1812 5.2.7.1), IPv6 destination unreachable code 1 (RFC 4443 3.1).
 */
static void
refuse_icmp(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi)
{
	if (icmp_back(w, port, m, pi, LB_ICMP6_UNREACH, LB_ICMP6_UNREACH_ADMIN,
		    LB_ICMP_UNREACH_ADMIN, 0) != 0) {
		mux_drop(w, m, LB_DROP_LIMIT);
		return;
	}
	w->cnt.limit_icmp_sent++;
	mux_enqueue(w, port, m);
}

void
mux_reply_refuse(
	struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi, int how)
{
	if (how == LB_REFUSE_RST && pi->proto == LB_IPPROTO_TCP) {
		reply_rst(w, port, m, pi);
		w->cnt.limit_rst_sent++;
		mux_enqueue(w, port, m);
	} else if (how == LB_REFUSE_ICMP)
		refuse_icmp(w, port, m, pi);
	else
		mux_drop(w, m, LB_DROP_LIMIT);
}

void
mux_reply_unusable(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi)
{
	w->cnt.unusable_rejected++;
	if (pi->kind == LB_PKT_L4 && pi->proto == LB_IPPROTO_TCP && !(pi->tcp_flags & LB_TCP_RST)) {
		reply_rst(w, port, m, pi);
		w->cnt.unusable_rst_sent++;
		mux_enqueue(w, port, m);
		return;
	}
	if (pi->kind == LB_PKT_L4 && pi->proto == LB_IPPROTO_UDP &&
		icmp_back(w, port, m, pi, LB_ICMP6_UNREACH, LB_ICMP6_UNREACH_PORT,
			LB_ICMP_UNREACH_PORT, 0) == 0) {
		w->cnt.unusable_icmp_sent++;
		mux_enqueue(w, port, m);
		return;
	}
	mux_drop(w, m, LB_DROP_UNUSABLE);
}
