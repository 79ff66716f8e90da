/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lb_log.h"
#include "mux_speaker.h"

#define BIRD_CMD_MS 1500      /* BIRD answers in milliseconds; this is "stuck" */
#define BIRD_CTL_WAIT_MS 5000 /* from its start until its control socket answers */
#define BIRD_EXIT_WAIT_MS 200 /* a broken control socket: BIRD's exit, if it is dying */
#define BIRD_BACKOFF_MIN_MS 500
#define BIRD_BACKOFF_MAX_MS 10000
#define CONF_RETRY_MS 1000

struct speaker {
	const struct mux_bgp_cfg *cfg;
	const struct mux_bird_paths *paths;
	struct mux_route_page *page;
	pid_t mux;
	uint64_t stale_ms;

	pid_t bird;
	uint64_t bird_started_ms;
	uint64_t restart_at_ms;
	uint64_t backoff_ms;
	struct mux_bird ctl;
	uint64_t retry_at_ms; /* after a refused reconfiguration */
	/*
	 * A configure whose outcome is unknown (no answer in time: BIRD may
	 * still run it): what BIRD announces may be the new set, not out's,
	 * so the set is given again even when it matches out.
	 */
	bool unsure;
	uint64_t grace_until_ms; /* resumed from a stop: the heartbeat may lag */

	struct mux_rp_mux in; /* the mux's section, last consistent copy */
	struct mux_rp_speaker out;
	uint32_t want[MUX_RP_MAX_VIPS]; /* what BIRD should announce */
	uint32_t n_want;
	char want_why[MUX_RP_TEXT];
	char reply[MUX_BIRD_REPLY_MAX];
};

static volatile sig_atomic_t term;

static void
on_term(int sig)
{
	(void)sig;
	term = 1;
}

static void
nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !term)
		;
}

static void __attribute__((format(printf, 2, 3))) fail(struct speaker *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->out.last_error, sizeof(s->out.last_error), fmt, ap);
	va_end(ap);
	s->out.errors++;
	s->out.last_error_ms = lb_now_ms();
	LB_ERR("%s", s->out.last_error);
}

static void
state(struct speaker *s, const char *st)
{
	snprintf(s->out.state, sizeof(s->out.state), "%s", st);
}

/* BIRD's routes are gone with its sessions: count them withdrawn. */
static void
forget_announced(struct speaker *s)
{
	s->out.withdraws += s->out.n_vips;
	s->out.n_vips = 0;
	s->unsure = false; /* a BIRD started again reads an empty routes file */
}

/* BIRD is gone (reaped): its routes and sessions with it; restart it later. */
static void
bird_gone(struct speaker *s, uint64_t now, const char *st)
{
	uint32_t i;

	s->bird = 0;
	s->out.bird_pid = 0;
	mux_bird_close(&s->ctl);
	forget_announced(s);
	for (i = 0; i < s->out.n_peers; i++)
		s->out.peers[i].established = 0;
	s->restart_at_ms = now + s->backoff_ms;
	s->backoff_ms =
		s->backoff_ms * 2 > BIRD_BACKOFF_MAX_MS ? BIRD_BACKOFF_MAX_MS : s->backoff_ms * 2;
	state(s, st);
}

/* Fail closed: BIRD's sessions drop with it, and with them every route. */
static void
kill_bird(struct speaker *s, uint64_t now, const char *why)
{
	int st;

	if (s->bird <= 0)
		return;
	LB_WARN("killing BIRD (pid %d): %s; restarting it in %llu ms", (int)s->bird, why,
		(unsigned long long)s->backoff_ms);
	kill(s->bird, SIGKILL);
	waitpid(s->bird, &st, 0);
	bird_gone(s, now, "BIRD killed: restarting");
}

