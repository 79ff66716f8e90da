/* SPDX-License-Identifier: BSD-3-Clause */
/* The manager's metrics (mgr_metrics.h has the design). */
#include <arpa/inet.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "lb_addr.h"
#include "lb_clock.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "lb_log.h"
#include "lb_prom.h"
#include "mgr_commit.h"
#include "mgr_dip_prober.h"
#include "mgr_driver.h"
#include "mgr_health.h"
#include "mgr_members.h"
#include "mgr_metrics.h"
#include "mgr_stats.h"
#include "mgr_text.h"
#include "mgr_vip_probe.h"

/* Sync delay buckets, in seconds: a commit reaches a member in milliseconds. */
static const double delay_le[] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

struct mt_commit {
	uint64_t version, ms;
};

struct mt_member {
	bool counting;	   /* its STATUS since it connected has been seen */
	uint64_t reported; /* what it last said it runs */
	struct lb_hist delay;
};

struct mgr_metrics {
	struct mgr_metrics_deps deps;
	struct lb_metrics *srv; /* NULL: no endpoint */
	/* commits recorded, newest at head - 1 */
	struct mt_commit commits[MGR_METRICS_COMMITS];
	uint32_t head, n_commits;
	struct mt_member m[MGR_MAX_MEMBERS];
	int efd; /* a scrape wants a render */
	/* the text the scrapes copy, and when it was made (CLOCK_MONOTONIC ms) */
	pthread_mutex_t lock;
	pthread_cond_t rendered;
	char *text;
	size_t len;
	uint64_t text_ms;
	uint64_t generation;
};

/* ---- what the loop tells it ---- */

void
mgr_metrics_committed(struct mgr_metrics *mt, uint64_t version, uint64_t now)
{
	if (mt == NULL)
		return;
	mt->commits[mt->head] = (struct mt_commit){version, now};
	mt->head = (mt->head + 1) % MGR_METRICS_COMMITS;
	if (mt->n_commits < MGR_METRICS_COMMITS)
		mt->n_commits++;
}

void
mgr_metrics_status(struct mgr_metrics *mt, int member, uint64_t version, uint64_t now)
{
	struct mt_member *m;
	uint32_t k;

	if (mt == NULL || member < 0 || member >= MGR_MAX_MEMBERS)
		return;
	m = &mt->m[member];
	if (m->counting && version > m->reported) {
		/* each version committed meanwhile took this long to reach it */
		for (k = 0; k < mt->n_commits; k++) {
			const struct mt_commit *c =
				&mt->commits[(mt->head + MGR_METRICS_COMMITS - 1 - k) %
					     MGR_METRICS_COMMITS];

			if (c->version <= m->reported)
				break;
			/*
			 * A STATUS read in the loop pass that committed carries an
			 * earlier now than the commit's own clock reading: zero.
			 */
			if (c->version <= version)
				lb_hist_observe(&m->delay,
					now > c->ms ? (double)(now - c->ms) / 1000.0 : 0.0);
		}
	}
	/* The first report of a connection only says where it stands. */
	m->counting = true;
	m->reported = version;
}

void
mgr_metrics_gone(struct mgr_metrics *mt, int member)
{
	if (mt != NULL && member >= 0 && member < MGR_MAX_MEMBERS)
		mt->m[member].counting = false;
}

/* ---- rendering ---- */

/* The labels of a service (vip in RFC 5952 text, port, proto). */
static const char *
svc_labels(
	uint8_t af, const struct lb_addr *vip, uint16_t port, uint8_t proto, char *buf, size_t len)
{
	char v[LB_ADDR_STRLEN], p[8];

	snprintf(p, sizeof(p), "%u", port);
	return lb_prom_labels(buf, len, "vip", lb_addr_ntop(af, vip, v, sizeof(v)), "port", p,
		"proto", proto == LB_IPPROTO_UDP ? "udp" : "tcp", NULL);
}

static const char *
member_labels(const struct mgr_member *mb, char *buf, size_t len)
{
	return lb_prom_labels(buf, len, "member", mb->id, "role", mgr_role_name(mb->role), NULL);
}

/* One gauge per member: what get() says of it. */
static void
per_member(struct lb_prom *p, const struct mgr_metrics *mt, const char *name, const char *help,
	uint64_t (*get)(const struct mgr_metrics *mt, int i))
{
	const struct mgr_commit *c = mgr_driver_commit(mt->deps.driver);
	char l[160];
	uint32_t i;

	lb_prom_family(p, name, LB_PROM_GAUGE, help);
	for (i = 0; i < c->n_members; i++)
		lb_prom_sample(p, member_labels(&c->members[i], l, sizeof(l)), get(mt, (int)i));
}

