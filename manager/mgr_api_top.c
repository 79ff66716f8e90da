/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `top VIP:PORT`: a service's top talkers over the muxes. Each mux reports
 * in its STATUS the LB_TOP_REPORTED largest sources of the new connections
 * its admission checks saw (lb_limits.h, "top."); this reads the connected
 * muxes' last two STATUS and has the core merge them, with rates
 * (core/mgr_top.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_ftable.h"
#include "lb_hdr.h"
#include "lb_limits.h"
#include "mgr_api_int.h"
#include "mgr_members.h"
#include "mgr_top.h"

#define TOP_SHOWN 10 /* rows in the reply */

static bool
counter(const struct lb_counter *c, uint32_t nc, const char *name, uint64_t *v)
{
	uint32_t i;

	for (i = 0; i < nc; i++)
		if (strcmp(c[i].name, name) == 0) {
			*v = c[i].value;
			return true;
		}
	return false;
}

/* The service's list in one STATUS's counters. */
static void
read_list(const struct lb_counter *c, uint32_t nc, const struct lb_service_cfg *sc,
	struct mgr_top_list *l)
{
	char name[LB_LIMIT_COUNTER_LEN];
	uint64_t v[3];
	int f;

	for (l->k = 0; l->k < LB_TOP_REPORTED; l->k++) {
		for (f = 0; f < 3; f++) {
			lb_top_counter_name(name, sizeof(name), sc->vip.a32[0], sc->port, sc->proto,
				(int)l->k, f);
			if (!counter(c, nc, name, &v[f]))
				return;
		}
		l->src[l->k] = (uint32_t)v[0];
		l->n[l->k] = v[1];
		l->err[l->k] = v[2];
	}
}

/*
 * The connected muxes' last two lists into cur, prev and dt (room for
 * MGR_MAX_MEMBERS); *rated: some mux has two. Returns how many muxes.
 */
static uint32_t
lists(struct mgr_api *api, const struct mgr_api_req *q, const struct lb_service_cfg *sc,
	struct mgr_top_list *cur, struct mgr_top_list *prev, double *dt, bool *rated)
{
	const struct mgr_commit *cm = q->v.commit;
	uint32_t m, n = 0;

	*rated = false;
	for (m = 0; m < cm->n_members; m++) {
		struct mgr_peer_view p;

		if (cm->members[m].role != LB_ROLE_MUX)
			continue;
		mgr_members_view(api->deps.members, (int)m, &p);
		if (!p.connected || p.status_ms == 0)
			continue;
		read_list(p.counters, p.n_counters, sc, &cur[n]);
		dt[n] = p.prev_ms != 0 && p.status_ms > p.prev_ms ? (p.status_ms - p.prev_ms) / 1e3
								   : 0;
		if (dt[n] > 0) {
			read_list(p.prev, p.n_prev, sc, &prev[n]);
			*rated = true;
		}
		n++;
	}
	return n;
}

void
mgr_api_top(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct lb_ftable *t = q->v.desired;
	const struct lb_service_cfg *sc;
	struct mgr_buf b = {0}, j = {0};
	struct mgr_top_list *cur, *prev;
	struct mgr_top_row *rows;
	char k[MGR_SVC_STR];
	uint32_t n, muxes, i;
	double *dt;
	bool rated;
	int s;

	if ((s = mgr_api_find_svc(t, q->req, q->rep)) < 0)
		return;
	sc = &t->services[s];
	mgr_key_str(&q->req->ctl.svc, k, sizeof(k));
	if (sc->af != LB_AF_INET) {
		mgr_api_refuse(q->rep, "%s: top talkers are kept for IPv4 services only (an IPv6 "
				       "service has no admission rules yet)",
			k);
		return;
	}
	cur = calloc(MGR_MAX_MEMBERS, sizeof(*cur));
	prev = calloc(MGR_MAX_MEMBERS, sizeof(*prev));
	dt = calloc(MGR_MAX_MEMBERS, sizeof(*dt));
	rows = calloc((size_t)MGR_MAX_MEMBERS * LB_TOP_REPORTED, sizeof(*rows));
	if (cur == NULL || prev == NULL || dt == NULL || rows == NULL) {
		mgr_api_refuse(q->rep, "out of memory");
		goto out;
	}
	muxes = lists(api, q, sc, cur, prev, dt, &rated);
	n = mgr_top_merge(cur, prev, dt, muxes, rows);
	mgr_buf_printf(&b, "top talkers of %s: new connections its admission checks saw, "
			   "over %u mux%s\n",
		k, muxes, muxes == 1 ? "" : "es");
	if (!lb_limits_any(&sc->limits) && t->mux_rate.limit == 0)
		mgr_buf_printf(&b, "(no rule checks its new connections, so no mux counts their "
				   "sources: `sluicectl limit set %s new_per_second N --mode monitor` "
				   "counts without refusing)\n",
			k);
	mgr_buf_printf(&b, "%-18s %12s %10s %10s %5s\n", "SOURCE", "CONNECTIONS", "ERR",
		"PER_SEC", "MUXES");
	mgr_buf_printf(&j, "{\"service\":");
	mgr_buf_json_str(&j, k);
	mgr_buf_printf(&j, ",\"muxes\":%u,\"rated\":%s,\"top\":[", muxes, rated ? "true" : "false");
	for (i = 0; i < n && i < TOP_SHOWN; i++) {
		const uint8_t *a = (const uint8_t *)&rows[i].src;
		char src[16], rate[24] = "-";

		snprintf(src, sizeof(src), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		if (rated)
			snprintf(rate, sizeof(rate), "%.1f", rows[i].rate);
		mgr_buf_printf(&b, "%-18s %12" PRIu64 " %10" PRIu64 " %10s %5u\n", src, rows[i].n,
			rows[i].err, rate, rows[i].muxes);
		mgr_buf_printf(&j,
			"%s{\"src\":\"%s\",\"count\":%" PRIu64 ",\"err\":%" PRIu64
			",\"rate\":%s,\"muxes\":%u}",
			i ? "," : "", src, rows[i].n, rows[i].err, rated ? rate : "null",
			rows[i].muxes);
	}
	mgr_buf_printf(&j, "]}");
	mgr_api_reply(q->rep, &b, &j);
out:
	free(cur);
	free(prev);
	free(dt);
	free(rows);
}
