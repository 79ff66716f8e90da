/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Driving the two-phase commit: desired changes become versions.
 *
 * Order of a round, so that a kill -9 anywhere is safe:
 *   1. the round is stored as 'prepared' with its table;
 *   2. PREPARE(N, delta from N-1, digest) goes to every in-sync member;
 *   3. all voted yes: MGR_ACT_RECORD_COMMIT stores, in one transaction,
 *      the version row, the round 'committed' and the committed pointer;
 *   4. only then COMMIT(N) goes out.
 * A restart finds either no commit record (the round is aborted and ABORT
 * goes to whoever prepared it) or one (COMMIT is sent again).
 *
 * Batching: a change waits batch_ms for others to join it; a round carries
 * everything pending when it begins; changes made during a round wait for
 * the next one, which starts as soon as this one ends. A round carries the
 * effective table (desired as health makes it, mgr_health.h); health and
 * timer changes wait health_batch_ms, so that a backend that flaps, or a
 * thousand that fail within one probe interval, make a handful of versions.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "mgr.h"
#include "mgr_clock.h"
#include "mgr_snap.h"
#include "mgr_text.h"

static void outcome(struct mgr *m, uint64_t now, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
outcome(struct mgr *m, uint64_t now, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->last_outcome, sizeof(m->last_outcome), fmt, ap);
	va_end(ap);
	m->last_outcome_ms = now;
}

static void
store_failed(struct mgr *m, uint64_t now)
{
	snprintf(m->store_err, sizeof(m->store_err), "%s", mgr_store_error(m->store));
	m->store_backoff_ms = m->store_backoff_ms == 0 ? MGR_STORE_RETRY_MS
			      : m->store_backoff_ms * 2 > MGR_STORE_RETRY_MAX_MS
				      ? MGR_STORE_RETRY_MAX_MS
				      : m->store_backoff_ms * 2;
	m->store_retry_ms = now + m->store_backoff_ms;
}

static void
store_ok(struct mgr *m)
{
	m->store_err[0] = '\0';
	m->store_backoff_ms = 0;
	m->store_retry_ms = 0;
}

static bool
same_digest(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, LB_DIGEST_LEN) == 0;
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

/* The round's desired table and pools become the committed version's base. */
static void
base_from_round(struct mgr *m, struct mgr_round *r)
{
	lb_ftable_free(&m->base_desired);
	mgr_pools_free(&m->base_pools);
	m->base_desired = r->r_desired;
	m->base_pools = r->r_pools;
	memset(&r->r_desired, 0, sizeof(r->r_desired));
	memset(&r->r_pools, 0, sizeof(r->r_pools));
}

void
mgr_effective_touch(struct mgr *m, uint64_t now)
{
	m->eff_dirty = true;
	/* Anchored at the first: a stream of health news cannot postpone it. */
	if (m->batch_deadline_ms == 0)
		m->batch_deadline_ms = now + m->cfg.mc_health_batch_ms;
}

void
mgr_effective_refresh(struct mgr *m, uint64_t now)
{
	struct lb_ftable t = {0};
	uint64_t next;

	if (!m->eff_dirty)
		return;
	if (mgr_health_effective(m->health, &m->desired, now, &t, &next) != 0) {
		LB_ERR("out of memory for the effective table: it stays as it was");
		return;
	}
	lb_ftable_free(&m->effective);
	m->effective = t;
	lb_ftable_digest(&m->effective, m->effective_digest);
	m->eff_timer_ms = next;
	m->eff_dirty = false;
}

/* The desired table changed: health follows it, and the effective table. */
static void
desired_changed(struct mgr *m, uint64_t now)
{
	if (mgr_health_sync(m->health, &m->desired, &m->pools, &m->committed, false, now) != 0)
		LB_ERR("out of memory: probes do not follow the desired table yet");
	m->eff_dirty = true;
	mgr_effective_refresh(m, now);
}

