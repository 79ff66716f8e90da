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
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lb_log.h"
#include "mgr_api.h"
#include "mgr_clock.h"
#include "mgr_config.h"
#include "mgr_dip_prober.h"
#include "mgr_driver.h"
#include "mgr_guard.h"
#include "mgr_health.h"
#include "mgr_members.h"
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
	bool stopping;
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: sluice-manager -c FILE [-v]\n"
		   "  -c FILE   the configuration (docs/manager.md)\n"
		   "  -v        debug logging\n");
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

	mgr_members_on_msg(m->members, pipe, msg, now);
}

static void
on_member_malformed(void *ctx, uint32_t pipe, const char *why, bool first)
{
	struct mgr *m = ctx;

	mgr_members_on_malformed(m->members, pipe, why, first);
}

static void
on_member_gone(void *ctx, uint32_t pipe, uint64_t now)
{
	struct mgr *m = ctx;

	mgr_members_on_gone(m->members, pipe, now);
}

static void
on_ctl_request(
	void *ctx, const struct lb_msg *req, const char *asker, struct lb_msg *rep, uint64_t now)
{
	struct mgr *m = ctx;

	mgr_api_handle(m->api, req, asker, rep, now);
}

static void
driver_send(void *ctx, int member, const uint8_t *buf, size_t len, uint64_t now)
{
	mgr_members_send(ctx, member, buf, len, now);
}

static void
driver_send_msg(void *ctx, int member, const struct lb_msg *msg, uint64_t now)
{
	mgr_members_send_msg(ctx, member, msg, now);
}

static void
driver_snapshot(void *ctx, int member, uint64_t now)
{
	mgr_members_send_snapshot(ctx, member, now);
}

static void
driver_committed(void *ctx)
{
	mgr_members_committed(ctx);
}

/* A mux's probe address, learnt from its hello. */
static void
member_hello(void *ctx, int member, const char *id, const struct lb_addr *probe_addr)
{
	struct mgr *m = ctx;

	mgr_vip_probe_hello(m->vip, member, id, probe_addr);
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

	return mgr_vip_probe_failing(m->vip, member, why, len);
}

/* ---- start and stop ---- */

/* The sockets, the member protocol on them, the listeners and their guard. */
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
	const struct mgr_members_hooks hooks = {
		.ctx = m, .hello = member_hello, .probe_failing = member_probe_failing};
	const struct mgr_config *c = &m->cfg;
	struct mgr_driver_out out;
	int rv;

	m->transport = mgr_transport_open(c, &ops, err, len);
	if (m->transport == NULL)
		return -1;
	m->members = mgr_members_new(m->transport, m->driver, &hooks);
	if (m->members == NULL) {
		snprintf(err, len, "members: out of memory");
		return -1;
	}
	out = (struct mgr_driver_out){.ctx = m->members,
		.send = driver_send,
		.send_msg = driver_send_msg,
		.snapshot = driver_snapshot,
		.committed = driver_committed};
	mgr_driver_set_out(m->driver, &out);
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
	struct pollfd fds[6] = {
		{.fd = mgr_transport_fd_members(m->transport), .events = POLLIN},
		{.fd = mgr_transport_fd_ctl(m->transport), .events = POLLIN},
		{.fd = mgr_transport_fd_pipes(m->transport), .events = POLLIN},
		{.fd = sig_fd, .events = POLLIN},
		{.fd = mgr_dip_prober_fd(m->dip), .events = POLLIN},
		{.fd = mgr_vip_probe_fd(m->vip), .events = POLLIN}, /* -1 when off: ignored */
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
		/* At least once a second: contact ages and silence checks stay fresh. */
		timeout = d <= now ? 0 : d - now > 1000 ? 1000 : (int)(d - now);
		if (poll(fds, 6, timeout) < 0 && errno != EINTR) {
			LB_ERR("poll: %s", strerror(errno));
			break;
		}
		now = mgr_now_ms();
		/* Probe results first: the rest of this turn sees them. */
		if (fds[4].revents && mgr_dip_prober_io(m->dip, m->health, now))
			mgr_driver_health(m->driver, now);
		if (fds[5].revents) {
			mgr_members_vip_env(m->members, &env);
			mgr_vip_probe_io(m->vip, &env, now);
		}
		if (fds[3].revents)
			on_signal(m, sig_fd);
		if (fds[2].revents)
			mgr_transport_recv_pipes(m->transport, now);
		if (fds[0].revents)
			mgr_transport_recv_members(m->transport, now);
		if (fds[1].revents)
			mgr_transport_recv_ctl(m->transport, now);
	}
}

static void
mgr_free(struct mgr *m)
{
	/* The database first: nng 1.5.2's close can hang (docs/reliability.md). */
	mgr_store_close(m->store);
	m->store = NULL;
	if (!stop_network(m))
		return; /* a thread may still read what it was given: the process is ending */
	mgr_api_free(m->api);
	mgr_vip_probe_free(m->vip);
	mgr_members_free(m->members);
	mgr_guard_free(m->guard);
	mgr_transport_free(m->transport);
	mgr_driver_free(m->driver);
	mgr_health_free(m->health); /* before the prober: it releases the probes */
	mgr_dip_prober_free(m->dip);
	free(m);
}

int
main(int argc, char **argv)
{
	const char *cfg_path = NULL;
	enum lb_log_level lvl = LB_LOG_INFO;
	struct lb_cfg_err cerr;
	struct mgr_api_deps deps;
	char err[512];
	struct mgr *m;
	int opt, sig_fd, rc = 1;

	lb_log_init("sluice-manager", LB_LOG_INFO);
	while ((opt = getopt(argc, argv, "c:vh")) != -1) {
		switch (opt) {
		case 'c':
			cfg_path = optarg;
			break;
		case 'v':
			lvl = LB_LOG_DEBUG;
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
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		LB_ERR("out of memory");
		return 1;
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
	m->store = mgr_store_open(m->cfg.mc_database, err, sizeof(err));
	if (m->store == NULL) {
		LB_ERR("%s", err);
		goto out;
	}
	m->driver = mgr_driver_new(&m->cfg, m->store, m->health);
	if (m->driver == NULL) {
		LB_ERR("out of memory");
		goto out;
	}
	if (mgr_driver_load(m->driver, mgr_now_ms()) != 0)
		goto out;
	if (start_network(m, err, sizeof(err)) != 0) {
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
	m->api = m->vip != NULL ? mgr_api_new(&deps) : NULL;
	if (m->api == NULL) {
		LB_ERR("VIP probes, operator API: out of memory");
		goto out;
	}
	mgr_driver_start(m->driver, mgr_now_ms());
	LB_INFO("running: version %" PRIu64 ", vote timeout %u ms, batch %u ms, health batch %u ms",
		mgr_driver_commit(m->driver)->committed, m->cfg.mc_vote_timeout_ms,
		m->cfg.mc_batch_ms, m->cfg.mc_health_batch_ms);
	loop(m, sig_fd);
	rc = 0;
	LB_INFO("stopped at version %" PRIu64, mgr_driver_commit(m->driver)->committed);
out:
	mgr_free(m);
	return rc;
}
