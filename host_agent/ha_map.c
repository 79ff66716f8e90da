/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's mapping, compiled from a flow table (the file's, or the
 * manager's in managed mode): every backend whose host is one of this
 * agent's PAs (pa, or pa6 for an IPv6 host) becomes an ha_lb (VIP:vport
 * <-> DIP:dport, of the service's family), found by the return path from
 * (DIP, dport, proto) and by ICMP quote translation from (VIP, vport,
 * proto, DIP). Keys hold 16-byte addresses and the family, so one table
 * serves both (this is the control side's and the slow paths' lookup,
 * one rte_hash per packet that needs it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "ha_agent.h"
#include "lb_addr.h"
#include "lb_log.h"

struct ha_dkey {
	struct lb_addr dip;
	lb_be16_t port;
	uint8_t proto;
	uint8_t af;
};

struct ha_vkey {
	struct lb_addr vip;
	struct lb_addr dip;
	lb_be16_t vport;
	uint8_t proto;
	uint8_t af;
};

/* An address of family af, 4 or 16 bytes as in a packet, as a zero-padded lb_addr. */
static void
addr_of(struct lb_addr *a, uint8_t af, const void *bytes)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->a8, bytes, af == LB_AF_INET6 ? 16 : 4);
}

/* The backend's host is one of this agent's PAs. */
static int
is_our_host(const struct ha_config *cfg, const struct lb_backend_cfg *bc)
{
	if (bc->host6)
		return cfg->has_pa6 && lb_addr_eq(&bc->host, &cfg->pa6);
	return cfg->pa != 0 && bc->host.a32[0] == cfg->pa;
}

/* A VM of this agent owns the DIP, of family af. */
static int
is_local(const struct ha_config *cfg, uint8_t af, const struct lb_addr *dip)
{
	uint16_t v;

	for (v = 0; v < cfg->n_vms; v++)
		if (af == LB_AF_INET6 ? cfg->vms[v].has_dip6 && lb_addr_eq(&cfg->vms[v].dip6, dip)
				      : cfg->vms[v].dip != 0 && cfg->vms[v].dip == dip->a32[0])
			return 1;
	return 0;
}

static struct rte_hash *
make_hash(const char *name, uint32_t entries, uint32_t key_len)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = entries,
		.key_len = key_len,
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
	};

	return rte_hash_create(&hp);
}

static bool two_ports_said; /* ha_map_compile()'s warning, given once */

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* m->ids: the stable ids of m->lb[], sorted, each once (one backend can serve on two ports). */
static int
index_ids(struct ha_map *m, char *errbuf, size_t len)
{
	uint32_t i, n = 0;

	m->ids = rte_malloc("ha_ids", sizeof(*m->ids) * (m->n_lb + 1), 0);
	if (m->ids == NULL) {
		snprintf(errbuf, len, "out of memory for the mapping tables");
		return -1;
	}
	for (i = 0; i < m->n_lb; i++)
		m->ids[i] = m->lb[i].be_id;
	qsort(m->ids, m->n_lb, sizeof(*m->ids), cmp_u32);
	for (i = 0; i < m->n_lb; i++)
		if (n == 0 || m->ids[i] != m->ids[n - 1])
			m->ids[n++] = m->ids[i];
	m->n_ids = n;
	return 0;
}

