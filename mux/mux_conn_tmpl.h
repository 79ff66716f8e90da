/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection table's interface, written once for both families:
 * mux_conn.h includes it twice, with
 *
 *     MUX_CONN_T       the table (struct mux_conn_table, struct mux_conn6_table)
 *     MUX_CONN_KEY_T   its key (struct mux_conn_key, struct lb_flow_key)
 *     MUX_CONN_FN(x)   the name of operation x (mux_conn_x, mux_conn6_x)
 *
 * so that mux_conn_lookup() and mux_conn6_lookup() are the same code on
 * keys of 2 and 5 words. No include guard: it is meant to be read twice.
 */

/* The record of the entry at position pos (as returned by lookups and adds). */
static inline struct mux_conn *
MUX_CONN_FN(at)(const MUX_CONN_T *ct, int32_t pos)
{
	return &ct->b[(uint32_t)pos >> 1].slot[pos & 1].rec;
}

/* A flow's primary bucket; its other one is this xor MUX_CONN_FN(alt)(). */
static inline uint32_t
MUX_CONN_FN(home)(const MUX_CONN_T *ct, uint64_t fh)
{
	return (uint32_t)fh & ct->mask;
}

static inline uint32_t
MUX_CONN_FN(alt)(const MUX_CONN_T *ct, uint32_t sig)
{
	uint32_t x = (uint32_t)(((uint64_t)sig * 0x9e3779b97f4a7c15ull) >> 32) & ct->mask;

	return x != 0 ? x : 1 & ct->mask;
}

/* Fetch the flow's primary bucket ahead of a bulk lookup. */
static inline void
MUX_CONN_FN(prefetch)(const MUX_CONN_T *ct, uint64_t fh)
{
	rte_prefetch0(&ct->b[MUX_CONN_FN(home)(ct, fh)]);
}

/* The owner word of the entry at position pos. */
static inline uint32_t
MUX_CONN_FN(owner)(const MUX_CONN_T *ct, int32_t pos)
{
	return ct->b[(uint32_t)pos >> 1].owner[pos & 1];
}

/* Give the entry at pos a new owner word, keeping the counts. */
static inline void
MUX_CONN_FN(set_owner)(MUX_CONN_T *ct, int32_t pos, uint32_t owner)
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
 * Look n flows up, fh[i] being the flow hash of keys[i]: pos[i] is the
 * position of its entry, or -1. Expired entries are found too.
 */
void MUX_CONN_FN(lookup_bulk)(const MUX_CONN_T *ct, const MUX_CONN_KEY_T *keys, const uint64_t *fh,
	uint32_t n, int32_t *pos);

/* One flow: its position, or -1. */
int32_t MUX_CONN_FN(lookup)(const MUX_CONN_T *ct, const MUX_CONN_KEY_T *key, uint64_t fh);

/*
 * Add a flow known not to be in the table, with its record and owner word
 * (the owner's sid below cap_services). Returns its position, or -ENOSPC
 * if no entry could be freed for it. May move other entries (ct->moves).
 */
int32_t MUX_CONN_FN(add)(MUX_CONN_T *ct, const MUX_CONN_KEY_T *key, uint64_t fh,
	struct mux_conn rec, uint32_t owner);

/*
 * Create a table of at least entries entries (rounded up to a power of two
 * buckets of 2). Inserts start to fail at about 85% of that. NULL with
 * rte_errno set: ENOMEM; EINVAL if entries is 0 or above 2^31; ENOTSUP if
 * the compact IPv4 key does not hash as lb_flow_hash() (a broken build).
 */
MUX_CONN_T *MUX_CONN_FN(create)(const char *name, uint32_t entries, int socket,
	const uint32_t timeout[3], const struct lb_hash_seed *seed, uint32_t cap_services);

void MUX_CONN_FN(free)(MUX_CONN_T *ct);

/* Forget every entry. */
void MUX_CONN_FN(reset)(MUX_CONN_T *ct);

/*
 * Examine budget positions, resuming where the last sweep stopped, and
 * delete the expired entries found. Returns the number deleted.
 */
uint32_t MUX_CONN_FN(sweep)(MUX_CONN_T *ct, uint32_t now, uint32_t budget);

/* Live entries (including expired ones not yet swept). */
uint32_t MUX_CONN_FN(count)(const MUX_CONN_T *ct);

/* The bytes of its buckets (what its entries take; ct->entries of them). */
uint64_t MUX_CONN_FN(bytes)(const MUX_CONN_T *ct);
