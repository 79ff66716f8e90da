/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-lcore connection tables: canonical flow -> backend id, one table
 * for IPv4 flows and one for IPv6 flows.
 *
 * Each worker owns one of each; nothing else writes them, so they need no
 * locks.
 *
 * Soft state: an entry only pins an established connection to the backend
 * it started on. Losing one (timeout, full table, restart) is never fatal,
 * since Maglev gives the same answer while the pool is unchanged.
 *
 * An IPv4 bucket is one cache line: two entries of {16-byte compact key
 * (struct mux_conn_key), 8-byte record (struct mux_conn)}, plus each
 * entry's 32-bit flow signature. An IPv6 key is 40 bytes (struct
 * lb_flow_key itself), so an IPv6 bucket is two lines: two entries of
 * {40-byte key, 8-byte record}, the signatures, padding. Keeping the
 * families apart keeps the IPv4 table's keys, lines and speed as they were.
 * The code is written once for both (mux_conn_tmpl.h declares,
 * mux_conn_impl.h implements, each included once per family with the
 * key's width in words): mux_conn_*() on struct mux_conn_table, and
 * mux_conn6_*() on struct mux_conn6_table. A flow has two candidate buckets (cuckoo
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
 * the admission rules' concurrent connections and the flood quota. A
 * service is of one family, so its entries are all in one of the two
 * tables.
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

/* IPv6: the key is the canonical struct lb_flow_key, pad[0] = 1 while in use. */
#define MUX_CONN6_KW (sizeof(struct lb_flow_key) / 8)

struct mux_conn6_slot {
	uint64_t key[MUX_CONN6_KW];
	struct mux_conn rec;
};

struct mux_conn6_bucket {
	struct mux_conn6_slot slot[2];
	uint32_t sig[2];
	uint32_t owner[2]; /* service sid | MUX_CONN_LIVE */
} __attribute__((aligned(128)));
static_assert(sizeof(struct mux_conn6_bucket) == 128, "an IPv6 bucket is two cache lines");

/* The table's own state, the same for both families. */
#define MUX_CONN_TABLE_FIELDS                                                                      \
	uint32_t mask;	  /* buckets - 1 */                                                        \
	uint32_t entries; /* 2 per bucket */                                                       \
	uint32_t live;                                                                             \
	uint32_t full_at;	  /* live count when an add last found no path, until a delete */  \
	uint32_t sweep_next;	  /* next position the sweep examines */                           \
	uint64_t moves;		  /* entries moved by displacement, ever */                        \
	uint32_t timeout[3];	  /* established TCP, closing TCP, UDP */                          \
	struct lb_hash_seed seed; /* of the flow hashes given to lookups and adds */               \
	uint32_t cap_services;	  /* owners are below it */                                        \
	uint32_t quota;		  /* entries one service may hold (entries: no bound) */           \
	uint32_t *svc_held;	  /* [cap_services]: entries a service holds */                    \
	uint32_t *svc_live;	  /* [cap_services]: ... of them live connections */

struct mux_conn_table {
	struct mux_conn_bucket *b;
	MUX_CONN_TABLE_FIELDS
};

struct mux_conn6_table {
	struct mux_conn6_bucket *b;
	MUX_CONN_TABLE_FIELDS
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

/* The flow hash of an IPv6 key: lb_flow_hash() itself, the key being an lb_flow_key. */
static inline uint64_t
mux_conn6_hash(const struct lb_hash_seed *seed, const struct lb_flow_key *k)
{
	return lb_flow_hash(seed, k);
}

/* The operations, once per family (mux_conn_tmpl.h). */
#define MUX_CONN_T struct mux_conn_table
#define MUX_CONN_KEY_T struct mux_conn_key
#define MUX_CONN_FN(name) mux_conn_##name
#include "mux_conn_tmpl.h"
#undef MUX_CONN_T
#undef MUX_CONN_KEY_T
#undef MUX_CONN_FN

#define MUX_CONN_T struct mux_conn6_table
#define MUX_CONN_KEY_T struct lb_flow_key
#define MUX_CONN_FN(name) mux_conn6_##name
#include "mux_conn_tmpl.h"
#undef MUX_CONN_T
#undef MUX_CONN_KEY_T
#undef MUX_CONN_FN

#endif /* MUX_CONN_H */