static void
push_commit_rec(struct mgr *m, uint64_t version, uint64_t seq)
{
	struct mgr_commit_rec *cr = &m->commits[m->n_commits++ % MGR_COMMITS];

	cr->cr_version = version;
	cr->cr_seq = seq;
}

/*
 * Throw away every change no version carries: desired goes back to the
 * committed table and whoever waits for them hears `reason`.
 */
static void
reject_pending(struct mgr *m, uint64_t version, const char *reason, uint64_t now)
{
	struct mgr_rejection *rj = &m->rejections[m->n_rejections++ % MGR_REJECTIONS];
	struct lb_ftable back;
	struct mgr_pools back_pools;

	rj->rj_lo = m->committed_seq + 1;
	rj->rj_hi = m->accepted_seq;
	rj->rj_version = version;
	snprintf(rj->rj_reason, sizeof(rj->rj_reason), "%s", reason);
	m->committed_seq = m->accepted_seq;
	m->batch_deadline_ms = 0;
	/* Health-made tables can be voted down too: do not retry at once, forever. */
	m->reject_backoff_ms = m->reject_backoff_ms == 0 ? MGR_REJECT_RETRY_MS
			       : m->reject_backoff_ms * 2 > MGR_REJECT_RETRY_MAX_MS
				       ? MGR_REJECT_RETRY_MAX_MS
				       : m->reject_backoff_ms * 2;
	m->reject_retry_ms = now + m->reject_backoff_ms;
	if (lb_ftable_copy(&back, &m->base_desired) != 0 ||
		mgr_pools_copy(&back_pools, &m->base_pools) != 0) {
		lb_ftable_free(&back);
		LB_ERR("pending changes rejected (%s) but out of memory to restore the desired "
		       "table",
			reason);
		return;
	}
	/* The ids the rejected changes took stay taken: ids are never reused. */
	if (mgr_store_save_desired(m->store, &back, &back_pools, &m->meta) != 0)
		LB_ERR("%s (the desired table reverts to version %" PRIu64 " in memory only)",
			mgr_store_error(m->store), m->commit->committed);
	lb_ftable_free(&m->desired);
	mgr_pools_free(&m->pools);
	m->desired = back;
	m->pools = back_pools;
	lb_ftable_digest(&m->desired, m->desired_digest);
	desired_changed(m, now);
	LB_WARN("pending changes rejected, desired table back at version %" PRIu64 ": %s",
		m->commit->committed, reason);
}

