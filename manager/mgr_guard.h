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
 * MGR_GUARD_PERIOD_MS anyway, it checks the listener: it connects to it
 * itself, completes the TLS handshake with the manager's own certificate
 * (mbed TLS, the library nng uses), sends the SP header of the peer
 * protocol (pair1 to the members' socket, req0 to the ctl socket), and
 * watches the listener's "accept" count. A live listener accepts within
 * the millisecond when idle. If none followed within MGR_GUARD_GRACE_MS,
 * it checks again MGR_GUARD_RECHECK_MS later, and only if that check finds
 * no accept either and nothing at all was accepted since the first began,
 * the listener is closed and listened again on the same address. A restart
 * drops every member's connection, so one slow accept must not cause it:
 * CI once saw a live listener, reading a 63 MB message under ASan on a
 * loaded machine, accept nothing for seconds. A listener nng has stopped
 * accepts nothing ever again, so the second look costs a few seconds of
 * recovery and no false restart. A check that cannot
 * connect or finish its handshake within MGR_GUARD_WAIT_MS proves nothing
 * and restarts nothing; it is logged once. Closing a listener drops the
 * connections it had accepted: members redial and say hello at the version
 * they run, which takes them back in sync without a snapshot.
 *
 * The check is a plain socket, not an nng dialer. nng 1.5.2 can orphan a
 * pipe when a socket or dialer is closed while it is making one (nng issue
 * 1498, fixed in 1.6.0), and nng_close() then never returns: the first
 * version of this guard dialed with an nng socket and closed it after each
 * check, and its thread was found stuck in nng in CI (after which every
 * listener that stopped stayed stopped). The guard's only nng calls now are
 * the statistics and a listener's close and re-creation.
 *
 * Threads: the guard's own thread checks and restarts; the loop thread
 * listens at start (before mgr_guard_start), stops and frees it, and reads
 * its counters (atomics).
 */
#ifndef MGR_GUARD_H
#define MGR_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#define MGR_MAX_LISTENERS 3
#define MGR_GUARD_TICK_MS 500
#define MGR_GUARD_PERIOD_MS 10000 /* a check at least this often */
#define MGR_GUARD_WAIT_MS 2000	  /* connect and handshake within, or the check proves nothing */
#define MGR_GUARD_GRACE_MS 4000	  /* an accept after the headers were exchanged, at most */
#define MGR_GUARD_RECHECK_MS 1000 /* a check that found no accept: the next one after */

struct mgr_guard;

/*
 * A guard for listeners whose TLS ones use the server configuration `tls`
 * (NULL: ipc only). With cert and key (the manager's own, PEM files) it
 * checks TLS listeners as a TLS client; without them, or if they cannot be
 * loaded (logged), it checks only the ipc ones. NULL when out of memory.
 */
struct mgr_guard *mgr_guard_new(nng_tls_config *tls, const char *cert, const char *key);

/*
 * Listen on url with socket s (what: its name in logs), guarded: the check
 * speaks req0 if req_check (s is rep0), else pair1. Before mgr_guard_start.
 * Returns 0, or -LB_EINVAL / -LB_EIO with the reason in err.
 */
int mgr_guard_listen(struct mgr_guard *g, nng_socket s, const char *url, const char *what,
	bool req_check, char *err, size_t len);

/* Start the guard's thread. Returns 0 or an errno. */
int mgr_guard_start(struct mgr_guard *g);

/*
 * Stop the thread, waiting at most 2 * MGR_GUARD_WAIT_MS. false: it did
 * not stop and was left running; then g, and the TLS configuration it was
 * given, must outlive the process (do not free them).
 */
bool mgr_guard_stop(struct mgr_guard *g);

void mgr_guard_free(struct mgr_guard *g);

/* Listeners listened again, and checks ended, since the start (any thread). */
void mgr_guard_stats(const struct mgr_guard *g, uint64_t *restarts, uint64_t *checks);

#endif /* MGR_GUARD_H */
