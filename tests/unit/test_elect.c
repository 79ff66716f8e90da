/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leader election on an etcd lease (manager/core/mgr_elect.c), walked
 * through by events as the election's I/O would feed them: a first
 * leader, a standby that takes over when the key goes, keepalives and
 * their failures, a lease that lapses, a leader whose loop stands still,
 * another term on the key, a win on a lease about to end, a stop.
 *
 * Each test is a table of steps: one event, then the actions it must
 * answer with (exactly those, in that order) and the state after it. The
 * lease's ttl is 3 s throughout: keepalives every 1000 ms, and a leader
 * steps down 750 ms before its lease may end (a quarter of the ttl).
 */
#include <string.h>

#include <criterion/criterion.h>

#include "mgr_elect.h"

#define TTL 3
#define LEASE 77

#define EV(t, ...)                                                                                 \
	{                                                                                          \
		.type = (t), .loop_alive = true, __VA_ARGS__                                       \
	}
#define TICK(n) EV(MGR_EV_TICK, .now_ms = (n))
#define TICK_STUCK(n)                                                                              \
	{                                                                                          \
		.type = MGR_EV_TICK, .now_ms = (n), .loop_alive = false                            \
	}
#define GRANTED(n) EV(MGR_EV_GRANTED, .now_ms = (n), .sent_ms = (n), .lease = LEASE, .ttl_s = TTL)
#define WON(n, t) EV(MGR_EV_WON, .now_ms = (n), .term = (t), .info = "me")
#define LOST(n, t, who) EV(MGR_EV_LOST, .now_ms = (n), .term = (t), .info = (who))
#define KEPT(n, sent) EV(MGR_EV_KEPT, .now_ms = (n), .sent_ms = (sent), .ttl_s = TTL)
#define KEEP_FAILED(n) EV(MGR_EV_KEEP_FAILED, .now_ms = (n), .why = "timeout")
#define KEY_GONE(n) EV(MGR_EV_KEY_GONE, .now_ms = (n))
#define KEY_IS(n, t, who) EV(MGR_EV_KEY_IS, .now_ms = (n), .term = (t), .info = (who))

struct step {
	const char *what;
	struct mgr_elect_event ev;
	enum mgr_elect_act acts[MGR_ELECT_MAX_ACTIONS]; /* exactly these, 0 ends */
	enum mgr_elect_state state;
	uint64_t term;	      /* the term after the step (e->term) */
	uint64_t leader_term; /* the leader as seen, when non-zero */
	const char *why;      /* a DEPOSED's reason holds this, when given */
};

static const char *
act_name(enum mgr_elect_act a)
{
	static const char *const n[] = {"none", "GRANT", "CAMPAIGN", "KEEPALIVE", "READ", "REVOKE",
		"ELECTED", "DEPOSED", "LEADER"};

	return (unsigned)a < sizeof(n) / sizeof(n[0]) ? n[a] : "?";
}

static void
run(struct mgr_elect *e, const struct step *steps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct step *s = &steps[i];
		const struct mgr_elect_action *a;
		uint32_t na, k, want = 0;

		mgr_elect_feed(e, &s->ev);
		a = mgr_elect_actions(e, &na);
		while (want < MGR_ELECT_MAX_ACTIONS && s->acts[want] != 0)
			want++;
		for (k = 0; k < na || k < want; k++)
			cr_assert(k < na && k < want && a[k].type == s->acts[k],
				"step %zu (%s): action %u is %s, wanted %s (%u actions, %u wanted)",
				i, s->what, k, k < na ? act_name(a[k].type) : "none",
				k < want ? act_name(s->acts[k]) : "none", na, want);
		for (k = 0; k < na; k++) {
			if (a[k].type == MGR_EA_CAMPAIGN || a[k].type == MGR_EA_KEEPALIVE)
				cr_assert_eq(a[k].lease, LEASE, "step %zu (%s): on our lease", i,
					s->what);
			if (a[k].type == MGR_EA_DEPOSED && s->why != NULL)
				cr_assert(strstr(a[k].why, s->why) != NULL,
					"step %zu (%s): deposed because \"%s\", wanted \"%s\"", i,
					s->what, a[k].why, s->why);
		}
		cr_assert_eq(e->state, s->state, "step %zu (%s): state %s, wanted %s", i, s->what,
			mgr_elect_state_name(e->state), mgr_elect_state_name(s->state));
		cr_assert_eq(e->term, s->term, "step %zu (%s): term %llu, wanted %llu", i, s->what,
			(unsigned long long)e->term, (unsigned long long)s->term);
		if (s->leader_term != 0)
			cr_assert_eq(e->leader_term, s->leader_term,
				"step %zu (%s): leader term %llu, wanted %llu", i, s->what,
				(unsigned long long)e->leader_term,
				(unsigned long long)s->leader_term);
	}
}