static uint64_t
m_applied(const struct mgr_metrics *mt, int i)
{
	const struct mgr_member *mb = &mgr_driver_commit(mt->deps.driver)->members[i];

	return mb->has_reported ? mb->reported : mb->applied;
}

static uint64_t
m_connected(const struct mgr_metrics *mt, int i)
{
	return mgr_members_connected(mt->deps.members, i);
}

static uint64_t
m_in_sync(const struct mgr_metrics *mt, int i)
{
	return mgr_driver_commit(mt->deps.driver)->members[i].state == MGR_MEMBER_IN_SYNC;
}

static uint64_t
m_fenced(const struct mgr_metrics *mt, int i)
{
	return !m_in_sync(mt, i);
}

static void
members(struct lb_prom *p, const struct mgr_metrics *mt)
{
	const struct mgr_commit *c = mgr_driver_commit(mt->deps.driver);
	char l[160];
	uint32_t i;

	per_member(p, mt, "member_applied_version",
		"The flow table version each member last reported it runs.", m_applied);
	per_member(p, mt, "member_connected", "1 while the member is connected.", m_connected);
	per_member(p, mt, "member_in_sync", "1 while the member takes part in rounds.", m_in_sync);
	per_member(p, mt, "member_fenced",
		"1 while the member is out of sync (fenced), being brought back by a snapshot.",
		m_fenced);
	lb_prom_family(p, "member_sync_delay_seconds", LB_PROM_HISTOGRAM,
		"Flow-table sync delay: from the manager recording a commit to the member's "
		"STATUS reporting that version.");
	for (i = 0; i < c->n_members; i++)
		lb_prom_hist(p, member_labels(&c->members[i], l, sizeof(l)), &mt->m[i].delay);
}

/* Health of every backend of the desired table: 1 healthy, 0 not (yet). */
static void
backends(struct lb_prom *p, const struct mgr_metrics *mt, uint64_t now)
{
	struct mgr_driver_view v;
	char sl[160], bl[224], b[MGR_BE_STR];
	uint32_t s, i;

	mgr_driver_view(mt->deps.driver, &v);
	lb_prom_family(p, "backend_up", LB_PROM_GAUGE,
		"1 if the manager's probes find the backend healthy (or its pool is not probed), "
		"0 if unhealthy or not yet probed.");
	for (s = 0; s < v.desired->n_services; s++) {
		const struct lb_service_cfg *sc = &v.desired->services[s];
		struct lb_svc_key k;

		lb_ftable_key(sc, &k);
		svc_labels(sc->af, &sc->vip, sc->port, sc->proto, sl, sizeof(sl));
		for (i = 0; i < sc->n_backends; i++) {
			const struct lb_backend_cfg *be = &sc->backends[i];
			struct mgr_hview hv;

			mgr_health_backend(mt->deps.health, &k, &be->dip, be->port, now, &hv);
			lb_prom_sample(p,
				lb_prom_labels_add(bl, sizeof(bl), sl, "backend",
					mgr_be_str(sc->af, be, b, sizeof(b))),
				hv.hv_found && hv.hv_health == MGR_H_HEALTHY);
		}
	}
}

/* One family of the VIP probes of each probed mux: sent (0), answered (1), failing (2). */
static void
vip_family(struct lb_prom *p, const struct mgr_metrics *mt, const char *name,
	enum lb_prom_type type, const char *help, int which)
{
	const struct mgr_commit *c = mgr_driver_commit(mt->deps.driver);
	uint64_t sent, answered;
	uint32_t failing, i;
	char l[160];

	lb_prom_family(p, name, type, help);
	for (i = 0; i < c->n_members; i++)
		if (mgr_vip_probe_member(mt->deps.vip, (int)i, &sent, &answered, &failing))
			lb_prom_sample(p,
				lb_prom_labels(l, sizeof(l), "mux", c->members[i].id, NULL),
				which == 0   ? sent
				: which == 1 ? answered
					     : failing);
}

