/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd store (mgr_estore.h has the key space): opening it and checking
 * that the prefix is ours, the helpers both files use, the meta, the
 * tables and the pools. Rounds, commits and history: mgr_estore_rounds.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "mgr_estore.h"

/* ---- helpers ---- */

int
mgr_es_fail(struct mgr_store *s, const char *op, const char *msg)
{
	snprintf(s->err, sizeof(s->err), "etcd: %.80s: %.400s", op, msg);
	return -LB_EIO;
}

void
mgr_es_numkey(char *buf, size_t len, const char *dir, uint64_t n)
{
	snprintf(buf, len, "/%s/%020" PRIu64, dir, n);
}

uint64_t
mgr_es_u64(const json_t *obj, const char *name)
{
	const json_t *v = json_object_get(obj, name);

	return json_is_integer(v)  ? (uint64_t)json_integer_value(v)
	       : json_is_string(v) ? strtoull(json_string_value(v), NULL, 10)
				   : 0;
}

const char *
mgr_es_str(const json_t *obj, const char *name)
{
	const char *v = json_string_value(json_object_get(obj, name));

	return v != NULL ? v : "";
}

void
mgr_es_digest_parse(const char *hex, uint8_t out[LB_DIGEST_LEN])
{
	unsigned v;
	int i;

	memset(out, 0, LB_DIGEST_LEN);
	for (i = 0; i < LB_DIGEST_LEN && hex[2 * i] && hex[2 * i + 1]; i++)
		if (sscanf(hex + 2 * i, "%2x", &v) == 1)
			out[i] = (uint8_t)v;
}

static json_t *
range_req(const char *prefix, const char *from, const char *to, bool prefix_scan)
{
	json_t *r = json_object();

	json_object_set_new(r, "key", mgr_etcd_key(prefix, from));
	if (to != NULL)
		json_object_set_new(r, "range_end", mgr_etcd_key(prefix, to));
	else if (prefix_scan)
		json_object_set_new(r, "range_end", mgr_etcd_range_end(prefix, from));
	return r;
}

int
mgr_es_get(struct mgr_store *s, const char *suffix, bool *found, uint8_t **val, size_t *n,
	int64_t *mod)
{
	char err[MGR_ETCD_ERR];
	json_t *out = NULL, *kv;
	int rc;

	*found = false;
	*val = NULL;
	*n = 0;
	rc = mgr_etcd_call(s->es->etcd, "/v3/kv/range",
		range_req(s->es->prefix, suffix, NULL, false), true, &out, err, sizeof(err));
	if (rc != 0)
		return mgr_es_fail(s, suffix + 1, err);
	kv = json_array_get(json_object_get(out, "kvs"), 0);
	if (kv != NULL) {
		if (mgr_etcd_unb64(json_object_get(kv, "value"), val, n) != 0) {
			json_decref(out);
			return mgr_es_fail(s, suffix + 1, "value is not base64");
		}
		*found = true;
		if (mod != NULL)
			*mod = mgr_etcd_int(kv, "mod_revision");
	}
	json_decref(out);
	return 0;
}

int
mgr_es_get_json(struct mgr_store *s, const char *suffix, json_t **out)
{
	json_error_t je;
	uint8_t *v;
	size_t n;
	bool found;
	int rc;

	*out = NULL;
	rc = mgr_es_get(s, suffix, &found, &v, &n, NULL);
	if (rc != 0 || !found)
		return rc;
	*out = json_loadb((const char *)v, n, 0, &je);
	free(v);
	if (*out == NULL) {
		char msg[256];

		snprintf(msg, sizeof(msg), "not JSON: %s", je.text);
		return mgr_es_fail(s, suffix + 1, msg);
	}
	return 0;
}

int
mgr_es_range(struct mgr_store *s, const char *from, const char *to, bool descend, uint32_t limit,
	json_t **out)
{
	json_t *r = range_req(s->es->prefix, from, to, true), *ans = NULL, *kvs;
	char err[MGR_ETCD_ERR];

	*out = NULL;
	if (descend) {
		json_object_set_new(r, "sort_order", json_string("DESCEND"));
		json_object_set_new(r, "sort_target", json_string("KEY"));
	}
	if (limit != 0)
		json_object_set_new(r, "limit", json_integer(limit));
	if (mgr_etcd_call(s->es->etcd, "/v3/kv/range", r, true, &ans, err, sizeof(err)) != 0)
		return mgr_es_fail(s, from + 1, err);
	kvs = json_object_get(ans, "kvs");
	*out = kvs != NULL ? json_incref(kvs) : json_array();
	json_decref(ans);
	return 0;
}