#define RUN(steps)                                                                                 \
	do {                                                                                       \
		struct mgr_elect e;                                                                \
		mgr_elect_init(&e, TTL);                                                           \
		run(&e, steps, sizeof(steps) / sizeof(steps[0]));                                  \
	} while (0)

/* The steps that make a manager leader at term 5 at t = 1000. */
#define BECOME_LEADER                                                                              \
	{"no lease: grant one", TICK(1000), {MGR_EA_GRANT}, MGR_EL_IDLE, 0, 0, NULL},              \
		{"granted: campaign at once", GRANTED(1000), {MGR_EA_CAMPAIGN}, MGR_EL_CAMPAIGN,   \
			0, 0, NULL},                                                               \
	{                                                                                          \
		"won: elected, the leader is us", WON(1000, 5), {MGR_EA_LEADER, MGR_EA_ELECTED},   \
			MGR_EL_LEADER, 5, 5, NULL                                                  \
	}

/* The steps that make a manager standby at t = 0, under m1 at term 3. */
#define BECOME_STANDBY                                                                             \
	{"no lease: grant one", TICK(0), {MGR_EA_GRANT}, MGR_EL_IDLE, 0, 0, NULL},                 \
		{"granted", GRANTED(0), {MGR_EA_CAMPAIGN}, MGR_EL_CAMPAIGN, 0, 0, NULL},           \
	{                                                                                          \
		"another holds the key: standby, the leader is known", LOST(0, 3, "m1"),           \
			{MGR_EA_LEADER}, MGR_EL_STANDBY, 0, 3, NULL                                \
	}

Test(elect, first_leader_keeps_its_lease)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"nothing to do before ttl/3", TICK(1999), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"ttl/3: keepalive", TICK(2000), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"one keepalive at a time", TICK(2500), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"answered", KEPT(2100, 2000), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"kept past the first lease's end", TICK(3300), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER,
			5, 0, NULL},
		{"answered again", KEPT(3400, 3300), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"the key is ours: nothing changes", KEY_IS(3500, 5, "me"), {0}, MGR_EL_LEADER, 5,
			5, NULL},
		{"still leader long after the first lease; a ttl since the win: read the key",
			TICK(4300), {MGR_EA_READ, MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
	};

	RUN(steps);
}

Test(elect, standby_takes_over_when_the_key_goes)
{
	static const struct step steps[] = {
		BECOME_STANDBY,
		{"a standby keeps its own lease", TICK(1000), {MGR_EA_KEEPALIVE}, MGR_EL_STANDBY, 0,
			0, NULL},
		{"kept", KEPT(1010, 1000), {0}, MGR_EL_STANDBY, 0, 0, NULL},
		{"the same leader read again: nothing", KEY_IS(1500, 3, "m1"), {0}, MGR_EL_STANDBY,
			0, 3, NULL},
		{"the key goes: the leader is none, campaign", KEY_GONE(2000),
			{MGR_EA_LEADER, MGR_EA_CAMPAIGN}, MGR_EL_CAMPAIGN, 0, 0, NULL},
		{"won at the next term", WON(2010, 9), {MGR_EA_LEADER, MGR_EA_ELECTED},
			MGR_EL_LEADER, 9, 9, NULL},
	};

	RUN(steps);
}

Test(elect, standby_reads_the_key_as_a_backstop)
{
	static const struct step steps[] = {
		BECOME_STANDBY,
		{"keepalive", TICK(1000), {MGR_EA_KEEPALIVE}, MGR_EL_STANDBY, 0, 0, NULL},
		{"kept", KEPT(1000, 1000), {0}, MGR_EL_STANDBY, 0, 0, NULL},
		{"keepalive", TICK(2000), {MGR_EA_KEEPALIVE}, MGR_EL_STANDBY, 0, 0, NULL},
		{"kept", KEPT(2000, 2000), {0}, MGR_EL_STANDBY, 0, 0, NULL},
		{"a ttl after losing: read the key, keep alive", TICK(3000),
			{MGR_EA_READ, MGR_EA_KEEPALIVE}, MGR_EL_STANDBY, 0, 0, NULL},
		{"another leader took over meanwhile: it is known", KEY_IS(3010, 8, "m2"),
			{MGR_EA_LEADER}, MGR_EL_STANDBY, 0, 8, NULL},
	};

	RUN(steps);
}

