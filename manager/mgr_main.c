/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-manager: owns the desired flow table, turns its changes into
 * versions and pushes them to every mux and host agent with two-phase
 * commit (see mgr.h for the modules, docs/manager.md for the operator's
 * view).
 *
 * Start-up: configuration, database (locked: one manager per database),
 * the committed version and the desired table from it, recovery of a round
 * a crash interrupted, then the sockets. Rounds wait MGR_GRACE_MS so that
 * members reconnect first. The loop is single-threaded: poll() on the
 * sockets' receive descriptors with a timeout to the next deadline.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "lb_maglev.h"
#include "mgr.h"
#include "mgr_clock.h"
#include "mgr_dip_prober.h"
#include "mgr_guard.h"
#include "mgr_snap.h"
#include "mgr_transport.h"
#include "mgr_text.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: sluice-manager -c FILE [-v]\n"
		   "  -c FILE   the configuration (docs/manager.md)\n"
		   "  -v        debug logging\n");
}

static void
max_ids(const struct lb_ftable *t, struct mgr_meta *meta)
{
	uint32_t i, j;

	/* Counters stay above every id in use, whatever the database said. */
	for (i = 0; i < t->n_services; i++) {
		const struct lb_service_cfg *s = &t->services[i];

		if (s->id >= meta->mm_next_service_id)
			meta->mm_next_service_id = s->id + 1;
		for (j = 0; j < s->n_backends; j++)
			if (s->backends[j].id >= meta->mm_next_backend_id)
				meta->mm_next_backend_id = s->backends[j].id + 1;
	}
}

/* The seed: the configuration's, else the database's, else a new random one. */
static int
load_meta(struct mgr *m)
{
	struct mgr_meta *meta = &m->meta;
	bool changed = false;

	if (mgr_store_load_meta(m->store, meta) != 0) {
		LB_ERR("%s", mgr_store_error(m->store));
		return -1;
	}
	if (m->cfg.mc_has_seed && (!meta->mm_has_seed || meta->mm_seed.k0 != m->cfg.mc_seed.k0 ||
					  meta->mm_seed.k1 != m->cfg.mc_seed.k1)) {
		if (meta->mm_has_seed)
			LB_WARN("hash_seed: the configuration's replaces the database's; the next "
				"version carries it");
		meta->mm_seed = m->cfg.mc_seed;
		meta->mm_has_seed = true;
		changed = true;
	}
	if (!meta->mm_has_seed) {
		if (getrandom(&meta->mm_seed, sizeof(meta->mm_seed), 0) != sizeof(meta->mm_seed)) {
			LB_ERR("getrandom: %s", strerror(errno));
			return -1;
		}
		meta->mm_has_seed = true;
		changed = true;
		LB_INFO("hash seed generated and kept in the database");
	}
	if (m->cfg.mc_has_maglev_size && meta->mm_maglev_size != m->cfg.mc_maglev_size) {
		meta->mm_maglev_size = m->cfg.mc_maglev_size;
		changed = true;
	}
	if (meta->mm_maglev_size == 0) {
		meta->mm_maglev_size = LB_MAGLEV_DEFAULT_SIZE;
		changed = true;
	}
	if (changed && mgr_store_save_meta(m->store, meta) != 0) {
		LB_ERR("%s", mgr_store_error(m->store));
		return -1;
	}
	return 0;
}

/* services_file: the desired table (and its pools) at every start. */
static int
load_services_file(struct mgr *m, struct lb_ftable *out, struct mgr_pools *pools)
{
	struct lb_cfg_err e;
	char err[LB_CFG_ERR_LEN];
	config_t c;
	int rc;

	if (lb_cfg_read_file(&c, m->cfg.mc_services_file, &e) != 0) {
		LB_ERR("%s", e.msg);
		return -1;
	}
	rc = mgr_services_load(
		m, &c, m->cfg.mc_services_file, &m->meta, out, pools, err, sizeof(err));
	config_destroy(&c);
	if (rc != 0) {
		LB_ERR("%s", err);
		return -1;
	}
	if (m->cfg.mc_has_seed &&
		(out->seed.k0 != m->cfg.mc_seed.k0 || out->seed.k1 != m->cfg.mc_seed.k1)) {
		LB_ERR("%s: flow_table.hash_seed differs from manager.hash_seed in %s: set one",
			m->cfg.mc_services_file, m->cfg.mc_path);
		lb_ftable_free(out);
		mgr_pools_free(pools);
		return -1;
	}
	return 0;
}