static void
begin_round(struct mgr *m, uint64_t now)
{
	struct mgr_round *r = &m->round;
	struct lb_ftable_delta delta;
	struct lb_msg *msg;
	char e[LB_MSG_TEXT];
	int rc;

	memset(r, 0, sizeof(*r));
	mgr_effective_refresh(m, now);
	if (lb_ftable_copy(&r->r_next, &m->effective) != 0 ||
		lb_ftable_copy(&r->r_desired, &m->desired) != 0 ||
		mgr_pools_copy(&r->r_pools, &m->pools) != 0)
		goto nomem;
	lb_ftable_sort(&r->r_next);
	lb_ftable_digest(&r->r_next, r->r_digest);
	if (same_digest(r->r_digest, m->committed_digest)) {
		/* Changes that cancelled out: nothing to vote on. */
		push_commit_rec(m, m->commit->committed, m->accepted_seq);
		m->committed_seq = m->accepted_seq;
		m->batch_deadline_ms = 0;
		/* What desired is now is what the committed version runs. */
		base_from_round(m, r);
		round_clear(r);
		return;
	}
	r->r_version = m->commit->committed + 1;
	r->r_seq = m->accepted_seq;
	r->r_started_ms = now;
	mgr_summary_why(&m->committed, &r->r_next, r->r_summary, sizeof(r->r_summary),
		mgr_health_why, m->health);
	if (m->askers[0] != '\0') {
		size_t n = strlen(r->r_summary);

		snprintf(r->r_summary + n, sizeof(r->r_summary) - n, " [asked by %s]", m->askers);
		m->askers[0] = '\0';
	}
	if (lb_ftable_diff(&m->committed, &r->r_next, &delta) != 0)
		goto nomem;
	/* From version 0 a member's table options are its own: always send ours. */
	if (m->commit->committed == 0) {
		delta.has_options = true;
		delta.seed = r->r_next.seed;
		delta.maglev_size = r->r_next.maglev_size;
	}
	msg = calloc(1, sizeof(*msg));
	if (msg == NULL) {
		lb_ftable_delta_free(&delta);
		goto nomem;
	}
	msg->type = LB_MSG_PREPARE;
	snprintf(msg->sender, sizeof(msg->sender), "manager");
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
		store_failed(m, now);
		return;
	}
	if (r->r_prepare_len > LB_MSG_MAX_BYTES) {
		snprintf(e, sizeof(e),
			"the change is %zu bytes, more than one message carries (%u): make it in "
			"smaller steps",
			r->r_prepare_len, LB_MSG_MAX_BYTES);
		outcome(m, now, "version %" PRIu64 " not started: %s", r->r_version, e);
		round_clear(r);
		reject_pending(m, r->r_version, e, now);
		return;
	}
	/* 1. Durable before anyone hears of it. */
	if (mgr_store_round_prepare(
		    m->store, r->r_version, r->r_digest, r->r_summary, &r->r_next, &r->r_id) != 0) {
		LB_ERR("version %" PRIu64 " not started: %s", r->r_version,
			mgr_store_error(m->store));
		outcome(m, now, "version %" PRIu64 " not started: %s", r->r_version,
			mgr_store_error(m->store));
		round_clear(r);
		store_failed(m, now);
		return;
	}
	r->r_active = true;
	m->batch_deadline_ms = 0;
	m->start_now = false;
	/* A new round for the version a restart aborted: no more ABORTs for it. */
	if (m->rec_abort_version == r->r_version)
		m->rec_abort_version = 0;
	LB_INFO("version %" PRIu64 " prepared: %s", r->r_version, r->r_summary);
	/* 2. PREPARE to the in-sync members (actions). */
	mgr_commit_begin(m->commit, r->r_digest, now);
	mgr_run_actions(m, now);
	return;
nomem:
	LB_ERR("cannot start a round: out of memory");
	round_clear(r);
	store_failed(m, now);
}

static const uint8_t *
digest_of(const struct mgr *m, uint64_t version)
{
	if (m->round.r_active && m->round.r_version == version)
		return m->round.r_digest;
	if (version == m->commit->committed)
		return m->commit->committed_digest;
	if (version == m->rec_version)
		return m->rec_digest;
	return m->commit->inflight_digest;
}

static void
send_simple(struct mgr *m, int i, enum lb_msg_type type, uint64_t version, const char *reason,
	uint64_t now)
{
	struct lb_msg *msg = calloc(1, sizeof(*msg));

	if (msg == NULL)
		return;
	msg->type = type;
	snprintf(msg->sender, sizeof(msg->sender), "manager");
	msg->version = version;
	memcpy(msg->digest, digest_of(m, version), LB_DIGEST_LEN);
	if (reason != NULL)
		snprintf(msg->text, sizeof(msg->text), "%s", reason);
	mgr_send_msg(m, i, msg, now);
	free(msg);
}

