/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The muxes' flow counters as the manager turns them into rates
 * (manager/core/mgr_stats.c): a rate over a span of one to two windows,
 * sums over the muxes asked for, a counter that goes back starting over,
 * flows reported in windows round and round, and those a mux stopped
 * reporting dropped after two whole rounds.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_hdr.h"
#include "mgr_commit.h"
#include "mgr_stats.h"

static struct lb_flow_count
flow(const char *vip, uint16_t port, const char *dip, uint16_t dip_port)
{
	struct lb_flow_count f;
	struct in_addr a;

	memset(&f, 0, sizeof(f));
	inet_pton(AF_INET, vip, &a);
	lb_addr_v4(&f.vip, a.s_addr);
	f.port = port;
	f.proto = LB_IPPROTO_TCP;
	if (dip != NULL) {
		inet_pton(AF_INET, dip, &a);
		lb_addr_v4(&f.dip, a.s_addr);
		f.dip_port = dip_port;
	}
	return f;
}

/* Member m reports f with these counters at now (its only flow). */
static void
report(struct mgr_stats *st, int m, struct lb_flow_count f, uint64_t pkts, uint64_t now)
{
	f.pkts = pkts;
	f.bytes = pkts * 100;
	f.new_conns = pkts / 10;
	cr_assert_eq(mgr_stats_status(st, m, &f, 1, 0, 1, now), 0);
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-6 * ((b) + 1))

Test(stats, rate_over_a_window)
{
	struct mgr_stats *st = mgr_stats_new();
	struct lb_flow_count a = flow("192.0.2.10", 80, NULL, 0);
	struct mgr_rate r;
	uint64_t t;

	cr_assert_not_null(st);
	/* 1000 packets a second, a heartbeat a second */
	for (t = 0; t <= 6000; t += 1000)
		report(st, 0, a, t, 1000 + t);
	cr_assert(mgr_stats_rate(st, 0, &a, &r));
	cr_expect(NEAR(r.pps, 1000), "pps %f", r.pps);
	cr_expect(NEAR(r.bps, 800000), "bps %f", r.bps);
	cr_expect(NEAR(r.cps, 100), "cps %f", r.cps);
	/* the traffic stops: the rate falls to 0 within two windows */
	for (t = 7000; t <= 17000; t += 1000)
		report(st, 0, a, 6000, 1000 + t);
	cr_assert(mgr_stats_rate(st, 0, &a, &r));
	cr_expect_eq(r.pps, 0, "pps %f", r.pps);
	mgr_stats_free(st);
}

Test(stats, first_sample_has_no_rate_and_a_reset_starts_over)
{
	struct mgr_stats *st = mgr_stats_new();
	struct lb_flow_count a = flow("192.0.2.10", 80, NULL, 0);
	struct mgr_rate r;

	report(st, 0, a, 5000, 1000);
	cr_assert(mgr_stats_rate(st, 0, &a, &r));
	cr_expect_eq(r.pps, 0);
	report(st, 0, a, 7000, 2000);
	cr_assert(mgr_stats_rate(st, 0, &a, &r));
	cr_expect(NEAR(r.pps, 2000), "pps %f", r.pps);
	/* the mux restarted: its counter went back to 10 */
	report(st, 0, a, 10, 3000);
	cr_assert(mgr_stats_rate(st, 0, &a, &r));
	cr_expect_eq(r.pps, 0, "no rate across a reset: %f", r.pps);
	report(st, 0, a, 1010, 4000);
	cr_assert(mgr_stats_rate(st, 0, &a, &r));
	cr_expect(NEAR(r.pps, 1000), "pps %f", r.pps);
	mgr_stats_free(st);
}