Test(elect, leader_steps_down_before_its_lease_can_end)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"keepalive", TICK(2000), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"etcd does not answer: tried again sooner", KEEP_FAILED(2300), {0}, MGR_EL_LEADER,
			5, 0, NULL},
		{"again", TICK(2800), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"and again it fails", KEEP_FAILED(3000), {0}, MGR_EL_LEADER, 5, 0, NULL},
		/* granted at 1000 for 3 s: it surely holds until 4000; down at 3250 */
		{"still before the margin", TICK(3249), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"the margin: deposed, back to idle", TICK(3250), {MGR_EA_DEPOSED}, MGR_EL_IDLE, 0,
			0, "could not be renewed in time"},
		{"a new lease is asked for", TICK(3250), {MGR_EA_GRANT}, MGR_EL_IDLE, 0, 0, NULL},
	};

	RUN(steps);
}

Test(elect, a_late_answer_counts_from_when_it_was_sent)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"keepalive", TICK(2000), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		/* sent at 2000: the lease holds until 5000 however late the answer */
		{"answered 1 s late", KEPT(3000, 2000), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"keepalive", TICK(3000), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"fails", KEEP_FAILED(3100), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"retried", TICK(3600), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"fails", KEEP_FAILED(3700), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"retried; a ttl since the win: the key read too", TICK(4200),
			{MGR_EA_READ, MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"an old answer does not move the end back", KEPT(4210, 1500), {0}, MGR_EL_LEADER,
			5, 0, NULL},
		{"5000 - 750: deposed", TICK(4250), {MGR_EA_DEPOSED}, MGR_EL_IDLE, 0, 0, "in time"},
	};

	RUN(steps);
}

Test(elect, lease_gone_deposes)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"keepalive", TICK(2000), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"etcd has no such lease", EV(MGR_EV_LEASE_GONE, .now_ms = 2010), {MGR_EA_DEPOSED},
			MGR_EL_IDLE, 0, 0, "lease expired"},
		{"a new lease", TICK(2010), {MGR_EA_GRANT}, MGR_EL_IDLE, 0, 0, NULL},
	};

	RUN(steps);
}

Test(elect, another_term_on_the_key_deposes)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"the key holds term 12: deposed, standby, the new leader known",
			KEY_IS(1500, 12, "m3"), {MGR_EA_DEPOSED, MGR_EA_LEADER}, MGR_EL_STANDBY, 0,
			12, "term 12 now, not 5"},
		{"the key deleted: campaign again", KEY_GONE(1600),
			{MGR_EA_LEADER, MGR_EA_CAMPAIGN}, MGR_EL_CAMPAIGN, 0, 0, NULL},
	};

	RUN(steps);
}

/*
 * The key deleted and taken by a standby while this leader's lease lives:
 * no watch event needed, the leader's own read finds the other term.
 */
Test(elect, leader_reads_its_key_and_finds_another_term)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"keepalive", TICK(2000), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"kept", KEPT(2010, 2000), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"keepalive", TICK(3000), {MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"kept", KEPT(3010, 3000), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"before a ttl: no read", TICK(3999), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"a ttl after the win: read the key, keep alive", TICK(4000),
			{MGR_EA_READ, MGR_EA_KEEPALIVE}, MGR_EL_LEADER, 5, 0, NULL},
		{"term 21 holds it: deposed, standby", KEY_IS(4010, 21, "m2"),
			{MGR_EA_DEPOSED, MGR_EA_LEADER}, MGR_EL_STANDBY, 0, 21,
			"term 21 now, not 5"},
	};

	RUN(steps);
}

Test(elect, key_deleted_under_the_leader)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"deposed, campaigns on the same lease", KEY_GONE(1500),
			{MGR_EA_LEADER, MGR_EA_DEPOSED}, MGR_EL_CAMPAIGN, 0, 0, "deleted"},
		{"the campaign", TICK(1500), {MGR_EA_CAMPAIGN}, MGR_EL_CAMPAIGN, 0, 0, NULL},
		{"won, a new term", WON(1510, 14), {MGR_EA_LEADER, MGR_EA_ELECTED}, MGR_EL_LEADER,
			14, 14, NULL},
	};

	RUN(steps);
}

Test(elect, a_stuck_loop_lets_the_lease_lapse)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"the loop stands still: no keepalive", TICK_STUCK(2000), {0}, MGR_EL_LEADER, 5, 0,
			NULL},
		{"still none", TICK_STUCK(3000), {0}, MGR_EL_LEADER, 5, 0, NULL},
		{"deposed before the lease ends", TICK_STUCK(3250), {MGR_EA_DEPOSED}, MGR_EL_IDLE,
			0, 0, "in time"},
	};

	RUN(steps);
}

