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

#include "lb_addr.h"
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
 * The connected muxes' last two lists of each service of svcs[0..n_svcs)
 * into cur, prev and dt (room for MGR_MAX_MEMBERS * n_svcs); *rated: some
 * mux has two STATUS; *muxes: the muxes. Returns how many lists.
 */
static uint32_t
lists(struct mgr_api *api, const struct mgr_api_req *q, const struct lb_service_cfg *const *svcs,
	uint32_t n_svcs, struct mgr_top_list *cur, struct mgr_top_list *prev, double *dt,
	bool *rated, uint32_t *muxes)
{
	const struct mgr_commit *cm = q->v.commit;
	uint32_t m, k, n = 0;
	double d;

	*rated = false;
	*muxes = 0;
	for (m = 0; m < cm->n_members; m++) {
		struct mgr_peer_view p;

		if (!mgr_api_reporting(api, cm, m, LB_ROLE_MUX, &p))
			continue;
		(*muxes)++;
		d = p.prev_ms != 0 && p.status_ms > p.prev_ms ? (p.status_ms - p.prev_ms) / 1e3 : 0;
		*rated |= d > 0;
		for (k = 0; k < n_svcs; k++, n++) {
			read_list(p.counters, p.n_counters, svcs[k], &cur[n]);
			dt[n] = d;
			if (d > 0)
				read_list(p.prev, p.n_prev, svcs[k], &prev[n]);
		}
	}
	return n;
}

/*
 * The services asked for: the one of VIP:PORT, or with port 0 (sluicectl
 * top VIP) every IPv4 service of the VIP. Returns how many, 0 with rep
 * refused.
 */
static uint32_t
asked(const struct lb_ftable *t, const struct mgr_api_req *q, const struct lb_service_cfg **svcs,
	const char *k)
{
	const struct lb_svc_key *key = &q->req->ctl.svc;
	uint32_t i, n = 0;
	int s;

	if (key->port != 0) {
		if ((s = mgr_api_find_svc(t, q->req, q->rep)) < 0)
			return 0;
		svcs[0] = &t->services[s];
		if (svcs[0]->af == LB_AF_INET)
			return 1;
	} else {
		for (i = 0; i < t->n_services; i++)
			if (t->services[i].af == key->af &&
				lb_addr_eq(&t->services[i].vip, &key->vip))
				svcs[n++] = &t->services[i];
		if (n == 0) {
			mgr_api_refuse(q->rep, "no service of VIP %s", k);
			return 0;
		}
		if (key->af == LB_AF_INET)
			return n;
	}
	mgr_api_refuse(q->rep,
		"%s: top talkers are kept for IPv4 services only (the summary's "
		"key is a 32-bit source)",
		k);
	return 0;
}

void
mgr_api_top(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct lb_ftable *t = q->v.desired;
	const struct lb_service_cfg **svcs;
	struct mgr_buf b = {0}, j = {0};
	struct mgr_top_list *cur = NULL, *prev = NULL;
	struct mgr_top_row *rows = NULL;
	char k[MGR_SVC_STR];
	uint32_t n, n_svcs, n_lists, muxes, i;
	bool rated, checked = false;
	double *dt = NULL;

	if (q->req->ctl.svc.port != 0)
		mgr_key_str(&q->req->ctl.svc, k, sizeof(k));
	else
		lb_addr_ntop(q->req->ctl.svc.af, &q->req->ctl.svc.vip, k, sizeof(k));
	svcs = calloc(t->n_services + 1, sizeof(*svcs));
	if (svcs == NULL) {
		mgr_api_refuse(q->rep, "out of memory");
		return;
	}
	n_svcs = asked(t, q, svcs, k);
	if (n_svcs == 0)
		goto out;
	n = (uint32_t)MGR_MAX_MEMBERS * n_svcs;
	cur = calloc(n, sizeof(*cur));
	prev = calloc(n, sizeof(*prev));
	dt = calloc(n, sizeof(*dt));
	rows = calloc((size_t)n * LB_TOP_REPORTED, sizeof(*rows));
	if (cur == NULL || prev == NULL || dt == NULL || rows == NULL) {
		mgr_api_refuse(q->rep, "out of memory");
		goto out;
	}
	n_lists = lists(api, q, svcs, n_svcs, cur, prev, dt, &rated, &muxes);
	n = mgr_top_merge(cur, prev, dt, n_lists, rows);
	for (i = 0; i < n_svcs; i++)
		checked |= lb_limits_any(&svcs[i]->limits);
	mgr_buf_printf(&b,
		"top talkers of %s: new connections its admission checks saw, "
		"over %u mux%s and %u service%s\n",
		k, muxes, muxes == 1 ? "" : "es", n_svcs, n_svcs == 1 ? "" : "s");
	if (!checked && t->mux_rate.limit == 0)
		mgr_buf_printf(&b, "(no rule checks its new connections, so no mux counts their "
				   "sources: `sluicectl limit set VIP:PORT new_per_second N --mode "
				   "monitor` counts without refusing)\n");
	mgr_buf_printf(&b, "%-18s %12s %10s %10s %5s\n", "SOURCE", "CONNECTIONS", "ERR", "PER_SEC",
		"LISTS");
	mgr_buf_printf(&j, "{\"service\":");
	mgr_buf_json_str(&j, k);
	mgr_buf_printf(&j, ",\"muxes\":%u,\"services\":%u,\"rated\":%s,\"top\":[", muxes, n_svcs,
		rated ? "true" : "false");
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
			",\"rate\":%s,\"lists\":%u}",
			i ? "," : "", src, rows[i].n, rows[i].err, rated ? rate : "null",
			rows[i].muxes);
	}
	mgr_buf_printf(&j, "]}");
	mgr_api_reply(q->rep, &b, &j);
out:
	free(svcs);
	free(cur);
	free(prev);
	free(dt);
	free(rows);
}
