/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commit driver's rounds (mgr_driver.h has the design): begin one, run
 * the state machine's actions, commit or abort, recover a round a crash
 * left, the timers; and the events the member protocol brings.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "mgr_crash.h"
#include "mgr_driver_int.h"
#include "mgr_load.h"
#include "mgr_msg.h"
#include "mgr_text.h"

static void outcome(struct mgr_driver *d, uint64_t now, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
outcome(struct mgr_driver *d, uint64_t now, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->last_outcome, sizeof(d->last_outcome), fmt, ap);
	va_end(ap);
	d->last_outcome_ms = now;
}

static void
store_failed(struct mgr_driver *d, uint64_t now)
{
	snprintf(d->store_err, sizeof(d->store_err), "%s", mgr_store_error(d->store));
	d->store_backoff_ms = d->store_backoff_ms == 0 ? MGR_STORE_RETRY_MS
			      : d->store_backoff_ms * 2 > MGR_STORE_RETRY_MAX_MS
				      ? MGR_STORE_RETRY_MAX_MS
				      : d->store_backoff_ms * 2;
	d->store_retry_ms = now + d->store_backoff_ms;
}

static void
store_ok(struct mgr_driver *d)
{
	d->store_err[0] = '\0';
	d->store_backoff_ms = 0;
	d->store_retry_ms = 0;
}

static void
round_clear(struct mgr_round *r)
{
	lb_ftable_free(&r->r_next);
	lb_ftable_free(&r->r_desired);
	mgr_pools_free(&r->r_pools);
	free(r->r_prepare);
	memset(r, 0, sizeof(*r));
}

static void
begin_round(struct mgr_driver *d, uint64_t now)
{
	struct mgr_round *r = &d->round;
	struct lb_ftable_delta delta;
	struct lb_msg *msg;
	char e[LB_MSG_TEXT];
	int rc;

	memset(r, 0, sizeof(*r));
	mgr_driver_refresh(d, now);
	if (lb_ftable_copy(&r->r_next, &d->effective) != 0 ||
		lb_ftable_copy(&r->r_desired, &d->desired) != 0 ||
		mgr_pools_copy(&r->r_pools, &d->pools) != 0)
		goto nomem;
	lb_ftable_sort(&r->r_next);
	lb_ftable_digest(&r->r_next, r->r_digest);
	if (mgr_same_digest(r->r_digest, d->committed_digest)) {
		/* Changes that cancelled out: nothing to vote on. */
		mgr_driver_commit_rec(d, d->commit->committed, d->accepted_seq);
		d->committed_seq = d->accepted_seq;
		d->batch_deadline_ms = 0;
		/* What desired is now is what the committed version runs. */
		mgr_driver_base_from_round(d, r);
		round_clear(r);
		return;
	}
	r->r_version = d->commit->committed + 1;
	r->r_seq = d->accepted_seq;
	r->r_started_ms = now;
	mgr_summary_why(&d->committed, &r->r_next, r->r_summary, sizeof(r->r_summary),
		mgr_health_why, d->health);
	if (d->askers[0] != '\0') {
		size_t n = strlen(r->r_summary);

		snprintf(r->r_summary + n, sizeof(r->r_summary) - n, " [asked by %s]", d->askers);
		d->askers[0] = '\0';
	}
	if (lb_ftable_diff(&d->committed, &r->r_next, &delta) != 0)
		goto nomem;
	/* From version 0 a member's table options are its own: always send ours. */
	if (d->commit->committed == 0 && lb_ftable_delta_options(&delta, &r->r_next) != 0) {
		lb_ftable_delta_free(&delta);
		goto nomem;
	}
	msg = mgr_msg_new(LB_MSG_PREPARE);
	if (msg == NULL) {
		lb_ftable_delta_free(&delta);
		goto nomem;
	}
	msg->term = mgr_store_term(d->store);
	msg->version = r->r_version;
	msg->base_version = r->r_version - 1;
	msg->delta = delta;
	memcpy(msg->digest, r->r_digest, LB_DIGEST_LEN);
	rc = lb_msg_encode(msg, &r->r_prepare, &r->r_prepare_len);
	lb_ftable_delta_free(&delta);
	free(msg);
	if (rc != 0) {
		LB_ERR("version %" PRIu64 ": cannot encode PREPARE: %s", r->r_version,
			lb_strerror(rc));
		round_clear(r);
		store_failed(d, now);
		return;
	}
	if (r->r_prepare_len > LB_MSG_MAX_BYTES) {
		snprintf(e, sizeof(e),
			"the change is %zu bytes, more than one message carries (%u): make it in "
			"smaller steps",
			r->r_prepare_len, LB_MSG_MAX_BYTES);
		outcome(d, now, "version %" PRIu64 " not started: %s", r->r_version, e);
		mgr_driver_reject_pending(d, r->r_version, e, now);
		round_clear(r);
		return;
	}
	/* 1. Durable before anyone hears of it. */
	if (mgr_store_round_prepare(
		    d->store, r->r_version, r->r_digest, r->r_summary, &r->r_next, &r->r_id) != 0) {
		LB_ERR("version %" PRIu64 " not started: %s", r->r_version,
			mgr_store_error(d->store));
		outcome(d, now, "version %" PRIu64 " not started: %s", r->r_version,
			mgr_store_error(d->store));
		round_clear(r);
		store_failed(d, now);
		return;
	}
	r->r_active = true;
	d->batch_deadline_ms = 0;
	d->start_now = false;
	/* A new round for the version a restart aborted: no more ABORTs for it. */
	if (d->rec_abort_version == r->r_version)
		d->rec_abort_version = 0;
	LB_INFO("version %" PRIu64 " prepared: %s", r->r_version, r->r_summary);
	/* 2. PREPARE to the in-sync members (actions). */
	mgr_commit_begin(d->commit, r->r_digest, now);
	mgr_driver_run(d, now);
	return;
nomem:
	LB_ERR("cannot start a round: out of memory");
	round_clear(r);
	store_failed(d, now);
}

