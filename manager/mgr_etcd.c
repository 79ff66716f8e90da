/* SPDX-License-Identifier: BSD-3-Clause */
/* etcd's v3 JSON gateway over libcurl (mgr_etcd.h has the design). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <mbedtls/base64.h>

#include "lb_clock.h"
#include "lb_err.h"
#include "mgr_etcd.h"

#define MAX_ANSWER (64u << 20) /* an answer larger than this is refused */

struct mgr_etcd {
	CURL *curl;
	struct mgr_etcd_cfg cfg;
	char endpoints[8][256];
	uint32_t cur; /* the endpoint that answered last */
};

/* What the write callback collects: the whole answer, or one line at a time. */
struct sink {
	char *buf;
	size_t n, cap;
	bool too_big;
	/* streaming */
	int (*on_msg)(void *ctx, json_t *msg);
	void *ctx;
	int ended; /* on_msg asked to end */
	const int *stop;
	uint64_t until_ms;
};

static void say(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

struct mgr_etcd *
mgr_etcd_new(const struct mgr_etcd_cfg *cfg, char *err, size_t len)
{
	static int curl_ready;
	struct mgr_etcd *e = lb_zalloc(sizeof(*e), "etcd", err, len);
	uint32_t i;

	if (e == NULL)
		return NULL;
	/* Not thread-safe: the first handle is made before any thread starts. */
	if (!__atomic_exchange_n(&curl_ready, 1, __ATOMIC_ACQ_REL))
		curl_global_init(CURL_GLOBAL_DEFAULT);
	e->curl = curl_easy_init();
	if (e->curl == NULL) {
		say(err, len, "etcd: curl_easy_init failed");
		free(e);
		return NULL;
	}
	e->cfg = *cfg;
	for (i = 0; i < cfg->n_endpoints && i < 8; i++)
		snprintf(e->endpoints[i], sizeof(e->endpoints[i]), "%s", cfg->endpoints[i]);
	e->cfg.n_endpoints = i;
	return e;
}

void
mgr_etcd_free(struct mgr_etcd *e)
{
	if (e == NULL)
		return;
	curl_easy_cleanup(e->curl);
	free(e);
}

const char *
mgr_etcd_endpoint(const struct mgr_etcd *e)
{
	return e->endpoints[e->cur];
}

static int
grow(struct sink *k, size_t add)
{
	size_t cap;
	char *nb;

	if (k->n + add + 1 <= k->cap)
		return 0;
	if (k->n + add > MAX_ANSWER) {
		k->too_big = true;
		return -1;
	}
	cap = (k->n + add + 1) * 2;
	nb = realloc(k->buf, cap);
	if (nb == NULL)
		return -1;
	k->buf = nb;
	k->cap = cap;
	return 0;
}

/* A streaming answer: one JSON object per line, each handed over whole. */
static void
stream_lines(struct sink *k)
{
	char *nl;

	while (!k->ended && (nl = memchr(k->buf, '\n', k->n)) != NULL) {
		size_t line = (size_t)(nl - k->buf);
		json_t *j = line > 0 ? json_loadb(k->buf, line, 0, NULL) : NULL;

		if (j != NULL) {
			if (k->on_msg(k->ctx, j) != 0)
				k->ended = 1;
			json_decref(j);
		}
		memmove(k->buf, nl + 1, k->n - line - 1);
		k->n -= line + 1;
	}
}

static size_t
on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct sink *k = arg;
	size_t n = size * nmemb;

	if (grow(k, n) != 0)
		return 0; /* curl fails the transfer */
	memcpy(k->buf + k->n, p, n);
	k->n += n;
	if (k->on_msg != NULL) {
		stream_lines(k);
		if (k->ended)
			return 0;
	}
	return n;
}

/* Streaming: the stop flag and the end time, looked at as curl progresses. */
static int
on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct sink *k = arg;

	(void)a, (void)b, (void)c, (void)d;
	if (k->stop != NULL && __atomic_load_n(k->stop, __ATOMIC_ACQUIRE))
		return 1;
	return k->until_ms != 0 && lb_now_ms() >= k->until_ms ? 1 : 0;
}

