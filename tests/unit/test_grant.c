/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capacity credits, the agent's arithmetic (host_agent/ha_grant.h): fed
 * the tracker's counts and the muxes' reports, it must never let active
 * plus what the muxes may still spend pass max_connections, must split
 * by demand, take back from a hoarder, refuse counters that go back, and
 * wait after a start until old grants are dead.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ha_grant.h"

#define TTL 1000
#define INC 0xa9e47ull

static struct ha_grant g;

static void
start(uint32_t muxes, uint32_t max)
{
	struct ha_grant_cap cap = {7, max};

	ha_grant_init(&g, muxes, TTL, INC, 1000);
	cr_assert_eq(ha_grant_caps(&g, &cap, 1), 0);
}

/* The credits a request to mux grants backend 7 (0: none). */
static uint32_t
ask(uint32_t mux, uint64_t now, struct lb_credit_grant *out)
{
	ha_grant_make(&g, mux, now, out);
	cr_assert_eq(out->n, 1);
	cr_assert_eq(out->c[0].backend, 7);
	return out->c[0].count;
}

/* A mux's answer: its counters for backend 7 and what it still holds. */
static int
answer(uint32_t mux, uint64_t inc, uint64_t now, struct lb_credit_use u)
{
	struct lb_credit_report r;
	char why[256] = "";
	int rc;

	memset(&r, 0, sizeof(r));
	snprintf(r.mux, sizeof(r.mux), "mux%u", mux);
	r.incarnation = inc;
	r.agent_incarnation = INC;
	u.backend = 7;
	r.u[0] = u;
	r.n = 1;
	rc = ha_grant_report(&g, mux, &r, now, why, sizeof(why));
	cr_log_info("report: %d %s", rc, why);
	return rc;
}

/* Two muxes heard at now, granted half of a cap of 10 each, and holding it (their word). */
static void
two_muxes_hold_five(uint64_t now)
{
	struct lb_credit_grant q;

	start(2, 10);
	answer(0, 11, now, (struct lb_credit_use){0});
	answer(1, 22, now, (struct lb_credit_use){0});
	cr_assert_eq(ask(0, now, &q), 5);
	cr_assert_eq(ask(1, now, &q), 5);
	answer(0, 11, now, (struct lb_credit_use){.received = 5, .live = 5, .granted = 5});
	answer(1, 22, now, (struct lb_credit_use){.received = 5, .live = 5, .granted = 5});
}

static uint64_t
held(uint64_t now)
{
	uint64_t sum = 0;
	uint32_t m;

	for (m = 0; m < g.n_muxes; m++)
		sum += ha_grant_outstanding(&g, 0, m, now);
	return sum;
}

Test(grant, nothing_before_every_mux_is_heard_then_shares_never_pass_the_cap)
{
	struct lb_credit_grant q;

	start(2, 10);
	/* Unheard muxes may hold an old start's grants: nothing yet. */
	cr_assert_eq(ask(0, 1010, &q), 0);
	cr_assert_eq(answer(0, 11, 1010, (struct lb_credit_use){0}), 0);
	cr_assert_eq(ask(0, 1020, &q), 0, "mux1 not heard yet");
	cr_assert_eq(answer(1, 22, 1020, (struct lb_credit_use){0}), 0);
	/* Both heard, no demand yet: half each. */
	cr_assert_eq(ask(0, 1030, &q), 5);
	cr_assert_eq(q.c[0].granted, 5);
	cr_assert_eq(ask(1, 1030, &q), 5);
	cr_assert_eq(held(1030), 10);
	/* Nothing left: asking again gives nothing. */
	cr_assert_eq(ask(0, 1040, &q), 0);
	/* Three connections became active: the tracker says so, mux0 spent them. */
	ha_grant_active(&g, 7, 3);
	cr_assert_eq(
		answer(0, 11, 1050,
			(struct lb_credit_use){.received = 5, .used = 3, .live = 2, .granted = 5}),
		0);
	cr_assert_leq(held(1050) + 3, 10);
	/* mux0's demand (3 used) earns it most of what frees up. */
	ha_grant_active(&g, 7, 0); /* the three ended */
	cr_assert_gt(ask(0, 1060, &q), 0);
	cr_assert_leq(held(1060), 10);
}

