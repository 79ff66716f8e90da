/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the etcd store (mgr_store.h's second implementation): what
 * mgr_estore.c (the key space, meta, tables, pools) and mgr_estore_rounds.c
 * (rounds, commits, history) share. Not for other modules.
 *
 * The keys, under the configured prefix P (docs/manager.md, "The etcd key
 * space"); numbers are 20 digits, zero-padded, so keys sort as numbers:
 *
 *   P/schema              "sluice-manager 1": whose key space this is
 *   P/leader              the leader's name and URLs, on its lease (mgr_leader.c)
 *   P/managers/ID         every manager's, on its lease
 *   P/meta                {"hash_seed","maglev_size","next_backend_id","next_service_id"}
 *   P/desired             the desired table (an encoded snapshot chunk)
 *   P/pools               its pool options, [{"vip","protocol","port",...}]
 *   P/committed           {"version":N,"round":R}: the committed pointer
 *   P/versions/N          {"digest","time_ms","summary"}, the newest keep_versions
 *   P/deltas/N            the encoded PREPARE of N, as long as its version row
 *   P/tables/N            the table of N, the newest MGR_STORE_KEEP_TABLES
 *   P/rounds/R            {"version","digest","state","reason","summary",
 *                         "started_ms","ended_ms"}, the newest 2 x keep_versions
 *   P/roundtbl/R          the table of round R until it is decided
 *
 * Every write is one transaction whose first comparison is the term guard:
 * P/leader's create_revision equals the term this manager was elected
 * with. A deposed leader's transaction fails whole.
 */
#ifndef MGR_ESTORE_H
#define MGR_ESTORE_H

#include <jansson.h>

#include "mgr_etcd.h"
#include "mgr_store_int.h"

#define MGR_ESTORE_SCHEMA "sluice-manager 1"

struct mgr_estore {
	struct mgr_etcd *etcd;
	char prefix[MGR_ETCD_PREFIX_MAX];
	uint32_t keep_versions;
	int64_t next_round; /* the next round's id (0: look it up) */
};

/* "P/versions/00000000000000000007" into buf. */
void mgr_es_numkey(char *buf, size_t len, const char *dir, uint64_t n);

/*
 * The value of key P+suffix into a malloc'd buffer (*n bytes, NUL after
 * them); *found false when absent. *mod: its mod_revision (may be NULL).
 * 0 or -LB_EIO with s->err.
 */
int mgr_es_get(struct mgr_store *s, const char *suffix, bool *found, uint8_t **val, size_t *n,
	int64_t *mod);

/* The same, parsed as JSON (NULL when absent). */
int mgr_es_get_json(struct mgr_store *s, const char *suffix, json_t **out);

/*
 * The kvs of the range P+from .. P+to (to NULL: every key beginning with
 * P+from), sorted by key, newest first when descend; limit 0: all. *out:
 * the answer's "kvs" array (json_decref it), never NULL on success.
 */
int mgr_es_range(struct mgr_store *s, const char *from, const char *to, bool descend,
	uint32_t limit, json_t **out);

/* Operations of a transaction. */
json_t *mgr_es_put(const char *prefix, const char *suffix, const void *val, size_t n);
json_t *mgr_es_put_json(const char *prefix, const char *suffix, json_t *val); /* takes val */
json_t *mgr_es_del(const char *prefix, const char *suffix);
/* Delete P+from up to (not including) P+to. */
json_t *mgr_es_del_range(const char *prefix, const char *from, const char *to);
/* A comparison: P+suffix does not exist. */
json_t *mgr_es_absent(const char *prefix, const char *suffix);

/*
 * A guarded transaction (op names it for errors): the term guard first,
 * then `compares`, `success` if all hold (all three arrays taken over,
 * compares may be NULL). Returns 0 when it succeeded; -LB_EIO with s->err
 * when it did not ("not the leader: ..." when the guard failed, or what
 * failed) or etcd could not be asked.
 */
int mgr_es_txn(struct mgr_store *s, const char *op, json_t *compares, json_t *success);

/* Record "etcd: <op>: <message>"; returns -LB_EIO. */
int mgr_es_fail(struct mgr_store *s, const char *op, const char *msg);

/* Table blobs and JSON fields. */
int mgr_es_table(
	struct mgr_store *s, const uint8_t *buf, size_t n, const char *what, struct lb_ftable *ft);
void mgr_es_digest_parse(const char *hex, uint8_t out[LB_DIGEST_LEN]);
uint64_t mgr_es_u64(const json_t *obj, const char *name);
const char *mgr_es_str(const json_t *obj, const char *name);

/*
 * ---- The operations: mgr_es_<op> for each of MGR_STORE_OPS (close, meta,
 * tables, pools and the desired stamp in mgr_estore.c; rounds and history
 * in mgr_estore_rounds.c) ----
 */
#define MGR_STORE_OP_ES(ret, op, params) ret mgr_es_##op params;
MGR_STORE_OPS(MGR_STORE_OP_ES)
#undef MGR_STORE_OP_ES

#endif /* MGR_ESTORE_H */
