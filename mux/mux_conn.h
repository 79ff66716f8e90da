/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-lcore connection table: canonical IPv4 flow -> backend id.
 *
 * Each worker owns one; nothing else writes it, so it needs no locks.
 *
 * Soft state: an entry only pins an established connection to the backend
 * it started on. Losing one (timeout, full table, restart) is never fatal,
 * since Maglev gives the same answer while the pool is unchanged.
 *
 * A bucket is one cache line: two entries of {16-byte compact key
 * (struct mux_conn_key), 8-byte record (struct mux_conn)}, plus each
 * entry's 32-bit flow signature. A flow has two candidate buckets (cuckoo
 * hashing): the primary from the flow hash's low bits, the other the
 * primary xor a function of the signature, so an entry can be moved to its
 * other bucket without rehashing its key. A hit is one line, two on the
 * rarer secondary bucket; the record is read and rewritten in place.
 * Inserts take a free entry of either bucket, or make one by moving
 * entries along the shortest path of displacements found (bounded).
 *
 * A position (what lookups and adds return) names an entry's place, and a
 * displacement moves entries: ct->moves counts moves, so a caller holding
 * positions from before an add can tell they may be stale.
 *
 * Expired entries count as misses and are overwritten; a background sweep,
 * run when the worker is idle, deletes them. When the table is full, new
 * flows are forwarded by Maglev alone and counted, not dropped.
 *
 * Each entry also names its owner, the stable id of its service, and
 * whether it counts as a live connection (MUX_CONN_LIVE: not closing).
 * The table keeps per service the entries it holds and the live ones
 * among them, exactly: adds, owner changes (mux_conn_set_owner()) and
 * deletes by the sweep keep both counts (docs/protection.md). They are
 * the admission rules' concurrent connections and the flood quota.
 */
#ifndef MUX_CONN_H
#define MUX_CONN_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lb_flow.h"

#include <rte_prefetch.h>

/*
 * Connection key for IPv4: the canonical tuple of lb_flow_key_v4() without
 * its padding to IPv6 width. 16 bytes, compared as two 64-bit words (IPv6
 * would get a table of its own). Zero-padded; in the table, pad[0] marks
 * an entry in use.
 */
struct mux_conn_key {
	lb_be32_t lo_addr;
	lb_be32_t hi_addr;
	lb_be16_t lo_port;
	lb_be16_t hi_port;
	uint8_t proto;
	uint8_t pad[3];
};
static_assert(sizeof(struct mux_conn_key) == 16, "connection key is 16 bytes");

/* The record, next to its key. */
struct mux_conn {
	uint32_t backend; /* backend id in the current generation */
	uint32_t expires; /* second (since start) at which the entry expires */
};
static_assert(sizeof(struct mux_conn) == 8, "record is 8 bytes");

struct mux_conn_slot {
	uint64_t key[2]; /* struct mux_conn_key, pad[0] = 1 while in use */
	struct mux_conn rec;
};

struct mux_conn_bucket {
	struct mux_conn_slot slot[2];
	uint32_t sig[2];   /* low 32 bits of each entry's flow hash */
	uint32_t owner[2]; /* service sid | MUX_CONN_LIVE */
} __attribute__((aligned(64)));
static_assert(sizeof(struct mux_conn_bucket) == 64, "a bucket is one cache line");

struct mux_conn_table {
	struct mux_conn_bucket *b;
	uint32_t mask;	  /* buckets - 1 */
	uint32_t entries; /* 2 per bucket */
	uint32_t live;
	uint32_t full_at;	  /* live count when an add last found no path, until a delete */
	uint32_t sweep_next;	  /* next position the sweep examines */
	uint64_t moves;		  /* entries moved by displacement, ever */
	uint32_t timeout[3];	  /* established TCP, closing TCP, UDP */
	struct lb_hash_seed seed; /* of the flow hashes given to lookups and adds */
	uint32_t cap_services;	  /* owners are below it */
	uint32_t quota;		  /* entries one service may hold (entries: no bound) */
	uint32_t *svc_held;	  /* [cap_services]: entries a service holds */
	uint32_t *svc_live;	  /* [cap_services]: ... of them live connections */
};

/* An entry's owner word: its service's sid, and this bit while it is a live connection. */
#define MUX_CONN_LIVE 0x80000000u

enum { MUX_CONN_TCP, MUX_CONN_TCP_FIN, MUX_CONN_UDP };

/* Top bit of mux_conn.backend: the TCP connection saw a FIN or RST. */
#define MUX_CONN_CLOSING 0x80000000u

/*
 * Canonical key of one direction's tuple, ordered as lb_flow_key_v4() orders
 * it. Written as two 64-bit words, so that the table's 64-bit loads of it
 * are served from the store buffer (narrower stores could not be).
 */
