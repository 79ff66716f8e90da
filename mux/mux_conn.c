/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "mux_conn.h"

/* The bit of a stored key's second word that pad[0] = 1 sets. */
static inline uint64_t
used_bit(void)
{
	struct mux_conn_key k;
	uint64_t w[2];

	memset(&k, 0, sizeof(k));
	k.pad[0] = 1;
	memcpy(w, &k, sizeof(k));
	return w[1];
}

/*
 * The key words of a flow as stored: pad[0] = 1 marks the entry in use. Set
 * in the loaded word, not in a copy of the key (a byte store then a wider
 * load of it would stall on store forwarding).
 */
static inline void
conn_words(const struct mux_conn_key *key, uint64_t w[2])
{
	memcpy(w, key, sizeof(*key));
	w[1] |= used_bit();
}

static inline int
slot_used(const struct mux_conn_slot *s)
{
	return (s->key[1] & used_bit()) != 0;
}

/* Bulk lookups beyond this many keys go one by one (a burst is 32). */
#define CONN_BULK_MAX 64

/* Index (0, 1) of the entry holding w in bucket b, or -1. */
static inline int
bucket_find(const struct mux_conn_bucket *b, const uint64_t w[2])
{
	if (((b->slot[0].key[0] ^ w[0]) | (b->slot[0].key[1] ^ w[1])) == 0)
		return 0;
	if (((b->slot[1].key[0] ^ w[0]) | (b->slot[1].key[1] ^ w[1])) == 0)
		return 1;
	return -1;
}

void
mux_conn_lookup_bulk(const struct mux_conn_table *ct, const struct mux_conn_key *keys,
	const uint64_t *fh, uint32_t n, int32_t *pos)
{
	uint8_t pend[CONN_BULK_MAX];
	uint32_t i, second = 0;

	if (unlikely(n > CONN_BULK_MAX)) {
		for (i = 0; i < n; i++)
			pos[i] = mux_conn_lookup(ct, &keys[i], fh[i]);
		return;
	}
	/* Primary buckets (prefetched by the caller); the other one of each miss is fetched. */
	for (i = 0; i < n; i++) {
		uint32_t b = mux_conn_home(ct, fh[i]);
		uint64_t w[2];
		int s;

		conn_words(&keys[i], w);
		s = bucket_find(&ct->b[b], w);
		if (likely(s >= 0)) {
			pos[i] = (int32_t)(b * 2 + (uint32_t)s);
			continue;
		}
		pos[i] = -1;
		rte_prefetch0(&ct->b[b ^ mux_conn_alt(ct, (uint32_t)fh[i])]);
		pend[second++] = (uint8_t)i;
	}
	for (i = 0; i < second; i++) {
		uint32_t k = pend[i];
		uint32_t b = mux_conn_home(ct, fh[k]) ^ mux_conn_alt(ct, (uint32_t)fh[k]);
		uint64_t w[2];
		int s;

		conn_words(&keys[k], w);
		s = bucket_find(&ct->b[b], w);
		if (s >= 0)
			pos[k] = (int32_t)(b * 2 + (uint32_t)s);
	}
}

int32_t
mux_conn_lookup(const struct mux_conn_table *ct, const struct mux_conn_key *key, uint64_t fh)
{
	uint32_t b = mux_conn_home(ct, fh);
	uint64_t w[2];
	int s;

	conn_words(key, w);
	s = bucket_find(&ct->b[b], w);
	if (s >= 0)
		return (int32_t)(b * 2 + (uint32_t)s);
	b ^= mux_conn_alt(ct, (uint32_t)fh);
	s = bucket_find(&ct->b[b], w);
	return s >= 0 ? (int32_t)(b * 2 + (uint32_t)s) : -1;
}

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

int32_t
mux_conn_add(struct mux_conn_table *ct, const struct mux_conn_key *key, uint64_t fh,
	struct mux_conn rec, uint32_t owner)
{
	struct conn_node q[CONN_BFS];
	uint32_t sig = (uint32_t)fh;
	uint32_t b1 = mux_conn_home(ct, fh), b2 = b1 ^ mux_conn_alt(ct, sig);
	int head = 0, tail = 0, cur = -1, s = 0;
	struct mux_conn_bucket *bk;
	uint32_t db;
	int ds;