static void
probes(struct lb_prom *p, const struct mgr_metrics *mt)
{
	struct mgr_dip_probe_stats ps;
	char l[64];

	mgr_health_stats(mt->deps.health, &ps);
	lb_prom_family(p, "dip_probes_total", LB_PROM_COUNTER,
		"DIP health probes ended, by result: up (passed) or down (failed).");
	lb_prom_sample(p, lb_prom_labels(l, sizeof(l), "result", "up", NULL), ps.ps_up);
	lb_prom_sample(p, lb_prom_labels(l, sizeof(l), "result", "down", NULL), ps.ps_down);
	lb_prom_family(p, "dip_probe_duration_seconds", LB_PROM_HISTOGRAM,
		"How long DIP probes took, start to verdict, by result (a timeout counts whole).");
	lb_prom_hist(p, lb_prom_labels(l, sizeof(l), "result", "up", NULL),
		mgr_dip_prober_latency(mt->deps.dip, true));
	lb_prom_hist(p, lb_prom_labels(l, sizeof(l), "result", "down", NULL),
		mgr_dip_prober_latency(mt->deps.dip, false));

	vip_family(p, mt, "vip_probes_sent_total", LB_PROM_COUNTER,
		"VIP probes sent through each mux since the manager started.", 0);
	vip_family(p, mt, "vip_probes_answered_total", LB_PROM_COUNTER,
		"VIP probes each mux answered (itself, with the version it runs).", 1);
	vip_family(p, mt, "vip_probe_failed_intervals", LB_PROM_GAUGE,
		"Intervals in a row the mux's worst VIP went unanswered (vip_probe_failures fence "
		"it).",
		2);
}

/*
 * Hash deviation: each mux's share of a VIP's new connections, against
 * 1/N, N the muxes carrying it (connected, in sync, reporting it).
 */
static void
shares(struct lb_prom *p, const struct mgr_metrics *mt)
{
	const struct mgr_commit *c = mgr_driver_commit(mt->deps.driver);
	bool in[MGR_MAX_MEMBERS] = {false};
	struct mgr_flow_sum *sum = NULL;
	char sl[160], l[224];
	uint32_t i, pass;
	int n, s;

	for (i = 0; i < c->n_members; i++)
		in[i] = c->members[i].role == LB_ROLE_MUX &&
			c->members[i].state == MGR_MEMBER_IN_SYNC &&
			mgr_members_connected(mt->deps.members, (int)i);
	n = mgr_stats_sum(mt->deps.stats, in, &sum);
	for (pass = 0; pass < 2; pass++) {
		if (pass == 0)
			lb_prom_family(p, "vip_mux_new_connections_share", LB_PROM_GAUGE,
				"Each mux's share of the VIP's new connections (rates over 5 to 10 "
				"s "
				"of its STATUS reports).");
		else
			lb_prom_family(p, "vip_mux_expected_share", LB_PROM_GAUGE,
				"The share each mux should take: 1 / the muxes carrying the VIP.");
		for (s = 0; s < n; s++) {
			const struct mgr_flow_sum *f = &sum[s];

			if (f->f.dip_port != 0)
				continue; /* a backend */
			svc_labels(f->f.af, &f->f.vip, f->f.port, f->f.proto, sl, sizeof(sl));
			for (i = 0; i < c->n_members; i++) {
				struct mgr_rate r;

				if (!in[i] || !mgr_stats_rate(mt->deps.stats, (int)i, &f->f, &r))
					continue;
				/* No new connections in the window: no share to speak of. */
				if (pass == 0 && f->rate.cps <= 0)
					continue;
				lb_prom_labels_add(l, sizeof(l), sl, "mux", c->members[i].id);
				lb_prom_sample_f(
					p, l, pass == 1 ? 1.0 / f->members : r.cps / f->rate.cps);
			}
		}
	}
	free(sum);
}

static void
render(struct mgr_metrics *mt, FILE *out, uint64_t now)
{
	struct mgr_driver_view v;
	struct lb_prom p;
	char l[64];

	mgr_driver_view(mt->deps.driver, &v);
	lb_prom_init(&p, out, "sluice_");
	lb_prom_one(&p, "committed_version", LB_PROM_GAUGE,
		"The version the manager last committed: what every member should run.",
		v.commit->committed);
	lb_prom_family(&p, "rounds_total", LB_PROM_COUNTER,
		"Two-phase-commit rounds since the manager started, by outcome.");
	lb_prom_sample(
		&p, lb_prom_labels(l, sizeof(l), "outcome", "committed", NULL), v.n_committed);
	lb_prom_sample(&p, lb_prom_labels(l, sizeof(l), "outcome", "aborted", NULL), v.n_aborted);
	lb_prom_one(&p, "pending_changes", LB_PROM_GAUGE,
		"Changes accepted and not yet carried by a version.", v.pending_changes);
	members(&p, mt);
	backends(&p, mt, now);
	probes(&p, mt);
	shares(&p, mt);
}

