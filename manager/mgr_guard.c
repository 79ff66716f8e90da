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
 * The guard runs on a thread of its own, so that an nng call of its that
 * does not return (nng 1.5.2 has such: nng_close() after a dropped
 * connection) can never hold up the manager's loop. Once per
 * MGR_GUARD_TICK_MS: when the listener's "other" error
 * count (nng's statistics, where NNG_ECLOSED lands) has grown, and every
 * MGR_GUARD_PERIOD_MS anyway, it dials the listener itself (pair1 to the
 * members' socket, req0 to the ctl socket; with the manager's certificate
 * over TLS) and watches the listener's "accept" count. The probe's own
 * dialer completes even on a stopped listener; if it did and no accept
 * followed within MGR_GUARD_GRACE_MS, the listener is closed and listened
 * again on the same address. A probe that cannot connect at all within
 * MGR_GUARD_WAIT_MS (a certificate the manager's TLS refuses) proves
 * nothing and restarts nothing; it is logged once. Closing it drops the connections it had
 * accepted: members redial and say hello at the version they run, which
 * takes them back in sync without a snapshot.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_codec.h"
#include "lb_err.h"
#include "lb_log.h"
#include "mgr.h"

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

static void
probe_end(struct mgr_guard *g)
{
	if (nng_socket_id(g->probe) > 0)
		nng_close(g->probe);
	g->probe = (nng_socket)NNG_SOCKET_INITIALIZER;
}

static void
probe_start(struct mgr *m, struct mgr_guard *g, uint64_t accepts, uint64_t now)
{
	int rv;

	g->next_ms = now + MGR_GUARD_PERIOD_MS;
	rv = g->req_probe ? nng_req0_open(&g->probe) : nng_pair1_open(&g->probe);
	if (rv == 0 && (rv = nng_dialer_create(&g->pd, g->probe, g->url)) == 0 && !g->ipc)
		rv = m->probe_tls == NULL
			     ? NNG_ENOTSUP
			     : nng_dialer_set_ptr(g->pd, NNG_OPT_TLS_CONFIG, m->probe_tls);
	if (rv == 0)
		rv = nng_dialer_start(g->pd, NNG_FLAG_NONBLOCK);
	if (rv != 0) {
		if (!g->warned)
			LB_WARN("%s: cannot probe the listener on %s: %s", g->what, g->url,
				nng_strerror(rv));
		g->warned = true;
		probe_end(g);
		return;
	}
	g->accepts = accepts;
	g->deadline_ms = now + MGR_GUARD_WAIT_MS;
	g->dialed_ms = 0;
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

static void
guard_tick(struct mgr *m, uint64_t now)
{
	nng_stat *root;
	uint32_t i;
	int rv;

	if ((rv = nng_stats_get(&root)) != 0) {
		if (!m->guard_warned)
			LB_WARN("listener guard off: nng statistics: %s", nng_strerror(rv));
		m->guard_warned = true;
		return;
	}
	for (i = 0; i < m->n_guards; i++) {
		struct mgr_guard *g = &m->guards[i];
		nng_stat *ls;
		uint64_t other, accepts;

		if (nng_listener_id(g->l) <= 0) { /* a restart that failed: again */
			restart(m, g);
			continue;
		}
		ls = scope_of(root, "listener", nng_listener_id(g->l));
		other = stat_of(ls, "other");
		accepts = stat_of(ls, "accept");
		if (nng_socket_id(g->probe) > 0) {
			bool dialed;

			if (accepts > g->accepts) {
				probe_end(g);
				/* Its closing counts as one more "other": not a reason to probe. */
				g->other = other + 1;
				continue;
			}
			/*
			 * Our dial went through and no accept followed: a stopped
			 * listener (a live one accepts within the same millisecond,
			 * or 100 ms after an error).
			 */
			dialed = stat_of(scope_of(root, "dialer", nng_dialer_id(g->pd)),
					 "connect") > 0;
			if (dialed && g->dialed_ms == 0)
				g->dialed_ms = now;
			if (dialed && now - g->dialed_ms >= MGR_GUARD_GRACE_MS) {
				probe_end(g);
				restart(m, g);
			} else if (!dialed && now >= g->deadline_ms) {
				probe_end(g);
				if (!g->warned)
					LB_WARN("%s: cannot tell whether the listener on %s "
						"accepts: "
						"the probe did not connect",
						g->what, g->url);
				g->warned = true;
			}
		} else if (other > g->other || now >= g->next_ms) {
			g->other = other;
			probe_start(m, g, accepts, now);
		}
	}
	nng_stats_free(root);
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
	uint32_t i;

	if (m->guard_running) {
		__atomic_store_n(&m->guard_stop, 1, __ATOMIC_RELEASE);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 2;
		m->guard_running = false;
		if (pthread_timedjoin_np(m->guard_thread, NULL, &until) != 0) {
			/* Stuck in nng: leave it and its probes; the process is ending. */
			LB_WARN("listener guard: its thread did not stop in 2 s; leaving it");
			pthread_detach(m->guard_thread);
			m->n_guards = 0;
			return;
		}
	}
	for (i = 0; i < m->n_guards; i++)
		probe_end(&m->guards[i]);
	m->n_guards = 0;
}