Test(grant, the_invariant_holds_over_a_random_walk)
{
	struct lb_credit_grant q;
	uint64_t now = 1000, live[2] = {0, 0}, recv[2] = {0, 0}, used[2] = {0, 0};
	uint64_t active = 0;
	uint32_t i, m;

	start(2, 10);
	answer(0, 11, now, (struct lb_credit_use){0});
	answer(1, 22, now, (struct lb_credit_use){0});
	srand(7);
	for (i = 0; i < 5000; i++) {
		now += 10;
		m = i & 1;
		live[m] += ask(m, now, &q);
		recv[m] += q.c[0].count;
		/* The mux spends some (a SYN each, which the tracker then counts). */
		while (live[m] > 0 && rand() % 3 == 0) {
			live[m]--;
			used[m]++;
			active++;
		}
		/* Connections end at random. */
		while (active > 0 && rand() % 4 == 0)
			active--;
		ha_grant_active(&g, 7, active);
		cr_assert_eq(answer(m, m ? 22 : 11, now,
				     (struct lb_credit_use){.received = recv[m],
					     .used = used[m],
					     .live = live[m],
					     .granted = recv[m]}),
			0);
		cr_assert_leq(active + live[0] + live[1], 10, "step %u: %lu active, %lu + %lu held",
			i, active, live[0], live[1]);
	}
	cr_assert_gt(g.st.granted, 100, "credits flowed: %lu", g.st.granted);
}

Test(grant, a_hoarder_is_asked_to_give_back)
{
	struct lb_credit_grant q;

	start(2, 10);
	answer(0, 11, 1000, (struct lb_credit_use){0});
	answer(1, 22, 1000, (struct lb_credit_use){0});
	cr_assert_eq(ask(0, 1010, &q), 5);
	cr_assert_eq(ask(1, 1010, &q), 5);
	/* mux1 spends its 5 and turns 20 away; mux0 sits on its 5. */
	ha_grant_active(&g, 7, 5);
	answer(1, 22, 1020,
		(struct lb_credit_use){.received = 5, .used = 5, .denied = 20, .granted = 5});
	answer(0, 11, 1020, (struct lb_credit_use){.received = 5, .live = 5, .granted = 5});
	ask(0, 1030, &q);
	cr_assert_neq(q.c[0].revoke_below, 0, "mux0's grants are taken back");
	cr_assert_eq(g.st.reclaims, 1);
	/* It answers with nothing left: the take-back is done and forgotten. */
	answer(0, 11, 1040,
		(struct lb_credit_use){.received = 5, .revoked = 5, .live = 0, .granted = 5});
	cr_assert_eq(ha_grant_outstanding(&g, 0, 0, 1040), 0);
	/* The freed five go to the mux with demand. */
	cr_assert_eq(ask(1, 1050, &q), 5);
	ask(0, 1050, &q);
	cr_assert_eq(q.c[0].revoke_below, 0);
}

