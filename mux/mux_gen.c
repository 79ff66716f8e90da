/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_common.h>
#include <rte_malloc.h>

#include "lb_err.h"
#include "lb_maglev.h"
#include "mux_gen.h"

/* A PA of a family this mux has no tunnel address of: the table cannot be served. */
static int
unreachable(const struct lb_service_cfg *sc, const struct lb_backend_cfg *bc, unsigned tunnels,
	struct lb_cfg_err *err)
{
	char d[LB_ADDR_STRLEN], h[LB_ADDR_STRLEN];

	if (tunnels & (bc->host6 ? LB_ADDR_V6 : LB_ADDR_V4))
		return 0;
	snprintf(err->msg, sizeof(err->msg),
		"backend %s port %u: host %s is an %s PA, and this mux has no %s (set it, or "
		"give the host a PA of the other family)",
		lb_addr_ntop(sc->af, &bc->dip, d, sizeof(d)), bc->port,
		lb_addr_ntop(bc->host6 ? LB_AF_INET6 : LB_AF_INET, &bc->host, h, sizeof(h)),
		bc->host6 ? "IPv6" : "IPv4", bc->host6 ? "tunnel_address6" : "tunnel_address");
	return -LB_EINVAL;
}

/*
 * Does backend bc of sc take this mux's new flows at all: its zone, when
 * the service keeps flows in zones and the zone has some to take.
 */
static bool
in_zone(const struct lb_service_cfg *sc, const struct lb_backend_cfg *bc, const char *zone,
	bool open)
{
	return !sc->choice.zonal || open || zone[0] == 0 ||
	       strncmp(bc->zone, zone, LB_ZONE_LEN) == 0;
}

/*
 * A zonal service whose usable backends are all outside this mux's zone
 * opens to every zone here (ALB sends to all zones when none is healthy);
 * the manager's per-zone thresholds decide where the VIP is announced
 * (the services' withdrawn zones: in_wzones()).
 */
static bool
zone_open(const struct lb_service_cfg *sc, const char *zone)
{
	uint32_t i;

	if (!sc->choice.zonal || zone[0] == 0)
		return false;
	for (i = 0; i < sc->n_backends; i++) {
		const struct lb_backend_cfg *bc = &sc->backends[i];

		if (bc->state == LB_BACKEND_ACTIVE && bc->weight > 0 &&
			strncmp(bc->zone, zone, LB_ZONE_LEN) == 0)
			return false;
	}
	return true;
}

/* The first-choice table (struct mux_service.first): the pool in zone, by weight alone. */
static int
build_first(struct mux_gen *g, const struct lb_service_cfg *sc, struct mux_service *s,
	struct lb_maglev_backend *mb, const char *zone, int socket)
{
	uint32_t i;

	if (!lb_choice_first(&sc->choice))
		return 0;
	s->first = rte_malloc_socket("maglev_first", sizeof(uint16_t) * g->maglev_size, 0, socket);
	if (s->first == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < sc->n_backends; i++)
		mb[i].weight = in_zone(sc, &sc->backends[i], zone, s->zone_open)
				       ? sc->backends[i].weight
				       : 0;
	return lb_maglev_build(s->first, g->maglev_size, mb, sc->n_backends);
}

