/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `limit set|del|list`: admission rules (docs/protection.md) as desired
 * state. A set or del builds the next desired table from the one the
 * request found, with one rule changed, checks it as a file's rules are
 * checked (the error names the field), and hands it to the commit driver
 * like any other change: the rules are part of the table, so every mux
 * switches at one version and history shows the change. list shows the
 * desired rules with their counters summed over the muxes' STATUS.
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

/* Apply the given fields of c to rule r; false (refused) if a field does not fit. */
static bool
rule_apply(const struct lb_limit_change *c, struct lb_limit_rule *r, struct lb_msg *rep)
{
	if (c->given & LB_LIMIT_G_LIMIT) {
		if (c->value.limit == 0) {
			mgr_api_refuse(rep, "limit: 0 is no limit (limit del removes a rule)");
			return false;
		}
		r->limit = c->value.limit;
	} else if (r->limit == 0) {
		mgr_api_refuse(rep, "limit: the rule does not exist yet: give its limit");
		return false;
	}
	if (c->given & LB_LIMIT_G_BURST)
		r->burst = c->value.burst;
	if (c->given & LB_LIMIT_G_MODE)
		r->mode = c->value.mode;
	return true;
}

void
mgr_api_limit_set(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct lb_limit_change *c = &q->req->ctl.lim;
	char k[MGR_SVC_STR] = "mux", rs[160], e[200], what[320];
	struct lb_limit_rule *r;
	struct lb_ftable next;
	int i = -1;

	if (c->rule < 0 || c->rule >= LB_LIM_N) {
		mgr_api_refuse(
			q->rep, "rule: name one (per_source, new_per_second, max_connections)");
		return;
	}
	if (c->mux && c->rule != LB_LIM_RATE) {
		mgr_api_refuse(q->rep, "rule: the mux-wide cap is a new_per_second rule");
		return;
	}
	if (c->mux && (c->given & (LB_LIMIT_G_PREFIX | LB_LIMIT_G_REFUSE))) {
		mgr_api_refuse(q->rep, "prefix, refuse: a service's, not the mux-wide cap's");
		return;
	}
	if ((c->given & LB_LIMIT_G_PREFIX) && c->rule != LB_LIM_SOURCE) {
		mgr_api_refuse(q->rep, "prefix: only per_source has one");
		return;
	}
	if ((c->given & LB_LIMIT_G_BURST) && c->rule == LB_LIM_CONNS) {
		mgr_api_refuse(q->rep, "burst: a connection limit has none");
		return;
	}
	if (!c->mux && (i = mgr_api_find_svc(q->v.desired, q->req, q->rep)) < 0)
		return;
	if (lb_ftable_copy(&next, q->v.desired) != 0) {
		mgr_api_refuse(q->rep, "out of memory");
		return;
	}
	if (c->mux) {
		r = &next.mux_rate;
	} else {
		struct lb_svc_limits *l = &next.services[i].limits;

		r = &l->rule[c->rule];
		if (c->given & LB_LIMIT_G_PREFIX)
			l->source_prefix = c->prefix;
		if (c->given & LB_LIMIT_G_REFUSE)
			l->refuse = c->refuse;
		mgr_key_str(&q->req->ctl.svc, k, sizeof(k));
	}
	if (!rule_apply(c, r, q->rep)) {
		lb_ftable_free(&next);
		return;
	}
	if (!c->mux)
		lb_limit_prefix_fill(&next.services[i].limits, next.services[i].af);
	if ((c->mux ? lb_limit_rule_check(r, "mux_new_per_second", e, sizeof(e))
		    : lb_limits_check(&next.services[i].limits, next.services[i].af,
			      next.services[i].proto, e, sizeof(e))) != 0) {
		lb_ftable_free(&next);
		mgr_api_refuse(q->rep, "%s", e);
		return;
	}
	if (c->mux)
		lb_limit_rule_str(r, "mux_new_per_second", 0, rs, sizeof(rs));
	else
		lb_limit_rule_str(r, lb_limit_kind_names[c->rule],
			c->rule == LB_LIM_SOURCE
				? (next.services[i].limits.source_prefix
						  ? next.services[i].limits.source_prefix
						  : 32)
				: 0,
			rs, sizeof(rs));
	snprintf(what, sizeof(what), "~limit %s %s%s%s", k, rs,
		c->given & LB_LIMIT_G_REFUSE ? " refuse=" : "",
		c->given & LB_LIMIT_G_REFUSE ? lb_refuse_names[c->refuse % 3] : "");
	mgr_api_commit_change(api, q, &next, what);
}

void
mgr_api_limit_del(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct lb_limit_change *c = &q->req->ctl.lim;
	char k[MGR_SVC_STR] = "mux", what[160];
	struct lb_ftable next;
	int i = -1;

	/* Named, the rule must be the cap's: "del mux max_connections" removes nothing. */
	if (c->mux && c->rule >= 0 && c->rule != LB_LIM_RATE) {
		mgr_api_refuse(q->rep, "rule: the mux-wide cap is a new_per_second rule");
		return;
	}
	if (!c->mux && (i = mgr_api_find_svc(q->v.desired, q->req, q->rep)) < 0)
		return;
	if (c->mux	       ? q->v.desired->mux_rate.limit == 0
		: c->rule >= 0 ? q->v.desired->services[i].limits.rule[c->rule].limit == 0
			       : !lb_limits_any(&q->v.desired->services[i].limits)) {
		if (!c->mux)
			mgr_key_str(&q->req->ctl.svc, k, sizeof(k));
		mgr_api_refuse(q->rep, "%s has no %s%srule", k,
			c->mux	       ? "mux_new_per_second"
			: c->rule >= 0 ? lb_limit_kind_names[c->rule]
				       : "",
			c->mux || c->rule >= 0 ? " " : "");
		return;
	}
	if (lb_ftable_copy(&next, q->v.desired) != 0) {
		mgr_api_refuse(q->rep, "out of memory");
		return;
	}
	if (c->mux) {
		memset(&next.mux_rate, 0, sizeof(next.mux_rate));
		snprintf(what, sizeof(what), "-limit mux_new_per_second");
	} else {
		struct lb_svc_limits *l = &next.services[i].limits;

		mgr_key_str(&q->req->ctl.svc, k, sizeof(k));
		if (c->rule < 0) {
			memset(l, 0, sizeof(*l));
		} else {
			memset(&l->rule[c->rule], 0, sizeof(l->rule[c->rule]));
			if (c->rule == LB_LIM_SOURCE)
				l->source_prefix = 0;
		}
		snprintf(what, sizeof(what), "-limit %s %s", k,
			c->rule < 0 ? "all" : lb_limit_kind_names[c->rule]);
	}
	mgr_api_commit_change(api, q, &next, what);
}

