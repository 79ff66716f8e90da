/* SPDX-License-Identifier: BSD-3-Clause */
/* The election's I/O on etcd (mgr_leader.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_log.h"
#include "mgr_clock.h"
#include "mgr_leader.h"

struct mgr_leader {
	struct mgr_etcd *etcd;
	char prefix[256];
	char info[MGR_ELECT_INFO];
	struct mgr_elect el;
	const struct mgr_leader_ops *ops;
	void *arg;
	char err[MGR_ETCD_ERR];
};

struct mgr_leader *
mgr_leader_new(struct mgr_etcd *etcd, const char *prefix, uint32_t ttl_s, const char *info,
	const struct mgr_leader_ops *ops, void *arg)
{
	struct mgr_leader *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	l->etcd = etcd;
	snprintf(l->prefix, sizeof(l->prefix), "%s", prefix);
	snprintf(l->info, sizeof(l->info), "%s", info);
	l->ops = ops;
	l->arg = arg;
	mgr_elect_init(&l->el, ttl_s);
	return l;
}

void
mgr_leader_free(struct mgr_leader *l)
{
	free(l);
}

const struct mgr_elect *
mgr_leader_elect(const struct mgr_leader *l)
{
	return &l->el;
}

const char *
mgr_leader_error(const struct mgr_leader *l)
{
	return l->err;
}

static int
call(struct mgr_leader *l, const char *path, json_t *body, bool idempotent, json_t **ans)
{
	int rc = mgr_etcd_call(l->etcd, path, body, idempotent, ans, l->err, sizeof(l->err));

	if (rc == 0)
		l->err[0] = '\0';
	return rc;
}

static json_t *
id_json(int64_t id)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRId64, id);
	return json_string(s);
}

/* A leader key's kv: KEY_IS, or WON/LOST for a campaign (lease: ours). */
static void
feed_kv(struct mgr_leader *l, const json_t *kv, enum mgr_elect_ev ev)
{
	struct mgr_elect_event e = {.type = ev, .now_ms = mgr_now_ms(), .loop_alive = true};
	uint8_t *v = NULL;
	size_t n = 0;

	if (kv == NULL) {
		e.type = ev == MGR_EV_KEY_IS ? MGR_EV_KEY_GONE : MGR_EV_CAMPAIGN_FAILED;
		e.why = "the leader key went meanwhile";
		mgr_elect_feed(&l->el, &e);
		return;
	}
	mgr_etcd_unb64(json_object_get(kv, "value"), &v, &n);
	e.term = (uint64_t)mgr_etcd_int(kv, "create_revision");
	e.info = v != NULL ? (const char *)v : "";
	if (ev == MGR_EV_LOST && l->el.lease != 0 && mgr_etcd_int(kv, "lease") == l->el.lease)
		e.type = MGR_EV_WON; /* a campaign repeated: the key is ours already */
	mgr_elect_feed(&l->el, &e);
	free(v);
}

static void
do_grant(struct mgr_leader *l)
{
	struct mgr_elect_event e = {.now_ms = mgr_now_ms(), .loop_alive = true};
	json_t *ans = NULL;

	e.sent_ms = e.now_ms;
	if (call(l, "/v3/lease/grant", json_pack("{s:I}", "TTL", (json_int_t)l->el.ttl_s), false,
		    &ans) != 0 ||
		mgr_etcd_int(ans, "ID") == 0) {
		e.type = MGR_EV_GRANT_FAILED;
		e.why = l->err;
		LB_WARN("election: no lease: %s", l->err[0] ? l->err : "etcd granted none");
	} else {
		e.type = MGR_EV_GRANTED;
		e.lease = mgr_etcd_int(ans, "ID");
		e.ttl_s = (uint32_t)mgr_etcd_int(ans, "TTL");
		e.now_ms = mgr_now_ms();
	}
	json_decref(ans);
	mgr_elect_feed(&l->el, &e);
}

static void
do_campaign(struct mgr_leader *l)
{
	json_t *key = mgr_etcd_key(l->prefix, "/leader"), *ans = NULL, *txn;
	struct mgr_elect_event e = {.type = MGR_EV_CAMPAIGN_FAILED, .loop_alive = true};

	txn = json_pack("{s:[{s:s,s:O,s:s}],s:[{s:{s:O,s:o,s:o}}],s:[{s:{s:O}}]}", "compare",
		"target", "CREATE", "key", key, "create_revision", "0", "success", "request_put",
		"key", key, "value", mgr_etcd_b64(l->info, strlen(l->info)), "lease",
		id_json(l->el.lease), "failure", "request_range", "key", key);
	json_decref(key);
	if (call(l, "/v3/kv/txn", txn, false, &ans) != 0) {
		e.now_ms = mgr_now_ms();
		e.why = l->err;
		LB_WARN("election: campaign: %s", l->err);
		mgr_elect_feed(&l->el, &e);
	} else if (json_is_true(json_object_get(ans, "succeeded"))) {
		e.type = MGR_EV_WON;
		e.now_ms = mgr_now_ms();
		e.term = (uint64_t)mgr_etcd_int(json_object_get(ans, "header"), "revision");
		e.info = l->info;
		mgr_elect_feed(&l->el, &e);
	} else {
		json_t *resp = json_array_get(json_object_get(ans, "responses"), 0);

		feed_kv(l,
			json_array_get(
				json_object_get(json_object_get(resp, "response_range"), "kvs"), 0),
			MGR_EV_LOST);
	}
	json_decref(ans);
}

