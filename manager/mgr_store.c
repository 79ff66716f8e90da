/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store (mgr_store.h): the database's life (schema, lock, open), the
 * helpers its files share, and the meta rows; the tables and pools are
 * mgr_store_tables.c, the rounds, commits and history mgr_store_rounds.c.
 */
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

#include <sqlite3.h>

#include "lb_err.h"
#include "mgr_store_int.h"

#define MGR_SCHEMA_VERSION 3

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
	" withdraw_below INTEGER NOT NULL DEFAULT 0,"	      /* schema 3 */
	" withdraw_below_percent INTEGER NOT NULL DEFAULT 0," /* schema 3 */
	" PRIMARY KEY (vip, protocol, port))",
	NULL,
};

/* Columns later schemas added to tables an older one made: (table, column, definition). */
static const char *const added_columns[][3] = {
	{"pools", "withdraw_below", "INTEGER NOT NULL DEFAULT 0"},
	{"pools", "withdraw_below_percent", "INTEGER NOT NULL DEFAULT 0"},
};

/* ALTER TABLE ... ADD COLUMN for every added column the database lacks. */
static int
add_columns(struct mgr_store *s)
{
	char sql[256];
	size_t i;

	for (i = 0; i < sizeof(added_columns) / sizeof(added_columns[0]); i++) {
		sqlite3_stmt *st;
		int rc;

		snprintf(sql, sizeof(sql),
			"SELECT 1 FROM pragma_table_info('%s') WHERE name = '%s'",
			added_columns[i][0], added_columns[i][1]);
		rc = mgr_store_row(s, "read the schema", sql, &st);
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
		if (rc == 1) /* there already */
			continue;
		snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", added_columns[i][0],
			added_columns[i][1], added_columns[i][2]);
		if (mgr_store_exec(s, "upgrade the schema", sql) != 0)
			return -LB_EIO;
	}
	return 0;
}

int64_t
mgr_store_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Record "database: <operation>: <sqlite message>". */
int
mgr_store_fail(struct mgr_store *s, const char *fmt, ...)
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

int
mgr_store_exec(struct mgr_store *s, const char *op, const char *sql)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return mgr_store_fail(s, "%s", op);
	return 0;
}

int
mgr_store_prepare(struct mgr_store *s, const char *op, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return mgr_store_fail(s, "%s", op);
	return 0;
}

/* Step a statement that returns no rows, then finalize it. */
int
mgr_store_run(struct mgr_store *s, const char *op, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE) {
		rc = mgr_store_fail(s, "%s", op);
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

int
mgr_store_step(struct mgr_store *s, const char *op, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : mgr_store_fail(s, "%s", op);
}

int
mgr_store_row(struct mgr_store *s, const char *op, const char *sql, sqlite3_stmt **st)
{
	if (mgr_store_prepare(s, op, sql, st) != 0)
		return -LB_EIO;
	return mgr_store_step(s, op, *st);
}

void
mgr_store_digest(sqlite3_stmt *st, int col, uint8_t out[LB_DIGEST_LEN])
{
	if (sqlite3_column_bytes(st, col) == LB_DIGEST_LEN)
		memcpy(out, sqlite3_column_blob(st, col), LB_DIGEST_LEN);
}

void
mgr_store_rollback(struct mgr_store *s)
{
	/* The error that made us roll back is the one worth reporting. */
	if (sqlite3_get_autocommit(s->db) == 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
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
	struct mgr_store *s = lb_zalloc(sizeof(*s), "database", err, len);
	char sql[128];
	int i, fd;

	if (s == NULL)
		return NULL;
	s->ops = &mgr_sqlite_ops;
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
		mgr_store_fail(s, "open %s", path);
		goto fail_err;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 2000);
	/* A decision is durable when the call returns: fsync on every commit. */
	if (mgr_store_exec(s, "set journal_mode=WAL", "PRAGMA journal_mode=WAL") != 0 ||
		mgr_store_exec(s, "set synchronous=FULL", "PRAGMA synchronous=FULL") != 0)
		goto fail_err;
	for (i = 0; schema[i] != NULL; i++)
		if (mgr_store_exec(s, "create schema", schema[i]) != 0)
			goto fail_err;
	if (!sqlite3_db_readonly(s->db, "main") && add_columns(s) != 0)
		goto fail_err;
	/* Every schema change so far only added tables and columns: the version just moves. */
	snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO meta VALUES ('schema', '%d')",
		MGR_SCHEMA_VERSION);
	/* A read-only database still opens: it serves status, refuses changes. */
	if (!sqlite3_db_readonly(s->db, "main"))
		mgr_store_exec(s, "record schema version", sql);
	return s;
fail_err:
	snprintf(err, len, "%s", s->err);
fail:
	mgr_store_close(s);
	return NULL;
}

