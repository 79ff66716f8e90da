/* SPDX-License-Identifier: BSD-3-Clause */
/* The operator API's dispatch and its read requests (mgr_api.h has the design). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "mgr_api_int.h"
#include "mgr_members.h"
#include "mgr_store.h"

void
mgr_api_refuse(struct lb_msg *rep, const char *fmt, ...)
{
	va_list ap;

	rep->flag = false;
	va_start(ap, fmt);
	vsnprintf(rep->text, sizeof(rep->text), fmt, ap);
	va_end(ap);
}

void
mgr_api_reply(struct lb_msg *rep, struct mgr_buf *body, struct mgr_buf *json)
{
	rep->flag = true;
	rep->body = mgr_buf_take(body);
	rep->json = mgr_buf_take(json);
	if (rep->body == NULL || rep->json == NULL) {
		free(rep->body);
		free(rep->json);
		rep->body = rep->json = NULL;
		mgr_api_refuse(rep, "out of memory for the reply");
	}
}

uint64_t
mgr_api_age(uint64_t now, uint64_t then)
{
	return then == 0 || now < then ? 0 : now - then;
}

bool
mgr_api_reporting(const struct mgr_api *api, const struct mgr_commit *cm, uint32_t m,
	enum lb_role role, struct mgr_peer_view *p)
{
	if (cm->members[m].role != role)
		return false;
	mgr_members_view(api->deps.members, (int)m, p);
	return p->connected && p->status_ms != 0;
}

struct mgr_api *
mgr_api_new(const struct mgr_api_deps *deps)
{
	struct mgr_api *api = calloc(1, sizeof(*api));

	if (api != NULL)
		api->deps = *deps;
	return api;
}

void
mgr_api_free(struct mgr_api *api)
{
	free(api);
}

/* ---- read requests ---- */

static void
api_vip_list(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct mgr_buf b = {0}, j = {0};
	char s[MGR_SVC_STR];

	/* vip show: one service, which must exist (committed or to come) */
	if (q->req->ctl.has_svc && lb_ftable_find(q->v.committed, &q->req->ctl.svc) < 0 &&
		lb_ftable_find(q->v.effective, &q->req->ctl.svc) < 0) {
		mgr_api_refuse(
			q->rep, "no service %s", mgr_key_str(&q->req->ctl.svc, s, sizeof(s)));
		return;
	}
	mgr_api_vip_view(api, &q->v, q->req->ctl.has_svc ? &q->req->ctl.svc : NULL, &b, &j, q->now);
	q->rep->version = q->v.commit->committed;
	mgr_api_reply(q->rep, &b, &j);
}