json_t *
mgr_es_put(const char *prefix, const char *suffix, const void *val, size_t n)
{
	return json_pack("{s:{s:o,s:o}}", "request_put", "key", mgr_etcd_key(prefix, suffix),
		"value", mgr_etcd_b64(val, n));
}

json_t *
mgr_es_put_json(const char *prefix, const char *suffix, json_t *val)
{
	char *t = json_dumps(val, JSON_COMPACT | JSON_SORT_KEYS);
	json_t *op = t != NULL ? mgr_es_put(prefix, suffix, t, strlen(t)) : NULL;

	free(t);
	json_decref(val);
	return op;
}

json_t *
mgr_es_del(const char *prefix, const char *suffix)
{
	return json_pack("{s:{s:o}}", "request_delete_range", "key", mgr_etcd_key(prefix, suffix));
}

json_t *
mgr_es_del_range(const char *prefix, const char *from, const char *to)
{
	return json_pack("{s:{s:o,s:o}}", "request_delete_range", "key", mgr_etcd_key(prefix, from),
		"range_end", mgr_etcd_key(prefix, to));
}

json_t *
mgr_es_absent(const char *prefix, const char *suffix)
{
	return json_pack("{s:s,s:o,s:s}", "target", "CREATE", "key", mgr_etcd_key(prefix, suffix),
		"create_revision", "0");
}

/* Who holds P/leader now, for the error of a failed guard. */
static void
guard_failed(struct mgr_store *s, const char *op, json_t *ans)
{
	json_t *resp = json_array_get(json_object_get(ans, "responses"), 0);
	json_t *kv =
		json_array_get(json_object_get(json_object_get(resp, "response_range"), "kvs"), 0);
	char msg[400];
	uint8_t *v = NULL;
	size_t n = 0;

	if (kv == NULL) {
		snprintf(msg, sizeof(msg),
			"not the leader: %s/leader is free, this manager's term %" PRIu64
			" has ended",
			s->es->prefix, s->term);
	} else {
		mgr_etcd_unb64(json_object_get(kv, "value"), &v, &n);
		snprintf(msg, sizeof(msg),
			"not the leader: %s/leader is held at term %" PRId64
			" (%.120s), this manager's term was %" PRIu64,
			s->es->prefix, mgr_etcd_int(kv, "create_revision"), v ? (char *)v : "",
			s->term);
		free(v);
	}
	mgr_es_fail(s, op, msg);
	snprintf(s->lost, sizeof(s->lost), "%s", s->err);
}

int
mgr_es_txn(struct mgr_store *s, const char *op, json_t *compares, json_t *success)
{
	char err[MGR_ETCD_ERR], term[32];
	json_t *txn, *ans = NULL, *guard;
	int rc;

	if (s->term == 0) {
		json_decref(compares);
		json_decref(success);
		return mgr_es_fail(s, op, "not the leader: a standby writes nothing");
	}
	if (compares == NULL)
		compares = json_array();
	snprintf(term, sizeof(term), "%" PRIu64, s->term);
	guard = json_pack("{s:s,s:o,s:s}", "target", "CREATE", "key",
		mgr_etcd_key(s->es->prefix, "/leader"), "create_revision", term);
	json_array_insert_new(compares, 0, guard);
	txn = json_pack("{s:o,s:o,s:[{s:{s:o}}]}", "compare", compares, "success", success,
		"failure", "request_range", "key", mgr_etcd_key(s->es->prefix, "/leader"));
	rc = mgr_etcd_call(s->es->etcd, "/v3/kv/txn", txn, false, &ans, err, sizeof(err));
	if (rc != 0)
		return mgr_es_fail(s, op, err);
	if (!json_is_true(json_object_get(ans, "succeeded"))) {
		json_t *resp = json_array_get(json_object_get(ans, "responses"), 0);
		json_t *kv = json_array_get(
			json_object_get(json_object_get(resp, "response_range"), "kvs"), 0);

		if (kv != NULL && (uint64_t)mgr_etcd_int(kv, "create_revision") == s->term)
			mgr_es_fail(s, op, "a key it must not overwrite exists already");
		else
			guard_failed(s, op, ans);
		json_decref(ans);
		return -LB_EIO;
	}
	json_decref(ans);
	return 0;
}

int
mgr_es_table(
	struct mgr_store *s, const uint8_t *buf, size_t n, const char *what, struct lb_ftable *ft)
{
	char e[256], msg[320];

	if (mgr_table_decode(buf, n, ft, e, sizeof(e)) != 0) {
		snprintf(msg, sizeof(msg), "stored table unreadable: %s", e);
		return mgr_es_fail(s, what, msg);
	}
	return 0;
}

