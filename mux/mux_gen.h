/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A generation: one immutable, compiled version of the flow table.
 *
 * Built off the fast path from a struct lb_ftable (service hash, backend
 * array, one Maglev table per service), then published to the workers with
 * one atomic pointer store. Workers load the pointer once per loop and never
 * write to it; a replaced generation is freed only after every worker has
 * reported quiescence (rte_rcu_qsbr), so no lookup ever sees freed memory.
 *
 * Backends are numbered by a generation-wide id (today: their position in
 * the flow table). The connection table stores that id, so a lookup hit is
 * one array index away from the DIP and host PA.
 */
#ifndef MUX_GEN_H
#define MUX_GEN_H

#include <stdint.h>

#include <rte_byteorder.h>

#include "lb_config.h"
#include "lb_flow.h"

struct rte_hash;

struct mux_backend {
	rte_be32_t dip;
	rte_be32_t host;
	rte_be16_t port;
	uint16_t weight_zero; /* 1 if weight is 0: keeps connections, gets no new ones */
	uint32_t svc;         /* index of its service */
};

struct mux_service {
	struct lb_svc_key key;
	uint32_t first_backend; /* ids first_backend .. first_backend + n_backends - 1 */
	uint32_t n_backends;
	uint16_t *maglev; /* maglev_size slots of offsets from first_backend */
};

struct mux_gen {
	uint64_t version;
	struct lb_hash_seed seed;
	uint32_t maglev_size;
	/* svc key -> service index; VIP markers (port 0, proto 0) -> MUX_GEN_VIP */
	struct rte_hash *svc_hash;
	uint32_t n_services;
	struct mux_service *services;
	uint32_t n_backends;
	struct mux_backend *backends;
};

#define MUX_GEN_VIP UINT32_MAX

/*
 * Build a generation from a flow table. Returns NULL with rte_errno set
 * (ENOMEM, EINVAL for a Maglev build failure) and a message in err.
 */
struct mux_gen *
mux_gen_build(const struct lb_ftable *ft, uint64_t version, int socket, struct lb_cfg_err *err);

void
mux_gen_free(struct mux_gen *g);

/* Service index of key, MUX_GEN_VIP for a VIP marker, or -1 if unknown. */
int64_t
mux_gen_lookup(const struct mux_gen *g, const struct lb_svc_key *key);

/* True if addr is a VIP of some service. */
int
mux_gen_is_vip(const struct mux_gen *g, rte_be32_t addr);

#endif /* MUX_GEN_H */