/* The error etcd answered with, from its JSON ({"error":..., "message":...}). */
static void
etcd_error(const char *buf, size_t n, long code, const char *url, char *err, size_t len)
{
	json_t *j = json_loadb(buf, n, 0, NULL);
	const char *msg = j != NULL ? json_string_value(json_object_get(j, "message")) : NULL;

	if (msg == NULL && j != NULL)
		msg = json_string_value(json_object_get(j, "error"));
	if (msg != NULL)
		say(err, len, "etcd %s: %s", url, msg);
	else
		say(err, len, "etcd %s: HTTP %ld: %.120s", url, code, n ? buf : "(no body)");
	json_decref(j);
}

/* One attempt on endpoint i; rc CURLcode in *cc. */
static int
attempt(struct mgr_etcd *e, uint32_t i, const char *path, const char *body, struct sink *k,
	uint32_t budget_ms, CURLcode *cc, long *code, char *url, size_t ulen)
{
	CURL *c = e->curl;
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	snprintf(url, ulen, "%s%s", e->endpoints[i], path);
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, k);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
		(long)(budget_ms < MGR_ETCD_CONNECT_MS ? budget_ms : MGR_ETCD_CONNECT_MS));
	if (k->on_msg == NULL) {
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)budget_ms);
	} else {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, k);
	}
	if (e->cfg.ca != NULL && e->cfg.ca[0] != '\0')
		curl_easy_setopt(c, CURLOPT_CAINFO, e->cfg.ca);
	if (e->cfg.cert != NULL && e->cfg.cert[0] != '\0') {
		curl_easy_setopt(c, CURLOPT_SSLCERT, e->cfg.cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, e->cfg.key);
	}
	*cc = curl_easy_perform(c);
	*code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
	curl_slist_free_all(h);
	return *cc == CURLE_OK && *code == 200 ? 0 : -1;
}

/* Did the endpoint surely not get the request? Then another one may have it. */
static bool
not_sent(CURLcode cc)
{
	return cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
	       cc == CURLE_COULDNT_RESOLVE_PROXY;
}

static int
perform(struct mgr_etcd *e, const char *path, json_t *body, bool idempotent, struct sink *k,
	uint32_t budget_ms, char *err, size_t len)
{
	char *text = json_dumps(body, JSON_COMPACT);
	uint64_t start = lb_now_ms();
	char url[512], tried[MGR_ETCD_ERR] = "";
	uint32_t n, i;
	size_t off = 0;
	CURLcode cc = CURLE_OK;
	long code = 0;
	int rc = -LB_EIO;

	json_decref(body);
	if (text == NULL) {
		say(err, len, "etcd: out of memory");
		return -LB_ENOMEM;
	}
	for (n = 0; n < e->cfg.n_endpoints; n++) {
		uint64_t spent = lb_now_ms() - start;

		if (spent >= budget_ms && n > 0)
			break;
		i = (e->cur + n) % e->cfg.n_endpoints;
		k->n = 0;
		if (attempt(e, i, path, text, k, (uint32_t)(budget_ms - (n ? spent : 0)), &cc,
			    &code, url, sizeof(url)) == 0) {
			e->cur = i;
			rc = 0;
			break;
		}
		if (cc == CURLE_OK || (k->on_msg != NULL && k->ended)) {
			/* etcd answered (an error of its own), or the stream was ended. */
			e->cur = i;
			if (cc == CURLE_OK && code != 200)
				etcd_error(k->buf, k->n, code, url, err, len);
			rc = cc == CURLE_OK && code != 200 ? -LB_EIO : 0;
			break;
		}
		if (k->on_msg != NULL && (cc == CURLE_ABORTED_BY_CALLBACK)) {
			e->cur = i;
			rc = 0; /* stopped, or its time is up */
			break;
		}
		if (off < sizeof(tried))
			off += (size_t)snprintf(tried + off, sizeof(tried) - off, "%s%s: %s",
				off ? "; " : "", url,
				cc == CURLE_OPERATION_TIMEDOUT ? "timed out"
							       : curl_easy_strerror(cc));
		if (!idempotent && !not_sent(cc))
			break; /* it may have been applied: do not apply it twice */
	}
	if (rc != 0 && tried[0] != '\0')
		say(err, len, "etcd: %s (within %u ms)", tried, budget_ms);
	if (rc != 0 && k->too_big)
		say(err, len, "etcd %s: answer larger than %u bytes", path, MAX_ANSWER);
	free(text);
	return rc;
}