/* ---- opening: is the prefix ours? ---- */

static bool
our_key(const char *rest)
{
	static const char *const names[] = {
		"/schema", "/leader", "/meta", "/desired", "/pools", "/committed", NULL};
	static const char *const dirs[] = {
		"/managers/", "/versions/", "/deltas/", "/tables/", "/rounds/", "/roundtbl/", NULL};
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(rest, names[i]) == 0)
			return true;
	for (i = 0; dirs[i] != NULL; i++)
		if (strncmp(rest, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return false;
}

static int
check_space(struct mgr_store *s)
{
	size_t plen = strlen(s->es->prefix), i, n;
	json_t *kvs = NULL;
	uint8_t *v;
	bool found;
	int rc;

	rc = mgr_es_get(s, "/schema", &found, &v, &n, NULL);
	if (rc != 0)
		return rc;
	if (found && strcmp((char *)v, MGR_ESTORE_SCHEMA) != 0) {
		snprintf(s->err, sizeof(s->err),
			"etcd prefix %s holds %s/schema = \"%.60s\", not \"%s\": another program's "
			"or another version's keys; give another prefix",
			s->es->prefix, s->es->prefix, (char *)v, MGR_ESTORE_SCHEMA);
		free(v);
		return -LB_EIO;
	}
	free(v);
	/* Some of its keys, in case the schema was never written (or is not ours). */
	rc = mgr_es_range(s, "/", NULL, false, 64, &kvs);
	for (i = 0; rc == 0 && i < json_array_size(kvs); i++) {
		uint8_t *k = NULL;

		mgr_etcd_unb64(json_object_get(json_array_get(kvs, i), "key"), &k, &n);
		if (k != NULL &&
			(n <= plen || !our_key((char *)k + plen) ||
				(!found && strcmp((char *)k + plen, "/leader") != 0 &&
					strncmp((char *)k + plen, "/managers/", 10) != 0))) {
			snprintf(s->err, sizeof(s->err),
				"etcd prefix %s holds %.200s, which is not a sluice manager's "
				"key%s: "
				"give another prefix (etcd.prefix)",
				s->es->prefix, (char *)k, found ? "" : " (and no schema key)");
			rc = -LB_EIO;
		}
		free(k);
	}
	json_decref(kvs);
	if (rc != 0 && !found && mgr_es_get(s, "/schema", &found, &v, &n, NULL) == 0) {
		/*
		 * Another manager initialised the key space between our two
		 * reads (its first write puts the schema and the meta at once):
		 * the space is ours after all.
		 */
		if (found && strcmp((char *)v, MGR_ESTORE_SCHEMA) == 0)
			rc = 0;
		free(v);
	}
	return rc;
}

void
mgr_es_close(struct mgr_store *s)
{
	if (s->es != NULL)
		mgr_etcd_free(s->es->etcd);
	free(s->es);
	free(s);
}

struct mgr_store *
mgr_store_open_etcd(const struct mgr_config *cfg, char *err, size_t len)
{
	const char *eps[MGR_ETCD_ENDPOINTS];
	struct mgr_etcd_cfg ec = {
		.endpoints = eps,
		.n_endpoints = cfg->mc_n_endpoints,
		.timeout_ms = cfg->mc_etcd_timeout_ms,
		.ca = cfg->mc_etcd_ca,
		.cert = cfg->mc_etcd_cert,
		.key = cfg->mc_etcd_key,
	};
	struct mgr_store *s = calloc(1, sizeof(*s));
	uint32_t i;

	if (s == NULL || (s->es = calloc(1, sizeof(*s->es))) == NULL) {
		free(s);
		snprintf(err, len, "etcd: out of memory");
		return NULL;
	}
	s->ops = &mgr_estore_ops;
	s->lock_fd = -1;
	for (i = 0; i < cfg->mc_n_endpoints; i++)
		eps[i] = cfg->mc_endpoints[i];
	snprintf(s->es->prefix, sizeof(s->es->prefix), "%s", cfg->mc_etcd_prefix);
	s->es->keep_versions = cfg->mc_keep_versions;
	s->es->etcd = mgr_etcd_new(&ec, err, len);
	if (s->es->etcd == NULL || check_space(s) != 0) {
		if (s->es->etcd != NULL)
			snprintf(err, len, "%s", s->err);
		mgr_es_close(s);
		return NULL;
	}
	return s;
}

/* ---- meta ---- */

int
mgr_es_load_meta(struct mgr_store *s, struct mgr_meta *m)
{
	json_t *j = NULL;
	int rc = mgr_es_get_json(s, "/meta", &j);

	memset(m, 0, sizeof(*m));
	if (rc != 0 || j == NULL)
		return rc;
	if (lb_hash_seed_parse(&m->mm_seed, mgr_es_str(j, "hash_seed")) == 0)
		m->mm_has_seed = true;
	m->mm_maglev_size = (uint32_t)mgr_es_u64(j, "maglev_size");
	m->mm_next_backend_id = (uint32_t)mgr_es_u64(j, "next_backend_id");
	m->mm_next_service_id = (uint32_t)mgr_es_u64(j, "next_service_id");
	json_decref(j);
	return 0;
}

static json_t *
meta_json(const struct mgr_meta *m)
{
	json_t *j = json_pack("{s:I,s:I,s:I}", "maglev_size", (json_int_t)m->mm_maglev_size,
		"next_backend_id", (json_int_t)m->mm_next_backend_id, "next_service_id",
		(json_int_t)m->mm_next_service_id);
	char seed[40];

	if (m->mm_has_seed) {
		snprintf(seed, sizeof(seed), "%016" PRIx64 "%016" PRIx64, m->mm_seed.k0,
			m->mm_seed.k1);
		json_object_set_new(j, "hash_seed", json_string(seed));
	}
	return j;
}

int
mgr_es_save_meta(struct mgr_store *s, const struct mgr_meta *m)
{
	const char *p = s->es->prefix;

	return mgr_es_txn(s, "save meta", NULL,
		json_pack("[o,o]",
			mgr_es_put(p, "/schema", MGR_ESTORE_SCHEMA, strlen(MGR_ESTORE_SCHEMA)),
			mgr_es_put_json(p, "/meta", meta_json(m))));
}

/* ---- tables and pools ---- */

int
mgr_es_load_committed(
	struct mgr_store *s, uint64_t *version, uint8_t digest[LB_DIGEST_LEN], struct lb_ftable *ft)
{
	char key[64], what[64];
	json_t *c = NULL, *row = NULL;
	uint8_t *v;
	size_t n;
	bool found;
	int rc;

	*version = 0;
	memset(digest, 0, LB_DIGEST_LEN);
	memset(ft, 0, sizeof(*ft));
	if ((rc = mgr_es_get_json(s, "/committed", &c)) != 0 || c == NULL)
		return rc;
	*version = mgr_es_u64(c, "version");
	json_decref(c);
	if (*version == 0)
		return 0;
	snprintf(what, sizeof(what), "load version %" PRIu64, *version);
	mgr_es_numkey(key, sizeof(key), "versions", *version);
	if ((rc = mgr_es_get_json(s, key, &row)) != 0)
		return rc;
	if (row != NULL)
		mgr_es_digest_parse(mgr_es_str(row, "digest"), digest);
	json_decref(row);
	mgr_es_numkey(key, sizeof(key), "tables", *version);
	if ((rc = mgr_es_get(s, key, &found, &v, &n, NULL)) != 0)
		return rc;
	if (!found)
		return mgr_es_fail(s, what, "no table stored");
	rc = mgr_es_table(s, v, n, what, ft);
	free(v);
	return rc;
}

int
mgr_es_load_desired(struct mgr_store *s, bool *found, struct lb_ftable *ft)
{
	uint8_t *v;
	size_t n;
	int rc;

	memset(ft, 0, sizeof(*ft));
	rc = mgr_es_get(s, "/desired", found, &v, &n, NULL);
	if (rc == 0 && *found)
		rc = mgr_es_table(s, v, n, "load desired table", ft);
	if (rc != 0)
		*found = false;
	free(v);
	return rc;
}

static json_t *
pools_json(const struct mgr_pools *ps)
{
	json_t *a = json_array();
	uint32_t i;

	for (i = 0; i < ps->ps_n; i++) {
		const struct mgr_pool_entry *e = &ps->ps_v[i];
		const struct mgr_pool *p = &e->pe_pool;
		char vip[LB_ADDR_STRLEN];
		json_t *o;

		lb_addr_ntop(e->pe_key.af, &e->pe_key.vip, vip, sizeof(vip));
		o = json_pack("{s:s,s:i,s:i,s:s,s:i,s:s,s:s}", "vip", vip, "protocol",
			e->pe_key.proto, "port", ntohs(e->pe_key.port), "probe",
			mgr_probe_name(p->pl_probe), "probe_port", p->pl_probe_port, "path",
			p->pl_path, "codes", p->pl_codes);
#define X(c, bit, pb, name) json_object_set_new(o, name, json_integer(p->pl_##c));
		LB_POOL_NUMBERS(X)
#undef X
		json_array_append_new(a, o);
	}
	return a;
}

int
mgr_es_load_pools(struct mgr_store *s, struct mgr_pools *ps)
{
	const char *op = "load pool options";
	json_t *a = NULL, *o;
	size_t i;
	int rc;

	memset(ps, 0, sizeof(*ps));
	if ((rc = mgr_es_get_json(s, "/pools", &a)) != 0 || a == NULL)
		return rc;
	json_array_foreach(a, i, o)
	{
		struct lb_pool_opts po = {.given = LB_POOL_ALL};
		struct mgr_pool p = *mgr_pool_defaults();
		const char *probe = mgr_es_str(o, "probe");
		struct lb_svc_key k;
		struct lb_addr va;
		char e[256];
		uint8_t af;

		/* The VIP as text of either family, canonical (lb_addr_ntop()). */
		if (lb_addr_parse(mgr_es_str(o, "vip"), LB_ADDR_ANY, &va, &af, e, sizeof(e)) != 0) {
			snprintf(e, sizeof(e), "bad vip \"%s\"", mgr_es_str(o, "vip"));
			rc = mgr_es_fail(s, op, e);
			break;
		}
		lb_svc_key_make(&k, af, &va, htons((uint16_t)mgr_es_u64(o, "port")),
			(uint8_t)mgr_es_u64(o, "protocol"));
		po.probe = strcmp(probe, "none") == 0	? LB_PROBE_NONE
			   : strcmp(probe, "http") == 0 ? LB_PROBE_HTTP
							: LB_PROBE_TCP;
		po.probe_port = (uint16_t)mgr_es_u64(o, "probe_port");
		snprintf(po.path, sizeof(po.path), "%s", mgr_es_str(o, "path"));
		snprintf(po.codes, sizeof(po.codes), "%s", mgr_es_str(o, "codes"));
#define X(c, bit, pb, name) po.c = (uint32_t)mgr_es_u64(o, name);
		LB_POOL_NUMBERS(X)
#undef X
		if (mgr_pool_apply(&p, &po, e, sizeof(e)) != 0 || mgr_pools_set(ps, &k, &p) != 0) {
			rc = mgr_es_fail(s, op, e);
			break;
		}
	}
	json_decref(a);
	if (rc != 0)
		mgr_pools_free(ps);
	return rc;
}

int
mgr_es_save_desired(struct mgr_store *s, const struct lb_ftable *ft, const struct mgr_pools *pools,
	const struct mgr_meta *m)
{
	const char *p = s->es->prefix;
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = mgr_table_encode(ft, &buf, &len);

	if (rc != 0)
		return mgr_es_fail(s, "store desired table", lb_strerror(rc));
	rc = mgr_es_txn(s, "store desired table", NULL,
		json_pack("[o,o,o,o]", mgr_es_put(p, "/desired", buf, len),
			mgr_es_put_json(p, "/pools", pools_json(pools)),
			mgr_es_put_json(p, "/meta", meta_json(m)),
			mgr_es_put(p, "/schema", MGR_ESTORE_SCHEMA, strlen(MGR_ESTORE_SCHEMA))));
	free(buf);
	return rc;
}

/* A key's mod_revision (0: absent), its value not read. */
static int
mod_revision(struct mgr_store *s, const char *suffix, int64_t *rev)
{
	json_t *r =
		json_pack("{s:o,s:b}", "key", mgr_etcd_key(s->es->prefix, suffix), "keys_only", 1);
	char err[MGR_ETCD_ERR];
	json_t *ans = NULL;

	*rev = 0;
	if (mgr_etcd_call(s->es->etcd, "/v3/kv/range", r, true, &ans, err, sizeof(err)) != 0)
		return mgr_es_fail(s, suffix + 1, err);
	*rev = mgr_etcd_int(json_array_get(json_object_get(ans, "kvs"), 0), "mod_revision");
	json_decref(ans);
	return 0;
}

/* The desired table's and its pools' mod revisions, summed: they only grow. */
int
mgr_es_desired_stamp(struct mgr_store *s, uint64_t *stamp)
{
	int64_t a = 0, b = 0;
	int rc = mod_revision(s, "/desired", &a);

	if (rc == 0)
		rc = mod_revision(s, "/pools", &b);
	*stamp = (uint64_t)(a + b);
	return rc;
}

/* Every operation is mgr_es_<op> (MGR_STORE_OPS). */
#define MGR_STORE_OP_ES(ret, op, params) .op = mgr_es_##op,
const struct mgr_store_ops mgr_estore_ops = {.name = "etcd", MGR_STORE_OPS(MGR_STORE_OP_ES)};
#undef MGR_STORE_OP_ES