Test(stats, sums_over_the_members_asked_for)
{
	struct mgr_stats *st = mgr_stats_new();
	struct lb_flow_count svc = flow("192.0.2.10", 80, NULL, 0);
	struct lb_flow_count be1 = flow("192.0.2.10", 80, "10.1.1.11", 8080);
	struct lb_flow_count be2 = flow("192.0.2.10", 80, "10.1.1.12", 8080);
	struct lb_flow_count other = flow("192.0.2.9", 443, NULL, 0);
	struct lb_flow_count f[4];
	bool in[MGR_MAX_MEMBERS] = {false};
	struct mgr_flow_sum *s;
	uint64_t t;
	int n;

	for (t = 0; t <= 2000; t += 1000) {
		/* mux 0: 1000 pps on the service (be1 600, be2 400); mux 1 half that */
		uint32_t m;

		for (m = 0; m < 2; m++) {
			f[0] = be2, f[1] = svc, f[2] = be1, f[3] = other;
			f[0].pkts = t * 400 / 1000 / (m + 1);
			f[1].pkts = t / (m + 1);
			f[2].pkts = t * 600 / 1000 / (m + 1);
			f[3].pkts = 7;
			cr_assert_eq(mgr_stats_status(st, (int)m, f, 4, 0, 4, t), 0);
		}
	}
	cr_expect_eq(mgr_stats_count(st, 0), 4);
	in[0] = in[1] = true;
	n = mgr_stats_sum(st, in, &s);
	cr_assert_eq(n, 4);
	/* sorted: 192.0.2.9 first; a service before its backends, by DIP */
	cr_expect_eq(s[0].f.port, 443);
	cr_expect_eq(s[1].f.dip_port, 0);
	cr_expect_eq(memcmp(&s[2].f.dip, &be1.dip, sizeof(be1.dip)), 0);
	cr_expect_eq(memcmp(&s[3].f.dip, &be2.dip, sizeof(be2.dip)), 0);
	cr_expect(NEAR(s[1].rate.pps, 1500), "service pps %f", s[1].rate.pps);
	cr_expect(NEAR(s[2].rate.pps, 900), "be1 pps %f", s[2].rate.pps);
	cr_expect_eq(s[1].f.pkts, 2000 + 1000, "packets summed: %lu", (unsigned long)s[1].f.pkts);
	cr_expect_eq(s[1].members, 2);
	free(s);
	/* mux 1 left out */
	in[1] = false;
	n = mgr_stats_sum(st, in, &s);
	cr_assert_eq(n, 4);
	cr_expect(NEAR(s[1].rate.pps, 1000), "pps %f", s[1].rate.pps);
	cr_expect_eq(s[1].members, 1);
	free(s);
	/* forgotten: nothing */
	mgr_stats_forget(st, 0);
	n = mgr_stats_sum(st, in, &s);
	cr_expect_eq(n, 0);
	cr_expect_null(s);
	mgr_stats_free(st);
}

Test(stats, windows_round_and_round)
{
	struct mgr_stats *st = mgr_stats_new();
	struct lb_flow_count f[6];
	uint32_t i;
	uint64_t t = 0;

	for (i = 0; i < 6; i++)
		f[i] = flow("192.0.2.10", (uint16_t)(80 + i), NULL, 0);
	/* six flows, two per STATUS */
	for (i = 0; i < 6; i += 2)
		cr_assert_eq(mgr_stats_status(st, 3, &f[i], 2, i, 6, t += 1000), 0);
	cr_expect_eq(mgr_stats_count(st, 3), 6);
	/* the mux drops the last two: it has four now, still two per STATUS */
	for (i = 0; i < 4; i += 2)
		cr_assert_eq(mgr_stats_status(st, 3, &f[i], 2, i, 4, t += 1000), 0);
	cr_expect_eq(mgr_stats_count(st, 3), 6, "kept for one whole round more");
	for (i = 0; i < 4; i += 2)
		cr_assert_eq(mgr_stats_status(st, 3, &f[i], 2, i, 4, t += 1000), 0);
	cr_expect_eq(mgr_stats_count(st, 3), 4, "gone after two rounds without them");
	mgr_stats_free(st);
}

Test(stats, many_flows_grow_the_table)
{
	struct mgr_stats *st = mgr_stats_new();
	struct lb_flow_count *f = calloc(5000, sizeof(*f));
	struct mgr_rate r;
	uint32_t i;

	for (i = 0; i < 5000; i++) {
		f[i] = flow("192.0.2.10", 80, "10.0.0.1", 1);
		f[i].dip.a32[0] = htonl(0x0a000000u + i);
		f[i].pkts = i;
	}
	cr_assert_eq(mgr_stats_status(st, 0, f, 5000, 0, 5000, 1000), 0);
	cr_expect_eq(mgr_stats_count(st, 0), 5000);
	for (i = 0; i < 5000; i++)
		f[i].pkts += 2 * i;
	cr_assert_eq(mgr_stats_status(st, 0, f, 5000, 0, 5000, 2000), 0);
	cr_assert(mgr_stats_rate(st, 0, &f[4999], &r));
	cr_expect(NEAR(r.pps, 2 * 4999), "pps %f", r.pps);
	free(f);
	mgr_stats_free(st);
}
