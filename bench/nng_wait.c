/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-nng-wait: what a control thread's bounded wait for a message
 * costs when no message comes (docs/performance.md, "nng's timer thread").
 *
 * Two ways in turn, each for SECONDS, on an ipc:// rep0 socket nobody
 * dials: nng_recvmsg() with NNG_OPT_RECVTIMEO of TICK ms (how the member's
 * loop and the mux's credit channel waited), and lb_nng_recvmsg_wait()
 * (poll() on the socket's receive descriptor, then a receive that does not
 * block: how they wait now). Prints the process's CPU time per wait for
 * each, and their ratio. Both figures come from one run, side by side.
 *
 *   sluice-nng-wait [TICK_MS [SECONDS]]     defaults 10 and 3
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "lb_nng.h"

static double
cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Waits for SECONDS, one way; the CPU milliseconds per wait. */
static double
run(nng_socket s, int tick, int seconds, int polled, unsigned *waits)
{
	time_t end = time(NULL) + seconds;
	double c0 = cpu_ms();
	nng_msg *msg;
	int rc;

	*waits = 0;
	while (time(NULL) < end) {
		rc = polled ? lb_nng_recvmsg_wait(s, &msg, tick) : nng_recvmsg(s, &msg, 0);
		if (rc == 0)
			nng_msg_free(msg);
		else if (rc != NNG_ETIMEDOUT) {
			fprintf(stderr, "sluice-nng-wait: receive: %s\n", nng_strerror(rc));
			exit(1);
		}
		(*waits)++;
	}
	return (cpu_ms() - c0) / *waits;
}

int
main(int argc, char **argv)
{
	int tick = argc > 1 ? atoi(argv[1]) : 10, seconds = argc > 2 ? atoi(argv[2]) : 3, rc;
	char url[64];
	nng_socket s;
	unsigned n_timeo, n_poll;
	double timeo, polled;

	if (tick <= 0 || seconds <= 0) {
		fprintf(stderr, "usage: sluice-nng-wait [TICK_MS [SECONDS]]\n");
		return 2;
	}
	snprintf(url, sizeof(url), "ipc:///tmp/sluice-nng-wait.%d", (int)getpid());
	if ((rc = nng_rep0_open(&s)) != 0 || (rc = nng_listen(s, url, NULL, 0)) != 0) {
		fprintf(stderr, "sluice-nng-wait: %s: %s\n", url, nng_strerror(rc));
		return 1;
	}
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, tick);
	timeo = run(s, tick, seconds, 0, &n_timeo);
	polled = run(s, tick, seconds, 1, &n_poll);
	printf("nng %s, waits of %d ms for %d s each, CPU per wait:\n", nng_version(), tick,
		seconds);
	printf("  NNG_OPT_RECVTIMEO     %5u waits  %8.1f us\n", n_timeo, timeo * 1e3);
	printf("  lb_nng_recvmsg_wait   %5u waits  %8.1f us\n", n_poll, polled * 1e3);
	printf("  ratio                 %.1f\n", timeo / polled);
	nng_close(s);
	return 0;
}
