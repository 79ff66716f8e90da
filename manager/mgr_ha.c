/* SPDX-License-Identifier: BSD-3-Clause */
/* This manager among several on etcd (mgr_ha.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lb_log.h"
#include "mgr_estore.h"
#include "mgr_ha.h"
#include "mgr_leader.h"
#include "mgr_msg.h"
#include "mgr_transport.h"

struct mgr_ha {
	struct mgr_store *store;
	struct mgr_leader *leader;
	uint64_t term;
	bool deposed;
	bool stopping; /* mgr_ha_stop: its DEPOSED is the clean stop's */
	uint64_t next_ms;
	char leader_id[64];
	char leader_members[200]; /* a URL (MGR_URL_MAX), room left in a reply text */
	char leader_ctl[200];
};

static void
ha_elected(void *arg, uint64_t term)
{
	struct mgr_ha *h = arg;

	h->term = term;
	mgr_store_set_term(h->store, term);
}

static void
ha_deposed(void *arg, const char *why)
{
	struct mgr_ha *h = arg;

	h->term = 0;
	if (h->stopping)
		return;
	LB_ERR("deposed: %s; exiting (status %d) so that this manager is started again as a "
	       "standby",
		why, MGR_HA_EXIT_DEPOSED);
	h->deposed = true;
	h->term = 0;
}

/* The leader key's value: {"id","members","ctl"}. */
static void
ha_leader(void *arg, uint64_t term, const char *info)
{
	struct mgr_ha *h = arg;
	json_t *j = term != 0 ? json_loads(info, 0, NULL) : NULL;
	const char *s;

	h->leader_id[0] = h->leader_members[0] = h->leader_ctl[0] = '\0';
	if (j != NULL) {
		if ((s = json_string_value(json_object_get(j, "id"))) != NULL)
			snprintf(h->leader_id, sizeof(h->leader_id), "%s", s);
		if ((s = json_string_value(json_object_get(j, "members"))) != NULL)
			snprintf(h->leader_members, sizeof(h->leader_members), "%s", s);
		if ((s = json_string_value(json_object_get(j, "ctl"))) != NULL)
			snprintf(h->leader_ctl, sizeof(h->leader_ctl), "%s", s);
		json_decref(j);
	}
	if (term == 0)
		LB_INFO("election: no leader now");
	else
		LB_INFO("election: the leader is %s, term %" PRIu64 " (members %s, ctl %s)",
			h->leader_id[0] ? h->leader_id : "?", term, h->leader_members,
			h->leader_ctl);
}

struct mgr_ha *
mgr_ha_new(const struct mgr_config *cfg, struct mgr_store *store)
{
	static const struct mgr_leader_ops ops = {ha_elected, ha_deposed, ha_leader};
	struct mgr_ha *h = calloc(1, sizeof(*h));
	json_t *j;
	char *info;

	if (h == NULL)
		return NULL;
	h->store = store;
	j = json_pack("{s:s,s:s,s:s}", "id", cfg->mc_id, "members", cfg->mc_adv_members, "ctl",
		cfg->mc_adv_ctl);
	info = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (info != NULL)
		h->leader = mgr_leader_new(
			store->es->etcd, cfg->mc_etcd_prefix, cfg->mc_lease_ttl_s, info, &ops, h);
	free(info);
	if (h->leader == NULL) {
		free(h);
		return NULL;
	}
	return h;
}

void
mgr_ha_free(struct mgr_ha *h)
{
	if (h == NULL)
		return;
	mgr_leader_free(h->leader);
	free(h);
}

uint64_t
mgr_ha_tick(struct mgr_ha *h, uint64_t now)
{
	const char *lost = mgr_store_lost(h->store);

	/* The store can tell first: another leads, or a commit's fate is unknown. */
	if (lost != NULL && !h->deposed)
		ha_deposed(h, lost);
	if (now >= h->next_ms && !h->deposed)
		h->next_ms = mgr_leader_step(h->leader, now, true);
	return h->next_ms;
}

uint64_t
mgr_ha_term(const struct mgr_ha *h)
{
	return h->term;
}

bool
mgr_ha_deposed(const struct mgr_ha *h)
{
	return h->deposed;
}

void
mgr_ha_standby_ctl(const struct mgr_ha *h, struct lb_msg *rep)
{
	rep->type = LB_MSG_CTL_REPLY;
	rep->flag = false;
	rep->not_leader = true;
	snprintf(rep->leader_url, sizeof(rep->leader_url), "%s", h->leader_ctl);
	snprintf(rep->text, sizeof(rep->text), "not the leader%s%s",
		h->leader_ctl[0] ? ", ask " : "",
		h->leader_ctl[0] ? h->leader_ctl : " (no leader known yet: ask another manager)");
}

void
mgr_ha_standby_member(
	const struct mgr_ha *h, struct mgr_transport *t, uint32_t pipe, const struct lb_msg *msg)
{
	struct lb_msg *r;

	if (msg->type != LB_MSG_HELLO)
		return; /* a member of the old leader's: its hello comes to the new one */
	r = mgr_msg_new(LB_MSG_REFUSED);
	if (r == NULL)
		return;
	r->not_leader = true;
	snprintf(r->leader_url, sizeof(r->leader_url), "%s", h->leader_members);
	snprintf(r->text, sizeof(r->text), "not the leader%s%s",
		h->leader_members[0] ? ", dial " : "", h->leader_members);
	mgr_transport_send_pipe(t, pipe, r);
	free(r);
}

void
mgr_ha_stop(struct mgr_ha *h, uint64_t now)
{
	h->stopping = true;
	if (!h->deposed)
		mgr_leader_stop(h->leader, now);
}
