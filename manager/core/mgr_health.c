/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DIP health: the records, their schedule (one heap), rise and fall. The
 * probes themselves are the prober's (mgr_dip_prober.c); the effective
 * table is mgr_effective.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "mgr_hrec.h"
#include "mgr_text.h"

#define MGR_NOSOCK_RETRY_MS 1000 /* a probe the manager had no socket for */
#define MGR_STAGGER_MS 1	 /* first probes of a sync, at most one per ms... */

/* ---- the heap of next events ---- */

static void
heap_set(struct mgr_health *h, uint32_t i, struct mgr_hrec *r)
{
	h->h_heap[i] = r;
	r->hr_heap = i;
}

static void
heap_up(struct mgr_health *h, uint32_t i)
{
	struct mgr_hrec *r = h->h_heap[i];

	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (h->h_heap[p]->hr_due <= r->hr_due)
			break;
		heap_set(h, i, h->h_heap[p]);
		i = p;
	}
	heap_set(h, i, r);
}

static void
heap_down(struct mgr_health *h, uint32_t i)
{
	struct mgr_hrec *r = h->h_heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->h_n_heap)
			break;
		if (c + 1 < h->h_n_heap && h->h_heap[c + 1]->hr_due < h->h_heap[c]->hr_due)
			c++;
		if (r->hr_due <= h->h_heap[c]->hr_due)
			break;
		heap_set(h, i, h->h_heap[c]);
		i = c;
	}
	heap_set(h, i, r);
}

static void
heap_remove(struct mgr_health *h, struct mgr_hrec *r)
{
	uint32_t i = r->hr_heap;
	struct mgr_hrec *last;

	if (i == MGR_NO_HEAP)
		return;
	r->hr_heap = MGR_NO_HEAP;
	last = h->h_heap[--h->h_n_heap];
	if (i == h->h_n_heap)
		return;
	heap_set(h, i, last);
	heap_up(h, i);
	heap_down(h, last->hr_heap);
}

/* Room for n records in the heap (made before a sync changes anything). */
static int
heap_reserve(struct mgr_health *h, size_t n)
{
	struct mgr_hrec **v;

	if (n <= h->h_cap_heap)
		return 0;
	v = realloc(h->h_heap, n * sizeof(*v));
	if (v == NULL)
		return -LB_ENOMEM;
	h->h_heap = v;
	h->h_cap_heap = (uint32_t)n;
	return 0;
}

/* Put r in the heap due at `due`, or move it there. There is room: every record fits. */
static void
schedule(struct mgr_health *h, struct mgr_hrec *r, uint64_t due)
{
	r->hr_due = due;
	if (r->hr_heap == MGR_NO_HEAP)
		heap_set(h, h->h_n_heap++, r);
	heap_up(h, r->hr_heap);
	heap_down(h, r->hr_heap);
}

/* ---- life ---- */

struct mgr_health *
mgr_health_new(mgr_health_release_fn release, void *ctx)
{
	struct mgr_health *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	h->h_release = release;
	h->h_release_ctx = ctx;
	return h;
}

/* The prober lets go of r's probe (closed without a verdict if in flight). */
static void
rec_close(struct mgr_health *h, struct mgr_hrec *r)
{
	if (r->hr_probe != NULL && h->h_release != NULL)
		h->h_release(h->h_release_ctx, r);
	r->hr_in_flight = false;
	r->hr_deferred = 0;
}

static void
unhold(struct mgr_health *h, struct mgr_hrec *r)
{
	if (r->hr_hold) {
		r->hr_hold = false;
		h->h_hold_n--;
	}
}

static void
rec_free(struct mgr_health *h, struct mgr_hrec *r)
{
	unhold(h, r);
	rec_close(h, r);
	heap_remove(h, r);
	free(r);
}

void
mgr_health_free(struct mgr_health *h)
{
	uint32_t i;

	if (h == NULL)
		return;
	for (i = 0; i < h->h_n_recs; i++)
		rec_free(h, h->h_recs[i]);
	for (i = 0; i < h->h_n_svcs; i++)
		free(h->h_svcs[i]);
	free(h->h_recs);
	free(h->h_svcs);
	free(h->h_heap);
	free(h);
}

