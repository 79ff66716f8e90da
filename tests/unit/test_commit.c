/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's two-phase commit with injected faults: silent members, a
 * "no" vote, duplicated and reordered messages, a restart between PREPARE
 * and COMMIT, a member behind, gone, fenced from outside the protocol, a
 * commit record the store refused.
 *
 * Each test is a table of steps: an event fed to mgr_commit as the manager
 * would feed it, then what its actions and its state must be. A step names
 * what it shows; its checks are the fields it sets (designated
 * initializers), so a case is added in a few lines:
 *
 *	{"the last yes commits", VOTE("m2", 1, d1, true, 10),
 *		.counts = {{MGR_ACT_SEND_COMMIT, ANY, 3}}, .committed = IS(1)},
 *
 * Every table starts from a manager at version 0 whose members m0..m{n-1}
 * said hello at version 0 and are in sync.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "lb_err.h"
#include "mgr_commit.h"

#define D16(x)                                                                                     \
	{                                                                                          \
		x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x                                     \
	}
static const uint8_t d0[LB_DIGEST_LEN] = D16(0x00), d1[LB_DIGEST_LEN] = D16(0x11),
		     d2[LB_DIGEST_LEN] = D16(0x22);

/* ---- the events ---- */

enum ev_kind {
	EV_BEGIN = 1, /* digest, now; rc: what mgr_commit_begin returns */
	EV_VOTE,      /* member, version, digest, yes, text (the reason), now */
	EV_HELLO,     /* member, role, version (applied), digest, now */
	EV_STATUS,    /* member, version (applied), now */
	EV_FENCE,     /* member, text (why) */
	EV_GONE,      /* member */
	EV_TICK,      /* now */
	EV_RECOVER,   /* version, digest, yes (decided) */
	EV_UNDO,      /* version, digest (of version - 1) */
};

struct ev {
	enum ev_kind kind;
	const char *member;
	enum lb_role role;
	uint64_t version;
	const uint8_t *digest;
	bool yes;
	const char *text;
	uint64_t now;
	int rc;
};

#define BEGIN(d, t)                                                                                \
	{                                                                                          \
		.kind = EV_BEGIN, .digest = (d), .now = (t)                                        \
	}
#define BEGIN_RC(d, t, r)                                                                          \
	{                                                                                          \
		.kind = EV_BEGIN, .digest = (d), .now = (t), .rc = (r)                             \
	}
#define VOTE(m, v, d, y, t)                                                                        \
	{                                                                                          \
		.kind = EV_VOTE, .member = (m), .version = (v), .digest = (d), .yes = (y),         \
		.text = "", .now = (t)                                                             \
	}
#define VOTE_NO(m, v, d, why, t)                                                                   \
	{                                                                                          \
		.kind = EV_VOTE, .member = (m), .version = (v), .digest = (d), .text = (why),      \
		.now = (t)                                                                         \
	}
#define HELLO(m, v, d, t)                                                                          \
	{                                                                                          \
		.kind = EV_HELLO, .member = (m), .role = LB_ROLE_MUX, .version = (v),              \
		.digest = (d), .now = (t)                                                          \
	}
#define HELLO_AGENT(m, v, d, t)                                                                    \
	{                                                                                          \
		.kind = EV_HELLO, .member = (m), .role = LB_ROLE_AGENT, .version = (v),            \
		.digest = (d), .now = (t)                                                          \
	}
#define STATUS(m, v)                                                                               \
	{                                                                                          \
		.kind = EV_STATUS, .member = (m), .version = (v)                                   \
	}
#define STATUS_AT(m, v, t)                                                                         \
	{                                                                                          \
		.kind = EV_STATUS, .member = (m), .version = (v), .now = (t)                       \
	}
#define FENCE(m, why)                                                                              \
	{                                                                                          \
		.kind = EV_FENCE, .member = (m), .text = (why)                                     \
	}
#define GONE(m)                                                                                    \
	{                                                                                          \
		.kind = EV_GONE, .member = (m)                                                     \
	}