static int
build_service(struct mux_gen *g, const struct lb_service_cfg *sc, uint32_t idx, uint32_t first,
	unsigned tunnels, const char *zone, int socket, struct lb_cfg_err *err)
{
	struct mux_service *s = &g->services[idx];
	struct lb_maglev_backend *mb;
	uint32_t i;
	int rc;

	lb_svc_key_make(&s->key, sc->af, &sc->vip, lb_cpu_to_be16(sc->port), sc->proto);
	s->sid = sc->id;
	s->first_backend = first;
	s->n_backends = sc->n_backends;
	g->limits[idx] = sc->limits;
	s->checks = lb_limits_any(&sc->limits) || g->mux_rate.limit != 0;
	s->affinity = sc->choice.affinity;
	s->on_unusable = sc->choice.on_unusable;
	s->zone_open = zone_open(sc, zone);
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
		struct mux_backend6 *b6 = &g->addr6[first + i];

		if (unreachable(sc, bc, tunnels, err) != 0) {
			free(mb);
			return -LB_EINVAL;
		}
		if (sc->af == LB_AF_INET6)
			memcpy(b6->dip, bc->dip.a8, 16);
		else
			b->dip = bc->dip.a32[0];
		if (bc->host6)
			memcpy(b6->host, bc->host.a8, 16);
		else
			b->host = bc->host.a32[0];
		b->port = lb_cpu_to_be16(bc->port);
		b->flags = (bc->weight == 0 ? MUX_BE_WEIGHT_ZERO : 0) |
			   (bc->host6 ? MUX_BE_HOST6 : 0) | (bc->max_conns ? MUX_BE_CAPPED : 0) |
			   (in_zone(sc, bc, zone, s->zone_open) ? 0 : MUX_BE_OUT_ZONE);
		if (bc->max_conns != 0 && g->credit_slot == NULL) {
			g->credit_slot = rte_malloc_socket("mux_credit_slot",
				sizeof(*g->credit_slot) * g->n_backends, 0, socket);
			if (g->credit_slot == NULL) {
				free(mb);
				snprintf(err->msg, sizeof(err->msg), "out of memory");
				return -LB_ENOMEM;
			}
			memset(g->credit_slot, 0xff, sizeof(*g->credit_slot) * g->n_backends);
		}
		/* An unknown state (only a bug can make one) takes no traffic at all. */
		b->state = bc->state <= LB_BACKEND_MAINT ? bc->state : LB_BACKEND_MAINT;
		b->svc = idx;
		b->sid = bc->id;
		g->by_sid[bc->id] = first + i;
		mb[i].ident = lb_maglev_ident(&bc->dip, sc->af, bc->port);
		/*
		 * Only active backends get new connections. A zero weight takes no
		 * Maglev turn at all, so the others' slots are those they would
		 * have without it: draining moves no other backend's new flows.
		 */
		mb[i].weight = b->state == LB_BACKEND_ACTIVE && in_zone(sc, bc, zone, s->zone_open)
				       ? bc->weight
				       : 0;
	}
	rc = lb_maglev_build(s->maglev, g->maglev_size, mb, sc->n_backends);
	if (rc == 0)
		rc = build_first(g, sc, s, mb, zone, socket);
	free(mb);
	if (rc != 0)
		snprintf(err->msg, sizeof(err->msg), "service %u: Maglev table: %s", idx,
			lb_strerror(rc));
	return rc;
}

/* Add or replace key -> val; the table is sized so that it never fills. */
static void
svc_tab_put(struct mux_gen *g, uint64_t key, uint32_t val)
{
	uint32_t i = mux_gen_svc_home(g, key);
	uint32_t n = 0;

	while (g->svc_tab[i].key != 0 && g->svc_tab[i].key != key) {
		i = (i + 1) & g->svc_mask;
		n++;
	}
	g->svc_tab[i].key = key;
	g->svc_tab[i].svc = val;
	if (n > g->svc_probes)
		g->svc_probes = n;
}

/* Room for keys at no more than half load, at least 16 slots; keys6 in the IPv6 table. */
static int
svc_tab_create(struct mux_gen *g, uint32_t keys, uint32_t keys6, int socket)
{
	uint32_t size = rte_align32pow2(RTE_MAX(2 * keys, 16u));
	uint32_t size6 = rte_align32pow2(RTE_MAX(2 * keys6, 16u));

	g->svc_mask = size - 1;
	g->svc_shift = (uint8_t)(64 - rte_bsf32(size));
	g->svc_tab = rte_zmalloc_socket(
		"mux_svc_tab", sizeof(*g->svc_tab) * size, RTE_CACHE_LINE_SIZE, socket);
	g->svc6_mask = size6 - 1;
	g->svc6_tab = rte_zmalloc_socket(
		"mux_svc6_tab", sizeof(*g->svc6_tab) * size6, RTE_CACHE_LINE_SIZE, socket);
	return g->svc_tab == NULL || g->svc6_tab == NULL ? -1 : 0;
}

