/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow table as plain C, in one place: its types, their lifetime,
 * counts, the canonical order, the digest, validation, deltas between
 * versions and writing a table back as a file. Loading one from a file is
 * lb_config.h's job; this header needs neither libconfig nor DPDK.
 *
 * struct lb_ftable is the content of a flow table: what a standalone mux
 * reads from its file and what the manager pushes. It holds no DPDK
 * objects; each data plane builds its own lookup structures from it.
 *
 * A version N is the table of N-1 with a delta applied: services replaced
 * whole or removed, and the options (seed, Maglev size, the drained muxes)
 * when they change.
 * The manager computes deltas with lb_ftable_diff(); every member rebuilds
 * N with lb_ftable_apply() and proves it holds the manager's table by the
 * digest.
 *
 * Tables are kept in the canonical order: services by (vip, proto, port),
 * backends of a service by (dip, port); lb_service_cmp() and
 * lb_backend_cmp() are that order, and everyone who sorts or searches
 * services or backends uses them. Functions that build tables sort them, so
 * two tables with the same content are byte-for-byte alike.
 */
#ifndef LB_FTABLE_H
#define LB_FTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_choice.h"
#include "lb_flow.h"
#include "lb_limits.h"

#define LB_DIGEST_LEN 16
#define LB_FTABLE_ID_LEN 64 /* a member id with its NUL (as LB_MSG_ID) */
#define LB_FTABLE_MAX_DRAINED 256
#define LB_MAX_CONNS_CAP 10000000 /* a backend's max_connections at most */
#define LB_WZONES 8		  /* zones one service may withdraw its VIP in */

enum lb_backend_state { LB_BACKEND_ACTIVE, LB_BACKEND_DRAIN, LB_BACKEND_MAINT };

/* The states' names in files, the operator API and the CLI, by enum lb_backend_state. */
extern const char *const lb_backend_state_names[3];

/*
 * A service is one family (af): its VIP and every backend's DIP are IPv4, or
 * all IPv6. A backend's host (the PA the mux tunnels to) may be either: the
 * outer header follows it (4in4, 4in6, 6in4, 6in6). host6 says which, since
 * 16 bytes alone do not (lb_addr.h); zero, as in every table written before
 * IPv6, is an IPv4 PA.
 */
struct lb_backend_cfg {
	struct lb_addr dip;  /* the service's family */
	struct lb_addr host; /* PA of the server whose agent owns the DIP */
	uint16_t port;	     /* host order */
	uint8_t state;	     /* enum lb_backend_state */
	uint8_t host6;	     /* 1: host is an IPv6 PA; 0: IPv4 (in a32[0]) */
	uint32_t weight;
	uint32_t id;		/* stable across versions; a static file numbers them in order */
	char zone[LB_ZONE_LEN]; /* "" none; needed by a service with cross_zone off */
	/*
	 * Capacity (docs/architecture.md, "Capacity credits"): at most this
	 * many connections at once, enforced by credits its host agent grants
	 * the muxes. 0: no cap. TCP services only (the agent counts TCP).
	 */
	uint32_t max_conns;
};

struct lb_service_cfg {
	struct lb_addr vip;
	uint16_t port; /* host order */
	uint8_t proto; /* LB_IPPROTO_TCP or LB_IPPROTO_UDP */
	uint8_t af;    /* LB_AF_INET or LB_AF_INET6: the VIP's and every DIP's */
	/*
	 * Routing: every mux withdraws this VIP (its healthy backends fell
	 * below the pool's withdraw_below; the manager sets it on every
	 * service of the VIP alike). 0 in a file's table.
	 */
	uint8_t withdrawn;
	/*
	 * Routing per zone (cross_zone off): the muxes of these zones withdraw
	 * this VIP (its healthy backends in the zone fell below the pool's
	 * withdraw_below; the manager sets the list on every service of the VIP
	 * alike). Sorted, each once; none in a file's table.
	 */
	uint8_t n_wzones;
	char wzones[LB_WZONES][LB_ZONE_LEN];
	uint32_t id; /* stable across versions; a static file numbers them in order */
	uint32_t n_backends;
	struct lb_backend_cfg *backends;
	struct lb_svc_limits limits; /* admission rules (lb_limits.h); zero: none */
	struct lb_svc_choice choice; /* affinity, failure policy, zones (lb_choice.h) */
};

/* A member id in a table (the drained muxes). */
typedef char lb_ftable_id[LB_FTABLE_ID_LEN];

struct lb_ftable {
	struct lb_hash_seed seed;
	uint32_t maglev_size;
	uint32_t n_services;
	struct lb_service_cfg *services;
	/*
	 * The muxes an operator drained (sluicectl mux drain): each withdraws
	 * every route while it stays listed. Sorted, each once; empty in a
	 * file's table. Every member gets the list, as the rest of the table.
	 */
	uint32_t n_drained;
	lb_ftable_id *drained;
	struct lb_limit_rule mux_rate; /* every mux's cap on new connections per second */
};