#define TICK(t)                                                                                    \
	{                                                                                          \
		.kind = EV_TICK, .now = (t)                                                        \
	}
#define RECOVER(v, d, decided)                                                                     \
	{                                                                                          \
		.kind = EV_RECOVER, .version = (v), .digest = (d), .yes = (decided)                \
	}
#define UNDO(v, d)                                                                                 \
	{                                                                                          \
		.kind = EV_UNDO, .version = (v), .digest = (d)                                     \
	}

/* ---- what a step expects ---- */

#define ANY (-2) /* a count of actions to any member */

/* n actions of a type, to a member (its index) or ANY. */
struct count {
	enum mgr_action_type type; /* 0 ends the list */
	int member;
	unsigned n;
};

/* A value checked only when given: IS(v). */
struct opt {
	bool on;
	uint64_t v;
};
#define IS(x)                                                                                      \
	{                                                                                          \
		.on = true, .v = (x)                                                               \
	}

struct member_check {
	const char *id;		     /* NULL ends the list */
	enum mgr_member_state state; /* 0: not checked */
	const char *why;	     /* NULL: not checked */
	struct opt applied;
};

struct step {
	const char *what; /* what the step shows: said by any check that fails */
	struct ev ev;
	bool none;		    /* no action at all */
	struct count counts[6];	    /* exact counts of actions */
	bool durable_first;	    /* RECORD_COMMIT comes before every SEND_COMMIT */
	const char *aborted[3];	    /* an ABORTED whose reason holds each of these */
	enum mgr_abort_cause cause; /* the ABORTED's cause, when given */
	struct opt aborted_by;	    /* the ABORTED's member (who voted no) */
	struct opt committed;	    /* c->committed after the step */
	const uint8_t *committed_digest;
	struct opt inflight;
	struct member_check members[3];
};

/* ---- the runner ---- */

static unsigned checks; /* made by the test running: it reports them */

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		checks++;                                                                          \
		cr_assert(cond, __VA_ARGS__);                                                      \
	} while (0)

static unsigned
count(const struct mgr_action *a, uint32_t n, enum mgr_action_type t, int member)
{
	unsigned k = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].type == t && (member == ANY || a[i].member == member))
			k++;
	return k;
}

static int
index_of(const struct mgr_action *a, uint32_t n, enum mgr_action_type t)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].type == t)
			return (int)i;
	return -1;
}

/* A manager at version 0 with members m0..m{n-1}, all in sync. */
static void
setup(struct mgr_commit *c, unsigned n)
{
	char id[16];
	uint32_t k;
	unsigned i;

	mgr_commit_init(c, 0, d0, 1000);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "m%u", i);
		mgr_commit_hello(c, id, LB_ROLE_MUX, 0, d0, 0);
	}
	mgr_commit_actions(c, &k);
	CHECK(k == 0, "members at the committed version need nothing");
}

static void
feed(struct mgr_commit *c, const struct step *s, size_t k)
{
	const struct ev *e = &s->ev;
	int rc;

	switch (e->kind) {
	case EV_BEGIN:
		rc = mgr_commit_begin(c, e->digest, e->now);
		CHECK(rc == e->rc, "step %zu (%s): begin returned %d, not %d", k, s->what, rc,
			e->rc);
		break;
	case EV_VOTE:
		mgr_commit_vote(c, e->member, e->version, e->digest, e->yes, e->text, e->now);
		break;
	case EV_HELLO:
		mgr_commit_hello(c, e->member, e->role, e->version, e->digest, e->now);
		break;
	case EV_STATUS:
		mgr_commit_status(c, e->member, e->version, e->now);
		break;
	case EV_FENCE:
		mgr_commit_fence(c, e->member, e->text);
		break;
	case EV_GONE:
		mgr_commit_gone(c, e->member);
		break;
	case EV_TICK:
		mgr_commit_tick(c, e->now);
		break;
	case EV_RECOVER:
		mgr_commit_recover(c, e->version, e->digest, e->yes);
		break;
	case EV_UNDO:
		mgr_commit_undo(c, e->version, e->digest);
		break;
	}
}