static int
load_tables(struct mgr *m)
{
	uint8_t stored[LB_DIGEST_LEN];
	char hex[MGR_HEX_DIGEST], hex2[MGR_HEX_DIGEST];
	uint64_t version;
	bool found, changed = false;

	if (mgr_store_load_committed(m->store, &version, stored, &m->committed) != 0) {
		LB_ERR("%s", mgr_store_error(m->store));
		return -1;
	}
	if (version == 0) {
		/* Nothing committed yet: version 0 is the empty table with our options. */
		m->committed.seed = m->meta.mm_seed;
		m->committed.maglev_size = m->meta.mm_maglev_size;
	}
	lb_ftable_sort(&m->committed);
	lb_ftable_digest(&m->committed, m->committed_digest);
	m->committed_version = version;
	if (version != 0 && memcmp(stored, m->committed_digest, LB_DIGEST_LEN) != 0)
		LB_WARN("version %" PRIu64 ": stored digest %s, table digest %s: using the table's",
			version, mgr_digest_hex(stored, hex),
			mgr_digest_hex(m->committed_digest, hex2));
	max_ids(&m->committed, &m->meta);
	mgr_commit_init(m->commit, version, m->committed_digest, m->cfg.mc_vote_timeout_ms);

	if (mgr_store_load_desired(m->store, &found, &m->desired) != 0 ||
		mgr_store_load_pools(m->store, &m->pools) != 0) {
		LB_ERR("%s", mgr_store_error(m->store));
		return -1;
	}
	if (!found) {
		if (lb_ftable_copy(&m->desired, &m->committed) != 0)
			return -1;
		changed = true;
	}
	lb_ftable_sort(&m->desired);
	max_ids(&m->desired, &m->meta);
	/* The configuration's options apply to what comes next. */
	if (m->desired.seed.k0 != m->meta.mm_seed.k0 || m->desired.seed.k1 != m->meta.mm_seed.k1 ||
		m->desired.maglev_size != m->meta.mm_maglev_size) {
		m->desired.seed = m->meta.mm_seed;
		m->desired.maglev_size = m->meta.mm_maglev_size;
		changed = true;
	}
	if (m->cfg.mc_services_file[0] != '\0') {
		struct lb_ftable ft;
		struct mgr_pools ps;

		if (load_services_file(m, &ft, &ps) != 0)
			return -1;
		lb_ftable_sort(&ft);
		lb_ftable_free(&m->desired);
		mgr_pools_free(&m->pools);
		m->desired = ft;
		m->pools = ps;
		changed = true;
	}
	mgr_pools_prune(&m->pools, &m->desired);
	lb_ftable_digest(&m->desired, m->desired_digest);
	if (changed && mgr_store_save_desired(m->store, &m->desired, &m->pools, &m->meta) != 0) {
		LB_ERR("%s", mgr_store_error(m->store));
		return -1;
	}
	/* What members run says how backends were: no flapping because we restarted. */
	if (lb_ftable_copy(&m->base_desired, &m->desired) != 0 ||
		mgr_pools_copy(&m->base_pools, &m->pools) != 0 ||
		mgr_health_sync(m->health, &m->desired, &m->pools, &m->committed, true,
			mgr_now_ms()) != 0) {
		LB_ERR("out of memory");
		return -1;
	}
	m->eff_dirty = true;
	mgr_effective_refresh(m, mgr_now_ms());
	LB_INFO("committed version %" PRIu64 " (digest %s): %u services, %u backends%s", version,
		mgr_digest_hex(m->committed_digest, hex), m->committed.n_services,
		lb_ftable_backend_count(&m->committed),
		memcmp(m->effective_digest, m->committed_digest, LB_DIGEST_LEN) != 0
			? "; the effective table differs: a round follows the grace period"
			: "");
	return 0;
}

