/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_parse6's frame builder: Ethernet (tagged or not), the IPv6 header,
 * extension headers, TCP, UDP and ICMPv6 with their checksums, the quote
 * of an error, neighbor discovery, and the edits a row applies.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_csum.h"
#include "lb_hdr.h"
#include "test_parse6_frame.h"
#include "test_parse_util.h"

const uint8_t CLIENT6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0c, [15] = 7};
const uint8_t VIP6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x10};
static const uint8_t ROUTER6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0xff, [15] = 1};
static const uint8_t UNSPEC6[16];
/* ff02::1:ff00:10, the solicited-node group of VIP6. */
static const uint8_t SNODE6[16] = {0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 0x10};

/* --- Builder --------------------------------------------------------------- */

static uint8_t *
put(struct frame6 *f, uint32_t n)
{
	return frame_put(f->b, &f->len, FRAME_MAX, n);
}

static void
put_l2(struct frame6 *f, bool tagged)
{
	static const uint8_t hdr[12] = {0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0xfe};
	uint8_t *p = put(f, tagged ? 18 : 14);

	memcpy(p, hdr, 12);
	if (tagged) {
		p[12] = 0x81;
		p[14] = 0x20;
		p[15] = 0x64;
		p += 4;
	}
	p[12] = 0x86;
	p[13] = 0xdd;
}

static uint32_t
put_ipv6(struct frame6 *f, uint8_t next, const uint8_t *src, const uint8_t *dst, uint8_t hop)
{
	uint32_t off = f->len;
	struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)put(f, sizeof(*ip));

	ip->vtc_flow = lb_cpu_to_be32(lb_ipv6_vtc(0x28, 0x12345));
	ip->next_hdr = next;
	ip->hop_limit = hop;
	memcpy(ip->src, src, 16);
	memcpy(ip->dst, dst, 16);
	return off;
}

static void
put_exts(struct frame6 *f, const struct ext_spec *e, uint32_t n, uint8_t upper)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint32_t hl = e[i].type == LB_IPPROTO_FRAGMENT ? 8 : (e[i].len + 1u) * 8;
		uint8_t *p = put(f, hl);

		p[0] = i + 1 < n ? e[i + 1].type : upper;
		if (e[i].type == LB_IPPROTO_FRAGMENT) {
			p[2] = (uint8_t)(e[i].frag >> 8);
			p[3] = (uint8_t)e[i].frag;
			p[7] = 0x99; /* identification */
			continue;
		}
		p[1] = e[i].len;
		if (e[i].type == LB_IPPROTO_ROUTING) {
			p[2] = 4; /* a segment routing header, as good as any */
			p[3] = e[i].segments;
		} else {
			p[2] = 1; /* a PadN option filling the header */
			p[3] = (uint8_t)(hl - 4);
		}
	}
}

struct lb_ipv6_hdr *
ip6_at(struct frame6 *f, uint32_t off)
{
	return (struct lb_ipv6_hdr *)(f->b + off);
}

/* The first header's type: the IPv6 header's next header. */
static uint8_t
first_type(const struct ext_spec *e, uint32_t n, uint8_t upper)
{
	return n ? e[0].type : upper;
}

/*
 * Close the datagram at the current end of the frame: payload length, UDP
 * length and the upper-layer checksum, as a wire would carry them.
 */
static void
finish(struct frame6 *f, uint8_t upper)
{
	struct lb_ipv6_hdr *ip = ip6_at(f, f->l3);
	uint32_t l4_len = f->len - f->l4;
	uint8_t *l4 = f->b + f->l4;
	uint32_t at = upper == LB_IPPROTO_TCP ? 16 : upper == LB_IPPROTO_UDP ? 6 : 2;
	lb_be16_t c;

	ip->payload_len = lb_cpu_to_be16((uint16_t)(f->len - f->l3 - sizeof(*ip)));
	if (upper == LB_IPPROTO_UDP) {
		l4[4] = (uint8_t)(l4_len >> 8);
		l4[5] = (uint8_t)l4_len;
	}
	if (upper != LB_IPPROTO_TCP && upper != LB_IPPROTO_UDP && upper != LB_IPPROTO_ICMPV6)
		return;
	l4[at] = l4[at + 1] = 0;
	c = lb_ipv6_l4_csum(ip->src, ip->dst, upper, l4, l4_len);
	memcpy(l4 + at, &c, 2);
}

static void
put_quote(struct frame6 *f, const struct quote_spec *q)
{
	static const uint8_t ports[8] = {0, VPORT, CPORT >> 8, CPORT & 0xff, 0xde, 0xad, 0, 0};
	struct lb_ipv6_hdr *qip;

	f->quote = put_ipv6(f, first_type(q->ext, q->n_ext, q->proto), VIP6, CLIENT6, 61);
	qip = ip6_at(f, f->quote);
	qip->payload_len = lb_cpu_to_be16(1400);
	if (q->version)
		f->b[f->quote] = (uint8_t)(q->version << 4);
	put_exts(f, q->ext, q->n_ext, q->proto);
	f->quote_l4 = f->len;
	memcpy(put(f, q->ports), ports, q->ports);
}

