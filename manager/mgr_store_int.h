/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the store: its two implementations behind one table of
 * operations (mgr_store_api.c dispatches mgr_store.h's calls to it).
 *
 *   mgr_store.c, mgr_store_tables.c, mgr_store_rounds.c   SQLite
 *   mgr_estore.c, mgr_estore_rounds.c                     etcd
 */
#ifndef MGR_STORE_INT_H
#define MGR_STORE_INT_H

#include <sqlite3.h>

#include "mgr_store.h"

struct mgr_estore;

/*
 * The operations, each once: X(return type, name, parameters), mgr_store.h's
 * calls without their mgr_store_ prefix, under the same contract. The list
 * makes struct mgr_store_ops, and each implementation's prototypes and
 * table: every operation of SQLite is mgr_sqlite_<name>, of etcd
 * mgr_es_<name>. (clang-format would read the pointers as products.)
 */
/* clang-format off */
#define MGR_STORE_OPS(X)                                                                           \
	X(void, close, (struct mgr_store *s))                                                      \
	X(int, load_meta, (struct mgr_store *s, struct mgr_meta *m))                               \
	X(int, save_meta, (struct mgr_store *s, const struct mgr_meta *m))                         \
	X(int, load_committed,                                                                     \
		(struct mgr_store *s, uint64_t *version, uint8_t digest[LB_DIGEST_LEN],            \
			struct lb_ftable *ft))                                                     \
	X(int, load_desired, (struct mgr_store *s, bool *found, struct lb_ftable *ft))             \
	X(int, save_desired,                                                                       \
		(struct mgr_store *s, const struct lb_ftable *ft, const struct mgr_pools *pools,   \
			const struct mgr_meta *m))                                                 \
	X(int, load_pools, (struct mgr_store *s, struct mgr_pools *ps))                            \
	X(int, last_round, (struct mgr_store *s, struct mgr_round_rec *r))                         \
	X(int, round_prepare,                                                                      \
		(struct mgr_store *s, uint64_t version, const uint8_t digest[LB_DIGEST_LEN],       \
			const char *summary, const struct lb_ftable *next, int64_t *round_id))     \
	X(int, round_abort, (struct mgr_store *s, int64_t round_id, const char *reason))           \
	X(int, commit,                                                                             \
		(struct mgr_store *s, int64_t round_id, uint64_t version,                          \
			const uint8_t digest[LB_DIGEST_LEN], const char *summary,                  \
			const uint8_t *delta, size_t delta_len, const struct lb_ftable *table))    \
	X(int, history, (struct mgr_store *s, uint32_t limit, struct mgr_hist **out))              \
	X(int, has_version, (struct mgr_store *s, uint64_t version))                               \
	X(int, desired_stamp, (struct mgr_store *s, uint64_t *stamp))
/* clang-format on */

/* One implementation. */
struct mgr_store_ops {
	const char *name; /* "sqlite", "etcd" */
#define MGR_STORE_OP_MEMBER(ret, op, params) ret(*op) params;
	MGR_STORE_OPS(MGR_STORE_OP_MEMBER)
#undef MGR_STORE_OP_MEMBER
};

struct mgr_store {
	const struct mgr_store_ops *ops;
	sqlite3 *db; /* SQLite */
	int lock_fd;
	struct mgr_estore *es; /* etcd */
	uint64_t term;	       /* etcd: every write is guarded by it (0: none may be made) */
	char err[512];
	char lost[512]; /* etcd: why this manager may lead no more ("": it may) */
};

extern const struct mgr_store_ops mgr_sqlite_ops;
extern const struct mgr_store_ops mgr_estore_ops;

/*
 * A round's state as both implementations store it ("prepared",
 * "committed", "aborted"), back to the enum; anything else is aborted.
 */
enum mgr_round_state mgr_round_state_parse(const char *s);

/*
 * ---- SQLite: mgr_sqlite_<op> for each of MGR_STORE_OPS: close, meta and
 * the desired stamp in mgr_store.c, tables and pools in mgr_store_tables.c,
 * rounds and history in mgr_store_rounds.c ----
 */
#define MGR_STORE_OP_SQLITE(ret, op, params) ret mgr_sqlite_##op params;
MGR_STORE_OPS(MGR_STORE_OP_SQLITE)
#undef MGR_STORE_OP_SQLITE

/* Wall-clock milliseconds, for the rows' times. */
int64_t mgr_store_now_ms(void);

/* Record "database: <operation>: <sqlite message>"; returns -LB_EIO. */
int mgr_store_fail(struct mgr_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int mgr_store_exec(struct mgr_store *s, const char *op, const char *sql);
int mgr_store_prepare(struct mgr_store *s, const char *op, const char *sql, sqlite3_stmt **st);

/* Step a statement that returns no rows, then finalize it. */
int mgr_store_run(struct mgr_store *s, const char *op, sqlite3_stmt *st);

/* Step a statement for its one row: 1 (a row), 0 (none) or -LB_EIO; not finalized. */
int mgr_store_step(struct mgr_store *s, const char *op, sqlite3_stmt *st);

/*
 * Prepare sql (no parameters) and step it for its one row: 1 (a row, to
 * read from *st), 0 (none) or -LB_EIO. Finalize *st whatever the answer
 * (NULL when it could not be prepared).
 */
int mgr_store_row(struct mgr_store *s, const char *op, const char *sql, sqlite3_stmt **st);

/* A digest column into out (left as it is when the column is not one). */
void mgr_store_digest(sqlite3_stmt *st, int col, uint8_t out[LB_DIGEST_LEN]);

/* Roll back the transaction open, if any. */
void mgr_store_rollback(struct mgr_store *s);

/* One meta row (in the caller's transaction, if any). */
int mgr_store_meta_put(struct mgr_store *s, const char *key, const char *val);

/* The meta rows of m (in the caller's transaction). */
int mgr_store_meta_write(struct mgr_store *s, const struct mgr_meta *m);

/* Bind table ft, encoded, as parameter col. */
int mgr_store_bind_table(
	struct mgr_store *s, sqlite3_stmt *st, int col, const struct lb_ftable *ft);

#endif /* MGR_STORE_INT_H */
