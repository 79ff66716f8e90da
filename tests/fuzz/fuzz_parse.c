/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_parse() on arbitrary bytes. Beyond "no crash, no read past len"
 * (the input buffer is exactly len bytes, so ASan sees any overread), a
 * frame the parser accepts must describe itself consistently: a known kind,
 * every offset inside the frame, the protocol matching the kind; and
 * parsing is a pure function of the bytes.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "lb_hdr.h"
#include "lb_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_pkt pkt, again;
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	uint32_t end;
	int rc;

	rc = lb_parse(data, len, &pkt);
	FUZZ_CHECK(rc >= 0 && rc < LB_DROP_MAX);
	FUZZ_CHECK(lb_parse(data, len, &again) == rc);
	if (rc != 0)
		return 0;
	FUZZ_CHECK(memcmp(&pkt, &again, sizeof(pkt)) == 0);
	FUZZ_CHECK(pkt.kind >= LB_PKT_L4 && pkt.kind <= LB_PKT_ARP);
	FUZZ_CHECK(pkt.l2_len == (pkt.has_vlan ? 18 : 14));
	if (pkt.kind == LB_PKT_ARP) {
		FUZZ_CHECK((uint32_t)pkt.l2_len + sizeof(struct lb_arp_hdr) <= len);
		return 0;
	}
	end = (uint32_t)pkt.l2_len + pkt.l3_len;
	FUZZ_CHECK(pkt.l3_len >= sizeof(struct lb_ipv4_hdr));
	FUZZ_CHECK(end <= len);
	FUZZ_CHECK(pkt.l4_off >= pkt.l2_len + sizeof(struct lb_ipv4_hdr));
	FUZZ_CHECK(pkt.l4_off <= end);
	FUZZ_CHECK(memcmp(&pkt.ip_dst, data + pkt.l2_len + 16, 4) == 0);
	switch (pkt.kind) {
	case LB_PKT_L4:
		FUZZ_CHECK(pkt.proto == LB_IPPROTO_TCP || pkt.proto == LB_IPPROTO_UDP);
		FUZZ_CHECK(pkt.l4_off + (pkt.proto == LB_IPPROTO_TCP ? sizeof(struct lb_tcp_hdr)
								     : sizeof(struct lb_udp_hdr)) <=
			   end);
		FUZZ_CHECK(pkt.dst == pkt.ip_dst);
		break;
	case LB_PKT_ICMP_ECHO:
		FUZZ_CHECK(pkt.proto == LB_IPPROTO_ICMP);
		FUZZ_CHECK(pkt.l4_off + sizeof(struct lb_icmp_hdr) <= end);
		FUZZ_CHECK(pkt.sport == pkt.dport);
		break;
	case LB_PKT_ICMP_ERR:
		FUZZ_CHECK(pkt.proto == LB_IPPROTO_TCP || pkt.proto == LB_IPPROTO_UDP);
		FUZZ_CHECK(pkt.quote_off == pkt.l4_off + sizeof(struct lb_icmp_hdr));
		/* The quoted header and the four bytes of ports it must carry. */
		FUZZ_CHECK(pkt.quote_off + sizeof(struct lb_ipv4_hdr) + 4u <= end);
		FUZZ_CHECK(pkt.quote_off + (uint32_t)(data[pkt.quote_off] & 0xf) * 4u + 4u <= end);
		break;
	}
	return 0;
}
