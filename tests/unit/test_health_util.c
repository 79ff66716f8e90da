/* SPDX-License-Identifier: BSD-3-Clause */
/* What test_health.c and test_withdraw.c share (test_health_util.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "test_health_util.h"

uint16_t port;
struct mgr_dip_prober *prober;
struct mgr_health *h;
struct lb_ftable d;
struct mgr_pools ps;
static int lfd[N_BE + 1] = {-1, -1, -1, -1};

lb_be32_t
be_ip(int i)
{
	return htonl(0x7f005800u + (uint32_t)i); /* 127.0.88.i */
}

static int
listen_on(int i)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	cr_assert(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = be_ip(i);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 64) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void
up(int i)
{
	if (lfd[i] < 0)
		lfd[i] = listen_on(i);
	cr_assert(lfd[i] >= 0, "listen on 127.0.88.%d:%u: %s", i, port, strerror(errno));
}

void
down(int i)
{
	if (lfd[i] >= 0)
		close(lfd[i]);
	lfd[i] = -1;
}

static void
fixture_new(void)
{
	h = health_new();
	cr_assert_not_null(h);
	memset(&d, 0, sizeof(d));
	memset(&ps, 0, sizeof(ps));
}

static void
fixture_free(void)
{
	lb_ftable_free(&d);
	mgr_pools_free(&ps);
	mgr_health_free(h);
	h = NULL;
}

void
fixture_again(void)
{
	fixture_free();
	fixture_new();
}

/* A free port on 127.0.88.1, used for every backend; a prober; the fixture. */
void
setup(void)
{
	struct sockaddr_in sa;
	socklen_t l = sizeof(sa);
	int i;

	port = 0;
	lfd[1] = listen_on(1);
	cr_assert(lfd[1] >= 0);
	getsockname(lfd[1], (struct sockaddr *)&sa, &l);
	port = ntohs(sa.sin_port);
	for (i = 2; i <= N_BE; i++)
		lfd[i] = -1;
	prober = mgr_dip_prober_new();
	cr_assert_not_null(prober);
	fixture_new();
}

void
teardown(void)
{
	int i;

	for (i = 1; i <= N_BE; i++)
		down(i);
	fixture_free();
	mgr_dip_prober_free(prober); /* each test freed its other healths first */
	prober = NULL;
}

/* Health whose records the test's prober probes. */
struct mgr_health *
health_new(void)
{
	return mgr_health_new(mgr_dip_prober_release, prober);
}

void
table(struct lb_ftable *t, int n, const uint8_t *state)
{
	struct lb_service_cfg *s;
	int i;

	memset(t, 0, sizeof(*t));
	t->maglev_size = 251;
	t->services = calloc(1, sizeof(*t->services));
	t->n_services = 1;
	s = &t->services[0];
	lb_addr_v4(&s->vip, htonl(0x0a00000au));
	s->port = 80;
	s->proto = LB_IPPROTO_TCP;
	s->af = LB_AF_INET;
	s->backends = calloc((size_t)n + 1, sizeof(*s->backends));
	for (i = 1; i <= n; i++) {
		struct lb_backend_cfg *b = &s->backends[s->n_backends++];

		lb_addr_v4(&b->dip, be_ip(i));
		lb_addr_v4(&b->host, htonl(0x0a000101u));
		b->port = port;
		b->weight = 1;
		b->state = state != NULL ? state[i] : LB_BACKEND_ACTIVE;
		b->id = (uint32_t)i;
	}
	lb_ftable_sort(t);
}

void
zones_ab(struct lb_ftable *t)
{
	uint32_t i;

	for (i = 0; i < 3; i++)
		snprintf(t->services[0].backends[i].zone, LB_ZONE_LEN, "%s", i < 2 ? "a" : "b");
}

struct lb_svc_key
key(void)
{
	struct lb_svc_key k;

	lb_svc_key_v4(&k, htonl(0x0a00000au), htons(80), LB_IPPROTO_TCP);
	return k;
}

void
pools(struct mgr_pools *ps, uint32_t min, uint32_t pct, uint32_t slow, uint32_t drain)
{
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_svc_key k = key();

	memset(ps, 0, sizeof(*ps));
	p.pl_interval_s = 1;
	p.pl_timeout_s = 1;
	p.pl_healthy = 2;
	p.pl_unhealthy = 2;
	p.pl_min_healthy = min;
	p.pl_min_healthy_pct = pct;
	p.pl_slow_start_s = slow;
	p.pl_drain_delay_s = drain;
	cr_assert_eq(mgr_pools_set(ps, &k, &p), 0);
}

/* Run every probe due by `now` to its end (real sockets, test time). */
bool
drive_changed(struct mgr_health *h, uint64_t now)
{
	struct mgr_dip_probe_stats st;
	struct pollfd pfd = {.fd = mgr_dip_prober_fd(prober), .events = POLLIN};
	bool changed = mgr_dip_prober_tick(prober, h, now);
	int i;

	for (i = 0; i < 200; i++) {
		mgr_dip_prober_stats(prober, &st);
		if (st.ps_in_flight == 0)
			return changed;
		poll(&pfd, 1, 10);
		changed |= mgr_dip_prober_io(prober, h, now);
	}
	cr_assert_fail("probes still in flight after 2 s");
	return changed;
}

void
drive(struct mgr_health *h, uint64_t now)
{
	drive_changed(h, now);
}

/* Backend i of the effective table: its state and weight; -1 when absent. */
int
eff(struct mgr_health *h, const struct lb_ftable *desired, uint64_t now, int i, uint32_t *weight,
	uint64_t *next)
{
	struct lb_ftable out = {0};
	uint64_t nx;
	uint32_t j;
	int st = -1;

	cr_assert_eq(mgr_health_effective(h, desired, now, &out, &nx), 0);
	for (j = 0; j < out.services[0].n_backends; j++) {
		const struct lb_backend_cfg *b = &out.services[0].backends[j];

		if (b->dip.a32[0] == be_ip(i)) {
			st = b->state;
			if (weight != NULL)
				*weight = b->weight;
		}
	}
	if (next != NULL)
		*next = nx;
	lb_ftable_free(&out);
	return st;
}

const char *
health_of(struct mgr_health *h, int i, uint64_t now)
{
	struct lb_svc_key k = key();
	static struct mgr_hview v; /* the reason points into it */
	struct lb_addr a;

	lb_addr_v4(&a, be_ip(i));
	mgr_health_backend(h, &k, &a, port, now, &v);
	if (!v.hv_found)
		return "gone";
	return v.hv_health == MGR_H_HEALTHY   ? "healthy"
	       : v.hv_health == MGR_H_INITIAL ? "initial"
					      : v.hv_last_failure;
}

void
first_table(struct mgr_health *h, const struct lb_ftable *d, const struct mgr_pools *ps)
{
	struct lb_ftable none = {0};

	cr_assert_eq(mgr_health_sync(h, d, ps, &none, false, T0), 0);
}

/*
 * d under ps as the first table h is given, then the first two rounds of
 * probes, at T0 + 10 and T0 + 1010: by then a backend that listens is
 * healthy and one that does not is unhealthy.
 */
void
first_rounds(struct mgr_health *h, const struct lb_ftable *d, const struct mgr_pools *ps)
{
	first_table(h, d, ps);
	drive(h, T0 + 10);
	drive(h, T0 + 1010);
}