static void
start_bird(struct speaker *s, uint64_t now)
{
	pid_t me = getpid(), pid;
	char vips[1];
	int rc, sig;

	mux_bird_vips(NULL, 0, vips, sizeof(vips));
	rc = mux_bird_write_file(s->paths->vips, vips, 0);
	if (rc != 0) {
		fail(s, "cannot write %s: %s", s->paths->vips, strerror(-rc));
		s->restart_at_ms = now + BIRD_BACKOFF_MAX_MS;
		return;
	}
	unlink(s->paths->ctl); /* a dead BIRD's socket */
	pid = fork();
	if (pid < 0) {
		fail(s, "cannot fork BIRD: %s", strerror(errno));
		s->restart_at_ms = now + s->backoff_ms;
		return;
	}
	if (pid == 0) {
		sigset_t none;

		/*
		 * BIRD stays in the mux's process group, on purpose: a Ctrl-Z
		 * (or any stop of the group) must stop BIRD with the mux, so
		 * its keepalives stop and the routers' hold timers withdraw a
		 * frozen mux. (A Ctrl-C then makes BIRD shut down, closing its
		 * sessions: a withdrawal too, which is what the mux does
		 * first on SIGINT anyway.)
		 */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != me)
			_exit(1);
		for (sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execl(s->cfg->bird, "bird", "-f", "-c", s->paths->conf, "-s", s->paths->ctl,
			(char *)NULL);
		fprintf(stderr, "sluice-speaker: cannot run %s: %s\n", s->cfg->bird,
			strerror(errno));
		_exit(127);
	}
	s->bird = pid;
	s->bird_started_ms = now;
	s->out.bird_pid = (uint32_t)pid;
	LB_INFO("BIRD started (pid %d): %s -f -c %s -s %s", (int)pid, s->cfg->bird, s->paths->conf,
		s->paths->ctl);
	state(s, "BIRD starting");
}

