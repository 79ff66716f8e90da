/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store's calls (mgr_store.h), each to the implementation the store
 * was opened with (mgr_store_int.h): SQLite or etcd.
 */
#include <string.h>

#include "lb_err.h"
#include "mgr_store_int.h"

void
mgr_store_close(struct mgr_store *s)
{
	if (s != NULL)
		s->ops->close(s);
}

const char *
mgr_store_kind(const struct mgr_store *s)
{
	return s->ops->name;
}

void
mgr_store_set_term(struct mgr_store *s, uint64_t term)
{
	s->term = term;
}

uint64_t
mgr_store_term(const struct mgr_store *s)
{
	return s->term;
}

int
mgr_store_load_meta(struct mgr_store *s, struct mgr_meta *m)
{
	return s->ops->load_meta(s, m);
}

int
mgr_store_save_meta(struct mgr_store *s, const struct mgr_meta *m)
{
	return s->ops->save_meta(s, m);
}

int
mgr_store_load_committed(
	struct mgr_store *s, uint64_t *version, uint8_t digest[LB_DIGEST_LEN], struct lb_ftable *ft)
{
	return s->ops->load_committed(s, version, digest, ft);
}

int
mgr_store_load_desired(struct mgr_store *s, bool *found, struct lb_ftable *ft)
{
	return s->ops->load_desired(s, found, ft);
}

int
mgr_store_save_desired(struct mgr_store *s, const struct lb_ftable *ft,
	const struct mgr_pools *pools, const struct mgr_meta *m)
{
	return s->ops->save_desired(s, ft, pools, m);
}

int
mgr_store_load_pools(struct mgr_store *s, struct mgr_pools *ps)
{
	return s->ops->load_pools(s, ps);
}

int
mgr_store_last_round(struct mgr_store *s, struct mgr_round_rec *r)
{
	return s->ops->last_round(s, r);
}

int
mgr_store_round_prepare(struct mgr_store *s, uint64_t version, const uint8_t digest[LB_DIGEST_LEN],
	const char *summary, const struct lb_ftable *next, int64_t *round_id)
{
	return s->ops->round_prepare(s, version, digest, summary, next, round_id);
}

int
mgr_store_round_abort(struct mgr_store *s, int64_t round_id, const char *reason)
{
	return s->ops->round_abort(s, round_id, reason);
}

int
mgr_store_commit(struct mgr_store *s, int64_t round_id, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], const char *summary, const uint8_t *delta,
	size_t delta_len, const struct lb_ftable *table)
{
	return s->ops->commit(s, round_id, version, digest, summary, delta, delta_len, table);
}

int
mgr_store_history(struct mgr_store *s, uint32_t limit, struct mgr_hist **out)
{
	return s->ops->history(s, limit, out);
}

int
mgr_store_has_version(struct mgr_store *s, uint64_t version)
{
	return s->ops->has_version(s, version);
}

const char *
mgr_store_lost(const struct mgr_store *s)
{
	return s->lost[0] != '\0' ? s->lost : NULL;
}

int
mgr_store_desired_stamp(struct mgr_store *s, uint64_t *stamp)
{
	return s->ops->desired_stamp(s, stamp);
}

enum mgr_round_state
mgr_round_state_parse(const char *s)
{
	return strcmp(s, "prepared") == 0    ? MGR_ROUND_PREPARED
	       : strcmp(s, "committed") == 0 ? MGR_ROUND_COMMITTED
					     : MGR_ROUND_ABORTED;
}