static void
expect(const struct mgr_commit *c, const struct step *s, size_t k, const struct mgr_action *a,
	uint32_t n)
{
	const struct count *ct;
	const struct member_check *mc;
	int ab = index_of(a, n, MGR_ACT_ABORTED);
	size_t i;

	if (s->none)
		CHECK(n == 0, "step %zu (%s): %u actions, none expected", k, s->what, n);
	for (ct = s->counts; ct->type != 0; ct++)
		CHECK(count(a, n, ct->type, ct->member) == ct->n,
			"step %zu (%s): %u actions of type %d to %d, not %u", k, s->what,
			count(a, n, ct->type, ct->member), ct->type, ct->member, ct->n);
	if (s->durable_first) {
		int rec = index_of(a, n, MGR_ACT_RECORD_COMMIT);

		CHECK(rec >= 0 && index_of(a, n, MGR_ACT_SEND_COMMIT) > rec,
			"step %zu (%s): the decision is durable before any COMMIT", k, s->what);
	}
	for (i = 0; i < 3 && s->aborted[i] != NULL; i++)
		CHECK(ab >= 0 && strstr(a[ab].reason, s->aborted[i]) != NULL,
			"step %zu (%s): an ABORTED whose reason holds \"%s\": %s", k, s->what,
			s->aborted[i], ab >= 0 ? a[ab].reason : "(no ABORTED)");
	if (s->cause != MGR_CAUSE_NONE)
		CHECK(ab >= 0 && a[ab].cause == s->cause, "step %zu (%s): aborted for cause %d", k,
			s->what, ab >= 0 ? (int)a[ab].cause : -1);
	if (s->aborted_by.on)
		CHECK(ab >= 0 && a[ab].member == (int)s->aborted_by.v,
			"step %zu (%s): aborted by member %d", k, s->what,
			ab >= 0 ? a[ab].member : -1);
	if (s->committed.on)
		CHECK(c->committed == s->committed.v, "step %zu (%s): committed %llu, not %llu", k,
			s->what, (unsigned long long)c->committed,
			(unsigned long long)s->committed.v);
	if (s->committed_digest != NULL)
		CHECK(memcmp(c->committed_digest, s->committed_digest, LB_DIGEST_LEN) == 0,
			"step %zu (%s): the committed digest", k, s->what);
	if (s->inflight.on)
		CHECK(c->inflight == s->inflight.v, "step %zu (%s): version %llu in flight", k,
			s->what, (unsigned long long)c->inflight);
	for (mc = s->members; mc < s->members + 3 && mc->id != NULL; mc++) {
		int m = mgr_commit_find(c, mc->id);

		CHECK(m >= 0, "step %zu (%s): member %s is known", k, s->what, mc->id);
		if (mc->state != 0)
			CHECK(c->members[m].state == mc->state, "step %zu (%s): %s is %s", k,
				s->what, mc->id,
				mc->state == MGR_MEMBER_FENCED ? "fenced" : "in sync");
		if (mc->why != NULL)
			CHECK(strcmp(c->members[m].why, mc->why) == 0,
				"step %zu (%s): %s fenced because \"%s\", not \"%s\"", k, s->what,
				mc->id, c->members[m].why, mc->why);
		if (mc->applied.on)
			CHECK(c->members[m].applied == mc->applied.v,
				"step %zu (%s): %s counted at version %llu", k, s->what, mc->id,
				(unsigned long long)c->members[m].applied);
	}
}

static void
run(const char *name, unsigned members, const struct step *steps, size_t n_steps)
{
	struct mgr_commit *c = calloc(1, sizeof(*c));
	const struct mgr_action *a;
	uint32_t n;
	size_t k;

	cr_assert_not_null(c);
	setup(c, members);
	for (k = 0; k < n_steps; k++) {
		feed(c, &steps[k], k);
		a = mgr_commit_actions(c, &n);
		expect(c, &steps[k], k, a, n);
	}
	cr_log_info("%s: %zu steps", name, n_steps);
	free(c);
}