static const uint8_t *
digest_of(const struct mgr_driver *d, uint64_t version)
{
	if (d->round.r_active && d->round.r_version == version)
		return d->round.r_digest;
	if (version == d->commit->committed)
		return d->commit->committed_digest;
	if (version == d->rec_version)
		return d->rec_digest;
	return d->commit->inflight_digest;
}

static void
send_simple(struct mgr_driver *d, int i, enum lb_msg_type type, uint64_t version,
	const char *reason, uint64_t now)
{
	struct lb_msg *msg = mgr_msg_new(type);

	if (msg == NULL)
		return;
	msg->term = mgr_store_term(d->store);
	msg->version = version;
	memcpy(msg->digest, digest_of(d, version), LB_DIGEST_LEN);
	if (reason != NULL)
		snprintf(msg->text, sizeof(msg->text), "%s", reason);
	d->out.send_msg(d->out.ctx, i, msg, now);
	free(msg);
}

/* 3. The commit record. If the store refuses it, nobody commits. */
static void
record_commit(struct mgr_driver *d, uint64_t version, uint64_t now)
{
	struct mgr_round *r = &d->round;
	struct mgr_commit *c = d->commit;
	char why[LB_MSG_TEXT];
	uint32_t i;

	mgr_crash_at("voted");
	if (r->r_active && r->r_version == version &&
		mgr_store_commit(d->store, r->r_id, version, r->r_digest, r->r_summary,
			r->r_prepare, r->r_prepare_len, &r->r_next) == 0) {
		mgr_crash_at("recorded");
		return;
	}
	if (mgr_store_lost(d->store) != NULL) {
		/* Recorded or not, nobody knows: no COMMIT, no ABORT; the loop stops leading. */
		d->skip_commit_version = version;
		LB_ERR("version %" PRIu64 ": %s", version, mgr_store_lost(d->store));
		return;
	}
	snprintf(why, sizeof(why), "manager could not record the commit: %s",
		r->r_active ? mgr_store_error(d->store) : "no round");
	LB_ERR("version %" PRIu64 " aborted: %s", version, why);
	/*
	 * mgr_commit already counts it committed: take that back, skip the
	 * COMMITs it asked for, and tell every member to drop what it prepared.
	 */
	d->skip_commit_version = version;
	mgr_commit_undo(c, version, d->committed_digest);
	for (i = 0; i < c->n_members; i++)
		send_simple(d, (int)i, LB_MSG_ABORT, version, why, now);
	if (r->r_active && mgr_store_round_abort(d->store, r->r_id, why) != 0)
		LB_ERR("%s", mgr_store_error(d->store));
	outcome(d, now, "version %" PRIu64 " aborted: %s", version, why);
	d->n_aborted++;
	store_failed(d, now);
	round_clear(r);
}

