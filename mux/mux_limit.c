/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admission control on a worker (mux_limit.h): shares, buckets, the walk
 * over a service's rules.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "dp_counters.h"
#include "lb_codec.h"
#include "lb_err.h"
#include "lb_flow.h"
#include "lb_parse.h"
#include "mux_conn.h"
#include "mux_gen.h"
#include "mux_limit.h"
#include "mux_worker.h"

int
mux_limit_init(struct mux_limits *l, uint32_t cap_services, int socket)
{
	memset(l, 0, sizeof(*l));
	l->svc = rte_zmalloc_socket(
		"mux_lim_svc", sizeof(*l->svc) * cap_services, RTE_CACHE_LINE_SIZE, socket);
	l->src = rte_zmalloc_socket(
		"mux_lim_src", sizeof(*l->src) * MUX_LIM_SOURCES, RTE_CACHE_LINE_SIZE, socket);
	l->cap_services = cap_services;
	return l->svc != NULL && l->src != NULL ? 0 : -LB_ENOMEM;
}

void
mux_limit_fini(struct mux_limits *l)
{
	rte_free(l->svc);
	rte_free(l->src);
	memset(l, 0, sizeof(*l));
}

/* This worker's share of a rule's limit or burst, through the mux's divisor. */
static inline uint32_t
share(const struct mux_worker *w, uint32_t total, uint64_t mux_share)
{
	uint32_t n = w->ctx->n_workers != 0 ? w->ctx->n_workers : 1;
	uint32_t div = (uint32_t)(mux_share >> 32), idx = (uint32_t)mux_share;

	if (div == 0)
		div = 1;
	return lb_share(lb_share(total, div, idx % div), n, w->idx % n);
}

/* A bucket whose rate changed keeps its credit, never above the new depth. */
static void
rate_set(const struct mux_worker *w, struct lb_tb_rate *r, const struct lb_limit_rule *rule,
	uint64_t div)
{
	uint32_t burst = rule->burst != 0 ? rule->burst : rule->limit;

	lb_tb_rate_set(r, share(w, rule->limit, div), share(w, burst, div), w->ctx->tsc_hz);
}

static void
svc_shares(struct mux_worker *w, const struct mux_gen *g, uint32_t svc, struct mux_lim_svc *ls,
	uint64_t div, uint64_t now)
{
	const struct lb_svc_limits *r = &g->limits[svc];
	const struct lb_svc_key *key = &g->services[svc].key;
	bool fresh = ls->built == 0 || memcmp(&ls->key, key, sizeof(*key)) != 0;

	/*
	 * Another service under a sid that had one before (held while its
	 * connections lived: mux_update.c's hold_recent()): its own talkers,
	 * its bucket full. Its counters run on from the last service's, which
	 * were taken as its base when the sid was given (mux_lim_base): a
	 * worker that clears its share here, at the service's first check,
	 * would make the sum of the workers' go back.
	 */
	if (fresh && ls->built != 0)
		memset(&ls->top, 0, sizeof(ls->top));
	ls->key = *key;
	rate_set(w, &ls->rate, &r->rule[LB_LIM_RATE], div);
	rate_set(w, &ls->src, &r->rule[LB_LIM_SOURCE], div);
	ls->conns = share(w, r->rule[LB_LIM_CONNS].limit, div);
	if (fresh)
		lb_tb_init(&ls->tb, &ls->rate, now);
	else if (ls->tb.credit > ls->rate.cap)
		ls->tb.credit = ls->rate.cap;
	ls->built = g->version + 1;
	ls->div = div;
}

/* Count one check of a rule; true if it refuses the connection. */
static inline bool
judge(struct mux_worker *w, struct mux_lim_cnt *c, bool ok, uint8_t mode)
{
	c->checked++;
	w->cnt.limit_checked++;
	if (ok) {
		c->passed++;
		return false;
	}
	if (mode == LB_LIMIT_MONITOR) {
		c->would_deny++;
		w->cnt.limit_would_deny++;
		return false;
	}
	c->denied++;
	w->cnt.limit_denied++;
	return true;
}

