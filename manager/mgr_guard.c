/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The listener guard: the manager's listeners (members, ctl, ctl_tls) are
 * checked and restarted when nng has stopped them.
 *
 * nng 1.5.2 (Debian 12) hands a connection's failed handshake to the
 * listener's pending accept. When the error is NNG_ECLOSED the listener
 * takes it for its own closing and never accepts again; EPIPE maps to
 * NNG_ECLOSED, so a client that sends a TLS ClientHello and resets the
 * connection while the manager writes its reply stops the listener for
 * good. One unauthenticated client could so cut every member off (a
 * hundred such connections did it here). The connections still complete
 * their handshakes underneath and wait forever for an accept.
 *
 * The guard runs on a thread of its own, beside the manager's loop. Once
 * per MGR_GUARD_TICK_MS it reads nng's statistics; when the listener's
 * "other" error count (where NNG_ECLOSED lands) has grown, and every
 * MGR_GUARD_PERIOD_MS anyway, it probes the listener: it connects to it
 * itself, completes the TLS handshake with the manager's own certificate
 * (mbed TLS, the library nng uses), sends the SP header of the peer
 * protocol (pair1 to the members' socket, req0 to the ctl socket), and
 * watches the listener's "accept" count. A live listener accepts within
 * the millisecond; if none followed within MGR_GUARD_GRACE_MS, the listener
 * is closed and listened again on the same address. A probe that cannot
 * connect or finish its handshake within MGR_GUARD_WAIT_MS proves nothing
 * and restarts nothing; it is logged once. Closing a listener drops the
 * connections it had accepted: members redial and say hello at the version
 * they run, which takes them back in sync without a snapshot.
 *
 * The probe is a plain socket, not an nng dialer. nng 1.5.2 can orphan a
 * pipe when a socket or dialer is closed while it is making one (nng issue
 * 1498, fixed in 1.6.0), and nng_close() then never returns: the first
 * version of this guard dialed with an nng socket and closed it after each
 * probe, and its thread was found stuck in nng in CI (after which every
 * listener that stopped stayed stopped). The guard's only nng calls now are
 * the statistics and a listener's close and re-creation.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_codec.h"
#include "lb_err.h"
#include "lb_log.h"
#include "mgr.h"
#include "mgr_clock.h"

static void
ipc_parent(const char *url)
{
	char dir[MGR_URL_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", url + strlen("ipc://"));
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		LB_WARN("cannot create %s: %s", dir, strerror(errno));
}

static int
listener_open(struct mgr *m, struct mgr_guard *g)
{
	int rv;

	if (g->ipc)
		ipc_parent(g->url);
	if ((rv = nng_listener_create(&g->l, g->sock, g->url)) != 0)
		return rv;
	if (!g->ipc)
		rv = nng_listener_set_ptr(g->l, NNG_OPT_TLS_CONFIG, m->tls);
	else
		/* Anyone who can open the socket could change the flow table. */
		rv = nng_listener_set_int(g->l, NNG_OPT_IPC_PERMISSIONS, 0600);
	if (rv != 0 ||
		(rv = nng_listener_set_size(g->l, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES)) != 0 ||
		(rv = nng_listener_start(g->l, 0)) != 0) {
		nng_listener_close(g->l);
		g->l = (nng_listener)NNG_LISTENER_INITIALIZER;
		return rv;
	}
	return 0;
}

int
mgr_guard_listen(struct mgr *m, nng_socket s, const char *url, const char *what, bool req_probe,
	char *err, size_t len)
{
	struct mgr_guard *g;
	int rv;

	if (m->n_guards == MGR_MAX_LISTENERS) {
		snprintf(err, len, "%s: too many listeners", what);
		return -LB_EINVAL;
	}
	g = &m->guards[m->n_guards];
	memset(g, 0, sizeof(*g));
	snprintf(g->what, sizeof(g->what), "%s", what);
	snprintf(g->url, sizeof(g->url), "%s", url);
	g->sock = s;
	g->ipc = strncmp(url, "ipc://", 6) == 0;
	g->req_probe = req_probe;
	if ((rv = listener_open(m, g)) != 0) {
		snprintf(err, len, "%s: cannot listen on %s: %s", what, url, nng_strerror(rv));
		return -LB_EIO;
	}
	m->n_guards++;
	LB_INFO("%s: listening on %s", what, url);
	return 0;
}

/* The guard's TLS client: the manager's own certificate, no check of the server. */
struct mgr_probe_tls {
	mbedtls_ssl_config conf;
	mbedtls_x509_crt crt;
	mbedtls_pk_context key;
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
};

struct mgr_probe_tls *
mgr_guard_tls_load(const char *cert, const char *key, char *err, size_t len)
{
	struct mgr_probe_tls *t = calloc(1, sizeof(*t));
	int rc;

	if (t == NULL) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	mbedtls_ssl_config_init(&t->conf);
	mbedtls_x509_crt_init(&t->crt);
	mbedtls_pk_init(&t->key);
	mbedtls_entropy_init(&t->entropy);
	mbedtls_ctr_drbg_init(&t->drbg);
	if ((rc = mbedtls_x509_crt_parse_file(&t->crt, cert)) != 0 ||
		(rc = mbedtls_pk_parse_keyfile(&t->key, key, NULL)) != 0 ||
		(rc = mbedtls_ctr_drbg_seed(&t->drbg, mbedtls_entropy_func, &t->entropy,
			 (const uint8_t *)"sluice guard", 12)) != 0 ||
		(rc = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_CLIENT,
			 MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT)) != 0 ||
		(rc = mbedtls_ssl_conf_own_cert(&t->conf, &t->crt, &t->key)) != 0) {
		char buf[128];

		mbedtls_strerror(rc, buf, sizeof(buf));
		snprintf(err, len, "%s", buf);
		mgr_guard_tls_free(t);
		return NULL;
	}
	/* Our own listener: what matters is that it accepts, not who it is. */
	mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_NONE);
	mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->drbg);
	mbedtls_ssl_conf_read_timeout(&t->conf, MGR_GUARD_WAIT_MS);
	return t;
}