/* First slot to probe for an IPv6 key: its words mixed, as mux_gen_svc_home() mixes. */
static uint32_t
svc6_home(const struct mux_gen *g, const struct mux_svc6_key *k)
{
	uint64_t a, b, x;

	memcpy(&a, k->vip, 8);
	memcpy(&b, k->vip + 8, 8);
	x = a * 0x9e3779b97f4a7c15ULL ^ b ^ ((uint64_t)k->port << 8 | k->proto);
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return (uint32_t)x & g->svc6_mask;
}

static void
svc6_tab_put(struct mux_gen *g, const struct mux_svc6_key *k, uint32_t val)
{
	uint32_t i = svc6_home(g, k), n = 0;

	while (g->svc6_tab[i].key.used && memcmp(&g->svc6_tab[i].key, k, sizeof(*k)) != 0) {
		i = (i + 1) & g->svc6_mask;
		n++;
	}
	g->svc6_tab[i].key = *k;
	g->svc6_tab[i].svc = val;
	if (n > g->svc6_probes)
		g->svc6_probes = n;
}

uint32_t
mux_gen_svc6(const struct mux_gen *g, const uint8_t *vip, lb_be16_t port, uint8_t proto)
{
	struct mux_svc6_key k;
	uint32_t i, n;

	mux_gen_svc6_key(&k, vip, port, proto);
	i = svc6_home(g, &k);
	for (n = 0; n <= g->svc6_probes; n++) {
		const struct mux_svc6_slot *s = &g->svc6_tab[i];

		if (memcmp(&s->key, &k, sizeof(k)) == 0)
			return s->svc;
		if (!s->key.used)
			break;
		i = (i + 1) & g->svc6_mask;
	}
	return MUX_GEN_NONE;
}

/* Every sid below its capacity, and no sid used twice. */
static int
check_sids(const struct lb_ftable *ft, uint32_t cap_b, uint32_t cap_s, struct lb_cfg_err *err)
{
	uint8_t *seen_b = calloc(cap_b, 1), *seen_s = calloc(cap_s, 1);
	uint32_t i, j;
	int rc = 0;

	if (seen_b == NULL || seen_s == NULL) {
		rc = -LB_ENOMEM;
		goto out;
	}
	for (i = 0; i < ft->n_services && rc == 0; i++) {
		const struct lb_service_cfg *sc = &ft->services[i];

		if (sc->id >= cap_s || seen_s[sc->id]++)
			rc = -LB_EINVAL;
		for (j = 0; j < sc->n_backends && rc == 0; j++)
			if (sc->backends[j].id >= cap_b || seen_b[sc->backends[j].id]++)
				rc = -LB_EINVAL;
	}
	if (rc != 0)
		snprintf(err->msg, sizeof(err->msg),
			"stable ids out of range or repeated (capacity %u services, %u backends)",
			cap_s, cap_b);
out:
	free(seen_b);
	free(seen_s);
	return rc;
}