/* 3. The commit record. If the store refuses it, nobody commits. */
static void
record_commit(struct mgr *m, uint64_t version, uint64_t now)
{
	struct mgr_round *r = &m->round;
	struct mgr_commit *c = m->commit;
	char why[LB_MSG_TEXT];
	uint32_t i;

	if (r->r_active && r->r_version == version &&
		mgr_store_commit(m->store, r->r_id, version, r->r_digest, r->r_summary,
			r->r_prepare, r->r_prepare_len, &r->r_next) == 0)
		return;
	snprintf(why, sizeof(why), "manager could not record the commit: %s",
		r->r_active ? mgr_store_error(m->store) : "no round");
	LB_ERR("version %" PRIu64 " aborted: %s", version, why);
	/*
	 * mgr_commit already counts it committed: take that back, skip the
	 * COMMITs it asked for, and tell every member to drop what it prepared.
	 */
	m->skip_commit_version = version;
	mgr_commit_undo(c, version, m->committed_digest);
	for (i = 0; i < c->n_members; i++)
		send_simple(m, (int)i, LB_MSG_ABORT, version, why, now);
	if (r->r_active && mgr_store_round_abort(m->store, r->r_id, why) != 0)
		LB_ERR("%s", mgr_store_error(m->store));
	outcome(m, now, "version %" PRIu64 " aborted: %s", version, why);
	m->n_aborted++;
	store_failed(m, now);
	round_clear(r);
}

static void
finish_commit(struct mgr *m, uint64_t version, uint64_t now)
{
	struct mgr_round *r = &m->round;
	char hex[MGR_HEX_DIGEST];

	if (!r->r_active || r->r_version != version) {
		/* mgr_commit_recover(decided): COMMIT went out again. */
		LB_INFO("version %" PRIu64 ": COMMIT sent again after the restart", version);
		return;
	}
	lb_ftable_free(&m->committed);
	m->committed = r->r_next;
	memset(&r->r_next, 0, sizeof(r->r_next));
	base_from_round(m, r);
	m->reject_retry_ms = 0;
	m->reject_backoff_ms = 0;
	memcpy(m->committed_digest, r->r_digest, LB_DIGEST_LEN);
	m->committed_version = version;
	m->committed_seq = r->r_seq;
	push_commit_rec(m, version, r->r_seq);
	mgr_snap_clear(m->snap); /* its version is no longer the committed one */
	LB_INFO("committed version %" PRIu64 " (digest %s): %s", version,
		mgr_digest_hex(r->r_digest, hex), r->r_summary);
	outcome(m, now, "version %" PRIu64 " committed", version);
	m->n_committed++;
	store_ok(m);
	round_clear(r);
}

static void
finish_abort(struct mgr *m, const struct mgr_action *a, uint64_t now)
{
	struct mgr_round *r = &m->round;

	if (a->cause == MGR_CAUSE_RECOVERY || !r->r_active || r->r_version != a->version) {
		LB_WARN("version %" PRIu64 " aborted: %s (ABORT sent to the members)", a->version,
			a->reason);
		outcome(m, now, "version %" PRIu64 " aborted: %s", a->version, a->reason);
		return;
	}
	if (mgr_store_round_abort(m->store, r->r_id, a->reason) != 0)
		LB_ERR("%s", mgr_store_error(m->store));
	LB_WARN("version %" PRIu64 " aborted: %s", a->version, a->reason);
	outcome(m, now, "version %" PRIu64 " aborted: %s", a->version, a->reason);
	m->n_aborted++;
	round_clear(r);
	if (a->cause == MGR_CAUSE_VOTE_NO) {
		reject_pending(m, a->version, a->reason, now);
		return;
	}
	if (a->cause == MGR_CAUSE_BEHIND) {
		const struct mgr_member *mb = &m->commit->members[a->member];

		LB_WARN("member %s voted no from version %" PRIu64 " (committed is %" PRIu64
			"): fenced, the round is retried without it",
			mb->id, mb->reported, m->commit->committed);
	}
	m->start_now = true; /* without the silent or stale ones, now fenced */
}