Test(grant, reports_that_go_back_or_answer_another_start_are_refused)
{
	struct lb_credit_grant q;
	struct lb_credit_report r;
	char why[256];

	start(1, 10);
	answer(0, 11, 1000, (struct lb_credit_use){0});
	cr_assert_eq(ask(0, 1010, &q), 10);
	cr_assert_eq(answer(0, 11, 1020,
			     (struct lb_credit_use){
				     .received = 10, .used = 4, .live = 6, .granted = 10}),
		0);
	/* used went back: refused, and the books keep the last word (6 live). */
	cr_assert_eq(answer(0, 11, 1030,
			     (struct lb_credit_use){
				     .received = 10, .used = 2, .live = 0, .granted = 10}),
		-1);
	cr_assert_eq(ha_grant_outstanding(&g, 0, 0, 1030), 6);
	/* More taken than granted. */
	cr_assert_eq(answer(0, 11, 1030,
			     (struct lb_credit_use){
				     .received = 10, .used = 4, .live = 6, .granted = 11}),
		-1);
	/* Another agent start's answer. */
	memset(&r, 0, sizeof(r));
	r.incarnation = 11;
	r.agent_incarnation = INC + 1;
	cr_assert_eq(ha_grant_report(&g, 0, &r, 1030, why, sizeof(why)), -1);
	cr_assert(strstr(why, "agent start") != NULL, "%s", why);
	cr_assert_eq(g.st.reports_rejected, 3);
	/* A restarted mux (new incarnation) starts its counters again: taken. */
	cr_assert_eq(answer(0, 12, 1040, (struct lb_credit_use){.live = 0}), 0);
	cr_assert_eq(ha_grant_outstanding(&g, 0, 0, 1040), 0);
}

Test(grant, a_silent_mux_keeps_its_grants_until_2_ttl_after_the_last_renewal)
{
	struct lb_credit_grant q;

	start(1, 10);
	answer(0, 11, 1000, (struct lb_credit_use){0});
	cr_assert_eq(ask(0, 1010, &q), 10);
	cr_assert(!q.c[0].renew, "nothing held before this grant");
	/* No answer since 1000, but within 2 x ttl: renewed, and not granted again. */
	cr_assert_eq(ask(0, 1500, &q), 0);
	cr_assert(q.c[0].renew);
	/* Silent past 2 x ttl: no more renewals; the last one counts 2 x ttl from its sending. */
	cr_assert_eq(ask(0, 1000 + 2 * TTL + 1, &q), 0);
	cr_assert(!q.c[0].renew, "a silent mux is not renewed");
	cr_assert_eq(ha_grant_outstanding(&g, 0, 0, 1500 + 2 * TTL - 1), 10);
	cr_assert_eq(ha_grant_outstanding(&g, 0, 0, 1500 + 2 * TTL), 0);
}

Test(grant, an_idle_mux_keeps_its_share_by_renewal_but_not_more)
{
	struct lb_credit_grant q;
	uint64_t now = 1000;
	uint64_t granted;

	two_muxes_hold_five(now);
	granted = g.st.granted;
	/* Neither spends: every round for 5 x ttl renews their grants and grants nothing. */
	for (now = 1050; now < 1000 + 5 * TTL; now += 50) {
		answer(0, 11, now, (struct lb_credit_use){.received = 5, .live = 5, .granted = 5});
		answer(1, 22, now, (struct lb_credit_use){.received = 5, .live = 5, .granted = 5});
		cr_assert_eq(ask(0, now, &q), 0);
		cr_assert(q.c[0].renew, "round at %llu", (unsigned long long)now);
		cr_assert_eq(ask(1, now, &q), 0);
		cr_assert(q.c[0].renew);
	}
	cr_assert_eq(g.st.granted, granted, "leases renewed, not granted again");
	/*
	 * mux1 turns 8 connections away; its demand makes mux0's share 1: mux0's
	 * 5 are no longer renewed (they expire, or are taken back as hoarded).
	 */
	answer(1, 22, now,
		(struct lb_credit_use){.received = 5, .used = 5, .denied = 8, .granted = 5});
	answer(0, 11, now, (struct lb_credit_use){.received = 5, .live = 5, .granted = 5});
	ask(0, now, &q);
	cr_assert(!q.c[0].renew, "more than its share is left to expire");
}

