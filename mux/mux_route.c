/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's side of routing (see mux_route.h): start-up checks, the fork
 * of the speaker, the route thread and the shutdown's withdraw-and-drain.
 * What it reports (summary, JSON, telemetry) is in mux_route_report.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "lb_dpdk.h"
#include "lb_err.h"
#include "lb_log.h"
#include "lb_notify.h"
#include "mux_app.h"
#include "mux_gen.h"
#include "mux_route_int.h"
#include "mux_speaker.h"

#define ROUTE_TICK_MS 100
#define WITHDRAW_WAIT_MS 3000 /* the speaker confirms a withdrawal in ~100 ms */
#define SPEAKER_STOP_MS 3000
/* The rest of a stop after the speaker's (workers, ports, EAL): told to systemd. */
#define STOP_SLACK_MS 10000

/*
 * The file prefix EAL will use: the configuration's, or
 * lb_eal_argv_build()'s default. false: it does not fit out, or is no
 * plain file name (letters, digits, '.', '_', '-'): the run folder is
 * named from it and written into bird.conf between quotes.
 */
static bool
file_prefix(const char *const *args, int n, char *out, size_t len)
{
	const char *p = NULL;
	int i;

	for (i = 0; i < n && p == NULL; i++) {
		if (strncmp(args[i], "--file-prefix=", 14) == 0)
			p = args[i] + 14;
		else if (strcmp(args[i], "--file-prefix") == 0 && i + 1 < n)
			p = args[i + 1];
	}
	if (p == NULL) {
		snprintf(out, len, "sluice-mux-%d", (int)getpid());
		return true;
	}
	if ((size_t)snprintf(out, len, "%s", p) >= len || p[0] == '\0' ||
		strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
			strlen(p) ||
		strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
		return false;
	return true;
}

static bool
local_address_here(uint32_t addr)
{
	struct ifaddrs *ifs, *i;
	bool found = false;

	if (getifaddrs(&ifs) != 0)
		return true; /* cannot tell: let BIRD say */
	for (i = ifs; i != NULL && !found; i = i->ifa_next)
		found = i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
			((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == addr;
	freeifaddrs(ifs);
	return found;
}

/* Create dir and its parents; *made: dir itself was created now. */
static int
mkdir_p(const char *dir, mode_t mode, bool *made)
{
	char p[PATH_MAX];
	char *s;

	*made = false;
	snprintf(p, sizeof(p), "%s", dir);
	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) == 0)
		*made = true;
	else if (errno != EEXIST)
		return -errno;
	return 0;
}

/* Only the files the speaker and BIRD make: run_dir may be an operator's folder. */
static void
remove_run_files(const struct mux_bird_paths *p, bool rm_dir)
{
	const char *const files[] = {p->conf, p->vips, p->ctl, p->log};
	char tmp[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		unlink(files[i]);
		snprintf(tmp, sizeof(tmp), "%s.tmp", files[i]);
		unlink(tmp);
	}
	snprintf(tmp, sizeof(tmp), "%s.old", p->log); /* BIRD's rotated log */
	unlink(tmp);
	if (rm_dir)
		rmdir(p->dir);
}

/*
 * "bird -p -c conf": BIRD parses the generated configuration and exits.
 * Catches a BIRD that is not BIRD 2, or that fails to run at all, before
 * the mux starts. Returns 0, or -1 with BIRD's words in err.
 */
static int
bird_parse_check(const struct mux_route *r, char *err, size_t len)
{
	char out[512] = "";
	size_t got = 0;
	int pfd[2], st;
	uint64_t end = lb_now_ms() + 5000;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0) {
		snprintf(err, len, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, len, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		execl(r->cfg.bird, "bird", "-p", "-c", r->paths.conf, (char *)NULL);
		fprintf(stderr, "cannot run it: %s", strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		uint64_t now = lb_now_ms();
		ssize_t n;

		if (now >= end || poll(&p, 1, (int)(end - now)) <= 0)
			break;
		n = read(pfd[0], out + got, sizeof(out) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(out) - 1)
			break;
	}
	close(pfd[0]);
	out[got] = '\0';
	/* Its output ends as it exits: it is reaped a moment later. */
	while (waitpid(pid, &st, WNOHANG) == 0 && lb_now_ms() < end)
		usleep(1000);
	if (lb_now_ms() >= end && waitpid(pid, &st, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		snprintf(err, len, "bgp.bird: %s -p -c %s did not finish in 5 s", r->cfg.bird,
			r->paths.conf);
		return -1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	out[strcspn(out, "\n")] = '\0';
	snprintf(err, len, "bgp.bird: %s -p -c %s failed (%s %d)%s%s", r->cfg.bird, r->paths.conf,
		WIFEXITED(st) ? "exit status" : "signal",
		WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), out[0] ? ": " : "", out);
	return -1;
}

/* A run folder another live BIRD answers in is not ours to take. */
static bool
run_dir_in_use(const struct mux_bird_paths *p)
{
	struct mux_bird b;
	char err[128];

	if (mux_bird_connect(&b, p->ctl, 200, err, sizeof(err)) != 0)
		return false;
	mux_bird_close(&b);
	return true;
}

struct mux_route *
mux_route_create(const struct mux_bgp_cfg *cfg, bool managed, const char *const *eal_args,
	int n_eal_args, char *err, size_t len)
{
	static char conf[16384];
	struct lb_cfg_err cerr;
	struct mux_route *r;
	char dir[MUX_BGP_RUN_DIR_MAX], prefix[64];
	struct in_addr la = {cfg->local_address};
	struct mux_ann_cfg ac;
	int n, rc;
	pid_t mux = getpid(), pid;

	if (!local_address_here(cfg->local_address)) {
		lb_cfg_error(&cerr, cfg->local_address_setting, NULL,
			"%s is not an address of this host (or its network namespace): the "
			"sessions run from it",
			inet_ntoa(la));
		snprintf(err, len, "%s", cerr.msg);
		return NULL;
	}
	r = lb_zalloc(sizeof(*r), "bgp", err, len);
	if (r == NULL)
		return NULL;
	r->cfg = *cfg;
	r->speaker = -1;
	pthread_mutex_init(&r->lock, NULL);
	if (cfg->run_dir[0] != '\0') {
		snprintf(dir, sizeof(dir), "%s", cfg->run_dir);
	} else {
		if (!file_prefix(eal_args, n_eal_args, prefix, sizeof(prefix))) {
			snprintf(err, len,
				"bgp: the EAL file prefix is not a plain name of at most %zu "
				"characters (letters, digits, '.', '_', '-'), from which to name "
				"the run folder: set bgp.run_dir",
				sizeof(prefix) - 1);
			goto fail;
		}
		if ((size_t)snprintf(dir, sizeof(dir), "/run/sluice/%s", prefix) >= sizeof(dir)) {
			snprintf(err, len, "bgp: /run/sluice/%s is too long: set bgp.run_dir",
				prefix);
			goto fail;
		}
	}
	mux_bird_paths(&r->paths, dir);
	if (run_dir_in_use(&r->paths)) {
		snprintf(err, len, "bgp: %s is the run folder of a running BIRD (another mux?)",
			dir);
		goto fail;
	}
	remove_run_files(&r->paths, false); /* a killed mux's leftovers */
	rc = mkdir_p(dir, 0750, &r->dir_made);
	if (rc != 0) {
		snprintf(err, len, "bgp: cannot create %s: %s", dir, strerror(-rc));
		goto fail;
	}
	r->files_made = true;
	r->dir_made |= cfg->run_dir[0] == '\0'; /* the default folder is ours alone */
	n = mux_bird_conf(&r->cfg, &r->paths, conf, sizeof(conf));
	if (n < 0 || (rc = mux_bird_write_file(r->paths.conf, conf, (size_t)n)) != 0 ||
		(rc = mux_bird_write_file(r->paths.vips, "", 0)) != 0) {
		snprintf(err, len, "bgp: cannot write %s: %s", r->paths.conf,
			n < 0 ? "too long" : strerror(-rc));
		goto fail;
	}
	if (bird_parse_check(r, err, len) != 0)
		goto fail;
	r->page = mmap(
		NULL, sizeof(*r->page), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->page == MAP_FAILED) {
		r->page = NULL;
		snprintf(err, len, "bgp: shared page: %s", strerror(errno));
		goto fail;
	}
	r->page->magic = MUX_RP_MAGIC;
	r->ann = malloc(sizeof(*r->ann));
	if (r->ann == NULL) {
		snprintf(err, len, "bgp: out of memory");
		goto fail;
	}
	ac.managed = managed;
	ac.stall_ms = mux_speaker_stale_ms(cfg);
	mux_announce_init(r->ann, &ac, lb_now_ms());
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, len, "bgp: cannot fork the speaker: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0)
		mux_speaker_main(&r->cfg, &r->paths, r->page, mux);
	r->speaker = pid;
	LB_INFO("bgp: speaker pid %d runs %s from %s (AS %u, %u neighbor%s, next hop %s, hold %u "
		"s, "
		"drain %u s)",
		(int)pid, r->cfg.bird, dir, cfg->local_as, cfg->n_neighbors,
		cfg->n_neighbors == 1 ? "" : "s", inet_ntoa((struct in_addr){cfg->next_hop}),
		cfg->hold_time, cfg->drain_time);
	return r;
fail:
	mux_route_destroy(r);
	return NULL;
}

volatile bool *
mux_route_quit_flag(struct mux_route *r)
{
	return &r->quit;
}

/*
 * The running generation, when it changed: its distinct IPv4 VIPs, the
 * VIPs the manager withdrew (a VIP is held when any of its services is
 * flagged: the manager flags them all alike) and whether it drains this
 * mux. All from one generation, under gen_lock: what is announced matches
 * one version of the table.
 */
static void
feed_table(struct mux_route *r, uint64_t now)
{
	const struct mux_gen *g;
	uint32_t i, n = 0;
	uint32_t *vips;

	pthread_mutex_lock(&r->app->gen_lock);
	g = r->app->ctx.gen;
	if (g == r->last_gen && g->version == r->last_version) {
		pthread_mutex_unlock(&r->app->gen_lock);
		return;
	}
	vips = malloc(sizeof(*vips) * (g->n_services ? g->n_services : 1));
	if (vips == NULL) {
		pthread_mutex_unlock(&r->app->gen_lock);
		return; /* next pass */
	}
	/* IPv4 VIPs only: an IPv6 one is routed to the muxes statically (docs/routing.md). */
	for (i = 0; i < g->n_services; i++)
		if (g->services[i].key.af == LB_AF_INET)
			vips[n++] = g->services[i].key.vip.a32[0];
	if (n < g->n_services && !r->told_v6)
		LB_WARN("bgp: %u IPv6 services: their VIPs are not announced (BGP carries IPv4 "
			"VIPs only); route them to the muxes statically",
			g->n_services - n);
	r->told_v6 = n < g->n_services;
	r->last_gen = g;
	r->last_version = g->version;
	pthread_mutex_lock(&r->lock);
	mux_announce_table(r->ann, g->version, g->n_services, vips, n, now);
	/* Said when it starts and when it ends, not at every version. */
	if ((r->ann->n_dropped != 0) != r->told_dropped) {
		if (r->ann->n_dropped != 0)
			LB_WARN("bgp: %u IPv4 VIPs past the first %u (by address) are not "
				"announced "
				"(vips_dropped in /sluice/route; docs/routing.md, Limits)",
				r->ann->n_dropped, MUX_ANN_MAX_VIPS);
		else
			LB_INFO("bgp: every IPv4 VIP is announced again (at most %u)",
				MUX_ANN_MAX_VIPS);
		r->told_dropped = r->ann->n_dropped != 0;
	}
	for (i = 0; i < n; i++)
		mux_announce_vip_hold(r->ann, vips[i], false, NULL);
	/* withdrawn[] is by service; only IPv4 services are ever flagged (mux_gen.c). */
	for (i = 0; g->withdrawn != NULL && i < g->n_services; i++)
		if (g->withdrawn[i] && g->services[i].key.af == LB_AF_INET)
			mux_announce_vip_hold(r->ann, g->services[i].key.vip.a32[0], true,
				g->withdrawn[i] == MUX_WITHDRAWN_ZONE
					? "withdrawn by the manager in this mux's zone: its "
					  "healthy backends there are below the pool's "
					  "withdraw_below"
					: "withdrawn by the manager: its healthy backends are "
					  "below the pool's withdraw_below");
	if (g->drained != r->ann->drained)
		LB_INFO("bgp: version %llu %s this mux: %s", (unsigned long long)g->version,
			g->drained ? "drains" : "no longer drains",
			g->drained ? "withdrawing every route" : "announcing again");
	mux_announce_drain(r->ann, g->drained);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&r->app->gen_lock);
	free(vips);
}

/*
 * The member's last known good verdict (managed only): active while no
 * leader manages the mux. Under gen_lock, the member's lock. Logged when
 * it changes what a mux with a table does (a mux that has none yet, at
 * its start, withholds everything anyway).
 */
static void
feed_lkg(struct mux_route *r, uint64_t now)
{
	char why[MUX_ANN_TEXT];
	bool active, ok;

	if (!r->app->cfg.managed)
		return;
	pthread_mutex_lock(&r->app->gen_lock);
	active = dp_member_lkg_verdict(&r->app->member, &ok, why, sizeof(why));
	pthread_mutex_unlock(&r->app->gen_lock);
	pthread_mutex_lock(&r->lock);
	if (r->ann->version != 0 &&
		(active != r->ann->lkg_active || (active && ok != r->ann->lkg_ok))) {
		if (!active)
			LB_INFO("bgp: a leader manages this mux again: its word decides");
		else if (ok && !r->ann->sync_known)
			LB_WARN("bgp: no manager since the start: %s: announcing it", why);
		else if (ok)
			LB_WARN("bgp: no manager: %s; the last leader's word stands", why);
		else
			LB_WARN("bgp: no manager: %s: withdrawing", why);
	}
	mux_announce_lkg(r->ann, active, ok, why, now);
	pthread_mutex_unlock(&r->lock);
}

/* Each worker's loop counter: did every one move since the last pass? */
static bool
feed_workers(struct mux_route *r, uint64_t now)
{
	const struct mux_app *app = r->app;
	bool all_moved = true, started = true;
	uint64_t oldest = now;
	int slow = -1;
	uint16_t w;

	for (w = 0; w < app->n_workers && w < MUX_MAX_WORKERS; w++) {
		uint64_t loops = DP_RD(app->workers[w].loops);

		if (loops == 0)
			started = false;
		if (loops != r->loops[w]) {
			r->loops[w] = loops;
			r->progress_ms[w] = now;
		} else {
			all_moved = false;
		}
		if (r->progress_ms[w] <= oldest) {
			oldest = r->progress_ms[w];
			slow = w;
		}
	}
	mux_announce_workers(r->ann, started, slow, oldest);
	return all_moved && started;
}

static bool
feed_ports(struct mux_route *r)
{
	const struct mux_app *app = r->app;
	struct rte_eth_link link;
	uint16_t p;

	for (p = 0; p < app->cfg.n_ports; p++) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(app->ports[p].id, &link) != 0 ||
			link.link_status != RTE_ETH_LINK_UP) {
			mux_announce_port(r->ann, p, app->cfg.ports[p].name);
			return false;
		}
	}
	mux_announce_port(r->ann, -1, NULL);
	return true;
}

