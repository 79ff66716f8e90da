/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DIP health and the effective table, on a test clock: real probes of
 * real loopback listeners (127.0.88.x), but the time the manager believes
 * in is the test's, so thresholds, draining and slow-start steps are
 * checked at exact instants.
 *
 *   rise and fall: initial -> healthy on the first success; unhealthy after
 *   2 failures; healthy again after 2 successes; the effective state follows
 *   fail-open: below the count or the percent every registered backend is active
 *   slow start: a tenth of the weight, ten steps, the pool's weights x10 meanwhile
 *   draining: a deleted backend drains for the delay then goes; admin drain stays
 *   restart: health taken from the committed table, nothing changes, a
 *   drain rebuilt from it keeps its weight
 *   (withdraw_below: test_withdraw.c)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lb_maglev.h"
#include "test_health_util.h"

TestSuite(health, .init = setup, .fini = teardown);

/*
 * Every socket the prober may use is busy (a cap of 1): the probe of
 * 127.0.88.0 hangs (its listener's accept queue is full, so its SYN gets
 * no answer), and the start of 127.0.88.1, first in the heap, has to wait.
 * The hung probe's deadline, behind that start, must still come and free
 * the socket.
 */
Test(health, a_start_waiting_for_a_socket_lets_deadlines_through)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct mgr_dip_probe_stats st;
	struct lb_backend_cfg *b;
	struct lb_svc_key k = key();
	struct mgr_hview v;
	struct pollfd pfd = {.fd = mgr_dip_prober_fd(prober), .events = POLLIN};
	struct lb_addr a;
	int hole, fill, i;

	sa.sin_addr.s_addr = be_ip(0);
	hole = socket(AF_INET, SOCK_STREAM, 0);
	fill = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(hole >= 0 && fill >= 0);
	cr_assert_eq(
		bind(hole, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(hole, 0), 0);
	cr_assert_eq(connect(fill, (struct sockaddr *)&sa, sizeof(sa)), 0, "the queue's one place");
	table(&d, 1, NULL);
	b = &d.services[0].backends[d.services[0].n_backends++];
	*b = d.services[0].backends[0];
	lb_addr_v4(&b->dip, be_ip(0));
	b->id = 0;
	lb_ftable_sort(&d); /* 127.0.88.0 first: its probe starts first */
	pools(&ps, 0, 0, 0, 3);
	mgr_dip_prober_set_cap(prober, 1);
	first_table(h, &d, &ps);

	/* 127.0.88.1 answers in these 100 ms if it started; 127.0.88.0 never does. */
	for (i = 0; i < 10; i++) {
		mgr_dip_prober_tick(prober, h, T0 + 10 + 10 * (uint64_t)i);
		poll(&pfd, 1, 10);
		mgr_dip_prober_io(prober, h, T0 + 10 + 10 * (uint64_t)i);
	}
	mgr_dip_prober_stats(prober, &st);
	cr_assert_eq(st.ps_in_flight, 1, "127.0.88.0's probe hangs");
	/* 127.0.88.1's next start is due before that probe's deadline, and waits. */
	mgr_dip_prober_tick(prober, h, T0 + 2000);
	lb_addr_v4(&a, be_ip(0));
	mgr_health_backend(h, &k, &a, port, T0 + 2000, &v);
	cr_assert(strstr(v.hv_last_failure, "timeout") != NULL,
		"the hung probe's deadline came: 127.0.88.0's last failure \"%s\"",
		v.hv_last_failure);

	close(fill);
	close(hole);
}

/*
 * A new backend holds the next round for its first probe; if its pool stops
 * probing before that probe ends, no probe is coming and no round waits.
 */
