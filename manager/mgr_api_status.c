/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `status`: the committed version, the round in flight, what is pending,
 * the last outcome, the database, the counters of every subsystem, health
 * and VIP probes, and every member as the commit state machine and the
 * member protocol know it: a mux with its routes (what it announces and
 * since when, what it withholds and why), the manager's word to it and
 * its drain.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lb_ftable.h"
#include "mgr_api_int.h"
#include "mgr_guard.h"
#include "mgr_members.h"
#include "mgr_text.h"
#include "mgr_transport.h"
#include "mgr_vip_probe.h"

/*
 * A mux's routes as its last STATUS said them, the manager's word to it,
 * and its drain: a line under its row, and ,"route":...,"notice":...,
 * "drained":... inside its JSON object.
 */
static void
status_routes(const struct mgr_api_req *q, const struct mgr_member *mb,
	const struct mgr_peer_view *p, struct mgr_buf *b, struct mgr_buf *j)
{
	const struct lb_route_state *r = p->route;
	bool drained = lb_ftable_drained(q->v.committed, mb->id);
	bool want = lb_ftable_drained(q->v.desired, mb->id);
	char t[32], a[16];
	uint32_t i, k;

	if (mb->role != LB_ROLE_MUX)
		return;
	mgr_buf_printf(j, ",\"drained\":%s,\"drain_pending\":%s", drained ? "true" : "false",
		drained != want ? "true" : "false");
	if (p->notice->nt_valid) {
		mgr_buf_printf(j, ",\"notice\":{\"in_sync\":%s,\"why\":",
			p->notice->nt_in_sync ? "true" : "false");
		mgr_buf_json_str(j, p->notice->nt_why);
		mgr_buf_printf(j, ",\"age_ms\":%" PRIu64 "}", mgr_api_age(q->now, p->notice_ms));
	} else {
		mgr_buf_printf(j, ",\"notice\":null");
	}
	if (drained != want)
		mgr_buf_printf(b, "  %-16s %s pending (a version on its way)\n", "",
			want ? "drain" : "undrain");
	if (r == NULL) {
		mgr_buf_printf(j, ",\"route\":null");
		if (p->connected)
			mgr_buf_printf(b, "  %-16s routes: none reported (no bgp group)\n", "");
		return;
	}
	mgr_buf_printf(b, "  %-16s routes: %s (%s since %s)\n", "", r->status, r->reason,
		mgr_time_str((int64_t)r->since_unix_ms, t, sizeof(t)));
	for (i = 0; i < r->n_vips; i++) {
		const struct lb_route_vip *v = &r->vips[i];

		lb_addr_str(&(struct lb_addr){.a32 = {v->vip}}, a, sizeof(a));
		mgr_buf_printf(b, "  %-16s   %-15s %s%s since %s\n", "", a,
			v->announced ? "announced" : "withheld: ", v->announced ? "" : v->reason,
			mgr_time_str((int64_t)v->since_unix_ms, t, sizeof(t)));
	}
	if (r->n_vips_total > r->n_vips)
		mgr_buf_printf(
			b, "  %-16s   (and %u more VIPs)\n", "", r->n_vips_total - r->n_vips);
	mgr_buf_printf(j, ",\"route\":{\"status\":");
	mgr_buf_json_str(j, r->status);
	mgr_buf_printf(j, ",\"reason\":");
	mgr_buf_json_str(j, r->reason);
	mgr_buf_printf(j,
		",\"since_unix_ms\":%" PRIu64 ",\"sessions\":%u,\"sessions_up\":%u,\"vips\":%u"
		",\"announced\":[",
		r->since_unix_ms, r->sessions, r->sessions_up, r->n_vips_total);
	for (i = 0, k = 0; i < r->n_vips; i++) {
		if (!r->vips[i].announced)
			continue;
		lb_addr_str(&(struct lb_addr){.a32 = {r->vips[i].vip}}, a, sizeof(a));
		mgr_buf_printf(j, "%s{\"vip\":\"%s\",\"since_unix_ms\":%" PRIu64 "}",
			k++ ? "," : "", a, r->vips[i].since_unix_ms);
	}
	mgr_buf_printf(j, "],\"withheld\":[");
	for (i = 0, k = 0; i < r->n_vips; i++) {
		if (r->vips[i].announced)
			continue;
		lb_addr_str(&(struct lb_addr){.a32 = {r->vips[i].vip}}, a, sizeof(a));
		mgr_buf_printf(j, "%s{\"vip\":\"%s\",\"reason\":", k++ ? "," : "", a);
		mgr_buf_json_str(j, r->vips[i].reason);
		mgr_buf_printf(j, ",\"since_unix_ms\":%" PRIu64 "}", r->vips[i].since_unix_ms);
	}
	mgr_buf_printf(j, "]}");
}

static void
status_members(
	struct mgr_api *api, const struct mgr_api_req *q, struct mgr_buf *b, struct mgr_buf *j)
{
	const struct mgr_commit *c = q->v.commit;
	struct mgr_vip_env env;
	uint32_t i, k, in_sync = 0;