static void
do_keepalive(struct mgr_leader *l)
{
	struct mgr_elect_event e = {.loop_alive = true};
	json_t *ans = NULL, *res;

	e.sent_ms = mgr_now_ms();
	if (call(l, "/v3/lease/keepalive", json_pack("{s:o}", "ID", id_json(l->el.lease)), false,
		    &ans) != 0) {
		e.type = MGR_EV_KEEP_FAILED;
		e.why = l->err;
		LB_WARN("election: keepalive: %s", l->err);
	} else {
		res = json_object_get(ans, "result");
		e.ttl_s = (uint32_t)mgr_etcd_int(res != NULL ? res : ans, "TTL");
		e.type = e.ttl_s == 0 ? MGR_EV_LEASE_GONE : MGR_EV_KEPT;
	}
	json_decref(ans);
	e.now_ms = mgr_now_ms();
	mgr_elect_feed(&l->el, &e);
}

static void
do_read(struct mgr_leader *l)
{
	json_t *ans = NULL;

	if (call(l, "/v3/kv/range", json_pack("{s:o}", "key", mgr_etcd_key(l->prefix, "/leader")),
		    true, &ans) != 0) {
		LB_WARN("election: reading the leader key: %s", l->err);
		return; /* read again at the next period */
	}
	feed_kv(l, json_array_get(json_object_get(ans, "kvs"), 0), MGR_EV_KEY_IS);
	json_decref(ans);
}

static void
do_revoke(struct mgr_leader *l, int64_t lease)
{
	json_t *ans = NULL;

	if (call(l, "/v3/lease/revoke", json_pack("{s:o}", "ID", id_json(lease)), false, &ans) != 0)
		LB_WARN("election: revoking the lease: %s (it lapses by itself)", l->err);
	json_decref(ans);
}

/* Do the pending actions; each may feed events whose actions follow. */
static void
drain(struct mgr_leader *l)
{
	struct mgr_elect_action todo[MGR_ELECT_MAX_ACTIONS];
	const struct mgr_elect_action *a;
	uint32_t n, i;
	int rounds;

	for (rounds = 0; rounds < 8; rounds++) {
		a = mgr_elect_actions(&l->el, &n);
		if (n == 0)
			return;
		memcpy(todo, a, n * sizeof(*a));
		for (i = 0; i < n; i++) {
			switch (todo[i].type) {
			case MGR_EA_GRANT:
				do_grant(l);
				break;
			case MGR_EA_CAMPAIGN:
				do_campaign(l);
				break;
			case MGR_EA_KEEPALIVE:
				do_keepalive(l);
				break;
			case MGR_EA_READ:
				do_read(l);
				break;
			case MGR_EA_REVOKE:
				do_revoke(l, todo[i].lease);
				break;
			case MGR_EA_ELECTED:
				LB_INFO("election: this manager leads, term %" PRIu64,
					todo[i].term);
				if (l->ops->elected != NULL)
					l->ops->elected(l->arg, todo[i].term);
				break;
			case MGR_EA_DEPOSED:
				LB_WARN("election: this manager leads no more: %s", todo[i].why);
				if (l->ops->deposed != NULL)
					l->ops->deposed(l->arg, todo[i].why);
				break;
			case MGR_EA_LEADER:
				if (l->ops->leader != NULL)
					l->ops->leader(
						l->arg, l->el.leader_term, l->el.leader_info);
				break;
			}
		}
	}
}

uint64_t
mgr_leader_step(struct mgr_leader *l, uint64_t now_ms, bool loop_alive)
{
	struct mgr_elect_event e = {
		.type = MGR_EV_TICK, .now_ms = now_ms, .loop_alive = loop_alive};

	mgr_elect_feed(&l->el, &e);
	drain(l);
	return mgr_elect_next_ms(&l->el);
}

void
mgr_leader_stop(struct mgr_leader *l, uint64_t now_ms)
{
	struct mgr_elect_event e = {.type = MGR_EV_STOP, .now_ms = now_ms};

	mgr_elect_feed(&l->el, &e);
	drain(l);
}