/*
 * A speaker that stopped moving while this thread runs (SIGSTOP of the
 * speaker alone) cannot withdraw anything, and its BIRD would go on
 * announcing: kill it, and BIRD dies with it (PR_SET_PDEATHSIG). Time
 * counts only while this thread runs itself: after a stop of the whole
 * process group both resume, and the speaker's first pass is due.
 */
static void
watch_speaker(struct mux_route *r, uint64_t prev_updated, uint64_t now)
{
	uint64_t limit = mux_speaker_stale_ms(&r->cfg);

	if (r->speaker <= 0 || r->speaker_gone)
		return;
	if (r->spk.updated_ms != prev_updated || r->spk_seen_ms == 0 ||
		now - r->last_tick_ms > 1000)
		r->spk_seen_ms = now;
	if (now - r->spk_seen_ms <= limit)
		return;
	LB_ERR("bgp: the speaker (pid %d) has not moved for %llu ms: killing it (its BIRD "
	       "dies with it, the routers withdraw)",
		(int)r->speaker, (unsigned long long)(now - r->spk_seen_ms));
	kill(r->speaker, SIGKILL);
	r->spk_seen_ms = now;
}

static void
check_speaker(struct mux_route *r)
{
	int st;

	if (r->speaker <= 0 || r->speaker_gone || waitpid(r->speaker, &st, WNOHANG) != r->speaker)
		return;
	r->speaker_gone = true;
	r->speaker_errors++;
	if (WIFSIGNALED(st))
		snprintf(r->speaker_exit, sizeof(r->speaker_exit),
			"the speaker (pid %d) was killed by signal %d: BIRD died with it, nothing "
			"is announced until the mux restarts",
			(int)r->speaker, WTERMSIG(st));
	else
		snprintf(r->speaker_exit, sizeof(r->speaker_exit),
			"the speaker (pid %d) exited with status %d: nothing is announced until "
			"the mux restarts",
			(int)r->speaker, WEXITSTATUS(st));
	LB_ERR("bgp: %s", r->speaker_exit);
}