/* ---- sync with the desired table ---- */

static const struct lb_backend_cfg *
table_backend(const struct lb_ftable *t, const struct lb_svc_key *k, const struct lb_addr *dip,
	uint16_t port)
{
	int i = t != NULL ? lb_ftable_find(t, k) : -1;
	const struct lb_backend_cfg want = {.dip = *dip, .port = port};
	const struct lb_service_cfg *s;

	if (i < 0)
		return NULL;
	s = &t->services[i];
	if (s->n_backends == 0)
		return NULL;
	/* Tables are sorted: backends in the canonical order. */
	return bsearch(&want, s->backends, s->n_backends, sizeof(*s->backends), lb_backend_cmp);
}

static void
drain_start(struct mgr_hrec *r, uint64_t now)
{
	r->hr_drain_since = now;
	r->hr_drain_until = now + (uint64_t)r->hr_svc->hs_pool.pl_drain_delay_s * 1000;
}

/* A backend the restarted manager finds: what the members run says how it was. */
static void
health_from_committed(struct mgr_hrec *r, const struct lb_ftable *committed, uint64_t now)
{
	const struct lb_backend_cfg *c =
		table_backend(committed, &r->hr_svc->hs_key, &r->hr_be.dip, r->hr_be.port);

	r->hr_health_since = now;
	r->hr_inferred = c != NULL;
	if (c == NULL) {
		r->hr_health = MGR_H_INITIAL;
	} else if (c->state == LB_BACKEND_MAINT && r->hr_be.state != LB_BACKEND_MAINT) {
		r->hr_health = MGR_H_UNHEALTHY;
		snprintf(r->hr_last_fail, sizeof(r->hr_last_fail),
			"out of the table when the manager started");
		r->hr_last_fail_ms = now;
	} else {
		r->hr_health = MGR_H_HEALTHY;
		r->hr_ran_healthy = true;
	}
}

/* Could slow start begin for r now (it just became healthy or active)? */
static void
maybe_slow_start(struct mgr_hrec *r, uint64_t now)
{
	const struct mgr_hsvc *s = r->hr_svc;

	/* Ramping makes sense only next to backends that take the load meanwhile. */
	if (s->hs_pool.pl_slow_start_s != 0 && r->hr_be.state == LB_BACKEND_ACTIVE &&
		!s->hs_fail_open && s->hs_healthy >= 1 && mgr_hrec_healthy(r))
		r->hr_ss_start = now;
}

struct sync_ctx {
	struct mgr_hrec **recs;
	uint32_t n, cap;
	struct mgr_hrec **fresh; /* to schedule: new, or probed again */
	uint32_t n_fresh;
};

/* c->recs was sized for every record the sync can keep. */
static void
push(struct sync_ctx *c, struct mgr_hrec *r)
{
	c->recs[c->n++] = r;
}

/*
 * Half a sync cannot be undone (records moved, services replaced), so the
 * small allocations inside one are not allowed to fail quietly: the
 * manager stops, and its restart rebuilds everything from the database.
 */
static void *
must_calloc(size_t size)
{
	void *p = calloc(1, size);

	if (p == NULL) {
		LB_ERR("health: out of memory while following the desired table: stopping "
		       "(a restart recovers from the database)");
		exit(1);
	}
	return p;
}

static struct mgr_hrec *
rec_new(struct mgr_hsvc *s, const struct lb_backend_cfg *b)
{
	struct mgr_hrec *r = must_calloc(sizeof(*r));

	r->hr_svc = s;
	r->hr_be = *b;
	r->hr_heap = MGR_NO_HEAP;
	return r;
}