/* A round the last run left undecided or unannounced. */
static int
plan_recovery(struct mgr *m)
{
	struct mgr_round_rec r;
	uint64_t committed = m->commit->committed;

	if (mgr_store_last_round(m->store, &r) != 0) {
		LB_ERR("%s", mgr_store_error(m->store));
		return -1;
	}
	if (r.mr_id == 0)
		return 0;
	if (r.mr_state == MGR_ROUND_PREPARED) {
		/* No commit record: nobody may have committed it. ABORT it. */
		if (mgr_store_round_abort(m->store, 0, "manager restarted") != 0)
			LB_ERR("%s", mgr_store_error(m->store));
		if (r.mr_version != committed + 1)
			return 0;
		m->rec_pending = true;
		m->rec_decided = false;
	} else if (r.mr_state == MGR_ROUND_COMMITTED && r.mr_version == committed) {
		/* Committed, maybe before every COMMIT was out: say it again. */
		m->rec_pending = true;
		m->rec_decided = true;
	} else {
		return 0;
	}
	m->rec_version = r.mr_version;
	memcpy(m->rec_digest, r.mr_digest, LB_DIGEST_LEN);
	LB_INFO("the last round, version %" PRIu64 ", was %s: %s after the grace period",
		r.mr_version, m->rec_decided ? "committed" : "left undecided",
		m->rec_decided ? "COMMIT goes out again" : "ABORT goes out");
	return 0;
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

static bool
member_connected(const void *ctx, int i)
{
	const struct mgr *m = ctx;

	return m->peers[i].mp_connected;
}

void
mgr_vip_env(const struct mgr *m, struct mgr_vip_env *e)
{
	e->commit = m->commit;
	e->committed = &m->committed;
	e->version = m->committed_version;
	e->started = m->recovered;
	e->connected = member_connected;
	e->ctx = m;
}

/* The VIP probes fence a mux through the commit state machine. */
static void
vip_fence(void *ctx, int i, const char *why, uint64_t now)
{
	struct mgr *m = ctx;

	mgr_commit_fence(m->commit, m->commit->members[i].id, why);
	mgr_run_actions(m, now);
}

/* ---- the transport's events ---- */

static void
on_member_msg(void *ctx, uint32_t pipe, const struct lb_msg *msg, uint64_t now)
{
	mgr_net_member_msg(ctx, pipe, msg, now);
}

static void
on_member_malformed(void *ctx, uint32_t pipe, const char *why, bool first)
{
	mgr_net_member_malformed(ctx, pipe, why, first);
}

static void
on_member_gone(void *ctx, uint32_t pipe, uint64_t now)
{
	mgr_net_gone(ctx, pipe, now);
}

static void
on_ctl_request(
	void *ctx, const struct lb_msg *req, const char *asker, struct lb_msg *rep, uint64_t now)
{
	mgr_ctl_handle(ctx, req, asker, rep, now);
}

/* Sockets, the snapshots, the listeners and their guard. */
static int
start_transport(struct mgr *m, char *err, size_t len)
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

	m->snap = mgr_snap_new();
	if (m->snap == NULL) {
		snprintf(err, len, "snapshots: out of memory");
		return -1;
	}
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

/*
 * The guard's thread and nng's close can hang (nng 1.5.2): stop both, and
 * say whether everything they may still use can be freed.
 */
static bool
stop_transport(struct mgr *m)
{
	bool left = false;
	uint32_t i;

	for (i = 0; i < MGR_MAX_MEMBERS; i++)
		mgr_sendq_flush(&m->peers[i].mp_q);
	if (!mgr_guard_stop(m->guard))
		left = true; /* its thread may still read the guard and the TLS config */
	if (m->transport != NULL && !mgr_transport_close(m->transport))
		return false; /* nng may still use what it was given: keep it */
	if (left)
		return false;
	mgr_guard_free(m->guard);
	mgr_transport_free(m->transport);
	m->guard = NULL;
	m->transport = NULL;
	return true;
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
			mgr_effective_touch(m, now);
		mgr_round_tick(m, now);
		mgr_vip_env(m, &env);
		mgr_vip_probe_tick(m->vip, &env, now);
		mgr_net_pump(m, now);
		d = mgr_round_next_deadline(m);
		t = mgr_net_next_deadline(m, now);
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
			mgr_effective_touch(m, now);
		if (fds[5].revents) {
			mgr_vip_env(m, &env);
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
	if (!stop_transport(m))
		return; /* a thread may still read m: the process is ending */
	mgr_snap_free(m->snap);
	mgr_health_free(m->health); /* before the prober: it releases the probes */
	mgr_dip_prober_free(m->dip);
	mgr_vip_probe_free(m->vip);
	lb_ftable_free(&m->committed);
	lb_ftable_free(&m->desired);
	lb_ftable_free(&m->base_desired);
	lb_ftable_free(&m->effective);
	mgr_pools_free(&m->pools);
	mgr_pools_free(&m->base_pools);
	lb_ftable_free(&m->round.r_next);
	lb_ftable_free(&m->round.r_desired);
	mgr_pools_free(&m->round.r_pools);
	free(m->round.r_prepare);
	free(m->commit);
	free(m->acts);
	free(m);
}

int
main(int argc, char **argv)
{
	const char *cfg_path = NULL;
	enum lb_log_level lvl = LB_LOG_INFO;
	struct lb_cfg_err cerr;
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
	if (m == NULL || (m->commit = calloc(1, sizeof(*m->commit))) == NULL ||
		(m->acts = calloc(MGR_MAX_ACTIONS, sizeof(*m->acts))) == NULL) {
		LB_ERR("out of memory");
		return 1;
	}
	m->eff_timer_ms = UINT64_MAX;
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
	if (load_meta(m) != 0 || load_tables(m) != 0 || plan_recovery(m) != 0)
		goto out;
	if (start_transport(m, err, sizeof(err)) != 0) {
		LB_ERR("%s", err);
		goto out;
	}
	m->vip = mgr_vip_probe_new(m->cfg.mc_vip_probe_interval_ms, m->cfg.mc_vip_probe_failures,
		m->cfg.mc_vote_timeout_ms, vip_fence, m, mgr_now_ms());
	if (m->vip == NULL) {
		LB_ERR("VIP probes: out of memory");
		goto out;
	}
	m->start_ms = mgr_now_ms();
	LB_INFO("running: version %" PRIu64 ", vote timeout %u ms, batch %u ms, health batch %u ms",
		m->commit->committed, m->cfg.mc_vote_timeout_ms, m->cfg.mc_batch_ms,
		m->cfg.mc_health_batch_ms);
	loop(m, sig_fd);
	rc = 0;
	LB_INFO("stopped at version %" PRIu64, m->commit->committed);
out:
	mgr_free(m);
	return rc;
}