	mgr_members_vip_env(api->deps.members, &env);
	for (i = 0; i < c->n_members; i++)
		in_sync += c->members[i].state == MGR_MEMBER_IN_SYNC;
	mgr_buf_printf(b, "members     %u (%u in sync)\n", c->n_members, in_sync);
	if (c->n_members > 0)
		mgr_buf_printf(b, "  %-16s %-5s  %-7s  %7s  %8s  %-9s  %s\n", "ID", "ROLE", "STATE",
			"APPLIED", "CONTACT", "CONNECTED", "DETAIL");
	mgr_buf_printf(j, ",\"members\":[");
	for (i = 0; i < c->n_members; i++) {
		const struct mgr_member *mb = &c->members[i];
		struct mgr_peer_view p;
		uint64_t last, a;
		bool fenced = mb->state != MGR_MEMBER_IN_SYNC;

		mgr_members_view(api->deps.members, (int)i, &p);
		last = p.last_contact_ms > mb->last_contact_ms ? p.last_contact_ms
							       : mb->last_contact_ms;
		a = mgr_api_age(q->now, last);

		mgr_buf_printf(b,
			"  %-16s %-5s  %-7s  %7" PRIu64 "  %6" PRIu64 ".%01" PRIu64 "s  %-9s  ",
			mb->id, mgr_role_name(mb->role), fenced ? "fenced" : "in-sync", mb->applied,
			a / 1000, (a % 1000) / 100, p.connected ? "yes" : "no");
		if (fenced)
			mgr_buf_printf(b, "%s", mb->why);
		for (k = 0; !fenced && k < p.n_counters && k < 4; k++)
			mgr_buf_printf(b, "%s%s=%" PRIu64, k ? " " : "", p.counters[k].name,
				p.counters[k].value);
		mgr_buf_printf(b, "\n");

		mgr_buf_printf(j, "%s{\"id\":", i ? "," : "");
		mgr_buf_json_str(j, mb->id);
		mgr_buf_printf(j,
			",\"role\":\"%s\",\"state\":\"%s\",\"why\":", mgr_role_name(mb->role),
			fenced ? "fenced" : "in-sync");
		mgr_buf_json_str(j, fenced ? mb->why : "");
		mgr_buf_printf(j,
			",\"applied\":%" PRIu64 ",\"reported\":%" PRIu64
			",\"last_contact_ms\":%" PRIu64 ",\"connected\":%s,\"snapshots\":%" PRIu64
			",\"bad_messages\":%" PRIu64 ",\"counters\":{",
			mb->applied, mb->has_reported ? mb->reported : mb->applied, a,
			p.connected ? "true" : "false", p.snapshots, p.bad_msgs);
		for (k = 0; k < p.n_counters; k++) {
			mgr_buf_printf(j, "%s", k ? "," : "");
			mgr_buf_json_str(j, p.counters[k].name);
			mgr_buf_printf(j, ":%" PRIu64, p.counters[k].value);
		}
		mgr_buf_printf(j, "}");
		mgr_vip_probe_view_member(api->deps.vip, &env, (int)i, b, j, q->now);
		status_routes(q, mb, &p, b, j);
		mgr_buf_printf(j, "}");
	}
	mgr_buf_printf(j, "]");
}

/*
 * Which manager answers and in what role: a single one (SQLite), or the
 * leader of several (etcd) with its term. A standby answers no status: it
 * redirects (mgr_ha_standby_ctl), so "leader" is the only HA role seen here.
 */
static void
status_manager(const struct mgr_api *api, struct mgr_buf *b, struct mgr_buf *j)
{
	const struct mgr_config *cfg = api->deps.cfg;
	bool ha = cfg->mc_store == MGR_STORE_ETCD;
	uint64_t term = mgr_driver_term(api->deps.driver);

	if (ha)
		mgr_buf_printf(b, "manager     %s: leader, term %" PRIu64 " (etcd, %s)\n",
			cfg->mc_id, term, cfg->mc_etcd_prefix);
	else
		mgr_buf_printf(b, "manager     %s: single (SQLite)\n",
			cfg->mc_id[0] ? cfg->mc_id : "manager");
	mgr_buf_printf(j, "{\"manager\":{\"id\":");
	mgr_buf_json_str(j, cfg->mc_id);
	mgr_buf_printf(j, ",\"role\":\"%s\",\"term\":%" PRIu64 ",\"store\":\"%s\"}",
		ha ? "leader" : "single", term, ha ? "etcd" : "sqlite");
}

