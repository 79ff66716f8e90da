/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Translating the header an ICMP error quotes, so each side understands
 * errors about its own view of a flow: the VM knows DIP:dport, the client
 * knows VIP:vport. Only the quoted address, port and IP checksum change;
 * the ICMP checksum follows incrementally. The quoted TCP/UDP checksum is
 * left alone: quotes are usually truncated and nobody verifies it. IPv6
 * has no header checksum to fix in the quote, but the ICMPv6 checksum also
 * covers the error's own addresses (the pseudo-header), so a rewrite of
 * the error's source adds to it too (ha_icmp6_src_rewrite()).
 */
#ifndef HA_ICMP_H
#define HA_ICMP_H

#include <stddef.h>
#include <string.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"

/*
 * In the ICMP error at frame p (parsed into pi), set the quoted source
 * (src_side) or destination address and port to addr/port.
 */
static inline void
ha_quote_rewrite(uint8_t *p, const struct lb_pkt *pi, int src_side, lb_be32_t addr, lb_be16_t port)
{
	struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(p + pi->l4_off);
	struct lb_ipv4_hdr *q = (struct lb_ipv4_hdr *)(p + pi->quote_off);
	uint8_t *ports = p + pi->quote_l4_off;
	uint8_t *pa = (uint8_t *)q + (src_side ? offsetof(struct lb_ipv4_hdr, src)
					       : offsetof(struct lb_ipv4_hdr, dst));
	uint8_t *pp = ports + (src_side ? 0 : 2);
	lb_be32_t old_a;
	lb_be16_t old_p, old_c, new_c;
	uint32_t da;

	memcpy(&old_a, pa, 4);
	memcpy(&old_p, pp, 2);
	memcpy(&old_c, &q->csum, 2);
	da = lb_csum_delta32(old_a, addr);
	new_c = lb_csum_apply(old_c, da);
	memcpy(pa, &addr, 4);
	memcpy(&q->csum, &new_c, 2);
	memcpy(pp, &port, 2);
	/* The ICMP checksum covers all three changes: one fold. */
	icmp->csum = lb_csum_apply(
		icmp->csum, da + lb_csum_delta16(old_c, new_c) + lb_csum_delta16(old_p, port));
}

/* In the ICMPv6 error at frame p (parsed into pi): the same, on the IPv6 quote. */
static inline void
ha_quote_rewrite6(
	uint8_t *p, const struct lb_pkt *pi, int src_side, const uint8_t *addr, lb_be16_t port)
{
	struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(p + pi->l4_off);
	uint8_t *pa =
		p + pi->quote_off +
		(src_side ? offsetof(struct lb_ipv6_hdr, src) : offsetof(struct lb_ipv6_hdr, dst));
	uint8_t *pp = p + pi->quote_l4_off + (src_side ? 0 : 2);
	lb_be16_t old_p;
	uint32_t d;

	memcpy(&old_p, pp, 2);
	d = lb_csum_delta128(pa, addr) + lb_csum_delta16(old_p, port);
	memcpy(pa, addr, 16);
	memcpy(pp, &port, 2);
	icmp->csum = lb_csum_apply(icmp->csum, d);
}

/* The IPv6 source of the ICMPv6 error at frame p set to addr, its checksum following. */
static inline void
ha_icmp6_src_rewrite(uint8_t *p, const struct lb_pkt *pi, const uint8_t *addr)
{
	struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)(p + pi->l2_len);
	struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(p + pi->l4_off);

	icmp->csum = lb_csum_apply(icmp->csum, lb_csum_delta128(ip->src, addr));
	memcpy(ip->src, addr, 16);
}

#endif /* HA_ICMP_H */
