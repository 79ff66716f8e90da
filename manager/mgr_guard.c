/* SPDX-License-Identifier: BSD-3-Clause */
/* The listener guard (mgr_guard.h has why and how). */
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
#include "lb_proof.h"
#include "mgr_clock.h"
#include "mgr_config.h"
#include "mgr_guard.h"

/* One listener and what the guard knows of it. */
struct mgr_listener {
	char what[16];
	char url[MGR_URL_MAX];
	nng_socket sock;
	nng_listener l; /* id 0: closed, a restart to retry */
	bool ipc;
	bool req_check;	  /* check with req0 (the socket is rep0), else pair1 */
	uint64_t other;	  /* the listener's "other" errors when last checked */
	uint64_t next_ms; /* the next periodic check */
	bool warned;	  /* a check that could not get through was logged */
	/*
	 * A check found no accept: its "accept" count before that check
	 * (suspect set). The next check, MGR_GUARD_RECHECK_MS later, restarts
	 * the listener only if nothing at all was accepted since.
	 */
	bool suspect;
	uint64_t suspect_accepts;
};

/* The guard's TLS client: the manager's own certificate, no check of the server. */
struct mgr_guard_tls {
	mbedtls_ssl_config conf;
	mbedtls_x509_crt crt;
	struct lb_sign_key key;
};

struct mgr_guard {
	nng_tls_config *tls;	      /* the listeners' (the transport's) */
	struct mgr_guard_tls *client; /* NULL: TLS listeners are not checked */
	struct mgr_listener ls[MGR_MAX_LISTENERS];
	uint32_t n_ls;
	pthread_t thread;
	bool running;
	int stop;	     /* atomic */
	bool warned;	     /* the guard's thread only */
	uint64_t n_restarts; /* atomic: the guard's thread adds */
	uint64_t n_checks;   /* atomic: the guard's thread adds */
};

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
listener_open(struct mgr_guard *gd, struct mgr_listener *g)
{
	int rv;

	if (g->ipc)
		ipc_parent(g->url);
	if ((rv = nng_listener_create(&g->l, g->sock, g->url)) != 0)
		return rv;
	if (!g->ipc)
		rv = nng_listener_set_ptr(g->l, NNG_OPT_TLS_CONFIG, gd->tls);
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
mgr_guard_listen(struct mgr_guard *gd, nng_socket s, const char *url, const char *what,
	bool req_check, char *err, size_t len)
{
	struct mgr_listener *g;
	int rv;

	if (gd->n_ls == MGR_MAX_LISTENERS) {
		snprintf(err, len, "%s: too many listeners", what);
		return -LB_EINVAL;
	}
	g = &gd->ls[gd->n_ls];
	memset(g, 0, sizeof(*g));
	snprintf(g->what, sizeof(g->what), "%s", what);
	snprintf(g->url, sizeof(g->url), "%s", url);
	g->sock = s;
	g->ipc = strncmp(url, "ipc://", 6) == 0;
	g->req_check = req_check;
	if ((rv = listener_open(gd, g)) != 0) {
		snprintf(err, len, "%s: cannot listen on %s: %s", what, url, nng_strerror(rv));
		return -LB_EIO;
	}
	gd->n_ls++;
	LB_INFO("%s: listening on %s", what, url);
	return 0;
}

static void client_free(struct mgr_guard_tls *t);

static struct mgr_guard_tls *
client_load(const char *cert, const char *key, char *err, size_t len)
{
	struct mgr_guard_tls *t = lb_zalloc(sizeof(*t), NULL, err, len);
	int rc;

	if (t == NULL)
		return NULL;
	mbedtls_ssl_config_init(&t->conf);
	mbedtls_x509_crt_init(&t->crt);
	lb_sign_key_init(&t->key);
	if (lb_sign_key_load(&t->key, key, "sluice guard", err, len) != 0) {
		client_free(t);
		return NULL;
	}
	if ((rc = mbedtls_x509_crt_parse_file(&t->crt, cert)) != 0 ||
		(rc = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_CLIENT,
			 MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT)) != 0 ||
		(rc = mbedtls_ssl_conf_own_cert(&t->conf, &t->crt, &t->key.pk)) != 0) {
		char buf[128];

		mbedtls_strerror(rc, buf, sizeof(buf));
		snprintf(err, len, "%s", buf);
		client_free(t);
		return NULL;
	}
	/* Our own listener: what matters is that it accepts, not who it is. */
	mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_NONE);
	mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->key.drbg);
	mbedtls_ssl_conf_read_timeout(&t->conf, MGR_GUARD_WAIT_MS);
	return t;
}

