/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sqlite3.h>

#include "lb_err.h"
#include "mgr_store.h"

#define MGR_SCHEMA_VERSION 2

struct mgr_store {
	sqlite3 *db;
	int lock_fd;
	char err[512];
};

/* The schema; every statement is idempotent, so opening is also upgrading. */
static const char *const schema[] = {
	"CREATE TABLE IF NOT EXISTS meta ("
	" key TEXT PRIMARY KEY,"
	" value TEXT NOT NULL)",
	/* One row per committed version, never deleted; tbl kept for the newest. */
	"CREATE TABLE IF NOT EXISTS versions ("
	" version INTEGER PRIMARY KEY,"
	" digest BLOB NOT NULL,"
	" time_ms INTEGER NOT NULL,"
	" summary TEXT NOT NULL,"
	" delta BLOB,"
	" tbl BLOB)",
	/* Every two-phase round; its table until the round is decided. */
	"CREATE TABLE IF NOT EXISTS rounds ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" version INTEGER NOT NULL,"
	" digest BLOB NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('prepared', 'committed', 'aborted')),"
	" reason TEXT,"
	" summary TEXT,"
	" started_ms INTEGER NOT NULL,"
	" ended_ms INTEGER,"
	" tbl BLOB)",
	"CREATE INDEX IF NOT EXISTS rounds_by_version ON rounds (version)",
	/* The operators' table, one row. */
	"CREATE TABLE IF NOT EXISTS desired ("
	" id INTEGER PRIMARY KEY CHECK (id = 1),"
	" time_ms INTEGER NOT NULL,"
	" tbl BLOB NOT NULL)",
	/* Pool options of the desired table's services, where not the defaults (schema 2). */
	"CREATE TABLE IF NOT EXISTS pools ("
	" vip TEXT NOT NULL,"
	" protocol INTEGER NOT NULL,"
	" port INTEGER NOT NULL,"
	" probe TEXT NOT NULL,"
	" probe_port INTEGER NOT NULL,"
	" path TEXT NOT NULL,"
	" codes TEXT NOT NULL,"
	" interval_s INTEGER NOT NULL,"
	" timeout_s INTEGER NOT NULL,"
	" healthy INTEGER NOT NULL,"
	" unhealthy INTEGER NOT NULL,"
	" drain_delay_s INTEGER NOT NULL,"
	" slow_start_s INTEGER NOT NULL,"
	" min_healthy INTEGER NOT NULL,"
	" min_healthy_percent INTEGER NOT NULL,"
	" PRIMARY KEY (vip, protocol, port))",
	NULL,
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail(struct mgr_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record "database: <operation>: <sqlite message>". */
static int
fail(struct mgr_store *s, const char *fmt, ...)
{
	char op[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(op, sizeof(op), fmt, ap);
	va_end(ap);
	snprintf(s->err, sizeof(s->err), "database: %s: %s", op,
		s->db ? sqlite3_errmsg(s->db) : "not open");
	return -LB_EIO;
}

const char *
mgr_store_error(const struct mgr_store *s)
{
	return s->err;
}

static int
exec(struct mgr_store *s, const char *op, const char *sql)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return fail(s, "%s", op);
	return 0;
}

static int
prepare(struct mgr_store *s, const char *op, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return fail(s, "%s", op);
	return 0;
}

/* Step a statement that returns no rows, then finalize it. */
static int
run(struct mgr_store *s, const char *op, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE) {
		rc = fail(s, "%s", op);
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

static void
rollback(struct mgr_store *s)
{
	/* The error that made us roll back is the one worth reporting. */
	if (sqlite3_get_autocommit(s->db) == 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- table blobs: the codec's snapshot chunk, one of one ---- */

int
mgr_table_encode(const struct lb_ftable *ft, uint8_t **buf, size_t *len)
{
	struct lb_msg *m = calloc(1, sizeof(*m));
	int rc;

	if (m == NULL)
		return -LB_ENOMEM;
	m->type = LB_MSG_SNAPSHOT_CHUNK;
	snprintf(m->sender, sizeof(m->sender), "manager");
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

static int
bind_table(struct mgr_store *s, sqlite3_stmt *st, int col, const struct lb_ftable *ft)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = mgr_table_encode(ft, &buf, &len);

	if (rc != 0) {
		snprintf(s->err, sizeof(s->err), "database: encode table: %s", lb_strerror(rc));
		return rc;
	}
	if (sqlite3_bind_blob64(st, col, buf, len, free) != SQLITE_OK)
		return fail(s, "bind table");
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

/* ---- open / close ---- */

static int
lock_database(struct mgr_store *s, const char *path, char *err, size_t len)
{
	char lock[4200];

	/* Two managers on one database would both hand out versions. */
	snprintf(lock, sizeof(lock), "%s.lock", path);
	s->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lock_fd < 0 && (errno == EROFS || errno == EACCES))
		s->lock_fd = open(lock, O_RDONLY | O_CLOEXEC); /* a read-only database */
	if (s->lock_fd < 0) {
		snprintf(err, len, "database: cannot create %s: %s", lock, strerror(errno));
		return -LB_EIO;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, len, "database: %s is in use by another sluice-manager (%s: %s)",
			path, lock, strerror(errno));
		return -LB_EIO;
	}
	return 0;
}

static void
make_parent(const char *path)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return;
	*slash = '\0';
	/* One level, owner-only: it holds the hash seed. */
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return;
}

struct mgr_store *
mgr_store_open(const char *path, char *err, size_t len)
{
	struct mgr_store *s = calloc(1, sizeof(*s));
	char sql[128];
	int i, fd;

	if (s == NULL) {
		snprintf(err, len, "database: out of memory");
		return NULL;
	}
	s->lock_fd = -1;
	make_parent(path);
	if (lock_database(s, path, err, len) != 0)
		goto fail;
	/* Owner-only before SQLite opens it: it holds the hash seed. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
		SQLITE_OK) {
		fail(s, "open %s", path);
		goto fail_err;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 2000);
	/* A decision is durable when the call returns: fsync on every commit. */
	if (exec(s, "set journal_mode=WAL", "PRAGMA journal_mode=WAL") != 0 ||
		exec(s, "set synchronous=FULL", "PRAGMA synchronous=FULL") != 0)
		goto fail_err;
	for (i = 0; schema[i] != NULL; i++)
		if (exec(s, "create schema", schema[i]) != 0)
			goto fail_err;
	/* Every schema change so far only added tables: the version just moves. */
	snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO meta VALUES ('schema', '%d')",
		MGR_SCHEMA_VERSION);
	/* A read-only database still opens: it serves status, refuses changes. */
	if (!sqlite3_db_readonly(s->db, "main"))
		exec(s, "record schema version", sql);
	return s;
fail_err:
	snprintf(err, len, "%s", s->err);
fail:
	mgr_store_close(s);
	return NULL;
}

void
mgr_store_close(struct mgr_store *s)
{
	if (s == NULL)
		return;
	if (s->db != NULL)
		sqlite3_close(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s);
}

/* ---- meta ---- */

static int
meta_get(struct mgr_store *s, const char *key, char *val, size_t len, bool *found)
{
	sqlite3_stmt *st;
	int rc;

	*found = false;
	if (prepare(s, "read meta", "SELECT value FROM meta WHERE key = ?", &st) != 0)
		return -LB_EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(val, len, "%s", (const char *)sqlite3_column_text(st, 0));
		*found = true;
	} else if (rc != SQLITE_DONE) {
		rc = fail(s, "read meta %s", key);
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

static int
meta_put(struct mgr_store *s, const char *key, const char *val)
{
	sqlite3_stmt *st;

	if (prepare(s, "write meta", "INSERT OR REPLACE INTO meta VALUES (?, ?)", &st) != 0)
		return -LB_EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, val, -1, SQLITE_TRANSIENT);
	return run(s, "write meta", st);
}

static int
meta_u32(struct mgr_store *s, const char *key, uint32_t *out)
{
	char v[64];
	bool found;
	int rc = meta_get(s, key, v, sizeof(v), &found);

	if (rc == 0 && found)
		*out = (uint32_t)strtoul(v, NULL, 10);
	return rc;
}

int
mgr_store_load_meta(struct mgr_store *s, struct mgr_meta *m)
{
	char v[64];
	bool found;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = meta_get(s, "hash_seed", v, sizeof(v), &found);
	if (rc != 0)
		return rc;
	if (found && lb_hash_seed_parse(&m->mm_seed, v) == 0)
		m->mm_has_seed = true;
	if ((rc = meta_u32(s, "maglev_size", &m->mm_maglev_size)) != 0 ||
		(rc = meta_u32(s, "next_backend_id", &m->mm_next_backend_id)) != 0 ||
		(rc = meta_u32(s, "next_service_id", &m->mm_next_service_id)) != 0)
		return rc;
	return 0;
}

static int
meta_write(struct mgr_store *s, const struct mgr_meta *m)
{
	char v[64];
	int rc = 0;

	if (m->mm_has_seed) {
		snprintf(v, sizeof(v), "%016" PRIx64 "%016" PRIx64, m->mm_seed.k0, m->mm_seed.k1);
		rc = meta_put(s, "hash_seed", v);
	}
	snprintf(v, sizeof(v), "%u", m->mm_maglev_size);
	if (rc == 0)
		rc = meta_put(s, "maglev_size", v);
	snprintf(v, sizeof(v), "%u", m->mm_next_backend_id);
	if (rc == 0)
		rc = meta_put(s, "next_backend_id", v);
	snprintf(v, sizeof(v), "%u", m->mm_next_service_id);
	if (rc == 0)
		rc = meta_put(s, "next_service_id", v);
	return rc;
}

int
mgr_store_save_meta(struct mgr_store *s, const struct mgr_meta *m)
{
	if (exec(s, "save meta: begin", "BEGIN IMMEDIATE") != 0)
		return -LB_EIO;
	if (meta_write(s, m) != 0 || exec(s, "save meta: commit", "COMMIT") != 0) {
		rollback(s);
		return -LB_EIO;
	}
	return 0;
}

/* ---- tables ---- */

int
mgr_store_load_committed(
	struct mgr_store *s, uint64_t *version, uint8_t digest[LB_DIGEST_LEN], struct lb_ftable *ft)
{
	sqlite3_stmt *st;
	int rc;

	*version = 0;
	memset(digest, 0, LB_DIGEST_LEN);
	memset(ft, 0, sizeof(*ft));
	if (prepare(s, "load committed version",
		    "SELECT version, digest, tbl FROM versions ORDER BY version DESC LIMIT 1",
		    &st) != 0)
		return -LB_EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		char what[64];

		*version = (uint64_t)sqlite3_column_int64(st, 0);
		if (sqlite3_column_bytes(st, 1) == LB_DIGEST_LEN)
			memcpy(digest, sqlite3_column_blob(st, 1), LB_DIGEST_LEN);
		snprintf(what, sizeof(what), "load version %" PRIu64, *version);
		rc = column_table(s, st, 2, what, ft);
	} else if (rc == SQLITE_DONE) {
		rc = 0;
	} else {
		rc = fail(s, "load committed version");
	}
	sqlite3_finalize(st);
	return rc;
}

int
mgr_store_load_desired(struct mgr_store *s, bool *found, struct lb_ftable *ft)
{
	sqlite3_stmt *st;
	int rc;

	*found = false;
	memset(ft, 0, sizeof(*ft));
	if (prepare(s, "load desired table", "SELECT tbl FROM desired WHERE id = 1", &st) != 0)
		return -LB_EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		rc = column_table(s, st, 0, "load desired table", ft);
		*found = rc == 0;
	} else if (rc == SQLITE_DONE) {
		rc = 0;
	} else {
		rc = fail(s, "load desired table");
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

	if (exec(s, op, "DELETE FROM pools") != 0)
		return -LB_EIO;
	for (i = 0; i < ps->ps_n; i++) {
		const struct mgr_pool_entry *e = &ps->ps_v[i];
		const struct mgr_pool *p = &e->pe_pool;
		char vip[16];

		if (prepare(s, op,
			    "INSERT INTO pools VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
			    "?)",
			    &st) != 0)
			return -LB_EIO;
		lb_addr_str(&e->pe_key.vip, vip, sizeof(vip));
		sqlite3_bind_text(st, 1, vip, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 2, e->pe_key.proto);
		sqlite3_bind_int(st, 3, ntohs(e->pe_key.port));
		sqlite3_bind_text(st, 4, mgr_probe_name(p->pl_probe), -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 5, p->pl_probe_port);
		sqlite3_bind_text(st, 6, p->pl_path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 7, p->pl_codes, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 8, p->pl_interval_s);
		sqlite3_bind_int64(st, 9, p->pl_timeout_s);
		sqlite3_bind_int64(st, 10, p->pl_healthy);
		sqlite3_bind_int64(st, 11, p->pl_unhealthy);
		sqlite3_bind_int64(st, 12, p->pl_drain_delay_s);
		sqlite3_bind_int64(st, 13, p->pl_slow_start_s);
		sqlite3_bind_int64(st, 14, p->pl_min_healthy);
		sqlite3_bind_int64(st, 15, p->pl_min_healthy_pct);
		if (run(s, op, st) != 0)
			return -LB_EIO;
	}
	return 0;
}

int
mgr_store_load_pools(struct mgr_store *s, struct mgr_pools *ps)
{
	const char *op = "load pool options";
	sqlite3_stmt *st;
	int rc;

	memset(ps, 0, sizeof(*ps));
	if (prepare(s, op,
		    "SELECT vip, protocol, port, probe, probe_port, path, codes, interval_s,"
		    " timeout_s, healthy, unhealthy, drain_delay_s, slow_start_s, min_healthy,"
		    " min_healthy_percent FROM pools",
		    &st) != 0)
		return -LB_EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct lb_pool_opts o = {.given = LB_POOL_ALL};
		struct mgr_pool p = *mgr_pool_defaults();
		const char *probe = (const char *)sqlite3_column_text(st, 3);
		struct in_addr a;
		struct lb_svc_key k;
		char e[256];

		if (inet_pton(AF_INET, (const char *)sqlite3_column_text(st, 0), &a) != 1) {
			snprintf(s->err, sizeof(s->err), "database: %s: bad vip \"%s\"", op,
				(const char *)sqlite3_column_text(st, 0));
			sqlite3_finalize(st);
			mgr_pools_free(ps);
			return -LB_EIO;
		}
		lb_svc_key_v4(&k, a.s_addr, htons((uint16_t)sqlite3_column_int(st, 2)),
			(uint8_t)sqlite3_column_int(st, 1));
		o.probe = strcmp(probe, "none") == 0   ? LB_PROBE_NONE
			  : strcmp(probe, "http") == 0 ? LB_PROBE_HTTP
						       : LB_PROBE_TCP;
		o.probe_port = (uint16_t)sqlite3_column_int(st, 4);
		snprintf(o.path, sizeof(o.path), "%s", (const char *)sqlite3_column_text(st, 5));
		snprintf(o.codes, sizeof(o.codes), "%s", (const char *)sqlite3_column_text(st, 6));
		o.interval_s = (uint32_t)sqlite3_column_int64(st, 7);
		o.timeout_s = (uint32_t)sqlite3_column_int64(st, 8);
		o.healthy = (uint32_t)sqlite3_column_int64(st, 9);
		o.unhealthy = (uint32_t)sqlite3_column_int64(st, 10);
		o.drain_delay_s = (uint32_t)sqlite3_column_int64(st, 11);
		o.slow_start_s = (uint32_t)sqlite3_column_int64(st, 12);
		o.min_healthy = (uint32_t)sqlite3_column_int64(st, 13);
		o.min_healthy_pct = (uint32_t)sqlite3_column_int64(st, 14);
		if (mgr_pool_apply(&p, &o, e, sizeof(e)) != 0 || mgr_pools_set(ps, &k, &p) != 0) {
			snprintf(s->err, sizeof(s->err), "database: %s: %s", op, e);
			sqlite3_finalize(st);
			mgr_pools_free(ps);
			return -LB_EIO;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = fail(s, "%s", op);
		sqlite3_finalize(st);
		mgr_pools_free(ps);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

int
mgr_store_save_desired(struct mgr_store *s, const struct lb_ftable *ft,
	const struct mgr_pools *pools, const struct mgr_meta *m)
{
	sqlite3_stmt *st;

	if (exec(s, "store desired table: begin", "BEGIN IMMEDIATE") != 0)
		return -LB_EIO;
	if (prepare(s, "store desired table",
		    "INSERT OR REPLACE INTO desired (id, time_ms, tbl) VALUES (1, ?, ?)", &st) != 0)
		goto fail;
	sqlite3_bind_int64(st, 1, now_ms());
	if (bind_table(s, st, 2, ft) != 0) {
		sqlite3_finalize(st);
		goto fail;
	}
	if (run(s, "store desired table", st) != 0 || pools_write(s, pools) != 0 ||
		meta_write(s, m) != 0 || exec(s, "store desired table: commit", "COMMIT") != 0)
		goto fail;
	return 0;
fail:
	rollback(s);
	return -LB_EIO;
}

/* ---- rounds ---- */

int
mgr_store_last_round(struct mgr_store *s, struct mgr_round_rec *r)
{
	sqlite3_stmt *st;
	int rc;

	memset(r, 0, sizeof(*r));
	if (prepare(s, "load last round",
		    "SELECT id, version, digest, state FROM rounds ORDER BY id DESC LIMIT 1",
		    &st) != 0)
		return -LB_EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(st, 3);

		r->mr_id = sqlite3_column_int64(st, 0);
		r->mr_version = (uint64_t)sqlite3_column_int64(st, 1);
		if (sqlite3_column_bytes(st, 2) == LB_DIGEST_LEN)
			memcpy(r->mr_digest, sqlite3_column_blob(st, 2), LB_DIGEST_LEN);
		r->mr_state = strcmp(state, "prepared") == 0	? MGR_ROUND_PREPARED
			      : strcmp(state, "committed") == 0 ? MGR_ROUND_COMMITTED
								: MGR_ROUND_ABORTED;
		rc = 0;
	} else if (rc == SQLITE_DONE) {
		rc = 0;
	} else {
		rc = fail(s, "load last round");
	}
	sqlite3_finalize(st);
	return rc;
}

int
mgr_store_round_prepare(struct mgr_store *s, uint64_t version, const uint8_t digest[LB_DIGEST_LEN],
	const char *summary, const struct lb_ftable *next, int64_t *round_id)
{
	sqlite3_stmt *st;

	if (prepare(s, "record round prepared",
		    "INSERT INTO rounds (version, digest, state, summary, started_ms, tbl)"
		    " VALUES (?, ?, 'prepared', ?, ?, ?)",
		    &st) != 0)
		return -LB_EIO;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)version);
	sqlite3_bind_blob(st, 2, digest, LB_DIGEST_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, summary, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 4, now_ms());
	if (bind_table(s, st, 5, next) != 0) {
		sqlite3_finalize(st);
		return -LB_EIO;
	}
	if (run(s, "record round prepared", st) != 0)
		return -LB_EIO;
	*round_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int
mgr_store_round_abort(struct mgr_store *s, int64_t round_id, const char *reason)
{
	sqlite3_stmt *st;

	/* Round 0: every round still marked prepared (after a restart). */
	if (prepare(s, "record round aborted",
		    "UPDATE rounds SET state = 'aborted', reason = ?, ended_ms = ?, tbl = NULL"
		    " WHERE (id = ?3 OR ?3 = 0) AND state = 'prepared'",
		    &st) != 0)
		return -LB_EIO;
	sqlite3_bind_text(st, 1, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, now_ms());
	sqlite3_bind_int64(st, 3, round_id);
	return run(s, "record round aborted", st);
}

int
mgr_store_commit(struct mgr_store *s, int64_t round_id, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], const char *summary, const uint8_t *delta,
	size_t delta_len, const struct lb_ftable *table)
{
	int64_t t = now_ms();
	char v[32], op[64];
	sqlite3_stmt *st;

	snprintf(op, sizeof(op), "commit version %" PRIu64, version);
	if (exec(s, op, "BEGIN IMMEDIATE") != 0)
		return -LB_EIO;
	if (prepare(s, op,
		    "INSERT INTO versions (version, digest, time_ms, summary, delta, tbl)"
		    " VALUES (?, ?, ?, ?, ?, ?)",
		    &st) != 0)
		goto fail;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)version);
	sqlite3_bind_blob(st, 2, digest, LB_DIGEST_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, t);
	sqlite3_bind_text(st, 4, summary, -1, SQLITE_TRANSIENT);
	sqlite3_bind_blob64(st, 5, delta, delta_len, SQLITE_TRANSIENT);
	if (bind_table(s, st, 6, table) != 0) {
		sqlite3_finalize(st);
		goto fail;
	}
	if (run(s, op, st) != 0)
		goto fail;
	if (round_id != 0) {
		if (prepare(s, op,
			    "UPDATE rounds SET state = 'committed', ended_ms = ?, tbl = NULL"
			    " WHERE id = ?",
			    &st) != 0)
			goto fail;
		sqlite3_bind_int64(st, 1, t);
		sqlite3_bind_int64(st, 2, round_id);
		if (run(s, op, st) != 0)
			goto fail;
	}
	/* Rounds whose end the store could not take (it was failing) ended here. */
	if (prepare(s, op,
		    "UPDATE rounds SET state = 'aborted', ended_ms = ?, tbl = NULL,"
		    " reason = COALESCE(reason, 'aborted; the database could not record it then')"
		    " WHERE state = 'prepared' AND id != ?",
		    &st) != 0)
		goto fail;
	sqlite3_bind_int64(st, 1, t);
	sqlite3_bind_int64(st, 2, round_id);
	if (run(s, op, st) != 0)
		goto fail;
	snprintf(v, sizeof(v), "%" PRIu64, version);
	if (meta_put(s, "committed_version", v) != 0)
		goto fail;
	/* Bound the file: old tables go, their version rows and deltas stay. */
	if (version > MGR_STORE_KEEP_TABLES) {
		if (prepare(s, op,
			    "UPDATE versions SET tbl = NULL WHERE version <= ? AND tbl IS NOT NULL",
			    &st) != 0)
			goto fail;
		sqlite3_bind_int64(st, 1, (sqlite3_int64)(version - MGR_STORE_KEEP_TABLES));
		if (run(s, op, st) != 0)
			goto fail;
	}
	if (exec(s, op, "COMMIT") != 0)
		goto fail;
	return 0;