/* Version N-1 -> N: services replaced whole or removed, options if changed. */
struct lb_ftable_delta {
	uint32_t n_upsert;
	struct lb_service_cfg *upsert;
	uint32_t n_remove;
	struct lb_svc_key *remove;
	bool has_options; /* seed, maglev_size and the drained list replace the base's */
	struct lb_hash_seed seed;
	uint32_t maglev_size;
	uint32_t n_drained;
	lb_ftable_id *drained;
	struct lb_limit_rule mux_rate; /* with the options */
};

/* ---- lifetime and counts ---- */

/* Free what ft holds and leave it empty (a zeroed table is empty). */
void lb_ftable_free(struct lb_ftable *ft);

/* Deep copy. Returns 0 or -LB_ENOMEM (dst left empty). */
int lb_ftable_copy(struct lb_ftable *dst, const struct lb_ftable *src);

/* Total backends over all services. */
uint32_t lb_ftable_backend_count(const struct lb_ftable *ft);

/* ---- the drained muxes ---- */

/* Is mux `id` drained in ft? */
bool lb_ftable_drained(const struct lb_ftable *ft, const char *id);

/* dst's drained muxes become a copy of src's. 0 or -LB_ENOMEM (dst unchanged). */
int lb_ftable_copy_drained(struct lb_ftable *dst, const struct lb_ftable *src);

/*
 * Drain (on) or undrain mux `id` in ft. Returns 1 when the list changed,
 * 0 when it already said so, -LB_EINVAL (an empty or too long id, or
 * LB_FTABLE_MAX_DRAINED muxes drained already) or -LB_ENOMEM.
 */
int lb_ftable_set_drained(struct lb_ftable *ft, const char *id, bool on);

/* ---- the canonical order ---- */

/*
 * Backends by (dip, port): a and b point at struct lb_backend_cfg (qsort()
 * and bsearch() take it as it is). Returns <0, 0 or >0; 0 means the same
 * backend of a service (a service lists each (dip, port) once).
 */
int lb_backend_cmp(const void *a, const void *b);

/*
 * Services by (af, vip, proto, port): a and b point at struct
 * lb_service_cfg. 0 means the same service (a table lists each once).
 * IPv4 services come first; among them the order is what it was before
 * IPv6.
 */
int lb_service_cmp(const void *a, const void *b);

/*
 * Whether a and b are services of one VIP (the same family and address):
 * in canonical order a VIP's services are adjacent.
 */
bool lb_service_same_vip(const struct lb_service_cfg *a, const struct lb_service_cfg *b);

/* Sort services and each service's backends into canonical order. */
void lb_ftable_sort(struct lb_ftable *ft);

/*
 * Digest of a flow table, independent of the order services and backends
 * are listed in: what PREPARE, COMMIT and snapshots carry so that a member
 * can prove it holds exactly the manager's table. Its value is part of the
 * protocol (tests/unit/test_ftable.c pins it). A withdrawn service and the
 * drained muxes add to it only when set, so a table without them keeps
 * the digest it had before they existed.
 */
void lb_ftable_digest(const struct lb_ftable *ft, uint8_t out[LB_DIGEST_LEN]);

/* ---- validation, lookups, versions ---- */

/*
 * Check what a table received from elsewhere must satisfy: ports, protocols,
 * weights, states, families (a service is one family; an IPv4 address has
 * its padding zero; no unspecified or multicast address), no duplicate
 * service or backend, Maglev size prime, backend ids unique. Returns 0, or
 * -LB_EINVAL with the reason in err.
 */
int lb_ftable_validate(const struct lb_ftable *ft, char *err, size_t len);

/* Index of the service with key k, or -1. */
int lb_ftable_find(const struct lb_ftable *ft, const struct lb_svc_key *k);

/* The key of service sc. */
void lb_ftable_key(const struct lb_service_cfg *sc, struct lb_svc_key *k);

/*
 * out = base with d applied (sorted, validated). A removal of a service
 * base lacks, or an upsert that fails validation, is an error: -LB_EINVAL
 * with the reason in err; out is then left empty.
 */
int lb_ftable_apply(const struct lb_ftable *base, const struct lb_ftable_delta *d,
	struct lb_ftable *out, char *err, size_t len);

/*
 * The delta that turns `from` into `to`: every service of `to` that
 * `from` lacks or holds differently, every service of `from` that `to`
 * lacks, and the options when they differ. Returns 0 or -LB_ENOMEM.
 */
int lb_ftable_diff(
	const struct lb_ftable *from, const struct lb_ftable *to, struct lb_ftable_delta *out);

bool lb_ftable_delta_empty(const struct lb_ftable_delta *d);

/* d carries ft's options (seed, Maglev size, drained muxes). 0 or -LB_ENOMEM. */
int lb_ftable_delta_options(struct lb_ftable_delta *d, const struct lb_ftable *ft);

void lb_ftable_delta_free(struct lb_ftable_delta *d);

/*
 * Write ft as a libconfig "flow_table" group that lb_ftable_load() reads
 * back to the same table, ids, withdrawn flags and drained muxes aside (a
 * file does not carry them: the manager keeps a backend's id by its
 * service, DIP and port, and derives or keeps the rest). Returns 0 or
 * -LB_EIO.
 */
int lb_ftable_write(const struct lb_ftable *ft, FILE *f);

#endif /* LB_FTABLE_H */