	q[tail++] = (struct conn_node){b1, -1, 0};
	if (b2 != b1)
		q[tail++] = (struct conn_node){b2, -1, 0};
	/*
	 * No path was found since the last delete: the table is at its limit,
	 * so only the flow's own buckets are tried, keeping a SYN flood into a
	 * full table as cheap as a lookup.
	 */
	if (ct->live >= ct->full_at) {
		for (; head < tail; head++) {
			bk = &ct->b[q[head].b];
			for (s = 0; s < 2; s++)
				if (!slot_used(&bk->slot[s])) {
					db = q[head].b;
					ds = s;
					goto place;
				}
		}
		return -ENOSPC;
	}
	while (head < tail && cur < 0) {
		struct mux_conn_bucket *nb = &ct->b[q[head].b];

		for (s = 0; s < 2; s++)
			if (!slot_used(&nb->slot[s]))
				break;
		if (s < 2) {
			cur = head;
			break;
		}
		for (s = 0; s < 2 && tail < CONN_BFS; s++) {
			uint32_t c = q[head].b ^ mux_conn_alt(ct, nb->sig[s]);

			if (!on_path(q, head, c))
				q[tail++] = (struct conn_node){c, (int16_t)head, (uint8_t)s};
		}
		head++;
	}
	if (cur < 0) {
		ct->full_at = ct->live;
		return -ENOSPC;
	}
	/* Move each entry on the path one step towards the free one, from the end. */
	db = q[cur].b;
	ds = s;
	while (q[cur].parent >= 0) {
		int p = q[cur].parent;
		struct mux_conn_bucket *from = &ct->b[q[p].b], *to = &ct->b[db];

		to->slot[ds] = from->slot[q[cur].slot];
		to->sig[ds] = from->sig[q[cur].slot];
		to->owner[ds] = from->owner[q[cur].slot];
		ct->moves++;
		db = q[p].b;
		ds = q[cur].slot;
		cur = p;
	}
place:
	bk = &ct->b[db];
	conn_words(key, bk->slot[ds].key);
	bk->slot[ds].rec = rec;
	bk->sig[ds] = sig;
	bk->owner[ds] = owner;
	ct->svc_held[owner & ~MUX_CONN_LIVE]++;
	ct->svc_live[owner & ~MUX_CONN_LIVE] += owner >> 31;
	ct->live++;
	return (int32_t)(db * 2 + (uint32_t)ds);
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

struct mux_conn_table *
mux_conn_create(const char *name, uint32_t entries, int socket, const uint32_t timeout[3],
	const struct lb_hash_seed *seed, uint32_t cap_services)
{
	struct mux_conn_table *ct;
	uint32_t buckets;

	if (entries == 0 || entries > (1u << 31)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (conn_check_key(seed) != 0) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	buckets = rte_align32pow2((entries + 1) / 2);
	if (buckets < 2)
		buckets = 2;
	ct = rte_zmalloc_socket(name, sizeof(*ct), RTE_CACHE_LINE_SIZE, socket);
	if (ct == NULL)
		goto fail;
	ct->b = rte_zmalloc_socket(
		name, (size_t)buckets * sizeof(*ct->b), RTE_CACHE_LINE_SIZE, socket);
	ct->svc_held = rte_zmalloc_socket(
		name, sizeof(*ct->svc_held) * (cap_services + 1), RTE_CACHE_LINE_SIZE, socket);
	ct->svc_live = rte_zmalloc_socket(
		name, sizeof(*ct->svc_live) * (cap_services + 1), RTE_CACHE_LINE_SIZE, socket);
	if (ct->b == NULL || ct->svc_held == NULL || ct->svc_live == NULL)
		goto fail;
	ct->cap_services = cap_services;
	ct->quota = buckets * 2;
	ct->mask = buckets - 1;
	ct->entries = buckets * 2;
	ct->full_at = UINT32_MAX;
	ct->seed = *seed;
	ct->timeout[0] = timeout[0];
	ct->timeout[1] = timeout[1];
	ct->timeout[2] = timeout[2];
	return ct;
fail:
	mux_conn_free(ct);
	rte_errno = ENOMEM;
	return NULL;
}

void
mux_conn_free(struct mux_conn_table *ct)
{
	if (ct == NULL)
		return;
	rte_free(ct->b);
	rte_free(ct->svc_held);
	rte_free(ct->svc_live);
	rte_free(ct);
}

void
mux_conn_reset(struct mux_conn_table *ct)
{
	memset(ct->b, 0, (size_t)(ct->mask + 1) * sizeof(*ct->b));
	memset(ct->svc_held, 0, sizeof(*ct->svc_held) * (ct->cap_services + 1));
	memset(ct->svc_live, 0, sizeof(*ct->svc_live) * (ct->cap_services + 1));
	ct->live = 0;
	ct->full_at = UINT32_MAX;
	ct->sweep_next = 0;
}

uint32_t
mux_conn_sweep(struct mux_conn_table *ct, uint32_t now, uint32_t budget)
{
	uint32_t deleted = 0;

	/* Walk positions: the cost is the budget, however empty the table is. */
	while (budget-- > 0) {
		uint32_t pos = ct->sweep_next;
		struct mux_conn_slot *e = &ct->b[pos >> 1].slot[pos & 1];
		uint32_t *o = &ct->b[pos >> 1].owner[pos & 1];

		ct->sweep_next = pos + 1 == ct->entries ? 0 : pos + 1;
		if (!slot_used(e) || (int32_t)(e->rec.expires - now) > 0)
			continue;
		ct->svc_held[*o & ~MUX_CONN_LIVE]--;
		ct->svc_live[*o & ~MUX_CONN_LIVE] -= *o >> 31;
		*o = 0;
		memset(e, 0, sizeof(*e));
		ct->live--;
		ct->full_at = UINT32_MAX;
		deleted++;
	}
	return deleted;
}

uint32_t
mux_conn_count(const struct mux_conn_table *ct)
{
	return ct->live;
}
