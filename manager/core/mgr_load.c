/* SPDX-License-Identifier: BSD-3-Clause */
/* Weights from the agents' load: least_connections and mitigation (mgr_load.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_codec.h"
#include "lb_log.h"
#include "lb_maglev.h"
#include "mgr_load.h"
#include "mgr_text.h"

uint32_t
mgr_load_parse(const struct lb_counter *c, uint32_t n, struct mgr_be_load *out, uint32_t max)
{
	uint32_t i, k = 0, id;
	char f[8];

	for (i = 0; i < n; i++) {
		if (sscanf(c[i].name, "be.%" SCNu32 ".%7s", &id, f) != 2)
			continue;
		/* An agent sends a backend's three together, act first. */
		if (strcmp(f, "act") == 0 && k < max) {
			out[k] = (struct mgr_be_load){.id = id, .active = c[i].value};
			k++;
		} else if (k > 0 && out[k - 1].id == id && strcmp(f, "new") == 0) {
			out[k - 1].opened = c[i].value;
		} else if (k > 0 && out[k - 1].id == id && strcmp(f, "fail") == 0) {
			out[k - 1].failed = c[i].value;
		}
	}
	return k;
}

static int
by_id(const void *a, const void *b)
{
	uint32_t x = ((const struct mgr_be_load *)a)->id, y = ((const struct mgr_be_load *)b)->id;

	return x < y ? -1 : x > y;
}

void
mgr_load_sort(struct mgr_be_load *v, uint32_t n)
{
	if (n != 0)
		qsort(v, n, sizeof(*v), by_id);
}

const struct mgr_be_load *
mgr_load_find(const struct mgr_be_load *v, uint32_t n, uint32_t id)
{
	struct mgr_be_load key = {.id = id};

	return n != 0 ? bsearch(&key, v, n, sizeof(*v), by_id) : NULL;
}

uint32_t
mgr_load_dropped(const struct mgr_be_load *prev, uint32_t np, const struct mgr_be_load *cur,
	uint32_t nc, struct mgr_be_load *out)
{
	uint32_t i, k = 0;

	for (i = 0; i < np; i++)
		if (mgr_load_find(cur, nc, prev[i].id) == NULL)
			out[k++] = prev[i];
	return k;
}

void
mgr_health_loads(struct mgr_health *h, struct mgr_be_load *v, uint32_t n, bool forget)
{
	uint32_t i;

	if (n == 0)
		return;
	mgr_load_sort(v, n);
	for (i = 0; i < h->h_n_recs; i++) {
		struct mgr_hrec *r = h->h_recs[i];
		const struct mgr_be_load *l = mgr_load_find(v, n, r->hr_be.id);

		if (l != NULL && forget)
			r->hr_load.known = r->hr_load_step.known = false;
		else if (l != NULL)
			r->hr_load = (struct mgr_load){true, l->active, l->opened, l->failed};
	}
}

/* Counts the step judges by: active, reported, healthy, not leaving, not ramping. */
static bool
judged(const struct mgr_hrec *r, uint64_t now)
{
	return r->hr_load.known && !r->hr_dereg && !r->hr_gone &&
	       r->hr_be.state == LB_BACKEND_ACTIVE && mgr_hrec_healthy(r) &&
	       !mgr_hrec_ramping(r, now);
}

static uint32_t
clamp_step(double target, uint32_t f, uint32_t lo, uint32_t hi)
{
	double t = target * MGR_LOAD_ONE;

	if (t > 2.0 * f)
		t = 2.0 * f;
	if (t < f / 2.0)
		t = f / 2.0;
	if (t > hi)
		t = hi;
	if (t < lo)
		t = lo;
	return (uint32_t)(t + 0.5);
}

static void
least_connections(struct mgr_hsvc *s, struct mgr_hrec *const *recs, uint32_t n, uint64_t now)
{
	uint64_t act = 0, w = 0;
	uint32_t i, m = 0;

	for (i = 0; i < n; i++)
		if (judged(recs[i], now)) {
			act += recs[i]->hr_load.active;
			w += recs[i]->hr_be.weight ? recs[i]->hr_be.weight : 1;
			m++;
		}
	if (m < 2)
		return;
	s->hs_load_mean = (double)act / (double)w;
	for (i = 0; i < n; i++) {
		struct mgr_hrec *r = recs[i];
		double own;

		if (!judged(r, now))
			continue;
		own = (double)r->hr_load.active / (r->hr_be.weight ? r->hr_be.weight : 1);
		r->hr_lc = clamp_step(
			(s->hs_load_mean + 1) / (own + 1), r->hr_lc, MGR_LOAD_MIN, MGR_LOAD_MAX);
	}
}