static void
run_one(struct mgr *m, const struct mgr_action *a, uint64_t now)
{
	switch (a->type) {
	case MGR_ACT_SEND_PREPARE:
		if (m->round.r_active)
			mgr_send(m, a->member, m->round.r_prepare, m->round.r_prepare_len, now);
		break;
	case MGR_ACT_RECORD_COMMIT:
		record_commit(m, a->version, now);
		break;
	case MGR_ACT_SEND_COMMIT:
		if (a->version != m->skip_commit_version)
			send_simple(m, a->member, LB_MSG_COMMIT, a->version, NULL, now);
		break;
	case MGR_ACT_SEND_ABORT:
		send_simple(m, a->member, LB_MSG_ABORT, a->version, a->reason, now);
		break;
	case MGR_ACT_SEND_SNAPSHOT:
		mgr_send_snapshot(m, a->member, now);
		break;
	case MGR_ACT_FENCE:
		LB_WARN("fenced %s", a->reason);
		break;
	case MGR_ACT_COMMITTED:
		if (a->version != m->skip_commit_version)
			finish_commit(m, a->version, now);
		break;
	case MGR_ACT_ABORTED:
		finish_abort(m, a, now);
		break;
	}
}

void
mgr_run_actions(struct mgr *m, uint64_t now)
{
	const struct mgr_action *acts;
	uint32_t n, i;

	/* Copied out: running one may make mgr_commit produce more. */
	while (m->commit->n_actions > 0) {
		acts = mgr_commit_actions(m->commit, &n);
		memcpy(m->acts, acts, n * sizeof(*acts));
		for (i = 0; i < n; i++)
			run_one(m, &m->acts[i], now);
		m->skip_commit_version = 0;
	}
}

static void
recover(struct mgr *m, uint64_t now)
{
	char hex[MGR_HEX_DIGEST];

	if (!m->rec_pending)
		return;
	m->rec_pending = false;
	LB_INFO("recovery: %s version %" PRIu64 " (digest %s) to %u member%s",
		m->rec_decided ? "re-sending COMMIT of" : "sending ABORT of", m->rec_version,
		mgr_digest_hex(m->rec_digest, hex), m->commit->n_members,
		m->commit->n_members == 1 ? "" : "s");
	if (!m->rec_decided)
		m->rec_abort_version = m->rec_version;
	mgr_commit_recover(m->commit, m->rec_version, m->rec_digest, m->rec_decided);
	mgr_run_actions(m, now);
}

static void
check_silent(struct mgr *m, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < m->commit->n_members; i++) {
		struct mgr_peer *p = &m->peers[i];

		if (!p->mp_connected || p->mp_silent_logged ||
			now < p->mp_last_contact_ms + MGR_SILENT_MS)
			continue;
		p->mp_silent_logged = true;
		LB_WARN("member %s: connected but silent for %" PRIu64 " s",
			m->commit->members[i].id, (now - p->mp_last_contact_ms) / 1000);
	}
}

void
mgr_round_tick(struct mgr *m, uint64_t now)
{
	check_silent(m, now);
	if (!m->recovered) {
		if (now < m->start_ms + MGR_GRACE_MS)
			return;
		m->recovered = true;
		recover(m, now);
	}
	if (m->commit->inflight != 0) {
		mgr_commit_tick(m->commit, now);
		mgr_run_actions(m, now);
	}
	if (m->eff_timer_ms <= now) {
		m->eff_timer_ms = UINT64_MAX;
		mgr_effective_touch(m, now); /* a drain ends, a slow start steps */
	}
	if (m->round.r_active || m->commit->inflight != 0 || m->stopping)
		return;
	if (m->store_retry_ms != 0 && now < m->store_retry_ms)
		return;
	if (m->reject_retry_ms != 0 && now < m->reject_retry_ms)
		return;
	/* New backends' first probes, then health news' window. */
	if (mgr_health_hold(m->health, now) != 0 && !m->start_now)
		return;
	if (m->eff_dirty) {
		if (!m->start_now && m->batch_deadline_ms != 0 && now < m->batch_deadline_ms)
			return;
		mgr_effective_refresh(m, now);
	}
	if (!mgr_pending(m)) {
		/*
		 * Desired is back to committed for now. The window stays
		 * anchored at the first change: a stream of changes that
		 * passes through the committed table must not push the
		 * round back forever.
		 */
		if (now >= m->batch_deadline_ms)
			m->batch_deadline_ms = 0;
		return;
	}
	if (!m->start_now && m->batch_deadline_ms != 0 && now < m->batch_deadline_ms)
		return;
	begin_round(m, now);
}

