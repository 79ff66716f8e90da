/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * withdraw_below on a test clock (test_health_util.h): the VIP withdrawn
 * when every service of it that sets the rule is below it, a VIP judged by
 * its whole address, and per zone when a service keeps to its zone.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_health_util.h"

TestSuite(withdraw, .init = setup, .fini = teardown);

/* d's service 0 again on port 443 (the same backends): a VIP with two services. */
static void
second_port(struct lb_ftable *d)
{
	struct lb_service_cfg *s = realloc(d->services, 2 * sizeof(*s));

	cr_assert_not_null(s);
	d->services = s;
	s[1] = s[0];
	s[1].port = 443;
	s[1].backends = calloc(s[0].n_backends, sizeof(*s[1].backends));
	memcpy(s[1].backends, s[0].backends, s[0].n_backends * sizeof(*s[1].backends));
	d->n_services = 2;
	lb_ftable_sort(d);
}

static void
set_withdraw(struct mgr_pools *ps, uint16_t p, uint32_t below)
{
	struct mgr_pool pl = *mgr_pool_defaults();
	struct lb_svc_key k;

	lb_svc_key_v4(&k, htonl(0x0a00000au), htons(p), LB_IPPROTO_TCP);
	pl.pl_interval_s = 1;
	pl.pl_timeout_s = 1;
	pl.pl_healthy = 2;
	pl.pl_unhealthy = 2;
	pl.pl_min_healthy = 0;
	pl.pl_withdraw_below = below;
	cr_assert_eq(mgr_pools_set(ps, &k, &pl), 0);
}

/* The effective table's withdrawn flags: "80 443" as 0/1 each. */
static void
withdrawn(struct mgr_health *h, const struct lb_ftable *d, uint64_t now, int w80, int w443)
{
	struct lb_ftable out = {0};
	uint64_t nx;

	cr_assert_eq(mgr_health_effective(h, d, now, &out, &nx), 0);
	cr_assert_eq(out.n_services, 2);
	cr_assert_eq(out.services[0].port, 80);
	cr_expect_eq(out.services[0].withdrawn, w80, "port 80 withdrawn %d", w80);
	cr_expect_eq(out.services[1].withdrawn, w443, "port 443 withdrawn %d", w443);
	cr_expect_eq(out.n_drained, 1, "the drained muxes are the desired table's");
	cr_expect(lb_ftable_drained(&out, "mux1"));
	lb_ftable_free(&out);
}

Test(withdraw, withdraw_below_withdraws_the_vip_when_every_voter_is_below)
{
	struct lb_svc_key k = key();
	struct mgr_sview sv;
	uint64_t t = T0 + 1100;

	up(2); /* 1 and 2 healthy, 3 unhealthy */
	table(&d, 3, NULL);
	second_port(&d);
	cr_assert_eq(lb_ftable_set_drained(&d, "mux1", true), 1);
	set_withdraw(&ps, 80, 2);
	first_rounds(h, &d, &ps);
	withdrawn(h, &d, t, 0, 0); /* 2 healthy, not below 2 */

	mgr_pools_free(&ps);
	set_withdraw(&ps, 80, 3); /* 2 < 3; 443 sets none: it does not vote */
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &d, false, t), 0);
	withdrawn(h, &d, t, 1, 1);
	mgr_health_service(h, &k, t + 500, &sv);
	cr_assert(sv.sv_below_withdraw && sv.sv_withdrawn && sv.sv_withdrawn_ms == 500,
		"below %d withdrawn %d for %" PRIu64 " ms", sv.sv_below_withdraw, sv.sv_withdrawn,
		sv.sv_withdrawn_ms);

	set_withdraw(&ps, 443, 1); /* 443 votes and still serves: the VIP stays */
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &d, false, t + 1), 0);
	withdrawn(h, &d, t + 1, 0, 0);
	mgr_health_service(h, &k, t + 1, &sv);
	cr_assert(sv.sv_below_withdraw && !sv.sv_withdrawn);

	set_withdraw(&ps, 443, 3); /* both below */
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &d, false, t + 2), 0);
	withdrawn(h, &d, t + 2, 1, 1);
}

/*
 * Two IPv6 VIPs of one /32 (2001:db8::10 and ::20, port 80 each): a VIP is
 * its whole address, so ::10 below its withdraw_below is withdrawn alone,
 * and ::20, which sets none, stays announced. Unprobed (the backends are
 * the IPv4 listeners): each counts its 3 registered backends healthy.
 */
