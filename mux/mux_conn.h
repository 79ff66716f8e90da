/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-lcore connection table: canonical flow key -> backend id.
 *
 * Each worker owns one; nothing else writes it, so it needs no locks (the
 * rte_hash is created without concurrency flags). Keys are looked up with
 * the flow hash's low 32 bits as the precomputed signature, in bulk.
 *
 * Soft state: an entry only pins an established connection to the backend
 * it started on. Losing one (timeout, full table, restart) is never fatal,
 * since Maglev gives the same answer while the pool is unchanged.
 *
 * An entry is the rte_hash key slot (40-byte key and its data word) plus an
 * 8-byte record in a parallel array indexed by the slot position: the
 * backend id and the second at which the entry expires. Expired entries
 * count as misses and are overwritten; a background sweep, run when the
 * worker is idle, deletes them. When the table is full, new flows are
 * forwarded by Maglev alone and counted, not dropped.
 */
#ifndef MUX_CONN_H
#define MUX_CONN_H

#include <stdint.h>

#include "lb_flow.h"

struct rte_hash;

struct mux_conn {
	uint32_t backend; /* backend id in the current generation */
	uint32_t expires; /* seconds since start; 0 marks a free slot */
};

struct mux_conn_table {
	struct rte_hash *h;
	struct mux_conn *ent; /* indexed by rte_hash key position */
	uint32_t entries;
	uint32_t sweep_next; /* next position the sweep examines */
	uint32_t timeout[3]; /* established TCP, closing TCP, UDP */
	struct lb_hash_seed seed; /* to recompute signatures when deleting */
};

enum { MUX_CONN_TCP, MUX_CONN_TCP_FIN, MUX_CONN_UDP };

/* Create a table for entries connections. NULL with rte_errno set on error. */
struct mux_conn_table *
mux_conn_create(const char *name, uint32_t entries, int socket, const uint32_t timeout[3],
	const struct lb_hash_seed *seed);

void
mux_conn_free(struct mux_conn_table *ct);

/*
 * Examine budget positions, resuming where the last sweep stopped, and
 * delete the expired entries found. Returns the number deleted.
 */
uint32_t
mux_conn_sweep(struct mux_conn_table *ct, uint32_t now, uint32_t budget);

/* Live entries (including expired ones not yet swept). */
uint32_t
mux_conn_count(const struct mux_conn_table *ct);

#endif /* MUX_CONN_H */