int
ha_map_compile(struct ha_map *m, const struct ha_config *cfg, const struct lb_ftable *ft,
	char *errbuf, size_t len)
{
	uint32_t s, b, total = lb_ftable_backend_count(ft), entries;
	char a[LB_ADDR_STRLEN], d[LB_ADDR_STRLEN], name[32];
	static unsigned seq;
	unsigned n;

	memset(m, 0, sizeof(*m));
	entries = total + 64;
	m->lb = rte_zmalloc("ha_lb", sizeof(*m->lb) * (total + 1), 0);
	/* Names are unique per build: a reload builds the next map beside the old. */
	n = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
	snprintf(name, sizeof(name), "ha_dip_%u", n);
	m->by_dip_port = make_hash(name, entries, sizeof(struct ha_dkey));
	snprintf(name, sizeof(name), "ha_vip_%u", n);
	m->by_vip_dip = make_hash(name, entries, sizeof(struct ha_vkey));
	if (m->lb == NULL || m->by_dip_port == NULL || m->by_vip_dip == NULL) {
		snprintf(errbuf, len, "out of memory for the mapping tables");
		return -1;
	}
	for (s = 0; s < ft->n_services; s++) {
		const struct lb_service_cfg *sc = &ft->services[s];

		for (b = 0; b < sc->n_backends; b++) {
			const struct lb_backend_cfg *bc = &sc->backends[b];
			struct ha_lb *lb = &m->lb[m->n_lb];
			struct ha_dkey dk = {0};
			struct ha_vkey vk = {0};

			if (!is_our_host(cfg, bc))
				continue;
			if (!is_local(cfg, sc->af, &bc->dip))
				LB_WARN("backend %s port %u of %s port %u has host = our PA but no "
					"VM "
					"owns it",
					lb_addr_ntop(sc->af, &bc->dip, d, sizeof(d)), bc->port,
					lb_addr_ntop(sc->af, &sc->vip, a, sizeof(a)), sc->port);
			lb->vip = sc->vip;
			lb->vport = lb_cpu_to_be16(sc->port);
			lb->dip = bc->dip;
			lb->dport = lb_cpu_to_be16(bc->port);
			lb->af = sc->af;
			lb->proto = sc->proto;
			lb->be_id = bc->id;
			lb->max_conns = bc->max_conns;
			dk.dip = lb->dip;
			dk.port = lb->dport;
			dk.proto = sc->proto;
			dk.af = sc->af;
			vk.vip = lb->vip;
			vk.dip = lb->dip;
			vk.vport = lb->vport;
			vk.proto = sc->proto;
			vk.af = sc->af;
			if (rte_hash_lookup(m->by_dip_port, &dk) >= 0) {
				/* One DIP:port behind two VIPs: replies can name only one. */
				LB_WARN("%s port %u/%u serves several VIPs; replies use the first",
					lb_addr_ntop(sc->af, &bc->dip, d, sizeof(d)), bc->port,
					sc->proto);
			} else if (rte_hash_add_key_data(
					   m->by_dip_port, &dk, (void *)(uintptr_t)m->n_lb) < 0) {
				snprintf(errbuf, len, "mapping table full");
				return -1;
			}
			/*
			 * One DIP behind one VIP:port on two ports: an ICMP error
			 * quotes VIP:vport, which cannot tell them apart, and the
			 * VM is told the last port (docs/architecture.md). Said
			 * once: a managed agent compiles a map at every change.
			 */
			if (rte_hash_lookup(m->by_vip_dip, &vk) >= 0 &&
				!__atomic_exchange_n(&two_ports_said, true, __ATOMIC_RELAXED))
				LB_WARN("%s serves %s port %u on several ports: ICMP errors about "
					"its flows quote port %u",
					lb_addr_ntop(sc->af, &bc->dip, d, sizeof(d)),
					lb_addr_ntop(sc->af, &sc->vip, a, sizeof(a)), sc->port,
					bc->port);
			if (rte_hash_add_key_data(m->by_vip_dip, &vk, (void *)(uintptr_t)m->n_lb) <
				0) {
				snprintf(errbuf, len, "mapping table full");
				return -1;
			}
			m->n_lb++;
		}
	}
	return index_ids(m, errbuf, len);
}

int
ha_map_build(struct ha_map *m, const struct ha_config *cfg, char *errbuf, size_t len)
{
	return ha_map_compile(m, cfg, &cfg->ftable, errbuf, len);
}

void
ha_map_free(struct ha_map *m)
{
	rte_hash_free(m->by_dip_port);
	rte_hash_free(m->by_vip_dip);
	rte_free(m->lb);
	rte_free(m->ids);
	memset(m, 0, sizeof(*m));
}

bool
ha_map_has_id(const struct ha_map *m, uint32_t id)
{
	return m->n_ids != 0 && bsearch(&id, m->ids, m->n_ids, sizeof(*m->ids), cmp_u32) != NULL;
}

const struct ha_lb *
ha_map_by_dip(const struct ha_map *m, uint8_t af, const void *dip, lb_be16_t dport, uint8_t proto)
{
	struct ha_dkey k = {.port = dport, .proto = proto, .af = af};
	void *d;

	addr_of(&k.dip, af, dip);
	if (rte_hash_lookup_data(m->by_dip_port, &k, &d) < 0)
		return NULL;
	return &m->lb[(uintptr_t)d];
}

const struct ha_lb *
ha_map_by_vip(const struct ha_map *m, uint8_t af, const void *vip, lb_be16_t vport, uint8_t proto,
	const void *dip)
{
	struct ha_vkey k = {.vport = vport, .proto = proto, .af = af};
	void *d;

	addr_of(&k.vip, af, vip);
	addr_of(&k.dip, af, dip);
	if (rte_hash_lookup_data(m->by_vip_dip, &k, &d) < 0)
		return NULL;
	return &m->lb[(uintptr_t)d];
}