void
mgr_guard_tls_free(struct mgr_probe_tls *t)
{
	if (t == NULL)
		return;
	mbedtls_ssl_config_free(&t->conf);
	mbedtls_x509_crt_free(&t->crt);
	mbedtls_pk_free(&t->key);
	mbedtls_ctr_drbg_free(&t->drbg);
	mbedtls_entropy_free(&t->entropy);
	free(t);
}

/* Connect fd to addr within MGR_GUARD_WAIT_MS; 0 or an errno. */
static int
connect_within(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int err = 0, fl = fcntl(fd, F_GETFL);
	socklen_t elen = sizeof(err);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return errno;
	if (connect(fd, addr, len) != 0) {
		if (errno != EINPROGRESS)
			return errno;
		if (poll(&pfd, 1, MGR_GUARD_WAIT_MS) != 1)
			return ETIMEDOUT;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
			return errno;
		if (err != 0)
			return err;
	}
	return fcntl(fd, F_SETFL, fl) < 0 ? errno : 0;
}

/* A connected socket to the listener's address (a wildcard host: loopback), or -1. */
static int
probe_connect(const struct mgr_guard *g, char *why, size_t len)
{
	const char *rest = strstr(g->url, "://") + 3;
	char host[MGR_URL_MAX], *port;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL, *a;
	int fd = -1, rc = 0;

	if (g->ipc) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", rest);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 &&
			(rc = connect_within(fd, (struct sockaddr *)&sun, sizeof(sun))) != 0) {
			snprintf(why, len, "connect: %s", strerror(rc));
			close(fd);
			return -1;
		}
		return fd;
	}
	snprintf(host, sizeof(host), "%s", rest);
	port = strrchr(host, ':');
	if (port == NULL) {
		snprintf(why, len, "no port in the URL");
		return -1;
	}
	*port++ = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1]:7400 */
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if (host[0] == '\0' || strcmp(host, "*") == 0 || strcmp(host, "0.0.0.0") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	else if (strcmp(host, "::") == 0)
		snprintf(host, sizeof(host), "::1");
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0) {
		snprintf(why, len, "%s: %s", host, gai_strerror(rc));
		return -1;
	}
	for (a = ai; a != NULL; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		if ((rc = connect_within(fd, a->ai_addr, a->ai_addrlen)) == 0)
			break;
		snprintf(why, len, "connect: %s", strerror(rc));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/*
 * mbed TLS's receive with a timeout, on poll(): its own uses select(),
 * which fails for a descriptor at or above FD_SETSIZE (a manager with
 * thousands of health-probe sockets has such).
 */
static int
probe_recv(void *ctx, unsigned char *buf, size_t len, uint32_t timeout_ms)
{
	struct pollfd pfd = {.fd = ((mbedtls_net_context *)ctx)->fd, .events = POLLIN};
	int rc;

	do
		rc = poll(&pfd, 1, (int)timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return MBEDTLS_ERR_SSL_TIMEOUT;
	if (rc < 0)
		return MBEDTLS_ERR_NET_POLL_FAILED;
	return mbedtls_net_recv(ctx, buf, len);
}

static bool
stopping(struct mgr *m)
{
	return __atomic_load_n(&m->guard_stop, __ATOMIC_ACQUIRE) != 0;
}

/* The listener's "accept" count now (UINT64_MAX: no statistics). */
static uint64_t accepts_of(const struct mgr_guard *g);

enum probe_verdict { PROBE_ACCEPTED, PROBE_STOPPED, PROBE_UNKNOWN };

/*
 * Probe g's listener (accepts0: its "accept" count before): connect, TLS
 * handshake, the SP header of the peer protocol; then wait for the accept.
 */
static enum probe_verdict
probe(struct mgr *m, struct mgr_guard *g, uint64_t accepts0, char *why, size_t len)
{
	/* nng's connection header: 0, 'S', 'P', 0, the sender's protocol, 0, 0. */
	const uint16_t proto = g->req_probe ? 0x30 /* req0 */ : 0x11 /* pair1 */;
	const uint8_t hdr[8] = {0, 'S', 'P', 0, (uint8_t)(proto >> 8), (uint8_t)proto, 0, 0};
	enum probe_verdict v = PROBE_UNKNOWN;
	uint8_t peer[sizeof(hdr)];
	size_t got;
	mbedtls_net_context net;
	mbedtls_ssl_context ssl;
	uint64_t until, a;
	int fd, rc = 0;

	mbedtls_net_init(&net);
	mbedtls_ssl_init(&ssl);
	if ((fd = probe_connect(g, why, len)) < 0)
		goto out;
	net.fd = fd;
	if (stopping(m))
		goto out;
	if (g->ipc) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (write(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr)) {
			snprintf(why, len, "send: %s", strerror(errno));
			goto out;
		}
		/* Its header: nng has taken our connection in hand (under load, that waits). */
		for (got = 0; got < sizeof(peer) && poll(&pfd, 1, MGR_GUARD_WAIT_MS) == 1 &&
			      (n = read(fd, peer + got, sizeof(peer) - got)) > 0;)
			got += (size_t)n;
		if (got != sizeof(peer)) {
			snprintf(why, len, "no header from the listener within %d ms",
				MGR_GUARD_WAIT_MS);
			goto out;
		}
	} else {
		if (m->probe_tls == NULL) {
			snprintf(why, len, "no TLS client configuration");
			goto out;
		}
		if ((rc = mbedtls_ssl_setup(&ssl, &m->probe_tls->conf)) == 0) {
			mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, NULL, probe_recv);
			while (!stopping(m) &&
				((rc = mbedtls_ssl_handshake(&ssl)) == MBEDTLS_ERR_SSL_WANT_READ ||
					rc == MBEDTLS_ERR_SSL_WANT_WRITE))
				;
		}
		if (rc == 0)
			rc = mbedtls_ssl_write(&ssl, hdr, sizeof(hdr));
		/* Its header: nng has taken our connection in hand (under load, that waits). */
		for (got = 0; rc >= 0 && got < sizeof(peer);) {
			rc = mbedtls_ssl_read(&ssl, peer + got, sizeof(peer) - got);
			if (rc == 0)
				rc = MBEDTLS_ERR_SSL_CONN_EOF;
			if (rc > 0)
				got += (size_t)rc;
		}
		if (rc < 0) {
			char buf[96];

			mbedtls_strerror(rc, buf, sizeof(buf));
			snprintf(why, len, "TLS: %s", buf);
			goto out;
		}
	}
	/* In: a live listener accepts at once. */
	until = mgr_now_ms() + MGR_GUARD_GRACE_MS;
	v = PROBE_STOPPED;
	do {
		a = accepts_of(g);
		if (a == UINT64_MAX || a > accepts0) {
			v = PROBE_ACCEPTED;
			break;
		}
		nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
	} while (mgr_now_ms() < until && !stopping(m));
out:
	mbedtls_ssl_free(&ssl);
	mbedtls_net_free(&net); /* closes fd */
	return v;
}

