/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's durable state: in SQLite (WAL, synchronous=FULL) for one
 * manager, the default; or in etcd for several, one of them the leader
 * (mgr_store_open_etcd; docs/manager.md, "High availability"). Both keep
 * the same records under the same contract, behind one table of
 * operations (mgr_store_int.h); this header is all the rest of the manager
 * sees.
 *
 * What must survive a kill -9 at any instant: the committed version and its
 * table, the rounds that were prepared (so a restart knows whether to send
 * COMMIT or ABORT for the last one), the desired table the operators asked
 * for, and the id counters (an id is never given twice). Every write is one
 * transaction, so a crash leaves either all of a change or none of it.
 *
 * Tables are stored as one encoded LB_MSG_SNAPSHOT_CHUNK (index 0 of 1) and
 * deltas as an encoded LB_MSG_PREPARE: the wire codec is the only
 * serialization of a flow table.
 *
 * Errors come back as -LB_EIO with mgr_store_error() saying which operation
 * failed and SQLite's message ("database: commit version 7: database or
 * disk is full"). A failed write changes nothing: the caller keeps its
 * in-memory state as it was before the call.
 */
#ifndef MGR_STORE_H
#define MGR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_codec.h"
#include "mgr_config.h"
#include "mgr_pool.h"

struct mgr_store;

/* Kept in the meta table. */
struct mgr_meta {
	bool mm_has_seed;
	struct lb_hash_seed mm_seed;
	uint32_t mm_maglev_size;
	uint32_t mm_next_backend_id;
	uint32_t mm_next_service_id;
};

enum mgr_round_state { MGR_ROUND_PREPARED = 1, MGR_ROUND_COMMITTED, MGR_ROUND_ABORTED };

struct mgr_round_rec {
	int64_t mr_id; /* row id, 0 when there is no round */
	uint64_t mr_version;
	uint8_t mr_digest[LB_DIGEST_LEN];
	enum mgr_round_state mr_state;
};

/* One line of history: a committed version or an aborted round. */
struct mgr_hist {
	uint64_t mh_version;
	int64_t mh_time_ms;
	uint8_t mh_digest[LB_DIGEST_LEN];
	bool mh_aborted;
	char mh_text[512];	     /* the summary */
	char mh_reason[LB_MSG_TEXT]; /* why it aborted */
};

/* Table blobs older than this many versions are dropped (rows stay). */
#define MGR_STORE_KEEP_TABLES 100

/*
 * Open (creating the schema if new) and lock the database: a second
 * manager on the same file is refused. Returns NULL with the reason in err.
 */
struct mgr_store *mgr_store_open(const char *path, char *err, size_t len);

/*
 * etcd: the key space cfg->mc_etcd_prefix on cfg's endpoints. Refused
 * (NULL, err) when no endpoint answers within the timeout, or when the
 * prefix holds keys that are not a sluice manager's ("etcd prefix
 * /sluice/prod holds /sluice/prod/foo, which is not a sluice manager's
 * key: give another prefix"). Nothing is written until a term is set.
 */
struct mgr_store *mgr_store_open_etcd(const struct mgr_config *cfg, char *err, size_t len);

void mgr_store_close(struct mgr_store *s);

/* "sqlite" or "etcd". */
const char *mgr_store_kind(const struct mgr_store *s);

/*
 * etcd: the leader's term (its leader key's create_revision). Every write
 * from now on is a transaction that holds only while that key still has
 * this create_revision, so a deposed leader's writes fail ("not the
 * leader: ..."); 0: no write may be made (a standby). SQLite: unused.
 */
void mgr_store_set_term(struct mgr_store *s, uint64_t term);

/* The term set (0: a single manager, or a standby). */
uint64_t mgr_store_term(const struct mgr_store *s);

/*
 * etcd: a number that changes whenever the desired table or its pools do
 * (a standby reloads them for its probes). SQLite: always 0.
 */
int mgr_store_desired_stamp(struct mgr_store *s, uint64_t *stamp);

/*
 * etcd: why this manager may lead no more, or NULL. Set by a write the term
 * guard refused (another manager leads), and by a commit record whose fate
 * etcd did not tell (sent, unanswered, and not read back as ours): the
 * round can be neither committed nor aborted by this manager without
 * perhaps contradicting the store, so it stops as a deposed leader and the
 * next leader's recovery reads what the store holds. SQLite: always NULL
 * (a failed transaction is rolled back whole).
 */
const char *mgr_store_lost(const struct mgr_store *s);

/* The last error, "database: <operation>: <sqlite message>". */
const char *mgr_store_error(const struct mgr_store *s);

int mgr_store_load_meta(struct mgr_store *s, struct mgr_meta *m);

int mgr_store_save_meta(struct mgr_store *s, const struct mgr_meta *m);

/*
 * The newest committed version, its digest and table. *version = 0 and
 * *ft empty when nothing was ever committed.
 */
int mgr_store_load_committed(struct mgr_store *s, uint64_t *version, uint8_t digest[LB_DIGEST_LEN],
	struct lb_ftable *ft);

/* The desired table; *found false when none was ever stored. */
int mgr_store_load_desired(struct mgr_store *s, bool *found, struct lb_ftable *ft);

/*
 * Desired table, its pool options (the whole list replaces the stored one)
 * and meta (id counters, seed) in one transaction.
 */
int mgr_store_save_desired(struct mgr_store *s, const struct lb_ftable *ft,
	const struct mgr_pools *pools, const struct mgr_meta *m);

/* The desired table's pool options (empty when none were stored). */
int mgr_store_load_pools(struct mgr_store *s, struct mgr_pools *ps);

/* The newest round (r->mr_id = 0 when there is none). */
int mgr_store_last_round(struct mgr_store *s, struct mgr_round_rec *r);

/* Record a round as prepared, with the table it would commit. */
int mgr_store_round_prepare(struct mgr_store *s, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], const char *summary, const struct lb_ftable *next,
	int64_t *round_id);

/* Mark a prepared round aborted; round_id 0: every round still prepared. */
int mgr_store_round_abort(struct mgr_store *s, int64_t round_id, const char *reason);

/*
 * The commit record, one transaction: the version row (digest, time,
 * summary, encoded delta, table), the round marked committed, the committed
 * pointer in meta, and table blobs older than MGR_STORE_KEEP_TABLES dropped.
 */
int mgr_store_commit(struct mgr_store *s, int64_t round_id, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], const char *summary, const uint8_t *delta,
	size_t delta_len, const struct lb_ftable *table);

/*
 * Up to `limit` (0: all) history lines, newest first, into a malloc'd
 * array. Returns the count or -LB_EIO / -LB_ENOMEM.
 */
int mgr_store_history(struct mgr_store *s, uint32_t limit, struct mgr_hist **out);

/* Is `version` a committed version row? Returns 1, 0 or -LB_EIO. */
int mgr_store_has_version(struct mgr_store *s, uint64_t version);

/* Encode / decode a table blob (exposed for the tests of the format). */
int mgr_table_encode(const struct lb_ftable *ft, uint8_t **buf, size_t *len);
int mgr_table_decode(const uint8_t *buf, size_t len, struct lb_ftable *ft, char *err, size_t elen);

#endif /* MGR_STORE_H */