int
mgr_etcd_call(struct mgr_etcd *e, const char *path, json_t *body, bool idempotent, json_t **out,
	char *err, size_t len)
{
	struct sink k = {0};
	json_error_t je;
	int rc;

	*out = NULL;
	if (body == NULL) {
		say(err, len, "etcd: out of memory");
		return -LB_ENOMEM;
	}
	rc = perform(e, path, body, idempotent, &k, e->cfg.timeout_ms, err, len);
	if (rc == 0) {
		*out = json_loadb(k.buf != NULL ? k.buf : "", k.n, 0, &je);
		if (*out == NULL) {
			say(err, len, "etcd %s %s: answer is not JSON: %s", mgr_etcd_endpoint(e),
				path, je.text);
			rc = -LB_EIO;
		}
	}
	free(k.buf);
	return rc;
}

int
mgr_etcd_stream(struct mgr_etcd *e, const char *path, json_t *body,
	int (*on_msg)(void *ctx, json_t *msg), void *ctx, const int *stop, uint32_t max_ms,
	char *err, size_t len)
{
	struct sink k = {.on_msg = on_msg, .ctx = ctx, .stop = stop};
	int rc;

	if (body == NULL) {
		say(err, len, "etcd: out of memory");
		return -LB_ENOMEM;
	}
	k.until_ms = lb_now_ms() + max_ms;
	rc = perform(e, path, body, true, &k, max_ms, err, len);
	free(k.buf);
	return rc;
}

/* ---- encodings ---- */

json_t *
mgr_etcd_b64(const void *p, size_t n)
{
	size_t olen = 0, cap = 4 * ((n + 2) / 3) + 1;
	unsigned char *buf = malloc(cap);
	json_t *j;

	if (buf == NULL)
		return NULL;
	if (mbedtls_base64_encode(buf, cap, &olen, p, n) != 0) {
		free(buf);
		return NULL;
	}
	j = json_stringn((const char *)buf, olen);
	free(buf);
	return j;
}

json_t *
mgr_etcd_key(const char *prefix, const char *suffix)
{
	char k[512];
	int n = snprintf(k, sizeof(k), "%s%s", prefix, suffix);

	return n < 0 || (size_t)n >= sizeof(k) ? NULL : mgr_etcd_b64(k, (size_t)n);
}

json_t *
mgr_etcd_range_end(const char *prefix, const char *suffix)
{
	char k[512];
	int n = snprintf(k, sizeof(k), "%s%s", prefix, suffix);

	if (n <= 0 || (size_t)n >= sizeof(k))
		return NULL;
	/* Keys here are printable ASCII: the last byte + 1 never carries. */
	k[n - 1]++;
	return mgr_etcd_b64(k, (size_t)n);
}

int
mgr_etcd_unb64(const json_t *s, uint8_t **out, size_t *n)
{
	const char *t = json_string_value(s);
	size_t len = t != NULL ? strlen(t) : 0, olen = 0;
	uint8_t *buf;

	*out = NULL;
	*n = 0;
	if (t == NULL) {
		/* An empty value is left out of the JSON. */
		*out = calloc(1, 1);
		return *out != NULL ? 0 : -LB_ENOMEM;
	}
	buf = malloc(len / 4 * 3 + 4);
	if (buf == NULL)
		return -LB_ENOMEM;
	if (mbedtls_base64_decode(buf, len / 4 * 3 + 3, &olen, (const unsigned char *)t, len) !=
		0) {
		free(buf);
		return -LB_EPARSE;
	}
	buf[olen] = '\0';
	*out = buf;
	*n = olen;
	return 0;
}

int64_t
mgr_etcd_int(const json_t *obj, const char *name)
{
	const json_t *v = json_object_get(obj, name);

	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v);
	return 0;
}
