/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A flow table to test with, for the tests that encode, store or compare
 * tables (test_codec, test_lkg): n_svc IPv4 TCP services (192.0.2.x, ports
 * from 80), n_be backends each with ids from first_id, weights 1..7 and
 * states of every kind. Freed with lb_ftable_free().
 */
#ifndef SLUICE_TEST_TABLE_H
#define SLUICE_TEST_TABLE_H

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "lb_ftable.h"

static inline void
test_make_table(struct lb_ftable *ft, uint32_t n_svc, uint32_t n_be, uint32_t first_id)
{
	uint32_t s, b, id = first_id;

	memset(ft, 0, sizeof(*ft));
	ft->seed.k0 = 0x0102030405060708ULL;
	ft->seed.k1 = 0x1112131415161718ULL;
	ft->maglev_size = 65537;
	ft->n_services = n_svc;
	ft->services = calloc(n_svc, sizeof(*ft->services));
	for (s = 0; s < n_svc; s++) {
		struct lb_service_cfg *sc = &ft->services[s];

		lb_addr_v4(&sc->vip, htonl(0xc0000200u + s / 100));
		sc->port = (uint16_t)(80 + s % 100);
		sc->proto = LB_IPPROTO_TCP;
		sc->af = LB_AF_INET;
		sc->n_backends = n_be;
		sc->backends = calloc(n_be, sizeof(*sc->backends));
		for (b = 0; b < n_be; b++) {
			lb_addr_v4(&sc->backends[b].dip, htonl(0x0a000000u + id));
			lb_addr_v4(&sc->backends[b].host, htonl(0xac100001u)); /* 172.16.0.1 */
			sc->backends[b].port = 8080;
			sc->backends[b].weight = 1 + b % 7;
			sc->backends[b].state = (uint8_t)(b % 3);
			sc->backends[b].id = id++;
		}
	}
}

#endif /* SLUICE_TEST_TABLE_H */