static inline void
mux_conn_key_v4(struct mux_conn_key *k, lb_be32_t src, lb_be16_t sport, lb_be32_t dst,
	lb_be16_t dport, uint8_t proto)
{
	uint64_t s = ((uint64_t)lb_be32_to_cpu(src) << 16) | lb_be16_to_cpu(sport);
	uint64_t d = ((uint64_t)lb_be32_to_cpu(dst) << 16) | lb_be16_to_cpu(dport);
	lb_be32_t la = src, ha = dst;
	lb_be16_t lp = sport, hp = dport;
	uint64_t w[2];

	if (s > d) {
		la = dst;
		lp = dport;
		ha = src;
		hp = sport;
	}
#if LB_LITTLE_ENDIAN
	w[0] = (uint64_t)la | (uint64_t)ha << 32;
	w[1] = (uint64_t)lp | (uint64_t)hp << 16 | (uint64_t)proto << 32;
#else
	w[0] = (uint64_t)la << 32 | ha;
	w[1] = (uint64_t)lp << 48 | (uint64_t)hp << 32 | (uint64_t)proto << 24;
#endif
	memcpy(k, w, sizeof(w));
}

/* The flow hash of the key: the same value as lb_flow_hash() of its lb_flow_key. */
static inline uint64_t
mux_conn_hash(const struct lb_hash_seed *seed, const struct mux_conn_key *k)
{
	return lb_flow_hash_v4(seed, k->lo_addr, k->hi_addr, k->lo_port, k->hi_port, k->proto);
}

/* The record of the entry at position pos (as returned by lookups and adds). */
static inline struct mux_conn *
mux_conn_at(const struct mux_conn_table *ct, int32_t pos)
{
	return &ct->b[(uint32_t)pos >> 1].slot[pos & 1].rec;
}

/* A flow's primary bucket; its other one is this xor mux_conn_alt(). */
static inline uint32_t
mux_conn_home(const struct mux_conn_table *ct, uint64_t fh)
{
	return (uint32_t)fh & ct->mask;
}

static inline uint32_t
mux_conn_alt(const struct mux_conn_table *ct, uint32_t sig)
{
	uint32_t x = (uint32_t)(((uint64_t)sig * 0x9e3779b97f4a7c15ull) >> 32) & ct->mask;

	return x != 0 ? x : 1 & ct->mask;
}

/* Fetch the flow's primary bucket ahead of mux_conn_lookup_bulk(). */
static inline void
mux_conn_prefetch(const struct mux_conn_table *ct, uint64_t fh)
{
	rte_prefetch0(&ct->b[mux_conn_home(ct, fh)]);
}

/* The owner word of the entry at position pos. */
static inline uint32_t
mux_conn_owner(const struct mux_conn_table *ct, int32_t pos)
{
	return ct->b[(uint32_t)pos >> 1].owner[pos & 1];
}

/* Give the entry at pos a new owner word, keeping the counts. */
static inline void
mux_conn_set_owner(struct mux_conn_table *ct, int32_t pos, uint32_t owner)
{
	uint32_t *o = &ct->b[(uint32_t)pos >> 1].owner[pos & 1];
	uint32_t old = *o;

	if (old == owner)
		return;
	ct->svc_held[old & ~MUX_CONN_LIVE]--;
	ct->svc_live[old & ~MUX_CONN_LIVE] -= old >> 31;
	ct->svc_held[owner & ~MUX_CONN_LIVE]++;
	ct->svc_live[owner & ~MUX_CONN_LIVE] += owner >> 31;
	*o = owner;
}

/*
 * Look n flows up, fh[i] being mux_conn_hash() of keys[i]: pos[i] is the
 * position of its entry, or -1. Expired entries are found too.
 */
void mux_conn_lookup_bulk(const struct mux_conn_table *ct, const struct mux_conn_key *keys,
	const uint64_t *fh, uint32_t n, int32_t *pos);

/* One flow: its position, or -1. */
int32_t mux_conn_lookup(
	const struct mux_conn_table *ct, const struct mux_conn_key *key, uint64_t fh);

/*
 * Add a flow known not to be in the table, with its record and owner word
 * (the owner's sid below cap_services). Returns its position, or -ENOSPC
 * if no entry could be freed for it. May move other entries (ct->moves).
 */
int32_t mux_conn_add(struct mux_conn_table *ct, const struct mux_conn_key *key, uint64_t fh,
	struct mux_conn rec, uint32_t owner);

/*
 * Create a table of at least entries entries (rounded up to a power of two
 * buckets of 2). Inserts start to fail at about 85% of that. NULL with
 * rte_errno set: ENOMEM; EINVAL if entries is 0 or above 2^31; ENOTSUP if
 * the compact key does not hash as lb_flow_hash() (a broken build).
 */
struct mux_conn_table *mux_conn_create(const char *name, uint32_t entries, int socket,
	const uint32_t timeout[3], const struct lb_hash_seed *seed, uint32_t cap_services);

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
