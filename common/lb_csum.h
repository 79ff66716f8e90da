/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internet checksums, the one set every part of Sluice uses: full
 * computation for headers Sluice builds (the mux's replies, the agent's
 * reassembled datagrams, the manager's VIP probes), and the incremental
 * update of RFC 1624 (eqn. 3, HC' = ~(~HC + ~m + m')) for fields the data
 * planes rewrite, so a DNAT costs a few additions instead of a pass over
 * the payload. Values are in network byte order throughout; the
 * one's-complement sum is byte-order independent as long as old and new
 * are in the same order (RFC 1071), so the updates need no swaps.
 *
 * A rewrite that changes several fields under one checksum sums what each
 * change adds (lb_csum_delta16/32(), unfolded; add them up) and applies the
 * sum once (lb_csum_apply(): one fold per checksum). That is bit for bit
 * the checksum one lb_csum_update16/32() per field gives (the update is the
 * same arithmetic for one field; tests/unit/test_csum.c checks both against
 * full recomputation). A delta shared by two checksums (an address under
 * both the IP header's and the pseudo-header's) is summed once.
 */
#ifndef LB_CSUM_H
#define LB_CSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lb_types.h"

static inline uint16_t
lb_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* What replacing the 16-bit word old by new adds to a checksum: unfolded. */
static inline uint32_t
lb_csum_delta16(lb_be16_t old, lb_be16_t new)
{
	return (uint32_t)(uint16_t)~old + new;
}

/* What replacing the 32-bit word old (an IPv4 address) by new adds: unfolded. */
static inline uint32_t
lb_csum_delta32(lb_be32_t old, lb_be32_t new)
{
	return (uint32_t)(uint16_t) ~(old & 0xffff) + (uint16_t) ~(old >> 16) + (new & 0xffff) +
	       (new >> 16);
}

/*
 * What replacing a 16-byte IPv6 address old by new adds: unfolded (eight
 * words each way; summed with a few more deltas it still folds right).
 * Either may sit at any alignment, as addresses in a frame do.
 */
static inline uint32_t
lb_csum_delta128(const void *old, const void *new)
{
	const uint8_t *o = (const uint8_t *)old, *n = (const uint8_t *)new;
	uint32_t sum = 0, a, b;
	int i;

	for (i = 0; i < 16; i += 4) {
		memcpy(&a, o + i, 4);
		memcpy(&b, n + i, 4);
		sum += lb_csum_delta32(a, b);
	}
	return sum;
}

/*
 * The checksum field after the changes summed in delta (a sum of a few
 * lb_csum_delta*(): anything below 2^32 - 2^16 folds correctly).
 */
static inline lb_be16_t
lb_csum_apply(lb_be16_t csum, uint32_t delta)
{
	return (lb_be16_t)~lb_csum_fold((uint32_t)(uint16_t)~csum + delta);
}

/*
 * A UDP checksum field after the changes summed in delta. Zero is "no
 * checksum" (the sender computed none): it stays zero. A sum that comes to
 * zero is sent as 0xffff, its other form (RFC 768).
 */
static inline lb_be16_t
lb_csum_apply_udp(lb_be16_t csum, uint32_t delta)
{
	if (csum == 0)
		return 0;
	csum = lb_csum_apply(csum, delta);
	return csum == 0 ? 0xffff : csum;
}

/* Checksum field after one 16-bit word of the covered data changed. */
static inline lb_be16_t
lb_csum_update16(lb_be16_t csum, lb_be16_t old, lb_be16_t new)
{
	return lb_csum_apply(csum, lb_csum_delta16(old, new));
}

/* Checksum field after one 32-bit word (an IPv4 address) changed. */
static inline lb_be16_t
lb_csum_update32(lb_be16_t csum, lb_be32_t old, lb_be32_t new)
{
	return lb_csum_apply(csum, lb_csum_delta32(old, new));
}

/* One's-complement sum of a buffer (not folded, not inverted). */
uint32_t lb_csum_partial(const void *buf, size_t len, uint32_t sum);

/*
 * Header checksum of an IPv4 header of hdr_len bytes (a multiple of four, as
 * IHL makes it; its csum field is skipped). Inline and summed as 32-bit
 * words: it runs twice per forwarded packet (parse, outer header).
 */
static inline lb_be16_t
lb_ipv4_hdr_csum(const void *ip, size_t hdr_len)
{
	const uint8_t *p = (const uint8_t *)ip;
	uint64_t sum = 0;
	uint32_t w;
	uint16_t c;
	size_t i;

	for (i = 0; i + 4 <= hdr_len; i += 4) {
		memcpy(&w, p + i, 4);
		sum += w;
	}
	/* The checksum field went into the sum: adding its complement takes it out. */
	memcpy(&c, p + 10, 2);
	sum += (uint16_t)~c;
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	return (lb_be16_t)~lb_csum_fold((uint32_t)sum);
}

/*
 * Full TCP/UDP checksum over the IPv4 pseudo-header and l4_len bytes of
 * segment (whose checksum field must be zero or is included as given).
 */
lb_be16_t lb_ipv4_l4_csum(
	lb_be32_t src, lb_be32_t dst, uint8_t proto, const void *l4, size_t l4_len);

/* Checksum of an ICMP message (no pseudo-header for ICMPv4). */
lb_be16_t lb_icmp_csum(const void *icmp, size_t len);

/*
 * Full upper-layer checksum over the IPv6 pseudo-header (RFC 8200 8.1:
 * source, destination, 32-bit length, next header) and l4_len bytes at l4
 * (whose checksum field must be zero or is included as given): TCP, UDP
 * (a computed zero sent as 0xffff: IPv6 UDP has no "no checksum") and
 * ICMPv6 (RFC 4443 2.3). Addresses are 16 bytes as they lie in the packet.
 */
lb_be16_t lb_ipv6_l4_csum(
	const uint8_t *src, const uint8_t *dst, uint8_t proto, const void *l4, size_t l4_len);

#endif /* LB_CSUM_H */