static void
api_history(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct mgr_buf b = {0}, j = {0}, ab = {0};
	struct mgr_hist *h = NULL;
	char t[32], hex[MGR_HEX_DIGEST];
	int n = mgr_store_history(api->deps.store, q->req->ctl.limit, &h), i, nv = 0, na = 0;

	if (n < 0) {
		mgr_api_refuse(q->rep, "%s",
			n == -LB_EIO ? mgr_store_error(api->deps.store) : lb_strerror(n));
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
	q->rep->version = q->v.commit->committed;
	mgr_api_reply(q->rep, &b, &j);
}

static void
api_export(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct mgr_buf b = {0}, j = {0};
	char *text = NULL;

	(void)api; /* the table is the driver's view */
	if (mgr_api_export_text(&q->v, &text) != 0) {
		mgr_api_refuse(q->rep, "export: cannot write the table");
		return;
	}
	mgr_buf_printf(&b, "%s", text);
	mgr_buf_printf(&j, "{\"version\":%" PRIu64 ",\"config\":", q->v.commit->committed);
	mgr_buf_json_str(&j, text);
	mgr_buf_printf(&j, "}");
	free(text);
	q->rep->version = q->v.commit->committed;
	mgr_api_reply(q->rep, &b, &j);
}

static void
api_wait(struct mgr_api *api, const struct mgr_api_req *q)
{
	static const char *const names[] = {[MGR_WAIT_PENDING] = "pending",
		[MGR_WAIT_COMMITTED] = "committed",
		[MGR_WAIT_ABORTED] = "aborted"};
	struct mgr_buf b = {0}, j = {0};
	const char *reason = NULL;
	uint64_t as = 0, v = q->req->version;
	enum mgr_wait_state st = mgr_driver_wait(api->deps.driver, v, &as, &reason);

	if (st == MGR_WAIT_UNKNOWN) {
		mgr_api_refuse(q->rep,
			"version %" PRIu64 " is unknown: committed is %" PRIu64
			" and no change waits for %" PRIu64,
			v, q->v.commit->committed, v);
		return;
	}
	/* "version" first: it is the version that holds the change. */
	mgr_buf_printf(&j, "{\"version\":%" PRIu64 ",\"state\":\"%s\",\"reason\":",
		st == MGR_WAIT_COMMITTED ? as : v, names[st]);
	mgr_buf_json_str(&j, reason ? reason : "");
	mgr_buf_printf(
		&j, ",\"asked\":%" PRIu64 ",\"committed\":%" PRIu64 "}", v, q->v.commit->committed);
	if (st == MGR_WAIT_COMMITTED)
		mgr_buf_printf(&b, "version %" PRIu64 " committed", as);
	else
		mgr_buf_printf(&b, "version %" PRIu64 " %s", v, names[st]);
	if (reason != NULL)
		mgr_buf_printf(&b, ": %s", reason);
	mgr_buf_printf(&b, "\n");
	q->rep->version = st == MGR_WAIT_COMMITTED ? as : v;
	/* The same answer typed, for sluicectl to decide by. */
	q->rep->wait.state = st == MGR_WAIT_COMMITTED ? LB_WAIT_COMMITTED
			     : st == MGR_WAIT_ABORTED ? LB_WAIT_ABORTED
						      : LB_WAIT_PENDING;
	q->rep->wait.committed_as = st == MGR_WAIT_COMMITTED ? as : 0;
	snprintf(q->rep->wait.reason, sizeof(q->rep->wait.reason), "%s", reason ? reason : "");
	mgr_api_reply(q->rep, &b, &j);
}
typedef void (*mgr_api_fn)(struct mgr_api *api, const struct mgr_api_req *q);

static const mgr_api_fn handlers[LB_CTL_OP_MAX + 1] = {
	[LB_CTL_STATUS] = mgr_api_status,
	[LB_CTL_VIP_LIST] = api_vip_list,
	[LB_CTL_VIP_SET] = mgr_api_vip_set,
	[LB_CTL_VIP_ADD] = mgr_api_vip_add,
	[LB_CTL_VIP_DEL] = mgr_api_vip_del,
	[LB_CTL_BACKEND_ADD] = mgr_api_backend_add,
	[LB_CTL_BACKEND_DEL] = mgr_api_backend_del,
	[LB_CTL_BACKEND_SET] = mgr_api_backend_set,
	[LB_CTL_HISTORY] = api_history,
	[LB_CTL_EXPORT] = api_export,
	[LB_CTL_APPLY] = mgr_api_apply,
	[LB_CTL_WAIT] = api_wait,
	[LB_CTL_STATS] = mgr_api_stats,
	[LB_CTL_MUX_DRAIN] = mgr_api_mux_drain,
	[LB_CTL_MUX_UNDRAIN] = mgr_api_mux_drain,
	[LB_CTL_LIMIT_SET] = mgr_api_limit_set,
	[LB_CTL_LIMIT_DEL] = mgr_api_limit_del,
	[LB_CTL_LIMIT_LIST] = mgr_api_limit_list,
	[LB_CTL_TOP] = mgr_api_top,
	[LB_CTL_BACKEND_LIST] = mgr_api_backend_list,
};

void
mgr_api_handle(struct mgr_api *api, const struct lb_msg *req, const char *asker, struct lb_msg *rep,
	uint64_t now)
{
	struct mgr_api_req q = {.req = req, .asker = asker, .rep = rep, .now = now};
	unsigned op = (unsigned)req->ctl.op;

	rep->type = LB_MSG_CTL_REPLY;
	rep->version = mgr_driver_commit(api->deps.driver)->committed;
	/* Answers about health and pending versions see the news so far. */
	mgr_driver_refresh(api->deps.driver, now);
	mgr_driver_view(api->deps.driver, &q.v);
	if (op <= LB_CTL_OP_MAX && handlers[op] != NULL)
		handlers[op](api, &q);
	else
		mgr_api_refuse(rep, "unknown request %d", (int)req->ctl.op);
	if (!rep->flag)
		LB_INFO("ctl: refused: %s", rep->text);
}
