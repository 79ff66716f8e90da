/* SPDX-License-Identifier: BSD-3-Clause */
/* Leader election on an etcd lease, as pure logic (mgr_elect.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mgr_elect.h"

static const char *const state_names[] = {
	[MGR_EL_IDLE] = "idle",
	[MGR_EL_CAMPAIGN] = "campaigning",
	[MGR_EL_STANDBY] = "standby",
	[MGR_EL_LEADER] = "leader",
	[MGR_EL_STOPPED] = "stopped",
};

const char *
mgr_elect_state_name(enum mgr_elect_state s)
{
	return (unsigned)s < sizeof(state_names) / sizeof(state_names[0]) && state_names[s]
		       ? state_names[s]
		       : "?";
}

static struct mgr_elect_action *act(struct mgr_elect *e, enum mgr_elect_act t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct mgr_elect_action *
act(struct mgr_elect *e, enum mgr_elect_act t, const char *fmt, ...)
{
	static struct mgr_elect_action dropped;
	struct mgr_elect_action *a;
	va_list ap;

	if (e->n_actions == MGR_ELECT_MAX_ACTIONS)
		return &dropped; /* bounded by construction: at most 4 per event */
	a = &e->actions[e->n_actions++];
	memset(a, 0, sizeof(*a));
	a->type = t;
	a->lease = e->lease;
	a->term = e->term;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(a->why, sizeof(a->why), fmt, ap);
		va_end(ap);
	}
	return a;
}

void
mgr_elect_init(struct mgr_elect *e, uint32_t ttl_s)
{
	memset(e, 0, sizeof(*e));
	e->ttl_s = ttl_s;
	e->state = MGR_EL_IDLE;
}

static uint64_t
ttl_ms(const struct mgr_elect *e)
{
	return (uint64_t)e->ttl_s * 1000;
}

/* How long before the lease may end a leader steps down: clocks and delays. */
static uint64_t
margin_ms(const struct mgr_elect *e)
{
	uint64_t m = ttl_ms(e) / 4;

	return m < 500 ? 500 : m;
}

static void
see_leader(struct mgr_elect *e, uint64_t term, const char *info)
{
	bool changed = term != e->leader_term ||
		       strncmp(info ? info : "", e->leader_info, sizeof(e->leader_info)) != 0;

	e->leader_term = term;
	snprintf(e->leader_info, sizeof(e->leader_info), "%s", info ? info : "");
	if (changed)
		act(e, MGR_EA_LEADER, NULL)->term = term;
}

static void step_down(struct mgr_elect *e, enum mgr_elect_state to, uint64_t now, const char *fmt,
	...) __attribute__((format(printf, 4, 5)));

static void
step_down(struct mgr_elect *e, enum mgr_elect_state to, uint64_t now, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->why, sizeof(e->why), fmt, ap);
	va_end(ap);
	if (e->state == MGR_EL_LEADER)
		act(e, MGR_EA_DEPOSED, "%s", e->why);
	e->state = to;
	e->term = 0;
	if (to == MGR_EL_IDLE) {
		e->lease = 0;
		e->keep_out = false;
	}
	e->retry_ms = now;
}

static void
tick(struct mgr_elect *e, const struct mgr_elect_event *ev)
{
	uint64_t now = ev->now_ms;

	if (e->state == MGR_EL_LEADER && now + margin_ms(e) >= e->lease_until_ms) {
		step_down(e, MGR_EL_IDLE, now,
			"the lease could not be renewed in time (etcd unreachable, or this "
			"manager too slow)");
		return;
	}
	if (e->state == MGR_EL_IDLE && now >= e->retry_ms) {
		e->retry_ms = now + MGR_ELECT_RETRY_MS;
		act(e, MGR_EA_GRANT, NULL);
		return;
	}
	if (e->state == MGR_EL_CAMPAIGN && now >= e->retry_ms) {
		e->retry_ms = now + MGR_ELECT_RETRY_MS;
		act(e, MGR_EA_CAMPAIGN, NULL);
	}
	/*
	 * A standby reads the key as a backstop to the watch; a leader too: a
	 * key deleted and taken by another while this lease lives would
	 * otherwise leave two managers that believe they lead.
	 */
	if ((e->state == MGR_EL_STANDBY || e->state == MGR_EL_LEADER) && now >= e->next_read_ms) {
		e->next_read_ms = now + ttl_ms(e);
		act(e, MGR_EA_READ, NULL);
	}
	if (e->lease != 0 && !e->keep_out && now >= e->next_keep_ms) {
		/* A leader whose loop stands still lets its lease lapse. */
		if (e->state == MGR_EL_LEADER && !ev->loop_alive)
			return;
		e->keep_out = true;
		e->next_keep_ms = now + ttl_ms(e) / 3;
		act(e, MGR_EA_KEEPALIVE, NULL);
	}
}

