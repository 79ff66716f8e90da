/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Weights from load (manager/core/mgr_load.h): the agents' counters
 * parsed, least_connections' steps bounded by doubling and halving, and
 * mitigation's outlier rule, its floor, its half-the-pool cap and its
 * recovery, on records built by hand (no prober, no clock but the test's).
 */
#include <string.h>

#include <criterion/criterion.h>

#include "lb_codec.h"
#include "mgr_load.h"

#define N 4

static struct mgr_hsvc svc;
static struct mgr_hrec recs[N];
static struct mgr_hrec *rp[N];

static void
pool(uint8_t balance, bool mitigate)
{
	uint32_t i;

	memset(&svc, 0, sizeof(svc));
	memset(recs, 0, sizeof(recs));
	svc.hs_pool.pl_probe = LB_PROBE_NONE;
	svc.hs_balance = balance;
	svc.hs_mitigate = mitigate;
	for (i = 0; i < N; i++) {
		recs[i].hr_svc = &svc;
		recs[i].hr_be.id = 10 + i;
		recs[i].hr_be.weight = 1;
		recs[i].hr_be.state = LB_BACKEND_ACTIVE;
		recs[i].hr_load.known = true;
		rp[i] = &recs[i];
	}
}

static void
step(uint64_t *now)
{
	uint64_t next = UINT64_MAX;

	mgr_load_step(&svc, rp, N, *now, &next);
	cr_assert_eq(next, *now + MGR_LOAD_STEP_MS, "the next step is one step away");
	*now += MGR_LOAD_STEP_MS;
}

Test(load, agent_counters_parsed)
{
	struct lb_counter c[] = {{"decap", 5}, {"be.7.act", 3}, {"be.7.new", 9}, {"be.7.fail", 2},
		{"be.12.act", 0}, {"be.12.new", 4}, {"be.12.fail", 0}, {"be.x.act", 1}};
	struct mgr_be_load v[4];
	uint32_t n = mgr_load_parse(c, sizeof(c) / sizeof(c[0]), v, 4);

	cr_assert_eq(n, 2);
	cr_assert(v[0].id == 7 && v[0].active == 3 && v[0].opened == 9 && v[0].failed == 2);
	cr_assert(v[1].id == 12 && v[1].active == 0 && v[1].opened == 4 && v[1].failed == 0);
	cr_assert_eq(mgr_load_parse(c, 8, v, 1), 1, "room for one: one");
}

Test(load, reports_recorded_then_forgotten)
{
	struct mgr_health h = {0};
	struct mgr_be_load v[2] = {{.id = 12, .active = 5, .opened = 9, .failed = 1},
		{.id = 10, .active = 2, .opened = 3}};

	pool(LB_BALANCE_LEAST_CONNECTIONS, false);
	recs[0].hr_load.known = recs[2].hr_load.known = false;
	h.h_recs = rp;
	h.h_n_recs = N;
	mgr_health_loads(&h, v, 2, false);
	cr_assert(recs[0].hr_load.known && recs[0].hr_load.active == 2 &&
		  recs[0].hr_load.opened == 3);
	cr_assert(recs[2].hr_load.known && recs[2].hr_load.active == 5 &&
		  recs[2].hr_load.failed == 1);
	mgr_health_loads(&h, v, 2, true);
	cr_assert(!recs[0].hr_load.known && !recs[2].hr_load.known, "the agent is gone: unknown");
	cr_assert(recs[1].hr_load.known, "another agent's backend is not touched");
}

Test(load, least_connections_steps_are_bounded)
{
	uint64_t now = 1000;
	uint32_t k;

	pool(LB_BALANCE_LEAST_CONNECTIONS, false);
	recs[0].hr_load.active = 16; /* mean 4 per weight: targets 5/17 and 5 */
	step(&now);
	cr_assert_eq(recs[0].hr_lc, MGR_LOAD_ONE / 2, "halved at most");
	cr_assert_eq(recs[1].hr_lc, MGR_LOAD_ONE * 2, "doubled at most");
	for (k = 0; k < 5; k++)
		step(&now);
	cr_assert_eq(recs[0].hr_lc, (uint32_t)(MGR_LOAD_ONE * 5.0 / 17 + 0.5), "settles");
	cr_assert_eq(recs[1].hr_lc, MGR_LOAD_ONE * 5, "settles");
	cr_assert_eq(mgr_load_weight(&recs[0], 1), 2, "1 x 8 x 0.29");
	cr_assert_eq(mgr_load_weight(&recs[1], 1), 40, "1 x 8 x 5");
	/* Load evens out: the factors go back to 1. */
	recs[0].hr_load.active = 4;
	recs[1].hr_load.active = recs[2].hr_load.active = recs[3].hr_load.active = 4;
	for (k = 0; k < 6; k++)
		step(&now);
	for (k = 0; k < N; k++)
		cr_assert_eq(recs[k].hr_lc, MGR_LOAD_ONE, "backend %u back to 1", k);
}

/* One step's connections: each backend opens n, backend 0 fails f of them. */
static void
traffic(uint64_t n, uint64_t f0, uint64_t f1)
{
	uint32_t i;

	for (i = 0; i < N; i++)
		recs[i].hr_load.opened += n;
	recs[0].hr_load.failed += f0;
	recs[1].hr_load.failed += f1;
}

Test(load, mitigation_floor_cap_and_recovery)
{
	uint64_t now = 1000;
	uint32_t k;

	pool(LB_BALANCE_WEIGHTED, true);
	step(&now); /* the first sample */
	for (k = 0; k < 5; k++) {
		traffic(10, 10, 0);
		step(&now);
	}
	cr_assert_eq(recs[0].hr_mit, MGR_MIT_FLOOR, "halved down to the floor, never below");
	cr_assert_eq(recs[1].hr_mit, MGR_LOAD_ONE, "a backend without failures is left alone");
	cr_assert_eq(mgr_load_weight(&recs[0], 1), 1, "the floor still takes connections");
	/* Three of four fail: only half the pool is mitigated. */
	recs[2].hr_load.failed = recs[3].hr_load.failed = 0;
	for (k = 0; k < 3; k++) {
		traffic(10, 10, 10);
		recs[2].hr_load.failed += 10;
		step(&now);
	}
	cr_assert(recs[1].hr_mit == MGR_LOAD_ONE && recs[2].hr_mit == MGR_LOAD_ONE,
		"three of four failing: the median is 100%%, nobody new is an outlier");
	cr_assert_eq(
		recs[0].hr_mit, MGR_MIT_FLOOR, "and the one mitigated, still failing, is held");
	/* Back to one failing, then it recovers: doubled per clean step. */
	for (k = 0; k < 5; k++) {
		traffic(10, 10, 0);
		step(&now);
	}
	cr_assert_eq(recs[0].hr_mit, MGR_MIT_FLOOR);
	for (k = 0; k < 2; k++) {
		traffic(2, 0, 0);
		step(&now);
	}
	cr_assert_eq(recs[0].hr_mit, MGR_MIT_FLOOR * 4, "doubled twice");
	/* A step without new connections says nothing: held. */
	step(&now);
	cr_assert_eq(recs[0].hr_mit, MGR_MIT_FLOOR * 4);
	for (k = 0; k < 2; k++) {
		traffic(2, 0, 0);
		step(&now);
	}
	cr_assert_eq(recs[0].hr_mit, MGR_LOAD_ONE, "restored");
}

Test(load, outlier_against_the_median)
{
	uint64_t now = 1000;

	pool(LB_BALANCE_WEIGHTED, true);
	step(&now);
	/* Rates 100%, 40%, 0%, 0%: each judged against the others' median. */
	traffic(10, 10, 4);
	step(&now);
	cr_assert_lt(recs[0].hr_mit, MGR_LOAD_ONE, "100%% against the others' 0%%: mitigated");
	cr_assert_eq(recs[1].hr_mit, MGR_LOAD_ONE, "40%% is under 50%%: not an outlier");
}

Test(load, a_pool_of_two)
{
	uint64_t now = 1000;
	struct mgr_hrec *two[2] = {&recs[0], &recs[1]};
	uint64_t next = UINT64_MAX;

	pool(LB_BALANCE_WEIGHTED, true);
	mgr_load_step(&svc, two, 2, now, &next);
	now += MGR_LOAD_STEP_MS;
	recs[0].hr_load.opened += 10;
	recs[0].hr_load.failed += 10;
	recs[1].hr_load.opened += 10;
	mgr_load_step(&svc, two, 2, now, &next);
	cr_assert_lt(recs[0].hr_mit, MGR_LOAD_ONE, "judged against the other one: mitigated");
	cr_assert_eq(recs[1].hr_mit, MGR_LOAD_ONE);
}

Test(load, restart_is_no_evidence)
{
	uint64_t now = 1000;

	pool(LB_BALANCE_WEIGHTED, true);
	recs[0].hr_load.opened = 100;
	recs[0].hr_load.failed = 50;
	step(&now);
	/* The agent restarted: failed back to 0, opened past its old value. */
	recs[0].hr_load.failed = 0;
	recs[0].hr_load.opened = 120;
	traffic(10, 0, 0);
	step(&now);
	cr_assert_eq(recs[0].hr_mit, MGR_LOAD_ONE, "a counter went back: no verdict");
}

Test(load, half_the_pool_at_most)
{
	uint64_t now = 1000;
	uint32_t k, held = 0;

	pool(LB_BALANCE_WEIGHTED, true);
	step(&now);
	/* Backend 0 fails first and is mitigated; then backend 1 fails as badly. */
	traffic(10, 10, 0);
	step(&now);
	recs[2].hr_load.opened += 10; /* and backend 2 stops reporting new connections */
	for (k = 0; k < 3; k++) {
		recs[0].hr_load.opened += 10;
		recs[0].hr_load.failed += 10;
		recs[1].hr_load.opened += 10;
		recs[1].hr_load.failed += 10;
		recs[3].hr_load.opened += 10;
		step(&now);
	}
	for (k = 0; k < N; k++)
		held += recs[k].hr_mit < MGR_LOAD_ONE;
	cr_assert_leq(held, N / 2, "never more than half of the pool: %u", held);
	cr_assert_lt(recs[0].hr_mit, MGR_LOAD_ONE);
}

/*
 * An option switched off leaves its factor neutral, not where its last
 * step left it (a backend stayed mitigated for good once mitigate was
 * off, with its why still saying so).
 */
Test(load, a_factor_whose_option_is_off_is_neutral)
{
	uint64_t now = 1000;
	uint32_t k;

	pool(LB_BALANCE_LEAST_CONNECTIONS, true);
	step(&now);
	for (k = 0; k < 5; k++) {
		traffic(10, 10, 0);
		step(&now);
	}
	cr_assert_eq(recs[0].hr_mit, MGR_MIT_FLOOR);
	svc.hs_mitigate = false;
	step(&now);
	cr_assert_eq(recs[0].hr_mit, MGR_LOAD_ONE, "mitigate off: its factor is 1");

	recs[0].hr_load.active = 16;
	step(&now);
	cr_assert_eq(recs[0].hr_lc, MGR_LOAD_ONE / 2);
	svc.hs_balance = LB_BALANCE_WEIGHTED;
	svc.hs_mitigate = true; /* still steered, by mitigation alone */
	step(&now);
	cr_assert_eq(recs[0].hr_lc, MGR_LOAD_ONE, "least_connections off: its factor is 1");
}

/*
 * A backend that refuses every connection holds none: least connections
 * alone would give it x8 and undo mitigation's x1/8 (it got the most new
 * flows of the pool). Mitigated, it gets no boost.
 */
Test(load, a_mitigated_backend_gets_no_least_connections_boost)
{
	uint64_t now = 1000;
	uint32_t k;

	pool(LB_BALANCE_LEAST_CONNECTIONS, true);
	for (k = 1; k < N; k++)
		recs[k].hr_load.active = 50;
	step(&now);
	for (k = 0; k < 6; k++) {
		traffic(10, 10, 0);
		step(&now);
	}
	cr_assert_eq(recs[0].hr_mit, MGR_MIT_FLOOR);
	cr_assert_leq(recs[0].hr_lc, MGR_LOAD_ONE, "no boost: %u", recs[0].hr_lc);
	cr_assert_lt(mgr_load_weight(&recs[0], 1), mgr_load_weight(&recs[1], 1),
		"the failing backend below a busy, working one: %lu against %lu",
		(unsigned long)mgr_load_weight(&recs[0], 1),
		(unsigned long)mgr_load_weight(&recs[1], 1));
}

/*
 * A backend in slow start ramps as health makes it: least connections
 * neither judges it (its few connections are the ramp's doing) nor
 * steers it, and takes it up once the ramp is over.
 */
Test(load, a_ramping_backend_is_not_steered)
{
	uint64_t now = 1000;
	uint32_t k;

	pool(LB_BALANCE_LEAST_CONNECTIONS, false);
	svc.hs_pool.pl_slow_start_s = 60;
	recs[3].hr_ss_start = now;
	for (k = 0; k < 3; k++)
		recs[k].hr_load.active = 50;
	for (k = 0; k < 5; k++)
		step(&now);
	cr_assert_eq(recs[3].hr_lc, MGR_LOAD_ONE, "ramping: not steered");
	for (k = 0; k < 3; k++)
		cr_assert_eq(recs[k].hr_lc, MGR_LOAD_ONE, "the others, judged alone, alike");
	now = recs[3].hr_ss_start + 60000;
	step(&now);
	cr_assert_gt(recs[3].hr_lc, MGR_LOAD_ONE, "the ramp over: least connections takes it up");
}

/*
 * A backend its agent stops reporting (moved to another host, or no
 * longer served there) while the agent stays connected: its load is
 * unknown from that STATUS on, not its last report kept for good (least
 * connections went on steering it by a count frozen in time).
 */
Test(load, a_backend_no_longer_reported_is_unknown)
{
	struct mgr_health h = {0};
	struct mgr_be_load prev[3] = {
		{.id = 10, .active = 5}, {.id = 11, .active = 7}, {.id = 12, .active = 9}};
	struct mgr_be_load cur[2] = {{.id = 10, .active = 6}, {.id = 12, .active = 8}};
	struct mgr_be_load gone[3];
	uint32_t n;

	pool(LB_BALANCE_LEAST_CONNECTIONS, false);
	h.h_recs = rp;
	h.h_n_recs = N;
	mgr_health_loads(&h, prev, 3, false);
	cr_assert(recs[1].hr_load.known && recs[1].hr_load.active == 7);
	n = mgr_load_dropped(prev, 3, cur, 2, gone);
	cr_assert(n == 1 && gone[0].id == 11, "11 dropped: %u", n);
	mgr_health_loads(&h, gone, n, true);
	mgr_health_loads(&h, cur, 2, false);
	cr_assert(!recs[1].hr_load.known, "no longer reported: unknown");
	cr_assert(recs[0].hr_load.known && recs[0].hr_load.active == 6);
	cr_assert(recs[2].hr_load.known && recs[2].hr_load.active == 8);
	cr_assert_eq(mgr_load_dropped(cur, 2, cur, 2, gone), 0, "the same report drops none");
	cr_assert_eq(mgr_load_dropped(prev, 3, NULL, 0, gone), 3, "the agent gone: all");
}