static void
finish_commit(struct mgr_driver *d, uint64_t version, uint64_t now)
{
	struct mgr_round *r = &d->round;
	char hex[MGR_HEX_DIGEST];

	if (!r->r_active || r->r_version != version) {
		/* mgr_commit_recover(decided): COMMIT went out again. */
		LB_INFO("version %" PRIu64 ": COMMIT sent again after the restart", version);
		return;
	}
	lb_ftable_free(&d->committed);
	d->committed = r->r_next;
	memset(&r->r_next, 0, sizeof(r->r_next));
	mgr_driver_base_from_round(d, r);
	d->reject_retry_ms = 0;
	d->reject_backoff_ms = 0;
	memcpy(d->committed_digest, r->r_digest, LB_DIGEST_LEN);
	d->committed_version = version;
	d->committed_seq = r->r_seq;
	mgr_driver_commit_rec(d, version, r->r_seq);
	d->out.committed(d->out.ctx); /* its snapshot is no use now */
	LB_INFO("committed version %" PRIu64 " (digest %s): %s", version,
		mgr_digest_hex(r->r_digest, hex), r->r_summary);
	outcome(d, now, "version %" PRIu64 " committed", version);
	d->n_committed++;
	store_ok(d);
	round_clear(r);
}

static void
finish_abort(struct mgr_driver *d, const struct mgr_action *a, uint64_t now)
{
	struct mgr_round *r = &d->round;

	if (a->cause == MGR_CAUSE_RECOVERY || !r->r_active || r->r_version != a->version) {
		LB_WARN("version %" PRIu64 " aborted: %s (ABORT sent to the members)", a->version,
			a->reason);
		outcome(d, now, "version %" PRIu64 " aborted: %s", a->version, a->reason);
		return;
	}
	if (mgr_store_round_abort(d->store, r->r_id, a->reason) != 0)
		LB_ERR("%s", mgr_store_error(d->store));
	LB_WARN("version %" PRIu64 " aborted: %s", a->version, a->reason);
	outcome(d, now, "version %" PRIu64 " aborted: %s", a->version, a->reason);
	d->n_aborted++;
	round_clear(r);
	if (a->cause == MGR_CAUSE_VOTE_NO) {
		mgr_driver_reject_pending(d, a->version, a->reason, now);
		return;
	}
	if (a->cause == MGR_CAUSE_BEHIND) {
		const struct mgr_member *mb = &d->commit->members[a->member];

		LB_WARN("member %s voted no from version %" PRIu64 " (committed is %" PRIu64
			"): fenced, the round is retried without it",
			mb->id, mb->reported, d->commit->committed);
	}
	d->start_now = true; /* without the silent or stale ones, now fenced */
}

static void
run_one(struct mgr_driver *d, const struct mgr_action *a, uint64_t now)
{
	switch (a->type) {
	case MGR_ACT_SEND_PREPARE:
		if (d->round.r_active)
			d->out.send(d->out.ctx, a->member, d->round.r_prepare,
				d->round.r_prepare_len, now);
		break;
	case MGR_ACT_RECORD_COMMIT:
		record_commit(d, a->version, now);
		break;
	case MGR_ACT_SEND_COMMIT:
		if (a->version != d->skip_commit_version)
			send_simple(d, a->member, LB_MSG_COMMIT, a->version, NULL, now);
		break;
	case MGR_ACT_SEND_ABORT:
		send_simple(d, a->member, LB_MSG_ABORT, a->version, a->reason, now);
		break;
	case MGR_ACT_SEND_SNAPSHOT:
		d->out.snapshot(d->out.ctx, a->member, now);
		break;
	case MGR_ACT_FENCE:
		LB_WARN("fenced %s", a->reason);
		break;
	case MGR_ACT_COMMITTED:
		if (a->version != d->skip_commit_version)
			finish_commit(d, a->version, now);
		break;
	case MGR_ACT_ABORTED:
		finish_abort(d, a, now);
		break;
	}
}

void
mgr_driver_run(struct mgr_driver *d, uint64_t now)
{
	const struct mgr_action *acts;
	uint32_t n, i;

	/* Copied out: running one may make mgr_commit produce more. */
	while (d->commit->n_actions > 0) {
		acts = mgr_commit_actions(d->commit, &n);
		memcpy(d->acts, acts, n * sizeof(*acts));
		for (i = 0; i < n; i++)
			run_one(d, &d->acts[i], now);
		d->skip_commit_version = 0;
	}
}