/* A rule's four counters summed over the connected muxes' last STATUS. */
static void
rule_counters(struct mgr_api *api, const struct mgr_api_req *q, const struct lb_service_cfg *sc,
	int kind, uint64_t sum[4], uint32_t *muxes)
{
	const struct mgr_commit *cm = q->v.commit;
	char name[4][LB_LIMIT_COUNTER_LEN];
	uint32_t m, j;
	int c;

	for (c = 0; c < 4; c++)
		lb_limit_counter_name(name[c], sizeof(name[c]), sc ? &sc->vip : NULL,
			sc ? sc->af : 0, sc ? sc->port : 0, sc ? sc->proto : 0, kind, c);
	memset(sum, 0, 4 * sizeof(sum[0]));
	*muxes = 0;
	for (m = 0; m < cm->n_members; m++) {
		struct mgr_peer_view p;
		bool seen = false;

		if (cm->members[m].role != LB_ROLE_MUX)
			continue;
		mgr_members_view(api->deps.members, (int)m, &p);
		for (j = 0; j < p.n_counters; j++)
			for (c = 0; c < 4; c++)
				if (strcmp(p.counters[j].name, name[c]) == 0) {
					sum[c] += p.counters[j].value;
					seen = true;
				}
		*muxes += seen;
	}
}

static void
list_rule(struct mgr_api *api, const struct mgr_api_req *q, const struct lb_service_cfg *sc,
	int kind, const struct lb_limit_rule *r, struct mgr_buf *b, struct mgr_buf *j, bool *first)
{
	char k[MGR_SVC_STR] = "mux", burst[16] = "-";
	struct lb_svc_key key;
	uint64_t s[4];
	uint32_t muxes;

	rule_counters(api, q, sc, kind, s, &muxes);
	if (sc != NULL) {
		lb_ftable_key(sc, &key);
		mgr_key_str(&key, k, sizeof(k));
	}
	if (r->burst != 0)
		snprintf(burst, sizeof(burst), "%u", r->burst);
	mgr_buf_printf(b,
		"%-24s %-16s %9u %9s %-9s %-6s %5u %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		" %10" PRIu64 "\n",
		k, kind < LB_LIM_N ? lb_limit_kind_names[kind] : "new_per_second", r->limit, burst,
		lb_limit_mode_names[r->mode & 1], sc ? lb_refuse_names[sc->limits.refuse % 3] : "-",
		muxes, s[0], s[1], s[2], s[3]);
	mgr_buf_printf(j, "%s{\"service\":", *first ? "" : ",");
	mgr_buf_json_str(j, k);
	mgr_buf_printf(j,
		",\"rule\":\"%s\",\"limit\":%u,\"burst\":%u,\"mode\":\"%s\",\"refuse\":\"%s\","
		"\"prefix\":%u,\"muxes\":%u,\"checked\":%" PRIu64 ",\"passed\":%" PRIu64
		",\"would_deny\":%" PRIu64 ",\"denied\":%" PRIu64 "}",
		kind < LB_LIM_N ? lb_limit_kind_names[kind] : "mux_new_per_second", r->limit,
		r->burst, lb_limit_mode_names[r->mode & 1],
		sc ? lb_refuse_names[sc->limits.refuse % 3] : "drop",
		kind == LB_LIM_SOURCE ? (sc->limits.source_prefix ? sc->limits.source_prefix : 32)
				      : 0,
		muxes, s[0], s[1], s[2], s[3]);
	*first = false;
}

void
mgr_api_limit_list(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct lb_ftable *t = q->v.desired;
	struct mgr_buf b = {0}, j = {0};
	bool first = true;
	uint32_t i;
	int k;

	mgr_buf_printf(&b, "%-24s %-16s %9s %9s %-9s %-6s %5s %10s %10s %10s %10s\n", "SERVICE",
		"RULE", "LIMIT", "BURST", "MODE", "REFUSE", "MUXES", "CHECKED", "PASSED",
		"WOULD_DENY", "DENIED");
	mgr_buf_printf(&j, "{\"rules\":[");
	if (t->mux_rate.limit != 0)
		list_rule(api, q, NULL, LB_LIM_N, &t->mux_rate, &b, &j, &first);
	for (i = 0; i < t->n_services; i++)
		for (k = 0; k < LB_LIM_N; k++)
			if (t->services[i].limits.rule[k].limit != 0)
				list_rule(api, q, &t->services[i], k,
					&t->services[i].limits.rule[k], &b, &j, &first);
	mgr_buf_printf(&j, "]}");
	mgr_api_reply(q->rep, &b, &j);
}
