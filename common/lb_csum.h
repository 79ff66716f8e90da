/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internet checksums: full computation for headers Sluice builds, and the
 * incremental update of RFC 1624 (eqn. 3, HC' = ~(~HC + ~m + m')) for fields
 * it rewrites, so a DNAT costs a few additions instead of a pass over the
 * payload. Values are in network byte order throughout; the one's-complement
 * sum is byte-order independent as long as old and new are in the same order.
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

/* Checksum field after a 16-bit word of the covered data changed. */
static inline lb_be16_t
lb_csum_update16(lb_be16_t csum, lb_be16_t old, lb_be16_t new)
{
	uint32_t sum = (uint16_t)~csum;

	sum += (uint16_t)~old;
	sum += new;
	return (lb_be16_t)~lb_csum_fold(sum);
}

/* Checksum field after a 32-bit word (an IPv4 address) changed. */
static inline lb_be16_t
lb_csum_update32(lb_be16_t csum, lb_be32_t old, lb_be32_t new)
{
	uint32_t sum = (uint16_t)~csum;

	sum += (uint16_t) ~(old & 0xffff);
	sum += (uint16_t) ~(old >> 16);
	sum += new & 0xffff;
	sum += new >> 16;
	return (lb_be16_t)~lb_csum_fold(sum);
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

#endif /* LB_CSUM_H */