static void
restart(struct mgr *m, struct mgr_guard *g)
{
	int rv;

	if (nng_listener_id(g->l) > 0)
		nng_listener_close(g->l);
	g->l = (nng_listener)NNG_LISTENER_INITIALIZER;
	if ((rv = listener_open(m, g)) != 0) {
		LB_ERR("%s: listener on %s stopped accepting and cannot listen again: %s "
		       "(retrying)",
			g->what, g->url, nng_strerror(rv));
		return;
	}
	g->other = 0;
	__atomic_add_fetch(&m->n_listener_restarts, 1, __ATOMIC_RELAXED);
	LB_WARN("%s: the listener on %s had stopped accepting connections (nng 1.5.2 stops a "
		"listener when a peer drops in its handshake): listening again; the connections "
		"it had reconnect",
		g->what, g->url);
}

static uint64_t
stat_of(nng_stat *tree, const char *name)
{
	nng_stat *s = tree == NULL ? NULL : nng_stat_find(tree, name);

	return s == NULL ? 0 : nng_stat_value(s);
}

/*
 * The scope ("listener", "dialer") with that id. Not nng_stat_find_listener:
 * in nng 1.5.2 it returns the first scope of the name below the root,
 * whatever its id.
 */
static nng_stat *
scope_of(nng_stat *s, const char *name, int id)
{
	for (; s != NULL; s = nng_stat_next(s)) {
		nng_stat *found;

		if (nng_stat_type(s) == NNG_STAT_SCOPE && strcmp(nng_stat_name(s), name) == 0) {
			nng_stat *sid = nng_stat_find(s, "id");

			if (sid != NULL && nng_stat_value(sid) == (uint64_t)id)
				return s;
			continue;
		}
		if ((found = scope_of(nng_stat_child(s), name, id)) != NULL)
			return found;
	}
	return NULL;
}

