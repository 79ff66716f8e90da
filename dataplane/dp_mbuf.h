/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What both data planes do to a frame's mbuf in place, static inline as
 * dp_tx.h is: these run per packet.
 */
#ifndef DP_MBUF_H
#define DP_MBUF_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "lb_drop.h"
#include "lb_parse.h"
#include "lb_reply.h"

/* Cut the frame to len bytes if it is longer (Ethernet padding, a reply shorter than its request).
 */
static inline void
dp_trim_to(struct rte_mbuf *m, uint32_t len)
{
	if (m->data_len > len)
		rte_pktmbuf_trim(m, (uint16_t)(m->data_len - len));
}

/*
 * A neighbor solicitation (parsed into pi) for an address the caller owns,
 * answered in place by an advertisement naming mac (router: the R flag).
 * LB_DROP_NONE, or why it is dropped: ND_MALFORMED for a wrong checksum
 * (RFC 4861 7.1.1 discards it), NO_MBUF when the frame cannot grow to the
 * answer's length.
 */
static inline enum lb_drop
dp_reply_nd(struct rte_mbuf *m, const struct lb_pkt *pi, const void *mac, int router)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = pi->l2_len + LB_REPLY_NA_LEN;

	if (!lb_reply_icmp6_ok(p, pi))
		return LB_DROP_ND_MALFORMED;
	/* The advertisement may be longer than a solicitation without options. */
	if (m->data_len < len && rte_pktmbuf_append(m, (uint16_t)(len - m->data_len)) == NULL)
		return LB_DROP_NO_MBUF;
	dp_trim_to(m, lb_reply_na(p, pi, mac, router));
	return LB_DROP_NONE;
}

#endif /* DP_MBUF_H */
