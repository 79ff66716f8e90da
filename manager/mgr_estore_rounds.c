/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd store's rounds (mgr_estore.h has the key space): a round
 * prepared, aborted or committed (the commit record: one guarded
 * transaction that also bounds the history), the versions, and history.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lb_err.h"
#include "mgr_crash.h"
#include "mgr_estore.h"
#include "mgr_text.h"

static const char *const state_names[] = {
	[MGR_ROUND_PREPARED] = "prepared",
	[MGR_ROUND_COMMITTED] = "committed",
	[MGR_ROUND_ABORTED] = "aborted",
};

/* The number at the end of a key ("P/rounds/000...0042" -> 42). */
static uint64_t
key_number(const json_t *kv)
{
	uint8_t *k = NULL;
	size_t n = 0;
	uint64_t v = 0;
	char *slash;

	if (mgr_etcd_unb64(json_object_get(kv, "key"), &k, &n) == 0 &&
		(slash = strrchr((char *)k, '/')) != NULL)
		v = strtoull(slash + 1, NULL, 10);
	free(k);
	return v;
}

static json_t *
kv_json(const json_t *kv)
{
	uint8_t *v = NULL;
	size_t n = 0;
	json_t *j = NULL;

	if (mgr_etcd_unb64(json_object_get(kv, "value"), &v, &n) == 0)
		j = json_loadb((const char *)v, n, 0, NULL);
	free(v);
	return j;
}

int
mgr_es_last_round(struct mgr_store *s, struct mgr_round_rec *r)
{
	json_t *kvs = NULL, *kv, *j;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = mgr_es_range(s, "/rounds/", NULL, true, 1, &kvs);
	if (rc != 0)
		return rc;
	kv = json_array_get(kvs, 0);
	if (kv != NULL && (j = kv_json(kv)) != NULL) {
		r->mr_id = (int64_t)key_number(kv);
		r->mr_version = mgr_es_u64(j, "version");
		mgr_es_digest_parse(mgr_es_str(j, "digest"), r->mr_digest);
		r->mr_state = mgr_round_state_parse(mgr_es_str(j, "state"));
		json_decref(j);
	}
	s->es->next_round = r->mr_id + 1;
	json_decref(kvs);
	return 0;
}

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *
round_json(uint64_t version, const uint8_t digest[LB_DIGEST_LEN], enum mgr_round_state st,
	const char *summary, const char *reason, int64_t started, int64_t ended)
{
	char hex[MGR_HEX_DIGEST];

	mgr_digest_hex(digest, hex);
	return json_pack("{s:I,s:s,s:s,s:s,s:s,s:I,s:I}", "version", (json_int_t)version, "digest",
		hex, "state", state_names[st], "summary", summary ? summary : "", "reason",
		reason ? reason : "", "started_ms", (json_int_t)started, "ended_ms",
		(json_int_t)ended);
}

int
mgr_es_round_prepare(struct mgr_store *s, uint64_t version, const uint8_t digest[LB_DIGEST_LEN],
	const char *summary, const struct lb_ftable *next, int64_t *round_id)
{
	const char *p = s->es->prefix;
	char rkey[64], tkey[64];
	struct mgr_round_rec last;
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	if (s->es->next_round == 0 && (rc = mgr_es_last_round(s, &last)) != 0)
		return rc;
	rc = mgr_table_encode(next, &buf, &len);
	if (rc != 0)
		return mgr_es_fail(s, "record round prepared", lb_strerror(rc));
	mgr_es_numkey(rkey, sizeof(rkey), "rounds", (uint64_t)s->es->next_round);
	mgr_es_numkey(tkey, sizeof(tkey), "roundtbl", (uint64_t)s->es->next_round);
	rc = mgr_es_txn(s, "record round prepared", json_pack("[o]", mgr_es_absent(p, rkey)),
		json_pack("[o,o]",
			mgr_es_put_json(p, rkey,
				round_json(version, digest, MGR_ROUND_PREPARED, summary, NULL,
					wall_ms(), 0)),
			mgr_es_put(p, tkey, buf, len)));
	free(buf);
	if (rc != 0) {
		s->es->next_round = 0; /* look it up again */
		return rc;
	}
	*round_id = s->es->next_round++;
	return 0;
}

/* Round kv's record rewritten with state st (reason), its table dropped: two ops into ops. */
static void
end_ops(struct mgr_store *s, const json_t *rec, uint64_t id, enum mgr_round_state st,
	const char *reason, json_t *ops)
{
	uint8_t digest[LB_DIGEST_LEN];
	char rkey[64], tkey[64];

	mgr_es_numkey(rkey, sizeof(rkey), "rounds", id);
	mgr_es_numkey(tkey, sizeof(tkey), "roundtbl", id);
	mgr_es_digest_parse(mgr_es_str(rec, "digest"), digest);
	json_array_append_new(
		ops, mgr_es_put_json(s->es->prefix, rkey,
			     round_json(mgr_es_u64(rec, "version"), digest, st,
				     mgr_es_str(rec, "summary"), reason,
				     (int64_t)mgr_es_u64(rec, "started_ms"), wall_ms())));
	json_array_append_new(ops, mgr_es_del(s->es->prefix, tkey));
}

