/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store's tables (mgr_store.h): a flow table as one encoded snapshot
 * chunk, the committed and desired tables, and the desired table's pool
 * options, saved with the meta in one transaction.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "mgr_msg.h"
#include "mgr_store_int.h"

/* ---- table blobs: the codec's snapshot chunk, one of one ---- */

int
mgr_table_encode(const struct lb_ftable *ft, uint8_t **buf, size_t *len)
{
	struct lb_msg *m = mgr_msg_new(LB_MSG_SNAPSHOT_CHUNK);
	int rc;

	if (m == NULL)
		return -LB_ENOMEM;
	m->index = 0;
	m->count = 1;
	m->table = *ft; /* borrowed: not freed here */
	lb_ftable_digest(ft, m->digest);
	rc = lb_msg_encode(m, buf, len);
	free(m);
	return rc;
}

int
mgr_table_decode(const uint8_t *buf, size_t len, struct lb_ftable *ft, char *err, size_t elen)
{
	struct lb_msg *m = calloc(1, sizeof(*m));
	int rc;

	memset(ft, 0, sizeof(*ft));
	if (m == NULL)
		return -LB_ENOMEM;
	rc = lb_msg_decode(buf, len, m, err, elen);
	if (rc == 0 && (m->type != LB_MSG_SNAPSHOT_CHUNK || m->count != 1)) {
		snprintf(err, elen, "stored table is not a one-chunk snapshot");
		rc = -LB_EPARSE;
	}
	if (rc == 0) {
		*ft = m->table;
		memset(&m->table, 0, sizeof(m->table));
	}
	lb_msg_free(m);
	free(m);
	return rc;
}

int
mgr_store_bind_table(struct mgr_store *s, sqlite3_stmt *st, int col, const struct lb_ftable *ft)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = mgr_table_encode(ft, &buf, &len);

	if (rc != 0) {
		snprintf(s->err, sizeof(s->err), "database: encode table: %s", lb_strerror(rc));
		return rc;
	}
	if (sqlite3_bind_blob64(st, col, buf, len, free) != SQLITE_OK)
		return mgr_store_fail(s, "bind table");
	return 0;
}

static int
column_table(struct mgr_store *s, sqlite3_stmt *st, int col, const char *what, struct lb_ftable *ft)
{
	const void *p = sqlite3_column_blob(st, col);
	int len = sqlite3_column_bytes(st, col);
	char e[256];
	int rc;

	if (p == NULL) {
		snprintf(s->err, sizeof(s->err), "database: %s: no table stored", what);
		return -LB_EIO;
	}
	rc = mgr_table_decode(p, (size_t)len, ft, e, sizeof(e));
	if (rc != 0) {
		snprintf(s->err, sizeof(s->err), "database: %s: stored table unreadable: %s", what,
			e);
		return -LB_EIO;
	}
	return 0;
}

/* ---- tables ---- */

int
mgr_sqlite_load_committed(
	struct mgr_store *s, uint64_t *version, uint8_t digest[LB_DIGEST_LEN], struct lb_ftable *ft)
{
	sqlite3_stmt *st;
	int rc;

	*version = 0;
	memset(digest, 0, LB_DIGEST_LEN);
	memset(ft, 0, sizeof(*ft));
	rc = mgr_store_row(s, "load committed version",
		"SELECT version, digest, tbl FROM versions ORDER BY version DESC LIMIT 1", &st);
	if (rc == 1) {
		char what[64];

		*version = (uint64_t)sqlite3_column_int64(st, 0);
		mgr_store_digest(st, 1, digest);
		snprintf(what, sizeof(what), "load version %" PRIu64, *version);
		rc = column_table(s, st, 2, what, ft);
	}
	sqlite3_finalize(st);
	return rc;
}

int
mgr_sqlite_load_desired(struct mgr_store *s, bool *found, struct lb_ftable *ft)
{
	sqlite3_stmt *st;
	int rc;

	*found = false;
	memset(ft, 0, sizeof(*ft));
	rc = mgr_store_row(s, "load desired table", "SELECT tbl FROM desired WHERE id = 1", &st);
	if (rc == 1) {
		rc = column_table(s, st, 0, "load desired table", ft);
		*found = rc == 0;
	}
	sqlite3_finalize(st);
	return rc;
}

