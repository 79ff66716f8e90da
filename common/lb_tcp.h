/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP option handling shared by the data planes: MSS clamping, so that
 * clients never send segments that stop fitting once a mux adds its outer
 * header. Bounds-checked on the option bytes the header claims.
 */
#ifndef LB_TCP_H
#define LB_TCP_H

#include <stdint.h>
#include <string.h>

#include "lb_csum.h"
#include "lb_hdr.h"

#define LB_TCPOPT_EOL 0
#define LB_TCPOPT_NOP 1
#define LB_TCPOPT_MSS 2

/*
 * If tcp (whose header, options included, is hdr_len bytes and readable)
 * carries MSS options above clamp, lower each to clamp and fix the checksum.
 * Every one: a sender may repeat the option, and a receiver may take any of
 * them. Returns 1 if the segment changed.
 */
static inline int
lb_tcp_mss_clamp(struct lb_tcp_hdr *tcp, uint32_t hdr_len, uint16_t clamp)
{
	uint8_t *o = (uint8_t *)(tcp + 1);
	uint8_t *end = (uint8_t *)tcp + hdr_len;
	int changed = 0;

	while (o < end) {
		uint8_t kind = o[0];
		uint8_t len;

		if (kind == LB_TCPOPT_EOL)
			break;
		if (kind == LB_TCPOPT_NOP) {
			o++;
			continue;
		}
		/* An option whose length byte is missing, too small or overruns. */
		if (o + 2 > end || o[1] < 2 || o + o[1] > end)
			break;
		len = o[1];
		if (kind == LB_TCPOPT_MSS && len == 4) {
			lb_be16_t old, new = lb_cpu_to_be16(clamp);

			memcpy(&old, o + 2, 2);
			if (lb_be16_to_cpu(old) > clamp) {
				memcpy(o + 2, &new, 2);
				/* At an odd offset the value straddles two checksum words. */
				if ((o + 2 - (uint8_t *)tcp) & 1)
					tcp->csum = lb_csum_update16(
						tcp->csum, lb_bswap16(old), lb_bswap16(new));
				else
					tcp->csum = lb_csum_update16(tcp->csum, old, new);
				changed = 1;
			}
		}
		o += len;
	}
	return changed;
}

#endif /* LB_TCP_H */
