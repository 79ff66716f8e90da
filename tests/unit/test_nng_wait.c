/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A control thread's bounded wait for a message (lb_nng.h), on a real
 * pair of ipc:// sockets: a message already there and one sent during the
 * wait are received, whole; no message ends the wait after its length, not
 * before; a closed socket says so.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "lb_clock.h"
#include "lb_nng.h"

static nng_socket a, b;
static char url[64];

static void
setup(void)
{
	snprintf(url, sizeof(url), "ipc:///tmp/sluice-test-nng-wait.%d", (int)getpid());
	cr_assert_eq(nng_pair1_open(&a), 0);
	cr_assert_eq(nng_pair1_open(&b), 0);
	cr_assert_eq(nng_listen(a, url, NULL, 0), 0);
	cr_assert_eq(nng_dial(b, url, NULL, 0), 0);
}

static void
teardown(void)
{
	nng_close(a);
	nng_close(b);
}

static void
expect_msg(nng_msg *msg, const char *text)
{
	cr_assert_eq(nng_msg_len(msg), strlen(text));
	cr_assert_eq(memcmp(nng_msg_body(msg), text, strlen(text)), 0);
	nng_msg_free(msg);
}

/* A wait far longer than the test's timeout: 0 means the message ended it. */
Test(nng_wait, a_waiting_message_comes_at_once, .init = setup, .fini = teardown)
{
	nng_msg *msg;

	cr_assert_eq(nng_send(b, "hello", 5, 0), 0);
	usleep(50 * 1000); /* delivered into a's queue */
	cr_assert_eq(lb_nng_recvmsg_wait(a, &msg, 60000), 0);
	expect_msg(msg, "hello");
}

static void *
send_later(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
	nng_send(b, "later", 5, 0);
	return NULL;
}

Test(nng_wait, a_message_sent_during_the_wait_ends_it, .init = setup, .fini = teardown)
{
	pthread_t th;
	nng_msg *msg;

	/* One wait, bounded far beyond the test's timeout: only the message ends it. */
	cr_assert_eq(pthread_create(&th, NULL, send_later, NULL), 0);
	cr_assert_eq(lb_nng_recvmsg_wait(a, &msg, 3600 * 1000), 0);
	pthread_join(th, NULL);
	expect_msg(msg, "later");
}

Test(nng_wait, no_message_ends_the_wait_after_its_length, .init = setup, .fini = teardown)
{
	nng_msg *msg = NULL;
	uint64_t t0 = lb_now_ms(), took;

	cr_assert_eq(lb_nng_recvmsg_wait(a, &msg, 200), NNG_ETIMEDOUT);
	took = lb_now_ms() - t0;
	cr_assert_geq(took, 190, "waited %llu ms of 200", (unsigned long long)took);
	cr_assert_null(msg);
}

Test(nng_wait, a_closed_socket_says_so, .init = setup, .fini = teardown)
{
	nng_msg *msg;
	nng_socket c;

	cr_assert_eq(nng_pair1_open(&c), 0);
	nng_close(c);
	cr_assert_eq(lb_nng_recvmsg_wait(c, &msg, 200), NNG_ECLOSED);
}