uint64_t
mgr_round_next_deadline(const struct mgr *m)
{
	uint64_t d = UINT64_MAX;

	if (!m->recovered)
		return m->start_ms + MGR_GRACE_MS;
	if (m->commit->inflight != 0 && m->commit->deadline_ms < d)
		d = m->commit->deadline_ms;
	if (!m->round.r_active && m->commit->inflight == 0 && (mgr_pending(m) || m->eff_dirty)) {
		/* A round begins when every gate mgr_round_tick checks is open. */
		uint64_t t = m->start_now ? 0 : m->batch_deadline_ms;
		uint64_t hold = m->start_now ? 0 : mgr_health_hold(m->health, mgr_now_ms());

		if (m->store_retry_ms > t)
			t = m->store_retry_ms;
		if (m->reject_retry_ms > t)
			t = m->reject_retry_ms;
		if (hold > t)
			t = hold;
		if (t < d)
			d = t;
	}
	if (m->eff_timer_ms < d)
		d = m->eff_timer_ms;
	return d;
}

bool
mgr_pending(const struct mgr *m)
{
	if (m->round.r_active)
		return !same_digest(m->effective_digest, m->round.r_digest);
	return !same_digest(m->effective_digest, m->committed_digest);
}

uint64_t
mgr_target_version(const struct mgr *m)
{
	uint64_t c = m->commit->committed;

	if (!mgr_pending(m))
		return m->round.r_active ? m->round.r_version : c;
	return c + (m->round.r_active ? 2 : 1);
}

/* *t and *ps become copies of desired and its pools (kept as they were if out of memory). */
static void
carry_desired(struct mgr *m, struct lb_ftable *t, struct mgr_pools *ps)
{
	struct lb_ftable nt;
	struct mgr_pools np;

	if (lb_ftable_copy(&nt, &m->desired) != 0)
		goto nomem;
	if (mgr_pools_copy(&np, &m->pools) != 0) {
		lb_ftable_free(&nt);
		goto nomem;
	}
	lb_ftable_free(t);
	mgr_pools_free(ps);
	*t = nt;
	*ps = np;
	return;
nomem:
	LB_ERR("out of memory: a rejected round would revert to an older desired table");
}

/* Add who asked (NULL or "": nobody) to the askers of the next round, once. */
static void
note_asker(struct mgr *m, const char *asker)
{
	size_t n = strlen(m->askers);

	if (asker == NULL || asker[0] == '\0' || strstr(m->askers, asker) != NULL)
		return;
	snprintf(m->askers + n, sizeof(m->askers) - n, "%s%s", n ? ", " : "", asker);
}