static int
by_rate(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The median of sorted[0..m) without one entry equal to v (a backend is
 * judged against the others: in a pool of two, the other one), or of them
 * all when none is. 0 when nothing is left.
 */
static double
median_without(const double *sorted, uint32_t m, double v)
{
	uint32_t skip = m, k, left;

	for (k = 0; k < m && skip == m; k++)
		if (sorted[k] == v)
			skip = k;
	left = m - (skip < m);
	if (left == 0)
		return 0;
#define AT(j) sorted[(j) < skip ? (j) : (j) + 1]
	return left % 2 ? AT(left / 2) : (AT(left / 2 - 1) + AT(left / 2)) / 2;
#undef AT
}

static void
mitigate(struct mgr_hsvc *s, struct mgr_hrec *const *recs, uint32_t n, uint64_t now)
{
	double *rates = calloc(n + 1, sizeof(*rates)), med;
	uint32_t i, m = 0, judged_n = 0, held = 0;
	char k[MGR_SVC_STR], d[48];

	if (rates == NULL)
		return;
	for (i = 0; i < n; i++) {
		struct mgr_hrec *r = recs[i];
		uint64_t dn = r->hr_load.opened - r->hr_load_step.opened;
		uint64_t df = r->hr_load.failed - r->hr_load_step.failed;

		r->hr_fail_rate = -1;
		/* An agent restarted: its counters went back; this step says nothing. */
		if (!judged(r, now) || !r->hr_load_step.known ||
			r->hr_load.opened < r->hr_load_step.opened ||
			r->hr_load.failed < r->hr_load_step.failed)
			continue;
		judged_n++;
		held += r->hr_mit < MGR_LOAD_ONE;
		if (dn >= MGR_MIT_MIN_NEW || (r->hr_mit < MGR_LOAD_ONE && dn >= 1))
			rates[m++] = r->hr_fail_rate = (double)(df > dn ? dn : df) / (double)dn;
	}
	qsort(rates, m, sizeof(*rates), by_rate);
	med = median_without(rates, m, -2); /* no rate is -2: the whole pool's */
	s->hs_fail_median = med;
	mgr_key_str(&s->hs_key, k, sizeof(k));
	for (i = 0; i < n; i++) {
		struct mgr_hrec *r = recs[i];
		double others = median_without(rates, m, r->hr_fail_rate);
		bool outlier = r->hr_fail_rate >= 0.5 && r->hr_fail_rate > 2 * others + 0.1;

		lb_addr_ntop(s->hs_key.af, &r->hr_be.dip, d, sizeof(d));
		if (outlier && (r->hr_mit < MGR_LOAD_ONE || 2 * (held + 1) <= judged_n)) {
			if (r->hr_mit == MGR_LOAD_ONE) {
				held++;
				LB_WARN("%s: backend %s:%u mitigated: %.0f%% of its new "
					"connections "
					"failed, the others' median %.0f%%",
					k, d, r->hr_be.port, 100 * r->hr_fail_rate, 100 * others);
			}
			r->hr_mit = r->hr_mit / 2 < MGR_MIT_FLOOR ? MGR_MIT_FLOOR : r->hr_mit / 2;
		} else if (r->hr_mit < MGR_LOAD_ONE && r->hr_fail_rate >= 0 &&
			   r->hr_fail_rate < 0.1) {
			r->hr_mit = r->hr_mit * 2 > MGR_LOAD_ONE ? MGR_LOAD_ONE : r->hr_mit * 2;
			if (r->hr_mit == MGR_LOAD_ONE)
				LB_INFO("%s: backend %s:%u restored: its new connections succeed",
					k, d, r->hr_be.port);
		}
	}
	free(rates);
}

void
mgr_load_step(
	struct mgr_hsvc *s, struct mgr_hrec *const *recs, uint32_t n, uint64_t now, uint64_t *next)
{
	bool lc = s->hs_balance == LB_BALANCE_LEAST_CONNECTIONS;
	uint32_t i;

	/*
	 * A factor whose option is off is neutral: kept, it would hold a pool
	 * that stopped steering (or steers by the other option) where its last
	 * step left it, and come back if the option did.
	 */
	for (i = 0; i < n; i++) {
		struct mgr_hrec *r = recs[i];

		if (r->hr_lc == 0 || !lc)
			r->hr_lc = MGR_LOAD_ONE;
		if (r->hr_mit == 0 || !s->hs_mitigate)
			r->hr_mit = MGR_LOAD_ONE;
		/* A ramp starts from neutral and is not steered (mgr_effective.c). */
		if (mgr_hrec_ramping(r, now))
			r->hr_lc = MGR_LOAD_ONE;
	}
	if (!mgr_load_steers(s))
		return;
	if (now >= s->hs_load_next_ms) {
		s->hs_load_next_ms = now + MGR_LOAD_STEP_MS;
		if (lc)
			least_connections(s, recs, n, now);
		if (s->hs_mitigate)
			mitigate(s, recs, n, now);
		for (i = 0; i < n; i++) {
			struct mgr_hrec *r = recs[i];

			/*
			 * A backend that fails its connections has few of them: least
			 * connections would send it more than mitigation takes away.
			 */
			if (r->hr_mit < MGR_LOAD_ONE && r->hr_lc > MGR_LOAD_ONE)
				r->hr_lc = MGR_LOAD_ONE;
			r->hr_load_step = r->hr_load;
		}
	}
	if (s->hs_load_next_ms < *next)
		*next = s->hs_load_next_ms;
}

uint64_t
mgr_load_weight(const struct mgr_hrec *r, uint32_t w)
{
	uint64_t lc = r->hr_lc ? r->hr_lc : MGR_LOAD_ONE,
		 mit = r->hr_mit ? r->hr_mit : MGR_LOAD_ONE;
	uint64_t v = ((uint64_t)w * MGR_LOAD_SCALE * lc * mit +
			     (uint64_t)MGR_LOAD_ONE * MGR_LOAD_ONE / 2) /
		     ((uint64_t)MGR_LOAD_ONE * MGR_LOAD_ONE);

	if (w == 0)
		return 0;
	return v < 1 ? 1 : v;
}
