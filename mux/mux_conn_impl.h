/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection table's code, written once for both families (the
 * design is mux_conn.h's): mux_conn.c includes it twice, with
 * mux_conn_tmpl.h's parameters and
 *
 *     MUX_CONN_KW         words of the key (2 for IPv4, 5 for IPv6)
 *     MUX_CONN_SLOT_T     an entry: the key's words and the record
 *     MUX_CONN_BUCKET_T   two entries and their signatures
 *     MUX_CONN_CHECK(s)   0 if the key hashes as it must under seed s
 *     CONN_LOCAL(x)       the name of helper x in this instance
 *
 * The constant key width lets the compiler unroll every key compare and
 * copy: the IPv4 table compiles to the code it was before IPv6.
 * No include guard: it is meant to be read twice.
 */

/* The in-use mark pad[0] = 1 lives in the key's last word: the bit it sets there. */
static_assert(offsetof(MUX_CONN_KEY_T, pad) / 8 == MUX_CONN_KW - 1 &&
		      sizeof(MUX_CONN_KEY_T) == MUX_CONN_KW * 8,
	"the key is MUX_CONN_KW words, its padding in the last");

static inline uint64_t
CONN_LOCAL(used_bit)(void)
{
	MUX_CONN_KEY_T k;
	uint64_t w[MUX_CONN_KW];

	memset(&k, 0, sizeof(k));
	k.pad[0] = 1;
	memcpy(w, &k, sizeof(k));
	return w[MUX_CONN_KW - 1];
}

/*
 * The key words of a flow as stored: pad[0] = 1 marks the entry in use. Set
 * in the loaded word, not in a copy of the key (a byte store then a wider
 * load of it would stall on store forwarding).
 */
static inline void
CONN_LOCAL(words)(const MUX_CONN_KEY_T *key, uint64_t w[MUX_CONN_KW])
{
	memcpy(w, key, sizeof(*key));
	w[MUX_CONN_KW - 1] |= CONN_LOCAL(used_bit)();
}

static inline int
CONN_LOCAL(slot_used)(const MUX_CONN_SLOT_T *s)
{
	return (s->key[MUX_CONN_KW - 1] & CONN_LOCAL(used_bit)()) != 0;
}

/* Is w the key of entry s of b? Every word compared, no early exit. */
static inline int
CONN_LOCAL(slot_is)(const MUX_CONN_BUCKET_T *b, int s, const uint64_t w[MUX_CONN_KW])
{
	uint64_t x = 0;
	unsigned i;

	for (i = 0; i < MUX_CONN_KW; i++)
		x |= b->slot[s].key[i] ^ w[i];
	return x == 0;
}

/* Index (0, 1) of the entry holding w in bucket b, or -1. */
static inline int
CONN_LOCAL(bucket_find)(const MUX_CONN_BUCKET_T *b, const uint64_t w[MUX_CONN_KW])
{
	if (CONN_LOCAL(slot_is)(b, 0, w))
		return 0;
	if (CONN_LOCAL(slot_is)(b, 1, w))
		return 1;
	return -1;
}

void
MUX_CONN_FN(lookup_bulk)(const MUX_CONN_T *ct, const MUX_CONN_KEY_T *keys, const uint64_t *fh,
	uint32_t n, int32_t *pos)
{
	uint8_t pend[CONN_BULK_MAX];
	uint32_t i, second = 0;

	if (unlikely(n > CONN_BULK_MAX)) {
		for (i = 0; i < n; i++)
			pos[i] = MUX_CONN_FN(lookup)(ct, &keys[i], fh[i]);
		return;
	}
	/* Primary buckets (prefetched by the caller); the other one of each miss is fetched. */
	for (i = 0; i < n; i++) {
		uint32_t b = MUX_CONN_FN(home)(ct, fh[i]);
		uint64_t w[MUX_CONN_KW];
		int s;

		CONN_LOCAL(words)(&keys[i], w);
		s = CONN_LOCAL(bucket_find)(&ct->b[b], w);
		if (likely(s >= 0)) {
			pos[i] = (int32_t)(b * 2 + (uint32_t)s);
			continue;
		}
		pos[i] = -1;
		rte_prefetch0(&ct->b[b ^ MUX_CONN_FN(alt)(ct, (uint32_t)fh[i])]);
		pend[second++] = (uint8_t)i;
	}
	for (i = 0; i < second; i++) {
		uint32_t k = pend[i];
		uint32_t b = MUX_CONN_FN(home)(ct, fh[k]) ^ MUX_CONN_FN(alt)(ct, (uint32_t)fh[k]);
		uint64_t w[MUX_CONN_KW];
		int s;

		CONN_LOCAL(words)(&keys[k], w);
		s = CONN_LOCAL(bucket_find)(&ct->b[b], w);
		if (s >= 0)
			pos[k] = (int32_t)(b * 2 + (uint32_t)s);
	}
}

