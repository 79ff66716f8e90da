/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client of etcd's v3 HTTP/JSON gateway (etcd 3.4: POST /v3/kv/range,
 * /v3/kv/put, /v3/kv/txn, /v3/kv/deleterange, /v3/lease/grant,
 * /v3/lease/keepalive, /v3/lease/revoke, /v3/watch), over libcurl, the
 * JSON through jansson. No gRPC stack: the gateway is the same API in
 * JSON, keys and values in base64, 64-bit integers as strings.
 *
 * Why libcurl rather than nng's HTTP client: the watch is a response that
 * never ends, a JSON object per event, which libcurl hands over as it
 * comes (a write callback) while nng 1.5.2's client reads a response
 * whole; libcurl also gives a connect timeout apart from the request's,
 * and https to etcd with a client certificate for free.
 *
 * Every call is bounded: timeout_ms in all, each endpoint given
 * MGR_ETCD_CONNECT_MS to accept. The endpoints are tried in turn from the
 * last that answered; a request moves to the next endpoint only when the
 * last one surely did not get it (it could not be connected to), or for a
 * read, which repeating cannot harm. So a write that timed out is reported
 * as failed though etcd may have applied it: callers whose writes are
 * guarded (create-only keys, the leader's term) check by reading back.
 *
 * One handle per thread: curl easy handles are not shared.
 */
#ifndef MGR_ETCD_H
#define MGR_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define MGR_ETCD_CONNECT_MS 300
#define MGR_ETCD_ERR 512

struct mgr_etcd;

struct mgr_etcd_cfg {
	const char *const *endpoints; /* "http://127.0.0.1:2379", ... */
	uint32_t n_endpoints;
	uint32_t timeout_ms;
	const char *ca, *cert, *key; /* https: NULL or "" when unused */
};

/* NULL when out of memory (or curl cannot start), with err. */
struct mgr_etcd *mgr_etcd_new(const struct mgr_etcd_cfg *cfg, char *err, size_t len);

void mgr_etcd_free(struct mgr_etcd *e);

/*
 * POST `body` (taken over, freed here) to `path` ("/v3/kv/range"), the
 * answer's JSON in *out (json_decref it). idempotent: may be repeated on
 * another endpoint after any failure (a read). Returns 0, or -LB_EIO with
 * err ("etcd http://127.0.0.1:2379/v3/kv/txn: timed out after 1000 ms";
 * an error etcd answered: "etcd: etcdserver: request is too large").
 */
int mgr_etcd_call(struct mgr_etcd *e, const char *path, json_t *body, bool idempotent, json_t **out,
	char *err, size_t len);

/*
 * A streaming call (/v3/watch): on_msg is given each JSON object as it
 * arrives (borrowed), and returns 0 to go on, anything else to end the
 * call. It also ends when *stop is set (looked at every 100 ms), after
 * max_ms, or when the endpoint closes it. Returns 0 (ended by on_msg,
 * stop or max_ms), or -LB_EIO with err.
 */
int mgr_etcd_stream(struct mgr_etcd *e, const char *path, json_t *body,
	int (*on_msg)(void *ctx, json_t *msg), void *ctx, const int *stop, uint32_t max_ms,
	char *err, size_t len);

/* The endpoint that answered last (for logs). */
const char *mgr_etcd_endpoint(const struct mgr_etcd *e);

/* ---- the gateway's encodings ---- */

/* Bytes as a base64 JSON string (NULL when out of memory). */
json_t *mgr_etcd_b64(const void *p, size_t n);

/* A key prefix + suffix ("/sluice/prod" "/leader") as a base64 JSON string. */
json_t *mgr_etcd_key(const char *prefix, const char *suffix);

/* The smallest key greater than every key beginning with prefix + suffix, in base64. */
json_t *mgr_etcd_range_end(const char *prefix, const char *suffix);

/* A base64 JSON string's bytes (malloc'd, NUL-terminated; *n without it). 0 or -LB_EPARSE. */
int mgr_etcd_unb64(const json_t *s, uint8_t **out, size_t *n);

/* An int64 the gateway sends as a string (or omits: 0). */
int64_t mgr_etcd_int(const json_t *obj, const char *name);

#endif /* MGR_ETCD_H */
