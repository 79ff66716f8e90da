/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "lb_err.h"
#include "lb_maglev.h"
#include "mux_gen.h"

static int
build_service(struct mux_gen *g, const struct lb_service_cfg *sc, uint32_t idx, uint32_t first,
	int socket, struct lb_cfg_err *err)
{
	struct mux_service *s = &g->services[idx];
	struct lb_maglev_backend *mb;
	uint32_t i;
	int rc;

	lb_svc_key_v4(&s->key, sc->vip.a32[0], rte_cpu_to_be_16(sc->port), sc->proto);
	s->first_backend = first;
	s->n_backends = sc->n_backends;
	s->maglev = rte_malloc_socket("maglev", sizeof(uint16_t) * g->maglev_size, 0, socket);
	mb = calloc(sc->n_backends ? sc->n_backends : 1, sizeof(*mb));
	if (s->maglev == NULL || mb == NULL) {
		free(mb);
		snprintf(err->msg, sizeof(err->msg), "out of memory for Maglev tables");
		return -LB_ENOMEM;
	}
	for (i = 0; i < sc->n_backends; i++) {
		const struct lb_backend_cfg *bc = &sc->backends[i];
		struct mux_backend *b = &g->backends[first + i];

		b->dip = bc->dip.a32[0];
		b->host = bc->host.a32[0];
		b->port = rte_cpu_to_be_16(bc->port);
		b->weight_zero = bc->weight == 0;
		b->svc = idx;
		mb[i].ident = lb_maglev_ident(&bc->dip, LB_AF_INET, bc->port);
		mb[i].weight = bc->weight;
	}
	rc = lb_maglev_build(s->maglev, g->maglev_size, mb, sc->n_backends);
	free(mb);
	if (rc != 0)
		snprintf(err->msg, sizeof(err->msg), "service %u: Maglev table: %s", idx,
			lb_strerror(rc));
	return rc;
}

struct mux_gen *
mux_gen_build(const struct lb_ftable *ft, uint64_t version, int socket, struct lb_cfg_err *err)
{
	char name[RTE_HASH_NAMESIZE];
	static unsigned seq;
	struct rte_hash_parameters hp = {
		.name = name,
		/* Services plus one VIP marker each, with room to spare. */
		.entries = 2 * ft->n_services + 64,
		.key_len = sizeof(struct lb_svc_key),
		.hash_func = rte_hash_crc,
		.socket_id = socket,
	};
	struct mux_gen *g;
	uint32_t i, first = 0;
	int rc;

	g = rte_zmalloc_socket("mux_gen", sizeof(*g), RTE_CACHE_LINE_SIZE, socket);
	if (g == NULL)
		goto nomem;
	g->version = version;
	g->seed = ft->seed;
	g->maglev_size = ft->maglev_size;
	g->n_services = ft->n_services;
	g->n_backends = lb_ftable_backend_count(ft);
	g->services = rte_zmalloc_socket("mux_svc", sizeof(*g->services) * (g->n_services + 1),
		RTE_CACHE_LINE_SIZE, socket);
	g->backends = rte_zmalloc_socket("mux_be", sizeof(*g->backends) * (g->n_backends + 1),
		RTE_CACHE_LINE_SIZE, socket);
	snprintf(name, sizeof(name), "svc_%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	g->svc_hash = rte_hash_create(&hp);
	if (g->services == NULL || g->backends == NULL || g->svc_hash == NULL)
		goto nomem;

	for (i = 0; i < ft->n_services; i++) {
		struct lb_svc_key vipk;

		rc = build_service(g, &ft->services[i], i, first, socket, err);
		if (rc != 0) {
			rte_errno = rc == -LB_ENOMEM ? ENOMEM : EINVAL;
			mux_gen_free(g);
			return NULL;
		}
		first += ft->services[i].n_backends;
		if (rte_hash_add_key_data(g->svc_hash, &g->services[i].key,
			    (void *)(uintptr_t)i) < 0)
			goto nomem;
		lb_svc_key_v4(&vipk, ft->services[i].vip.a32[0], 0, 0);
		if (rte_hash_add_key_data(g->svc_hash, &vipk, (void *)(uintptr_t)MUX_GEN_VIP) < 0)
			goto nomem;
	}
	return g;
nomem:
	snprintf(err->msg, sizeof(err->msg), "out of memory building flow table version %llu",
		(unsigned long long)version);
	mux_gen_free(g);
	rte_errno = ENOMEM;
	return NULL;
}

void
mux_gen_free(struct mux_gen *g)
{
	uint32_t i;

	if (g == NULL)
		return;
	if (g->services != NULL)
		for (i = 0; i < g->n_services; i++)
			rte_free(g->services[i].maglev);
	rte_hash_free(g->svc_hash);
	rte_free(g->services);
	rte_free(g->backends);
	rte_free(g);
}

int64_t
mux_gen_lookup(const struct mux_gen *g, const struct lb_svc_key *key)
{
	void *data;

	if (rte_hash_lookup_data(g->svc_hash, key, &data) < 0)
		return -1;
	return (int64_t)(uintptr_t)data;
}

int
mux_gen_is_vip(const struct mux_gen *g, rte_be32_t addr)
{
	struct lb_svc_key k;

	lb_svc_key_v4(&k, addr, 0, 0);
	return mux_gen_lookup(g, &k) == MUX_GEN_VIP;
}
