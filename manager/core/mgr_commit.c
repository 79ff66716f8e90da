/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lb_err.h"
#include "mgr_commit.h"

static struct mgr_action *
act(struct mgr_commit *c, enum mgr_action_type t, int member, uint64_t version, const char *fmt,
	...)
{
	static struct mgr_action dropped;
	struct mgr_action *a;
	va_list ap;

	if (c->n_actions == MGR_MAX_ACTIONS)
		return &dropped; /* bounded by construction: one action per member per kind */
	a = &c->actions[c->n_actions++];
	a->type = t;
	a->member = member;
	a->version = version;
	a->cause = MGR_CAUSE_NONE;
	a->reason[0] = '\0';
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
		va_end(ap);
	}
	return a;
}

void
mgr_commit_init(struct mgr_commit *c, uint64_t committed, const uint8_t digest[LB_DIGEST_LEN],
	uint64_t vote_timeout_ms)
{
	memset(c, 0, sizeof(*c));
	c->committed = committed;
	if (digest != NULL)
		memcpy(c->committed_digest, digest, LB_DIGEST_LEN);
	c->vote_timeout_ms = vote_timeout_ms;
}

int
mgr_commit_find(const struct mgr_commit *c, const char *member)
{
	uint32_t i;

	for (i = 0; i < c->n_members; i++)
		if (strcmp(c->members[i].id, member) == 0)
			return (int)i;
	return -1;
}

static void
fence(struct mgr_commit *c, int i, const char *why)
{
	struct mgr_member *m = &c->members[i];

	if (m->state != MGR_MEMBER_FENCED)
		act(c, MGR_ACT_FENCE, i, c->committed, "%s: %s", m->id, why);
	m->state = MGR_MEMBER_FENCED;
	m->in_round = false;
	m->gone = false;
	m->behind_ms = 0;
	snprintf(m->why, sizeof(m->why), "%s", why);
	act(c, MGR_ACT_SEND_SNAPSHOT, i, c->committed, NULL);
}

/* Fence member i, which runs an older version than the one committed (m->applied). */
static void
fence_behind(struct mgr_commit *c, int i)
{
	char why[LB_MSG_TEXT];

	snprintf(why, sizeof(why), "runs version %llu, current is %llu",
		(unsigned long long)c->members[i].applied, (unsigned long long)c->committed);
	fence(c, i, why);
}

static void
end_round(struct mgr_commit *c)
{
	uint32_t i;

	c->inflight = 0;
	for (i = 0; i < c->n_members; i++) {
		struct mgr_member *m = &c->members[i];

		m->vote = MGR_VOTE_NONE;
		m->in_round = false;
		/* Its vote counted, but it is no longer there to run the outcome. */
		if (m->gone && m->state == MGR_MEMBER_IN_SYNC) {
			m->state = MGR_MEMBER_FENCED;
			snprintf(m->why, sizeof(m->why), "disconnected");
			act(c, MGR_ACT_FENCE, (int)i, c->committed, "%s: %s", m->id, m->why);
		}
		m->gone = false;
	}
}

/* `voter`: the member whose "no" aborts it, or -1. */
static void
abort_round(struct mgr_commit *c, enum mgr_abort_cause cause, int voter, const char *reason)
{
	uint32_t i;

	/* Everyone hears it: a member that prepared must drop what it built. */
	for (i = 0; i < c->n_members; i++)
		act(c, MGR_ACT_SEND_ABORT, (int)i, c->inflight, "%s", reason)->cause = cause;
	act(c, MGR_ACT_ABORTED, voter, c->inflight, "%s", reason)->cause = cause;
	end_round(c);
}

static void
commit_round(struct mgr_commit *c)
{
	uint32_t i;

	/* Durable first: after a crash from here on, COMMIT is re-sent. */
	act(c, MGR_ACT_RECORD_COMMIT, -1, c->inflight, NULL);
	c->committed = c->inflight;
	memcpy(c->committed_digest, c->inflight_digest, LB_DIGEST_LEN);
	for (i = 0; i < c->n_members; i++) {
		if (c->members[i].in_round && !c->members[i].gone) {
			c->members[i].applied = c->committed;
			act(c, MGR_ACT_SEND_COMMIT, (int)i, c->committed, NULL);
		}
	}
	act(c, MGR_ACT_COMMITTED, -1, c->committed, NULL);
	/*
	 * A member whose hello found it current while this round was in
	 * flight is in sync but did not prepare it: it still runs the version
	 * before. A snapshot of the new one brings it up (after COMMITTED, so
	 * the snapshot is of this version).
	 */
	for (i = 0; i < c->n_members; i++) {
		if (c->members[i].state == MGR_MEMBER_IN_SYNC && !c->members[i].in_round) {
			char why[LB_MSG_TEXT];

			snprintf(why, sizeof(why),
				"runs version %llu, joined during the round of %llu",
				(unsigned long long)c->members[i].applied,
				(unsigned long long)c->committed);
			fence(c, (int)i, why);
		}
	}
	end_round(c);
}

