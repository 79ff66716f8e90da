/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the packet harnesses (fuzz_mux_burst.c, fuzz_agent.c) share: their
 * flow tables, filled in field by field, no file (a backend and a service
 * in one call each; make_seeds.py writes its frames for the addresses the
 * harnesses give), and the first check of every frame the daemon sends.
 */
#ifndef FUZZ_PACKET_H
#define FUZZ_PACKET_H

#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "lb_ftable.h"
#include "lb_drop.h"
#include "lb_parse.h"

static inline lb_be32_t
fuzz_ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return lb_cpu_to_be32((uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d);
}

/* Backend id: dip:port (host order) on host, of that weight, active. */
static inline void
fuzz_backend(struct lb_backend_cfg *b, uint32_t id, lb_be32_t dip, uint16_t port, lb_be32_t host,
	uint32_t weight)
{
	lb_addr_v4(&b->dip, dip);
	lb_addr_v4(&b->host, host);
	b->port = port;
	b->weight = weight;
	b->id = id;
}

/* Service id: IPv4 vip:port (host order) of proto, with backends b[0..n). */
static inline void
fuzz_service(struct lb_service_cfg *s, uint32_t id, lb_be32_t vip, uint16_t port, uint8_t proto,
	struct lb_backend_cfg *b, uint32_t n)
{
	lb_addr_v4(&s->vip, vip);
	s->port = port;
	s->proto = proto;
	s->af = LB_AF_INET;
	s->id = id;
	s->n_backends = n;
	s->backends = b;
}

/* 2001:db8:<net>::<host>, 16 bytes as in a packet: the harnesses' IPv6 addresses. */
static inline void
fuzz_ip6(uint8_t *a, uint16_t net, uint16_t host)
{
	static const uint8_t pre[4] = {0x20, 0x01, 0x0d, 0xb8};

	memset(a, 0, 16);
	memcpy(a, pre, 4);
	a[4] = (uint8_t)(net >> 8);
	a[5] = (uint8_t)net;
	a[14] = (uint8_t)(host >> 8);
	a[15] = (uint8_t)host;
}

/* Backend id: [2001:db8:1::dip]:port (host order) of that weight, active; the host is set apart. */
static inline void
fuzz_backend6(struct lb_backend_cfg *b, uint32_t id, uint16_t dip, uint16_t port, uint32_t weight)
{
	memset(b, 0, sizeof(*b));
	fuzz_ip6(b->dip.a8, 1, dip);
	b->port = port;
	b->weight = weight;
	b->id = id;
}

/* The backend's host: the IPv6 PA 2001:db8:ff::<host>. */
static inline void
fuzz_host6(struct lb_backend_cfg *b, uint16_t host)
{
	fuzz_ip6(b->host.a8, 0xff, host);
	b->host6 = 1;
}

/* Service id: [2001:db8::vip]:port (host order) of proto, with backends b[0..n). */
static inline void
fuzz_service6(struct lb_service_cfg *s, uint32_t id, uint16_t vip, uint16_t port, uint8_t proto,
	struct lb_backend_cfg *b, uint32_t n)
{
	memset(s, 0, sizeof(*s));
	fuzz_service(s, id, 0, port, proto, b, n);
	fuzz_ip6(s->vip.a8, 0, vip);
	s->af = LB_AF_INET6;
}

/*
 * A frame the daemon sent, parsed: an ARP reply (-1: nothing more to check)
 * or a frame whose Ethernet and IP headers (IPv4 or IPv6) are sound, whatever
 * lies behind them (lb_parse()'s verdict, in o).
 */
static inline int
fuzz_sent(const uint8_t *p, uint32_t len, struct lb_pkt *o)
{
	int rc = lb_parse(p, len, o);

	if (rc == 0 && o->kind == LB_PKT_ARP) {
		FUZZ_CHECK(o->arp_op == LB_ARP_OP_REPLY);
		return -1;
	}
	FUZZ_CHECK(rc != LB_DROP_TRUNCATED && rc != LB_DROP_IP_VERSION && rc != LB_DROP_IP_IHL &&
		   rc != LB_DROP_IP_LEN && rc != LB_DROP_IP_CSUM && rc != LB_DROP_ETHERTYPE);
	return rc;
}

#endif