void
mgr_sqlite_close(struct mgr_store *s)
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
	char op[96];
	sqlite3_stmt *st;
	int rc;

	*found = false;
	if (mgr_store_prepare(s, "read meta", "SELECT value FROM meta WHERE key = ?", &st) != 0)
		return -LB_EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	snprintf(op, sizeof(op), "read meta %s", key);
	rc = mgr_store_step(s, op, st);
	if (rc == 1) {
		snprintf(val, len, "%s", (const char *)sqlite3_column_text(st, 0));
		*found = true;
	}
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

int
mgr_store_meta_put(struct mgr_store *s, const char *key, const char *val)
{
	sqlite3_stmt *st;

	if (mgr_store_prepare(s, "write meta", "INSERT OR REPLACE INTO meta VALUES (?, ?)", &st) !=
		0)
		return -LB_EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, val, -1, SQLITE_TRANSIENT);
	return mgr_store_run(s, "write meta", st);
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
mgr_sqlite_load_meta(struct mgr_store *s, struct mgr_meta *m)
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

int
mgr_store_meta_write(struct mgr_store *s, const struct mgr_meta *m)
{
	char v[64];
	int rc = 0;

	if (m->mm_has_seed) {
		snprintf(v, sizeof(v), "%016" PRIx64 "%016" PRIx64, m->mm_seed.k0, m->mm_seed.k1);
		rc = mgr_store_meta_put(s, "hash_seed", v);
	}
	snprintf(v, sizeof(v), "%u", m->mm_maglev_size);
	if (rc == 0)
		rc = mgr_store_meta_put(s, "maglev_size", v);
	snprintf(v, sizeof(v), "%u", m->mm_next_backend_id);
	if (rc == 0)
		rc = mgr_store_meta_put(s, "next_backend_id", v);
	snprintf(v, sizeof(v), "%u", m->mm_next_service_id);
	if (rc == 0)
		rc = mgr_store_meta_put(s, "next_service_id", v);
	return rc;
}

int
mgr_sqlite_save_meta(struct mgr_store *s, const struct mgr_meta *m)
{
	if (mgr_store_exec(s, "save meta: begin", "BEGIN IMMEDIATE") != 0)
		return -LB_EIO;
	if (mgr_store_meta_write(s, m) != 0 ||
		mgr_store_exec(s, "save meta: commit", "COMMIT") != 0) {
		mgr_store_rollback(s);
		return -LB_EIO;
	}
	return 0;
}

/* One manager: nobody else changes the desired table. */
int
mgr_sqlite_desired_stamp(struct mgr_store *s, uint64_t *stamp)
{
	(void)s;
	*stamp = 0;
	return 0;
}

/* Every operation is mgr_sqlite_<op> (MGR_STORE_OPS). */
#define MGR_STORE_OP_SQLITE(ret, op, params) .op = mgr_sqlite_##op,
const struct mgr_store_ops mgr_sqlite_ops = {.name = "sqlite", MGR_STORE_OPS(MGR_STORE_OP_SQLITE)};
#undef MGR_STORE_OP_SQLITE