static void
client_free(struct mgr_guard_tls *t)
{
	if (t == NULL)
		return;
	mbedtls_ssl_config_free(&t->conf);
	mbedtls_x509_crt_free(&t->crt);
	lb_sign_key_free(&t->key);
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
check_connect(const struct mgr_listener *g, char *why, size_t len)
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
check_recv(void *ctx, unsigned char *buf, size_t len, uint32_t timeout_ms)
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
stopping(struct mgr_guard *gd)
{
	return __atomic_load_n(&gd->stop, __ATOMIC_ACQUIRE) != 0;
}

/* The listener's "accept" count now (UINT64_MAX: no statistics). */
static uint64_t accepts_of(const struct mgr_listener *g);

enum check_verdict { CHECK_ACCEPTED, CHECK_STOPPED, CHECK_UNKNOWN };

/*
 * Check g's listener (accepts0: its "accept" count before): connect, TLS
 * handshake, the SP header of the peer protocol; then wait for the accept.
 */
static enum check_verdict
check(struct mgr_guard *gd, struct mgr_listener *g, uint64_t accepts0, char *why, size_t len)
{
	/* nng's connection header: 0, 'S', 'P', 0, the sender's protocol, 0, 0. */
	const uint16_t proto = g->req_check ? 0x30 /* req0 */ : 0x11 /* pair1 */;
	const uint8_t hdr[8] = {0, 'S', 'P', 0, (uint8_t)(proto >> 8), (uint8_t)proto, 0, 0};
	enum check_verdict v = CHECK_UNKNOWN;
	uint8_t peer[sizeof(hdr)];
	size_t got;
	mbedtls_net_context net;
	mbedtls_ssl_context ssl;
	uint64_t until, a;
	int fd, rc = 0;

	mbedtls_net_init(&net);
	mbedtls_ssl_init(&ssl);
	if ((fd = check_connect(g, why, len)) < 0)
		goto out;
	net.fd = fd;
	if (stopping(gd))
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
		if (gd->client == NULL) {
			snprintf(why, len, "no TLS client configuration");
			goto out;
		}
		if ((rc = mbedtls_ssl_setup(&ssl, &gd->client->conf)) == 0) {
			mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, NULL, check_recv);
			while (!stopping(gd) &&
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
	v = CHECK_STOPPED;
	do {
		a = accepts_of(g);
		if (a == UINT64_MAX || a > accepts0) {
			v = CHECK_ACCEPTED;
			break;
		}
		nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
	} while (mgr_now_ms() < until && !stopping(gd));
out:
	mbedtls_ssl_free(&ssl);
	mbedtls_net_free(&net); /* closes fd */
	return v;
}

static void
restart(struct mgr_guard *gd, struct mgr_listener *g)
{
	int rv;

	if (nng_listener_id(g->l) > 0)
		nng_listener_close(g->l);
	g->l = (nng_listener)NNG_LISTENER_INITIALIZER;
	if ((rv = listener_open(gd, g)) != 0) {
		LB_ERR("%s: listener on %s stopped accepting and cannot listen again: %s "
		       "(retrying)",
			g->what, g->url, nng_strerror(rv));
		return;
	}
	g->other = 0;
	__atomic_add_fetch(&gd->n_restarts, 1, __ATOMIC_RELAXED);
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
listener_stats(const struct mgr_listener *g, uint64_t *accepts, uint64_t *other)
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
accepts_of(const struct mgr_listener *g)
{
	uint64_t accepts, other;

	return listener_stats(g, &accepts, &other) ? accepts : UINT64_MAX;
}

static void
guard_tick(struct mgr_guard *gd, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < gd->n_ls; i++) {
		struct mgr_listener *g = &gd->ls[i];
		uint64_t other, accepts, before;
		enum check_verdict v;
		char why[160] = "";

		if (nng_listener_id(g->l) <= 0) { /* a restart that failed: again */
			restart(gd, g);
			continue;
		}
		if (!listener_stats(g, &accepts, &other)) {
			if (!gd->warned)
				LB_WARN("listener guard off: no nng statistics");
			gd->warned = true;
			return;
		}
		if (other <= g->other && now < g->next_ms)
			continue;
		before = other;
		v = check(gd, g, accepts, why, sizeof(why));
		/* Counted once judged: a caller who saw the count grow saw a check end. */
		__atomic_add_fetch(&gd->n_checks, 1, __ATOMIC_RELAXED);
		g->next_ms = mgr_now_ms() + MGR_GUARD_PERIOD_MS;
		switch (v) {
		case CHECK_ACCEPTED:
			g->suspect = false;
			break;
		case CHECK_STOPPED:
			if (!g->suspect) {
				g->suspect = true;
				g->suspect_accepts = accepts;
				g->next_ms = mgr_now_ms() + MGR_GUARD_RECHECK_MS;
				LB_INFO("%s: the listener on %s accepted nothing within %d ms of "
					"the "
					"guard's check: checking again",
					g->what, g->url, MGR_GUARD_GRACE_MS);
				break;
			}
			if (accepts_of(g) == g->suspect_accepts) {
				/* A new listener: its own count, from zero (restart() set it). */
				g->suspect = false;
				restart(gd, g);
				continue;
			}
			/* The first check's connection, or another, was accepted late: alive. */
			g->suspect = false;
			break;
		case CHECK_UNKNOWN:
			if (!g->warned)
				LB_WARN("%s: cannot tell whether the listener on %s accepts: the "
					"check did not get through: %s",
					g->what, g->url, why);
			g->warned = true;
			break;
		}
		/*
		 * The check's own end counts as one more "other" error of the
		 * listener's (nng 1.5.2 counts a closed connection), now or a
		 * little later: not a reason to check again.
		 */
		if (listener_stats(g, &accepts, &other))
			g->other = other > before + 1 ? other : before + 1;
	}
}

static void *
guard_main(void *arg)
{
	struct mgr_guard *gd = arg;
	const struct timespec tick = {0, MGR_GUARD_TICK_MS * 1000000L};

	while (!stopping(gd)) {
		guard_tick(gd, mgr_now_ms());
		nanosleep(&tick, NULL);
	}
	return NULL;
}

struct mgr_guard *
mgr_guard_new(nng_tls_config *tls, const char *cert, const char *key)
{
	struct mgr_guard *gd = calloc(1, sizeof(*gd));
	char err[256];

	if (gd == NULL)
		return NULL;
	gd->tls = tls;
	/* The TLS listeners are checked as a client with our own certificate. */
	if (cert != NULL && key != NULL) {
		gd->client = client_load(cert, key, err, sizeof(err));
		if (gd->client == NULL)
			LB_WARN("listener guard: no TLS client (%s): TLS listeners are not checked",
				err);
	}
	return gd;
}

int
mgr_guard_start(struct mgr_guard *gd)
{
	int rv;

	__atomic_store_n(&gd->stop, 0, __ATOMIC_RELEASE);
	rv = pthread_create(&gd->thread, NULL, guard_main, gd);
	gd->running = rv == 0;
	return rv;
}

bool
mgr_guard_stop(struct mgr_guard *gd)
{
	struct timespec until;

	if (gd == NULL || !gd->running)
		return true;
	__atomic_store_n(&gd->stop, 1, __ATOMIC_RELEASE);
	clock_gettime(CLOCK_REALTIME, &until);
	/* A check in its connect or handshake takes up to twice the wait. */
	until.tv_sec += 2 * MGR_GUARD_WAIT_MS / 1000 + 1;
	gd->running = false;
	if (pthread_timedjoin_np(gd->thread, NULL, &until) != 0) {
		/*
		 * Stuck: leave it, and with it everything it may still read
		 * (the TLS contexts, the guard itself): the process is ending.
		 */
		LB_WARN("listener guard: its thread did not stop in %d s; leaving it",
			2 * MGR_GUARD_WAIT_MS / 1000 + 1);
		pthread_detach(gd->thread);
		return false;
	}
	gd->n_ls = 0;
	return true;
}

void
mgr_guard_free(struct mgr_guard *gd)
{
	if (gd == NULL)
		return;
	client_free(gd->client);
	free(gd);
}

void
mgr_guard_stats(const struct mgr_guard *gd, uint64_t *restarts, uint64_t *checks)
{
	*restarts = __atomic_load_n(&gd->n_restarts, __ATOMIC_RELAXED);
	*checks = __atomic_load_n(&gd->n_checks, __ATOMIC_RELAXED);
}
