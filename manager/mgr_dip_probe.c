/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lb_addr.h"
#include "mgr_dip_probe.h"

void
mgr_dip_probe_init(struct mgr_dip_probe *p)
{
	memset(p, 0, sizeof(*p));
	p->pr_fd = -1;
}

/* "Connection refused" -> "connection refused": reasons read as one phrase. */
static void
reason(char *why, size_t len, const char *what, int err)
{
	size_t n = (size_t)snprintf(why, len, "%s: ", what);

	if (n < len) {
		snprintf(why + n, len - n, "%s", strerror(err));
		why[n] = (char)tolower((unsigned char)why[n]);
	}
}

void
mgr_dip_probe_close(struct mgr_dip_probe *p)
{
	/* A reset, not a FIN: no TIME_WAIT on either side at thousands a second. */
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	if (p->pr_fd < 0)
		return;
	setsockopt(p->pr_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(p->pr_fd); /* also leaves the epoll set: the fd is never dup'd */
	p->pr_fd = -1;
	p->pr_stage = MGR_DIP_IDLE;
	p->pr_sent = p->pr_got = 0;
}

enum mgr_dip_probe_rc
mgr_dip_probe_start(struct mgr_dip_probe *p, int epfd, void *owner, uint8_t af,
	const struct lb_addr *dip, uint16_t port, char *why, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6};
	struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = owner};
	const struct sockaddr *to = (const struct sockaddr *)&sa;
	socklen_t tolen = sizeof(sa);
	int fd, one = 1;

	mgr_dip_probe_close(p);
	p->pr_owner = owner;
	p->pr_af = af == LB_AF_INET6 ? LB_AF_INET6 : LB_AF_INET;
	fd = socket(p->pr_af == LB_AF_INET6 ? AF_INET6 : AF_INET,
		SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		reason(why, len, "socket", errno);
		return errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM
			       ? MGR_DIP_NOSOCK
			       : MGR_DIP_DOWN;
	}
	/* The SYN and the request leave at once; a probe is latency, not throughput. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sa.sin_addr.s_addr = dip->a32[0];
	sa.sin_port = htons(port);
	if (p->pr_af == LB_AF_INET6) {
		memcpy(&sa6.sin6_addr, dip->a8, 16);
		sa6.sin6_port = htons(port);
		to = (const struct sockaddr *)&sa6;
		tolen = sizeof(sa6);
	}
	p->pr_fd = fd;
	p->pr_stage = MGR_DIP_CONNECTING;
	if (connect(fd, to, tolen) != 0 && errno != EINPROGRESS) {
		int e = errno;

		mgr_dip_probe_close(p);
		reason(why, len, "connect", e);
		/* Out of local ports is ours, not the backend's. */
		return e == EADDRNOTAVAIL || e == EAGAIN ? MGR_DIP_NOSOCK : MGR_DIP_DOWN;
	}
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		int e = errno;

		mgr_dip_probe_close(p);
		reason(why, len, "epoll", e);
		return MGR_DIP_NOSOCK;
	}
	return MGR_DIP_PENDING;
}

int
mgr_dip_probe_status_code(const char *line, size_t len)
{
	/* "HTTP/1.x DDD": the version, one space, three digits. */
	if (len < 12 || memcmp(line, "HTTP/", 5) != 0 || !isdigit((unsigned char)line[5]) ||
		line[6] != '.' || !isdigit((unsigned char)line[7]) || line[8] != ' ' ||
		!isdigit((unsigned char)line[9]) || !isdigit((unsigned char)line[10]) ||
		!isdigit((unsigned char)line[11]))
		return -1;
	if (len > 12 && line[12] != ' ' && line[12] != '\r' && line[12] != '\n')
		return -1;
	return (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
}

/* Arm the socket for `events`, keeping its owner. */
static int
rearm(struct mgr_dip_probe *p, int epfd, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = p->pr_owner};

	return epoll_ctl(epfd, EPOLL_CTL_MOD, p->pr_fd, &ev);
}

static enum mgr_dip_probe_rc
fail(struct mgr_dip_probe *p, char *why, size_t len, const char *what, int err)
{
	reason(why, len, what, err);
	mgr_dip_probe_close(p);
	return MGR_DIP_DOWN;
}