static void
recover(struct mgr_driver *d, uint64_t now)
{
	char hex[MGR_HEX_DIGEST];

	if (!d->rec_pending)
		return;
	d->rec_pending = false;
	LB_INFO("recovery: %s version %" PRIu64 " (digest %s) to %u member%s",
		d->rec_decided ? "re-sending COMMIT of" : "sending ABORT of", d->rec_version,
		mgr_digest_hex(d->rec_digest, hex), d->commit->n_members,
		d->commit->n_members == 1 ? "" : "s");
	if (!d->rec_decided)
		d->rec_abort_version = d->rec_version;
	mgr_commit_recover(d->commit, d->rec_version, d->rec_digest, d->rec_decided);
	mgr_driver_run(d, now);
}

void
mgr_driver_tick(struct mgr_driver *d, uint64_t now)
{
	if (!d->recovered) {
		if (now < d->start_ms + MGR_GRACE_MS)
			return;
		d->recovered = true;
		recover(d, now);
	}
	if (d->commit->inflight != 0) {
		mgr_commit_tick(d->commit, now);
		mgr_driver_run(d, now);
	}
	if (d->eff_timer_ms <= now) {
		d->eff_timer_ms = UINT64_MAX;
		mgr_driver_health(d, now); /* a drain ends, a slow start steps */
	}
	if (d->round.r_active || d->commit->inflight != 0)
		return;
	if (d->store_retry_ms != 0 && now < d->store_retry_ms)
		return;
	if (d->reject_retry_ms != 0 && now < d->reject_retry_ms)
		return;
	/* New backends' first probes, then health news' window. */
	if (mgr_health_hold(d->health, now) != 0 && !d->start_now)
		return;
	if (d->eff_dirty) {
		if (!d->start_now && d->batch_deadline_ms != 0 && now < d->batch_deadline_ms)
			return;
		mgr_driver_refresh(d, now);
	}
	if (!mgr_driver_pending(d)) {
		/*
		 * Desired is back to committed for now. The window stays
		 * anchored at the first change: a stream of changes that
		 * passes through the committed table must not push the
		 * round back forever.
		 */
		if (now >= d->batch_deadline_ms)
			d->batch_deadline_ms = 0;
		return;
	}
	if (!d->start_now && d->batch_deadline_ms != 0 && now < d->batch_deadline_ms)
		return;
	begin_round(d, now);
}

uint64_t
mgr_driver_next_deadline(const struct mgr_driver *d, uint64_t now)
{
	uint64_t due = UINT64_MAX;

	if (!d->recovered)
		return d->start_ms + MGR_GRACE_MS;
	if (d->commit->inflight != 0 && d->commit->deadline_ms < due)
		due = d->commit->deadline_ms;
	if (!d->round.r_active && d->commit->inflight == 0 &&
		(mgr_driver_pending(d) || d->eff_dirty)) {
		/* A round begins when every gate mgr_driver_tick checks is open. */
		uint64_t t = d->start_now ? 0 : d->batch_deadline_ms;
		uint64_t hold = d->start_now ? 0 : mgr_health_hold(d->health, now);

		if (d->store_retry_ms > t)
			t = d->store_retry_ms;
		if (d->reject_retry_ms > t)
			t = d->reject_retry_ms;
		if (hold > t)
			t = hold;
		if (t < due)
			due = t;
	}
	if (d->eff_timer_ms < due)
		due = d->eff_timer_ms;
	return due;
}

/* ---- life ---- */

struct mgr_driver *
mgr_driver_new(const struct mgr_config *cfg, struct mgr_store *store, struct mgr_health *health)
{
	struct mgr_driver *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->commit = calloc(1, sizeof(*d->commit));
	d->acts = calloc(MGR_MAX_ACTIONS, sizeof(*d->acts));
	if (d->commit == NULL || d->acts == NULL) {
		mgr_driver_free(d);
		return NULL;
	}
	d->cfg = cfg;
	d->store = store;
	d->health = health;
	d->eff_timer_ms = UINT64_MAX;
	return d;
}

void
mgr_driver_free(struct mgr_driver *d)
{
	if (d == NULL)
		return;
	lb_ftable_free(&d->committed);
	lb_ftable_free(&d->desired);
	lb_ftable_free(&d->base_desired);
	lb_ftable_free(&d->effective);
	mgr_pools_free(&d->pools);
	mgr_pools_free(&d->base_pools);
	round_clear(&d->round);
	free(d->commit);
	free(d->acts);
	free(d);
}

void
mgr_driver_set_out(struct mgr_driver *d, const struct mgr_driver_out *out)
{
	d->out = *out;
}

void
mgr_driver_start(struct mgr_driver *d, uint64_t now)
{
	d->start_ms = now;
}

/* ---- events ---- */