Test(health, a_pool_unprobed_before_the_first_verdict_holds_no_round)
{
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_svc_key k = key();

	table(&d, 1, NULL);
	pools(&ps, 0, 0, 0, 3);
	first_table(h, &d, &ps);
	cr_assert_eq(mgr_health_hold(h, T0), T0 + 1000, "the first probe is awaited");
	p.pl_probe = LB_PROBE_NONE; /* the same pool, probes off */
	cr_assert_eq(mgr_pools_set(&ps, &k, &p), 0);
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &d, false, T0 + 1), 0);
	cr_assert_eq(mgr_health_hold(h, T0 + 1), 0, "unprobed: nothing to wait for");
}

/*
 * A new backend that never answers goes from initial to unhealthy at its
 * second failure: no traffic either way, but the effective table is made
 * again (its reasons, the pool's fail-open verdict and its log).
 */
Test(health, a_new_backend_found_unhealthy_refreshes_the_table)
{
	table(&d, 3, NULL); /* 3 never listens */
	pools(&ps, 0, 0, 0, 3);
	first_table(h, &d, &ps);
	drive(h, T0 + 10);
	cr_assert_str_eq(health_of(h, 3, T0 + 10), "initial", "one failure of two");
	cr_assert(drive_changed(h, T0 + 1010), "the second one is news");
	cr_assert_str_neq(health_of(h, 3, T0 + 1010), "initial");
}

Test(health, rise_and_fall)
{
	up(2); /* 1 and 2 listen, 3 does not */
	table(&d, 3, NULL);
	pools(&ps, 0, 0, 0, 3); /* no fail-open: health alone decides */
	first_table(h, &d, &ps);
	cr_assert_eq(mgr_health_hold(h, T0), T0 + 1000, "a round waits for first probes");
	cr_assert_eq(eff(h, &d, T0, 1, NULL, NULL), LB_BACKEND_MAINT, "initial: no traffic yet");
	drive(h, T0 + 10); /* first probes, 1 ms apart */
	cr_assert_eq(mgr_health_hold(h, T0 + 10), 0, "every first verdict is in");
	cr_assert_str_eq(health_of(h, 1, T0 + 10), "healthy", "one success is enough at first");
	cr_assert_str_eq(health_of(h, 3, T0 + 10), "initial");
	cr_assert_eq(eff(h, &d, T0 + 10, 1, NULL, NULL), LB_BACKEND_ACTIVE);
	cr_assert_eq(eff(h, &d, T0 + 10, 3, NULL, NULL), LB_BACKEND_MAINT);
	drive(h, T0 + 1010);
	cr_assert_str_eq(health_of(h, 3, T0 + 1010), "connect: connection refused");

	down(2);
	drive(h, T0 + 2010);
	cr_assert_str_eq(health_of(h, 2, T0 + 2010), "healthy", "one failure is not enough");
	cr_assert_eq(eff(h, &d, T0 + 2010, 2, NULL, NULL), LB_BACKEND_ACTIVE);
	drive(h, T0 + 3010);
	cr_assert_str_eq(health_of(h, 2, T0 + 3010), "connect: connection refused");
	cr_assert_eq(eff(h, &d, T0 + 3010, 2, NULL, NULL), LB_BACKEND_MAINT, "two are");

	up(2);
	drive(h, T0 + 4010);
	cr_assert_eq(eff(h, &d, T0 + 4010, 2, NULL, NULL), LB_BACKEND_MAINT,
		"one success does not bring it back");
	drive(h, T0 + 5010);
	cr_assert_str_eq(health_of(h, 2, T0 + 5010), "healthy");
	cr_assert_eq(eff(h, &d, T0 + 5010, 2, NULL, NULL), LB_BACKEND_ACTIVE, "two do");
}

