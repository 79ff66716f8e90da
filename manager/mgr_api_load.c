/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `backend list`: every committed backend with the load its host agent
 * reports (host_agent/ha_track.h): connections open now, opened, and
 * connection failures (SYNs answered by a RST, SYNs never answered). An
 * agent sends "be.<id>.act", ".new" and ".fail" in each STATUS for the TCP
 * backends it holds; this parses the connected agents' last STATUS once
 * and matches them by the backend's stable id. WHY: what the manager made of
 * it (health, draining, slow start, least connections, mitigation).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_ftable.h"
#include "mgr_api_int.h"
#include "mgr_health.h"
#include "mgr_load.h"
#include "mgr_members.h"

/*
 * Every connected agent's last report, parsed once and sorted by backend
 * id (*n of them; NULL when none or out of memory).
 */
static struct mgr_be_load *
reports(struct mgr_api *api, const struct mgr_commit *cm, uint32_t *n)
{
	struct mgr_be_load *v = NULL, *nv;
	uint32_t m;

	*n = 0;
	for (m = 0; m < cm->n_members; m++) {
		struct mgr_peer_view p;

		if (!mgr_api_reporting(api, cm, m, LB_ROLE_AGENT, &p))
			continue;
		nv = realloc(v, sizeof(*v) * (*n + p.n_counters / 3 + 1));
		if (nv == NULL)
			break;
		v = nv;
		*n += mgr_load_parse(p.counters, p.n_counters, v + *n, p.n_counters / 3 + 1);
	}
	if (v != NULL)
		mgr_load_sort(v, *n);
	return v;
}

/* Backend id's load over the agents' reports: false when none reports it. */
static bool
load_of(const struct mgr_be_load *v, uint32_t n, uint32_t id, uint64_t out[3])
{
	const struct mgr_be_load *l = v != NULL ? mgr_load_find(v, n, id) : NULL;

	if (l == NULL)
		return false;
	out[0] = l->active;
	out[1] = l->opened;
	out[2] = l->failed;
	return true;
}

void
mgr_api_backend_list(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct lb_ftable *t = q->v.committed;
	struct mgr_buf b = {0}, j = {0};
	char k[MGR_SVC_STR], d[LB_ADDR_STRLEN], h[LB_ADDR_STRLEN];
	uint32_t s, i, n = 0, n_rep;
	struct mgr_be_load *loads = reports(api, q->v.commit, &n_rep);

	mgr_buf_printf(&b, "%-24s %-28s %-16s %-6s %6s %-5s %6s %8s %10s %8s  %s\n", "SERVICE",
		"BACKEND", "HOST", "STATE", "WEIGHT", "ZONE", "MAX", "ACTIVE", "OPENED", "FAILED",
		"WHY");
	mgr_buf_printf(&j, "{\"version\":%" PRIu64 ",\"backends\":[", q->v.commit->committed);
	for (s = 0; s < t->n_services; s++) {
		const struct lb_service_cfg *sc = &t->services[s];
		struct lb_svc_key key;

		lb_ftable_key(sc, &key);
		mgr_key_str(&key, k, sizeof(k));
		for (i = 0; i < sc->n_backends; i++) {
			const struct lb_backend_cfg *be = &sc->backends[i];
			uint64_t v[3];
			bool known = load_of(loads, n_rep, be->id, v);
			struct mgr_hview hv;
			char dp[LB_ADDR_STRLEN + 8], act[24] = "-", opn[24] = "-", fail[24] = "-";
			char max[16] = "-";

			lb_addr_ntop(sc->af, &be->dip, d, sizeof(d));
			snprintf(dp, sizeof(dp), sc->af == LB_AF_INET6 ? "[%s]:%u" : "%s:%u", d,
				be->port);
			lb_addr_ntop(be->host6 ? LB_AF_INET6 : LB_AF_INET, &be->host, h, sizeof(h));
			if (known) {
				snprintf(act, sizeof(act), "%" PRIu64, v[0]);
				snprintf(opn, sizeof(opn), "%" PRIu64, v[1]);
				snprintf(fail, sizeof(fail), "%" PRIu64, v[2]);
			}
			if (be->max_conns != 0)
				snprintf(max, sizeof(max), "%u", be->max_conns);
			mgr_health_backend(api->deps.health, &key, &be->dip, be->port, q->now, &hv);
			mgr_buf_printf(&b, "%-24s %-28s %-16s %-6s %6u %-5s %6s %8s %10s %8s  %s\n",
				k, dp, h,
				lb_backend_state_names[be->state <= LB_BACKEND_MAINT ? be->state
										     : 0],
				be->weight, be->zone[0] ? be->zone : "-", max, act, opn, fail,
				hv.hv_found ? hv.hv_why : "");
			mgr_buf_printf(&j, "%s{\"service\":", n++ ? "," : "");
			mgr_buf_json_str(&j, k);
			mgr_buf_printf(&j, ",\"id\":%u,\"dip\":", be->id);
			mgr_buf_json_str(&j, d);
			mgr_buf_printf(&j, ",\"port\":%u,\"host\":", be->port);
			mgr_buf_json_str(&j, h);
			mgr_buf_printf(&j, ",\"state\":\"%s\",\"weight\":%u,\"zone\":",
				lb_backend_state_names[be->state <= LB_BACKEND_MAINT ? be->state
										     : 0],
				be->weight);
			mgr_buf_json_str(&j, be->zone);
			mgr_buf_printf(&j, ",\"max_connections\":%u,\"why\":", be->max_conns);
			mgr_buf_json_str(&j, hv.hv_found ? hv.hv_why : "");
			if (known)
				mgr_buf_printf(&j,
					",\"active\":%" PRIu64 ",\"opened\":%" PRIu64
					",\"failed\":%" PRIu64 "}",
					v[0], v[1], v[2]);
			else
				mgr_buf_printf(
					&j, ",\"active\":null,\"opened\":null,\"failed\":null}");
		}
	}
	mgr_buf_printf(&j, "]}");
	if (n == 0)
		mgr_buf_printf(&b, "(no backends committed)\n");
	mgr_buf_printf(&b, "ACTIVE, OPENED, FAILED: TCP connections its host agent counts (FAILED: "
			   "SYNs answered by a RST or never answered); -: no agent reports it\n");
	free(loads);
	q->rep->version = q->v.commit->committed;
	mgr_api_reply(q->rep, &b, &j);
}