void
mgr_elect_feed(struct mgr_elect *e, const struct mgr_elect_event *ev)
{
	uint64_t now = ev->now_ms;

	if (e->state == MGR_EL_STOPPED)
		return;
	switch (ev->type) {
	case MGR_EV_TICK:
		tick(e, ev);
		break;
	case MGR_EV_GRANTED:
		if (e->state != MGR_EL_IDLE)
			break;
		e->lease = ev->lease;
		e->lease_until_ms = ev->sent_ms + (uint64_t)ev->ttl_s * 1000;
		e->next_keep_ms = now + ttl_ms(e) / 3;
		e->state = MGR_EL_CAMPAIGN;
		e->retry_ms = now + MGR_ELECT_RETRY_MS;
		act(e, MGR_EA_CAMPAIGN, NULL);
		break;
	case MGR_EV_GRANT_FAILED:
		e->retry_ms = now + MGR_ELECT_RETRY_MS;
		break;
	case MGR_EV_WON:
		if (e->state != MGR_EL_CAMPAIGN)
			break;
		if (now + margin_ms(e) >= e->lease_until_ms) {
			/* Won on a lease that may lapse before anything is done: renew first. */
			e->retry_ms = now + MGR_ELECT_RETRY_MS;
			break;
		}
		e->state = MGR_EL_LEADER;
		e->term = ev->term;
		e->next_read_ms = now + ttl_ms(e);
		e->why[0] = '\0';
		see_leader(e, ev->term, ev->info);
		act(e, MGR_EA_ELECTED, NULL);
		break;
	case MGR_EV_LOST:
		if (e->state != MGR_EL_CAMPAIGN)
			break;
		e->state = MGR_EL_STANDBY;
		e->next_read_ms = now + ttl_ms(e);
		see_leader(e, ev->term, ev->info);
		break;
	case MGR_EV_CAMPAIGN_FAILED:
		e->retry_ms = now + MGR_ELECT_RETRY_MS;
		break;
	case MGR_EV_KEPT:
		e->keep_out = false;
		if (e->lease != 0 && ev->sent_ms + (uint64_t)ev->ttl_s * 1000 > e->lease_until_ms)
			e->lease_until_ms = ev->sent_ms + (uint64_t)ev->ttl_s * 1000;
		break;
	case MGR_EV_LEASE_GONE:
		e->keep_out = false;
		step_down(e, MGR_EL_IDLE, now, "the lease expired (etcd let it go)");
		break;
	case MGR_EV_KEEP_FAILED:
		e->keep_out = false;
		e->next_keep_ms = now + MGR_ELECT_RETRY_MS; /* sooner than ttl/3 */
		break;
	case MGR_EV_KEY_GONE:
		see_leader(e, 0, "");
		if (e->state == MGR_EL_LEADER)
			step_down(e, MGR_EL_CAMPAIGN, now, "the leader key was deleted");
		if (e->state == MGR_EL_STANDBY) {
			e->state = MGR_EL_CAMPAIGN;
			e->retry_ms = now + MGR_ELECT_RETRY_MS;
			act(e, MGR_EA_CAMPAIGN, NULL);
		}
		break;
	case MGR_EV_KEY_IS:
		if (e->state == MGR_EL_LEADER && ev->term != e->term) {
			step_down(e, MGR_EL_STANDBY, now,
				"the leader key belongs to term %llu now, not %llu",
				(unsigned long long)ev->term, (unsigned long long)e->term);
			e->next_read_ms = now + ttl_ms(e);
		}
		see_leader(e, ev->term, ev->info);
		break;
	case MGR_EV_STOP:
		if (e->lease != 0)
			act(e, MGR_EA_REVOKE, NULL);
		if (e->state == MGR_EL_LEADER)
			act(e, MGR_EA_DEPOSED, "shutting down");
		e->state = MGR_EL_STOPPED;
		e->term = 0;
		break;
	}
}

const struct mgr_elect_action *
mgr_elect_actions(struct mgr_elect *e, uint32_t *n)
{
	*n = e->n_actions;
	e->n_actions = 0;
	return e->actions;
}

uint64_t
mgr_elect_next_ms(const struct mgr_elect *e)
{
	uint64_t t = UINT64_MAX;

	if (e->state == MGR_EL_STOPPED)
		return t;
	if (e->state == MGR_EL_IDLE || e->state == MGR_EL_CAMPAIGN)
		t = e->retry_ms;
	if ((e->state == MGR_EL_STANDBY || e->state == MGR_EL_LEADER) && e->next_read_ms < t)
		t = e->next_read_ms;
	if (e->lease != 0 && !e->keep_out && e->next_keep_ms < t)
		t = e->next_keep_ms;
	if (e->state == MGR_EL_LEADER && e->lease_until_ms - margin_ms(e) < t)
		t = e->lease_until_ms - margin_ms(e);
	return t;
}