Test(health, fail_open_by_count_and_percent)
{
	struct lb_svc_key k = key();
	struct mgr_sview sv;

	up(2);
	table(&d, 3, NULL);
	pools(&ps, 1, 0, 0, 3);
	first_table(h, &d, &ps);
	cr_assert_eq(eff(h, &d, T0, 3, NULL, NULL), LB_BACKEND_ACTIVE,
		"a new pool, none healthy yet (0 < 1): open");
	drive(h, T0 + 10);
	drive(h, T0 + 1010); /* 1, 2 healthy; 3 unhealthy */
	cr_assert_eq(eff(h, &d, T0 + 1010, 3, NULL, NULL), LB_BACKEND_MAINT);
	mgr_health_service(h, &k, T0 + 1010, &sv);
	cr_assert(!sv.sv_fail_open && sv.sv_healthy == 2 && sv.sv_registered == 3);

	mgr_pools_free(&ps);
	pools(&ps, 3, 0, 0, 3); /* 2 healthy < 3 */
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &d, false, T0 + 1100), 0);
	cr_assert_eq(eff(h, &d, T0 + 1100, 3, NULL, NULL), LB_BACKEND_ACTIVE, "fails open");
	mgr_health_service(h, &k, T0 + 1100, &sv);
	cr_assert(sv.sv_fail_open);

	mgr_pools_free(&ps);
	pools(&ps, 0, 67, 0, 3); /* 2 of 3 = 66.7% < 67% */
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &d, false, T0 + 1200), 0);
	cr_assert_eq(eff(h, &d, T0 + 1200, 3, NULL, NULL), LB_BACKEND_ACTIVE);
	mgr_pools_free(&ps);
	pools(&ps, 0, 66, 0, 3); /* 66.7% >= 66% */
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &d, false, T0 + 1300), 0);
	cr_assert_eq(eff(h, &d, T0 + 1300, 3, NULL, NULL), LB_BACKEND_MAINT, "closed again");
	mgr_health_service(h, &k, T0 + 1300, &sv);
	cr_assert(!sv.sv_fail_open);
}

/*
 * cross_zone off: each zone against the minimum on its own; a zone with no
 * healthy backend does not fail open (its muxes send to the other zones);
 * with none healthy anywhere the pool fails open as without zones.
 */
Test(health, fail_open_per_zone)
{
	struct lb_svc_key k = key();
	struct mgr_sview sv;

	up(1);
	up(3);
	table(&d, 3, NULL);
	zones_ab(&d);
	pools(&ps, 2, 0, 0, 3);
	first_rounds(h, &d, &ps); /* 1 (zone a) and 3 (zone b) healthy; 2 (zone a) not */
	cr_assert_eq(eff(h, &d, T0 + 1010, 2, NULL, NULL), LB_BACKEND_MAINT,
		"over the pool, 2 healthy >= 2: closed");
	d.services[0].choice.zonal = 1;
	cr_assert_eq(eff(h, &d, T0 + 1010, 2, NULL, NULL), LB_BACKEND_ACTIVE,
		"zone a alone: 1 healthy < 2: it fails open");
	cr_assert_str_neq(health_of(h, 2, T0 + 1010), "healthy", "open, not healthy");
	mgr_health_service(h, &k, T0 + 1010, &sv);
	cr_assert(sv.sv_fail_open, "the service says a zone fails open");
	down(1);
	drive(h, T0 + 2010);
	drive(h, T0 + 3010); /* zone a: none healthy */
	cr_assert_eq(eff(h, &d, T0 + 3010, 1, NULL, NULL), LB_BACKEND_MAINT,
		"a zone with no healthy backend does not fail open: its muxes spill");
	cr_assert_eq(eff(h, &d, T0 + 3010, 3, NULL, NULL), LB_BACKEND_ACTIVE);
	down(3);
	drive(h, T0 + 4010);
	drive(h, T0 + 5010); /* no zone has a healthy backend */
	cr_assert_eq(eff(h, &d, T0 + 5010, 1, NULL, NULL), LB_BACKEND_ACTIVE,
		"none healthy anywhere: the pool fails open");
}