int
mgr_es_round_abort(struct mgr_store *s, int64_t round_id, const char *reason)
{
	json_t *kvs = NULL, *kv, *ops = json_array(), *j;
	char rkey[64];
	size_t i;
	int rc;

	/* Round 0: every round still marked prepared (after a leader's change). */
	if (round_id == 0) {
		rc = mgr_es_range(s, "/rounds/", NULL, true, 16, &kvs);
	} else {
		mgr_es_numkey(rkey, sizeof(rkey), "rounds", (uint64_t)round_id);
		rc = mgr_es_range(s, rkey, NULL, false, 1, &kvs);
	}
	if (rc != 0) {
		json_decref(ops);
		return rc;
	}
	json_array_foreach(kvs, i, kv)
	{
		j = kv_json(kv);
		if (j != NULL &&
			mgr_round_state_parse(mgr_es_str(j, "state")) == MGR_ROUND_PREPARED)
			end_ops(s, j, key_number(kv), MGR_ROUND_ABORTED, reason, ops);
		json_decref(j);
	}
	json_decref(kvs);
	if (json_array_size(ops) == 0) {
		json_decref(ops);
		return 0;
	}
	return mgr_es_txn(s, "record round aborted", NULL, ops);
}

/* After a commit that failed for want of an answer: is the version there, as ours? */
static bool
committed_anyway(struct mgr_store *s, uint64_t version, const uint8_t digest[LB_DIGEST_LEN])
{
	uint8_t d[LB_DIGEST_LEN];
	char key[64], err[sizeof(s->err)];
	json_t *row = NULL;
	bool yes = false;

	snprintf(err, sizeof(err), "%s", s->err);
	mgr_es_numkey(key, sizeof(key), "versions", version);
	if (mgr_es_get_json(s, key, &row) == 0 && row != NULL) {
		mgr_es_digest_parse(mgr_es_str(row, "digest"), d);
		yes = memcmp(d, digest, LB_DIGEST_LEN) == 0;
	}
	json_decref(row);
	snprintf(s->err, sizeof(s->err), "%s", err);
	return yes;
}

int
mgr_es_commit(struct mgr_store *s, int64_t round_id, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], const char *summary, const uint8_t *delta,
	size_t delta_len, const struct lb_ftable *table)
{
	const char *p = s->es->prefix;
	uint64_t keep = s->es->keep_versions;
	char vkey[64], dkey[64], tkey[64], lo[64], hi[64], hex[MGR_HEX_DIGEST], op[64];
	json_t *ops = json_array(), *rec = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	bool unanswered;
	int rc;

	snprintf(op, sizeof(op), "commit version %" PRIu64, version);
	if (round_id != 0) {
		mgr_es_numkey(vkey, sizeof(vkey), "rounds", (uint64_t)round_id);
		if ((rc = mgr_es_get_json(s, vkey, &rec)) != 0) {
			json_decref(ops);
			return rc;
		}
	}
	rc = mgr_table_encode(table, &buf, &len);
	if (rc != 0) {
		json_decref(ops);
		json_decref(rec);
		return mgr_es_fail(s, op, lb_strerror(rc));
	}
	mgr_es_numkey(vkey, sizeof(vkey), "versions", version);
	mgr_es_numkey(dkey, sizeof(dkey), "deltas", version);
	mgr_es_numkey(tkey, sizeof(tkey), "tables", version);
	mgr_digest_hex(digest, hex);
	json_array_append_new(ops, mgr_es_put_json(p, vkey,
					   json_pack("{s:s,s:I,s:s}", "digest", hex, "time_ms",
						   (json_int_t)wall_ms(), "summary", summary)));
	json_array_append_new(ops, mgr_es_put(p, dkey, delta, delta_len));
	json_array_append_new(ops, mgr_es_put(p, tkey, buf, len));
	json_array_append_new(ops, mgr_es_put_json(p, "/committed",
					   json_pack("{s:I,s:I}", "version", (json_int_t)version,
						   "round", (json_int_t)round_id)));
	if (rec != NULL)
		end_ops(s, rec, (uint64_t)round_id, MGR_ROUND_COMMITTED, NULL, ops);
	json_decref(rec);
	/* Bounded: old tables go first, then old versions, then old rounds. */
	if (version > MGR_STORE_KEEP_TABLES) {
		mgr_es_numkey(lo, sizeof(lo), "tables", 0);
		mgr_es_numkey(hi, sizeof(hi), "tables", version - MGR_STORE_KEEP_TABLES + 1);
		json_array_append_new(ops, mgr_es_del_range(p, lo, hi));
	}
	if (version > keep) {
		mgr_es_numkey(lo, sizeof(lo), "versions", 0);
		mgr_es_numkey(hi, sizeof(hi), "versions", version - keep + 1);
		json_array_append_new(ops, mgr_es_del_range(p, lo, hi));
		mgr_es_numkey(lo, sizeof(lo), "deltas", 0);
		mgr_es_numkey(hi, sizeof(hi), "deltas", version - keep + 1);
		json_array_append_new(ops, mgr_es_del_range(p, lo, hi));
	}
	if ((uint64_t)round_id > 2 * keep) {
		mgr_es_numkey(lo, sizeof(lo), "rounds", 0);
		mgr_es_numkey(hi, sizeof(hi), "rounds", (uint64_t)round_id - 2 * keep + 1);
		json_array_append_new(ops, mgr_es_del_range(p, lo, hi));
	}
	rc = mgr_es_txn(s, op, json_pack("[o]", mgr_es_absent(p, vkey)), ops);
	/* A test's: etcd took it, and neither its answer nor a read-back came. */
	unanswered = rc == 0 && mgr_fault_at("unanswered");
	if (unanswered)
		rc = mgr_es_fail(s, op, "etcd did not answer (SLUICE_TEST_CRASH_AT=unanswered)");
	free(buf);
	if (rc == 0 || mgr_store_lost(s) != NULL)
		return rc;
	/* Timed out after etcd took it: the record is there, and it is ours. */
	if (!unanswered && committed_anyway(s, version, digest))
		return 0;
	/*
	 * Taken or not, etcd did not say: a later read could still find it, so
	 * neither COMMIT nor ABORT is safe from here (mgr_store_lost()).
	 */
	snprintf(s->lost, sizeof(s->lost),
		"%.400s; whether etcd recorded it is unknown, so the next leader decides", s->err);
	return rc;
}