#define RUN(name, members, steps) run(name, members, steps, sizeof(steps) / sizeof(steps[0]))

/* Each test reports the checks it made (the verbose run shows them). */
static void
report(void)
{
	cr_log_info("%u checks", checks);
	checks = 0;
}

TestSuite(commit, .fini = report);

/* ---- the tables ---- */

Test(commit, all_yes_commits_after_recording)
{
	static const struct step steps[] = {
		{"PREPARE to every member", BEGIN(d1, 0),
			.counts = {{MGR_ACT_SEND_PREPARE, ANY, 3}}},
		{"one round at a time", BEGIN_RC(d2, 0, -LB_EEXIST)},
		{"a first yes", VOTE("m0", 1, d1, true, 10)},
		{"no decision before the last vote", VOTE("m1", 1, d1, true, 10), .none = true},
		{"the last yes commits", VOTE("m2", 1, d1, true, 10), .durable_first = true,
			.counts = {{MGR_ACT_SEND_COMMIT, ANY, 3}, {MGR_ACT_COMMITTED, ANY, 1}},
			.committed = IS(1), .committed_digest = d1},
	};

	RUN("all yes", 3, steps);
}

Test(commit, silent_member_aborts_and_is_fenced_then_resynced)
{
	static const struct step steps[] = {
		{"a round", BEGIN(d1, 0)},
		{"m0 votes yes", VOTE("m0", 1, d1, true, 10)},
		{"m1 votes yes, m2 is silent", VOTE("m1", 1, d1, true, 10)},
		{"before the deadline nothing happens", TICK(999), .none = true},
		{"at the deadline the round aborts", TICK(1000),
			.counts = {{MGR_ACT_SEND_ABORT, ANY, 3}, {MGR_ACT_FENCE, 2, 1},
				{MGR_ACT_SEND_SNAPSHOT, 2, 1}, {MGR_ACT_ABORTED, ANY, 1}},
			.aborted = {"m2"}, .cause = MGR_CAUSE_TIMEOUT, .committed = IS(0),
			.members = {{"m2", MGR_MEMBER_FENCED}}},
		{"the retry goes on without the fenced member", BEGIN(d1, 2000),
			.counts = {{MGR_ACT_SEND_PREPARE, ANY, 2}, {MGR_ACT_SEND_PREPARE, 2, 0}}},
		{"m0 votes yes again", VOTE("m0", 1, d1, true, 2010)},
		{"m1 too: committed", VOTE("m1", 1, d1, true, 2010),
			.counts = {{MGR_ACT_COMMITTED, ANY, 1}}, .committed = IS(1)},
		{"it comes back behind: still fenced", HELLO("m2", 0, d0, 3000),
			.members = {{"m2", MGR_MEMBER_FENCED}}},
		{"at the committed version and digest it rejoins", HELLO("m2", 1, d1, 3100),
			.members = {{"m2", MGR_MEMBER_IN_SYNC}}},
		{"and takes part in the next round", BEGIN(d2, 4000),
			.counts = {{MGR_ACT_SEND_PREPARE, 2, 1}}},
	};

	RUN("silent member", 3, steps);
}

Test(commit, wrong_digest_at_the_committed_version_is_fenced)
{
	static const struct step steps[] = {
		{"a round", BEGIN(d1, 0)},
		{"its only member commits it", VOTE("m0", 1, d1, true, 1)},
		{"same number, other table", HELLO("m0", 1, d2, 5),
			.members = {{"m0", MGR_MEMBER_FENCED}}},
	};

	RUN("wrong digest", 1, steps);
}