fail:
	rollback(s);
	return -LB_EIO;
}

int
mgr_store_has_version(struct mgr_store *s, uint64_t version)
{
	sqlite3_stmt *st;
	int rc;

	if (prepare(s, "look up version", "SELECT 1 FROM versions WHERE version = ?", &st) != 0)
		return -LB_EIO;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)version);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : fail(s, "look up version");
	sqlite3_finalize(st);
	return rc;
}

int
mgr_store_history(struct mgr_store *s, uint32_t limit, struct mgr_hist **out)
{
	sqlite3_stmt *st;
	struct mgr_hist *h = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*out = NULL;
	if (prepare(s, "read history",
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
		if (sqlite3_column_bytes(st, 2) == LB_DIGEST_LEN)
			memcpy(e->mh_digest, sqlite3_column_blob(st, 2), LB_DIGEST_LEN);
		e->mh_aborted = sqlite3_column_int(st, 3) != 0;
		snprintf(e->mh_text, sizeof(e->mh_text), "%s",
			(const char *)sqlite3_column_text(st, 4));
		snprintf(e->mh_reason, sizeof(e->mh_reason), "%s",
			(const char *)sqlite3_column_text(st, 5));
	}
	if (rc != SQLITE_DONE) {
		free(h);
		rc = fail(s, "read history");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	*out = h;
	return (int)n;
}
