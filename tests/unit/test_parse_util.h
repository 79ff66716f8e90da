/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What test_parse.c (IPv4, ARP) and test_parse6.c (IPv6) share: the parse
 * of a frame from a heap block of exactly its length, and the builders'
 * append.
 */
#ifndef SLUICE_TEST_PARSE_UTIL_H
#define SLUICE_TEST_PARSE_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_parse.h"

/*
 * Parse frame[0..len) from a heap block of exactly len bytes, so that ASan
 * traps the first byte read past the end. Also proves the parser writes
 * nothing.
 */
static inline int
parse_exact(const uint8_t *frame, uint32_t len, struct lb_pkt *pkt)
{
	uint8_t *h = malloc(len ? len : 1);
	int rc;

	cr_assert(h != NULL, "malloc");
	memcpy(h, frame, len);
	rc = lb_parse(h, len, pkt);
	cr_assert(memcmp(h, frame, len) == 0, "lb_parse wrote into the frame");
	free(h);
	return rc;
}

/* n zeroed bytes appended to the frame b[0..*len) of cap bytes; their start. */
static inline uint8_t *
frame_put(uint8_t *b, uint32_t *len, uint32_t cap, uint32_t n)
{
	uint8_t *p = b + *len;

	cr_assert_leq(*len + n, cap, "test frame overflows its buffer");
	memset(p, 0, n);
	*len += n;
	return p;
}

#endif