Test(commit, a_no_vote_aborts_and_names_the_member)
{
	static const struct step steps[] = {
		{"a round", BEGIN(d1, 0)},
		{"m0 votes yes", VOTE("m0", 1, d1, true, 1)},
		{"m1 votes no: aborted, naming it and why",
			VOTE_NO("m1", 1, d1, "maglev table: out of memory", 1),
			.counts = {{MGR_ACT_SEND_ABORT, ANY, 3}, {MGR_ACT_SEND_COMMIT, ANY, 0},
				{MGR_ACT_ABORTED, ANY, 1}},
			.aborted = {"m1", "out of memory"}, .cause = MGR_CAUSE_VOTE_NO,
			.aborted_by = IS(1), .committed = IS(0)},
		{"the late yes of the third member changes nothing", VOTE("m2", 1, d1, true, 2),
			.none = true, .committed = IS(0)},
	};

	RUN("no vote", 3, steps);
}

Test(commit, duplicated_and_reordered_messages_are_harmless)
{
	static const struct step steps[] = {
		{"a round", BEGIN(d1, 0)},
		{"m0's yes", VOTE("m0", 1, d1, true, 1), .none = true},
		{"m0's yes again", VOTE("m0", 1, d1, true, 2), .none = true},
		{"m0's yes a third time", VOTE("m0", 1, d1, true, 3), .none = true},
		{"a vote about version 0", VOTE("m1", 0, d1, true, 4), .none = true},
		{"a vote about version 2", VOTE("m1", 2, d1, true, 4), .none = true},
		{"a vote about another digest", VOTE("m1", 1, d2, true, 4), .none = true},
		{"no decision from duplicates or strays", VOTE("nobody", 1, d1, true, 4),
			.none = true},
		{"m1's yes decides", VOTE("m1", 1, d1, true, 5),
			.counts = {{MGR_ACT_COMMITTED, ANY, 1}, {MGR_ACT_SEND_COMMIT, ANY, 2}}},
		{"a duplicate after the decision commits nothing twice", VOTE("m1", 1, d1, true, 6),
			.none = true, .committed = IS(1)},
	};

	RUN("duplicates", 2, steps);
}

Test(commit, restart_between_prepare_and_commit)
{
	static const struct step undecided[] = {
		{"undecided: the restarted manager aborts the round everywhere",
			RECOVER(1, d1, false),
			.counts = {{MGR_ACT_SEND_ABORT, ANY, 2}, {MGR_ACT_ABORTED, ANY, 1}},
			.cause = MGR_CAUSE_RECOVERY, .committed = IS(0), .inflight = IS(0)},
	};
	static const struct step decided[] = {
		{"decided (its record was durable): COMMIT is sent again to all",
			RECOVER(1, d1, true),
			.counts = {{MGR_ACT_SEND_COMMIT, ANY, 2}, {MGR_ACT_SEND_ABORT, ANY, 0}},
			.committed = IS(1)},
		{"a member reports version 1 with its digest", HELLO("m0", 1, d1, 10)},
		{"both do: all in sync", HELLO_AGENT("m1", 1, d1, 10),
			.members = {{"m0", MGR_MEMBER_IN_SYNC}, {"m1", MGR_MEMBER_IN_SYNC}}},
	};

	RUN("restart, undecided", 2, undecided);
	RUN("restart, decided", 2, decided);
}

Test(commit, member_falling_behind_mid_round_does_not_block)
{
	static const struct step steps[] = {
		{"a round", BEGIN(d1, 0)},
		{"m0 votes yes", VOTE("m0", 1, d1, true, 1)},
		{"m1 votes yes", VOTE("m1", 1, d1, true, 1)},
		{"m2 restarted and says hello from an empty table: the others decide",
			HELLO("m2", 0, d2, 2),
			.counts = {{MGR_ACT_FENCE, 2, 1}, {MGR_ACT_COMMITTED, ANY, 1},
				{MGR_ACT_SEND_COMMIT, 2, 0}},
			.committed = IS(1)},
	};

	RUN("restart mid-round", 3, steps);
}

/*
 * A member whose hello finds it current while a round is in flight did not
 * prepare that round: if it commits, the member runs the version before
 * and is brought up by a snapshot; if it aborts, the member is current.
 */