char *
mgr_metrics_text(struct mgr_metrics *mt, uint64_t now)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (out == NULL)
		return NULL;
	render(mt, out, now);
	if (fclose(out) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int
mgr_metrics_fd(const struct mgr_metrics *mt)
{
	return mt != NULL && mt->srv != NULL ? mt->efd : -1;
}

/* A new text for the scrapes (taken over). */
static void
publish(struct mgr_metrics *mt, char *text)
{
	pthread_mutex_lock(&mt->lock);
	free(mt->text);
	mt->text = text;
	mt->len = strlen(text);
	mt->text_ms = lb_now_ms();
	mt->generation++;
	pthread_cond_broadcast(&mt->rendered);
	pthread_mutex_unlock(&mt->lock);
}

void
mgr_metrics_tick(struct mgr_metrics *mt, uint64_t now)
{
	uint64_t asked;
	char *text;

	if (mt == NULL || mt->srv == NULL || read(mt->efd, &asked, sizeof(asked)) != sizeof(asked))
		return; /* nobody waits */
	text = mgr_metrics_text(mt, now);
	if (text != NULL)
		publish(mt, text); /* out of memory: no new text; a scrape waits, then 503 */
}

/* nng's thread: a text a few milliseconds old, rendered by the loop. */
static void
serve(void *arg, FILE *out)
{
	struct mgr_metrics *mt = arg;
	const uint64_t one = 1;
	struct timespec until;
	uint64_t gen;

	pthread_mutex_lock(&mt->lock);
	if (lb_now_ms() > mt->text_ms + MGR_METRICS_FRESH_MS) {
		gen = mt->generation;
		if (write(mt->efd, &one, sizeof(one)) == sizeof(one)) {
			until = lb_deadline(CLOCK_MONOTONIC, MGR_METRICS_WAIT_MS);
			while (mt->generation == gen &&
				pthread_cond_timedwait(&mt->rendered, &mt->lock, &until) == 0)
				;
		}
	}
	/*
	 * A loop that rendered nothing for the whole wait is stuck (an etcd
	 * call, say): its last text would show a dead member connected, a
	 * version long gone. Nothing is written, so the scrape fails (503).
	 */
	if (mt->text != NULL &&
		lb_now_ms() - mt->text_ms <= MGR_METRICS_WAIT_MS + MGR_METRICS_FRESH_MS)
		fwrite(mt->text, 1, mt->len, out);
	else if (mt->text != NULL)
		LB_WARN("metrics: no render in %" PRIu64 " ms: scrape refused (503)",
			lb_now_ms() - mt->text_ms);
	pthread_mutex_unlock(&mt->lock);
}

struct mgr_metrics *
mgr_metrics_new(const struct mgr_metrics_deps *deps, const struct lb_metrics_cfg *cfg, uint64_t now,
	char *err, size_t len)
{
	struct mgr_metrics *mt = lb_zalloc(sizeof(*mt), "metrics", err, len);
	pthread_condattr_t ca;
	uint32_t i;

	if (mt == NULL)
		return NULL;
	mt->deps = *deps;
	mt->efd = -1;
	pthread_mutex_init(&mt->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(
		&ca, CLOCK_MONOTONIC); /* a clock step neither ends nor stretches a wait */
	pthread_cond_init(&mt->rendered, &ca);
	pthread_condattr_destroy(&ca);
	for (i = 0; i < MGR_MAX_MEMBERS; i++)
		lb_hist_init(&mt->m[i].delay, delay_le, sizeof(delay_le) / sizeof(delay_le[0]));
	if (!cfg->enabled)
		return mt;
	mt->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	mt->text = mgr_metrics_text(mt, now);
	if (mt->efd < 0 || mt->text == NULL) {
		snprintf(err, len, "metrics: %s", mt->efd < 0 ? "eventfd failed" : "out of memory");
		mgr_metrics_free(mt);
		return NULL;
	}
	mt->len = strlen(mt->text);
	mt->text_ms = lb_now_ms();
	mt->srv = lb_metrics_start(cfg, serve, mt, err, len);
	if (mt->srv == NULL) {
		mgr_metrics_free(mt);
		return NULL;
	}
	LB_INFO("metrics: serving %s", lb_metrics_url(mt->srv));
	return mt;
}

void
mgr_metrics_free(struct mgr_metrics *mt)
{
	if (mt == NULL)
		return;
	lb_metrics_stop(mt->srv); /* no scrape reads mt once this returns */
	if (mt->efd >= 0)
		close(mt->efd);
	pthread_cond_destroy(&mt->rendered);
	pthread_mutex_destroy(&mt->lock);
	free(mt->text);
	free(mt);
}