/*
 * A packet's source prefix as the per-source table's key. IPv4: (sid + 1)
 * << 32 | the prefix, exact. IPv6: the prefix (default /64) and the
 * service id hashed into 64 bits under the generation's secret seed
 * (SipHash), and the top bit set so that it never equals an IPv4 key. Two
 * prefixes share a bucket only by chance: an unkeyed fold let a client
 * compute an address whose bucket was its victim's.
 */
static uint64_t
src_key(const struct mux_gen *g, uint32_t sid, const uint8_t *p, const struct lb_pkt *pi,
	uint8_t prefix)
{
	uint64_t w[3];
	uint32_t a;

	if (!pi->v6) {
		a = lb_be32_to_cpu(pi->src);
		if (prefix != 0 && prefix < 32)
			a &= ~0u << (32 - prefix);
		return (uint64_t)(sid + 1) << 32 | a;
	}
	memcpy(w, lb_pkt_src6(p, pi), 16);
	w[0] = lb_be64_to_cpu(w[0]);
	w[1] = lb_be64_to_cpu(w[1]);
	if (prefix == 0)
		prefix = 64;
	if (prefix <= 64) {
		w[0] &= ~0ull << (64 - prefix); /* prefix >= 1: a shift of 0..63 */
		w[1] = 0;
	} else if (prefix < 128) {
		w[1] &= ~0ull << (128 - prefix);
	}
	w[2] = sid;
	return lb_siphash13(&g->seed, w, sizeof(w)) | 1ull << 63;
}

/* The bucket of (service, source prefix): a newcomer in a taken slot starts full. */
static struct lb_tbucket *
src_bucket(struct mux_limits *l, const struct mux_lim_svc *ls, uint64_t key, uint64_t now)
{
	struct mux_lim_src *e;

	e = &l->src[((key * 0x9e3779b97f4a7c15ULL) >> 52) & (MUX_LIM_SOURCES - 1)];
	if (e->key != key) {
		e->key = key;
		lb_tb_init(&e->tb, &ls->src, now);
	}
	return &e->tb;
}

int
mux_limit_check(struct mux_worker *w, const struct mux_gen *g, uint32_t svc,
	const struct lb_pkt *pi, const uint8_t *p)
{
	struct mux_limits *l = &w->lim;
	const struct mux_service *s = &g->services[svc];
	const struct lb_svc_limits *r = &g->limits[svc];
	uint64_t div = *(const volatile uint64_t *)&w->ctx->lim_share;
	uint64_t now = rte_rdtsc();
	struct mux_lim_svc *ls = &l->svc[s->sid];
	bool deny = false;

	if (unlikely(ls->built != g->version + 1 || ls->div != div))
		svc_shares(w, g, svc, ls, div, now);
	/* Top talkers are IPv4 sources: the summary's key is 32 bits. */
	if (!pi->v6)
		lb_topk_add(&ls->top, pi->src);
	if (r->rule[LB_LIM_SOURCE].limit != 0) {
		struct lb_tbucket *b =
			src_bucket(l, ls, src_key(g, s->sid, p, pi, r->source_prefix), now);

		deny = judge(w, &ls->cnt[LB_LIM_SOURCE], lb_tb_take(b, &ls->src, now),
			r->rule[LB_LIM_SOURCE].mode);
	}
	if (!deny && r->rule[LB_LIM_RATE].limit != 0)
		deny = judge(w, &ls->cnt[LB_LIM_RATE], lb_tb_take(&ls->tb, &ls->rate, now),
			r->rule[LB_LIM_RATE].mode);
	if (!deny && r->rule[LB_LIM_CONNS].limit != 0)
		deny = judge(w, &ls->cnt[LB_LIM_CONNS],
			(pi->v6 ? w->conn6->svc_live : w->conn->svc_live)[s->sid] < ls->conns,
			r->rule[LB_LIM_CONNS].mode);
	if (!deny && g->mux_rate.limit != 0) {
		if (unlikely(l->mux_built != g->version + 1)) {
			bool fresh = l->mux_built == 0;

			/* The mux-wide cap is the mux's own: not divided among muxes. */
			rate_set(w, &l->mux_rate, &g->mux_rate, 1);
			if (fresh)
				lb_tb_init(&l->mux_tb, &l->mux_rate, now);
			else if (l->mux_tb.credit > l->mux_rate.cap)
				l->mux_tb.credit = l->mux_rate.cap;
			l->mux_built = g->version + 1;
		}
		deny = judge(w, &l->mux_cnt, lb_tb_take(&l->mux_tb, &l->mux_rate, now),
			g->mux_rate.mode);
	}
	return deny ? 1 + r->refuse : 0;
}

