/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What test_parse.c (IPv4, ARP) and test_parse6.c (IPv6) share: the parse
 * of a frame from a heap block of exactly its length, a table row's verdict,
 * the verdicts of every prefix of a frame, and the builders' append.
 */
#ifndef SLUICE_TEST_PARSE_UTIL_H
#define SLUICE_TEST_PARSE_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_drop.h"
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

/*
 * A table row's frame parsed, the verdict checked against the row's (desc
 * names the row). True when the frame was accepted, as wanted: the row's
 * further checks then apply to *pkt.
 */
static inline bool
expect_verdict(const char *desc, const uint8_t *frame, uint32_t len, int want, struct lb_pkt *pkt)
{
	int rc = parse_exact(frame, len, pkt);

	cr_expect_eq(rc, want, "%s: got %d (%s), want %d (%s)", desc, rc, lb_drop_name(rc), want,
		lb_drop_name(want));
	return rc == 0 && want == 0;
}

/*
 * Every prefix frame[0..cut) of a frame of len bytes parsed, its verdict
 * checked against want(cut, arg).
 */
static inline void
expect_every_prefix(const char *name, const uint8_t *frame, uint32_t len,
	int (*want)(uint32_t cut, const void *arg), const void *arg)
{
	uint32_t cut;

	for (cut = 0; cut <= len; cut++) {
		struct lb_pkt pkt;
		int rc = parse_exact(frame, cut, &pkt), w = want(cut, arg);

		cr_expect_eq(rc, w, "%s cut to %u of %u bytes: got %s, want %s", name, cut, len,
			lb_drop_name(rc), lb_drop_name(w));
	}
}

/*
 * A frame whose datagram was cut to len of full_len bytes (its lengths made
 * to match) parsed, its verdict checked against want.
 */
static inline void
expect_cut(const char *name, const uint8_t *frame, uint32_t len, uint32_t full_len, int want)
{
	struct lb_pkt pkt;
	int rc = parse_exact(frame, len, &pkt);

	cr_expect_eq(rc, want, "%s, datagram cut to %u of %u bytes: got %s, want %s", name, len,
		full_len, lb_drop_name(rc), lb_drop_name(want));
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