int
mgr_es_has_version(struct mgr_store *s, uint64_t version)
{
	char key[64];
	uint8_t *v;
	size_t n;
	bool found;
	int rc;

	mgr_es_numkey(key, sizeof(key), "versions", version);
	rc = mgr_es_get(s, key, &found, &v, &n, NULL);
	free(v);
	return rc != 0 ? rc : found ? 1 : 0;
}

static int
hist_cmp(const void *a, const void *b)
{
	const struct mgr_hist *x = a, *y = b;

	if (x->mh_time_ms != y->mh_time_ms)
		return x->mh_time_ms > y->mh_time_ms ? -1 : 1;
	if (x->mh_version != y->mh_version)
		return x->mh_version > y->mh_version ? -1 : 1;
	return (int)x->mh_aborted - (int)y->mh_aborted;
}

int
mgr_es_history(struct mgr_store *s, uint32_t limit, struct mgr_hist **out)
{
	json_t *vs = NULL, *rs = NULL, *kv, *j;
	struct mgr_hist *h;
	size_t i, n = 0;
	int rc;

	*out = NULL;
	if ((rc = mgr_es_range(s, "/versions/", NULL, true, limit, &vs)) != 0)
		return rc;
	if ((rc = mgr_es_range(s, "/rounds/", NULL, true, limit ? 2 * limit + 16 : 0, &rs)) != 0) {
		json_decref(vs);
		return rc;
	}
	h = calloc(json_array_size(vs) + json_array_size(rs) + 1, sizeof(*h));
	if (h == NULL) {
		json_decref(vs);
		json_decref(rs);
		return -LB_ENOMEM;
	}
	json_array_foreach(vs, i, kv)
	{
		if ((j = kv_json(kv)) == NULL)
			continue;
		h[n].mh_version = key_number(kv);
		h[n].mh_time_ms = (int64_t)mgr_es_u64(j, "time_ms");
		mgr_es_digest_parse(mgr_es_str(j, "digest"), h[n].mh_digest);
		snprintf(h[n].mh_text, sizeof(h[n].mh_text), "%s", mgr_es_str(j, "summary"));
		n++;
		json_decref(j);
	}
	json_array_foreach(rs, i, kv)
	{
		if ((j = kv_json(kv)) == NULL)
			continue;
		if (mgr_round_state_parse(mgr_es_str(j, "state")) == MGR_ROUND_ABORTED) {
			uint64_t t = mgr_es_u64(j, "ended_ms");

			h[n].mh_version = mgr_es_u64(j, "version");
			h[n].mh_time_ms = (int64_t)(t ? t : mgr_es_u64(j, "started_ms"));
			h[n].mh_aborted = true;
			mgr_es_digest_parse(mgr_es_str(j, "digest"), h[n].mh_digest);
			snprintf(
				h[n].mh_text, sizeof(h[n].mh_text), "%s", mgr_es_str(j, "summary"));
			snprintf(h[n].mh_reason, sizeof(h[n].mh_reason), "%s",
				mgr_es_str(j, "reason"));
			n++;
		}
		json_decref(j);
	}
	json_decref(vs);
	json_decref(rs);
	qsort(h, n, sizeof(*h), hist_cmp);
	if (limit != 0 && n > limit)
		n = limit;
	*out = h;
	return (int)n;
}
