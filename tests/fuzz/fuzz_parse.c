/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_parse() on arbitrary bytes. Beyond "no crash, no read past len"
 * (the input buffer is exactly len bytes, so ASan sees any overread), a
 * frame the parser accepts must describe itself consistently: a known kind,
 * every offset inside the frame (IPv6's addresses and extension chain too),
 * the protocol matching the kind; and parsing is a pure function of the
 * bytes.
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
	FUZZ_CHECK(pkt.kind >= LB_PKT_L4 && pkt.kind <= LB_PKT_ND);
	FUZZ_CHECK(pkt.l2_len == (pkt.has_vlan ? 18 : 14));
	if (pkt.kind == LB_PKT_ARP) {
		FUZZ_CHECK(!pkt.v6);
		FUZZ_CHECK((uint32_t)pkt.l2_len + sizeof(struct lb_arp_hdr) <= len);
		return 0;
	}
	end = (uint32_t)pkt.l2_len + pkt.l3_len;
	FUZZ_CHECK(end <= len);
	if (pkt.v6) {
		/* IPv6: the fixed header, the addresses inside the datagram. */
		FUZZ_CHECK(pkt.l3_len > sizeof(struct lb_ipv6_hdr));
		FUZZ_CHECK(pkt.l4_off >= pkt.l2_len + sizeof(struct lb_ipv6_hdr));
		FUZZ_CHECK(pkt.ip_dst6_off == pkt.l2_len + 24u);
		FUZZ_CHECK(pkt.src6_off + 16u <= end && pkt.dst6_off + 16u <= end);
		FUZZ_CHECK(pkt.df == 1);
	} else {
		FUZZ_CHECK(pkt.l3_len >= sizeof(struct lb_ipv4_hdr));
		FUZZ_CHECK(pkt.l4_off >= pkt.l2_len + sizeof(struct lb_ipv4_hdr));
		FUZZ_CHECK(memcmp(&pkt.ip_dst, data + pkt.l2_len + 16, 4) == 0);
	}
	FUZZ_CHECK(pkt.l4_off <= end);
	switch (pkt.kind) {
	case LB_PKT_L4:
		FUZZ_CHECK(pkt.proto == LB_IPPROTO_TCP || pkt.proto == LB_IPPROTO_UDP);
		FUZZ_CHECK(pkt.l4_off + (pkt.proto == LB_IPPROTO_TCP ? sizeof(struct lb_tcp_hdr)
								     : sizeof(struct lb_udp_hdr)) <=
			   end);
		FUZZ_CHECK(pkt.v6 ? pkt.dst6_off == pkt.ip_dst6_off : pkt.dst == pkt.ip_dst);
		break;
	case LB_PKT_ICMP_ECHO:
		FUZZ_CHECK(pkt.proto == (pkt.v6 ? LB_IPPROTO_ICMPV6 : LB_IPPROTO_ICMP));
		FUZZ_CHECK(pkt.l4_off + sizeof(struct lb_icmp_hdr) <= end);
		FUZZ_CHECK(pkt.sport == pkt.dport);
		break;
	case LB_PKT_ICMP_ERR:
		FUZZ_CHECK(pkt.proto == LB_IPPROTO_TCP || pkt.proto == LB_IPPROTO_UDP);
		FUZZ_CHECK(pkt.quote_off == pkt.l4_off + sizeof(struct lb_icmp_hdr));
		/* The quoted header and the four bytes of ports it must carry. */
		FUZZ_CHECK(
			pkt.quote_l4_off >= pkt.quote_off + (pkt.v6 ? sizeof(struct lb_ipv6_hdr)
								    : sizeof(struct lb_ipv4_hdr)));
		FUZZ_CHECK(pkt.quote_l4_off + 4u <= end);
		if (!pkt.v6)
			FUZZ_CHECK(pkt.quote_l4_off ==
				   pkt.quote_off + (uint32_t)(data[pkt.quote_off] & 0xf) * 4u);
		break;
	case LB_PKT_ND:
		/* RFC 4861 7.1: only from this link, the target inside the message. */
		FUZZ_CHECK(pkt.v6 && pkt.ttl == 255);
		FUZZ_CHECK(pkt.quote_off == pkt.l4_off + 8u && pkt.quote_off + 16u <= end);
		FUZZ_CHECK(pkt.nd_type == LB_ICMP6_ND_NS || pkt.nd_type == LB_ICMP6_ND_NA);
		break;
	}
	return 0;
}
