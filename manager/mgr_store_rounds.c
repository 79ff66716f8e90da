/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store's rounds (mgr_store.h): a round prepared, aborted or committed
 * (the commit record, one transaction), the versions, and history.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "mgr_store_int.h"

/* ---- rounds ---- */

int
mgr_sqlite_last_round(struct mgr_store *s, struct mgr_round_rec *r)
{
	sqlite3_stmt *st;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = mgr_store_row(s, "load last round",
		"SELECT id, version, digest, state FROM rounds ORDER BY id DESC LIMIT 1", &st);
	if (rc == 1) {
		const char *state = (const char *)sqlite3_column_text(st, 3);

		r->mr_id = sqlite3_column_int64(st, 0);
		r->mr_version = (uint64_t)sqlite3_column_int64(st, 1);
		mgr_store_digest(st, 2, r->mr_digest);
		r->mr_state = mgr_round_state_parse(state);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int
mgr_sqlite_round_prepare(struct mgr_store *s, uint64_t version, const uint8_t digest[LB_DIGEST_LEN],
	const char *summary, const struct lb_ftable *next, int64_t *round_id)
{
	sqlite3_stmt *st;

	if (mgr_store_prepare(s, "record round prepared",
		    "INSERT INTO rounds (version, digest, state, summary, started_ms, tbl)"
		    " VALUES (?, ?, 'prepared', ?, ?, ?)",
		    &st) != 0)
		return -LB_EIO;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)version);
	sqlite3_bind_blob(st, 2, digest, LB_DIGEST_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, summary, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 4, mgr_store_now_ms());
	if (mgr_store_bind_table(s, st, 5, next) != 0) {
		sqlite3_finalize(st);
		return -LB_EIO;
	}
	if (mgr_store_run(s, "record round prepared", st) != 0)
		return -LB_EIO;
	*round_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int
mgr_sqlite_round_abort(struct mgr_store *s, int64_t round_id, const char *reason)
{
	sqlite3_stmt *st;

	/* Round 0: every round still marked prepared (after a restart). */
	if (mgr_store_prepare(s, "record round aborted",
		    "UPDATE rounds SET state = 'aborted', reason = ?, ended_ms = ?, tbl = NULL"
		    " WHERE (id = ?3 OR ?3 = 0) AND state = 'prepared'",
		    &st) != 0)
		return -LB_EIO;
	sqlite3_bind_text(st, 1, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, mgr_store_now_ms());
	sqlite3_bind_int64(st, 3, round_id);
	return mgr_store_run(s, "record round aborted", st);
}

/* A statement of n integer parameters (a, then b), run to its end. */
static int
run_ints(struct mgr_store *s, const char *op, const char *sql, int n, sqlite3_int64 a,
	sqlite3_int64 b)
{
	sqlite3_stmt *st;

	if (mgr_store_prepare(s, op, sql, &st) != 0)
		return -LB_EIO;
	sqlite3_bind_int64(st, 1, a);
	if (n > 1)
		sqlite3_bind_int64(st, 2, b);
	return mgr_store_run(s, op, st);
}

int
mgr_sqlite_commit(struct mgr_store *s, int64_t round_id, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], const char *summary, const uint8_t *delta,
	size_t delta_len, const struct lb_ftable *table)
{
	int64_t t = mgr_store_now_ms();
	char v[32], op[64];
	sqlite3_stmt *st;

	snprintf(op, sizeof(op), "commit version %" PRIu64, version);
	if (mgr_store_exec(s, op, "BEGIN IMMEDIATE") != 0)
		return -LB_EIO;
	if (mgr_store_prepare(s, op,
		    "INSERT INTO versions (version, digest, time_ms, summary, delta, tbl)"
		    " VALUES (?, ?, ?, ?, ?, ?)",
		    &st) != 0)
		goto fail;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)version);
	sqlite3_bind_blob(st, 2, digest, LB_DIGEST_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, t);
	sqlite3_bind_text(st, 4, summary, -1, SQLITE_TRANSIENT);
	sqlite3_bind_blob64(st, 5, delta, delta_len, SQLITE_TRANSIENT);
	if (mgr_store_bind_table(s, st, 6, table) != 0) {
		sqlite3_finalize(st);
		goto fail;
	}
	if (mgr_store_run(s, op, st) != 0)
		goto fail;
	if (round_id != 0 &&
		run_ints(s, op,
			"UPDATE rounds SET state = 'committed', ended_ms = ?, tbl = NULL"
			" WHERE id = ?",
			2, t, round_id) != 0)
		goto fail;
	/* Rounds whose end the store could not take (it was failing) ended here. */
	if (run_ints(s, op,
		    "UPDATE rounds SET state = 'aborted', ended_ms = ?, tbl = NULL,"
		    " reason = COALESCE(reason, 'aborted; the database could not record it then')"
		    " WHERE state = 'prepared' AND id != ?",
		    2, t, round_id) != 0)
		goto fail;
	snprintf(v, sizeof(v), "%" PRIu64, version);
	if (mgr_store_meta_put(s, "committed_version", v) != 0)
		goto fail;
	/* Bound the file: old tables go, their version rows and deltas stay. */
	if (version > MGR_STORE_KEEP_TABLES &&
		run_ints(s, op,
			"UPDATE versions SET tbl = NULL WHERE version <= ? AND tbl IS NOT NULL", 1,
			(sqlite3_int64)(version - MGR_STORE_KEEP_TABLES), 0) != 0)
		goto fail;
	if (mgr_store_exec(s, op, "COMMIT") != 0)
		goto fail;
	return 0;
