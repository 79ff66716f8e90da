/* SPDX-License-Identifier: BSD-3-Clause */
/* A bounded wait for a socket's next message, in poll() (lb_nng.h). */
#include <poll.h>

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
