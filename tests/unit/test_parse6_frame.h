/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 frames of test_parse6.c: a datagram built field by field
 * (test_parse6_frame.c) from the spec a row gives, with its extension
 * headers, ICMPv6 error quote or neighbor discovery message, and the row
 * macros.
 */
#ifndef SLUICE_TEST_PARSE6_FRAME_H
#define SLUICE_TEST_PARSE6_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_hdr.h"

#define FRAME_MAX 600
#define MAX_EXT 6
#define CPORT 5555
#define VPORT 80
#define ECHO_ID 0x4242

/* The flow most rows carry: client [2001:db8:c::7]:5555 -> VIP [2001:db8::10]:80. */
extern const uint8_t CLIENT6[16];
extern const uint8_t VIP6[16];

struct frame6 {
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint32_t l3;	   /* IPv6 header */
	uint32_t l4;	   /* upper-layer header */
	uint32_t quote;	   /* ICMPv6 error: the quoted IPv6 header */
	uint32_t quote_l4; /* ... and its ports, past its extension headers */
	uint32_t opt;	   /* ND: its first option */
};

/* One extension header, what follows it being next. */
struct ext_spec {
	uint8_t type;	  /* LB_IPPROTO_HOPOPTS, _DSTOPTS, _ROUTING, _FRAGMENT */
	uint8_t len;	  /* in 8-byte units past the first 8 (not for fragments) */
	uint8_t segments; /* routing: segments left */
	uint16_t frag;	  /* fragment: offset in 8-byte units << 3 | M */
};

/* An ICMPv6 error's quote: the VIP -> client datagram the error is about. */
struct quote_spec {
	uint8_t proto;	/* its upper layer */
	uint32_t ports; /* bytes of its upper-layer header quoted (0..8) */
	uint32_t n_ext; /* its extension headers */
	struct ext_spec ext[MAX_EXT];
	uint8_t version; /* 0: 6 */
};

/*
 * What a row's frame is made of. Zero fields are the defaults: untagged,
 * hop limit 64, no extension headers, client -> VIP.
 */
struct frame6_spec {
	uint8_t upper; /* TCP, UDP, ICMPv6, or anything else */
	bool tagged;
	uint8_t hop; /* 0: 64 */
	uint32_t n_ext;
	struct ext_spec ext[MAX_EXT];
	uint8_t icmp_type, icmp_code; /* upper ICMPv6 */
	struct quote_spec quote;      /* an ICMPv6 error's */
	uint8_t tcp_opt_words;
	uint32_t pay;
	void (*build)(struct frame6 *f, int arg); /* instead of all that */
	int arg;
	struct {
		uint8_t at; /* enum edit_at */
		uint8_t off, size;
		int value;
		void (*fn)(struct frame6 *f, int value);
	} edit;
};

enum edit_at { AT_L3 = 1, AT_L4, AT_QUOTE, AT_LEN, AT_END };

/* Neighbor discovery: arg says which message and how it is wrong. */
enum nd_kind {
	NS_SLLA,	/* a solicitation for VIP6 with the source link-layer option */
	NS_BARE,	/* ... without options */
	NA,		/* an advertisement */
	NS_DAD,		/* from ::, to the solicited-node group, no option */
	NS_DAD_SLLA,	/* ... with a source link-layer option: forbidden */
	NS_DAD_UNICAST, /* ... sent to VIP6 itself: forbidden */
	NS_MCAST_TARGET,
	NS_OPT_ZERO, /* an option of length 0 */
	NS_OPT_PAST, /* an option claiming 16 bytes of 8 */
};

/* The IPv6 header at off; a row's frame built; an ND message of enum nd_kind. */
struct lb_ipv6_hdr *ip6_at(struct frame6 *f, uint32_t off);
void build(struct frame6 *f, const struct frame6_spec *s);
void build_nd(struct frame6 *f, int arg);
/* Edits (frame6_spec.edit.fn), called with the edit's value. */
void e_payload_plus(struct frame6 *f, int v);
void e_cut(struct frame6 *f, int v);
void e_ext_longer(struct frame6 *f, int v);

/* clang-format off */
#define V6(p, ...) {.upper = LB_IPPROTO_##p, __VA_ARGS__}
#define EXT(t, ...) {.type = LB_IPPROTO_##t, __VA_ARGS__}
#define ICMP6(t, ...) {.upper = LB_IPPROTO_ICMPV6, .icmp_type = (t), __VA_ARGS__}
#define QUOTE(p, ...) .quote = {.proto = LB_IPPROTO_##p, __VA_ARGS__}
#define PORTS8 .ports = 8 /* the quote's whole UDP header, or TCP's first 8 bytes */
#define IP6_FIELD(f, v) .edit = {.at = AT_L3, .off = offsetof(struct lb_ipv6_hdr, f), \
	.size = sizeof(((struct lb_ipv6_hdr *)0)->f), .value = (v)}
#define L4_BYTE(o, v) .edit = {.at = AT_L4, .off = (o), .size = 1, .value = (v)}
#define L4_WORD(o, v) .edit = {.at = AT_L4, .off = (o), .size = 2, .value = (v)}
#define QUOTE_BYTE(o, v) .edit = {.at = AT_QUOTE, .off = (o), .size = 1, .value = (v)}
#define CUT_TO(n) .edit = {.at = AT_LEN, .value = (n)}
#define APPEND(n) .edit = {.at = AT_END, .value = (n)}
#define EDIT(f, v) .edit = {.fn = (f), .value = (v)}
#define ND(k) {.build = build_nd, .arg = (k)}
#define FWD(p) .kind = LB_PKT_L4, .proto = LB_IPPROTO_##p
#define ERR(p) .kind = LB_PKT_ICMP_ERR, .proto = LB_IPPROTO_##p, .turned = true

#endif