Test(health, slow_start_ramps_in_ten_steps)
{
	uint64_t x, next;
	uint32_t w, w1;
	int k;

	up(2);
	table(&d, 3, NULL);
	pools(&ps, 1, 0, 30, 3);
	first_rounds(h, &d, &ps);
	cr_assert_eq(eff(h, &d, T0 + 1010, 1, &w, NULL), LB_BACKEND_ACTIVE);
	cr_assert_eq(w, 1, "new backends do not ramp when none was serving yet");
	up(3);
	drive(h, T0 + 2010);
	drive(h, T0 + 3010); /* 3: unhealthy -> healthy after 2 successes */
	x = T0 + 3010;
	cr_assert_str_eq(health_of(h, 3, x), "healthy");
	cr_assert_eq(eff(h, &d, x, 3, &w, &next), LB_BACKEND_ACTIVE);
	cr_assert_eq(eff(h, &d, x, 1, &w1, NULL), LB_BACKEND_ACTIVE);
	cr_assert_eq(w, 1, "a tenth");
	cr_assert_eq(w1, 10, "the others x10 while a weight-1 backend ramps");
	cr_assert_eq(next, x + 3000, "the next step in 3 s");
	for (k = 1; k < 10; k++) {
		uint32_t want = (uint32_t)((10 * (10 + 9 * k) + 50) / 100);

		cr_assert_eq(eff(h, &d, x + (uint64_t)k * 3000, 3, &w, &next), LB_BACKEND_ACTIVE);
		cr_assert_eq(w, want, "step %d: weight %u, want %u", k, w, want);
		cr_assert_eq(next, x + (uint64_t)(k + 1) * 3000);
	}
	cr_assert_eq(eff(h, &d, x + 30000, 3, &w, &next), LB_BACKEND_ACTIVE);
	cr_assert_eq(eff(h, &d, x + 30000, 1, &w1, NULL), LB_BACKEND_ACTIVE);
	cr_assert(w == 1 && w1 == 1, "ramp over: back to the weights given (%u, %u)", w, w1);
	cr_assert_eq(next, UINT64_MAX);
}

/*
 * Weights 20000 and 10000 cannot be multiplied by 10 (65535 at most): while
 * a weight-5 backend ramps, they keep their 2:1, and it starts at 1.
 */
Test(health, slow_start_keeps_heavy_weights_apart)
{
	uint32_t w1, w2, w3;
	uint64_t x;

	up(2);
	table(&d, 3, NULL);
	d.services[0].backends[0].weight = 20000;
	d.services[0].backends[1].weight = 10000;
	d.services[0].backends[2].weight = 5;
	pools(&ps, 1, 0, 30, 3);
	first_rounds(h, &d, &ps);
	cr_assert_eq(eff(h, &d, T0 + 1010, 1, NULL, NULL), LB_BACKEND_ACTIVE, "1 and 2 serve");
	up(3);
	drive(h, T0 + 2010);
	drive(h, T0 + 3010); /* 3: unhealthy -> healthy after 2 successes: it ramps */
	x = T0 + 3010;
	cr_assert_eq(eff(h, &d, x, 3, &w3, NULL), LB_BACKEND_ACTIVE);
	cr_assert_eq(eff(h, &d, x, 1, &w1, NULL), LB_BACKEND_ACTIVE);
	cr_assert_eq(eff(h, &d, x, 2, &w2, NULL), LB_BACKEND_ACTIVE);
	cr_assert(w1 == 20000 && w2 == 10000, "the heavy ones as given: %u, %u", w1, w2);
	cr_assert_eq(w3, 1, "the light one starts at 1: %u", w3);
}

/* One service of n backends steered by least connections, all n listening. */
static void
steered_table(struct lb_ftable *d, int n)
{
	int i;

	for (i = 1; i <= n; i++)
		up(i);
	table(d, n, NULL);
	d->services[0].choice.balance = LB_BALANCE_LEAST_CONNECTIONS;
}

/*
 * A steered pool multiplies its weights by 8 and by the load factors: with
 * 20000, 10000 and 5000 that passes 65535, and the pool is divided as one
 * to keep its 4:2:1 (clipped, the two heavy ones ran alike).
 */