/* The listener's "accept" and "other" counts now (false: no statistics). */
static bool
listener_stats(const struct mgr_guard *g, uint64_t *accepts, uint64_t *other)
{
	nng_stat *root, *ls;

	if (nng_stats_get(&root) != 0)
		return false;
	ls = scope_of(root, "listener", nng_listener_id(g->l));
	*accepts = stat_of(ls, "accept");
	*other = stat_of(ls, "other");
	nng_stats_free(root);
	return true;
}

static uint64_t
accepts_of(const struct mgr_guard *g)
{
	uint64_t accepts, other;

	return listener_stats(g, &accepts, &other) ? accepts : UINT64_MAX;
}

static void
guard_tick(struct mgr *m, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < m->n_guards; i++) {
		struct mgr_guard *g = &m->guards[i];
		uint64_t other, accepts, before;
		enum probe_verdict v;
		char why[160] = "";

		if (nng_listener_id(g->l) <= 0) { /* a restart that failed: again */
			restart(m, g);
			continue;
		}
		if (!listener_stats(g, &accepts, &other)) {
			if (!m->guard_warned)
				LB_WARN("listener guard off: no nng statistics");
			m->guard_warned = true;
			return;
		}
		if (other <= g->other && now < g->next_ms)
			continue;
		__atomic_add_fetch(&m->n_listener_probes, 1, __ATOMIC_RELAXED);
		before = other;
		v = probe(m, g, accepts, why, sizeof(why));
		g->next_ms = mgr_now_ms() + MGR_GUARD_PERIOD_MS;
		switch (v) {
		case PROBE_ACCEPTED:
			break;
		case PROBE_STOPPED:
			/* A new listener: its own count, from zero (restart() set it). */
			restart(m, g);
			continue;
		case PROBE_UNKNOWN:
			if (!g->warned)
				LB_WARN("%s: cannot tell whether the listener on %s accepts: the "
					"probe did not get through: %s",
					g->what, g->url, why);
			g->warned = true;
			break;
		}
		/*
		 * The probe's own end counts as one more "other" error of the
		 * listener's (nng 1.5.2 counts a closed connection), now or a
		 * little later: not a reason to probe again.
		 */
		if (listener_stats(g, &accepts, &other))
			g->other = other > before + 1 ? other : before + 1;
	}
}

static void *
guard_main(void *arg)
{
	struct mgr *m = arg;
	const struct timespec tick = {0, MGR_GUARD_TICK_MS * 1000000L};

	while (!__atomic_load_n(&m->guard_stop, __ATOMIC_ACQUIRE)) {
		guard_tick(m, mgr_now_ms());
		nanosleep(&tick, NULL);
	}
	return NULL;
}

int
mgr_guard_start(struct mgr *m)
{
	int rv;

	__atomic_store_n(&m->guard_stop, 0, __ATOMIC_RELEASE);
	rv = pthread_create(&m->guard_thread, NULL, guard_main, m);
	m->guard_running = rv == 0;
	return rv;
}

void
mgr_guard_stop(struct mgr *m)
{
	struct timespec until;

	if (m->guard_running) {
		__atomic_store_n(&m->guard_stop, 1, __ATOMIC_RELEASE);
		clock_gettime(CLOCK_REALTIME, &until);
		/* A probe in its connect or handshake takes up to twice the wait. */
		until.tv_sec += 2 * MGR_GUARD_WAIT_MS / 1000 + 1;
		m->guard_running = false;
		if (pthread_timedjoin_np(m->guard_thread, NULL, &until) != 0) {
			/*
			 * Stuck: leave it, and with it everything it may still
			 * read (the TLS contexts, m itself): the process is ending.
			 */
			LB_WARN("listener guard: its thread did not stop in %d s; leaving it",
				2 * MGR_GUARD_WAIT_MS / 1000 + 1);
			pthread_detach(m->guard_thread);
			m->abandoned = true;
			return;
		}
	}
	m->n_guards = 0;
}