int
mgr_driver_hello(struct mgr_driver *d, const struct lb_msg *h, uint64_t now)
{
	mgr_commit_hello(d->commit, h->id, h->role, h->version, h->digest, now);
	return mgr_commit_find(d->commit, h->id);
}

void
mgr_driver_vote(struct mgr_driver *d, int member, const struct lb_msg *v, uint64_t now)
{
	char id[LB_MSG_ID];

	/* Copied: running the actions may move the members' array. */
	snprintf(id, sizeof(id), "%s", d->commit->members[member].id);
	mgr_crash_at("prepared");
	mgr_commit_vote(d->commit, id, v->version, v->digest, v->flag, v->text, now);
}

void
mgr_driver_loads(struct mgr_driver *d, const struct lb_counter *prev, uint32_t n_prev,
	const struct lb_counter *c, uint32_t n)
{
	struct mgr_be_load *v = calloc(n / 3 + 1, sizeof(*v));
	struct mgr_be_load *p = calloc(n_prev / 3 + 1, sizeof(*p));
	struct mgr_be_load *gone = calloc(n_prev / 3 + 1, sizeof(*gone));
	uint32_t nv, np;

	if (v != NULL && p != NULL && gone != NULL) {
		nv = mgr_load_parse(c, n, v, n / 3 + 1);
		np = mgr_load_parse(prev, n_prev, p, n_prev / 3 + 1);
		mgr_load_sort(v, nv);
		mgr_load_sort(p, np);
		/* What the agent no longer reports first: unknown, not stale. */
		mgr_health_loads(d->health, gone, mgr_load_dropped(p, np, v, nv, gone), true);
		mgr_health_loads(d->health, v, nv, false);
	}
	free(v);
	free(p);
	free(gone);
}

void
mgr_driver_status(struct mgr_driver *d, int member, uint64_t applied, uint64_t now)
{
	mgr_commit_status(d->commit, d->commit->members[member].id, applied, now);
}

void
mgr_driver_gone(struct mgr_driver *d, int member)
{
	mgr_commit_gone(d->commit, d->commit->members[member].id);
}

void
mgr_driver_fence(struct mgr_driver *d, int member, const char *why)
{
	mgr_commit_fence(d->commit, d->commit->members[member].id, why);
}

/* ---- reads ---- */

bool
mgr_driver_started(const struct mgr_driver *d)
{
	return d->recovered;
}

const struct mgr_commit *
mgr_driver_commit(const struct mgr_driver *d)
{
	return d->commit;
}

const struct lb_ftable *
mgr_driver_committed(const struct mgr_driver *d, uint64_t *version, const uint8_t **digest)
{
	if (version != NULL)
		*version = d->committed_version;
	if (digest != NULL)
		*digest = d->committed_digest;
	return &d->committed;
}

uint64_t
mgr_driver_term(const struct mgr_driver *d)
{
	return mgr_store_term(d->store);
}

bool
mgr_driver_hello_abort(const struct mgr_driver *d, struct lb_msg *w)
{
	if (d->rec_abort_version == 0 || d->rec_abort_version != d->commit->committed + 1)
		return false;
	mgr_msg_init(w, LB_MSG_ABORT);
	w->term = mgr_store_term(d->store);
	w->version = d->rec_abort_version;
	memcpy(w->digest, d->rec_digest, LB_DIGEST_LEN);
	snprintf(w->text, sizeof(w->text), "manager restarted before deciding");
	return true;
}

void
mgr_driver_view(const struct mgr_driver *d, struct mgr_driver_view *v)
{
	const struct mgr_round *r = &d->round;

	memset(v, 0, sizeof(*v));
	v->commit = d->commit;
	v->committed = &d->committed;
	v->committed_digest = d->committed_digest;
	v->desired = &d->desired;
	v->desired_digest = d->desired_digest;
	v->pools = &d->pools;
	v->meta = &d->meta;
	v->effective = &d->effective;
	v->round = r->r_active;
	if (r->r_active) {
		v->round_version = r->r_version;
		v->round_digest = r->r_digest;
		v->round_started_ms = r->r_started_ms;
		v->round_summary = r->r_summary;
	}
	v->pending_changes = d->accepted_seq - (r->r_active ? r->r_seq : d->committed_seq);
	v->pending = mgr_driver_pending(d);
	v->target_version = mgr_driver_target_version(d);
	v->last_outcome = d->last_outcome;
	v->last_outcome_ms = d->last_outcome_ms;
	v->store_err = d->store_err;
	v->n_committed = d->n_committed;
	v->n_aborted = d->n_aborted;
}
