/* SPDX-License-Identifier: BSD-3-Clause */
/* Capacity credits, the agent's arithmetic: see ha_grant.h. */
#include <stdio.h>
#include <string.h>

#include "ha_grant.h"

void
ha_grant_init(struct ha_grant *g, uint32_t n_muxes, uint32_t ttl_ms, uint64_t incarnation,
	uint64_t now_ms)
{
	memset(g, 0, sizeof(*g));
	g->n_muxes = n_muxes < HA_GRANT_MUXES ? n_muxes : HA_GRANT_MUXES;
	g->ttl_ms = ttl_ms;
	g->incarnation = incarnation;
	g->start_ms = now_ms;
	g->next_name = 1;
}

static struct ha_grant_be *
find_be(struct ha_grant *g, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < g->n_be; i++)
		if (g->be[i].id == id)
			return &g->be[i];
	return NULL;
}

int
ha_grant_caps(struct ha_grant *g, const struct ha_grant_cap *caps, uint32_t n)
{
	static struct ha_grant_be next[HA_GRANT_BACKENDS]; /* one caller: the credit thread */
	uint32_t i, k = 0;

	for (i = 0; i < n && k < HA_GRANT_BACKENDS; i++) {
		struct ha_grant_be *old = find_be(g, caps[i].id);

		if (old != NULL) {
			next[k] = *old;
		} else {
			uint32_t m;

			/*
			 * A book that starts again: grants an earlier book of this
			 * backend left at a mux are taken back by its first request.
			 */
			memset(&next[k], 0, sizeof(next[k]));
			for (m = 0; m < g->n_muxes && g->next_name > 1; m++)
				next[k].m[m].revoke_below = g->next_name;
		}
		next[k].id = caps[i].id;
		next[k].max = caps[i].max;
		k++;
	}
	memcpy(g->be, next, sizeof(next[0]) * k);
	g->n_be = k;
	return i < n ? -1 : 0;
}

void
ha_grant_active(struct ha_grant *g, uint32_t id, uint64_t active)
{
	struct ha_grant_be *b = find_be(g, id);

	if (b != NULL)
		b->active = active;
}

/* Forget grants that have expired by our clock. */
static void
expire(struct ha_grant_book *k, uint64_t now_ms)
{
	uint32_t i, j = 0;

	for (i = 0; i < k->n; i++)
		if (k->g[i].expires_ms > now_ms)
			k->g[j++] = k->g[i];
	k->n = j;
}

/*
 * While the mux answers, its word (it counts a grant that came late, which
 * our clock would have let go); once it is silent, our clock.
 */
static uint64_t
outstanding(const struct ha_grant_book *k, uint32_t ttl_ms, uint64_t now_ms)
{
	uint64_t mine = 0;
	uint32_t i;

	if (k->reported && now_ms - k->report_ms <= 2ull * ttl_ms)
		return k->live + k->sent_since;
	for (i = 0; i < k->n; i++)
		if (k->g[i].expires_ms > now_ms)
			mine += k->g[i].count;
	return mine;
}

uint64_t
ha_grant_outstanding(const struct ha_grant *g, uint32_t b, uint32_t mux, uint64_t now_ms)
{
	return b < g->n_be && mux < g->n_muxes ? outstanding(&g->be[b].m[mux], g->ttl_ms, now_ms)
					       : 0;
}

/* A mux counts in the shares while it answered within 2 x ttl. */
static bool
alive(const struct ha_grant *g, uint32_t mux, uint64_t now_ms)
{
	return g->heard_ms[mux] != 0 && now_ms - g->heard_ms[mux] <= 2ull * g->ttl_ms;
}

/* May this start grant yet (ha_grant.h, restarts)? */
static bool
settled(const struct ha_grant *g, uint64_t now_ms)
{
	uint32_t i;

	if (now_ms - g->start_ms >= 2ull * g->ttl_ms)
		return true;
	for (i = 0; i < g->n_muxes; i++)
		if (g->mux_inc[i] == 0)
			return false;
	return true;
}

/* One backend's entry of the request to mux. */
static void
make_one(struct ha_grant *g, struct ha_grant_be *b, uint32_t mux, uint64_t now_ms,
	struct lb_credit *c)
{
	struct ha_grant_book *k = &b->m[mux];
	uint64_t held = 0, free_cap, weight = 0, target, have;
	bool starved = false;
	uint32_t i;