int32_t
MUX_CONN_FN(lookup)(const MUX_CONN_T *ct, const MUX_CONN_KEY_T *key, uint64_t fh)
{
	uint32_t b = MUX_CONN_FN(home)(ct, fh);
	uint64_t w[MUX_CONN_KW];
	int s;

	CONN_LOCAL(words)(key, w);
	s = CONN_LOCAL(bucket_find)(&ct->b[b], w);
	if (s >= 0)
		return (int32_t)(b * 2 + (uint32_t)s);
	b ^= MUX_CONN_FN(alt)(ct, (uint32_t)fh);
	s = CONN_LOCAL(bucket_find)(&ct->b[b], w);
	return s >= 0 ? (int32_t)(b * 2 + (uint32_t)s) : -1;
}

int32_t
MUX_CONN_FN(add)(
	MUX_CONN_T *ct, const MUX_CONN_KEY_T *key, uint64_t fh, struct mux_conn rec, uint32_t owner)
{
	struct conn_node q[CONN_BFS];
	uint32_t sig = (uint32_t)fh;
	uint32_t b1 = MUX_CONN_FN(home)(ct, fh), b2 = b1 ^ MUX_CONN_FN(alt)(ct, sig);
	int head = 0, tail = 0, cur = -1, s = 0;
	MUX_CONN_BUCKET_T *bk;
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
				if (!CONN_LOCAL(slot_used)(&bk->slot[s])) {
					db = q[head].b;
					ds = s;
					goto place;
				}
		}
		return -ENOSPC;
	}
	while (head < tail && cur < 0) {
		MUX_CONN_BUCKET_T *nb = &ct->b[q[head].b];

		for (s = 0; s < 2; s++)
			if (!CONN_LOCAL(slot_used)(&nb->slot[s]))
				break;
		if (s < 2) {
			cur = head;
			break;
		}
		for (s = 0; s < 2 && tail < CONN_BFS; s++) {
			uint32_t c = q[head].b ^ MUX_CONN_FN(alt)(ct, nb->sig[s]);

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
		MUX_CONN_BUCKET_T *from = &ct->b[q[p].b], *to = &ct->b[db];

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
	CONN_LOCAL(words)(key, bk->slot[ds].key);
	bk->slot[ds].rec = rec;
	bk->sig[ds] = sig;
	bk->owner[ds] = owner;
	ct->svc_held[owner & ~MUX_CONN_LIVE]++;
	ct->svc_live[owner & ~MUX_CONN_LIVE] += owner >> 31;
	ct->live++;
	return (int32_t)(db * 2 + (uint32_t)ds);
}

MUX_CONN_T *
MUX_CONN_FN(create)(const char *name, uint32_t entries, int socket, const uint32_t timeout[3],
	const struct lb_hash_seed *seed, uint32_t cap_services)
{
	MUX_CONN_T *ct;
	uint32_t buckets;

	if (entries == 0 || entries > (1u << 31)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (MUX_CONN_CHECK(seed) != 0) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	buckets = rte_align32pow2((entries + 1) / 2);
	if (buckets < 2)
		buckets = 2;
	ct = rte_zmalloc_socket(name, sizeof(*ct), RTE_CACHE_LINE_SIZE, socket);
	if (ct == NULL)
		goto fail;
	/* The bucket's own alignment: an IPv6 bucket must start on 128 bytes
	 * to stay within two cache lines. */
	ct->b = rte_zmalloc_socket(
		name, (size_t)buckets * sizeof(*ct->b), __alignof__(*ct->b), socket);
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
	MUX_CONN_FN(free)(ct);
	rte_errno = ENOMEM;
	return NULL;
}

void
MUX_CONN_FN(free)(MUX_CONN_T *ct)
{
	if (ct == NULL)
		return;
	rte_free(ct->b);
	rte_free(ct->svc_held);
	rte_free(ct->svc_live);
	rte_free(ct);
}

void
MUX_CONN_FN(reset)(MUX_CONN_T *ct)
{
	memset(ct->b, 0, (size_t)(ct->mask + 1) * sizeof(*ct->b));
	memset(ct->svc_held, 0, sizeof(*ct->svc_held) * (ct->cap_services + 1));
	memset(ct->svc_live, 0, sizeof(*ct->svc_live) * (ct->cap_services + 1));
	ct->live = 0;
	ct->full_at = UINT32_MAX;
	ct->sweep_next = 0;
}

uint32_t
MUX_CONN_FN(sweep)(MUX_CONN_T *ct, uint32_t now, uint32_t budget)
{
	uint32_t deleted = 0;

	/* Walk positions: the cost is the budget, however empty the table is. */
	while (budget-- > 0) {
		uint32_t pos = ct->sweep_next;
		MUX_CONN_SLOT_T *e = &ct->b[pos >> 1].slot[pos & 1];
		uint32_t *o = &ct->b[pos >> 1].owner[pos & 1];

		ct->sweep_next = pos + 1 == ct->entries ? 0 : pos + 1;
		if (!CONN_LOCAL(slot_used)(e) || (int32_t)(e->rec.expires - now) > 0)
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
MUX_CONN_FN(count)(const MUX_CONN_T *ct)
{
	return ct->live;
}

uint64_t
MUX_CONN_FN(bytes)(const MUX_CONN_T *ct)
{
	return (uint64_t)(ct->mask + 1) * sizeof(*ct->b);
}
