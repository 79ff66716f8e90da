/* SPDX-License-Identifier: BSD-3-Clause */
/* Bounded waits on nng (lb_nng.h): a socket's next message, in poll(); its close. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "lb_clock.h"
#include "lb_nng.h"

int
lb_nng_recvmsg_wait(nng_socket s, nng_msg **msg, int ms)
{
	struct pollfd p = {.events = POLLIN};
	int rc;

	rc = nng_recvmsg(s, msg, NNG_FLAG_NONBLOCK);
	if (rc != NNG_EAGAIN)
		return rc;
	if ((rc = nng_socket_get_int(s, NNG_OPT_RECVFD, &p.fd)) != 0)
		return rc;
	if (poll(&p, 1, ms) <= 0)
		return NNG_ETIMEDOUT;
	rc = nng_recvmsg(s, msg, NNG_FLAG_NONBLOCK);
	return rc == NNG_EAGAIN ? NNG_ETIMEDOUT : rc;
}

struct closer {
	nng_socket sock;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
};

static void *
close_thread(void *arg)
{
	struct closer *c = arg;

	nng_close(c->sock);
	pthread_mutex_lock(&c->mu);
	c->done = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

bool
lb_nng_close_within(nng_socket sock, unsigned ms)
{
	struct closer *c = calloc(1, sizeof(*c));
	pthread_condattr_t ca;
	struct timespec until;
	pthread_t t;
	bool done;

	if (c == NULL) {
		nng_close(sock);
		return true;
	}
	c->sock = sock;
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t, NULL, close_thread, c) != 0) {
		close_thread(c);
	} else {
		until = lb_deadline(CLOCK_MONOTONIC, ms);
		pthread_mutex_lock(&c->mu);
		while (!c->done && pthread_cond_timedwait(&c->cv, &c->mu, &until) != ETIMEDOUT)
			;
		done = c->done;
		pthread_mutex_unlock(&c->mu);
		if (!done) {
			pthread_detach(t);
			return false;
		}
		pthread_join(t, NULL);
	}
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
	return true;
}