/* One desired backend: its record, found or new. */
static void
sync_backend(struct mgr_health *h, struct sync_ctx *c, struct mgr_hsvc *s,
	const struct lb_backend_cfg *b, const struct lb_ftable *committed, bool restart,
	uint64_t now)
{
	struct mgr_hrec *r = mgr_hrec_find(h, &s->hs_key, &b->dip, b->port);
	bool probed = s->hs_pool.pl_probe != LB_PROBE_NONE, fresh = false;
	uint8_t was;

	if (r == NULL) {
		r = rec_new(s, b);
		if (restart) {
			health_from_committed(r, committed, now);
		} else {
			r->hr_health = probed ? MGR_H_INITIAL : MGR_H_HEALTHY;
			r->hr_health_since = now;
		}
		if (b->state == LB_BACKEND_DRAIN)
			drain_start(r, now);
		r->hr_seen = true;
		if (probed)
			c->fresh[c->n_fresh++] = r;
		if (probed && !restart) {
			/* Its first probe usually answers before the round: let it. */
			uint64_t w = (uint64_t)s->hs_pool.pl_timeout_s * 1000;

			if (w > MGR_FIRST_PROBE_WAIT_MS)
				w = MGR_FIRST_PROBE_WAIT_MS;
			r->hr_hold = true;
			h->h_hold_n++;
			if (now + w > h->h_hold_until)
				h->h_hold_until = now + w;
		}
		push(c, r);
		return;
	}
	if (r->hr_seen)
		return; /* a duplicate: validation refuses such a table */
	r->hr_seen = true;
	if (r->hr_dereg || r->hr_gone) {
		/* Registered again before its delay ended: it keeps its health. */
		r->hr_dereg = r->hr_gone = false;
		r->hr_drain_since = r->hr_drain_until = 0;
		fresh = probed;
	}
	was = r->hr_be.state;
	if (b->state == LB_BACKEND_DRAIN && was != LB_BACKEND_DRAIN)
		drain_start(r, now);
	else if (b->state != LB_BACKEND_DRAIN)
		r->hr_drain_since = r->hr_drain_until = 0;
	if (probed && !s->hs_was_probed) {
		/* Probes switched on for a running pool: healthy until they say otherwise. */
		r->hr_health = MGR_H_HEALTHY;
		r->hr_health_since = now;
		r->hr_succ = r->hr_fail = 0;
		fresh = true;
	} else if (!probed && s->hs_was_probed) {
		/* No first probe is coming: no round waits for it. */
		unhold(h, r);
		rec_close(h, r);
		heap_remove(h, r);
	} else if (probed && s->hs_pool_changed) {
		fresh = true; /* a new interval applies from the next probe on */
	}
	r->hr_be = *b;
	r->hr_as_run = false;
	if (b->state == LB_BACKEND_ACTIVE && was != LB_BACKEND_ACTIVE)
		maybe_slow_start(r, now);
	if (fresh && !r->hr_in_flight)
		c->fresh[c->n_fresh++] = r;
	push(c, r);
}

/* A record desired no longer has, its service staying: drain it or let it go. */
static void
sync_gone(struct mgr_health *h, struct sync_ctx *c, struct mgr_hrec *r,
	const struct lb_ftable *committed, uint64_t now)
{
	const struct lb_backend_cfg *run;

	if (r->hr_dereg || (r->hr_gone && now < r->hr_gone_ms + MGR_GONE_KEEP_MS)) {
		push(c, r);
		return;
	}
	if (r->hr_gone) {
		rec_free(h, r);
		return;
	}
	unhold(h, r);
	rec_close(h, r);
	heap_remove(h, r);
	run = table_backend(committed, &r->hr_svc->hs_key, &r->hr_be.dip, r->hr_be.port);
	/* Nothing to drain: the members never ran it, or send it nothing new or old. */
	if (run == NULL || run->state == LB_BACKEND_MAINT ||
		r->hr_svc->hs_pool.pl_drain_delay_s == 0) {
		rec_free(h, r);
		return;
	}
	r->hr_dereg = true;
	/* Already draining by the operators' hand: the delay runs from then. */
	if (r->hr_be.state != LB_BACKEND_DRAIN || r->hr_drain_since == 0)
		drain_start(r, now);
	else
		r->hr_drain_until =
			r->hr_drain_since + (uint64_t)r->hr_svc->hs_pool.pl_drain_delay_s * 1000;
	if (r->hr_drain_until <= now) {
		rec_free(h, r);
		return;
	}
	push(c, r);
}