Test(health, steered_heavy_weights_keep_their_ratios)
{
	uint32_t w1, w2, w3;
	uint64_t x = T0 + 1010;

	steered_table(&d, 3);
	d.services[0].backends[0].weight = 20000;
	d.services[0].backends[1].weight = 10000;
	d.services[0].backends[2].weight = 5000;
	pools(&ps, 1, 0, 0, 3);
	first_rounds(h, &d, &ps);
	cr_assert_eq(eff(h, &d, x, 1, &w1, NULL), LB_BACKEND_ACTIVE);
	cr_assert_eq(eff(h, &d, x, 2, &w2, NULL), LB_BACKEND_ACTIVE);
	cr_assert_eq(eff(h, &d, x, 3, &w3, NULL), LB_BACKEND_ACTIVE);
	cr_assert(w1 <= LB_MAGLEV_MAX_WEIGHT && w1 > LB_MAGLEV_MAX_WEIGHT / 2,
		"the heaviest high: %u", w1);
	cr_assert(llabs((long long)w1 - 2 * w2) <= 1 && llabs((long long)w2 - 2 * w3) <= 1,
		"4:2:1 kept: %u, %u, %u", w1, w2, w3);
}

/* The effective table at `now`, to serve as the committed one. */
static void
committed_at(struct mgr_health *h, const struct lb_ftable *d, uint64_t now, struct lb_ftable *c)
{
	uint64_t next;

	memset(c, 0, sizeof(*c));
	cr_assert_eq(mgr_health_effective(h, d, now, c, &next), 0);
}

Test(health, draining)
{
	static const uint8_t drain2[N_BE + 1] = {
		0, LB_BACKEND_ACTIVE, LB_BACKEND_DRAIN, LB_BACKEND_ACTIVE};
	struct lb_ftable d2, d3, c;
	struct lb_svc_key k = key();
	struct lb_backend_cfg gone;
	uint64_t y = T0 + 1010, next;
	char buf[128];

	up(2);
	up(3);
	table(&d, 3, NULL);
	pools(&ps, 1, 0, 0, 3);
	first_rounds(h, &d, &ps);
	committed_at(h, &d, y, &c);

	/* backend 3 deleted: drains 3 s, then goes */
	table(&d2, 2, NULL);
	cr_assert_eq(mgr_health_sync(h, &d2, &ps, &c, false, y), 0);
	cr_assert_eq(eff(h, &d2, y, 3, NULL, &next), LB_BACKEND_DRAIN);
	cr_assert_eq(next, y + 3000);
	cr_assert_eq(eff(h, &d2, y + 2999, 3, NULL, NULL), LB_BACKEND_DRAIN);
	cr_assert_eq(eff(h, &d2, y + 3000, 3, NULL, &next), -1, "gone when the delay ends");
	cr_assert_eq(next, UINT64_MAX);
	memset(&gone, 0, sizeof(gone));
	lb_addr_v4(&gone.dip, be_ip(3));
	gone.port = port;
	cr_assert_str_eq(
		mgr_health_why(h, &k, &gone, NULL, buf, sizeof(buf)), "deregistration delay over");

	/* backend 2 set to drain: drains, and stays drain after the delay */
	y += 4000;
	lb_ftable_free(&c);
	committed_at(h, &d2, y, &c);
	table(&d3, 2, drain2);
	cr_assert_eq(mgr_health_sync(h, &d3, &ps, &c, false, y), 0);
	cr_assert_eq(eff(h, &d3, y, 2, NULL, NULL), LB_BACKEND_DRAIN);
	cr_assert_eq(eff(h, &d3, y + 10000, 2, NULL, &next), LB_BACKEND_DRAIN, "stays drain");
	cr_assert_eq(next, UINT64_MAX, "no timer: nothing changes when its delay ends");
	/* then deleted after its delay: it goes at once */
	lb_ftable_free(&c);
	committed_at(h, &d3, y + 10000, &c);
	lb_ftable_free(&d2);
	table(&d2, 1, NULL);
	cr_assert_eq(mgr_health_sync(h, &d2, &ps, &c, false, y + 10000), 0);
	cr_assert_eq(eff(h, &d2, y + 10000, 2, NULL, NULL), -1, "its delay already ran");

	lb_ftable_free(&c);
	lb_ftable_free(&d2);
	lb_ftable_free(&d3);
}

