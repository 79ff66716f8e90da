/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A generation: one immutable, compiled version of the flow table.
 *
 * Built off the fast path from a struct lb_ftable (service table, backend
 * array, one Maglev table per service), then published to the workers with
 * one atomic pointer store. Workers load the pointer once per loop and never
 * write to it; a replaced generation is freed only after every worker has
 * reported quiescence (rte_rcu_qsbr), so no lookup ever sees freed memory.
 *
 * Inside a generation, a service's backends sit side by side (index
 * first_backend + Maglev slot). Across generations, backends and services
 * keep a stable id (sid): the connection table stores backend sids and the
 * counters are indexed by sid, so a replaced generation neither moves
 * established connections nor scrambles counters. by_sid maps a backend sid
 * to its index in this generation, or MUX_GEN_NONE if it is gone.
 */
#ifndef MUX_GEN_H
#define MUX_GEN_H

#include <stdint.h>

#include <string.h>

#include "lb_addr.h"
#include "lb_config.h"
#include "lb_flow.h"

/*
 * A backend's state (enum lb_backend_state) decides what it gets. ACTIVE:
 * new connections by weight, and its connections. DRAIN: no new connections
 * (weight 0 in Maglev), but the connections pinned to it keep flowing. MAINT
 * (maintenance, or unhealthy): neither; a connection-table hit on it is
 * re-balanced by Maglev as if the backend were gone, and the entry rewritten.
 * The hit check reads state next to svc, in a struct forward() reads anyway.
 *
 * IPv6 addresses do not fit: an IPv6 DIP, and an IPv6 host PA, live in
 * the generation's addr6[] at the backend's index (a line only IPv6 DIPs
 * and IPv6 PAs read), and flags says which of the two a backend has; an
 * IPv4 backend to an IPv4 PA reads this struct alone, as before.
 */
#define MUX_BE_WEIGHT_ZERO 0x01 /* the configured weight is 0 (telemetry) */
#define MUX_BE_HOST6 0x02	/* host is an IPv6 PA: addr6[].host; IPv4 in host otherwise */
#define MUX_BE_CAPPED 0x04	/* max_connections: new connections need a credit (mux_credit.h) */
#define MUX_BE_OUT_ZONE 0x08	/* outside the mux's zone, which its service keeps to */

struct mux_backend {
	lb_be32_t dip;	/* IPv4 services; IPv6 DIPs are addr6[].dip */
	lb_be32_t host; /* an IPv4 PA */
	lb_be16_t port;
	uint8_t flags; /* MUX_BE_* */
	uint8_t state; /* enum lb_backend_state */
	uint32_t svc;  /* index of its service */
	uint32_t sid;  /* stable id */
};

struct mux_backend6 {
	uint8_t dip[16];  /* of a backend of an IPv6 service */
	uint8_t host[16]; /* of a backend with MUX_BE_HOST6 */
};

struct mux_service {
	struct lb_svc_key key;
	uint32_t first_backend; /* ids first_backend .. first_backend + n_backends - 1 */
	uint32_t n_backends;
	uint32_t sid;	  /* stable id */
	uint16_t *maglev; /* maglev_size slots of offsets from first_backend */
	/*
	 * The first choice (lb_choice.h): Maglev over the whole pool, by
	 * configured weight whatever the state, so that a client's first
	 * backend depends on the pool alone. NULL: the five-tuple and
	 * redistribute, where maglev alone decides. Zonal: the mux's zone's.
	 */
	uint16_t *first;
	uint8_t checks;	     /* a new connection is checked: rules of its own or the mux's */
	uint8_t affinity;    /* enum lb_affinity */
	uint8_t on_unusable; /* enum lb_unusable */
	uint8_t zone_open;   /* zonal, and no usable backend in the mux's zone: all zones */
};

/*
 * One slot of the service table: an IPv4 (VIP, port, protocol) packed into
 * 64 bits (mux_gen_svc_key()), and the service index or MUX_GEN_VIP. Key 0
 * marks an empty slot; packed keys always have their top bit set.
 */
struct mux_svc_slot {
	uint64_t key;
	uint32_t svc;
	uint32_t pad;
};

/*
 * The IPv6 service table's slot: (VIP, port, protocol) whole, compared as
 * three words, and the service index or MUX_GEN_VIP. used 0: empty.
 */
struct mux_svc6_key {
	uint8_t vip[16];
	lb_be16_t port;
	uint8_t proto;
	uint8_t used;
	uint32_t pad;
};
static_assert(sizeof(struct mux_svc6_key) == 24, "IPv6 service key is 24 bytes");

struct mux_svc6_slot {
	struct mux_svc6_key key;
	uint32_t svc;
	uint32_t pad;
};