static void
reap_bird(struct speaker *s, uint64_t now)
{
	int st;
	pid_t r;

	if (s->bird <= 0)
		return;
	r = waitpid(s->bird, &st, WNOHANG);
	if (r != s->bird)
		return;
	if (s->in.withdraw_all && !WIFSIGNALED(st))
		LB_INFO("BIRD (pid %d) exited with status %d while the mux withdraws all "
			"(a Ctrl-C reaches BIRD too)",
			(int)s->bird, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		fail(s, "BIRD (pid %d) killed by signal %d; restarting it in %llu ms", (int)s->bird,
			WTERMSIG(st), (unsigned long long)s->backoff_ms);
	else
		fail(s, "BIRD (pid %d) exited with status %d; restarting it in %llu ms",
			(int)s->bird, WEXITSTATUS(st), (unsigned long long)s->backoff_ms);
	bird_gone(s, now, "BIRD exited: restarting");
}

/*
 * A command on the control socket failed (code < 0). If BIRD is dying, the
 * socket breaks a moment before its exit can be reaped: wait up to
 * BIRD_EXIT_WAIT_MS for that exit, so that it, not the broken socket, is
 * what the speaker reports (and BIRD is restarted, not killed again).
 * true: BIRD was gone.
 */
static bool
bird_exited(struct speaker *s, uint64_t now)
{
	uint64_t until = lb_now_ms() + BIRD_EXIT_WAIT_MS;

	for (;;) {
		reap_bird(s, now);
		if (s->bird <= 0)
			return true;
		if (lb_now_ms() >= until)
			return false;
		nap_ms(5);
	}
}

static void
connect_bird(struct speaker *s, uint64_t now)
{
	char err[MUX_RP_TEXT];

	if (mux_bird_connect(&s->ctl, s->paths->ctl, 500, err, sizeof(err)) == 0) {
		LB_INFO("connected to BIRD's control socket %s", s->paths->ctl);
		state(s, "running");
		return;
	}
	if (now - s->bird_started_ms > BIRD_CTL_WAIT_MS) {
		fail(s, "BIRD's %s", err);
		kill_bird(s, now, "its control socket does not answer");
	}
}

/* What BIRD should announce now, and why that is less than the mux asks. */
static void
judge(struct speaker *s, bool consistent, uint64_t now)
{
	bool stale = false;

	s->n_want = 0;
	s->want_why[0] = '\0';
	/*
	 * A read that found no consistent copy (the route thread preempted
	 * mid-write) is judged by the last copy: its heartbeat ages like any,
	 * and a writer stopped mid-write is stale after stale_ms as one
	 * stopped between writes. Only with no copy ever is a torn page stale.
	 */
	if (s->in.heartbeat_ms == 0) {
		/* A page never written, or torn by a writer that stopped mid-write. */
		stale = !consistent;
		snprintf(s->want_why, sizeof(s->want_why), "%s",
			consistent ? "the mux has not started yet" : "the mux's page is torn");
	} else if (now > s->in.heartbeat_ms && now - s->in.heartbeat_ms > s->stale_ms &&
		   now >= s->grace_until_ms) {
		stale = true;
		snprintf(s->want_why, sizeof(s->want_why),
			"the mux's heartbeat is %llu ms old (limit %llu): data plane frozen",
			(unsigned long long)(now - s->in.heartbeat_ms),
			(unsigned long long)s->stale_ms);
	} else if (s->in.withdraw_all) {
		snprintf(s->want_why, sizeof(s->want_why), "%s", s->in.reason);
	} else {
		s->n_want = s->in.n_vips <= MUX_RP_MAX_VIPS ? s->in.n_vips : 0;
		memcpy(s->want, s->in.vips, sizeof(s->want[0]) * s->n_want);
		if (s->n_want == 0)
			snprintf(s->want_why, sizeof(s->want_why), "%s", s->in.reason);
	}
	if (stale && !s->out.stale) {
		s->out.stale_withdrawals++;
		LB_WARN("withdrawing everything: %s", s->want_why);
	} else if (!stale && s->out.stale) {
		LB_INFO("the mux's heartbeat moves again: announcing what it asks");
	}
	s->out.stale = stale;
}

static bool
same_set(const struct speaker *s)
{
	return !s->unsure && s->n_want == s->out.n_vips &&
	       memcmp(s->want, s->out.vips, sizeof(s->want[0]) * s->n_want) == 0;
}

/* Give BIRD the wanted set; on failure leave nothing announced that should not be. */
static void
apply(struct speaker *s, uint64_t now)
{
	static char buf[MUX_RP_MAX_VIPS * 40];
	uint64_t since[MUX_RP_MAX_VIPS];
	char err[MUX_RP_TEXT];
	uint32_t i, added = 0, kept = 0;
	bool withdraws = false;
	int len, code, rc;

	for (i = 0; i < s->n_want; i++) {
		if (mux_rp_announces(&s->out, s->want[i], &since[i]))
			kept++;
		else {
			since[i] = now;
			added++;
		}
	}
	withdraws = kept < s->out.n_vips;
	len = mux_bird_vips(s->want, s->n_want, buf, sizeof(buf));
	rc = len < 0 ? -ENOSPC : mux_bird_write_file(s->paths->vips, buf, (size_t)len);
	if (rc != 0) {
		fail(s, "cannot write %s: %s", s->paths->vips, strerror(-rc));
		goto failed;
	}
	code = mux_bird_cmd(
		&s->ctl, "configure", BIRD_CMD_MS, s->reply, sizeof(s->reply), err, sizeof(err));
	/* 0003 reconfigured, 0004 in progress, 0005 queued: BIRD took it. */
	if (code == 3 || code == 4 || code == 5) {
		LB_INFO("BIRD announces %u VIP%s (%u new, %u withdrawn)%s%s", s->n_want,
			s->n_want == 1 ? "" : "s", added, s->out.n_vips - kept,
			s->want_why[0] ? ": " : "", s->want_why);
		s->out.announces += added;
		s->out.withdraws += s->out.n_vips - kept;
		s->out.n_vips = s->n_want;
		memcpy(s->out.vips, s->want, sizeof(s->want[0]) * s->n_want);
		memcpy(s->out.since_ms, since, sizeof(since[0]) * s->n_want);
		s->unsure = false;
		return;
	}
	if (code < 0 && bird_exited(s, now))
		return;
	if (code < 0) {
		/* It may yet run the file written above: say it again, whatever comes next. */
		s->unsure = true;
		fail(s, "configure: %s", err);
	} else {
		const char *nl = strrchr(s->reply, '\n'), *l = s->reply;

		/* the last line of the reply: "8002 file:line:col message" */
		if (nl != NULL && nl > s->reply)
			for (l = nl - 1; l > s->reply && l[-1] != '\n'; l--)
				;
		fail(s, "configure refused, BIRD keeps its old routes: %.100s", l);
	}
failed:
	if (withdraws)
		kill_bird(s, now, "a withdrawal did not take");
	else
		s->retry_at_ms = now + CONF_RETRY_MS;
}

static void
read_sessions(struct speaker *s, uint64_t now)
{
	struct mux_bird_proto pr[MUX_BGP_MAX_NEIGHBORS + 4];
	char err[MUX_RP_TEXT];
	int i, n, code;

	code = mux_bird_cmd(&s->ctl, "show protocols", BIRD_CMD_MS, s->reply, sizeof(s->reply), err,
		sizeof(err));
	if (code != 0) {
		if (code < 0 && bird_exited(s, now))
			return;
		if (code < 0)
			fail(s, "show protocols: %s", err);
		if (code < 0 && s->out.n_vips > 0)
			kill_bird(s, now, "its control socket failed with routes announced");
		return;
	}
	n = mux_bird_parse_protocols(s->reply, pr, MUX_BGP_MAX_NEIGHBORS + 4);
	for (i = 0; i < n; i++) {
		unsigned k;
		struct mux_rp_peer *p;

		if (sscanf(pr[i].name, "n%u", &k) != 1 || k >= s->cfg->n_neighbors)
			continue;
		p = &s->out.peers[k];
		if (strcmp(p->state, pr[i].info) != 0)
			LB_INFO("session n%u with %s: %s%s%s", k,
				inet_ntoa((struct in_addr){p->addr}), pr[i].info,
				pr[i].error[0] ? ", " : "", pr[i].error);
		snprintf(p->state, sizeof(p->state), "%s", pr[i].info);
		snprintf(p->error, sizeof(p->error), "%s", pr[i].error);
		p->since_unix = pr[i].since_unix;
		p->established = strcmp(pr[i].info, "Established") == 0;
	}
}

static void
publish(struct speaker *s, uint64_t now)
{
	uint32_t i;
	bool up = false;

	for (i = 0; i < s->out.n_peers; i++)
		up |= s->out.peers[i].established != 0;
	if (up && s->out.n_vips > 0)
		s->out.last_exported_ms = now;
	s->out.updated_ms = now;
	mux_rp_write(&s->page->spk_seq, &s->page->spk, &s->out, sizeof(s->out));
}

static void __attribute__((noreturn)) shutdown_and_exit(struct speaker *s, const char *why)
{
	char err[MUX_RP_TEXT];
	uint64_t end;
	int st;

	LB_INFO("stopping (%s): BIRD down", why);
	if (s->bird > 0) {
		/* "down": BIRD closes its sessions with a Cease and exits. */
		if (s->ctl.fd < 0 ||
			mux_bird_cmd(&s->ctl, "down", 1000, NULL, 0, err, sizeof(err)) != 7)
			kill(s->bird, SIGTERM);
		for (end = lb_now_ms() + 2000; lb_now_ms() < end;) {
			if (waitpid(s->bird, &st, WNOHANG) == s->bird)
				break;
			nap_ms(10);
		}
		if (waitpid(s->bird, &st, WNOHANG) == 0) {
			kill(s->bird, SIGKILL);
			waitpid(s->bird, &st, 0);
		}
	}
	bird_gone(s, lb_now_ms(), "stopped");
	publish(s, lb_now_ms());
	_exit(0);
}

void
mux_speaker_main(const struct mux_bgp_cfg *cfg, const struct mux_bird_paths *paths,
	struct mux_route_page *page, pid_t mux)
{
	static struct speaker sp;
	struct speaker *s = &sp;
	bool overslept = false;
	uint64_t nap_start;
	long nap;
	uint32_t i;

	/* Die with the mux, even if it died before this line ran. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != mux)
		_exit(0);
	prctl(PR_SET_NAME, "sluice-speaker");
	lb_log_init("sluice-speaker", LB_LOG_INFO);
	/* SIGINT/SIGHUP from a terminal are the mux's: it withdraws first. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);

	s->cfg = cfg;
	s->paths = paths;
	s->page = page;
	s->mux = mux;
	s->stale_ms = mux_speaker_stale_ms(cfg);
	s->backoff_ms = BIRD_BACKOFF_MIN_MS;
	s->ctl.fd = -1;
	s->out.n_peers = cfg->n_neighbors;
	for (i = 0; i < cfg->n_neighbors; i++) {
		s->out.peers[i].addr = cfg->neighbors[i].addr;
		s->out.peers[i].as = cfg->neighbors[i].as;
	}
	state(s, "starting");
	for (;;) {
		static struct mux_rp_mux in;
		uint64_t now = lb_now_ms();
		bool ok = mux_rp_read(&page->mux_seq, &in, &page->mux, sizeof(in));
		if (ok)
			s->in = in;

		if (term)
			shutdown_and_exit(s, "SIGTERM");
		if (getppid() != mux)
			shutdown_and_exit(s, "the mux is gone");
		if (ok && s->in.stop)
			shutdown_and_exit(s, "the mux exits");
		reap_bird(s, now);
		/* Nothing to announce while the mux withdraws all: BIRD can wait. */
		if (s->bird <= 0 && now >= s->restart_at_ms && !(ok && s->in.withdraw_all))
			start_bird(s, now);
		/*
		 * Each step below can wait on a stalled BIRD (a command's
		 * BIRD_CMD_MS, then BIRD_EXIT_WAIT_MS): published after each, so
		 * that no gap between two publishes comes near the mux's
		 * watchdog (hold_time - 500 ms: 2.5 s by default), which kills a
		 * speaker that stops publishing for good.
		 */
		if (s->bird > 0 && s->ctl.fd < 0) {
			connect_bird(s, now);
			publish(s, lb_now_ms());
		}
		/*
		 * A nap far longer than asked: we were stopped ourselves (the
		 * whole group was, and the mux is resuming too). Give its route
		 * thread a second to bump the heartbeat before judging it.
		 */
		if (overslept)
			s->grace_until_ms = now + 1000;
		judge(s, ok, now);
		if (s->ctl.fd >= 0 && !same_set(s) && now >= s->retry_at_ms) {
			apply(s, now);
			publish(s, lb_now_ms());
		}
		if (s->ctl.fd >= 0) {
			read_sessions(s, now);
			if (s->ctl.fd >= 0 && s->bird > 0 && now - s->bird_started_ms > 30000)
				s->backoff_ms = BIRD_BACKOFF_MIN_MS; /* it stayed up: forgive */
		} else {
			for (i = 0; i < s->out.n_peers; i++) {
				s->out.peers[i].established = 0;
				snprintf(s->out.peers[i].state, sizeof(s->out.peers[i].state), "%s",
					"no BIRD");
			}
		}
		/*
		 * BIRD runs the wanted set, or no BIRD announces anything (it
		 * starts with an empty routes file): the request is served.
		 */
		if (ok && (s->ctl.fd < 0 ? s->out.n_vips == 0 : same_set(s)))
			s->out.applied_request = s->in.request;
		publish(s, now);
		nap = s->bird > 0 && s->ctl.fd < 0 ? 20 : MUX_SPEAKER_POLL_MS;
		nap_start = lb_now_ms();
		nap_ms(nap);
		overslept = lb_now_ms() - nap_start > (uint64_t)nap + 1000;
	}
}