void
mux_limit_sum(const struct mux_worker *ws, uint16_t n, const struct mux_lim_base *base,
	uint32_t sid, int kind, struct mux_lim_cnt *out)
{
	const struct mux_lim_cnt *b = base != NULL && kind != LB_LIM_N ? &base[sid].k[kind] : NULL;
	uint16_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		const struct mux_lim_cnt *c =
			kind == LB_LIM_N ? &ws[i].lim.mux_cnt : &ws[i].lim.svc[sid].cnt[kind];

		out->checked += DP_RD(c->checked);
		out->passed += DP_RD(c->passed);
		out->would_deny += DP_RD(c->would_deny);
		out->denied += DP_RD(c->denied);
	}
	if (b != NULL) {
		out->checked -= b->checked;
		out->passed -= b->passed;
		out->would_deny -= b->would_deny;
		out->denied -= b->denied;
	}
}

static void
cnt_json(FILE *out, const char *name, const struct mux_lim_cnt *c, bool first)
{
	fprintf(out,
		"%s\"%s\":{\"checked\":%" PRIu64 ",\"passed\":%" PRIu64 ",\"would_deny\":%" PRIu64
		",\"denied\":%" PRIu64 "}",
		first ? "" : ",", name, c->checked, c->passed, c->would_deny, c->denied);
}

/*
 * The service's top talkers merged over the n workers, largest first, into
 * e (room for LB_TOP_REPORTED); each worker's summary copied as it may be
 * writing it (lb_topk_copy()). Returns how many.
 */
static uint32_t
top_merged(const struct mux_worker *ws, uint16_t n, uint32_t sid, struct lb_topk_entry *e)
{
	struct lb_topk *c = calloc(n + 1, sizeof(*c));
	const struct lb_topk **t = calloc(n + 1, sizeof(*t));
	struct lb_topk_entry *all = calloc((size_t)n * LB_TOPK + 1, sizeof(*all));
	uint32_t m = 0, i;

	if (c != NULL && t != NULL && all != NULL) {
		for (i = 0; i < n; i++) {
			lb_topk_copy(&c[i], &ws[i].lim.svc[sid].top);
			t[i] = &c[i];
		}
		m = lb_topk_merge(t, n, all);
		if (m > LB_TOP_REPORTED)
			m = LB_TOP_REPORTED;
		memcpy(e, all, m * sizeof(*e));
	}
	free(c);
	free(t);
	free(all);
	return m;
}

/* The service's top talkers over the workers, with their error bounds. */
static void
top_json(FILE *out, const struct mux_worker *ws, uint16_t n, uint32_t sid)
{
	struct lb_topk_entry e[LB_TOP_REPORTED];
	uint32_t m = top_merged(ws, n, sid, e), i;

	fprintf(out, ",\"top\":[");
	for (i = 0; i < m; i++) {
		const uint8_t *a = (const uint8_t *)&e[i].key;

		fprintf(out,
			"%s{\"src\":\"%u.%u.%u.%u\",\"count\":%" PRIu64 ",\"err\":%" PRIu64 "}",
			i ? "," : "", a[0], a[1], a[2], a[3], e[i].count, e[i].err);
	}
	fprintf(out, "]");
}

