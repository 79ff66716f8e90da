/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-manager: owns the desired flow table, turns its changes into
 * versions and pushes them to every mux and host agent with two-phase
 * commit (docs/manager.md has the operator's view, docs/architecture.md
 * the modules). This file only wires the subsystems together and runs the
 * loop; each keeps its own state behind its own handle.
 *
 *   transport (mgr_transport)  -> events up -> member protocol (mgr_members)
 *                                           -> operator API (mgr_api)
 *   member protocol            -> events    -> commit driver (mgr_driver)
 *   commit driver              -> sends     -> member protocol (its out callbacks)
 *   VIP probes (mgr_vip_probe) -> fences    -> commit driver
 *   DIP prober (mgr_dip_prober) -> verdicts -> DIP health -> commit driver
 *   member protocol            -> STATUS    -> flow counters (mgr_stats),
 *                                              metrics (mgr_metrics)
 *   commit driver              -> committed -> metrics (the sync delay)
 *
 * Start-up: configuration, database (locked: one manager per database),
 * the committed version and the desired table from it, recovery of a round
 * a crash interrupted, then the sockets. Rounds wait MGR_GRACE_MS so that
 * members reconnect first. The loop is single-threaded: poll() on the
 * sockets' receive descriptors with a timeout to the next deadline. Beside
 * it run the listener guard's thread and nng's own threads.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lb_log.h"
#include "lb_notify.h"
#include "mgr_api.h"
#include "mgr_check.h"
#include "mgr_clock.h"
#include "mgr_config.h"
#include "mgr_dip_prober.h"
#include "mgr_driver.h"
#include "mgr_guard.h"
#include "mgr_ha.h"
#include "mgr_health.h"
#include "mgr_members.h"
#include "mgr_metrics.h"
#include "mgr_stats.h"
#include "mgr_store.h"
#include "mgr_transport.h"
#include "mgr_vip_probe.h"

/* The subsystems, and nothing else: each keeps its own state. */
struct mgr {
	struct mgr_config cfg;
	struct mgr_store *store;
	struct mgr_dip_prober *dip;
	struct mgr_health *health;
	struct mgr_driver *driver;
	struct mgr_transport *transport;
	struct mgr_guard *guard;
	struct mgr_members *members;
	struct mgr_vip_probe *vip;
	struct mgr_api *api;
	struct mgr_ha *ha; /* store = "etcd": the election (NULL: a single manager) */
	struct mgr_stats *stats;
	struct mgr_metrics *metrics;
	bool stopping;
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: sluice-manager -c FILE [-v]\n"
		   "       sluice-manager --check -c FILE\n"
		   "  -c FILE           the configuration (docs/manager.md)\n"
		   "  -v                debug logging\n"
		   "  --check           validate the configuration and the files it names,\n"
		   "                    print FILE: ok or FILE:LINE: field: message, exit 0 or 1\n"
		   "  --syslog-prefix   log lines as <priority>message (journald; automatic\n"
		   "                    when stderr is the journal)\n");
}