Test(commit, a_member_joining_mid_round_is_not_left_behind)
{
	static const struct step commits[] = {
		{"m1 fenced between rounds", FENCE("m1", "VIP probe: no answer"),
			.counts = {{MGR_ACT_FENCE, 1, 1}, {MGR_ACT_SEND_SNAPSHOT, 1, 1}}},
		{"a round without it", BEGIN(d1, 0), .counts = {{MGR_ACT_SEND_PREPARE, ANY, 1}}},
		{"its hello at the committed version mid-round: in sync, out of this round",
			HELLO("m1", 0, d0, 1), .none = true,
			.members = {{"m1", MGR_MEMBER_IN_SYNC}}},
		{"m0's yes commits; m1, still on version 0, gets a snapshot of version 1",
			VOTE("m0", 1, d1, true, 2),
			.counts = {{MGR_ACT_COMMITTED, ANY, 1}, {MGR_ACT_SEND_COMMIT, 1, 0},
				{MGR_ACT_FENCE, 1, 1}, {MGR_ACT_SEND_SNAPSHOT, 1, 1}},
			.committed = IS(1),
			.members = {{"m1", MGR_MEMBER_FENCED,
				"runs version 0, joined during the round of 1", IS(0)}}},
		{"its hello at version 1: in sync again", HELLO("m1", 1, d1, 3),
			.members = {{"m1", MGR_MEMBER_IN_SYNC, "", IS(1)}}},
	};
	static const struct step aborts[] = {
		{"m1 fenced between rounds", FENCE("m1", "VIP probe: no answer")},
		{"a round without it", BEGIN(d1, 0)},
		{"its hello at the committed version mid-round", HELLO("m1", 0, d0, 1),
			.none = true},
		{"m0's no aborts: m1 runs the committed version and stays in sync",
			VOTE_NO("m0", 1, d1, "maglev: out of memory", 2),
			.counts = {{MGR_ACT_ABORTED, ANY, 1}, {MGR_ACT_FENCE, ANY, 0},
				{MGR_ACT_SEND_SNAPSHOT, ANY, 0}},
			.committed = IS(0), .members = {{"m1", MGR_MEMBER_IN_SYNC}}},
	};

	RUN("joined mid-round, committed", 2, commits);
	RUN("joined mid-round, aborted", 2, aborts);
}

Test(commit, no_members_commits_at_once)
{
	static const struct step steps[] = {
		{"nothing can disagree", BEGIN(d1, 0), .counts = {{MGR_ACT_COMMITTED, ANY, 1}},
			.committed = IS(1)},
	};

	RUN("no members", 0, steps);
}

/* A mux fenced by its VIP probes: between rounds, and as the last voter of one. */
Test(commit, fence_from_outside_the_protocol)
{
	static const struct step steps[] = {
		{"fenced between rounds, with a snapshot",
			FENCE("m1", "VIP probe: no answer for 192.0.2.10 through 10.255.0.1"),
			.counts = {{MGR_ACT_FENCE, 1, 1}, {MGR_ACT_SEND_SNAPSHOT, 1, 1}},
			.members = {{"m1", MGR_MEMBER_FENCED,
				"VIP probe: no answer for 192.0.2.10 through 10.255.0.1"}}},
		{"a fenced member: nothing", FENCE("m1", "again"), .none = true},
		{"an unknown member: nothing", FENCE("nobody", "unknown"), .none = true},
		{"its hello at the committed version", HELLO("m1", 0, d0, 5),
			.members = {{"m1", MGR_MEMBER_IN_SYNC}}},
		{"a round", BEGIN(d1, 10)},
		{"m0 votes yes", VOTE("m0", 1, d1, true, 11)},
		{"m2 votes yes, m1 not yet", VOTE("m2", 1, d1, true, 11)},
		{"fencing the last voter lets the round commit, without a COMMIT to it",
			FENCE("m1", "VIP probe: answers with version 0, committed is 1"),
			.counts = {{MGR_ACT_FENCE, 1, 1}, {MGR_ACT_COMMITTED, ANY, 1},
				{MGR_ACT_SEND_COMMIT, 1, 0}},
			.committed = IS(1)},
	};

	RUN("fence from outside", 3, steps);
}