/* After a restart: what the members run and desired lacks drains afresh. */
static void
sync_restart_drains(
	struct mgr_health *h, struct sync_ctx *c, const struct lb_ftable *committed, uint64_t now)
{
	uint32_t i, j;

	qsort(c->recs, c->n, sizeof(*c->recs), mgr_hrec_cmp);
	h->h_recs = c->recs; /* borrowed for the lookups below */
	h->h_n_recs = c->n;
	for (i = 0; i < committed->n_services; i++) {
		const struct lb_service_cfg *sc = &committed->services[i];
		struct mgr_hsvc *s = mgr_hsvc_of(h, sc);

		if (s == NULL || !s->hs_seen || s->hs_pool.pl_drain_delay_s == 0)
			continue;
		for (j = 0; j < sc->n_backends; j++) {
			const struct lb_backend_cfg *b = &sc->backends[j];
			struct mgr_hrec *r;

			if (b->state == LB_BACKEND_MAINT ||
				mgr_hrec_find(h, &s->hs_key, &b->dip, b->port))
				continue;
			/*
			 * b's weight is the one it ran with, already scaled (slow
			 * start, load): kept as it is, never scaled again, or each
			 * restart would multiply it (and make a version).
			 */
			r = rec_new(s, b);
			r->hr_as_run = true;
			r->hr_seen = true;
			r->hr_dereg = true;
			r->hr_health = MGR_H_HEALTHY;
			r->hr_health_since = now;
			drain_start(r, now);
			push(c, r);
		}
	}
	h->h_recs = NULL;
	h->h_n_recs = 0;
}

/*
 * First probes of what a sync added: at most one a millisecond, and all
 * within the interval, so a file of 10,000 backends does not fire at once.
 */
static void
stagger(struct mgr_health *h, struct sync_ctx *c, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < c->n_fresh; i++) {
		struct mgr_hrec *r = c->fresh[i];
		uint64_t iv = (uint64_t)r->hr_svc->hs_pool.pl_interval_s * 1000;
		uint64_t off = c->n_fresh <= iv ? (uint64_t)i * MGR_STAGGER_MS
						: (uint64_t)i * iv / c->n_fresh;

		if (r->hr_in_flight)
			continue;   /* in flight: its result comes first */
		r->hr_deferred = 0; /* a fresh start: lateness and phase from here */
		schedule(h, r, now + off);
	}
}