static enum mgr_dip_probe_rc
send_request(struct mgr_dip_probe *p, int epfd, const struct mgr_pool *pool,
	const struct lb_addr *dip, char *why, size_t len)
{
	char req[LB_POOL_PATH_LEN + 160], host[LB_ADDR_STRLEN];
	ssize_t w;
	int n;

	/* Rebuilt on every call, the same bytes: only the offset is kept. An
	 * IPv6 literal goes in brackets in Host (RFC 3986's IP-literal). */
	lb_addr_ntop(p->pr_af, dip, host, sizeof(host));
	n = snprintf(req, sizeof(req),
		"GET %s HTTP/1.0\r\nHost: %s%s%s\r\nUser-Agent: sluice-manager\r\n"
		"Connection: close\r\n\r\n",
		pool->pl_path, p->pr_af == LB_AF_INET6 ? "[" : "", host,
		p->pr_af == LB_AF_INET6 ? "]" : "");
	w = send(p->pr_fd, req + p->pr_sent, (size_t)n - p->pr_sent, MSG_NOSIGNAL);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return MGR_DIP_PENDING;
	if (w < 0)
		return fail(p, why, len, "HTTP: send", errno);
	p->pr_sent = (uint16_t)(p->pr_sent + w);
	if (p->pr_sent < n)
		return MGR_DIP_PENDING; /* still armed for writing: the rest goes next */
	p->pr_stage = MGR_DIP_READING;
	if (rearm(p, epfd, EPOLLIN) != 0)
		return fail(p, why, len, "epoll", errno);
	return MGR_DIP_PENDING;
}

static enum mgr_dip_probe_rc
read_status(struct mgr_dip_probe *p, const struct mgr_pool *pool, char *why, size_t len)
{
	ssize_t r = recv(p->pr_fd, p->pr_rx + p->pr_got, sizeof(p->pr_rx) - p->pr_got, 0);
	const char *eol;
	int code;

	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return MGR_DIP_PENDING;
	if (r < 0)
		return fail(p, why, len, "HTTP: read", errno);
	p->pr_got = (uint16_t)(p->pr_got + r);
	eol = memchr(p->pr_rx, '\n', p->pr_got);
	/* Twelve bytes hold "HTTP/1.1 200": enough to judge without the whole line. */
	if (eol == NULL && p->pr_got < sizeof(p->pr_rx) && r > 0 && p->pr_got < 13)
		return MGR_DIP_PENDING;
	code = mgr_dip_probe_status_code(
		p->pr_rx, eol != NULL ? (size_t)(eol - p->pr_rx) : p->pr_got);
	if (code < 0) {
		size_t k, n = p->pr_got < 16 ? p->pr_got : 16;
		char shown[17];

		for (k = 0; k < n; k++)
			shown[k] = isprint((unsigned char)p->pr_rx[k]) ? p->pr_rx[k] : '.';
		shown[n] = '\0';
		if (p->pr_got == 0)
			snprintf(why, len, "HTTP: connection closed before a status line");
		else
			snprintf(why, len, "HTTP: not a status line: \"%s\"", shown);
		mgr_dip_probe_close(p);
		return MGR_DIP_DOWN;
	}
	mgr_dip_probe_close(p);
	if (mgr_pool_code_ok(pool, (unsigned)code))
		return MGR_DIP_UP;
	snprintf(why, len, "HTTP %d", code);
	return MGR_DIP_DOWN;
}

enum mgr_dip_probe_rc
mgr_dip_probe_event(struct mgr_dip_probe *p, int epfd, uint32_t events, const struct mgr_pool *pool,
	const struct lb_addr *dip, char *why, size_t len)
{
	int err = 0;
	socklen_t el = sizeof(err);

	if (p->pr_fd < 0)
		return MGR_DIP_PENDING; /* a stale event for a probe already ended */
	switch (p->pr_stage) {
	case MGR_DIP_CONNECTING:
		if (getsockopt(p->pr_fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
			err = errno;
		if (err == 0 && (events & (EPOLLERR | EPOLLHUP)) != 0 && !(events & EPOLLOUT))
			err = ECONNRESET;
		if (err != 0)
			return fail(p, why, len, "connect", err);
		if (pool->pl_probe != LB_PROBE_HTTP) {
			mgr_dip_probe_close(p);
			return MGR_DIP_UP;
		}
		p->pr_stage = MGR_DIP_SENDING;
		/* The socket is writable now. */
		return send_request(p, epfd, pool, dip, why, len);
	case MGR_DIP_SENDING:
		return send_request(p, epfd, pool, dip, why, len);
	case MGR_DIP_READING:
		return read_status(p, pool, why, len);
	default:
		return MGR_DIP_PENDING;
	}
}

void
mgr_dip_probe_timeout(struct mgr_dip_probe *p, uint32_t timeout_s, char *why, size_t len)
{
	if (p->pr_stage == MGR_DIP_READING || p->pr_stage == MGR_DIP_SENDING)
		snprintf(why, len, "timeout after %u s waiting for the HTTP status", timeout_s);
	else
		snprintf(why, len, "timeout after %u s", timeout_s);
	mgr_dip_probe_close(p);
}