static int
pools_write(struct mgr_store *s, const struct mgr_pools *ps)
{
	const char *op = "store pool options";
	sqlite3_stmt *st;
	uint32_t i;

	if (mgr_store_exec(s, op, "DELETE FROM pools") != 0)
		return -LB_EIO;
	for (i = 0; i < ps->ps_n; i++) {
		const struct mgr_pool_entry *e = &ps->ps_v[i];
		const struct mgr_pool *p = &e->pe_pool;
		char vip[LB_ADDR_STRLEN];
		int col;

		if (mgr_store_prepare(s, op,
			    "INSERT INTO pools VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
			    "?, ?, ?)",
			    &st) != 0)
			return -LB_EIO;
		lb_addr_ntop(e->pe_key.af, &e->pe_key.vip, vip, sizeof(vip));
		sqlite3_bind_text(st, 1, vip, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 2, e->pe_key.proto);
		sqlite3_bind_int(st, 3, ntohs(e->pe_key.port));
		sqlite3_bind_text(st, 4, mgr_probe_name(p->pl_probe), -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 5, p->pl_probe_port);
		sqlite3_bind_text(st, 6, p->pl_path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 7, p->pl_codes, -1, SQLITE_TRANSIENT);
		col = 8; /* the numbers, in the order of LB_POOL_NUMBERS and the schema */
#define X(c, bit, pb, name) sqlite3_bind_int64(st, col++, p->pl_##c);
		LB_POOL_NUMBERS(X)
#undef X
		if (mgr_store_run(s, op, st) != 0)
			return -LB_EIO;
	}
	return 0;
}

int
mgr_sqlite_load_pools(struct mgr_store *s, struct mgr_pools *ps)
{
	const char *op = "load pool options";
	sqlite3_stmt *st;
	int rc, col;

	memset(ps, 0, sizeof(*ps));
	if (mgr_store_prepare(s, op,
		    "SELECT vip, protocol, port, probe, probe_port, path, codes, interval_s,"
		    " timeout_s, healthy, unhealthy, drain_delay_s, slow_start_s, min_healthy,"
		    " min_healthy_percent, withdraw_below, withdraw_below_percent FROM pools",
		    &st) != 0)
		return -LB_EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct lb_pool_opts o = {.given = LB_POOL_ALL};
		struct mgr_pool p = *mgr_pool_defaults();
		const char *probe = (const char *)sqlite3_column_text(st, 3);
		struct lb_addr a;
		struct lb_svc_key k;
		char e[256];
		uint8_t af;

		/* The VIP as text of either family, canonical (lb_addr_ntop()). */
		if (lb_addr_parse((const char *)sqlite3_column_text(st, 0), LB_ADDR_ANY, &a, &af, e,
			    sizeof(e)) != 0) {
			snprintf(s->err, sizeof(s->err), "database: %s: bad vip \"%s\"", op,
				(const char *)sqlite3_column_text(st, 0));
			sqlite3_finalize(st);
			mgr_pools_free(ps);
			return -LB_EIO;
		}
		lb_svc_key_make(&k, af, &a, htons((uint16_t)sqlite3_column_int(st, 2)),
			(uint8_t)sqlite3_column_int(st, 1));
		o.probe = strcmp(probe, "none") == 0   ? LB_PROBE_NONE
			  : strcmp(probe, "http") == 0 ? LB_PROBE_HTTP
						       : LB_PROBE_TCP;
		o.probe_port = (uint16_t)sqlite3_column_int(st, 4);
		snprintf(o.path, sizeof(o.path), "%s", (const char *)sqlite3_column_text(st, 5));
		snprintf(o.codes, sizeof(o.codes), "%s", (const char *)sqlite3_column_text(st, 6));
		col = 7; /* the numbers, in the order of LB_POOL_NUMBERS and the schema */
#define X(c, bit, pb, name) o.c = (uint32_t)sqlite3_column_int64(st, col++);
		LB_POOL_NUMBERS(X)
#undef X
		if (mgr_pool_apply(&p, &o, e, sizeof(e)) != 0 || mgr_pools_set(ps, &k, &p) != 0) {
			snprintf(s->err, sizeof(s->err), "database: %s: %s", op, e);
			sqlite3_finalize(st);
			mgr_pools_free(ps);
			return -LB_EIO;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = mgr_store_fail(s, "%s", op);
		sqlite3_finalize(st);
		mgr_pools_free(ps);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

int
mgr_sqlite_save_desired(struct mgr_store *s, const struct lb_ftable *ft,
	const struct mgr_pools *pools, const struct mgr_meta *m)
{
	sqlite3_stmt *st;

	if (mgr_store_exec(s, "store desired table: begin", "BEGIN IMMEDIATE") != 0)
		return -LB_EIO;
	if (mgr_store_prepare(s, "store desired table",
		    "INSERT OR REPLACE INTO desired (id, time_ms, tbl) VALUES (1, ?, ?)", &st) != 0)
		goto fail;
	sqlite3_bind_int64(st, 1, mgr_store_now_ms());
	if (mgr_store_bind_table(s, st, 2, ft) != 0) {
		sqlite3_finalize(st);
		goto fail;
	}
	if (mgr_store_run(s, "store desired table", st) != 0 || pools_write(s, pools) != 0 ||
		mgr_store_meta_write(s, m) != 0 ||
		mgr_store_exec(s, "store desired table: commit", "COMMIT") != 0)
		goto fail;
	return 0;
fail:
	mgr_store_rollback(s);
	return -LB_EIO;
}