/* All in-round members voted yes? */
static void
maybe_decide(struct mgr_commit *c)
{
	uint32_t i;

	for (i = 0; i < c->n_members; i++)
		if (c->members[i].in_round && c->members[i].vote != MGR_VOTE_YES)
			return;
	commit_round(c);
}

void
mgr_commit_recover(
	struct mgr_commit *c, uint64_t version, const uint8_t digest[LB_DIGEST_LEN], bool decided)
{
	uint32_t i;

	if (decided) {
		c->committed = version;
		memcpy(c->committed_digest, digest, LB_DIGEST_LEN);
		/* COMMIT is idempotent: members that had it ignore the repeat. */
		for (i = 0; i < c->n_members; i++)
			act(c, MGR_ACT_SEND_COMMIT, (int)i, version, NULL);
		act(c, MGR_ACT_COMMITTED, -1, version, "recovered after restart");
	} else {
		c->inflight = version;
		memcpy(c->inflight_digest, digest, LB_DIGEST_LEN);
		abort_round(c, MGR_CAUSE_RECOVERY, -1, "manager restarted before deciding");
	}
}

int
mgr_commit_begin(struct mgr_commit *c, const uint8_t digest[LB_DIGEST_LEN], uint64_t now_ms)
{
	uint32_t i;

	if (c->inflight != 0)
		return -LB_EEXIST;
	c->inflight = c->committed + 1;
	memcpy(c->inflight_digest, digest, LB_DIGEST_LEN);
	c->deadline_ms = now_ms + c->vote_timeout_ms;
	for (i = 0; i < c->n_members; i++) {
		struct mgr_member *m = &c->members[i];

		m->vote = MGR_VOTE_NONE;
		m->in_round = m->state == MGR_MEMBER_IN_SYNC;
		if (m->in_round)
			act(c, MGR_ACT_SEND_PREPARE, (int)i, c->inflight, NULL);
	}
	/* No member in sync: nothing can disagree. */
	maybe_decide(c);
	return 0;
}

void
mgr_commit_vote(struct mgr_commit *c, const char *member, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], bool yes, const char *reason, uint64_t now_ms)
{
	int i = mgr_commit_find(c, member);
	struct mgr_member *m;

	if (i < 0)
		return;
	m = &c->members[i];
	m->last_contact_ms = now_ms;
	/* Stale, duplicated after the round, or about another digest: no effect. */
	if (c->inflight == 0 || version != c->inflight || !m->in_round ||
		memcmp(digest, c->inflight_digest, LB_DIGEST_LEN) != 0 || m->vote != MGR_VOTE_NONE)
		return;
	if (!yes) {
		bool behind = m->has_reported && m->reported != c->committed;
		char why[LB_MSG_TEXT];

		m->vote = MGR_VOTE_NO;
		/* The outcome names who refused and why. */
		snprintf(why, sizeof(why), "%.63s voted no: %.180s", m->id, reason ? reason : "");
		abort_round(c, behind ? MGR_CAUSE_BEHIND : MGR_CAUSE_VOTE_NO, i, why);
		if (behind) {
			/* As its hello at that version would: fenced, a snapshot. */
			m->applied = m->reported;
			fence_behind(c, i);
		}
		return;
	}
	m->vote = MGR_VOTE_YES;
	maybe_decide(c);
}

void
mgr_commit_hello(struct mgr_commit *c, const char *member, enum lb_role role, uint64_t applied,
	const uint8_t digest[LB_DIGEST_LEN], uint64_t now_ms)
{
	int i = mgr_commit_find(c, member);
	struct mgr_member *m;
	bool current;

	if (i < 0) {
		if (c->n_members == MGR_MAX_MEMBERS)
			return;
		i = (int)c->n_members++;
		memset(&c->members[i], 0, sizeof(c->members[i]));
		snprintf(c->members[i].id, sizeof(c->members[i].id), "%s", member);
		c->members[i].state = MGR_MEMBER_FENCED;
	}
	m = &c->members[i];
	m->role = role;
	m->applied = applied;
	m->has_reported = true;
	m->reported = applied;
	m->last_contact_ms = now_ms;
	m->behind_ms = 0;
	current = applied == c->committed &&
		  (c->committed == 0 || memcmp(digest, c->committed_digest, LB_DIGEST_LEN) == 0);
	if (m->in_round) {
		/* A hello mid-round: it restarted and lost what it prepared. */
		m->vote = MGR_VOTE_NONE;
		fence(c, i, "restarted during a round");
		maybe_decide(c);
	} else if (current) {
		/* Joins from the next round on; if this one commits without it,
		 * commit_round() fences it with a snapshot. */
		m->state = MGR_MEMBER_IN_SYNC;
		m->why[0] = '\0';
	} else {
		fence_behind(c, i);
	}
}