int
mgr_set_desired(struct mgr *m, struct lb_ftable *next, struct mgr_pools *pools,
	const struct mgr_meta *meta, const char *asker, uint64_t *version, char *err, size_t len)
{
	struct mgr_promise *p;
	uint64_t now = mgr_now_ms();
	char e[LB_MSG_TEXT];

	lb_ftable_sort(next);
	mgr_pools_prune(pools, next);
	if (lb_ftable_validate(next, e, sizeof(e)) != 0) {
		snprintf(err, len, "%s", e);
		lb_ftable_free(next);
		mgr_pools_free(pools);
		return -LB_EINVAL;
	}
	/* Durable before the operator hears "accepted". */
	if (mgr_store_save_desired(m->store, next, pools, meta) != 0) {
		snprintf(err, len, "%s", mgr_store_error(m->store));
		snprintf(m->store_err, sizeof(m->store_err), "%s", mgr_store_error(m->store));
		LB_ERR("change refused: %s", mgr_store_error(m->store));
		lb_ftable_free(next);
		mgr_pools_free(pools);
		return -LB_EIO;
	}
	lb_ftable_free(&m->desired);
	mgr_pools_free(&m->pools);
	m->desired = *next;
	m->pools = *pools;
	memset(next, 0, sizeof(*next));
	memset(pools, 0, sizeof(*pools));
	m->meta = *meta;
	lb_ftable_digest(&m->desired, m->desired_digest);
	desired_changed(m, now);
	m->accepted_seq++;
	note_asker(m, asker);
	if (!mgr_pending(m)) {
		/*
		 * Back to what is committed or already on its way, or a change
		 * members do not see (a pool's interval): it is what that version
		 * carries now, and what a later rejection goes back to.
		 */
		if (m->round.r_active) {
			m->round.r_seq = m->accepted_seq;
			carry_desired(m, &m->round.r_desired, &m->round.r_pools);
		} else {
			m->committed_seq = m->accepted_seq;
			push_commit_rec(m, m->commit->committed, m->accepted_seq);
			carry_desired(m, &m->base_desired, &m->base_pools);
		}
	} else if (m->batch_deadline_ms == 0 || m->batch_deadline_ms > now + m->cfg.mc_batch_ms) {
		/* An operator's change waits batch_ms at most, health news or not. */
		m->batch_deadline_ms = now + m->cfg.mc_batch_ms;
	}
	*version = mgr_target_version(m);
	p = &m->promises[m->n_promises++ % MGR_PROMISES];
	p->p_version = *version;
	p->p_seq = m->accepted_seq;
	return 0;
}

enum mgr_wait_state
mgr_wait(const struct mgr *m, uint64_t version, uint64_t *committed_as, const char **reason)
{
	const struct mgr_promise *p = NULL;
	uint32_t k, n = m->n_promises < MGR_PROMISES ? m->n_promises : MGR_PROMISES;

	*committed_as = 0;
	*reason = NULL;
	/* The newest change told `version`. */
	for (k = 0; k < n; k++) {
		const struct mgr_promise *q = &m->promises[(m->n_promises - 1 - k) % MGR_PROMISES];

		if (q->p_version == version) {
			p = q;
			break;
		}
	}
	if (p != NULL) {
		n = m->n_rejections < MGR_REJECTIONS ? m->n_rejections : MGR_REJECTIONS;
		for (k = 0; k < n; k++) {
			const struct mgr_rejection *rj = &m->rejections[k];

			if (p->p_seq >= rj->rj_lo && p->p_seq <= rj->rj_hi) {
				*reason = rj->rj_reason;
				return MGR_WAIT_ABORTED;
			}
		}
		if (p->p_seq <= m->committed_seq) {
			n = m->n_commits < MGR_COMMITS ? m->n_commits : MGR_COMMITS;
			*committed_as = version;
			/* The oldest commit that carried it. */
			for (k = n; k > 0; k--) {
				const struct mgr_commit_rec *cr =
					&m->commits[(m->n_commits - k) % MGR_COMMITS];

				if (cr->cr_seq >= p->p_seq) {
					*committed_as = cr->cr_version;
					break;
				}
			}
			return MGR_WAIT_COMMITTED;
		}
		if (m->store_err[0] != '\0')
			*reason = m->store_err;
		return MGR_WAIT_PENDING;
	}
	if (version <= m->commit->committed) {
		*committed_as = version;
		return MGR_WAIT_COMMITTED;
	}
	if ((m->round.r_active && version == m->round.r_version) ||
		(version == m->commit->committed + 1 && mgr_pending(m))) {
		if (m->store_err[0] != '\0')
			*reason = m->store_err;
		return MGR_WAIT_PENDING;
	}
	return MGR_WAIT_UNKNOWN;
}