int
mux_gen_assign_sids(const struct mux_gen *old, struct lb_ftable *ft, const uint8_t *hold,
	const uint8_t *hold_svc, struct lb_cfg_err *err)
{
	uint8_t *used_b = calloc(old->cap_backends, 1), *used_s = calloc(old->cap_services, 1);
	uint8_t *old_s = calloc(old->cap_services, 1);
	uint32_t i, j, k, next_b = 0, next_s = 0;
	int rc = 0;

	if (used_b == NULL || used_s == NULL || old_s == NULL) {
		rc = -LB_ENOMEM;
		goto out;
	}
	for (i = 0; i < old->n_services; i++)
		old_s[old->services[i].sid] = 1;
	/* Pass 1: what the old generation knows keeps its sid. */
	for (i = 0; i < ft->n_services; i++) {
		struct lb_service_cfg *sc = &ft->services[i];
		struct lb_svc_key key;
		int64_t o;

		sc->id = UINT32_MAX;
		for (j = 0; j < sc->n_backends; j++)
			sc->backends[j].id = UINT32_MAX;
		lb_svc_key_make(&key, sc->af, &sc->vip, lb_cpu_to_be16(sc->port), sc->proto);
		o = mux_gen_lookup(old, &key);
		if (o < 0 || o == MUX_GEN_VIP)
			continue;
		sc->id = old->services[o].sid;
		used_s[sc->id] = 1;
		for (j = 0; j < sc->n_backends; j++) {
			struct lb_backend_cfg *bc = &sc->backends[j];

			for (k = 0; k < old->services[o].n_backends; k++) {
				uint32_t oi = old->services[o].first_backend + k;
				const struct mux_backend *ob = &old->backends[oi];

				if ((sc->af == LB_AF_INET6 ? memcmp(old->addr6[oi].dip, bc->dip.a8,
								     16) == 0
							   : ob->dip == bc->dip.a32[0]) &&
					ob->port == lb_cpu_to_be16(bc->port)) {
					bc->id = ob->sid;
					used_b[bc->id] = 1;
					break;
				}
			}
		}
	}
	/* Pass 2: newcomers take the lowest sids nobody holds. */
	for (i = 0; i < ft->n_services && rc == 0; i++) {
		struct lb_service_cfg *sc = &ft->services[i];

		if (sc->id == UINT32_MAX) {
			/* Never an id the running table still gives a service. */
			while (next_s < old->cap_services &&
				(used_s[next_s] || old_s[next_s] ||
					(hold_svc != NULL && hold_svc[next_s])))
				next_s++;
			if (next_s == old->cap_services) {
				rc = -LB_EFULL;
				break;
			}
			sc->id = next_s;
			used_s[next_s] = 1;
		}
		for (j = 0; j < sc->n_backends; j++) {
			if (sc->backends[j].id != UINT32_MAX)
				continue;
			/* Never an id the running table still gives a backend. */
			while (next_b < old->cap_backends &&
				(used_b[next_b] || old->by_sid[next_b] != MUX_GEN_NONE ||
					(hold != NULL && hold[next_b])))
				next_b++;
			if (next_b == old->cap_backends) {
				rc = -LB_EFULL;
				break;
			}
			sc->backends[j].id = next_b;
			used_b[next_b] = 1;
		}
	}
	if (rc == -LB_EFULL)
		snprintf(err->msg, sizeof(err->msg),
			"more services or backends than this mux was started for (%u, %u): restart "
			"it to grow",
			old->cap_services, old->cap_backends);
out:
	free(used_b);
	free(used_s);
	free(old_s);
	return rc;
}

/* Is this mux's zone (none: "") one the manager withdraws sc's VIP in? */
static bool
in_wzones(const struct lb_service_cfg *sc, const char *zone)
{
	uint32_t z;

	for (z = 0; zone[0] != 0 && z < sc->n_wzones && z < LB_WZONES; z++)
		if (strncmp(sc->wzones[z], zone, LB_ZONE_LEN) == 0)
			return true;
	return false;
}

struct mux_gen *
mux_gen_build(const struct lb_ftable *ft, uint64_t version, uint32_t cap_backends,
	uint32_t cap_services, unsigned tunnels, const char *zone, int socket,
	struct lb_cfg_err *err)
{
	struct mux_gen *g;
	uint32_t i, first = 0, n6 = 0;
	uint8_t w;
	int rc;

	rc = check_sids(ft, cap_backends, cap_services, err);
	if (rc != 0) {
		rte_errno = rc == -LB_ENOMEM ? ENOMEM : EINVAL;
		return NULL;
	}

	g = rte_zmalloc_socket("mux_gen", sizeof(*g), RTE_CACHE_LINE_SIZE, socket);
	if (g == NULL)
		goto nomem;
	g->version = version;
	g->seed = ft->seed;
	g->maglev_size = ft->maglev_size;
	g->mux_rate = ft->mux_rate;
	g->n_services = ft->n_services;
	g->n_backends = lb_ftable_backend_count(ft);
	g->services = rte_zmalloc_socket(
		"mux_svc", sizeof(*g->services) * (g->n_services + 1), RTE_CACHE_LINE_SIZE, socket);
	g->backends = rte_zmalloc_socket(
		"mux_be", sizeof(*g->backends) * (g->n_backends + 1), RTE_CACHE_LINE_SIZE, socket);
	g->limits = rte_zmalloc_socket("mux_limits", sizeof(*g->limits) * (g->n_services + 1),
		RTE_CACHE_LINE_SIZE, socket);
	g->addr6 = rte_zmalloc_socket(
		"mux_be6", sizeof(*g->addr6) * (g->n_backends + 1), RTE_CACHE_LINE_SIZE, socket);
	g->cap_backends = cap_backends;
	g->cap_services = cap_services;
	g->by_sid = rte_malloc_socket(
		"mux_by_sid", sizeof(*g->by_sid) * cap_backends, RTE_CACHE_LINE_SIZE, socket);
	if (g->by_sid != NULL)
		for (i = 0; i < cap_backends; i++)
			g->by_sid[i] = MUX_GEN_NONE;
	for (i = 0; i < ft->n_services; i++)
		n6 += ft->services[i].af == LB_AF_INET6;
	/* Services plus one VIP marker each, in the table of their family. */
	if (g->services == NULL || g->backends == NULL || g->addr6 == NULL || g->by_sid == NULL ||
		g->limits == NULL ||
		svc_tab_create(g, 2 * (ft->n_services - n6), 2 * n6, socket) != 0)
		goto nomem;

