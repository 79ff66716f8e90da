/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lb_clock.h"
#include "lb_log.h"
#include "mgr_dip_probe.h"
#include "mgr_dip_prober.h"
#include "mgr_hrec.h"

#define MGR_EPOLL_BATCH 256
#define MGR_FD_RESERVE 256 /* descriptors kept for nng, SQLite and the rest */
#define MGR_DEFER_MS 50	   /* every socket busy: a start waits this long, then looks again */

struct mgr_dip_prober {
	int dp_epfd;
	uint32_t dp_in_flight;
	uint32_t dp_max_in_flight;
	struct lb_hist dp_took[2]; /* [1]: probes that passed, [0]: failed */
};

/* Probe latency buckets, in seconds: a LAN answers in well under a millisecond. */
static const double took_le[] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

/* A verdict on r's probe: how long it took, by its outcome. */
static void
took(struct mgr_dip_prober *p, const struct mgr_hrec *r, enum mgr_dip_probe_rc rc)
{
	if (r->hr_probe == NULL || (rc != MGR_DIP_UP && rc != MGR_DIP_DOWN))
		return;
	lb_hist_observe(&p->dp_took[rc == MGR_DIP_UP],
		(double)(lb_now_us() - r->hr_probe->pr_start_us) / 1e6);
}

const struct lb_hist *
mgr_dip_prober_latency(const struct mgr_dip_prober *p, bool up)
{
	return &p->dp_took[up];
}

struct mgr_dip_prober *
mgr_dip_prober_new(void)
{
	struct mgr_dip_prober *p = calloc(1, sizeof(*p));
	struct rlimit rl;

	if (p == NULL)
		return NULL;
	lb_hist_init(&p->dp_took[0], took_le, sizeof(took_le) / sizeof(took_le[0]));
	lb_hist_init(&p->dp_took[1], took_le, sizeof(took_le) / sizeof(took_le[0]));
	p->dp_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->dp_epfd < 0) {
		free(p);
		return NULL;
	}
	/* Probes in flight take one descriptor each: allow what the system does. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = 65536;
	p->dp_max_in_flight = rl.rlim_cur > 2 * MGR_FD_RESERVE
				      ? (uint32_t)(rl.rlim_cur - MGR_FD_RESERVE)
				      : MGR_FD_RESERVE;
	if (p->dp_max_in_flight > 1000000)
		p->dp_max_in_flight = 1000000;
	return p;
}

void
mgr_dip_prober_set_cap(struct mgr_dip_prober *p, uint32_t n)
{
	if (n >= 1 && n < p->dp_max_in_flight)
		p->dp_max_in_flight = n;
}

void
mgr_dip_prober_free(struct mgr_dip_prober *p)
{
	if (p == NULL)
		return;
	close(p->dp_epfd);
	free(p);
}

int
mgr_dip_prober_fd(const struct mgr_dip_prober *p)
{
	return p->dp_epfd;
}

static bool
in_flight(const struct mgr_hrec *r)
{
	return r->hr_probe != NULL && r->hr_probe->pr_fd >= 0;
}

void
mgr_dip_prober_release(void *ctx, struct mgr_hrec *r)
{
	struct mgr_dip_prober *p = ctx;

	if (r->hr_probe == NULL)
		return;
	if (in_flight(r)) {
		mgr_dip_probe_close(r->hr_probe);
		p->dp_in_flight--;
	}
	free(r->hr_probe);
	r->hr_probe = NULL;
}

/* r's probe state, made at its first probe (NULL: out of memory). */
static struct mgr_dip_probe *
probe_of(struct mgr_hrec *r)
{
	if (r->hr_probe == NULL) {
		r->hr_probe = malloc(sizeof(*r->hr_probe));
		if (r->hr_probe != NULL)
			mgr_dip_probe_init(r->hr_probe);
	}
	return r->hr_probe;
}

bool
mgr_dip_prober_tick(struct mgr_dip_prober *p, struct mgr_health *h, uint64_t now)
{
	char why[MGR_DIP_PROBE_WHY];
	struct mgr_hrec *r;
	bool changed = false;

	while ((r = mgr_health_due(h, now)) != NULL) {
		const struct mgr_pool *pl = &r->hr_svc->hs_pool;
		uint16_t port = pl->pl_probe_port != 0 ? pl->pl_probe_port : r->hr_be.port;
		struct mgr_dip_probe *pr;
		enum mgr_dip_probe_rc rc;

		if (in_flight(r)) {
			/* Its deadline. */
			mgr_dip_probe_timeout(r->hr_probe, pl->pl_timeout_s, why, sizeof(why));
			p->dp_in_flight--;
			took(p, r, MGR_DIP_DOWN);
			changed |= mgr_health_verdict(h, r, MGR_DIP_DOWN, why, now);
			continue;
		}
		if (p->dp_in_flight >= p->dp_max_in_flight) {
			/*
			 * Every socket we allow is busy: this start waits. The
			 * deadlines behind it in the heap (of the probes in
			 * flight, which free sockets) still come.
			 */
			mgr_health_defer(h, r, now + MGR_DEFER_MS);
			continue;
		}
		mgr_health_started(h, r, now);
		pr = probe_of(r);
		if (pr == NULL) {
			snprintf(why, sizeof(why), "out of memory");
			changed |= mgr_health_verdict(h, r, MGR_DIP_NOSOCK, why, now);
			continue;
		}
		rc = mgr_dip_probe_start(pr, p->dp_epfd, r, r->hr_svc->hs_key.af, &r->hr_be.dip,
			port, why, sizeof(why));
		pr->pr_start_us = lb_now_us();
		if (rc == MGR_DIP_PENDING) {
			p->dp_in_flight++;
			mgr_health_pending(h, r, now);
		} else {
			took(p, r, rc);
			changed |= mgr_health_verdict(h, r, rc, why, now);
		}
	}
	return changed;
}

bool
mgr_dip_prober_io(struct mgr_dip_prober *p, struct mgr_health *h, uint64_t now)
{
	struct epoll_event ev[MGR_EPOLL_BATCH];
	char why[MGR_DIP_PROBE_WHY];
	bool changed = false;
	int n, i;

	do {
		n = epoll_wait(p->dp_epfd, ev, MGR_EPOLL_BATCH, 0);
		for (i = 0; i < n; i++) {
			struct mgr_hrec *r = ev[i].data.ptr;
			enum mgr_dip_probe_rc rc;

			if (r->hr_probe == NULL)
				continue; /* released: its socket is closed */
			rc = mgr_dip_probe_event(r->hr_probe, p->dp_epfd, ev[i].events,
				&r->hr_svc->hs_pool, &r->hr_be.dip, why, sizeof(why));
			if (rc == MGR_DIP_PENDING)
				continue;
			p->dp_in_flight--;
			took(p, r, rc);
			changed |= mgr_health_verdict(h, r, rc, why, now);
		}
	} while (n == MGR_EPOLL_BATCH);
	if (n < 0 && errno != EINTR)
		LB_WARN("health: epoll_wait: %s", strerror(errno));
	return changed;
}

void
mgr_dip_prober_stats(const struct mgr_dip_prober *p, struct mgr_dip_probe_stats *s)
{
	s->ps_in_flight = p->dp_in_flight;
	s->ps_max_in_flight = p->dp_max_in_flight;
}
