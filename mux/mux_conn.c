/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "mux_conn.h"

/* Bulk lookups beyond this many keys go one by one (a burst is 32). */
#define CONN_BULK_MAX 64

/* Breadth-first search for a free entry; this many buckets at most (depth about 6). */
#define CONN_BFS 126

struct conn_node {
	uint32_t b;
	int16_t parent; /* index in the queue, -1 for the flow's own buckets */
	uint8_t slot;	/* the entry of the parent's bucket that would move here */
};

/* Is bucket b already on the path to node i? A path visits a bucket once. */
static int
on_path(const struct conn_node *q, int i, uint32_t b)
{
	for (; i >= 0; i = q[i].parent)
		if (q[i].b == b)
			return 1;
	return 0;
}

/*
 * The compact key must hold the canonical tuple field by field (it is built
 * as two words) and hash to lb_flow_hash()'s value, which the rest of the
 * system (Maglev, the agent's tools) knows the flow by. Returns 0 if so.
 */
static int
conn_check_key(const struct lb_hash_seed *seed)
{
	lb_be32_t a = lb_cpu_to_be32(0xc0000201), b = lb_cpu_to_be32(0xc6120001);
	lb_be16_t pa = lb_cpu_to_be16(40000), pb = lb_cpu_to_be16(80);
	struct mux_conn_key k, r;
	struct lb_flow_key fk;

	mux_conn_key_v4(&k, b, pb, a, pa, 6);
	mux_conn_key_v4(&r, a, pa, b, pb, 6);
	lb_flow_key_v4(&fk, a, pa, b, pb, 6);
	if (k.lo_addr != a || k.hi_addr != b || k.lo_port != pa || k.hi_port != pb ||
		k.proto != 6 || k.pad[0] != 0 || k.pad[1] != 0 || k.pad[2] != 0 ||
		memcmp(&k, &r, sizeof(k)) != 0)
		return -1;
	return mux_conn_hash(seed, &k) == lb_flow_hash(seed, &fk) ? 0 : -1;
}

/* IPv6 keys are lb_flow_key itself, hashed by lb_flow_hash(): nothing to check. */
static int
conn6_check_key(const struct lb_hash_seed *seed)
{
	(void)seed;
	return 0;
}

/* The IPv4 table. */
#define MUX_CONN_T struct mux_conn_table
#define MUX_CONN_KEY_T struct mux_conn_key
#define MUX_CONN_FN(name) mux_conn_##name
#define MUX_CONN_KW 2
#define MUX_CONN_SLOT_T struct mux_conn_slot
#define MUX_CONN_BUCKET_T struct mux_conn_bucket
#define MUX_CONN_CHECK(seed) conn_check_key(seed)
#define CONN_LOCAL(name) conn4_##name
#include "mux_conn_impl.h"
#undef MUX_CONN_T
#undef MUX_CONN_KEY_T
#undef MUX_CONN_FN
#undef MUX_CONN_KW
#undef MUX_CONN_SLOT_T
#undef MUX_CONN_BUCKET_T
#undef MUX_CONN_CHECK
#undef CONN_LOCAL

/* The IPv6 table. */
#define MUX_CONN_T struct mux_conn6_table
#define MUX_CONN_KEY_T struct lb_flow_key
#define MUX_CONN_FN(name) mux_conn6_##name
#define MUX_CONN_KW MUX_CONN6_KW
#define MUX_CONN_SLOT_T struct mux_conn6_slot
#define MUX_CONN_BUCKET_T struct mux_conn6_bucket
#define MUX_CONN_CHECK(seed) conn6_check_key(seed)
#define CONN_LOCAL(name) conn6_##name
#include "mux_conn_impl.h"