Test(elect, a_win_on_a_lapsing_lease_is_not_taken)
{
	static const struct step steps[] = {
		{"grant", TICK(0), {MGR_EA_GRANT}, MGR_EL_IDLE, 0, 0, NULL},
		{"granted at 0 (until 3000)", GRANTED(0), {MGR_EA_CAMPAIGN}, MGR_EL_CAMPAIGN, 0, 0,
			NULL},
		{"won only at 2300: not leader yet", WON(2300, 4), {0}, MGR_EL_CAMPAIGN, 0, 0,
			NULL},
		{"renewed", KEPT(2400, 2300), {0}, MGR_EL_CAMPAIGN, 0, 0, NULL},
		{"campaign again (the key on our lease answers won)", TICK(2800),
			{MGR_EA_CAMPAIGN, MGR_EA_KEEPALIVE}, MGR_EL_CAMPAIGN, 0, 0, NULL},
		{"won in time now", WON(2810, 4), {MGR_EA_LEADER, MGR_EA_ELECTED}, MGR_EL_LEADER, 4,
			4, NULL},
	};

	RUN(steps);
}

Test(elect, failures_are_retried)
{
	static const struct step steps[] = {
		{"grant", TICK(0), {MGR_EA_GRANT}, MGR_EL_IDLE, 0, 0, NULL},
		{"etcd unreachable", EV(MGR_EV_GRANT_FAILED, .now_ms = 100, .why = "refused"), {0},
			MGR_EL_IDLE, 0, 0, NULL},
		{"not before the retry", TICK(599), {0}, MGR_EL_IDLE, 0, 0, NULL},
		{"retried", TICK(600), {MGR_EA_GRANT}, MGR_EL_IDLE, 0, 0, NULL},
		{"granted", GRANTED(700), {MGR_EA_CAMPAIGN}, MGR_EL_CAMPAIGN, 0, 0, NULL},
		{"campaign failed", EV(MGR_EV_CAMPAIGN_FAILED, .now_ms = 800, .why = "timeout"),
			{0}, MGR_EL_CAMPAIGN, 0, 0, NULL},
		{"retried", TICK(1300), {MGR_EA_CAMPAIGN}, MGR_EL_CAMPAIGN, 0, 0, NULL},
		{"a stray grant in another state is ignored",
			EV(MGR_EV_GRANTED, .now_ms = 1310, .lease = 99, .ttl_s = TTL), {0},
			MGR_EL_CAMPAIGN, 0, 0, NULL},
		{"won", WON(1320, 2), {MGR_EA_LEADER, MGR_EA_ELECTED}, MGR_EL_LEADER, 2, 2, NULL},
	};

	RUN(steps);
}

Test(elect, stop_revokes_and_deposes)
{
	static const struct step steps[] = {
		BECOME_LEADER,
		{"stop: revoke the lease (standbys take over now), deposed",
			EV(MGR_EV_STOP, .now_ms = 1500), {MGR_EA_REVOKE, MGR_EA_DEPOSED},
			MGR_EL_STOPPED, 0, 0, "shutting down"},
		{"stopped: ticks do nothing", TICK(9000), {0}, MGR_EL_STOPPED, 0, 0, NULL},
		{"stopped: the key gone does nothing", KEY_GONE(9000), {0}, MGR_EL_STOPPED, 0, 0,
			NULL},
	};

	RUN(steps);
}

Test(elect, next_tick)
{
	struct mgr_elect e;
	struct mgr_elect_event ev = TICK(1000);
	uint32_t n;

	mgr_elect_init(&e, TTL);
	mgr_elect_feed(&e, &ev);
	mgr_elect_actions(&e, &n);
	cr_assert_eq(mgr_elect_next_ms(&e), 1500, "idle: the grant's retry");
	ev = (struct mgr_elect_event)GRANTED(1000);
	mgr_elect_feed(&e, &ev);
	ev = (struct mgr_elect_event)WON(1000, 5);
	mgr_elect_feed(&e, &ev);
	mgr_elect_actions(&e, &n);
	cr_assert_eq(mgr_elect_next_ms(&e), 2000, "leader: the keepalive");
	ev = (struct mgr_elect_event)TICK(2000);
	mgr_elect_feed(&e, &ev);
	mgr_elect_actions(&e, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(mgr_elect_next_ms(&e), 3250, "keepalive out: the step-down's deadline");
	ev = (struct mgr_elect_event)EV(MGR_EV_STOP, .now_ms = 2100);
	mgr_elect_feed(&e, &ev);
	cr_assert_eq(mgr_elect_next_ms(&e), UINT64_MAX, "stopped");
}