/* SIGTERM/SIGINT: withdraw, wait for the speaker's word, drain, then let main stop. */
static void
shutdown_step(struct mux_route *r, uint64_t now)
{
	const struct mux_rp_speaker *s = &r->spk;
	uint64_t exported;

	switch (r->phase) {
	case MUX_ROUTE_RUNNING:
		return;
	case MUX_ROUTE_WITHDRAWING:
		if (r->speaker_gone || (s->applied_request >= r->mine.request && s->n_vips == 0)) {
			exported = s->last_exported_ms;
			r->withdrawn_ms = now;
			r->drain_until_ms = exported ? exported + r->cfg.drain_time * 1000ull : now;
			LB_INFO("bgp: withdrawn in %llu ms (%s); %s",
				(unsigned long long)(now - r->shutdown_ms),
				r->speaker_gone ? "the speaker is gone" : "BIRD announces nothing",
				r->drain_until_ms > now
					? "draining: forwarding what routers still send"
					: "nothing to drain");
		} else if (now - r->shutdown_ms > WITHDRAW_WAIT_MS) {
			r->withdrawn_ms = now;
			r->drain_until_ms = now + r->cfg.drain_time * 1000ull;
			LB_WARN("bgp: the speaker did not confirm the withdrawal in %u ms; "
				"draining anyway",
				WITHDRAW_WAIT_MS);
		} else {
			return;
		}
		r->phase = MUX_ROUTE_DRAINING;
		/* fall through */
	case MUX_ROUTE_DRAINING:
		if (now < r->drain_until_ms)
			return;
		LB_INFO("bgp: drained (%llu ms after the withdrawal): stopping",
			(unsigned long long)(now - r->withdrawn_ms));
		r->phase = MUX_ROUTE_DONE;
		r->app->ctx.quit = true;
		return;
	case MUX_ROUTE_DONE:
		return;
	}
}

