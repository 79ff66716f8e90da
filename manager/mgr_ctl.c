/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operator API: one CTL_REQUEST in, one CTL_REPLY out.
 *
 * A change is checked against the desired table first, with an error that
 * names what is wrong ("backend 10.1.1.13:8080 already in tcp
 * 10.0.0.10:80"); a refused request changes nothing. An accepted change is
 * stored durably before the reply, whose version is the one it will commit
 * as; WAIT then tells whether that version committed or aborted.
 *
 * Every reply carries the same answer twice: `body` for people (what
 * sluicectl prints) and `json` for programs (sluicectl --json).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_hdr.h"
#include "lb_log.h"
#include "lb_maglev.h"
#include "mgr.h"
#include "mgr_guard.h"
#include "mgr_transport.h"
#include "mgr_text.h"

static void refuse(struct lb_msg *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
refuse(struct lb_msg *rep, const char *fmt, ...)
{
	va_list ap;

	rep->flag = false;
	va_start(ap, fmt);
	vsnprintf(rep->text, sizeof(rep->text), fmt, ap);
	va_end(ap);
}

static void
reply(struct lb_msg *rep, struct mgr_buf *body, struct mgr_buf *json)
{
	rep->flag = true;
	rep->body = mgr_buf_take(body);
	rep->json = mgr_buf_take(json);
	if (rep->body == NULL || rep->json == NULL) {
		free(rep->body);
		free(rep->json);
		rep->body = rep->json = NULL;
		refuse(rep, "out of memory for the reply");
	}
}

/* ---- read requests ---- */

static uint64_t
age(uint64_t now, uint64_t then)
{
	return then == 0 || now < then ? 0 : now - then;
}

static void
status_members(struct mgr *m, struct mgr_buf *b, struct mgr_buf *j, uint64_t now)
{
	const struct mgr_commit *c = m->commit;
	struct mgr_vip_env env;
	uint32_t i, k, in_sync = 0;

	mgr_vip_env(m, &env);
	for (i = 0; i < c->n_members; i++)
		in_sync += c->members[i].state == MGR_MEMBER_IN_SYNC;
	mgr_buf_printf(b, "members     %u (%u in sync)\n", c->n_members, in_sync);
	if (c->n_members > 0)
		mgr_buf_printf(b, "  %-16s %-5s  %-7s  %7s  %8s  %-9s  %s\n", "ID", "ROLE", "STATE",
			"APPLIED", "CONTACT", "CONNECTED", "DETAIL");
	mgr_buf_printf(j, ",\"members\":[");
	for (i = 0; i < c->n_members; i++) {
		const struct mgr_member *mb = &c->members[i];
		const struct mgr_peer *p = &m->peers[i];
		uint64_t last = p->mp_last_contact_ms > mb->last_contact_ms ? p->mp_last_contact_ms
									    : mb->last_contact_ms;
		bool fenced = mb->state != MGR_MEMBER_IN_SYNC;
		uint64_t a = age(now, last);

		mgr_buf_printf(b,
			"  %-16s %-5s  %-7s  %7" PRIu64 "  %6" PRIu64 ".%01" PRIu64 "s  %-9s  ",
			mb->id, mgr_role_name(mb->role), fenced ? "fenced" : "in-sync", mb->applied,
			a / 1000, (a % 1000) / 100, p->mp_connected ? "yes" : "no");
		if (fenced)
			mgr_buf_printf(b, "%s", mb->why);
		for (k = 0; !fenced && k < p->mp_n_counters && k < 4; k++)
			mgr_buf_printf(b, "%s%s=%" PRIu64, k ? " " : "", p->mp_counters[k].name,
				p->mp_counters[k].value);
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
			p->mp_connected ? "true" : "false", p->mp_snaps, p->mp_bad_msgs);
		for (k = 0; k < p->mp_n_counters; k++) {
			mgr_buf_printf(j, "%s", k ? "," : "");
			mgr_buf_json_str(j, p->mp_counters[k].name);
			mgr_buf_printf(j, ":%" PRIu64, p->mp_counters[k].value);
		}
		mgr_buf_printf(j, "}");
		mgr_vip_probe_view_member(m->vip, &env, (int)i, b, j, now);
		mgr_buf_printf(j, "}");
	}
	mgr_buf_printf(j, "]");
}

static void
ctl_status(struct mgr *m, struct lb_msg *rep, uint64_t now)
{
	const struct mgr_commit *c = m->commit;
	const struct mgr_round *r = &m->round;
	struct mgr_transport_stats ts;
	struct mgr_vip_env env;
	struct mgr_buf b = {0}, j = {0};
	char hex[MGR_HEX_DIGEST];
	uint64_t pending = m->accepted_seq - (r->r_active ? r->r_seq : m->committed_seq);

	mgr_transport_stats(m->transport, &ts);
	mgr_digest_hex(m->committed_digest, hex);
	mgr_buf_printf(&b,
		"committed   version %" PRIu64 "  digest %s  (%u services, %u backends)\n",
		c->committed, hex, m->committed.n_services, lb_ftable_backend_count(&m->committed));
	mgr_buf_printf(&j,
		"{\"committed\":{\"version\":%" PRIu64 ",\"digest\":\"%s\",\"services\":%u,"
		"\"backends\":%u}",
		c->committed, hex, m->committed.n_services, lb_ftable_backend_count(&m->committed));
	if (r->r_active) {
		uint32_t i, votes = 0, asked = 0;

		for (i = 0; i < c->n_members; i++) {
			asked += c->members[i].in_round;
			votes += c->members[i].in_round && c->members[i].vote == MGR_VOTE_YES;
		}
		mgr_digest_hex(r->r_digest, hex);
		mgr_buf_printf(&b,
			"round       version %" PRIu64 " prepared %" PRIu64
			" ms ago: %u of %u yes votes, deadline in %" PRIu64 " ms: %s\n",
			r->r_version, age(now, r->r_started_ms), votes, asked,
			c->deadline_ms > now ? c->deadline_ms - now : 0, r->r_summary);
		mgr_buf_printf(&j,
			",\"round\":{\"version\":%" PRIu64 ",\"digest\":\"%s\",\"age_ms\":%" PRIu64
			",\"yes\":%u,\"members\":%u,\"summary\":",
			r->r_version, hex, age(now, r->r_started_ms), votes, asked);
		mgr_buf_json_str(&j, r->r_summary);
		mgr_buf_printf(&j, "}");
	} else {
		mgr_buf_printf(&b, "round       none\n");
		mgr_buf_printf(&j, ",\"round\":null");
	}
	if (mgr_pending(m) && pending == 0) {
		/* Accepted by the run before this one: its count is gone, the table is not. */
		mgr_buf_printf(&b,
			"pending     changes from before the restart, will commit as version "
			"%" PRIu64 "\n",
			mgr_target_version(m));
		mgr_buf_printf(&j, ",\"pending\":{\"changes\":null,\"version\":%" PRIu64 "}",
			mgr_target_version(m));
	} else if (mgr_pending(m)) {
		mgr_buf_printf(&b,
			"pending     %" PRIu64 " change%s, will commit as version %" PRIu64 "\n",
			pending, pending == 1 ? "" : "s", mgr_target_version(m));
		mgr_buf_printf(&j, ",\"pending\":{\"changes\":%" PRIu64 ",\"version\":%" PRIu64 "}",
			pending, mgr_target_version(m));
	} else {
		mgr_buf_printf(&b, "pending     none\n");
		mgr_buf_printf(&j, ",\"pending\":null");
	}
	mgr_buf_printf(&b, "last round  %s", m->last_outcome[0] ? m->last_outcome : "none");
	if (m->last_outcome[0])
		mgr_buf_printf(&b, " (%" PRIu64 " s ago)", age(now, m->last_outcome_ms) / 1000);
	mgr_buf_printf(&b, "\ndatabase    %s  %s%s\n", m->cfg.mc_database,
		m->store_err[0] ? "error: " : "ok", m->store_err);
	mgr_buf_printf(&j, ",\"last_round\":");
	mgr_buf_json_str(&j, m->last_outcome);
	mgr_buf_printf(&j, ",\"database\":{\"path\":");
	mgr_buf_json_str(&j, m->cfg.mc_database);
	mgr_buf_printf(&j, ",\"error\":");
	mgr_buf_json_str(&j, m->store_err);
	mgr_buf_printf(&j,
		"},\"counters\":{\"committed\":%" PRIu64 ",\"aborted\":%" PRIu64
		",\"malformed\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"unexpected\":%" PRIu64
		",\"ctl_requests\":%" PRIu64 ",\"ctl_dropped\":%" PRIu64
		",\"listener_restarts\":%" PRIu64 ",\"listener_checks\":%" PRIu64
		",\"challenges\":%" PRIu64 ",\"unproven\":%" PRIu64 "}",
		m->n_committed, m->n_aborted, ts.malformed, ts.refused, m->n_unexpected, ts.ctl,
		ts.ctl_dropped, mgr_guard_restarts(m->guard), mgr_guard_checks(m->guard),
		ts.challenges, ts.unproven);
	mgr_view_health(m, &b, &j, now);
	mgr_vip_env(m, &env);
	mgr_vip_probe_view(m->vip, &env, &b, &j, now);
	status_members(m, &b, &j, now);
	mgr_buf_printf(&j, "}");
	rep->version = c->committed;
	reply(rep, &b, &j);
}

static void
ctl_vip_list(struct mgr *m, const struct lb_msg *req, struct lb_msg *rep, uint64_t now)
{
	struct mgr_buf b = {0}, j = {0};
	char s[MGR_SVC_STR];

	/* vip show: one service, which must exist (committed or to come) */
	if (req->ctl.has_svc && lb_ftable_find(&m->committed, &req->ctl.svc) < 0 &&
		lb_ftable_find(&m->effective, &req->ctl.svc) < 0) {
		refuse(rep, "no service %s", mgr_key_str(&req->ctl.svc, s, sizeof(s)));
		return;
	}
	mgr_view_vip_list(m, req->ctl.has_svc ? &req->ctl.svc : NULL, &b, &j, now);
	rep->version = m->commit->committed;
	reply(rep, &b, &j);
}

static void
ctl_history(struct mgr *m, const struct lb_msg *req, struct lb_msg *rep)
{
	struct mgr_buf b = {0}, j = {0}, ab = {0};
	struct mgr_hist *h = NULL;
	char t[32], hex[MGR_HEX_DIGEST];
	int n = mgr_store_history(m->store, req->ctl.limit, &h), i, nv = 0, na = 0;

	if (n < 0) {
		refuse(rep, "%s", n == -LB_EIO ? mgr_store_error(m->store) : lb_strerror(n));
		return;
	}
	mgr_buf_printf(&j, "{\"versions\":[");
	mgr_buf_printf(&ab, "],\"aborted\":[");
	for (i = 0; i < n; i++) {
		struct mgr_buf *jj = h[i].mh_aborted ? &ab : &j;

		mgr_time_str(h[i].mh_time_ms, t, sizeof(t));
		mgr_digest_hex(h[i].mh_digest, hex);
		mgr_buf_printf(&b, "%-6" PRIu64 "  %-9s  %s  %.12s  %s", h[i].mh_version,
			h[i].mh_aborted ? "aborted" : "committed", t, hex, h[i].mh_text);
		if (h[i].mh_aborted)
			mgr_buf_printf(&b, " (%s)", h[i].mh_reason);
		mgr_buf_printf(&b, "\n");
		mgr_buf_printf(jj,
			"%s{\"version\":%" PRIu64 ",\"time\":\"%s\",\"time_ms\":%" PRId64
			",\"digest\":\"%s\",\"summary\":",
			(h[i].mh_aborted ? na++ : nv++) ? "," : "", h[i].mh_version, t,
			h[i].mh_time_ms, hex);
		mgr_buf_json_str(jj, h[i].mh_text);
		if (h[i].mh_aborted) {
			mgr_buf_printf(jj, ",\"reason\":");
			mgr_buf_json_str(jj, h[i].mh_reason);
		}
		mgr_buf_printf(jj, "}");
	}
	if (n == 0)
		mgr_buf_printf(&b, "no version committed yet\n");
	mgr_buf_printf(&j, "%s]}", mgr_buf_str(&ab));
	mgr_buf_free(&ab);
	free(h);
	rep->version = m->commit->committed;
	reply(rep, &b, &j);
}

static void
ctl_export(struct mgr *m, struct lb_msg *rep)
{
	struct mgr_buf b = {0}, j = {0};
	char *text = NULL;

	if (mgr_view_export(m, &text) != 0) {
		refuse(rep, "export: cannot write the table");
		return;
	}
	mgr_buf_printf(&b, "%s", text);
	mgr_buf_printf(&j, "{\"version\":%" PRIu64 ",\"config\":", m->commit->committed);
	mgr_buf_json_str(&j, text);
	mgr_buf_printf(&j, "}");
	free(text);
	rep->version = m->commit->committed;
	reply(rep, &b, &j);
}

static void
ctl_wait(struct mgr *m, const struct lb_msg *req, struct lb_msg *rep)
{
	static const char *const names[] = {[MGR_WAIT_PENDING] = "pending",
		[MGR_WAIT_COMMITTED] = "committed",
		[MGR_WAIT_ABORTED] = "aborted"};
	struct mgr_buf b = {0}, j = {0};
	const char *reason = NULL;
	uint64_t as = 0, v = req->version;
	enum mgr_wait_state st = mgr_wait(m, v, &as, &reason);

	if (st == MGR_WAIT_UNKNOWN) {
		refuse(rep,
			"version %" PRIu64 " is unknown: committed is %" PRIu64
			" and no change waits for %" PRIu64,
			v, m->commit->committed, v);
		return;
	}
	/* "version" first: it is the version that holds the change. */
	mgr_buf_printf(&j, "{\"version\":%" PRIu64 ",\"state\":\"%s\",\"reason\":",
		st == MGR_WAIT_COMMITTED ? as : v, names[st]);
	mgr_buf_json_str(&j, reason ? reason : "");
	mgr_buf_printf(
		&j, ",\"asked\":%" PRIu64 ",\"committed\":%" PRIu64 "}", v, m->commit->committed);
	if (st == MGR_WAIT_COMMITTED)
		mgr_buf_printf(&b, "version %" PRIu64 " committed", as);
	else
		mgr_buf_printf(&b, "version %" PRIu64 " %s", v, names[st]);
	if (reason != NULL)
		mgr_buf_printf(&b, ": %s", reason);
	mgr_buf_printf(&b, "\n");
	rep->version = st == MGR_WAIT_COMMITTED ? as : v;
	/* The same answer typed, for sluicectl to decide by. */
	rep->wait.state = st == MGR_WAIT_COMMITTED ? LB_WAIT_COMMITTED
			  : st == MGR_WAIT_ABORTED ? LB_WAIT_ABORTED
						   : LB_WAIT_PENDING;
	rep->wait.committed_as = st == MGR_WAIT_COMMITTED ? as : 0;
	snprintf(rep->wait.reason, sizeof(rep->wait.reason), "%s", reason ? reason : "");
	reply(rep, &b, &j);
}

/* ---- changes ---- */

/*
 * Take `next` as the desired table and `pools` as its pool options (both
 * taken over; pools NULL: they stay) and answer with the version it
 * commits as.
 */
static void
change(struct mgr *m, struct lb_ftable *next, struct mgr_pools *pools, const struct mgr_meta *meta,
	const char *what, const char *asker, struct lb_msg *rep)
{
	struct mgr_buf b = {0}, j = {0};
	struct mgr_pools keep;
	uint8_t d[LB_DIGEST_LEN];
	char e[LB_MSG_TEXT];
	uint64_t v;
	int rc;

	if (pools == NULL) {
		if (mgr_pools_copy(&keep, &m->pools) != 0) {
			lb_ftable_free(next);
			refuse(rep, "out of memory");
			return;
		}
		pools = &keep;
	}
	lb_ftable_sort(next);
	lb_ftable_digest(next, d);
	mgr_pools_prune(pools, next);
	if (memcmp(d, m->desired_digest, LB_DIGEST_LEN) == 0 && mgr_pools_equal(pools, &m->pools)) {
		lb_ftable_free(next);
		mgr_pools_free(pools);
		v = mgr_target_version(m);
		if (strcmp(what, "no change") == 0)
			mgr_buf_printf(&b, "no change: version %" PRIu64 " holds this table\n", v);
		else
			mgr_buf_printf(
				&b, "no change (%s): version %" PRIu64 " holds it\n", what, v);
		mgr_buf_printf(
			&j, "{\"version\":%" PRIu64 ",\"state\":\"unchanged\",\"change\":", v);
		mgr_buf_json_str(&j, what);
		mgr_buf_printf(&j, "}");
		rep->version = v;
		reply(rep, &b, &j);
		return;
	}
	rc = mgr_set_desired(m, next, pools, meta, asker, &v, e, sizeof(e));
	if (rc != 0) {
		refuse(rep, "%s%s", rc == -LB_EIO ? "change refused: " : "", e);
		return;
	}
	LB_INFO("accepted, will commit as version %" PRIu64 ": %s", v, what);
	mgr_buf_printf(&b, "accepted: %s; will commit as version %" PRIu64 "\n", what, v);
	mgr_buf_printf(&j, "{\"version\":%" PRIu64 ",\"state\":\"accepted\",\"change\":", v);
	mgr_buf_json_str(&j, what);
	mgr_buf_printf(&j, "}");
	rep->version = v;
	reply(rep, &b, &j);
}

static int
svc_in(const struct lb_ftable *t, const struct lb_msg *req, struct lb_msg *rep)
{
	char k[MGR_SVC_STR];
	int i;

	if (!req->ctl.has_svc) {
		refuse(rep, "the request names no service");
		return -1;
	}
	i = lb_ftable_find(t, &req->ctl.svc);
	if (i < 0)
		refuse(rep, "no service %s", mgr_key_str(&req->ctl.svc, k, sizeof(k)));
	return i;
}

static int
be_in(const struct lb_service_cfg *sc, const struct lb_backend_cfg *be)
{
	uint32_t i;

	for (i = 0; i < sc->n_backends; i++)
		if (sc->backends[i].dip.a32[0] == be->dip.a32[0] &&
			sc->backends[i].port == be->port)
			return (int)i;
	return -1;
}

/* What a request's backend fields may hold; the error names the field. */
static bool
be_fields_ok(const struct lb_msg *req, bool adding, struct lb_msg *rep)
{
	const struct lb_ctl *c = &req->ctl;
	char d[MGR_BE_STR];

	if (!c->has_be) {
		refuse(rep, "the request names no backend");
		return false;
	}
	mgr_be_str(&c->be, d, sizeof(d));
	if (c->be.dip.a32[0] == 0 || c->be.port == 0) {
		refuse(rep, "backend %s: dip and port are required", d);
		return false;
	}
	if ((adding || c->set_weight) && c->be.weight > LB_MAGLEV_MAX_WEIGHT) {
		refuse(rep, "backend %s: weight %u out of range 0..%u", d, c->be.weight,
			LB_MAGLEV_MAX_WEIGHT);
		return false;
	}
	if ((adding || c->set_state) && c->be.state > LB_BACKEND_MAINT) {
		refuse(rep, "backend %s: state %u is not active, drain or maint", d, c->be.state);
		return false;
	}
	if ((adding || c->set_host) && c->be.host.a32[0] == 0) {
		refuse(rep, "backend %s: host (the PA of its server) is required", d);
		return false;
	}
	return true;
}

/* The pool options a request gives, over `p`; the error names the field. */
static bool
pool_ok(const struct lb_msg *req, struct mgr_pool *p, struct lb_msg *rep)
{
	char k[MGR_SVC_STR], e[LB_MSG_TEXT];

	if (req->ctl.pool.given == 0)
		return true;
	if (mgr_pool_apply(p, &req->ctl.pool, e, sizeof(e)) != 0) {
		refuse(rep, "pool of %s: %s", mgr_key_str(&req->ctl.svc, k, sizeof(k)), e);
		return false;
	}
	return true;
}

/* "interval 30->5, probe tcp->http": what a pool change changes. */
static void
pool_diff(const struct mgr_pool *a, const struct mgr_pool *b, char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
#define PD(cond, ...)                                                                              \
	do {                                                                                       \
		if ((cond) && off < len)                                                           \
			off += (size_t)snprintf(out + off, len - off, __VA_ARGS__);                \
	} while (0)
	PD(a->pl_probe != b->pl_probe, " probe %s->%s", mgr_probe_name(a->pl_probe),
		mgr_probe_name(b->pl_probe));
	PD(a->pl_probe_port != b->pl_probe_port, " probe_port %u->%u", a->pl_probe_port,
		b->pl_probe_port);
	PD(strcmp(a->pl_path, b->pl_path) != 0, " path %s", b->pl_path);
	PD(strcmp(a->pl_codes, b->pl_codes) != 0, " codes %s", b->pl_codes);
	PD(a->pl_interval_s != b->pl_interval_s, " interval %u->%u", a->pl_interval_s,
		b->pl_interval_s);
	PD(a->pl_timeout_s != b->pl_timeout_s, " timeout %u->%u", a->pl_timeout_s, b->pl_timeout_s);
	PD(a->pl_healthy != b->pl_healthy, " healthy %u->%u", a->pl_healthy, b->pl_healthy);
	PD(a->pl_unhealthy != b->pl_unhealthy, " unhealthy %u->%u", a->pl_unhealthy,
		b->pl_unhealthy);
	PD(a->pl_drain_delay_s != b->pl_drain_delay_s, " drain_delay %u->%u", a->pl_drain_delay_s,
		b->pl_drain_delay_s);
	PD(a->pl_slow_start_s != b->pl_slow_start_s, " slow_start %u->%u", a->pl_slow_start_s,
		b->pl_slow_start_s);
	PD(a->pl_min_healthy != b->pl_min_healthy, " min_healthy %u->%u", a->pl_min_healthy,
		b->pl_min_healthy);
	PD(a->pl_min_healthy_pct != b->pl_min_healthy_pct, " min_healthy_percent %u->%u",
		a->pl_min_healthy_pct, b->pl_min_healthy_pct);
#undef PD
}

static void
ctl_vip_add(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep)
{
	struct mgr_pool pool = *mgr_pool_defaults();
	struct mgr_meta meta = m->meta;
	struct lb_service_cfg *svcs, *sc;
	struct mgr_pools pools;
	struct lb_ftable next;
	char k[MGR_SVC_STR], what[64];

	if (!req->ctl.has_svc) {
		refuse(rep, "the request names no service");
		return;
	}
	mgr_key_str(&req->ctl.svc, k, sizeof(k));
	if (lb_ftable_find(&m->desired, &req->ctl.svc) >= 0) {
		refuse(rep, "service %s already exists", k);
		return;
	}
	if (!pool_ok(req, &pool, rep))
		return;
	if (mgr_pools_copy(&pools, &m->pools) != 0)
		goto nomem;
	if (mgr_pools_set(&pools, &req->ctl.svc, &pool) != 0) {
		mgr_pools_free(&pools);
		goto nomem;
	}
	if (lb_ftable_copy(&next, &m->desired) != 0) {
		mgr_pools_free(&pools);
		goto nomem;
	}
	svcs = realloc(next.services, (next.n_services + 1) * sizeof(*svcs));
	if (svcs == NULL)
		goto nomem_next;
	next.services = svcs;
	sc = &svcs[next.n_services];
	memset(sc, 0, sizeof(*sc));
	sc->backends = calloc(1, sizeof(*sc->backends));
	if (sc->backends == NULL)
		goto nomem_next;
	next.n_services++;
	sc->vip = req->ctl.svc.vip;
	sc->port = lb_be16_to_cpu(req->ctl.svc.port);
	sc->proto = req->ctl.svc.proto;
	sc->af = LB_AF_INET;
	sc->id = meta.mm_next_service_id++;
	snprintf(what, sizeof(what), "+vip %s", k);
	change(m, &next, &pools, &meta, what, asker, rep);
	return;
nomem_next:
	lb_ftable_free(&next);
	mgr_pools_free(&pools);
nomem:
	refuse(rep, "out of memory");
}

static void
ctl_vip_set(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep)
{
	struct mgr_pools pools;
	struct mgr_pool pool;
	struct lb_ftable next;
	char k[MGR_SVC_STR], what[400], diff[320];
	int i = svc_in(&m->desired, req, rep);

	if (i < 0)
		return;
	if (req->ctl.pool.given == 0) {
		refuse(rep, "nothing to change: give a pool option (--probe, --interval, ...)");
		return;
	}
	pool = *mgr_pools_get(&m->pools, &req->ctl.svc);
	if (!pool_ok(req, &pool, rep))
		return;
	pool_diff(mgr_pools_get(&m->pools, &req->ctl.svc), &pool, diff, sizeof(diff));
	if (mgr_pools_copy(&pools, &m->pools) != 0 ||
		mgr_pools_set(&pools, &req->ctl.svc, &pool) != 0) {
		mgr_pools_free(&pools);
		refuse(rep, "out of memory");
		return;
	}
	if (lb_ftable_copy(&next, &m->desired) != 0) {
		mgr_pools_free(&pools);
		refuse(rep, "out of memory");
		return;
	}
	snprintf(what, sizeof(what), "~pool %s:%s", mgr_key_str(&req->ctl.svc, k, sizeof(k)),
		diff[0] ? diff : " no change");
	change(m, &next, &pools, &m->meta, what, asker, rep);
}

static void
ctl_vip_del(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep)
{
	struct lb_ftable next;
	char k[MGR_SVC_STR], what[64];
	int i = svc_in(&m->desired, req, rep);

	if (i < 0)
		return;
	if (lb_ftable_copy(&next, &m->desired) != 0) {
		refuse(rep, "out of memory");
		return;
	}
	free(next.services[i].backends);
	memmove(&next.services[i], &next.services[i + 1],
		(next.n_services - (uint32_t)i - 1) * sizeof(next.services[0]));
	next.n_services--;
	snprintf(what, sizeof(what), "-vip %s", mgr_key_str(&req->ctl.svc, k, sizeof(k)));
	change(m, &next, NULL, &m->meta, what, asker, rep);
}

static void
ctl_backend_add(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep)
{
	struct mgr_meta meta = m->meta;
	struct lb_backend_cfg *bes, *be;
	struct lb_service_cfg *sc;
	struct lb_ftable next;
	char k[MGR_SVC_STR], d[MGR_BE_STR], what[128];
	int i = svc_in(&m->desired, req, rep);

	if (i < 0 || !be_fields_ok(req, true, rep))
		return;
	mgr_key_str(&req->ctl.svc, k, sizeof(k));
	mgr_be_str(&req->ctl.be, d, sizeof(d));
	sc = &m->desired.services[i];
	if (be_in(sc, &req->ctl.be) >= 0) {
		refuse(rep, "backend %s already in %s", d, k);
		return;
	}
	if (sc->n_backends >= LB_MAGLEV_MAX_BACKENDS) {
		refuse(rep, "%s has %u backends, the most a service can have", k, sc->n_backends);
		return;
	}
	if (lb_ftable_copy(&next, &m->desired) != 0)
		goto nomem;
	sc = &next.services[i];
	bes = realloc(sc->backends, (sc->n_backends + 1) * sizeof(*bes));
	if (bes == NULL) {
		lb_ftable_free(&next);
		goto nomem;
	}
	sc->backends = bes;
	be = &bes[sc->n_backends++];
	memset(be, 0, sizeof(*be));
	be->dip = req->ctl.be.dip;
	be->port = req->ctl.be.port;
	be->host = req->ctl.be.host;
	be->weight = req->ctl.be.weight;
	be->state = req->ctl.be.state;
	be->id = meta.mm_next_backend_id++;
	snprintf(what, sizeof(what), "+backend %s on %s", d, k);
	change(m, &next, NULL, &meta, what, asker, rep);
	return;
nomem:
	refuse(rep, "out of memory");
}

static void
ctl_backend_del(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep)
{
	struct lb_service_cfg *sc;
	struct lb_ftable next;
	char k[MGR_SVC_STR], d[MGR_BE_STR], what[128];
	int i = svc_in(&m->desired, req, rep), b;

	if (i < 0)
		return;
	if (!req->ctl.has_be) {
		refuse(rep, "the request names no backend");
		return;
	}
	mgr_key_str(&req->ctl.svc, k, sizeof(k));
	mgr_be_str(&req->ctl.be, d, sizeof(d));
	b = be_in(&m->desired.services[i], &req->ctl.be);
	if (b < 0) {
		refuse(rep, "no backend %s in %s", d, k);
		return;
	}
	if (lb_ftable_copy(&next, &m->desired) != 0) {
		refuse(rep, "out of memory");
		return;
	}
	sc = &next.services[i];
	memmove(&sc->backends[b], &sc->backends[b + 1],
		(sc->n_backends - (uint32_t)b - 1) * sizeof(sc->backends[0]));
	sc->n_backends--;
	snprintf(what, sizeof(what), "-backend %s on %s", d, k);
	change(m, &next, NULL, &m->meta, what, asker, rep);
}

static void
ctl_backend_set(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep)
{
	const struct lb_ctl *c = &req->ctl;
	struct lb_backend_cfg *be;
	struct lb_ftable next;
	char k[MGR_SVC_STR], d[MGR_BE_STR], h[16], what[192];
	size_t off;
	int i = svc_in(&m->desired, req, rep), b;

	if (i < 0 || !be_fields_ok(req, false, rep))
		return;
	if (!c->set_weight && !c->set_state && !c->set_host) {
		refuse(rep, "nothing to change: set the weight, the state or the host");
		return;
	}
	mgr_key_str(&c->svc, k, sizeof(k));
	mgr_be_str(&c->be, d, sizeof(d));
	b = be_in(&m->desired.services[i], &c->be);
	if (b < 0) {
		refuse(rep, "no backend %s in %s", d, k);
		return;
	}
	if (lb_ftable_copy(&next, &m->desired) != 0) {
		refuse(rep, "out of memory");
		return;
	}
	be = &next.services[i].backends[b];
	off = (size_t)snprintf(what, sizeof(what), "~backend %s on %s:", d, k);
	if (c->set_weight) {
		be->weight = c->be.weight;
		off += (size_t)snprintf(what + off, sizeof(what) - off, " weight %u", be->weight);
	}
	if (c->set_state) {
		be->state = c->be.state;
		off += (size_t)snprintf(
			what + off, sizeof(what) - off, " state %s", mgr_state_name(be->state));
	}
	if (c->set_host) {
		be->host = c->be.host;
		snprintf(what + off, sizeof(what) - off, " host %s",
			lb_addr_str(&be->host, h, sizeof(h)));
	}
	change(m, &next, NULL, &m->meta, what, asker, rep);
}

/* ---- services files (APPLY, services_file) ---- */

/* "<config>:12: ..." from a text without a file becomes "<apply>:12: ...". */
static void
name_errors(char *msg, size_t len, const char *name)
{
	static const char pfx[] = "<config>:";
	char tmp[LB_CFG_ERR_LEN];

	if (strncmp(msg, pfx, sizeof(pfx) - 1) != 0)
		return;
	snprintf(tmp, sizeof(tmp), "%s:%s", name, msg + sizeof(pfx) - 1);
	snprintf(msg, len, "%s", tmp);
}

/* One `pools` entry: its service (which the file's flow_table must have) and options. */
static int
pool_entry(const config_setting_t *g, const struct lb_ftable *t, struct mgr_pools *pools,
	struct lb_cfg_err *e)
{
	const char *fields[32], *proto = "tcp";
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_svc_key k;
	char ks[MGR_SVC_STR];
	lb_be32_t vip;
	long long port;
	uint32_t i, n = 0;
	int rc;

	if (!config_setting_is_group(g))
		return lb_cfg_error(e, g, NULL,
			"expected a group { vip = ...; port = ...; protocol = ...; probe = ...; }");
	fields[n++] = "vip";
	fields[n++] = "port";
	fields[n++] = "protocol";
	for (i = 0; mgr_pool_cfg_fields[i] != NULL; i++)
		fields[n++] = mgr_pool_cfg_fields[i];
	fields[n] = NULL;
	if ((rc = lb_cfg_check_fields(g, fields, e)) != 0 ||
		(rc = lb_cfg_get_ipv4(g, "vip", true, &vip, e)) != 0 ||
		(rc = lb_cfg_get_int(g, "port", true, 1, 65535, 0, &port, e)) != 0 ||
		(rc = lb_cfg_get_string(g, "protocol", false, "tcp", &proto, e)) != 0)
		return rc;
	if (strcmp(proto, "tcp") != 0 && strcmp(proto, "udp") != 0)
		return lb_cfg_error(e, config_setting_get_member(g, "protocol"), NULL,
			"\"%s\": must be tcp or udp", proto);
	lb_svc_key_v4(&k, vip, lb_cpu_to_be16((uint16_t)port),
		strcmp(proto, "udp") == 0 ? LB_IPPROTO_UDP : LB_IPPROTO_TCP);
	mgr_key_str(&k, ks, sizeof(ks));
	if (lb_ftable_find(t, &k) < 0)
		return lb_cfg_error(e, g, NULL, "no service %s in flow_table.services", ks);
	if (mgr_pools_get(pools, &k) != mgr_pool_defaults())
		return lb_cfg_error(e, g, NULL, "%s has a pool already", ks);
	if ((rc = mgr_pool_from_cfg(g, &p, e)) != 0)
		return rc;
	return mgr_pools_set(pools, &k, &p) != 0 ? -LB_ENOMEM : 0;
}

/* The optional top-level `pools` list of a services file. */
static int
pools_load(config_setting_t *root, const struct lb_ftable *t, struct mgr_pools *pools,
	struct lb_cfg_err *e)
{
	config_setting_t *l = config_setting_get_member(root, "pools");
	int i, n, rc;

	if (l == NULL)
		return 0;
	if (!config_setting_is_list(l))
		return lb_cfg_error(e, l, NULL,
			"expected a list ( { vip = ...; port = ...; probe = ...; }, ... )");
	n = config_setting_length(l);
	for (i = 0; i < n; i++)
		if ((rc = pool_entry(config_setting_get_elem(l, (unsigned)i), t, pools, e)) != 0)
			return rc;
	return 0;
}

int
mgr_services_load(const struct mgr *m, config_t *c, const char *name, struct mgr_meta *meta,
	struct lb_ftable *out, struct mgr_pools *pools, char *err, size_t len)
{
	static const char *const top[] = {"flow_table", "pools", NULL};
	config_setting_t *root = config_root_setting(c), *g, *s;
	struct lb_cfg_err e;
	char hex[40];
	uint32_t i, j;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(pools, 0, sizeof(*pools));
	if (lb_cfg_check_fields(root, top, &e) != 0) {
		name_errors(e.msg, sizeof(e.msg), name);
		snprintf(err, len, "%s", e.msg);
		return -LB_ECONFIG;
	}
	g = config_setting_get_member(root, "flow_table");
	if (g == NULL) {
		snprintf(err, len, "%s: flow_table: missing (flow_table = { services = ( ... ); })",
			name);
		return -LB_ECONFIG;
	}
	/* The manager's seed and Maglev size, unless the file sets its own. */
	if (config_setting_is_group(g) && config_setting_get_member(g, "hash_seed") == NULL) {
		snprintf(hex, sizeof(hex), "%016" PRIx64 "%016" PRIx64, m->desired.seed.k0,
			m->desired.seed.k1);
		s = config_setting_add(g, "hash_seed", CONFIG_TYPE_STRING);
		if (s == NULL || config_setting_set_string(s, hex) != CONFIG_TRUE)
			goto nomem;
	}
	if (config_setting_is_group(g) && config_setting_get_member(g, "maglev_size") == NULL) {
		s = config_setting_add(g, "maglev_size", CONFIG_TYPE_INT);
		if (s == NULL ||
			config_setting_set_int(s, (int)m->desired.maglev_size) != CONFIG_TRUE)
			goto nomem;
	}
	rc = lb_ftable_load(g, out, &e);
	if (rc == 0)
		rc = pools_load(root, out, pools, &e);
	if (rc != 0) {
		lb_ftable_free(out);
		mgr_pools_free(pools);
		name_errors(e.msg, sizeof(e.msg), name);
		snprintf(err, len, "%s", rc == -LB_ENOMEM ? "out of memory" : e.msg);
		return rc;
	}
	/* Ids follow (service, DIP, port): what stays keeps its id. */
	for (i = 0; i < out->n_services; i++) {
		struct lb_service_cfg *sc = &out->services[i];
		const struct lb_service_cfg *old = NULL;
		struct lb_svc_key k;
		int f;

		lb_ftable_key(sc, &k);
		f = lb_ftable_find(&m->desired, &k);
		if (f >= 0)
			old = &m->desired.services[f];
		sc->id = old != NULL ? old->id : meta->mm_next_service_id++;
		for (j = 0; j < sc->n_backends; j++) {
			const struct lb_backend_cfg *ob =
				old == NULL
					? NULL
					: bsearch(&sc->backends[j], old->backends, old->n_backends,
						  sizeof(*old->backends), lb_backend_cmp);

			sc->backends[j].id = ob != NULL ? ob->id : meta->mm_next_backend_id++;
		}
	}
	meta->mm_seed = out->seed;
	meta->mm_has_seed = true;
	meta->mm_maglev_size = out->maglev_size;
	return 0;
nomem:
	snprintf(err, len, "out of memory");
	return -LB_ENOMEM;
}

static void
ctl_apply(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep)
{
	struct mgr_meta meta = m->meta;
	struct mgr_pools pools;
	struct lb_ftable next;
	char e[LB_MSG_TEXT], what[600];
	config_t c;

	if (req->body == NULL || req->body[0] == '\0') {
		refuse(rep, "<apply>: empty file (expected flow_table = { ... })");
		return;
	}
	config_init(&c);
	if (config_read_string(&c, req->body) != CONFIG_TRUE) {
		refuse(rep, "<apply>:%d: %s", config_error_line(&c), config_error_text(&c));
		config_destroy(&c);
		return;
	}
	if (mgr_services_load(m, &c, "<apply>", &meta, &next, &pools, e, sizeof(e)) != 0) {
		config_destroy(&c);
		refuse(rep, "%s", e);
		return;
	}
	config_destroy(&c);
	lb_ftable_sort(&next);
	mgr_summary(&m->desired, &next, what, sizeof(what));
	if (strcmp(what, "no change") == 0 && !mgr_pools_equal(&pools, &m->pools))
		snprintf(what, sizeof(what), "pool options");
	change(m, &next, &pools, &meta, what, asker, rep);
}

void
mgr_ctl_handle(struct mgr *m, const struct lb_msg *req, const char *asker, struct lb_msg *rep,
	uint64_t now)
{
	rep->type = LB_MSG_CTL_REPLY;
	rep->version = m->commit->committed;
	/* Answers about health and pending versions see the news so far. */
	mgr_effective_refresh(m, now);
	switch (req->ctl.op) {
	case LB_CTL_STATUS:
		ctl_status(m, rep, now);
		break;
	case LB_CTL_VIP_LIST:
		ctl_vip_list(m, req, rep, now);
		break;
	case LB_CTL_VIP_SET:
		ctl_vip_set(m, req, asker, rep);
		break;
	case LB_CTL_VIP_ADD:
		ctl_vip_add(m, req, asker, rep);
		break;
	case LB_CTL_VIP_DEL:
		ctl_vip_del(m, req, asker, rep);
		break;
	case LB_CTL_BACKEND_ADD:
		ctl_backend_add(m, req, asker, rep);
		break;
	case LB_CTL_BACKEND_DEL:
		ctl_backend_del(m, req, asker, rep);
		break;
	case LB_CTL_BACKEND_SET:
		ctl_backend_set(m, req, asker, rep);
		break;
	case LB_CTL_HISTORY:
		ctl_history(m, req, rep);
		break;
	case LB_CTL_EXPORT:
		ctl_export(m, rep);
		break;
	case LB_CTL_APPLY:
		ctl_apply(m, req, asker, rep);
		break;
	case LB_CTL_WAIT:
		ctl_wait(m, req, rep);
		break;
	default:
		refuse(rep, "unknown request %d", (int)req->ctl.op);
		break;
	}
	if (!rep->flag)
		LB_INFO("ctl: refused: %s", rep->text);
}