	for (i = 0; i < g->n_muxes; i++) {
		expire(&b->m[i], now_ms);
		held += outstanding(&b->m[i], g->ttl_ms, now_ms);
		if (alive(g, i, now_ms) || i == mux)
			weight += b->m[i].demand + 1;
		if (i != mux && b->m[i].denied_step > 0)
			starved = true;
	}
	free_cap = b->active + held < b->max ? b->max - b->active - held : 0;
	/* Our share of what is not in use: by demand, one more each. */
	target = b->active < b->max ? b->max - b->active : 0;
	target = (target * (k->demand + 1) + weight - 1) / weight;
	have = outstanding(k, g->ttl_ms, now_ms);
	memset(c, 0, sizeof(*c));
	c->backend = b->id;
	/*
	 * Over the cap for two whole rounds (not just a credit spent since its
	 * mux's last report, counted again by the tracker): connections we did
	 * not know of (opened before we started, found by the tracker when they
	 * sent), so take back what is outstanding.
	 */
	b->over_n = b->active + held > b->max ? b->over_n + 1 : 0;
	if (have > 0 && k->n > 0 && k->revoke_below == 0 &&
		(b->over_n > 2 * g->n_muxes || (have > target + 1 && free_cap == 0 && starved))) {
		k->revoke_below = g->next_name;
		g->st.reclaims++;
	}
	c->revoke_below = k->revoke_below;
	/*
	 * A lease: while the mux answers, what it holds within its share lives
	 * on (here by our clock too), so that an idle backend's credits do not
	 * lapse every ttl and leave the mux without any until the next round.
	 * More than its share is left to expire, and so is what a mux holds
	 * while it turns connections away: its workers split each grant, and
	 * one may sit on credits the SYNs never reach (mux_credit.h); expired,
	 * they come back split again.
	 */
	if (k->n > 0 && c->revoke_below == 0 && have <= target + 1 && k->denied_step == 0 &&
		alive(g, mux, now_ms)) {
		c->renew = true;
		for (i = 0; i < k->n; i++)
			k->g[i].expires_ms = now_ms + 2ull * g->ttl_ms;
	}
	if (free_cap > 0 && have < target && k->n < HA_GRANT_LIVE && settled(g, now_ms) &&
		alive(g, mux, now_ms)) {
		uint64_t give = target - have < free_cap ? target - have : free_cap;

		c->grant = g->next_name++;
		c->count = (uint32_t)give;
		k->g[k->n++] = (struct ha_grant_rec){c->grant, c->count, now_ms + 2ull * g->ttl_ms};
		k->granted += give;
		k->sent_since += give;
		g->granted_mux[mux] += give;
		g->st.granted += give;
		g->st.grants++;
	}
	c->granted = g->granted_mux[mux];
}

void
ha_grant_make(struct ha_grant *g, uint32_t mux, uint64_t now_ms, struct lb_credit_grant *out)
{
	uint32_t i;

	out->incarnation = g->incarnation;
	out->ttl_ms = g->ttl_ms;
	out->n = 0;
	if (mux >= g->n_muxes)
		return;
	for (i = 0; i < g->n_be; i++)
		make_one(g, &g->be[i], mux, now_ms, &out->c[out->n++]);
}

void
ha_grant_unsend(struct ha_grant *g, uint32_t mux, const struct lb_credit_grant *out)
{
	uint32_t i, j;

	for (i = 0; mux < g->n_muxes && i < out->n; i++) {
		const struct lb_credit *c = &out->c[i];
		struct ha_grant_be *b = find_be(g, c->backend);
		struct ha_grant_book *k;

		if (b == NULL || c->count == 0)
			continue;
		k = &b->m[mux];
		for (j = 0; j < k->n && k->g[j].name != c->grant; j++)
			;
		if (j == k->n)
			continue;
		k->g[j] = k->g[--k->n];
		k->granted -= c->count;
		k->sent_since -= k->sent_since < c->count ? k->sent_since : c->count;
		g->granted_mux[mux] -= c->count;
		g->st.granted -= c->count;
		g->st.grants--;
	}
}

/* Refuse a report: why is set, the count kept. */
static int
refused(struct ha_grant *g)
{
	g->st.reports_rejected++;
	return -1;
}

/* Did any of u's counters go back from last's? Its name, or NULL. */
static const char *
went_back(const struct lb_credit_use *u, const struct lb_credit_use *last)
{
	if (u->received < last->received)
		return "received";
	if (u->used < last->used)
		return "used";
	if (u->expired < last->expired)
		return "expired";
	if (u->revoked < last->revoked)
		return "revoked";
	if (u->denied < last->denied)
		return "denied";
	return NULL;
}

