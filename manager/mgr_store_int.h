/* SPDX-License-Identifier: BSD-3-Clause */
/* Inside the store: what mgr_store.c, mgr_store_tables.c and mgr_store_rounds.c share. */
#ifndef MGR_STORE_INT_H
#define MGR_STORE_INT_H

#include <sqlite3.h>

#include "mgr_store.h"

struct mgr_store {
	sqlite3 *db;
	int lock_fd;
	char err[512];
};

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