int
mgr_health_sync(struct mgr_health *h, const struct lb_ftable *desired,
	const struct mgr_pools *pools, const struct lb_ftable *committed, bool restart,
	uint64_t now)
{
	struct sync_ctx c = {0};
	struct mgr_hsvc **svcs, **of;
	uint32_t i, b, n_svcs = 0;
	size_t cap = (size_t)h->h_n_recs + lb_ftable_backend_count(desired) +
		     (restart ? lb_ftable_backend_count(committed) : 0) + 1;

	/* Everything that may fail comes before the first change. */
	svcs = calloc(desired->n_services + 1, sizeof(*svcs));
	of = calloc(desired->n_services + 1, sizeof(*of));
	c.fresh = calloc(lb_ftable_backend_count(desired) + 1, sizeof(*c.fresh));
	c.recs = calloc(cap, sizeof(*c.recs));
	if (svcs == NULL || of == NULL || c.fresh == NULL || c.recs == NULL ||
		heap_reserve(h, cap) != 0) {
		free(svcs);
		free(of);
		free(c.fresh);
		free(c.recs);
		return -LB_ENOMEM;
	}
	for (i = 0; i < h->h_n_svcs; i++)
		h->h_svcs[i]->hs_seen = false;
	for (i = 0; i < h->h_n_recs; i++)
		h->h_recs[i]->hr_seen = false;
	/* Services first: records point at them. */
	for (i = 0; i < desired->n_services; i++) {
		struct lb_svc_key k;
		struct mgr_hsvc *s;

		lb_ftable_key(&desired->services[i], &k);
		s = mgr_hsvc_find(h, &k);
		if (s == NULL) {
			s = must_calloc(sizeof(*s));
			s->hs_key = k;
			s->hs_scale = 1;
			s->hs_pool = *mgr_pools_get(pools, &k);
		}
		if (restart) {
			int j = lb_ftable_find(committed, &k);

			s->hs_restart_withdrawn = j >= 0 && committed->services[j].withdrawn;
			s->hs_restart_hold = true; /* until the table is made and says */
		}
		s->hs_was_probed = s->hs_pool.pl_probe != LB_PROBE_NONE;
		s->hs_pool_changed = !mgr_pool_equal(&s->hs_pool, mgr_pools_get(pools, &k));
		s->hs_pool = *mgr_pools_get(pools, &k);
		s->hs_seen = true;
		svcs[n_svcs++] = s;
		of[i] = s;
	}
	for (i = 0; i < desired->n_services; i++) {
		const struct lb_service_cfg *sc = &desired->services[i];

		for (b = 0; b < sc->n_backends; b++)
			sync_backend(h, &c, of[i], &sc->backends[b], committed, restart, now);
	}
	for (i = 0; i < h->h_n_recs; i++) {
		struct mgr_hrec *r = h->h_recs[i];

		if (r->hr_seen)
			continue;
		if (r->hr_svc->hs_seen)
			sync_gone(h, &c, r, committed, now);
		else
			rec_free(h, r); /* its service went: a VIP that is gone drains nothing */
	}
	for (i = 0; i < h->h_n_svcs; i++)
		if (!h->h_svcs[i]->hs_seen)
			free(h->h_svcs[i]);
	qsort(svcs, n_svcs, sizeof(*svcs), mgr_hsvc_cmp);
	free(h->h_svcs);
	h->h_svcs = svcs;
	h->h_n_svcs = n_svcs;
	free(h->h_recs);
	h->h_recs = NULL;
	h->h_n_recs = 0;
	if (restart)
		sync_restart_drains(h, &c, committed, now);
	qsort(c.recs, c.n, sizeof(*c.recs), mgr_hrec_cmp);
	h->h_recs = c.recs;
	h->h_n_recs = c.n;
	stagger(h, &c, now);
	h->h_stats.ps_backends = 0;
	for (i = 0; i < h->h_n_recs; i++)
		h->h_stats.ps_backends += mgr_hrec_probed(h->h_recs[i]);
	free(of);
	free(c.fresh);
	return 0;
}

/* ---- probes and their verdicts ---- */

static void
be_name(const struct mgr_hrec *r, char *buf, size_t len)
{
	char d[MGR_BE_STR], k[MGR_SVC_STR];

	snprintf(buf, len, "backend %s on %s",
		mgr_be_str(r->hr_svc->hs_key.af, &r->hr_be, d, sizeof(d)),
		mgr_key_str(&r->hr_svc->hs_key, k, sizeof(k)));
}

static void
set_health(struct mgr_health *h, struct mgr_hrec *r, uint8_t state, uint64_t now)
{
	char n[96];

	be_name(r, n, sizeof(n));
	if (state == MGR_H_HEALTHY) {
		LB_INFO("%s: healthy (%u successful probe%s)", n, r->hr_succ,
			r->hr_succ == 1 ? "" : "s");
		r->hr_health = state;
		maybe_slow_start(r, now);
	} else {
		LB_WARN("%s: unhealthy after %u failed probe%s: %s", n, r->hr_fail,
			r->hr_fail == 1 ? "" : "s", r->hr_last_fail);
		r->hr_health = state;
		r->hr_ss_start = 0;
	}
	r->hr_health_since = now;
	h->h_stats.ps_transitions++;
}

/* Rise and fall. A new backend's first success makes it healthy: it has no failures to live down.
 */