/*
 * The mux answered a request that carried our take-back: what it named is
 * void there (its live no longer counts it), so forget it here too.
 */
static void
drop_revoked(struct ha_grant_book *k)
{
	uint32_t i, j = 0;

	if (k->revoke_below == 0)
		return;
	for (i = 0; i < k->n; i++)
		if (k->g[i].name >= k->revoke_below)
			k->g[j++] = k->g[i];
	k->n = j;
	k->revoke_below = 0;
}

/*
 * The mux holds live credits: the newest grants that cover them (it spends
 * oldest first), whose records are all our clock needs should it go
 * silent; older ones are spent or gone, and a renewal must not keep them.
 */
static void
keep_live(struct ha_grant_book *k, uint64_t live)
{
	bool keep[HA_GRANT_LIVE] = {false};
	uint64_t sum = 0;
	uint32_t i, j;

	while (sum < live) {
		for (j = k->n, i = 0; i < k->n; i++)
			if (!keep[i] && (j == k->n || k->g[i].name > k->g[j].name))
				j = i;
		if (j == k->n)
			break;
		keep[j] = true;
		sum += k->g[j].count;
	}
	for (i = 0, j = 0; i < k->n; i++)
		if (keep[i])
			k->g[j++] = k->g[i];
	k->n = j;
}

int
ha_grant_report(struct ha_grant *g, uint32_t mux, const struct lb_credit_report *r, uint64_t now_ms,
	char *why, size_t len)
{
	bool restarted, bad[LB_CREDIT_MAX];
	uint32_t i, n_bad = 0;

	if (mux >= g->n_muxes) {
		snprintf(why, len, "no mux %u", mux);
		return refused(g);
	}
	if (r->refused[0] != 0) {
		snprintf(why, len, "the mux refused our grant: %s", r->refused);
		return refused(g);
	}
	if (r->agent_incarnation != g->incarnation) {
		snprintf(why, len, "the report answers agent start %llx, we are %llx",
			(unsigned long long)r->agent_incarnation,
			(unsigned long long)g->incarnation);
		return refused(g);
	}
	restarted = g->mux_inc[mux] != r->incarnation;
	/* A backend whose counters went back, or that took more than we granted, is left out. */
	for (i = 0; i < r->n && i < LB_CREDIT_MAX; i++) {
		const struct lb_credit_use *u = &r->u[i];
		struct ha_grant_be *b = find_be(g, u->backend);
		const char *what;

		bad[i] = false;
		if (b == NULL)
			continue;
		if (!restarted && b->m[mux].reported &&
			(what = went_back(u, &b->m[mux].last)) != NULL) {
			snprintf(why, len, "backend %u: the mux's %s counter went back", u->backend,
				what);
			bad[i] = true;
		} else if (u->granted > g->granted_mux[mux]) {
			snprintf(why, len, "backend %u: the mux took %llu credits, we granted %llu",
				u->backend, (unsigned long long)u->granted,
				(unsigned long long)g->granted_mux[mux]);
			bad[i] = true;
		}
		n_bad += bad[i];
	}
	g->mux_inc[mux] = r->incarnation;
	g->heard_ms[mux] = now_ms;
	for (i = 0; i < g->n_be; i++) {
		struct ha_grant_book *k = &g->be[i].m[mux];
		const struct lb_credit_use *u = NULL;
		uint32_t j;

		for (j = 0; j < r->n && j < LB_CREDIT_MAX; j++)
			if (r->u[j].backend == g->be[i].id)
				u = &r->u[j];
		if (u != NULL && bad[u - r->u])
			continue; /* its book keeps the last word it took */
		if (restarted) {
			/*
			 * Another mux process: its counters start again, and
			 * its live (which counts what it took of this very
			 * request) is the whole truth; our records only
			 * expire.
			 */
			k->reported = false;
			k->revoke_below = 0;
		}
		if (u == NULL) {
			/* Not reported: it holds none of this backend's credits. */
			drop_revoked(k);
			k->live = 0;
			k->reported = true;
			k->report_ms = now_ms;
			k->sent_since = 0;
			k->demand = k->denied_step = 0;
			continue;
		}
		k->demand =
			k->reported ? (u->used - k->last.used) + (u->denied - k->last.denied) : 0;
		k->denied_step = k->reported ? u->denied - k->last.denied : 0;
		k->live = u->live;
		keep_live(k, u->live);
		k->sent_since = 0;
		k->last = *u;
		k->reported = true;
		k->report_ms = now_ms;
		drop_revoked(k);
	}
	if (n_bad != 0)
		return refused(g);
	g->st.reports++;
	return 0;
}
