/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's mapping, compiled from a flow table (the file's, or the
 * manager's in managed mode): every backend whose host is this agent's PA
 * becomes an ha_lb (VIP:vport <-> DIP:dport), found by the return path from
 * (DIP, dport, proto) and by ICMP quote translation from (VIP, vport,
 * proto, DIP).
 */
#include <stdio.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "ha_agent.h"
#include "lb_log.h"

struct ha_dkey {
	lb_be32_t dip;
	lb_be16_t port;
	uint8_t proto;
	uint8_t pad;
};

struct ha_vkey {
	lb_be32_t vip;
	lb_be32_t dip;
	lb_be16_t vport;
	uint8_t proto;
	uint8_t pad;
};

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

int
ha_map_compile(struct ha_map *m, const struct ha_config *cfg, const struct lb_ftable *ft,
	char *errbuf, size_t len)
{
	uint32_t s, b, total = lb_ftable_backend_count(ft), entries;
	char a[16], d[16], name[32];
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
			uint16_t v;
			int local = 0;

			if (bc->host.a32[0] != cfg->pa)
				continue;
			for (v = 0; v < cfg->n_vms; v++)
				local |= cfg->vms[v].dip == bc->dip.a32[0];
			if (!local)
				LB_WARN("backend %s:%u of %s:%u has host = our PA but no VM owns "
					"it",
					lb_addr_str(&bc->dip, d, sizeof(d)), bc->port,
					lb_addr_str(&sc->vip, a, sizeof(a)), sc->port);
			lb->vip = sc->vip.a32[0];
			lb->vport = lb_cpu_to_be16(sc->port);
			lb->dip = bc->dip.a32[0];
			lb->dport = lb_cpu_to_be16(bc->port);
			dk.dip = lb->dip;
			dk.port = lb->dport;
			dk.proto = sc->proto;
			vk.vip = lb->vip;
			vk.dip = lb->dip;
			vk.vport = lb->vport;
			vk.proto = sc->proto;
			if (rte_hash_lookup(m->by_dip_port, &dk) >= 0) {
				/* One DIP:port behind two VIPs: replies can name only one. */
				LB_WARN("%s:%u/%u serves several VIPs; replies use the first",
					lb_addr_str(&bc->dip, d, sizeof(d)), bc->port, sc->proto);
			} else if (rte_hash_add_key_data(
					   m->by_dip_port, &dk, (void *)(uintptr_t)m->n_lb) < 0) {
				snprintf(errbuf, len, "mapping table full");
				return -1;
			}
			if (rte_hash_add_key_data(m->by_vip_dip, &vk, (void *)(uintptr_t)m->n_lb) <
				0) {
				snprintf(errbuf, len, "mapping table full");
				return -1;
			}
			m->n_lb++;
		}
	}
	return 0;
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
	memset(m, 0, sizeof(*m));
}

const struct ha_lb *
ha_map_by_dip(const struct ha_map *m, lb_be32_t dip, lb_be16_t dport, uint8_t proto)
{
	struct ha_dkey k = {.dip = dip, .port = dport, .proto = proto};
	void *d;

	if (rte_hash_lookup_data(m->by_dip_port, &k, &d) < 0)
		return NULL;
	return &m->lb[(uintptr_t)d];
}

const struct ha_lb *
ha_map_by_vip(const struct ha_map *m, lb_be32_t vip, lb_be16_t vport, uint8_t proto, lb_be32_t dip)
{
	struct ha_vkey k = {.vip = vip, .dip = dip, .vport = vport, .proto = proto};
	void *d;

	if (rte_hash_lookup_data(m->by_vip_dip, &k, &d) < 0)
		return NULL;
	return &m->lb[(uintptr_t)d];
}