bool
mgr_health_verdict(struct mgr_health *h, struct mgr_hrec *r, enum mgr_dip_probe_rc rc,
	const char *why, uint64_t now)
{
	const struct mgr_pool *p = &r->hr_svc->hs_pool;
	uint64_t iv = (uint64_t)p->pl_interval_s * 1000, next = r->hr_probe_due + iv;
	bool changed = false;

	r->hr_in_flight = false;
	unhold(h, r);
	if (rc == MGR_DIP_NOSOCK) {
		h->h_stats.ps_nosock++;
		if (!h->h_nosock_logged)
			LB_WARN("health: no socket for a probe (%s): probes wait; raise the "
				"descriptor limit (RLIMIT_NOFILE)",
				why);
		h->h_nosock_logged = true;
		schedule(h, r, now + MGR_NOSOCK_RETRY_MS);
		return false;
	}
	if (rc == MGR_DIP_UP) {
		h->h_stats.ps_up++;
		r->hr_fail = 0;
		if (r->hr_succ < UINT8_MAX)
			r->hr_succ++;
		if (r->hr_health == MGR_H_INITIAL ||
			(r->hr_health == MGR_H_UNHEALTHY && r->hr_succ >= p->pl_healthy)) {
			set_health(h, r, MGR_H_HEALTHY, now);
			changed = true;
		}
	} else {
		h->h_stats.ps_down++;
		r->hr_succ = 0;
		if (r->hr_fail < UINT8_MAX)
			r->hr_fail++;
		snprintf(r->hr_last_fail, sizeof(r->hr_last_fail), "%s", why);
		r->hr_last_fail_ms = now;
		if (r->hr_health != MGR_H_UNHEALTHY && r->hr_fail >= p->pl_unhealthy) {
			/* From initial too: the table is the same, but its reasons and the pool's
			 * verdicts (fail-open's log) are refreshed with it. */
			changed = true;
			set_health(h, r, MGR_H_UNHEALTHY, now);
		}
	}
	/*
	 * A health taken from the committed table is settled once the probes
	 * confirm it or overturn it, by the pool's thresholds: one failure of
	 * a backend that needs two to fall says nothing yet. Its pool may wait
	 * for it (hs_restart_hold, hs_restart_withdrawn): the table is made
	 * again to see.
	 */
	if (r->hr_inferred &&
		r->hr_health == (rc == MGR_DIP_UP ? MGR_H_HEALTHY : MGR_H_UNHEALTHY)) {
		r->hr_inferred = false;
		changed |= r->hr_svc->hs_restart_hold || r->hr_svc->hs_restart_withdrawn;
	}
	/* Keep the phase; one that fell behind by a whole interval starts again now. */
	schedule(h, r, next > now ? next : now);
	return changed;
}