/*
 * A backend deleted from a steered pool drains; the manager restarts
 * twice within the delay. The committed table's weight of it is already
 * scaled (x MGR_LOAD_SCALE): rebuilt from it, the drain keeps it as it is
 * rather than scaling it again at each restart (8, 64, 512 before).
 */
Test(health, a_drain_rebuilt_after_a_restart_keeps_its_weight)
{
	struct mgr_health *h2, *h3;
	struct lb_ftable d2, c, c2, c3;
	uint8_t a[LB_DIGEST_LEN], b[LB_DIGEST_LEN];
	uint32_t w, w2, w3;
	uint64_t y = T0 + 1010;

	steered_table(&d, 3);
	pools(&ps, 0, 0, 0, 300);
	first_rounds(h, &d, &ps);
	committed_at(h, &d, y, &c);
	steered_table(&d2, 2);
	cr_assert_eq(mgr_health_sync(h, &d2, &ps, &c, false, y), 0);
	cr_assert_eq(eff(h, &d2, y, 3, &w, NULL), LB_BACKEND_DRAIN);
	committed_at(h, &d2, y, &c2);

	/* Restarted: health from c2, the drain rebuilt from it. */
	h2 = health_new();
	cr_assert_eq(mgr_health_sync(h2, &d2, &ps, &c2, true, y + 100), 0);
	cr_assert_eq(eff(h2, &d2, y + 100, 3, &w2, NULL), LB_BACKEND_DRAIN);
	cr_assert_eq(w2, w, "the drain's weight after a restart: %u, was %u", w2, w);
	committed_at(h2, &d2, y + 100, &c3);
	lb_ftable_digest(&c2, a);
	lb_ftable_digest(&c3, b);
	cr_assert_eq(memcmp(a, b, LB_DIGEST_LEN), 0, "a restart makes no version by itself");

	/* And again: nothing multiplies. */
	h3 = health_new();
	cr_assert_eq(mgr_health_sync(h3, &d2, &ps, &c3, true, y + 200), 0);
	cr_assert_eq(eff(h3, &d2, y + 200, 3, &w3, NULL), LB_BACKEND_DRAIN);
	cr_assert_eq(w3, w, "after a second restart: %u, was %u", w3, w);

	lb_ftable_free(&c);
	lb_ftable_free(&c2);
	lb_ftable_free(&c3);
	lb_ftable_free(&d2);
	mgr_health_free(h2);
	mgr_health_free(h3);
}

Test(health, a_restart_changes_nothing)
{
	static const uint8_t maint3[N_BE + 1] = {
		0, LB_BACKEND_ACTIVE, LB_BACKEND_ACTIVE, LB_BACKEND_MAINT};
	struct lb_ftable c;
	uint8_t a[LB_DIGEST_LEN], b[LB_DIGEST_LEN];
	uint64_t next;
	struct lb_ftable out = {0};

	/* What the members run: 3 in maint (it was unhealthy), its admin state active. */
	table(&d, 3, NULL);
	table(&c, 3, maint3);
	pools(&ps, 1, 0, 0, 3);
	cr_assert_eq(mgr_health_sync(h, &d, &ps, &c, true, T0), 0);
	cr_assert_eq(mgr_health_hold(h, T0), 0, "a restart does not hold rounds");
	cr_assert_str_eq(health_of(h, 1, T0), "healthy");
	cr_assert_str_eq(health_of(h, 3, T0), "out of the table when the manager started");
	cr_assert_eq(mgr_health_effective(h, &d, T0, &out, &next), 0);
	lb_ftable_digest(&out, a);
	lb_ftable_digest(&c, b);
	cr_assert_eq(memcmp(a, b, LB_DIGEST_LEN), 0, "the effective table is the committed one");

	lb_ftable_free(&out);
	lb_ftable_free(&c);
}