/* A "no" from a member that missed a COMMIT says nothing of the change. */
Test(commit, a_no_from_a_member_behind_fences_it)
{
	static const struct step steps[] = {
		{"version 1", BEGIN(d1, 0)},
		{"m0 votes yes", VOTE("m0", 1, d1, true, 1)},
		{"m1 votes yes: committed", VOTE("m1", 1, d1, true, 1), .committed = IS(1)},
		{"m0 reports it runs version 1", STATUS("m0", 1)},
		{"m1 reports it still runs version 0 (its COMMIT was lost)", STATUS("m1", 0)},
		{"version 2", BEGIN(d2, 10), .counts = {{MGR_ACT_SEND_PREPARE, ANY, 2}}},
		{"m1's no: aborted because it is behind, and it is fenced",
			VOTE_NO("m1", 2, d2, "base version 0 is not 1", 11),
			.counts = {{MGR_ACT_SEND_ABORT, ANY, 2}, {MGR_ACT_ABORTED, ANY, 1},
				{MGR_ACT_FENCE, 1, 1}, {MGR_ACT_SEND_SNAPSHOT, 1, 1}},
			.aborted = {"m1 voted no"}, .cause = MGR_CAUSE_BEHIND, .aborted_by = IS(1),
			.committed = IS(1),
			.members = {{"m1", MGR_MEMBER_FENCED, "runs version 0, current is 1",
				IS(0)}}},
		{"the retry goes on without it", BEGIN(d2, 20),
			.counts = {{MGR_ACT_SEND_PREPARE, ANY, 1}, {MGR_ACT_SEND_PREPARE, 1, 0}}},
		{"m0's no is about the change", VOTE_NO("m0", 2, d2, "maglev: out of memory", 21),
			.cause = MGR_CAUSE_VOTE_NO, .aborted_by = IS(0),
			.members = {{"m0", MGR_MEMBER_IN_SYNC}}},
	};

	RUN("behind", 2, steps);
}

/*
 * A COMMIT lost with no round after it: the member reports the version
 * before, between rounds, for a vote timeout (1000 ms here): fenced, with a
 * snapshot. One report that crossed its COMMIT is not enough.
 */
Test(commit, a_member_reporting_an_old_version_between_rounds_is_fenced)
{
	static const struct step steps[] = {
		{"version 1", BEGIN(d1, 0)},
		{"m0 votes yes", VOTE("m0", 1, d1, true, 1)},
		{"m1 votes yes: committed", VOTE("m1", 1, d1, true, 1), .committed = IS(1)},
		{"m1's report crossed its COMMIT: nothing yet", STATUS_AT("m1", 0, 5), .none = true,
			.members = {{"m1", MGR_MEMBER_IN_SYNC}}},
		{"its next one runs version 1: still nothing", STATUS_AT("m1", 1, 1005),
			.none = true},
		{"version 2", BEGIN(d2, 2000)},
		{"m0 votes yes", VOTE("m0", 2, d2, true, 2001)},
		{"m1 votes yes: committed", VOTE("m1", 2, d2, true, 2001), .committed = IS(2)},
		{"m0 reports version 1 (its COMMIT was lost)", STATUS_AT("m0", 1, 2005),
			.none = true},
		{"and again, 900 ms on: not yet", STATUS_AT("m0", 1, 2905), .none = true},
		{"and again, a vote timeout on: fenced, a snapshot", STATUS_AT("m0", 1, 3005),
			.counts = {{MGR_ACT_FENCE, 0, 1}, {MGR_ACT_SEND_SNAPSHOT, 0, 1}},
			.members = {{"m0", MGR_MEMBER_FENCED,
				"reports version 1 for 1000 ms, committed is 2", IS(1)}}},
		{"its hello at version 2: in sync", HELLO("m0", 2, d2, 3100),
			.members = {{"m0", MGR_MEMBER_IN_SYNC, "", IS(2)}}},
		{"a fenced member's old reports: nothing", FENCE("m1", "VIP probe: no answer")},
		{"m1, fenced, reports version 1", STATUS_AT("m1", 1, 4000),
			.counts = {{MGR_ACT_FENCE, ANY, 0}}},
		{"and again later: still nothing new", STATUS_AT("m1", 1, 6000), .none = true},
	};

	RUN("lost commit", 2, steps);
}