Test(grant, a_mux_that_turns_connections_away_while_holding_credits_is_not_renewed)
{
	struct lb_credit_grant q;
	uint64_t now = 1000;

	two_muxes_hold_five(now);
	ask(0, now + 50, &q);
	cr_assert(q.c[0].renew);
	/*
	 * It holds 4 and turned 3 away: one worker spent its part, another
	 * sits on the rest where no SYN comes. Let them expire and split anew.
	 */
	answer(0, 11, now + 50,
		(struct lb_credit_use){
			.received = 5, .used = 1, .denied = 3, .live = 4, .granted = 5});
	ask(0, now + 100, &q);
	cr_assert(!q.c[0].renew);
	/* A quiet exchange later (no more denied), what it holds is renewed again. */
	answer(0, 11, now + 100,
		(struct lb_credit_use){
			.received = 5, .used = 1, .denied = 3, .live = 4, .granted = 5});
	ask(0, now + 150, &q);
	cr_assert(q.c[0].renew);
}

Test(grant, a_new_start_waits_out_old_grants_when_a_mux_is_unreachable)
{
	struct lb_credit_grant q;

	start(2, 10);
	answer(0, 11, 1000, (struct lb_credit_use){0});
	cr_assert_eq(ask(0, 1000 + 2 * TTL - 1, &q), 0);
	cr_assert_gt(ask(0, 1000 + 2 * TTL, &q), 0);
}

Test(grant, connections_found_after_a_start_take_back_what_is_outstanding)
{
	struct lb_credit_grant q;
	uint64_t now = 1000;
	int i;

	two_muxes_hold_five(now);
	/* The tracker finds 10 connections it did not know: 20 over a cap of 10. */
	ha_grant_active(&g, 7, 10);
	/* One round may be a credit counted twice: nothing is taken back yet. */
	ask(0, now, &q);
	cr_assert_eq(q.c[0].revoke_below, 0);
	ask(1, now, &q);
	cr_assert_eq(q.c[0].revoke_below, 0);
	for (i = 0; i < 4; i++) {
		ask(i & 1, now, &q);
		if (q.c[0].revoke_below != 0)
			break;
	}
	cr_assert_neq(q.c[0].revoke_below, 0, "taken back after two rounds over the cap");
}

Test(grant, a_request_not_sent_is_undone_and_a_book_that_starts_again_takes_back_the_old)
{
	struct lb_credit_grant q;
	struct ha_grant_cap none[1], cap = {7, 10};

	start(1, 10);
	answer(0, 11, 1000, (struct lb_credit_use){0});
	cr_assert_eq(ask(0, 1010, &q), 10);
	ha_grant_unsend(&g, 0, &q);
	cr_assert_eq(ha_grant_outstanding(&g, 0, 0, 1010), 0, "never sent: nothing held");
	cr_assert_eq(g.granted_mux[0], 0);
	cr_assert_eq(ask(0, 1020, &q), 10, "granted again");
	cr_assert_eq(q.c[0].granted, 10);
	/* The cap is removed, then set again: a new book, the old grants taken back. */
	cr_assert_eq(ha_grant_caps(&g, none, 0), 0);
	cr_assert_eq(ha_grant_caps(&g, &cap, 1), 0);
	ask(0, 1030, &q);
	cr_assert_neq(q.c[0].revoke_below, 0, "the first request of the new book takes back");
	cr_assert_geq(q.c[0].granted, 10, "the counter the mux checks never goes back");
}

Test(grant, while_a_mux_answers_its_word_counts_even_a_grant_our_clock_let_go)
{
	struct lb_credit_grant q;

	start(1, 10);
	answer(0, 11, 1000, (struct lb_credit_use){0});
	cr_assert_eq(ask(0, 1010, &q), 10);
	/* It reached the mux late: at 1010 + 2 ttl our clock is done with it, the mux is not. */
	cr_assert_eq(answer(0, 11, 2900,
			     (struct lb_credit_use){.received = 10, .live = 10, .granted = 10}),
		0);
	cr_assert_eq(ha_grant_outstanding(&g, 0, 0, 3100), 10);
	cr_assert_eq(ask(0, 3100, &q), 0, "nothing more while the mux holds 10");
}
