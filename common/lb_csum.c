/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "lb_csum.h"

uint32_t
lb_csum_partial(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;
	uint64_t acc = sum;

	/* Sum 16-bit words as they lie in memory; the result is in memory order. */
	while (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		acc += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		uint16_t w = 0;

		memcpy(&w, p, 1);
		acc += w;
	}
	while (acc >> 32)
		acc = (acc & 0xffffffff) + (acc >> 32);
	return lb_csum_fold((uint32_t)acc);
}

/* Over a pseudo-header and the upper layer, of either family. */
static lb_be16_t
l4_csum(const void *ph, size_t ph_len, uint8_t proto, const void *l4, size_t l4_len)
{
	uint32_t sum = lb_csum_partial(ph, ph_len, 0);
	lb_be16_t r;

	sum = lb_csum_partial(l4, l4_len, sum);
	r = (lb_be16_t)~lb_csum_fold(sum);
	/* UDP transmits an all-zero result as all ones (RFC 768). */
	if (proto == 17 && r == 0)
		r = 0xffff;
	return r;
}

lb_be16_t
lb_ipv4_l4_csum(lb_be32_t src, lb_be32_t dst, uint8_t proto, const void *l4, size_t l4_len)
{
	struct {
		lb_be32_t src;
		lb_be32_t dst;
		uint8_t zero;
		uint8_t proto;
		lb_be16_t len;
	} __attribute__((packed)) ph = {src, dst, 0, proto, lb_cpu_to_be16((uint16_t)l4_len)};

	return l4_csum(&ph, sizeof(ph), proto, l4, l4_len);
}

lb_be16_t
lb_icmp_csum(const void *icmp, size_t len)
{
	return (lb_be16_t)~lb_csum_fold(lb_csum_partial(icmp, len, 0));
}

lb_be16_t
lb_ipv6_l4_csum(
	const uint8_t *src, const uint8_t *dst, uint8_t proto, const void *l4, size_t l4_len)
{
	struct {
		uint8_t src[16];
		uint8_t dst[16];
		lb_be32_t len;
		uint8_t zero[3];
		uint8_t next;
	} __attribute__((packed)) ph;

	memcpy(ph.src, src, 16);
	memcpy(ph.dst, dst, 16);
	ph.len = lb_cpu_to_be32((uint32_t)l4_len);
	memset(ph.zero, 0, sizeof(ph.zero));
	ph.next = proto;
	return l4_csum(&ph, sizeof(ph), proto, l4, l4_len);
}