static int
signals(void)
{
	sigset_t set;

	/* Blocked before nng starts its threads, so they inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

static void
on_signal(struct mgr *m, int fd)
{
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			LB_WARN("SIGHUP: the manager does not reload its configuration; restart it "
				"(flow-table changes go through sluicectl)");
			continue;
		}
		LB_INFO("%s: stopping", si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
		m->stopping = true;
	}
}

/* ---- the wiring: each subsystem's callbacks, to the next one ---- */

static void
on_member_msg(void *ctx, uint32_t pipe, const struct lb_msg *msg, uint64_t now)
{
	struct mgr *m = ctx;

	if (m->members == NULL) { /* a standby */
		mgr_ha_standby_member(m->ha, m->transport, pipe, msg);
		return;
	}
	mgr_members_on_msg(m->members, pipe, msg, now);
}

static void
on_member_malformed(void *ctx, uint32_t pipe, const char *why, bool first)
{
	struct mgr *m = ctx;

	if (m->members != NULL)
		mgr_members_on_malformed(m->members, pipe, why, first);
}

static void
on_member_gone(void *ctx, uint32_t pipe, uint64_t now)
{
	struct mgr *m = ctx;

	if (m->members != NULL)
		mgr_members_on_gone(m->members, pipe, now);
}

static void
on_ctl_request(
	void *ctx, const struct lb_msg *req, const char *asker, struct lb_msg *rep, uint64_t now)
{
	struct mgr *m = ctx;

	if (m->api == NULL) { /* a standby */
		mgr_ha_standby_ctl(m->ha, rep);
		return;
	}
	mgr_api_handle(m->api, req, asker, rep, now);
}

static void
driver_send(void *ctx, int member, const uint8_t *buf, size_t len, uint64_t now)
{
	struct mgr *m = ctx;

	mgr_members_send(m->members, member, buf, len, now);
}

static void
driver_send_msg(void *ctx, int member, const struct lb_msg *msg, uint64_t now)
{
	struct mgr *m = ctx;

	mgr_members_send_msg(m->members, member, msg, now);
}

static void
driver_snapshot(void *ctx, int member, uint64_t now)
{
	struct mgr *m = ctx;

	mgr_members_send_snapshot(m->members, member, now);
}

/* A version committed: its snapshot to encode, the time for the sync delay. */
static void
driver_committed(void *ctx)
{
	struct mgr *m = ctx;

	mgr_members_committed(m->members);
	mgr_metrics_committed(m->metrics, mgr_driver_commit(m->driver)->committed, mgr_now_ms());
}

/* A member's STATUS: a mux's flow counters, what it runs (the sync delay). */
static void
member_status(void *ctx, int member, const struct lb_msg *st, uint64_t now)
{
	struct mgr *m = ctx;

	if (st->n_flows > 0 || st->flows_total == 0)
		mgr_stats_status(m->stats, member, st->flows, st->n_flows, st->flows_first,
			st->flows_total, now);
	mgr_metrics_status(m->metrics, member, st->version, now);
}

static void
member_gone(void *ctx, int member)
{
	struct mgr *m = ctx;

	mgr_stats_forget(m->stats, member);
	mgr_metrics_gone(m->metrics, member);
}

/* A mux's probe address, learnt from its hello. */
static void
member_hello(void *ctx, int member, const char *id, const struct lb_addr *probe_addr,
	const struct lb_addr *probe_addr6)
{
	struct mgr *m = ctx;
	struct mgr_vip_env env;

	mgr_members_vip_env(m->members, &env);
	mgr_vip_probe_hello(m->vip, &env, member, id, probe_addr, probe_addr6);
}

/* The VIP probes fence a mux through the commit state machine; it withdraws at once. */
static void
vip_fence(void *ctx, int member, const char *why, uint64_t now)
{
	struct mgr *m = ctx;

	mgr_driver_fence(m->driver, member, why);
	mgr_driver_run(m->driver, now);
	mgr_members_notify(m->members, now);
}

/* A mux stays withdrawn while its VIP probes fail (core/mgr_notice.h). */
static bool
member_probe_failing(void *ctx, int member, char *why, size_t len)
{
	struct mgr *m = ctx;
	struct mgr_vip_env env;

	mgr_members_vip_env(m->members, &env);
	return mgr_vip_probe_failing(m->vip, &env, member, why, len);
}

/* ---- start and stop ---- */

/*
 * The sockets, the listeners and their guard. Until start_members() (a
 * standby: until it is elected) the callbacks answer as a standby.
 */
static int
start_network(struct mgr *m, char *err, size_t len)
{
	const struct mgr_transport_ops ops = {
		.ctx = m,
		.member_msg = on_member_msg,
		.member_malformed = on_member_malformed,
		.member_gone = on_member_gone,
		.ctl_request = on_ctl_request,
	};
	const struct mgr_config *c = &m->cfg;
	int rv;

	m->transport = mgr_transport_open(c, &ops, err, len);
	if (m->transport == NULL)
		return -1;
	/* The guard checks the TLS listeners with our own certificate. */
	m->guard = mgr_guard_new(mgr_transport_tls(m->transport), c->mc_has_tls ? c->mc_cert : NULL,
		c->mc_has_tls ? c->mc_key : NULL);
	if (m->guard == NULL) {
		snprintf(err, len, "listener guard: out of memory");
		return -1;
	}
	if (mgr_transport_listen(m->transport, m->guard, err, len) != 0)
		return -1;
	if ((rv = mgr_guard_start(m->guard)) != 0) {
		snprintf(err, len, "listener guard: %s", strerror(rv));
		return -1;
	}
	return 0;
}

/* The member protocol on the sockets, fed by the commit driver. */
static int
start_members(struct mgr *m, char *err, size_t len)
{
	const struct mgr_members_hooks hooks = {.ctx = m,
		.hello = member_hello,
		.status = member_status,
		.gone = member_gone,
		.probe_failing = member_probe_failing};
	struct mgr_driver_out out;

	m->members = mgr_members_new(m->transport, m->driver, &hooks);
	if (m->members == NULL) {
		snprintf(err, len, "members: out of memory");
		return -1;
	}
	out = (struct mgr_driver_out){.ctx = m,
		.send = driver_send,
		.send_msg = driver_send_msg,
		.snapshot = driver_snapshot,
		.committed = driver_committed};
	mgr_driver_set_out(m->driver, &out);
	return 0;
}

/* What arrived (fds: members, ctl, pipes, signals, in that order first). */
static void
on_ready(struct mgr *m, const struct pollfd *fds, int sig_fd, uint64_t now)
{
	if (fds[3].revents)
		on_signal(m, sig_fd);
	if (fds[2].revents)
		mgr_transport_recv_pipes(m->transport, now);
	if (fds[0].revents)
		mgr_transport_recv_members(m->transport, now);
	if (fds[1].revents)
		mgr_transport_recv_ctl(m->transport, now);
}

/*
 * store = "etcd": stand by, answering sluicectl and members with the
 * leader's URLs, until this manager is elected (true) or stopped (false).
 */
static bool
stand_by(struct mgr *m, int sig_fd)
{
	struct pollfd fds[4] = {
		{.fd = mgr_transport_fd_members(m->transport), .events = POLLIN},
		{.fd = mgr_transport_fd_ctl(m->transport), .events = POLLIN},
		{.fd = mgr_transport_fd_pipes(m->transport), .events = POLLIN},
		{.fd = sig_fd, .events = POLLIN},
	};

	while (!m->stopping) {
		uint64_t now = mgr_now_ms(), next = mgr_ha_tick(m->ha, now);
		int timeout = next <= now ? 0 : next - now > 200 ? 200 : (int)(next - now);

		if (mgr_ha_term(m->ha) != 0)
			return true;
		if (poll(fds, 4, timeout) < 0 && errno != EINTR) {
			LB_ERR("poll: %s", strerror(errno));
			return false;
		}
		on_ready(m, fds, sig_fd, mgr_now_ms());
	}
	return false;
}

/*
 * The guard's thread and nng's close can hang (nng 1.5.2): stop both, and
 * say whether everything they may still use can be freed.
 */
static bool
stop_network(struct mgr *m)
{
	bool left = false;

	if (m->members != NULL)
		mgr_members_flush(m->members);
	if (!mgr_guard_stop(m->guard))
		left = true; /* its thread may still read the guard and the TLS config */
	if (m->transport != NULL && !mgr_transport_close(m->transport))
		return false; /* nng may still use what it was given: keep it */
	return !left;
}

static void
loop(struct mgr *m, int sig_fd)
{
	struct mgr_vip_env env;
	enum { FD_MEMBERS, FD_CTL, FD_PIPES, FD_SIG, FD_DIP, FD_VIP, FD_VIP6, FD_METRICS, FD_N };
	struct pollfd fds[FD_N] = {
		[FD_MEMBERS] = {.fd = mgr_transport_fd_members(m->transport), .events = POLLIN},
		[FD_CTL] = {.fd = mgr_transport_fd_ctl(m->transport), .events = POLLIN},
		[FD_PIPES] = {.fd = mgr_transport_fd_pipes(m->transport), .events = POLLIN},
		[FD_SIG] = {.fd = sig_fd, .events = POLLIN},
		[FD_DIP] = {.fd = mgr_dip_prober_fd(m->dip), .events = POLLIN},
		/* the VIP probers' raw sockets: -1 when off (poll ignores them) */
		[FD_VIP] = {.fd = mgr_vip_probe_fd(m->vip), .events = POLLIN},
		[FD_VIP6] = {.fd = mgr_vip_probe_fd6(m->vip), .events = POLLIN},
		/* a scrape waits on it for a fresh render */
		[FD_METRICS] = {.fd = mgr_metrics_fd(m->metrics), .events = POLLIN},
	};

	while (!m->stopping) {
		uint64_t now = mgr_now_ms(), d, t;
		int timeout;

		if (mgr_dip_prober_tick(m->dip, m->health, now))
			mgr_driver_health(m->driver, now);
		mgr_driver_tick(m->driver, now);
		mgr_members_vip_env(m->members, &env);
		mgr_vip_probe_tick(m->vip, &env, now);
		mgr_members_tick(m->members, now);
		d = mgr_driver_next_deadline(m->driver, now);
		t = mgr_members_next_deadline(m->members, now);
		if (t < d)
			d = t;
		t = mgr_health_next_deadline(m->health);
		if (t < d)
			d = t;
		t = mgr_vip_probe_next_deadline(m->vip);
		if (t < d)
			d = t;
		if (m->ha != NULL) {
			t = mgr_ha_tick(m->ha, now);
			if (mgr_ha_deposed(m->ha))
				break;
			if (t < d)
				d = t;
		}
		/* At least once a second: contact ages and silence checks stay fresh. */
		timeout = d <= now ? 0 : d - now > 1000 ? 1000 : (int)(d - now);
		if (poll(fds, FD_N, timeout) < 0 && errno != EINTR) {
			LB_ERR("poll: %s", strerror(errno));
			break;
		}
		now = mgr_now_ms();
		/* Probe results first: the rest of this turn sees them. */
		if (fds[FD_DIP].revents && mgr_dip_prober_io(m->dip, m->health, now))
			mgr_driver_health(m->driver, now);
		if (fds[FD_VIP].revents || fds[FD_VIP6].revents) {
			mgr_members_vip_env(m->members, &env);
			mgr_vip_probe_io(m->vip, &env, now);
		}
		on_ready(m, fds, sig_fd, now); /* FD_MEMBERS .. FD_SIG */
		if (fds[FD_METRICS].revents)
			mgr_metrics_tick(m->metrics, now);
	}
}

static void
mgr_free(struct mgr *m)
{
	/* The database first: nng 1.5.2's close can hang (docs/reliability.md). */
	mgr_store_close(m->store);
	m->store = NULL;
	/* no scrape reads the subsystems' text once this returns */
	mgr_metrics_free(m->metrics);
	m->metrics = NULL;
	if (!stop_network(m))
		return; /* a thread may still read what it was given: the process is ending */
	mgr_stats_free(m->stats);
	mgr_api_free(m->api);
	mgr_vip_probe_free(m->vip);
	mgr_members_free(m->members);
	mgr_guard_free(m->guard);
	mgr_transport_free(m->transport);
	mgr_driver_free(m->driver);
	mgr_health_free(m->health); /* before the prober: it releases the probes */
	mgr_dip_prober_free(m->dip);
	mgr_ha_free(m->ha);
	free(m);
}

int
main(int argc, char **argv)
{
	enum { OPT_CHECK = 256, OPT_SYSLOG_PREFIX };
	static const struct option longopts[] = {
		{"check", no_argument, NULL, OPT_CHECK},
		{"syslog-prefix", no_argument, NULL, OPT_SYSLOG_PREFIX},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *cfg_path = NULL;
	enum lb_log_level lvl = LB_LOG_INFO;
	bool check = false, syslog_prefix = false;
	struct lb_cfg_err cerr;
	struct mgr_api_deps deps;
	struct mgr_metrics_deps mdeps;
	char err[512];
	struct mgr *m;
	int opt, sig_fd, rc = 1;

	lb_log_init("sluice-manager", LB_LOG_INFO);
	while ((opt = getopt_long(argc, argv, "c:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			cfg_path = optarg;
			break;
		case 'v':
			lvl = LB_LOG_DEBUG;
			break;
		case OPT_CHECK:
			check = true;
			break;
		case OPT_SYSLOG_PREFIX:
			syslog_prefix = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (cfg_path == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	lb_log_init("sluice-manager", lvl);
	if (syslog_prefix)
		lb_log_set_journal(true);
	if (check) {
		static struct mgr_config cc;

		if (mgr_config_load(cfg_path, &cc, &cerr) != 0 || mgr_check(&cc, &cerr) != 0) {
			fprintf(stderr, "%s\n", cerr.msg);
			return 1;
		}
		printf("%s: ok\n", cfg_path);
		return 0;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		LB_ERR("out of memory");
		return 1;
	}
	m->stats = mgr_stats_new();
	if (m->stats == NULL) {
		LB_ERR("out of memory");
		goto out;
	}
	m->dip = mgr_dip_prober_new();
	m->health = m->dip != NULL ? mgr_health_new(mgr_dip_prober_release, m->dip) : NULL;
	if (m->health == NULL) {
		LB_ERR("health probes: %s", strerror(errno));
		goto out;
	}
	if (mgr_config_load(cfg_path, &m->cfg, &cerr) != 0) {
		LB_ERR("%s", cerr.msg);
		goto out;
	}
	sig_fd = signals();
	if (sig_fd < 0) {
		LB_ERR("signals: %s", strerror(errno));
		goto out;
	}
	if (m->cfg.mc_store == MGR_STORE_ETCD) {
		m->store = mgr_store_open_etcd(&m->cfg, err, sizeof(err));
		m->ha = m->store != NULL ? mgr_ha_new(&m->cfg, m->store) : NULL;
		if (m->store == NULL || m->ha == NULL) {
			LB_ERR("%s", m->store == NULL ? err : "election: out of memory");
			goto out;
		}
		if (start_network(m, err, sizeof(err)) != 0) {
			LB_ERR("%s", err);
			goto out;
		}
		LB_INFO("standing by as %s: campaigning on etcd (prefix %s, lease %u s)",
			m->cfg.mc_id, m->cfg.mc_etcd_prefix, m->cfg.mc_lease_ttl_s);
		/*
		 * A standby is up and doing its job (answering with the leader's
		 * URL, campaigning): ready for systemd, or its start would time
		 * out, and the unit restart it, for as long as it stands by.
		 */
		lb_notify_ready("standing by: campaigning on etcd");
		if (!stand_by(m, sig_fd)) {
			rc = 0;
			LB_INFO("stopped while standing by");
			mgr_ha_stop(m->ha, mgr_now_ms());
			goto out;
		}
		LB_INFO("elected, term %" PRIu64 ": starting from the store", mgr_ha_term(m->ha));
	} else {
		m->store = mgr_store_open(m->cfg.mc_database, err, sizeof(err));
		if (m->store == NULL) {
			LB_ERR("%s", err);
			goto out;
		}
	}
	m->driver = mgr_driver_new(&m->cfg, m->store, m->health);
	if (m->driver == NULL) {
		LB_ERR("out of memory");
		goto out;
	}
	if (mgr_driver_load(m->driver, mgr_now_ms()) != 0)
		goto out;
	if ((m->transport == NULL && start_network(m, err, sizeof(err)) != 0) ||
		start_members(m, err, sizeof(err)) != 0) {
		LB_ERR("%s", err);
		goto out;
	}
	m->vip = mgr_vip_probe_new(m->cfg.mc_vip_probe_interval_ms, m->cfg.mc_vip_probe_failures,
		m->cfg.mc_vote_timeout_ms, vip_fence, m, mgr_now_ms());
	deps = (struct mgr_api_deps){.cfg = &m->cfg,
		.driver = m->driver,
		.store = m->store,
		.health = m->health,
		.dip = m->dip,
		.members = m->members,
		.vip = m->vip,
		.transport = m->transport,
		.guard = m->guard};
	deps.stats = m->stats;
	m->api = m->vip != NULL ? mgr_api_new(&deps) : NULL;
	if (m->api == NULL) {
		LB_ERR("VIP probes, operator API: out of memory");
		goto out;
	}
	mdeps = (struct mgr_metrics_deps){.driver = m->driver,
		.health = m->health,
		.dip = m->dip,
		.members = m->members,
		.vip = m->vip,
		.stats = m->stats};
	m->metrics = mgr_metrics_new(&mdeps, &m->cfg.mc_metrics, mgr_now_ms(), err, sizeof(err));
	if (m->metrics == NULL) {
		LB_ERR("%s", err);
		goto out;
	}
	mgr_driver_start(m->driver, mgr_now_ms());
	LB_INFO("running: version %" PRIu64 ", vote timeout %u ms, batch %u ms, health batch %u ms",
		mgr_driver_commit(m->driver)->committed, m->cfg.mc_vote_timeout_ms,
		m->cfg.mc_batch_ms, m->cfg.mc_health_batch_ms);
	/* Recovered: the committed version resumed, the sockets listening. */
	snprintf(err, sizeof(err), "running: version %" PRIu64,
		mgr_driver_commit(m->driver)->committed);
	lb_notify_ready(err);
	loop(m, sig_fd);
	lb_notify_stopping();
	rc = 0;
	if (m->ha != NULL && mgr_ha_deposed(m->ha))
		rc = MGR_HA_EXIT_DEPOSED;
	else if (m->ha != NULL)
		mgr_ha_stop(m->ha, mgr_now_ms()); /* the standbys take over at once */
	LB_INFO("stopped at version %" PRIu64, mgr_driver_commit(m->driver)->committed);
out:
	mgr_free(m);
	return rc;
}