struct mux_gen {
	uint64_t version;
	struct lb_hash_seed seed;
	uint32_t maglev_size;
	/*
	 * (VIP, port, proto) -> service index; VIP markers (port 0, proto 0)
	 * -> MUX_GEN_VIP. Open addressing with linear probing, at most half
	 * full, and never changed after the build (a generation is
	 * immutable), so a lookup needs no rte_hash: a few multiplies and
	 * one 64-bit compare per probe, never more than svc_probes + 1 probes.
	 */
	struct mux_svc_slot *svc_tab;
	uint32_t svc_mask;
	uint32_t svc_probes; /* longest probe sequence of any key in the table */
	uint8_t svc_shift;   /* 64 - log2(table size) */
	uint32_t n_services;
	struct mux_service *services;
	uint32_t n_backends;
	struct mux_backend *backends;
	struct mux_backend6 *addr6; /* [n_backends]: IPv6 DIPs and PAs */
	/* (VIP6, port, proto) -> service index, as svc_tab, for IPv6 services. */
	struct mux_svc6_slot *svc6_tab;
	uint32_t svc6_mask;
	uint32_t svc6_probes;
	uint32_t cap_backends; /* sids are below these capacities */
	uint32_t cap_services;
	uint32_t *by_sid; /* [cap_backends]: backend sid -> index, or MUX_GEN_NONE */
	/* Routing: read by the route thread (mux_route.c), never by a worker. */
	uint8_t *withdrawn; /* [n_services]: MUX_WITHDRAWN_*, or 0; NULL: none withdrawn */
	bool drained;	    /* the table drains this mux (the member's build sets it) */
	/* Admission rules (mux_limit.h): [n_services] by index, and the mux-wide cap. */
	struct lb_svc_limits *limits;
	struct lb_limit_rule mux_rate;
	/*
	 * Capacity credits: [n_backends], a capped backend's slot
	 * (mux_credit_bind()), MUX_CREDIT_NONE for the others and for a
	 * capped one no slot was bound to (it then gets no new connection).
	 * NULL: no backend is capped.
	 */
	uint16_t *credit_slot;
};

/* Why the manager withdrew a service's VIP from this mux (withdrawn[]). */
#define MUX_WITHDRAWN_POOL 1 /* from every mux: the pool below withdraw_below */
#define MUX_WITHDRAWN_ZONE 2 /* from this mux's zone: the zone's backends below it */

#define MUX_GEN_VIP UINT32_MAX
#define MUX_GEN_NONE (UINT32_MAX - 1) /* mux_gen_svc_v4(): no such key */

static inline uint64_t
mux_gen_svc_key(lb_be32_t vip, lb_be16_t port, uint8_t proto)
{
	return (uint64_t)vip | (uint64_t)port << 32 | (uint64_t)proto << 48 | 1ULL << 63;
}

/* First slot to probe for key: the key mixed (structured keys cluster otherwise). */
static inline uint32_t
mux_gen_svc_home(const struct mux_gen *g, uint64_t key)
{
	key ^= key >> 29;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 32;
	return (uint32_t)((key * 0x9e3779b97f4a7c15ULL) >> g->svc_shift);
}

/* Probe from slot i (mux_gen_svc_home()) for key; see mux_gen_svc_v4(). */
static inline uint32_t
mux_gen_svc_find(const struct mux_gen *g, uint64_t key, uint32_t i)
{
	uint32_t n;

	for (n = 0; n <= g->svc_probes; n++) {
		const struct mux_svc_slot *s = &g->svc_tab[i];

		if (s->key == key)
			return s->svc;
		if (s->key == 0)
			break;
		i = (i + 1) & g->svc_mask;
	}
	return MUX_GEN_NONE;
}

/*
 * The fast path's service lookup: service index of (vip, port, proto),
 * MUX_GEN_VIP for a VIP marker, MUX_GEN_NONE if unknown.
 */
static inline uint32_t
mux_gen_svc_v4(const struct mux_gen *g, lb_be32_t vip, lb_be16_t port, uint8_t proto)
{
	uint64_t key = mux_gen_svc_key(vip, port, proto);

	return mux_gen_svc_find(g, key, mux_gen_svc_home(g, key));
}

/* The IPv6 service table's key for (vip, port, proto); port and proto 0: the VIP marker. */
static inline void
mux_gen_svc6_key(struct mux_svc6_key *k, const uint8_t *vip, lb_be16_t port, uint8_t proto)
{
	memcpy(k->vip, vip, 16);
	k->port = port;
	k->proto = proto;
	k->used = 1;
	k->pad = 0;
}

/* Service index of an IPv6 (vip, port, proto), MUX_GEN_VIP, or MUX_GEN_NONE (mux_gen.c). */
uint32_t mux_gen_svc6(const struct mux_gen *g, const uint8_t *vip, lb_be16_t port, uint8_t proto);

/*
 * Build a generation from a flow table, for a mux with tunnel addresses of
 * the families in tunnels (LB_ADDR_V4, LB_ADDR_V6: a PA of a family it has
 * none of cannot be reached, and refuses the table). Returns NULL with
 * rte_errno set (ENOMEM, EINVAL for a Maglev build failure or an
 * unreachable PA) and a message in err. zone: the mux's ("" none), which
 * a service with cross_zone off keeps its new flows in.
 */
struct mux_gen *mux_gen_build(const struct lb_ftable *ft, uint64_t version, uint32_t cap_backends,
	uint32_t cap_services, unsigned tunnels, const char *zone, int socket,
	struct lb_cfg_err *err);

/*
 * Give ft's services and backends the sids they had in old (same service
 * key; same DIP and port within it), and the lowest free sids to new ones,
 * never one old still gives, and skipping backend sids marked in hold and
 * service sids marked in hold_svc (either may be NULL): ids removed too
 * recently, which connection tables may still name.
 * Returns 0, or -LB_EFULL with a message if a capacity would be exceeded.
 */
int mux_gen_assign_sids(const struct mux_gen *old, struct lb_ftable *ft, const uint8_t *hold,
	const uint8_t *hold_svc, struct lb_cfg_err *err);

void mux_gen_free(struct mux_gen *g);

/* Service index of key, MUX_GEN_VIP for a VIP marker, or -1 if unknown. */
int64_t mux_gen_lookup(const struct mux_gen *g, const struct lb_svc_key *key);

/* True if addr is a VIP of some service. */
int mux_gen_is_vip(const struct mux_gen *g, lb_be32_t addr);

/* True if the 16 bytes at addr are an IPv6 VIP of some service. */
int mux_gen_is_vip6(const struct mux_gen *g, const uint8_t *addr);

#endif /* MUX_GEN_H */