	for (i = 0; i < ft->n_services; i++) {
		const struct lb_service_cfg *sc = &ft->services[i];

		rc = build_service(g, &ft->services[i], i, first, tunnels, zone, socket, err);
		if (rc != 0) {
			rte_errno = rc == -LB_ENOMEM ? ENOMEM : EINVAL;
			mux_gen_free(g);
			return NULL;
		}
		first += sc->n_backends;
		/* A later service with the same key replaces an earlier one, as before. */
		if (sc->af == LB_AF_INET6) {
			struct mux_svc6_key k;

			mux_gen_svc6_key(&k, sc->vip.a8, lb_cpu_to_be16(sc->port), sc->proto);
			svc6_tab_put(g, &k, i);
			mux_gen_svc6_key(&k, sc->vip.a8, 0, 0);
			svc6_tab_put(g, &k, MUX_GEN_VIP);
			continue;
		}
		svc_tab_put(
			g, mux_gen_svc_key(sc->vip.a32[0], lb_cpu_to_be16(sc->port), sc->proto), i);
		svc_tab_put(g, mux_gen_svc_key(sc->vip.a32[0], 0, 0), MUX_GEN_VIP);
		w = sc->withdrawn	  ? MUX_WITHDRAWN_POOL
		    : in_wzones(sc, zone) ? MUX_WITHDRAWN_ZONE
					  : 0;
		if (w != 0 && g->withdrawn == NULL) {
			g->withdrawn =
				rte_zmalloc_socket("mux_withdrawn", g->n_services, 0, socket);
			if (g->withdrawn == NULL)
				goto nomem;
		}
		if (w != 0)
			g->withdrawn[i] = w;
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
		for (i = 0; i < g->n_services; i++) {
			rte_free(g->services[i].maglev);
			rte_free(g->services[i].first);
		}
	rte_free(g->svc_tab);
	rte_free(g->svc6_tab);
	rte_free(g->by_sid);
	rte_free(g->withdrawn);
	rte_free(g->credit_slot);
	rte_free(g->limits);
	rte_free(g->services);
	rte_free(g->backends);
	rte_free(g->addr6);
	rte_free(g);
}

int64_t
mux_gen_lookup(const struct mux_gen *g, const struct lb_svc_key *key)
{
	uint32_t sv;

	/* Keys are zero-padded; an IPv4 one has nothing past its four bytes. */
	if (key->pad[0] != 0 || key->pad[1] != 0 || key->pad[2] != 0 || key->pad[3] != 0)
		return -1;
	if (key->af == LB_AF_INET6)
		sv = mux_gen_svc6(g, key->vip.a8, key->port, key->proto);
	else if (key->af == LB_AF_INET && key->vip.a32[1] == 0 && key->vip.a64[1] == 0)
		sv = mux_gen_svc_v4(g, key->vip.a32[0], key->port, key->proto);
	else
		return -1;
	return sv == MUX_GEN_NONE ? -1 : (int64_t)sv;
}

int
mux_gen_is_vip(const struct mux_gen *g, lb_be32_t addr)
{
	return mux_gen_svc_v4(g, addr, 0, 0) == MUX_GEN_VIP;
}

int
mux_gen_is_vip6(const struct mux_gen *g, const uint8_t *addr)
{
	return mux_gen_svc6(g, addr, 0, 0) == MUX_GEN_VIP;
}