Test(withdraw, withdraw_below_judges_each_ipv6_vip_alone)
{
	struct mgr_pool pl = *mgr_pool_defaults();
	struct lb_ftable out = {0};
	struct lb_svc_key k;
	uint64_t nx;
	int i;

	table(&d, 3, NULL);
	second_port(&d);
	for (i = 0; i < 2; i++) {
		struct lb_service_cfg *s = &d.services[i];

		memset(&s->vip, 0, sizeof(s->vip));
		s->vip.a8[0] = 0x20, s->vip.a8[1] = 0x01, s->vip.a8[2] = 0x0d, s->vip.a8[3] = 0xb8;
		s->vip.a8[15] = (uint8_t)(0x10 * (i + 1));
		s->af = LB_AF_INET6;
		s->port = 80;
	}
	lb_ftable_sort(&d);
	cr_assert_eq(d.services[0].vip.a8[15], 0x10);
	pl.pl_probe = LB_PROBE_NONE;
	pl.pl_min_healthy = 0;
	for (i = 0; i < 2; i++) {
		lb_svc_key_make(&k, LB_AF_INET6, &d.services[i].vip, htons(80), LB_IPPROTO_TCP);
		pl.pl_withdraw_below = i == 0 ? 4 : 0; /* ::10: 3 healthy is below 4 */
		cr_assert_eq(mgr_pools_set(&ps, &k, &pl), 0);
	}
	first_rounds(h, &d, &ps);
	cr_assert_eq(mgr_health_effective(h, &d, T0 + 1100, &out, &nx), 0);
	cr_assert_eq(out.n_services, 2);
	cr_expect_eq(out.services[0].withdrawn, 1, "2001:db8::10 is below: withdrawn");
	cr_expect_eq(out.services[1].withdrawn, 0, "2001:db8::20 sets no rule: announced");
	lb_ftable_free(&out);
}

/* The effective table's per-zone withdrawal of service 0: its zones, space-separated. */
static void
wzones(struct mgr_health *h, const struct lb_ftable *d, uint64_t now, int whole, const char *want)
{
	struct lb_ftable out = {0};
	char got[LB_WZONES * LB_ZONE_LEN] = "";
	uint64_t nx;
	uint32_t i;

	cr_assert_eq(mgr_health_effective(h, d, now, &out, &nx), 0);
	for (i = 0; i < out.services[0].n_wzones; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
			out.services[0].wzones[i]);
	cr_expect_eq(out.services[0].withdrawn, whole, "withdrawn everywhere: %d, want %d",
		out.services[0].withdrawn, whole);
	cr_expect_str_eq(got, want, "withdrawn in zones \"%s\", want \"%s\"", got, want);
	lb_ftable_free(&out);
}

Test(withdraw, withdraw_below_per_zone)
{
	down(1);
	up(3); /* zone a: 1 and 2, both unhealthy; zone b: 3, healthy */
	table(&d, 3, NULL);
	zones_ab(&d);
	set_withdraw(&ps, 80, 1);
	first_rounds(h, &d, &ps);
	wzones(h, &d, T0 + 1100, 0, ""); /* cross_zone on: 1 healthy of 3, not below 1 */
	d.services[0].choice.zonal = 1;
	wzones(h, &d, T0 + 1100, 0, "a"); /* zone a has none healthy: its muxes withdraw */
	{
		struct lb_ftable out = {0};
		char err[256];
		uint64_t nx;

		cr_assert_eq(mgr_health_effective(h, &d, T0 + 1100, &out, &nx), 0);
		cr_assert_eq(lb_ftable_validate(&out, err, sizeof(err)), 0, "%s", err);
		lb_ftable_free(&out);
	}
	down(3);
	drive(h, T0 + 2010);
	drive(h, T0 + 3010);		 /* no zone has a healthy backend */
	wzones(h, &d, T0 + 3100, 0, ""); /* every zone below: announced everywhere */
	d.services[0].choice.zonal = 0;
	wzones(h, &d, T0 + 3100, 1, ""); /* over the pool: withdrawn from every mux */
}

/*
 * A restart after a pool failed open: the members run every backend active
 * and the VIP withdrawn (1 of 3 healthy, min_healthy and withdraw_below 2).
 * Health taken from that table would call all three healthy and announce the
 * VIP: it stays withdrawn until each backend has a verdict, and then it is
 * withdrawn by their verdicts.
 */
Test(withdraw, a_restart_keeps_a_vip_withdrawn_until_its_backends_speak)
{
	struct mgr_pool pl = *mgr_pool_defaults();
	struct lb_ftable c, out = {0};
	struct lb_svc_key k = key();
	uint8_t a[LB_DIGEST_LEN], b[LB_DIGEST_LEN];
	uint64_t next;

	table(&d, 3, NULL); /* only 1 listens */
	table(&c, 3, NULL);
	c.services[0].withdrawn = 1;
	pl.pl_interval_s = 1;
	pl.pl_timeout_s = 1;
	pl.pl_min_healthy = 2;
	pl.pl_withdraw_below = 2;
	cr_assert_eq(mgr_pools_set(&ps, &k, &pl), 0);
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &c, true, T0), 0);
	cr_assert_eq(mgr_health_effective(h, &d, T0, &out, &next), 0);
	lb_ftable_digest(&out, a);
	lb_ftable_digest(&c, b);
	cr_assert_eq(memcmp(a, b, LB_DIGEST_LEN), 0,
		"the effective table is the committed one (withdrawn %d)",
		out.services[0].withdrawn);
	lb_ftable_free(&out);

	drive(h, T0 + 10); /* one failure each of 2 and 3: not yet unhealthy */
	cr_assert_eq(mgr_health_effective(h, &d, T0 + 10, &out, &next), 0);
	cr_assert_eq(out.services[0].withdrawn, 1, "still withdrawn: nothing is settled yet");
	lb_ftable_free(&out);
	drive(h, T0 + 1010); /* 2 and 3 unhealthy: 1 of 3 */
	cr_assert_eq(mgr_health_effective(h, &d, T0 + 1010, &out, &next), 0);
	cr_assert_eq(out.services[0].withdrawn, 1, "withdrawn by the verdicts now");
	lb_ftable_free(&out);

	lb_ftable_free(&c);
}