void
mgr_commit_status(struct mgr_commit *c, const char *member, uint64_t applied, uint64_t now_ms)
{
	int i = mgr_commit_find(c, member);
	struct mgr_member *m;

	if (i < 0)
		return;
	m = &c->members[i];
	m->has_reported = true;
	m->reported = applied;
	if (m->state != MGR_MEMBER_IN_SYNC || m->in_round || applied >= c->committed) {
		m->behind_ms = 0;
		return;
	}
	if (m->behind_ms == 0) {
		m->behind_ms = now_ms != 0 ? now_ms : 1;
	} else if (now_ms >= m->behind_ms + c->vote_timeout_ms) {
		char why[LB_MSG_TEXT];

		snprintf(why, sizeof(why), "reports version %llu for %llu ms, committed is %llu",
			(unsigned long long)applied, (unsigned long long)(now_ms - m->behind_ms),
			(unsigned long long)c->committed);
		m->behind_ms = 0;
		m->applied = applied;
		fence(c, i, why);
	}
}

void
mgr_commit_gone(struct mgr_commit *c, const char *member)
{
	int i = mgr_commit_find(c, member);
	struct mgr_member *m;

	if (i < 0)
		return;
	m = &c->members[i];
	if (m->state == MGR_MEMBER_IN_SYNC && m->in_round) {
		/* The round's deadline decides about its vote; its end fences it. */
		m->gone = true;
		return;
	}
	if (m->state != MGR_MEMBER_IN_SYNC)
		return;
	m->state = MGR_MEMBER_FENCED;
	snprintf(m->why, sizeof(m->why), "disconnected");
	act(c, MGR_ACT_FENCE, i, c->committed, "%s: %s", m->id, m->why);
}

void
mgr_commit_undo(struct mgr_commit *c, uint64_t version, const uint8_t digest[LB_DIGEST_LEN])
{
	uint32_t i;

	if (version == 0 || c->committed != version)
		return;
	c->committed = version - 1;
	memcpy(c->committed_digest, digest, LB_DIGEST_LEN);
	for (i = 0; i < c->n_members; i++)
		if (c->members[i].applied == version)
			c->members[i].applied = version - 1;
}

void
mgr_commit_fence(struct mgr_commit *c, const char *member, const char *why)
{
	int i = mgr_commit_find(c, member);
	bool in_round;

	if (i < 0 || c->members[i].state != MGR_MEMBER_IN_SYNC)
		return;
	in_round = c->members[i].in_round;
	c->members[i].vote = MGR_VOTE_NONE;
	fence(c, i, why);
	/* The others may all have voted yes already: it was the one left. */
	if (in_round && c->inflight != 0)
		maybe_decide(c);
}

void
mgr_commit_tick(struct mgr_commit *c, uint64_t now_ms)
{
	char reason[LB_MSG_TEXT] = "";
	size_t off = 0;
	uint32_t i;

	if (c->inflight == 0 || now_ms < c->deadline_ms)
		return;
	for (i = 0; i < c->n_members; i++) {
		struct mgr_member *m = &c->members[i];

		if (m->in_round && m->vote == MGR_VOTE_NONE) {
			if (off < sizeof(reason))
				off += (size_t)snprintf(reason + off, sizeof(reason) - off, "%s%s",
					off ? ", " : "no vote in time from ", m->id);
			m->state = MGR_MEMBER_FENCED;
			snprintf(m->why, sizeof(m->why), "no vote for version %llu in time",
				(unsigned long long)c->inflight);
			act(c, MGR_ACT_FENCE, (int)i, c->inflight, "%s: %s", m->id, m->why);
		}
	}
	abort_round(c, MGR_CAUSE_TIMEOUT, -1, reason);
	/* The silent ones get the committed table when they come back. */
	for (i = 0; i < c->n_members; i++)
		if (c->members[i].state == MGR_MEMBER_FENCED)
			act(c, MGR_ACT_SEND_SNAPSHOT, (int)i, c->committed, NULL);
}

const struct mgr_action *
mgr_commit_actions(struct mgr_commit *c, uint32_t *n)
{
	*n = c->n_actions;
	c->n_actions = 0;
	return c->actions;
}