void
mgr_api_status(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct mgr_driver_view *v = &q->v;
	const struct mgr_commit *c = v->commit;
	struct mgr_transport_stats ts;
	struct mgr_vip_env env;
	struct mgr_buf b = {0}, j = {0};
	char hex[MGR_HEX_DIGEST];
	uint64_t pending = v->pending_changes, now = q->now, restarts, checks;

	mgr_transport_stats(api->deps.transport, &ts);
	mgr_guard_stats(api->deps.guard, &restarts, &checks);
	mgr_digest_hex(v->committed_digest, hex);
	status_manager(api, &b, &j);
	mgr_buf_printf(&b,
		"committed   version %" PRIu64 "  digest %s  (%u services, %u backends)\n",
		c->committed, hex, v->committed->n_services, lb_ftable_backend_count(v->committed));
	mgr_buf_printf(&j,
		",\"committed\":{\"version\":%" PRIu64 ",\"digest\":\"%s\",\"services\":%u,"
		"\"backends\":%u}",
		c->committed, hex, v->committed->n_services, lb_ftable_backend_count(v->committed));
	if (v->round) {
		uint32_t i, votes = 0, asked = 0;

		for (i = 0; i < c->n_members; i++) {
			asked += c->members[i].in_round;
			votes += c->members[i].in_round && c->members[i].vote == MGR_VOTE_YES;
		}
		mgr_digest_hex(v->round_digest, hex);
		mgr_buf_printf(&b,
			"round       version %" PRIu64 " prepared %" PRIu64
			" ms ago: %u of %u yes votes, deadline in %" PRIu64 " ms: %s\n",
			v->round_version, mgr_api_age(now, v->round_started_ms), votes, asked,
			c->deadline_ms > now ? c->deadline_ms - now : 0, v->round_summary);
		mgr_buf_printf(&j,
			",\"round\":{\"version\":%" PRIu64 ",\"digest\":\"%s\",\"age_ms\":%" PRIu64
			",\"yes\":%u,\"members\":%u,\"summary\":",
			v->round_version, hex, mgr_api_age(now, v->round_started_ms), votes, asked);
		mgr_buf_json_str(&j, v->round_summary);
		mgr_buf_printf(&j, "}");
	} else {
		mgr_buf_printf(&b, "round       none\n");
		mgr_buf_printf(&j, ",\"round\":null");
	}
	if (v->pending && pending == 0) {
		/*
		 * No operator change waits: health or a timer moved the table
		 * (during a round: it commits after it), or the changes were
		 * accepted by the run before this one (their count is gone).
		 */
		mgr_buf_printf(&b,
			"pending     the table moved (health, timers or changes from before a "
			"restart), will commit as version %" PRIu64 "\n",
			v->target_version);
		mgr_buf_printf(&j, ",\"pending\":{\"changes\":null,\"version\":%" PRIu64 "}",
			v->target_version);
	} else if (v->pending) {
		mgr_buf_printf(&b,
			"pending     %" PRIu64 " change%s, will commit as version %" PRIu64 "\n",
			pending, pending == 1 ? "" : "s", v->target_version);
		mgr_buf_printf(&j, ",\"pending\":{\"changes\":%" PRIu64 ",\"version\":%" PRIu64 "}",
			pending, v->target_version);
	} else {
		mgr_buf_printf(&b, "pending     none\n");
		mgr_buf_printf(&j, ",\"pending\":null");
	}
	mgr_buf_printf(&b, "last round  %s", v->last_outcome[0] ? v->last_outcome : "none");
	if (v->last_outcome[0])
		mgr_buf_printf(
			&b, " (%" PRIu64 " s ago)", mgr_api_age(now, v->last_outcome_ms) / 1000);
	mgr_buf_printf(&b, "\ndatabase    %s  %s%s\n", api->deps.cfg->mc_database,
		v->store_err[0] ? "error: " : "ok", v->store_err);
	mgr_buf_printf(&j, ",\"last_round\":");
	mgr_buf_json_str(&j, v->last_outcome);
	mgr_buf_printf(&j, ",\"database\":{\"path\":");
	mgr_buf_json_str(&j, api->deps.cfg->mc_database);
	mgr_buf_printf(&j, ",\"error\":");
	mgr_buf_json_str(&j, v->store_err);
	mgr_buf_printf(&j,
		"},\"counters\":{\"committed\":%" PRIu64 ",\"aborted\":%" PRIu64
		",\"malformed\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"unexpected\":%" PRIu64
		",\"ctl_requests\":%" PRIu64 ",\"ctl_dropped\":%" PRIu64
		",\"listener_restarts\":%" PRIu64 ",\"listener_checks\":%" PRIu64
		",\"challenges\":%" PRIu64 ",\"unproven\":%" PRIu64 "}",
		v->n_committed, v->n_aborted, ts.malformed, ts.refused,
		mgr_members_unexpected(api->deps.members), ts.ctl, ts.ctl_dropped, restarts, checks,
		ts.challenges, ts.unproven);
	mgr_api_health_view(api, v, &b, &j, now);
	mgr_members_vip_env(api->deps.members, &env);
	mgr_vip_probe_view(api->deps.vip, &env, &b, &j, now);
	status_members(api, q, &b, &j);
	mgr_buf_printf(&j, "}");
	q->rep->version = c->committed;
	mgr_api_reply(q->rep, &b, &j);
}
