/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The effective table: what members run, made from the desired table by
 * each backend's record (mgr_health.c). Per backend, first rule that
 * applies:
 *
 *   deregistered (left desired)   drain until its delay ends, then removed
 *   admin maint                   maint
 *   admin drain                   drain (for good: the delay only shows)
 *   the pool fails open           active at its weight
 *   unhealthy or initial          maint: its connections are re-balanced
 *   in slow start                 active, weight ramped in 10 steps
 *   otherwise                     active at its weight
 *
 * A pool fails open when fewer of its active backends are healthy than
 * its minimum (count, or percent of them): sending to all is better than
 * crushing the few left. With cross_zone off, each zone is judged alone
 * against the minimum (its muxes send only to it): a zone below it fails
 * open, the others do not. A VIP is withdrawn from every mux (the
 * service's `withdrawn` flag, on all of the VIP's services) when each of
 * its services that sets a withdraw threshold is below it
 * (mgr_withdraw_vip()); the pools' rule (mgr_pool_check_withdraw) makes
 * sure a pool that fails open is withdrawn as well. With cross_zone off the
 * threshold is judged per zone instead: the VIP is withdrawn from the muxes
 * of a zone (the services' withdrawn zones) when every service that votes
 * says so for that zone; when every zone of a pool is below, none is
 * withdrawn (announced everywhere, as ALB sends to every zone when all are
 * unhealthy). While a backend lighter than 10 ramps, its
 * pool's weights are multiplied by 10 so that it can start at a tenth; Maglev's table depends on
 * the ratios only, so the others keep their slots. A pool with a weight
 * over a tenth of the largest is not multiplied (its ratios would be
 * clipped): the light backend starts at 1 instead.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "lb_maglev.h"
#include "mgr_hrec.h"
#include "mgr_load.h"
#include "mgr_text.h"

static uint32_t
scaled(uint32_t w, uint32_t scale)
{
	uint64_t v = (uint64_t)w * scale;

	return v > LB_MAGLEV_MAX_WEIGHT ? LB_MAGLEV_MAX_WEIGHT : (uint32_t)v;
}

/* A raw weight that says: keep be's weight as it is (a drain rebuilt after a restart). */
#define RAW_AS_RUN UINT64_MAX

/*
 * The weights of one service, from raw (load factors can take them past
 * Maglev's largest): all divided by one number where one would not fit,
 * since Maglev's table depends on the ratios only. Clipped, a 2:1 pool of
 * heavy weights would run 1:1.
 */
static void
fit_weights(struct lb_backend_cfg *be, const uint64_t *raw, uint32_t n)
{
	uint64_t most = 0, div;
	uint32_t k;

	for (k = 0; k < n; k++)
		if (raw[k] > most && raw[k] != RAW_AS_RUN)
			most = raw[k];
	div = (most + LB_MAGLEV_MAX_WEIGHT - 1) / LB_MAGLEV_MAX_WEIGHT;
	if (div < 1)
		div = 1;
	for (k = 0; k < n; k++) {
		uint64_t w;

		if (raw[k] == RAW_AS_RUN)
			continue;
		w = (raw[k] + div / 2) / div;
		be[k].weight = raw[k] == 0 ? 0 : w < 1 ? 1 : (uint32_t)w;
	}
}

/*
 * Engaging is logged once some backend has a verdict: a new pool whose
 * backends all wait for their first probe is open, but that is no news.
 */
static void
fail_open_log(struct mgr_hsvc *s, bool open, bool known)
{
	char k[MGR_SVC_STR], m[32];

	if (open == s->hs_fail_open_logged || (open && !known))
		return;
	s->hs_fail_open_logged = open;
	mgr_key_str(&s->hs_key, k, sizeof(k));
	mgr_pool_min_str(&s->hs_pool, m, sizeof(m));
	if (open) {
		LB_WARN("FAIL-OPEN %s: %u of %u healthy, minimum %s: every registered backend "
			"gets traffic",
			k, s->hs_healthy, s->hs_registered, m);
	} else {
		LB_INFO("%s: fail-open over: %u of %u healthy, minimum %s", k, s->hs_healthy,
			s->hs_registered, m);
	}
}

/* One backend's effective state and weight. */
static void
decide(struct mgr_hrec *r, uint64_t now, uint64_t *next, struct lb_backend_cfg *out)
{
	const struct mgr_hsvc *s = r->hr_svc;
	const struct mgr_pool *p = &s->hs_pool;
	uint32_t w = r->hr_as_run ? r->hr_be.weight : scaled(r->hr_be.weight, s->hs_scale);

	*out = r->hr_be;
	out->weight = w;
	r->hr_cause = MGR_WHY_ADMIN;
	if (r->hr_dereg) {
		out->state = LB_BACKEND_DRAIN;
		r->hr_cause = MGR_WHY_DEREG;
		if (r->hr_drain_until < *next)
			*next = r->hr_drain_until;
		return;
	}
	if (r->hr_be.state != LB_BACKEND_ACTIVE)
		return;
	if (s->hs_fail_open || r->hr_zone_open) {
		r->hr_cause = mgr_hrec_healthy(r) ? MGR_WHY_HEALTHY : MGR_WHY_FAIL_OPEN;
		return;
	}
	if (!mgr_hrec_healthy(r) && s->hs_restart_hold && r->hr_ran_healthy) {
		r->hr_cause = MGR_WHY_RESTART;
		return;
	}
	if (!mgr_hrec_healthy(r)) {
		out->state = LB_BACKEND_MAINT;
		r->hr_cause = r->hr_health == MGR_H_INITIAL ? MGR_WHY_INITIAL : MGR_WHY_UNHEALTHY;
		return;
	}
	r->hr_cause = MGR_WHY_HEALTHY;
	if (r->hr_ss_start == 0)
		return;
	if (!mgr_hrec_ramping(r, now)) {
		r->hr_ss_start = 0; /* over */
		return;
	}
	{
		uint64_t d = (uint64_t)p->pl_slow_start_s * 1000, el = now - r->hr_ss_start;
		uint64_t k = el * MGR_SS_STEPS / d, rw;

		/* From a tenth to the whole, linear, sampled at ten steps. */
		rw = ((uint64_t)w * (MGR_SS_STEPS + (MGR_SS_STEPS - 1) * k) + 50) / 100;
		out->weight = w == 0 ? 0 : rw < 1 ? 1 : (uint32_t)rw;
		r->hr_cause = MGR_WHY_SLOW_START;
		if (r->hr_ss_start + (k + 1) * d / MGR_SS_STEPS < *next)
			*next = r->hr_ss_start + (k + 1) * d / MGR_SS_STEPS;
	}
}

#define MGR_ZONES_JUDGED 32 /* zones of one pool judged apart; more share the last */

static bool
below_min(const struct mgr_pool *p, uint32_t ok, uint32_t reg)
{
	return reg > 0 &&
	       ((p->pl_min_healthy != 0 && ok < p->pl_min_healthy) ||
		       (p->pl_min_healthy_pct != 0 &&
			       (uint64_t)ok * 100 < (uint64_t)p->pl_min_healthy_pct * reg));
}

/*
 * cross_zone off: each zone's registered and healthy backends against the
 * pool's minimum; sets hr_zone_open on the records of zones below it that
 * still have a healthy backend. A zone with none does not fail open: its
 * muxes send to the other zones instead (mux_gen.c's zone_open). Returns
 * how many zones fail open, or UINT32_MAX when no zone has a healthy
 * backend (the whole pool fails open, as without zones).
 */
static uint32_t
zones_open(struct mgr_hrec *const *recs, uint32_t n, const struct mgr_pool *p)
{
	struct {
		const char *name;
		uint32_t reg, ok;
	} z[MGR_ZONES_JUDGED];
	uint32_t nz = 0, i, k, open = 0, alive = 0;
	uint8_t *of = calloc(n + 1, 1);

	if (of == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		const struct mgr_hrec *r = recs[i];

		for (k = 0; k < nz && strncmp(z[k].name, r->hr_be.zone, LB_ZONE_LEN) != 0; k++)
			;
		if (k == nz) {
			if (nz < MGR_ZONES_JUDGED)
				z[nz++] = (typeof(z[0])){r->hr_be.zone, 0, 0};
			else
				k = nz - 1;
		}
		of[i] = (uint8_t)k;
		if (r->hr_dereg || r->hr_gone || r->hr_be.state != LB_BACKEND_ACTIVE)
			continue;
		z[k].reg++;
		z[k].ok += mgr_hrec_healthy(r);
	}
	for (k = 0; k < nz; k++) {
		open += z[k].ok > 0 && below_min(p, z[k].ok, z[k].reg);
		alive += z[k].ok > 0;
	}
	for (i = 0; i < n; i++)
		recs[i]->hr_zone_open = z[of[i]].ok > 0 && below_min(p, z[of[i]].ok, z[of[i]].reg);
	free(of);
	return alive == 0 && nz > 0 ? UINT32_MAX : open;
}

static int
zone_cmp(const void *a, const void *b)
{
	return strncmp(a, b, LB_ZONE_LEN);
}

/*
 * cross_zone off: the zones of recs whose healthy backends are below the
 * pool's withdraw threshold, sorted into s->hs_wz; none when every zone
 * with a backend is below (then the VIP stays announced everywhere).
 * false: more zones are below than a table lists (LB_WZONES), and fewer
 * than all: the pool is judged whole instead.
 */
static bool
zones_below(struct mgr_hrec *const *recs, uint32_t n, const struct mgr_pool *p, struct mgr_hsvc *s)
{
	struct {
		const char *name;
		uint32_t reg, ok;
	} z[MGR_ZONES_JUDGED];
	uint32_t nz = 0, i, k, below = 0;

	s->hs_n_wz = 0;
	for (i = 0; i < n; i++) {
		const struct mgr_hrec *r = recs[i];

		if (r->hr_dereg || r->hr_gone || r->hr_be.state != LB_BACKEND_ACTIVE)
			continue;
		for (k = 0; k < nz && strncmp(z[k].name, r->hr_be.zone, LB_ZONE_LEN) != 0; k++)
			;
		if (k == nz && nz == MGR_ZONES_JUDGED)
			continue; /* past the zones judged: it votes for none */
		if (k == nz)
			z[nz++] = (typeof(z[0])){r->hr_be.zone, 0, 0};
		z[k].reg++;
		z[k].ok += mgr_hrec_healthy(r);
	}
	for (k = 0; k < nz; k++)
		below += mgr_pool_below_withdraw(p, z[k].ok, z[k].reg);
	if (below == nz)
		return true;
	if (below > LB_WZONES)
		return false;
	for (k = 0; k < nz; k++)
		if (mgr_pool_below_withdraw(p, z[k].ok, z[k].reg))
			snprintf(s->hs_wz[s->hs_n_wz++], LB_ZONE_LEN, "%s", z[k].name);
	qsort(s->hs_wz, s->hs_n_wz, LB_ZONE_LEN, zone_cmp);
	return true;
}

/* Records of service s between lo and the end of its range, by (dip, port). */
static int
build_service(struct mgr_health *h, struct mgr_hsvc *s, const struct lb_service_cfg *sc,
	uint64_t now, uint64_t *next, struct lb_service_cfg *out)
{
	uint32_t lo = mgr_hrec_lower(h, &s->hs_key), hi = lo, i, n = 0, reg = 0, ok = 0, known = 0;
	const struct mgr_pool *p = &s->hs_pool;
	bool open, light = false;
	uint32_t heaviest = 0, inferred = 0;
	uint64_t sum = 0, *raw;

	while (hi < h->h_n_recs && h->h_recs[hi]->hr_svc == s)
		hi++;
	/* Who counts: the backends operators left active. */
	for (i = lo; i < hi; i++) {
		struct mgr_hrec *r = h->h_recs[i];

		r->hr_in_eff = false;
		if (r->hr_be.weight > heaviest)
			heaviest = r->hr_be.weight;
		if (r->hr_dereg || r->hr_gone || r->hr_be.state != LB_BACKEND_ACTIVE)
			continue;
		reg++;
		ok += mgr_hrec_healthy(r);
		known += r->hr_health != MGR_H_INITIAL || !mgr_hrec_probed(r);
		inferred += r->hr_inferred && mgr_hrec_probed(r);
		if (mgr_hrec_ramping(r, now) && r->hr_be.weight < MGR_SS_SCALE &&
			r->hr_be.weight != 0)
			light = true;
	}
	open = below_min(p, ok, reg);
	if (inferred == 0)
		s->hs_restart_withdrawn = false; /* every backend has spoken */
	s->hs_restart_hold = inferred != 0;
	s->hs_zones_open = 0;
	for (i = lo; i < hi; i++)
		h->h_recs[i]->hr_zone_open = false;
	if (sc->choice.zonal) {
		uint32_t zo = zones_open(&h->h_recs[lo], hi - lo, p);

		/* Judged per zone; over the pool only when no zone has a healthy backend. */
		s->hs_zones_open = zo == UINT32_MAX ? 0 : zo;
		open = zo == UINT32_MAX && open;
	}
	s->hs_registered = reg;
	s->hs_healthy = ok;
	s->hs_below_withdraw = mgr_pool_below_withdraw(p, ok, reg);
	s->hs_zonal = sc->choice.zonal != 0;
	s->hs_n_wz = 0;
	if (s->hs_zonal && mgr_pool_withdraws(p) && zones_below(&h->h_recs[lo], hi - lo, p, s))
		s->hs_below_withdraw = false; /* judged per zone: never the VIP everywhere */
	else
		s->hs_zonal = false; /* judged whole, as a service that crosses zones */
	if (open && !s->hs_fail_open)
		s->hs_fail_open_since = now;
	s->hs_fail_open = open;
	fail_open_log(s, open, known > 0);
	/* x10 only where every weight still fits: clipped, the ratios would move. */
	s->hs_scale = !open && light && heaviest <= LB_MAGLEV_MAX_WEIGHT / MGR_SS_SCALE
			      ? MGR_SS_SCALE
			      : 1;
	s->hs_balance = sc->choice.balance;
	s->hs_mitigate = sc->choice.mitigate != 0;
	mgr_load_step(s, &h->h_recs[lo], hi - lo, now, next);

	*out = *sc;
	out->backends = calloc(hi - lo + 1, sizeof(*out->backends));
	raw = calloc(hi - lo + 1, sizeof(*raw));
	if (out->backends == NULL || raw == NULL) {
		free(raw);
		return -LB_ENOMEM;
	}
	for (i = lo; i < hi; i++) {
		struct mgr_hrec *r = h->h_recs[i];

		if (r->hr_gone)
			continue;
		if (r->hr_dereg && r->hr_drain_until <= now) {
			/* The delay is over: out of the table; kept a while for history. */
			r->hr_dereg = false;
			r->hr_gone = true;
			r->hr_gone_ms = now;
			r->hr_cause = MGR_WHY_GONE;
			continue;
		}
		decide(r, now, next, &out->backends[n]);
		raw[n] = r->hr_as_run ? RAW_AS_RUN : out->backends[n].weight;
		/*
		 * Load steers a healthy pool; a pool failing open sends to all as
		 * they are, and a backend in slow start ramps as health makes it.
		 * Every backend of a steered pool is scaled alike, so a backend's
		 * health alone moves no first choice (mux_gen.c's first-choice
		 * table takes weights whatever the state).
		 */
		if (r->hr_as_run) {
			/* As it ran: the pool's scale then is in it already. */
		} else if (mgr_load_steers(s) && !open && !r->hr_zone_open &&
			   (out->backends[n].state != LB_BACKEND_ACTIVE || r->hr_dereg ||
				   mgr_hrec_ramping(r, now))) {
			raw[n] = (uint64_t)out->backends[n].weight * MGR_LOAD_SCALE;
		} else if (mgr_load_steers(s) && !open && !r->hr_zone_open) {
			raw[n] = mgr_load_weight(r, out->backends[n].weight);
			if (r->hr_mit != 0 && r->hr_mit < MGR_LOAD_ONE)
				r->hr_cause = MGR_WHY_MITIGATED;
			else if (r->hr_lc != 0 && r->hr_lc != MGR_LOAD_ONE &&
				 r->hr_cause == MGR_WHY_HEALTHY)
				r->hr_cause = MGR_WHY_LOAD;
		}
		r->hr_in_eff = true;
		r->hr_eff_state = out->backends[n].state;
		n++;
	}
	out->n_backends = n;
	fit_weights(out->backends, raw, n);
	free(raw);
	for (i = lo, n = 0; i < hi; i++) {
		struct mgr_hrec *r = h->h_recs[i];

		if (!r->hr_in_eff)
			continue;
		r->hr_eff_weight = out->backends[n++].weight;
		if (r->hr_eff_state == LB_BACKEND_ACTIVE)
			sum += r->hr_eff_weight;
	}
	s->hs_sum_weight = sum;
	return 0;
}

bool
mgr_withdraw_vip(const bool *withdraws, const bool *below, uint32_t n)
{
	uint32_t i, voters = 0;

	for (i = 0; i < n; i++) {
		if (!withdraws[i])
			continue;
		voters++;
		if (!below[i])
			return false;
	}
	return voters > 0;
}

/* Withdrawing starts or ends: said once, with the numbers of each service. */
static void
withdraw_log(struct mgr_hsvc *const *svcs, uint32_t n, bool on)
{
	char line[400], k[MGR_SVC_STR], t[32];
	size_t off = 0;
	uint32_t i;

	line[0] = '\0';
	for (i = 0; i < n && off < sizeof(line); i++) {
		const struct mgr_hsvc *s = svcs[i];

		if (s == NULL || !mgr_pool_withdraws(&s->hs_pool))
			continue;
		off += (size_t)snprintf(line + off, sizeof(line) - off,
			"%s%s %u of %u healthy, withdraw_below %s", off ? "; " : "",
			mgr_key_str(&s->hs_key, k, sizeof(k)), s->hs_healthy, s->hs_registered,
			mgr_pool_withdraw_str(&s->hs_pool, t, sizeof(t)));
	}
	if (on)
		LB_WARN("WITHDRAW %s: every mux withdraws the VIP: %s",
			lb_addr_ntop(svcs[0]->hs_key.af, &svcs[0]->hs_key.vip, k, sizeof(k)), line);
	else
		LB_INFO("%s: announced again: %s",
			lb_addr_ntop(svcs[0]->hs_key.af, &svcs[0]->hs_key.vip, k, sizeof(k)), line);
}

static bool
has_zone(const struct mgr_hsvc *s, const char *zone)
{
	uint32_t i;

	for (i = 0; i < s->hs_n_wz; i++)
		if (strncmp(s->hs_wz[i], zone, LB_ZONE_LEN) == 0)
			return true;
	return false;
}

/*
 * The zones a VIP (its n services svcs) is withdrawn in: each zone some
 * zonal service is below in, for which every service that votes agrees
 * (a zonal one below in that zone, another below as a whole). Into out,
 * sorted; returns how many.
 */
static uint8_t
vip_zones(struct mgr_hsvc *const *svcs, const bool *withdraws, const bool *below, uint32_t n,
	char out[LB_WZONES][LB_ZONE_LEN])
{
	uint32_t i, j, z;
	uint8_t m = 0;

	for (i = 0; i < n; i++) {
		for (z = 0; svcs[i] != NULL && z < svcs[i]->hs_n_wz; z++) {
			const char *name = svcs[i]->hs_wz[z];
			bool all = true;

			for (j = 0; j < n && all; j++)
				if (withdraws[j])
					all = svcs[j]->hs_zonal ? has_zone(svcs[j], name)
								: below[j];
			for (j = 0; all && j < m; j++)
				all = strncmp(out[j], name, LB_ZONE_LEN) != 0;
			if (all && m < LB_WZONES)
				snprintf(out[m++], LB_ZONE_LEN, "%s", name);
		}
	}
	qsort(out, m, LB_ZONE_LEN, zone_cmp);
	return m;
}

/* The zones a VIP is withdrawn in change: said once, with the zones. */
static void
wzones_log(struct mgr_hsvc *s, char wz[LB_WZONES][LB_ZONE_LEN], uint8_t n)
{
	char k[MGR_SVC_STR], list[LB_WZONES * (LB_ZONE_LEN + 1) + 1];
	size_t off = 0;
	uint32_t i;

	if (n == s->hs_n_wz_on && memcmp(wz, s->hs_wz_on, sizeof(wz[0]) * n) == 0)
		return;
	list[0] = '\0';
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(
			list + off, sizeof(list) - off, "%s%s", i ? " " : "", wz[i]);
	if (n != 0)
		LB_WARN("WITHDRAW %s in zone%s %s: its healthy backends there are below "
			"withdraw_below",
			lb_addr_ntop(s->hs_key.af, &s->hs_key.vip, k, sizeof(k)), n == 1 ? "" : "s",
			list);
	else
		LB_INFO("%s: announced in every zone again",
			lb_addr_ntop(s->hs_key.af, &s->hs_key.vip, k, sizeof(k)));
}

/* The VIP rule over the sorted effective table: each VIP's services are adjacent. */
static int
withdraw_vips(struct mgr_health *h, struct lb_ftable *out, uint64_t now)
{
	uint32_t lo, hi, i, n = out->n_services;
	struct mgr_hsvc **svcs = calloc(n + 1, sizeof(*svcs));
	bool *withdraws = calloc(n + 1, sizeof(*withdraws)), *below = calloc(n + 1, sizeof(*below));
	int rc = svcs != NULL && withdraws != NULL && below != NULL ? 0 : -LB_ENOMEM;

	for (lo = 0; rc == 0 && lo < n; lo = hi) {
		char wz[LB_WZONES][LB_ZONE_LEN];
		bool on, was = false, known = false, held = false;
		uint8_t nwz;

		for (hi = lo; hi < n && lb_service_same_vip(&out->services[hi], &out->services[lo]);
			hi++) {
			struct mgr_hsvc *s = svcs[hi] = mgr_hsvc_of(h, &out->services[hi]);

			withdraws[hi] = s != NULL && mgr_pool_withdraws(&s->hs_pool);
			below[hi] = s != NULL && s->hs_below_withdraw;
			held |= s != NULL && s->hs_restart_withdrawn;
			if (s != NULL) {
				was |= s->hs_withdrawn;
				known = true;
			}
		}
		on = mgr_withdraw_vip(&withdraws[lo], &below[lo], hi - lo) || held;
		nwz = on ? 0 : vip_zones(&svcs[lo], &withdraws[lo], &below[lo], hi - lo, wz);
		for (i = lo; i < hi && known; i++)
			if (svcs[i] != NULL && svcs[i]->hs_zonal) {
				wzones_log(svcs[i], wz, nwz);
				break;
			}
		for (i = lo; i < hi; i++) {
			out->services[i].withdrawn = on;
			out->services[i].n_wzones = nwz;
			memcpy(out->services[i].wzones, wz, sizeof(wz[0]) * nwz);
			if (svcs[i] != NULL) {
				svcs[i]->hs_n_wz_on = nwz;
				memcpy(svcs[i]->hs_wz_on, wz, sizeof(wz[0]) * nwz);
			}
			if (svcs[i] == NULL)
				continue;
			if (on && !svcs[i]->hs_withdrawn)
				svcs[i]->hs_withdrawn_since = now;
			svcs[i]->hs_withdrawn = on;
		}
		if (known && on != was)
			withdraw_log(&svcs[lo], hi - lo, on);
	}
	free(svcs);
	free(withdraws);
	free(below);
	return rc;
}

int
mgr_health_effective(struct mgr_health *h, const struct lb_ftable *desired, uint64_t now,
	struct lb_ftable *out, uint64_t *next_ms)
{
	uint32_t i;
	int rc;

	*next_ms = UINT64_MAX;
	lb_ftable_free(out);
	out->seed = desired->seed;
	out->maglev_size = desired->maglev_size;
	out->mux_rate = desired->mux_rate;
	out->services = calloc(desired->n_services + 1, sizeof(*out->services));
	if (out->services == NULL)
		return -LB_ENOMEM;
	if (desired->n_drained != 0) {
		out->drained = malloc(sizeof(*out->drained) * desired->n_drained);
		if (out->drained == NULL)
			goto nomem;
		memcpy(out->drained, desired->drained, sizeof(*out->drained) * desired->n_drained);
		out->n_drained = desired->n_drained;
	}
	for (i = 0; i < desired->n_services; i++) {
		const struct lb_service_cfg *sc = &desired->services[i];
		struct mgr_hsvc *s = mgr_hsvc_of(h, sc);

		if (s == NULL) {
			/* Not synced (out of memory then): as the operators have it. */
			out->services[i] = *sc;
			out->services[i].backends =
				calloc(sc->n_backends + 1, sizeof(*sc->backends));
			if (out->services[i].backends == NULL)
				goto nomem;
			memcpy(out->services[i].backends, sc->backends,
				sc->n_backends * sizeof(*sc->backends));
			out->n_services = i + 1;
			continue;
		}
		rc = build_service(h, s, sc, now, next_ms, &out->services[i]);
		out->n_services = i + 1;
		if (rc != 0)
			goto nomem;
	}
	lb_ftable_sort(out);
	if (withdraw_vips(h, out, now) != 0)
		goto nomem;
	return 0;
nomem:
	lb_ftable_free(out);
	return -LB_ENOMEM;
}

/* ---- why, for history and sluicectl ---- */

static const char *
cause_text(const struct mgr_hrec *r, char *buf, size_t len)
{
	const struct mgr_hsvc *s = r->hr_svc;
	char m[32];

	switch (r->hr_cause) {
	case MGR_WHY_HEALTHY:
		return "healthy";
	case MGR_WHY_INITIAL:
		return "initial: not yet healthy";
	case MGR_WHY_UNHEALTHY:
		snprintf(buf, len, "unhealthy: %s", r->hr_last_fail);
		return buf;
	case MGR_WHY_FAIL_OPEN:
		if (r->hr_zone_open) {
			snprintf(buf, len, "fail-open in zone %.*s: below the minimum %s",
				LB_ZONE_LEN - 1, r->hr_be.zone,
				mgr_pool_min_str(&s->hs_pool, m, sizeof(m)));
			return buf;
		}
		snprintf(buf, len, "fail-open: %u of %u healthy, minimum %s", s->hs_healthy,
			s->hs_registered, mgr_pool_min_str(&s->hs_pool, m, sizeof(m)));
		return buf;
	case MGR_WHY_SLOW_START:
		return "slow start";
	case MGR_WHY_RESTART:
		snprintf(buf, len,
			"unhealthy (%s), kept as it ran until every backend of the pool has a "
			"verdict since the manager started",
			r->hr_last_fail);
		return buf;
	case MGR_WHY_DEREG:
		snprintf(buf, len, "deregistered: draining for %" PRIu32 " s",
			s->hs_pool.pl_drain_delay_s);
		return buf;
	case MGR_WHY_GONE:
		return "deregistration delay over";
	case MGR_WHY_LOAD:
		snprintf(buf, len,
			"least connections: %" PRIu64 " active, the pool's mean %.1f per weight "
			"(x%.2f)",
			r->hr_load.active, s->hs_load_mean, (double)r->hr_lc / MGR_LOAD_ONE);
		return buf;
	case MGR_WHY_MITIGATED:
		snprintf(buf, len,
			"mitigated: %.0f%% of its new connections failed, the pool's median %.0f%% "
			"(x%.2f)",
			r->hr_fail_rate < 0 ? 0 : 100 * r->hr_fail_rate, 100 * s->hs_fail_median,
			(double)r->hr_mit / MGR_LOAD_ONE);
		return buf;
	default:
		return NULL;
	}
}

const char *
mgr_health_why(void *ctx, const struct lb_svc_key *k, const struct lb_backend_cfg *from,
	const struct lb_backend_cfg *to, char *buf, size_t len)
{
	const struct mgr_health *h = ctx;
	const struct lb_backend_cfg *b = to != NULL ? to : from;
	const struct mgr_hrec *r;

	if (b == NULL) /* a view: the record's cause as it stands */
		return NULL;
	r = mgr_hrec_find(h, k, &b->dip, b->port);
	if (r == NULL)
		return NULL;
	if (to == NULL)
		return r->hr_gone ? "deregistration delay over" : NULL;
	/* Only the weight moved. */
	if (from != NULL && from->state == to->state && from->weight != to->weight) {
		if (r->hr_cause == MGR_WHY_SLOW_START || r->hr_svc->hs_scale != 1 ||
			(from->weight == scaled(r->hr_be.weight, MGR_SS_SCALE) &&
				to->weight == r->hr_be.weight))
			return "slow start";
		if (r->hr_cause == MGR_WHY_LOAD || r->hr_cause == MGR_WHY_MITIGATED)
			return cause_text(r, buf, len);
		return NULL;
	}
	/* Added or changed as the operators asked: their change says it all. */
	if (to->state == r->hr_be.state && to->weight == r->hr_be.weight &&
		(from == NULL || r->hr_cause == MGR_WHY_ADMIN))
		return NULL;
	return cause_text(r, buf, len);
}

/* The cause of a record as it stands ("" when the operators' settings rule). */
void
mgr_hrec_why(const struct mgr_hrec *r, char *buf, size_t len)
{
	char t[MGR_DIP_PROBE_WHY + 48];
	const char *c = cause_text(r, t, sizeof(t));

	snprintf(buf, len, "%s", c != NULL && r->hr_cause != MGR_WHY_HEALTHY ? c : "");
}