void
mux_limit_json(FILE *out, const struct mux_worker *ws, uint16_t n, const struct mux_lim_base *base,
	const struct mux_gen *g, uint32_t svc)
{
	const struct lb_svc_limits *r = &g->limits[svc];
	uint32_t sid = g->services[svc].sid;
	uint64_t live = 0, held = 0;
	struct mux_lim_cnt c;
	bool first = true;
	uint16_t i;
	int k;

	/* A service is of one family: its entries are in one of the two tables. */
	for (i = 0; i < n; i++) {
		bool v6 = g->services[svc].key.af == LB_AF_INET6;
		const uint32_t *l = v6 ? ws[i].conn6->svc_live : ws[i].conn->svc_live;
		const uint32_t *h = v6 ? ws[i].conn6->svc_held : ws[i].conn->svc_held;

		live += *(const volatile uint32_t *)&l[sid];
		held += *(const volatile uint32_t *)&h[sid];
	}
	fprintf(out, ",\"live\":%" PRIu64 ",\"held\":%" PRIu64, live, held);
	if (!g->services[svc].checks)
		return;
	top_json(out, ws, n, sid);
	if (!lb_limits_any(r))
		return;
	fprintf(out, ",\"limits\":{");
	for (k = 0; k < LB_LIM_N; k++) {
		if (r->rule[k].limit == 0)
			continue;
		mux_limit_sum(ws, n, base, sid, k, &c);
		cnt_json(out, lb_limit_kind_names[k], &c, first);
		first = false;
	}
	fprintf(out, "%s\"refuse\":\"%s\"}", first ? "" : ",", lb_refuse_names[r->refuse % 3]);
}

void
mux_limit_json_mux(FILE *out, const struct mux_worker *ws, uint16_t n, const struct mux_gen *g)
{
	struct mux_lim_cnt c;

	if (g->mux_rate.limit == 0)
		return;
	mux_limit_sum(ws, n, NULL, 0, LB_LIM_N, &c);
	fprintf(out, ",");
	cnt_json(out, "mux_new_per_second", &c, true);
}

static void
status_put(struct lb_counter *out, uint32_t *n, uint32_t max, const char *name, uint64_t v)
{
	lb_counter_put(out, n, max, name, v);
}

uint32_t
mux_limit_status(const struct mux_worker *ws, uint16_t nw, const struct mux_lim_base *base,
	const struct mux_gen *g, struct lb_counter *out, uint32_t max)
{
	char name[LB_LIMIT_COUNTER_LEN];
	struct lb_topk_entry top[LB_TOP_REPORTED];
	struct mux_lim_cnt c;
	uint32_t n = 0, s, m;
	int k, i, f;

	for (s = 0; s < g->n_services; s++) {
		const struct mux_service *sv = &g->services[s];

		for (k = 0; k < LB_LIM_N; k++) {
			if (g->limits[s].rule[k].limit == 0)
				continue;
			mux_limit_sum(ws, nw, base, sv->sid, k, &c);
			for (i = 0; i < 4; i++) {
				lb_limit_counter_name(name, sizeof(name), &sv->key.vip, sv->key.af,
					lb_be16_to_cpu(sv->key.port), sv->key.proto, k, i);
				status_put(out, &n, max, name, (&c.checked)[i]);
			}
		}
	}
	if (g->mux_rate.limit != 0) {
		mux_limit_sum(ws, nw, NULL, 0, LB_LIM_N, &c);
		for (i = 0; i < 4; i++) {
			lb_limit_counter_name(name, sizeof(name), NULL, 0, 0, 0, LB_LIM_N, i);
			status_put(out, &n, max, name, (&c.checked)[i]);
		}
	}
	/* After the rules' counters, which come first when STATUS is short of room. */
	for (s = 0; s < g->n_services; s++) {
		const struct mux_service *sv = &g->services[s];

		/* Top talkers are IPv4 sources: an IPv6 service's are not reported. */
		m = sv->checks && sv->key.af == LB_AF_INET ? top_merged(ws, nw, sv->sid, top) : 0;
		for (i = 0; i < (int)m; i++)
			for (f = 0; f < 3; f++) {
				lb_top_counter_name(name, sizeof(name), sv->key.vip.a32[0],
					lb_be16_to_cpu(sv->key.port), sv->key.proto, i, f);
				status_put(out, &n, max, name,
					f == 0	 ? top[i].key
					: f == 1 ? top[i].count
						 : top[i].err);
			}
	}
	return n;
}