/*
 * The fixture's manager restarted at T0 over three backends (1 down) that
 * the members run all active (c), as a pool failing open runs them:
 * `unhealthy` failures make a backend unhealthy, one healthy backend keeps
 * the pool from failing open.
 */
static void
restarted_over_all_active(struct lb_ftable *c, uint8_t unhealthy)
{
	struct mgr_pool pl = *mgr_pool_defaults();
	struct lb_svc_key k = key();

	down(1);
	table(&d, 3, NULL);
	table(c, 3, NULL);
	pl.pl_interval_s = 1;
	pl.pl_timeout_s = 1;
	pl.pl_unhealthy = unhealthy;
	pl.pl_min_healthy = 1;
	cr_assert_eq(mgr_pools_set(&ps, &k, &pl), 0);
	cr_assert_eq(mgr_health_sync(h, &d, &ps, c, true, T0), 0);
}

/*
 * Every backend down, the pool failing open: the members run all three
 * active. After a restart the verdicts come one by one (first probes 1 ms
 * apart, then every interval); each backend found unhealthy stays as it
 * ran until the whole pool has settled, rather than going to maint while
 * the others still count as healthy (maint, then two in maint, then all
 * active again: connections moved twice by a restart alone). With 2
 * failures to fall, a first failure settles nothing.
 */
Test(withdraw, a_restart_takes_no_backend_of_a_failed_open_pool_out_one_by_one)
{
	uint8_t unhealthy;

	for (unhealthy = 1; unhealthy <= 2; unhealthy++) {
		struct lb_ftable c;
		int i, b;

		restarted_over_all_active(&c, unhealthy);
		for (i = 0; i < 3 * unhealthy; i++) {
			uint64_t t = T0 + (uint64_t)(i / 3) * 1000 + (uint64_t)(i % 3);

			drive(h, t);
			for (b = 1; b <= 3; b++)
				cr_assert_eq(eff(h, &d, t, b, NULL, NULL), LB_BACKEND_ACTIVE,
					"unhealthy=%u: backend %d at +%" PRIu64 " ms", unhealthy, b,
					t - T0);
		}
		cr_assert_str_neq(health_of(h, 1, T0 + 2), "healthy", "each was found down");
		lb_ftable_free(&c);
		fixture_again(); /* the next restart from scratch */
	}
}

/*
 * The same restart with backend 3 alive, 2 failures to fall: the hold
 * ends when the last backend's health is settled (backend 2's second
 * failure), and the dead ones then go to maint (the pool is not below
 * its minimum).
 */
Test(withdraw, a_restart_hold_ends_when_the_pool_has_settled)
{
	struct lb_ftable c;
	struct lb_svc_key k = key();
	struct mgr_hview v;
	struct lb_addr a;

	up(3);
	restarted_over_all_active(&c, 2);
	drive(h, T0 + 2); /* one failure of 1 and of 2, 3 confirmed healthy */
	cr_assert_eq(eff(h, &d, T0 + 2, 1, NULL, NULL), LB_BACKEND_ACTIVE);
	drive(h, T0 + 1000); /* 1 unhealthy, settled; 2 not yet */
	cr_assert_eq(eff(h, &d, T0 + 1000, 1, NULL, NULL), LB_BACKEND_ACTIVE, "held");
	lb_addr_v4(&a, be_ip(1));
	mgr_health_backend(h, &k, &a, port, T0 + 1000, &v);
	cr_assert(strstr(v.hv_why, "kept as it ran") != NULL, "why: %s", v.hv_why);
	cr_assert(drive_changed(h, T0 + 1001), "2's second failure settles the pool");
	cr_assert_eq(eff(h, &d, T0 + 1001, 1, NULL, NULL), LB_BACKEND_MAINT);
	cr_assert_eq(eff(h, &d, T0 + 1001, 2, NULL, NULL), LB_BACKEND_MAINT);
	cr_assert_eq(eff(h, &d, T0 + 1001, 3, NULL, NULL), LB_BACKEND_ACTIVE);
	lb_ftable_free(&c);
}
