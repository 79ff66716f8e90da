/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow tables for the packet harnesses (fuzz_mux_burst.c, fuzz_agent.c),
 * filled in field by field, no file: a backend and a service in one call
 * each. make_seeds.py writes its frames for the addresses the harnesses
 * give here.
 */
#ifndef FUZZ_TABLE_H
#define FUZZ_TABLE_H

#include <stdint.h>

#include "lb_config.h"

static inline rte_be32_t
fuzz_ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return rte_cpu_to_be_32((uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d);
}

/* Backend id: dip:port (host order) on host, of that weight, active. */
static inline void
fuzz_backend(struct lb_backend_cfg *b, uint32_t id, rte_be32_t dip, uint16_t port, rte_be32_t host,
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
fuzz_service(struct lb_service_cfg *s, uint32_t id, rte_be32_t vip, uint16_t port, uint8_t proto,
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

#endif