static void
late(struct mgr_health *h, uint64_t ms)
{
	static const uint64_t edge[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
	uint32_t i;

	for (i = 0; i < sizeof(edge) / sizeof(edge[0]) && ms >= edge[i]; i++)
		;
	h->h_stats.ps_late_hist[i]++;
	h->h_stats.ps_late_sum_ms += ms;
	if (ms > h->h_stats.ps_late_max_ms)
		h->h_stats.ps_late_max_ms = ms;
}

struct mgr_hrec *
mgr_health_due(const struct mgr_health *h, uint64_t now)
{
	return h->h_n_heap > 0 && h->h_heap[0]->hr_due <= now ? h->h_heap[0] : NULL;
}

void
mgr_health_started(struct mgr_health *h, struct mgr_hrec *r, uint64_t now)
{
	uint64_t due = r->hr_deferred != 0 ? r->hr_deferred : r->hr_due;

	late(h, now - due);
	r->hr_probe_due = due;
	r->hr_deferred = 0;
	h->h_stats.ps_started++;
}

void
mgr_health_pending(struct mgr_health *h, struct mgr_hrec *r, uint64_t now)
{
	r->hr_in_flight = true;
	schedule(h, r, now + (uint64_t)r->hr_svc->hs_pool.pl_timeout_s * 1000);
}

void
mgr_health_defer(struct mgr_health *h, struct mgr_hrec *r, uint64_t until)
{
	if (r->hr_deferred == 0)
		r->hr_deferred = r->hr_due;
	schedule(h, r, until);
}

uint64_t
mgr_health_hold(const struct mgr_health *h, uint64_t now)
{
	return h->h_hold_n > 0 && now < h->h_hold_until ? h->h_hold_until : 0;
}

uint64_t
mgr_health_next_deadline(const struct mgr_health *h)
{
	return h->h_n_heap > 0 ? h->h_heap[0]->hr_due : UINT64_MAX;
}

/* ---- views ---- */

void
mgr_health_backend(const struct mgr_health *h, const struct lb_svc_key *k,
	const struct lb_addr *dip, uint16_t port, uint64_t now, struct mgr_hview *v)
{
	const struct mgr_hrec *r = mgr_hrec_find(h, k, dip, port);
	const struct mgr_hsvc *s;

	memset(v, 0, sizeof(*v));
	if (r == NULL)
		return;
	s = r->hr_svc;
	v->hv_found = true;
	v->hv_probed = s->hs_pool.pl_probe != LB_PROBE_NONE;
	v->hv_deregistered = r->hr_dereg || r->hr_gone;
	v->hv_admin = r->hr_be.state;
	v->hv_admin_weight = r->hr_be.weight;
	v->hv_health = r->hr_health;
	v->hv_health_ms = now > r->hr_health_since ? now - r->hr_health_since : 0;
	v->hv_successes = r->hr_succ;
	v->hv_failures = r->hr_fail;
	if (r->hr_last_fail_ms != 0) {
		snprintf(v->hv_last_failure, sizeof(v->hv_last_failure), "%s", r->hr_last_fail);
		v->hv_last_failure_ago_ms = now > r->hr_last_fail_ms ? now - r->hr_last_fail_ms : 0;
	}
	if (r->hr_drain_since != 0) {
		v->hv_draining = true;
		v->hv_drain_left_ms = r->hr_drain_until > now ? r->hr_drain_until - now : 0;
	}
	if (r->hr_ss_start != 0 && r->hr_cause == MGR_WHY_SLOW_START) {
		uint64_t end = r->hr_ss_start + (uint64_t)s->hs_pool.pl_slow_start_s * 1000;

		v->hv_slow_start = true;
		v->hv_slow_start_left_ms = end > now ? end - now : 0;
		v->hv_slow_weight = r->hr_eff_weight;
		v->hv_slow_target = r->hr_be.weight * s->hs_scale;
		v->hv_share_permille =
			s->hs_sum_weight ? (uint32_t)(r->hr_eff_weight * 1000 / s->hs_sum_weight)
					 : 0;
	}
	mgr_hrec_why(r, v->hv_why, sizeof(v->hv_why));
}

void
mgr_health_service(
	const struct mgr_health *h, const struct lb_svc_key *k, uint64_t now, struct mgr_sview *v)
{
	const struct mgr_hsvc *s = mgr_hsvc_find(h, k);

	memset(v, 0, sizeof(*v));
	if (s == NULL)
		return;
	v->sv_found = true;
	v->sv_registered = s->hs_registered;
	v->sv_healthy = s->hs_healthy;
	v->sv_fail_open = s->hs_fail_open || s->hs_zones_open > 0;
	if (s->hs_fail_open)
		v->sv_fail_open_ms = now > s->hs_fail_open_since ? now - s->hs_fail_open_since : 0;
	v->sv_below_withdraw = s->hs_below_withdraw;
	v->sv_withdrawn = s->hs_withdrawn;
	if (s->hs_withdrawn)
		v->sv_withdrawn_ms = now > s->hs_withdrawn_since ? now - s->hs_withdrawn_since : 0;
}

void
mgr_health_stats(const struct mgr_health *h, struct mgr_dip_probe_stats *s)
{
	*s = h->h_stats;
}