/* A member whose connection closed is out of the next round, not this one. */
Test(commit, a_member_gone_is_fenced_between_rounds)
{
	static const struct step steps[] = {
		{"gone between rounds: fenced, no snapshot", GONE("m0"),
			.counts = {{MGR_ACT_FENCE, 0, 1}, {MGR_ACT_SEND_SNAPSHOT, ANY, 0}},
			.members = {{"m0", MGR_MEMBER_FENCED, "disconnected"}}},
		{"a fenced member: nothing", GONE("m0"), .none = true},
		{"a round without it", BEGIN(d1, 0), .counts = {{MGR_ACT_SEND_PREPARE, ANY, 1}}},
		{"gone mid-round: the deadline decides", GONE("m1"), .none = true,
			.members = {{"m1", MGR_MEMBER_IN_SYNC}}},
		{"the deadline passes", TICK(1000), .cause = MGR_CAUSE_TIMEOUT,
			.members = {{"m1", MGR_MEMBER_FENCED}}},
	};

	RUN("gone", 2, steps);
}

/*
 * A member that voted yes and then went: its vote counts, the round
 * commits, and it is fenced at the round's end, not left in sync at a
 * version it never ran for the next round to wait on.
 */
Test(commit, a_member_gone_after_its_yes_is_fenced_when_the_round_ends)
{
	static const struct step steps[] = {
		{"a round", BEGIN(d1, 0), .counts = {{MGR_ACT_SEND_PREPARE, ANY, 2}}},
		{"m1 votes yes", VOTE("m1", 1, d1, true, 10)},
		{"m1's connection closes: nothing yet", GONE("m1"), .none = true,
			.members = {{"m1", MGR_MEMBER_IN_SYNC}}},
		{"m0's yes commits; m1 gets no COMMIT and is fenced", VOTE("m0", 1, d1, true, 20),
			.counts = {{MGR_ACT_SEND_COMMIT, 0, 1}, {MGR_ACT_SEND_COMMIT, 1, 0},
				{MGR_ACT_FENCE, 1, 1}},
			.committed = IS(1),
			.members = {{"m0", MGR_MEMBER_IN_SYNC, NULL, IS(1)},
				{"m1", MGR_MEMBER_FENCED, "disconnected", IS(0)}}},
		{"the next round is m0's alone", BEGIN(d2, 30),
			.counts = {{MGR_ACT_SEND_PREPARE, 0, 1}, {MGR_ACT_SEND_PREPARE, 1, 0}}},
		{"and commits on its yes", VOTE("m0", 2, d2, true, 40), .committed = IS(2)},
	};

	RUN("gone after yes", 2, steps);
}

/* The store refused the commit record: the decision is taken back. */
Test(commit, an_undone_commit_is_taken_back)
{
	static const struct step steps[] = {
		{"a round", BEGIN(d1, 0)},
		{"m0 votes yes", VOTE("m0", 1, d1, true, 1)},
		{"m1 votes yes: counted committed", VOTE("m1", 1, d1, true, 1), .committed = IS(1),
			.members = {{"m0", .applied = IS(1)}}},
		{"another version is not taken back", UNDO(2, d1), .none = true,
			.committed = IS(1)},
		{"taken back, members with it", UNDO(1, d0), .none = true, .committed = IS(0),
			.committed_digest = d0,
			.members = {{"m0", .applied = IS(0)}, {"m1", .applied = IS(0)}}},
		{"the next round is version 1 again", BEGIN(d1, 10),
			.counts = {{MGR_ACT_SEND_PREPARE, ANY, 2}}, .inflight = IS(1)},
	};

	RUN("undo", 2, steps);
}