void
build(struct frame6 *f, const struct frame6_spec *s)
{
	uint8_t upper = s->upper;

	memset(f, 0, sizeof(*f));
	if (s->build != NULL) {
		s->build(f, s->arg);
	} else {
		put_l2(f, s->tagged);
		f->l3 = put_ipv6(f, first_type(s->ext, s->n_ext, upper), CLIENT6, VIP6,
			s->hop ? s->hop : 64);
		put_exts(f, s->ext, s->n_ext, upper);
		f->l4 = f->len;
		if (upper == LB_IPPROTO_TCP) {
			uint8_t *t = put(f, 20 + 4u * s->tcp_opt_words);

			t[0] = CPORT >> 8;
			t[1] = CPORT & 0xff;
			t[3] = VPORT;
			t[12] = (uint8_t)((5 + s->tcp_opt_words) << 4);
			t[13] = LB_TCP_SYN;
			memset(t + 20, 1, 4u * s->tcp_opt_words);
		} else if (upper == LB_IPPROTO_UDP) {
			uint8_t *u = put(f, 8);

			u[0] = CPORT >> 8;
			u[1] = CPORT & 0xff;
			u[3] = VPORT;
		} else if (upper == LB_IPPROTO_ICMPV6) {
			struct lb_icmp_hdr *i = (struct lb_icmp_hdr *)put(f, 8);

			i->type = s->icmp_type;
			i->code = s->icmp_code;
			if (s->icmp_type == LB_ICMP6_ECHO) {
				i->echo.id = lb_cpu_to_be16(ECHO_ID);
				i->echo.seq = lb_cpu_to_be16(1);
			}
			if (s->icmp_type == LB_ICMP6_TOO_BIG)
				i->mtu6 = lb_cpu_to_be32(1400);
			if (s->quote.proto != 0)
				put_quote(f, &s->quote);
		}
		memset(put(f, s->pay), 0xab, s->pay);
		finish(f, upper);
	}
	if (s->edit.fn != NULL) {
		s->edit.fn(f, s->edit.value);
	} else if (s->edit.at == AT_LEN) {
		f->len = s->edit.value >= 0 ? (uint32_t)s->edit.value
					    : f->len - (uint32_t)-s->edit.value;
	} else if (s->edit.at == AT_END) {
		memset(put(f, (uint32_t)s->edit.value), 0, (uint32_t)s->edit.value);
	} else if (s->edit.at != 0) {
		uint8_t *p = f->b +
			     (s->edit.at == AT_L3	   ? f->l3
				     : s->edit.at == AT_L4 ? f->l4
							   : f->quote) +
			     s->edit.off;

		if (s->edit.size == 1) {
			p[0] = (uint8_t)s->edit.value;
		} else {
			p[0] = (uint8_t)(s->edit.value >> 8);
			p[1] = (uint8_t)s->edit.value;
		}
	}
}

void
build_nd(struct frame6 *f, int arg)
{
	bool dad = arg == NS_DAD || arg == NS_DAD_SLLA || arg == NS_DAD_UNICAST;
	struct lb_nd_msg *nd;

	put_l2(f, false);
	f->l3 = put_ipv6(f, LB_IPPROTO_ICMPV6, dad ? UNSPEC6 : ROUTER6,
		dad && arg != NS_DAD_UNICAST ? SNODE6 : VIP6, 255);
	f->l4 = f->len;
	nd = (struct lb_nd_msg *)put(f, sizeof(*nd));
	nd->type = arg == NA ? LB_ICMP6_ND_NA : LB_ICMP6_ND_NS;
	memcpy(nd->target, VIP6, 16);
	if (arg == NS_MCAST_TARGET)
		nd->target[0] = 0xff;
	f->opt = f->len;
	if (arg != NS_BARE && arg != NS_DAD && arg != NS_DAD_UNICAST) {
		struct lb_nd_opt_lla *o = (struct lb_nd_opt_lla *)put(f, sizeof(*o));

		o->type = arg == NA ? LB_ND_OPT_TLLA : LB_ND_OPT_SLLA;
		o->len = arg == NS_OPT_ZERO ? 0 : arg == NS_OPT_PAST ? 2 : 1;
		o->mac[0] = 0x02;
		o->mac[5] = 0xfe;
	}
	finish(f, LB_IPPROTO_ICMPV6);
}

/* --- Edits ------------------------------------------------------------------ */

/* The payload length set to what the frame holds plus v. */
void
e_payload_plus(struct frame6 *f, int v)
{
	ip6_at(f, f->l3)->payload_len = lb_cpu_to_be16((uint16_t)((int)(f->len - f->l3 - 40) + v));
}

/* The datagram cut v bytes short, the payload length made to match. */
void
e_cut(struct frame6 *f, int v)
{
	f->len -= (uint32_t)v;
	e_payload_plus(f, 0);
}

/* The first extension header's length made to claim v more 8-byte units. */
void
e_ext_longer(struct frame6 *f, int v)
{
	f->b[f->l3 + 40 + 1] = (uint8_t)(f->b[f->l3 + 40 + 1] + v);
}