static void
tick(struct mux_route *r)
{
	uint64_t now = lb_now_ms();
	struct mux_rp_speaker spk;
	uint32_t n, vips[MUX_RP_MAX_VIPS];
	bool moved, up, withdraw;
	uint64_t prev;

	feed_table(r, now);
	feed_lkg(r, now);
	pthread_mutex_lock(&r->lock);
	moved = feed_workers(r, now);
	up = feed_ports(r);
	if (r->quit && r->phase == MUX_ROUTE_RUNNING) {
		mux_announce_shutdown(r->ann);
		r->phase = MUX_ROUTE_WITHDRAWING;
		r->shutdown_ms = now;
		LB_INFO("bgp: shutting down: withdrawing every route first");
		/*
		 * A unit's TimeoutStopSec (20 s) would SIGKILL a longer drain
		 * half-way: systemd is told how long the whole stop may take.
		 */
		lb_notify_extend(WITHDRAW_WAIT_MS + r->cfg.drain_time * 1000ull + SPEAKER_STOP_MS +
					 STOP_SLACK_MS,
			"withdrawing every route, then draining");
	}
	mux_announce_eval(r->ann, now);
	n = mux_announce_set(r->ann, vips, MUX_RP_MAX_VIPS);
	withdraw = r->ann->shutdown || r->ann->drained;
	if (n != r->mine.n_vips || memcmp(vips, r->mine.vips, sizeof(vips[0]) * n) != 0 ||
		withdraw != (r->mine.withdraw_all != 0)) {
		r->mine.request++;
		r->mine.n_vips = n;
		memcpy(r->mine.vips, vips, sizeof(vips[0]) * n);
		r->mine.withdraw_all = withdraw;
	}
	snprintf(r->mine.reason, sizeof(r->mine.reason), "%s", r->ann->why);
	if (moved && up)
		r->mine.heartbeat_ms = now;
	mux_rp_write(&r->page->mux_seq, &r->page->mux, &r->mine, sizeof(r->mine));
	prev = r->spk.updated_ms;
	if (mux_rp_read(&r->page->spk_seq, &spk, &r->page->spk, sizeof(spk)))
		r->spk = spk;
	watch_speaker(r, prev, now);
	r->last_tick_ms = now;
	check_speaker(r);
	shutdown_step(r, now);
	pthread_mutex_unlock(&r->lock);
}

