/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv4 and ARP frames of test_parse.c's table and test_parse_cut.c's
 * truncations and mutations: a frame built field by field
 * (test_parse_frame.c), the spec a row gives for it, and the row macros.
 */
#ifndef SLUICE_TEST_PARSE_FRAME_H
#define SLUICE_TEST_PARSE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_hdr.h"

#define FRAME_MAX 512

/* Host-order addresses and ports of the flow most cases carry. */
#define HOST_IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define CLIENT HOST_IP(198, 51, 100, 7)
#define VIP HOST_IP(192, 0, 2, 10)
#define ROUTER HOST_IP(203, 0, 113, 1)
#define CPORT 5555
#define VPORT 80
#define ECHO_ID 0x4242
#define VLAN_TCI 0x2064 /* priority 1, VLAN 100 */

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint32_t l3;	/* outer IPv4 or ARP header */
	uint32_t l4;	/* outer L4 header */
	uint32_t quote; /* ICMP error: the quoted IPv4 header */
};

/*
 * What a case's frame is made of: client:5555 -> VIP:80 over TCP or UDP
 * (l4), or an ICMP error about VIP:80 -> client:5555 (icmp), or a builder of
 * its own; then, if given, the one thing the case changes (edit, with its
 * value). Zero fields are the defaults: untagged, IHL 5, no options.
 */
struct l4_spec {
	uint8_t proto; /* LB_IPPROTO_TCP or LB_IPPROTO_UDP */
	bool tagged;   /* 802.1Q tag VLAN_TCI */
	uint8_t ihl;   /* IPv4 header length in words (0: 5) */
	uint8_t tcp_opt_words;
	uint32_t pay; /* payload bytes */
};

/* From the router to the VIP, quoting a full 1500-byte VIP -> client datagram. */
struct icmp_err_spec {
	uint8_t type, code;
	uint8_t qproto;	 /* the quoted datagram's protocol */
	uint8_t qihl;	 /* its header length in words (0: 5) */
	uint32_t qbytes; /* bytes of its L4 header quoted (up to 8) */
};

/*
 * One change to a built frame: a header field set to value (IP_FIELD(ttl, 1):
 * the outer IPv4 header's TTL, its checksum made right again), bytes added
 * (APPEND(6, 0): Ethernet padding) or the frame cut (CUT_TO(13)), or fn called
 * with value (EDIT(e_tot_plus, 1)).
 */
enum edit_at { AT_L3 = 1, AT_L4, AT_QUOTE, AT_END, AT_LEN };

struct edit {
	uint8_t at;	   /* enum edit_at: whose header, or the end, or the length */
	uint8_t off, size; /* a header field: offset, 1 or 2 bytes (network order) */
	bool recsum;	   /* the outer IPv4 checksum made right afterwards */
	uint8_t fill;	   /* AT_END: the bytes added */
	void (*fn)(struct frame *f, int value);
	int value; /* the field's value; bytes added; the length (below 0: shorter by) */
};

/* A builder's argument: its frame carries an 802.1Q tag (VLAN_TCI). */
#define TAGGED 0x10000

struct frame_spec {
	struct l4_spec l4;			 /* when l4.proto is set */
	struct icmp_err_spec icmp;		 /* when icmp.type is set */
	void (*build)(struct frame *f, int arg); /* otherwise, called with arg */
	int arg;
	struct edit edit; /* then */
};

/* The outer IPv4 header at off, and the outer L4 headers. */
struct lb_ipv4_hdr *ip_at(struct frame *f, uint32_t off);
struct lb_tcp_hdr *tcp_of(struct frame *f);
struct lb_udp_hdr *udp_of(struct frame *f);
/* Set the outer total length, keeping the checksum right. */
void ip_set_tot(struct frame *f, uint32_t tot);

/* A frame from its spec: built, its edit applied. */
void build(struct frame *f, const struct frame_spec *s);
void build_l4(struct frame *f, const struct l4_spec *s);
void build_icmp_err(struct frame *f, const struct icmp_err_spec *s);