fail:
	mgr_store_rollback(s);
	return -LB_EIO;
}

int
mgr_sqlite_has_version(struct mgr_store *s, uint64_t version)
{
	sqlite3_stmt *st;
	int rc;

	if (mgr_store_prepare(
		    s, "look up version", "SELECT 1 FROM versions WHERE version = ?", &st) != 0)
		return -LB_EIO;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)version);
	rc = mgr_store_step(s, "look up version", st);
	sqlite3_finalize(st);
	return rc;
}

int
mgr_sqlite_history(struct mgr_store *s, uint32_t limit, struct mgr_hist **out)
{
	sqlite3_stmt *st;
	struct mgr_hist *h = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*out = NULL;
	if (mgr_store_prepare(s, "read history",
		    "SELECT version, time_ms, digest, 0, summary, '' FROM versions"
		    " UNION ALL"
		    " SELECT version, COALESCE(ended_ms, started_ms), digest, 1,"
		    " COALESCE(summary, ''), COALESCE(reason, '') FROM rounds"
		    " WHERE state = 'aborted'"
		    " ORDER BY 2 DESC, 1 DESC, 4 ASC LIMIT ?",
		    &st) != 0)
		return -LB_EIO;
	sqlite3_bind_int64(st, 1, limit ? (sqlite3_int64)limit : -1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct mgr_hist *e;

		if (n == cap) {
			struct mgr_hist *nh;

			cap = cap ? 2 * cap : 32;
			nh = realloc(h, cap * sizeof(*h));
			if (nh == NULL) {
				free(h);
				sqlite3_finalize(st);
				return -LB_ENOMEM;
			}
			h = nh;
		}
		e = &h[n++];
		memset(e, 0, sizeof(*e));
		e->mh_version = (uint64_t)sqlite3_column_int64(st, 0);
		e->mh_time_ms = sqlite3_column_int64(st, 1);
		mgr_store_digest(st, 2, e->mh_digest);
		e->mh_aborted = sqlite3_column_int(st, 3) != 0;
		snprintf(e->mh_text, sizeof(e->mh_text), "%s",
			(const char *)sqlite3_column_text(st, 4));
		snprintf(e->mh_reason, sizeof(e->mh_reason), "%s",
			(const char *)sqlite3_column_text(st, 5));
	}
	if (rc != SQLITE_DONE) {
		free(h);
		rc = mgr_store_fail(s, "read history");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	*out = h;
	return (int)n;
}
