/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl stats: the manager's per service and backend rates, summed
 * over every mux from their STATUS counters, as top(1) shows processes.
 *
 * On a terminal the screen is redrawn every --refresh seconds until q (or
 * Ctrl-C); the terminal is put in non-canonical mode for the key and given
 * back as it was on every way out. Elsewhere (a pipe, a file) the samples
 * follow one another, a blank line between. --once and --json print one
 * sample (the JSON one) and exit.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

static volatile sig_atomic_t ctl_stop;
static struct termios ctl_term; /* the terminal as we found it */
static bool ctl_raw;

static void
on_signal(int sig)
{
	(void)sig;
	ctl_stop = 1;
}

static void
term_restore(void)
{
	if (ctl_raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &ctl_term);
	ctl_raw = false;
}

/* q without Enter, nothing echoed. */
static void
term_raw(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &ctl_term) != 0)
		return;
	t = ctl_term;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0)
		ctl_raw = true;
}

/* Wait up to ms for q on the terminal: true when it came (or a signal). */
static bool
wait_quit(int ms)
{
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
	char ch;

	if (!ctl_raw) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
		return ctl_stop;
	}
	while (!ctl_stop && poll(&p, 1, ms) > 0) {
		if (read(STDIN_FILENO, &ch, 1) != 1)
			return true; /* the terminal went away */
		if (ch == 'q' || ch == 'Q')
			return true;
	}
	return ctl_stop;
}

/* One sample: the reply, or an exit code after saying why. */
static int
sample(struct ctl_conn *c, const struct lb_msg *req, struct lb_msg *rep)
{
	int rc;

	memset(rep, 0, sizeof(*rep));
	rc = ctl_call(c, req, rep);
	if (rc != 0)
		return rc;
	if (!rep->flag) {
		fprintf(stderr, "sluicectl: %s\n", rep->text[0] != '\0' ? rep->text : "refused");
		return CTL_EXIT_REFUSED;
	}
	return 0;
}

int
ctl_stats(struct ctl_conn *c, const struct ctl_opts *o, const struct lb_msg *req)
{
	double refresh = o->refresh_s;
	bool tty = isatty(STDOUT_FILENO), first = true;
	struct sigaction sa = {.sa_handler = on_signal};
	struct lb_msg rep;
	int rc;

	if (o->once || o->json) {
		rc = sample(c, req, &rep);
		if (rc == 0)
			fputs(o->json ? rep.json : rep.body, stdout);
		if (rc == 0 && o->json)
			fputc('\n', stdout);
		lb_msg_free(&rep);
		return rc;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (tty)
		term_raw();
	do {
		rc = sample(c, req, &rep);
		if (rc != 0) {
			lb_msg_free(&rep);
			break;
		}
		if (tty)
			printf("\033[H\033[2J%s\nevery %g s; q quits\n", rep.body, refresh);
		else
			printf("%s%s", first ? "" : "\n", rep.body);
		fflush(stdout);
		lb_msg_free(&rep);
		first = false;
	} while (!wait_quit((int)(refresh * 1000)));
	term_restore();
	return rc;
}