/* Builders of their own (frame_spec.build), called with the spec's arg. */
void build_echo(struct frame *f, int type);
void build_arp(struct frame *f, int op);
void build_two_tags(struct frame *f, int outer);
void build_vlan_then_qinq(struct frame *f, int arg);
void build_ethertype(struct frame *f, int type);
void build_ihl_one_word_past(struct frame *f, int arg);

/* Edits (struct edit's fn), called with its value. */
void e_tot_plus(struct frame *f, int v);
void e_bad_csum(struct frame *f, int v);
void e_flip_hdr_byte(struct frame *f, int v);
void e_udp_len_past_ip(struct frame *f, int v);
void e_quote_shorten(struct frame *f, int v);
/*
 * A 7-byte route option among the header's NOP options: IP_OPT(type,
 * pointer, NOPs before it); the checksum kept right (IHL 15 leaves room).
 */
void e_ip_option(struct frame *f, int v);
#define IP_OPT(type, ptr, nops) EDIT(e_ip_option, (type) | (ptr) << 8 | (nops) << 16)

/* clang-format off */
/* client:5555 -> VIP:80, TCP SYN or UDP (l4_spec), and the tuple it parses to */
#define TCP(...) .l4 = {.proto = LB_IPPROTO_TCP, __VA_ARGS__}
#define UDP(...) .l4 = {.proto = LB_IPPROTO_UDP, __VA_ARGS__}
#define FWD(proto) {CLIENT, VIP, CPORT, VPORT, LB_IPPROTO_##proto}
#define ECHO_TUPLE {CLIENT, VIP, ECHO_ID, ECHO_ID, LB_IPPROTO_ICMP}
/* ICMP errors (icmp_err_spec) */
#define UNREACH(c, ...) .icmp = {.type = LB_ICMP_UNREACH, .code = (c), __VA_ARGS__}
#define FRAG_NEEDED(...) UNREACH(LB_ICMP_UNREACH_NEEDFRAG, __VA_ARGS__)
#define PORT_UNREACH(...) UNREACH(3, __VA_ARGS__)
#define TIME_EXCEEDED(c, ...) .icmp = {.type = LB_ICMP_TIME_EXCEEDED, .code = (c), __VA_ARGS__}
#define QTCP8 .qproto = LB_IPPROTO_TCP, .qbytes = 8 /* the quote: IPv4 + 8 bytes of TCP */
/* Edits (struct edit): a field of a header set, or a function called */
#define FIELD(at_, type, field, v, fix) {.at = (at_), .off = offsetof(type, field), \
	.size = sizeof(((type *)0)->field), .recsum = (fix), .value = (v)}
#define IP_FIELD(field, v) FIELD(AT_L3, struct lb_ipv4_hdr, field, v, true)
#define IP_FIELD_RAW(field, v) FIELD(AT_L3, struct lb_ipv4_hdr, field, v, false) /* checksum left */
#define ARP_FIELD(field, v) FIELD(AT_L3, struct lb_arp_hdr, field, v, false)
#define TCP_FIELD(field, v) FIELD(AT_L4, struct lb_tcp_hdr, field, v, false)
#define UDP_FIELD(field, v) FIELD(AT_L4, struct lb_udp_hdr, field, v, false)
#define QUOTE_FIELD(field, v) FIELD(AT_QUOTE, struct lb_ipv4_hdr, field, v, false)
#define APPEND(n, fill_) {.at = AT_END, .value = (n), .fill = (fill_)}
#define CUT_TO(n) {.at = AT_LEN, .value = (n)}
#define SHORTEN(n) {.at = AT_LEN, .value = -(n)}
#define EDIT(fn_, v) {.fn = (fn_), .value = (v)}
/* Frames of their own builders */
#define ARP(op) .build = build_arp, .arg = (op)
#define ECHO(type) .build = build_echo, .arg = (type)
/* clang-format on */

#endif
