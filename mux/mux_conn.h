/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-lcore connection table: canonical IPv4 flow -> backend id.
 *
 * Each worker owns one; nothing else writes it, so it needs no locks (the
 * rte_hash is created without concurrency flags). Keys are looked up with
 * the flow hash's low 32 bits as the precomputed signature, in bulk.
 *
 * Soft state: an entry only pins an established connection to the backend
 * it started on. Losing one (timeout, full table, restart) is never fatal,
 * since Maglev gives the same answer while the pool is unchanged.
 *
 * An entry is one rte_hash key slot and nothing else: the 16-byte compact
 * key (struct mux_conn_key) and, in the slot's 8-byte data word, the record
 * (struct mux_conn: backend id and the second at which the entry expires).
 * A hit therefore touches the bucket and the key slot that the lookup reads
 * anyway, and no third line. The record is read and rewritten in place,
 * through the slot's address computed from the lookup's position
 * (mux_conn_at()). rte_hash does not export its key store, so the layout is
 * learnt and checked when the table is created (see mux_conn.c); creation
 * fails if it is not what this code expects.
 *
 * Expired entries count as misses and are overwritten; a background sweep,
 * run when the worker is idle, deletes them. When the table is full, new
 * flows are forwarded by Maglev alone and counted, not dropped.
 */
#ifndef MUX_CONN_H
#define MUX_CONN_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lb_flow.h"

struct rte_hash;

/*
 * Connection key for IPv4: the canonical tuple of lb_flow_key_v4() without
 * its padding to IPv6 width. 16 bytes, so rte_hash compares it with one
 * vector compare and its key slot is 32 bytes (IPv6 would get a table of
 * its own). Zero-padded.
 */
struct mux_conn_key {
	rte_be32_t lo_addr;
	rte_be32_t hi_addr;
	rte_be16_t lo_port;
	rte_be16_t hi_port;
	uint8_t proto;
	uint8_t pad[3];
};
static_assert(sizeof(struct mux_conn_key) == 16, "connection key is 16 bytes");

/* The record, stored as the key slot's data word. */
struct mux_conn {
	uint32_t backend; /* backend id in the current generation */
	uint32_t expires; /* seconds since start; 0 marks a free slot */
};
static_assert(sizeof(struct mux_conn) == sizeof(void *), "record fills the data word");

struct mux_conn_table {
	struct rte_hash *h;
	uint8_t *slots;	 /* key slot of position p: slots + p * stride */
	uint32_t stride; /* bytes per key slot */
	uint32_t entries;
	uint32_t sweep_next;	  /* next position the sweep examines */
	uint32_t timeout[3];	  /* established TCP, closing TCP, UDP */
	struct lb_hash_seed seed; /* to recompute signatures when deleting */
};

enum { MUX_CONN_TCP, MUX_CONN_TCP_FIN, MUX_CONN_UDP };

/* Top bit of mux_conn.backend: the TCP connection saw a FIN or RST. */
#define MUX_CONN_CLOSING 0x80000000u

/* Canonical key of one direction's tuple, ordered as lb_flow_key_v4() orders it. */
static inline void
mux_conn_key_v4(struct mux_conn_key *k, rte_be32_t src, rte_be16_t sport, rte_be32_t dst,
	rte_be16_t dport, uint8_t proto)
{
	uint64_t s = ((uint64_t)rte_be_to_cpu_32(src) << 16) | rte_be_to_cpu_16(sport);
	uint64_t d = ((uint64_t)rte_be_to_cpu_32(dst) << 16) | rte_be_to_cpu_16(dport);

	if (s <= d) {
		k->lo_addr = src;
		k->lo_port = sport;
		k->hi_addr = dst;
		k->hi_port = dport;
	} else {
		k->lo_addr = dst;
		k->lo_port = dport;
		k->hi_addr = src;
		k->hi_port = sport;
	}
	k->proto = proto;
	k->pad[0] = 0;
	k->pad[1] = 0;
	k->pad[2] = 0;
}

/* The flow hash of the key: the same value as lb_flow_hash() of its lb_flow_key. */
static inline uint64_t
mux_conn_hash(const struct lb_hash_seed *seed, const struct mux_conn_key *k)
{
	return lb_flow_hash_v4(seed, k->lo_addr, k->hi_addr, k->lo_port, k->hi_port, k->proto);
}

/* The record of the key at position pos (as returned by rte_hash lookups and adds). */
static inline struct mux_conn *
mux_conn_at(const struct mux_conn_table *ct, int32_t pos)
{
	return (struct mux_conn *)(ct->slots + (size_t)(uint32_t)pos * ct->stride);
}

static inline uint64_t
mux_conn_pack(uint32_t backend, uint32_t expires)
{
	struct mux_conn c = {backend, expires};
	uint64_t v;

	memcpy(&v, &c, sizeof(v));
	return v;
}

/*
 * Create a table for entries connections (a power of two is taken as one
 * less, which halves rte_hash's free-slot ring). NULL with rte_errno set:
 * ENOMEM, or ENOTSUP if rte_hash's key store is not laid out as expected.
 */
struct mux_conn_table *mux_conn_create(const char *name, uint32_t entries, int socket,
	const uint32_t timeout[3], const struct lb_hash_seed *seed);

void mux_conn_free(struct mux_conn_table *ct);

/* Forget every entry. */
void mux_conn_reset(struct mux_conn_table *ct);

/*
 * Examine budget positions, resuming where the last sweep stopped, and
 * delete the expired entries found. Returns the number deleted.
 */
uint32_t mux_conn_sweep(struct mux_conn_table *ct, uint32_t now, uint32_t budget);

/* Live entries (including expired ones not yet swept). */
uint32_t mux_conn_count(const struct mux_conn_table *ct);

#endif /* MUX_CONN_H */
