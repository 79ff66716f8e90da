/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bounded waits on nng. First, a socket's next message, for the control
 * threads that also keep time (the member's loop, the mux's credit channel).
 *
 * nng 1.5.2 fires an operation's timeout (NNG_OPT_RECVTIMEO) from its
 * "nng:aio:expire" thread, which spins on the clock for up to a
 * millisecond each time: a loop that waits 100 ms at a time for a message
 * that rarely comes cost 1% of a core in that spin alone, more than an
 * idle worker lcore (docs/performance.md, "nng's timer thread"). Here the
 * wait is the kernel's: poll() on the socket's receive descriptor
 * (NNG_OPT_RECVFD, readable while a message waits), then a receive that
 * does not block.
 */
#ifndef LB_NNG_H
#define LB_NNG_H

#include <stdbool.h>

#include <nng/nng.h>

/*
 * The next message of s, waiting at most ms milliseconds: 0 with *msg
 * set (the caller frees it), NNG_ETIMEDOUT when none came (or a signal
 * ended the wait), or nng's error (NNG_ECLOSED once s is closed).
 */
int lb_nng_recvmsg_wait(nng_socket s, nng_msg **msg, int ms);

/*
 * nng_close(sock) in a thread of its own, waited for at most ms. nng 1.5's
 * close waits for every pipe to end, and a pipe can fail to report its end
 * (docs/reliability.md, Found 8 and 10): a daemon stopping must not wait
 * for it for ever. false: it did not return in time; the thread is left
 * running (the process is exiting).
 */
bool lb_nng_close_within(nng_socket sock, unsigned ms);

#endif /* LB_NNG_H */