static void *
route_thread(void *arg)
{
	struct mux_route *r = arg;
	struct timespec ts = {0, ROUTE_TICK_MS * 1000000L};

	while (!__atomic_load_n(&r->stop_thread, __ATOMIC_ACQUIRE)) {
		tick(r);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int
mux_route_start(struct mux_route *r, struct mux_app *app, char *err, size_t len)
{
	int rc;

	r->app = app;
	if (mux_route_telemetry_register(r) != 0)
		LB_WARN("bgp: /sluice/route not registered");
	rc = rte_ctrl_thread_create(&r->thread, "sluice-route", NULL, route_thread, r);
	if (rc != 0) {
		snprintf(err, len, "bgp: route thread: %s", strerror(-rc));
		return -1;
	}
	r->thread_started = true;
	return 0;
}

void
mux_route_stop(struct mux_route *r)
{
	if (r == NULL || !r->thread_started)
		return;
	__atomic_store_n(&r->stop_thread, true, __ATOMIC_RELEASE);
	pthread_join(r->thread, NULL);
	r->thread_started = false;
}

void
mux_route_sync(struct mux_route *r, bool in_sync, uint64_t version, const char *why)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	if (!r->ann->sync_known || r->ann->in_sync != in_sync ||
		strcmp(r->ann->sync_why, why ? why : "") != 0) {
		if (in_sync)
			LB_INFO("bgp: the manager says this mux is in sync (version %llu): it may "
				"announce",
				(unsigned long long)version);
		else
			LB_WARN("bgp: the manager says this mux is not in sync: %s: withdrawing",
				why ? why : "");
	}
	mux_announce_sync(r->ann, in_sync, version, why);
	pthread_mutex_unlock(&r->lock);
}

static void
stop_speaker(struct mux_route *r)
{
	uint64_t end = lb_now_ms() + SPEAKER_STOP_MS;
	int st;

	if (r->speaker <= 0 || r->speaker_gone)
		return;
	r->mine.stop = 1;
	r->mine.withdraw_all = 1;
	r->mine.n_vips = 0;
	r->mine.request++;
	mux_rp_write(&r->page->mux_seq, &r->page->mux, &r->mine, sizeof(r->mine));
	while (lb_now_ms() < end) {
		if (waitpid(r->speaker, &st, WNOHANG) == r->speaker) {
			r->speaker_gone = true;
			return;
		}
		usleep(10000);
	}
	LB_WARN("bgp: the speaker did not stop in %u ms: killing it", SPEAKER_STOP_MS);
	kill(r->speaker, SIGKILL);
	waitpid(r->speaker, &st, 0);
	r->speaker_gone = true;
}

void
mux_route_destroy(struct mux_route *r)
{
	if (r == NULL)
		return;
	mux_route_stop(r);
	mux_route_telemetry_forget(r);
	if (r->page != NULL)
		stop_speaker(r);
	if (r->files_made)
		remove_run_files(&r->paths, r->dir_made);
	if (r->page != NULL)
		munmap(r->page, sizeof(*r->page));
	free(r->ann);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
