/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's transport (nng) and the member side of the protocol.
 *
 * Members: one pair1 polyamorous socket listening on `listen`; a member's
 * connection (nng pipe) is learnt from its HELLO, and every message to it
 * is addressed to that pipe. TLS is mutual: the handshake refuses a peer
 * whose certificate the CA did not sign.
 *
 * Pacing: a polyamorous socket queues at most two messages per connection
 * and silently drops the next one when that queue is full (nng does so to
 * keep one slow member from blocking the rest). So every member has its own
 * queue here, and a message is handed to nng only while fewer than two are
 * estimated to be still on their way, at MGR_SEND_BYTES_PER_MS. A snapshot
 * of 100,000 backends in five chunks thus leaves in a few hundred ms
 * instead of losing three chunks. Whatever is lost anyway (a member that
 * stops reading) is repaired by the protocol: a missed PREPARE fences the
 * member, and a fenced member gets its snapshot again until it is back.
 *
 * sluicectl: an nng rep0 socket on `ctl` (ipc, owner-only) and, if set,
 * `ctl_tls` (mutual TLS).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_err.h"
#include "lb_file.h"
#include "lb_log.h"
#include "lb_proof.h"
#include "mgr.h"
#include "mgr_guard.h"
#include "mgr_snap.h"
#include "mgr_text.h"

/* Conservative wire rate for pacing (10 MB/s), plus 1 ms per message. */
#define MGR_SEND_BYTES_PER_MS 10000
#define MGR_SNAP_DEDUP_MS 1000

/* ---- closed connections: nng's thread -> the loop ---- */

static void
pipe_gone(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct mgr *m = arg;
	uint32_t id = (uint32_t)nng_pipe_id(p);
	ssize_t w;

	(void)ev;
	/* Four bytes to a pipe are atomic; if it is full the loop rescans. */
	w = write(m->pipe_ev[1], &id, sizeof(id));
	(void)w;
}

static int
find_pipe(const struct mgr *m, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < m->commit->n_members; i++)
		if (m->peers[i].mp_connected && (uint32_t)nng_pipe_id(m->peers[i].mp_pipe) == id)
			return (int)i;
	return -1;
}

static void
flush_queue(struct mgr_peer *p)
{
	while (p->mp_head != NULL) {
		struct mgr_out *o = p->mp_head;

		p->mp_head = o->mo_next;
		nng_msg_free(o->mo_msg);
		free(o);
	}
	p->mp_tail = NULL;
	p->mp_queued = 0;
	p->mp_done_ms[0] = p->mp_done_ms[1] = 0;
}

static void
disconnected(struct mgr *m, int i, uint64_t now)
{
	struct mgr_member *mb = &m->commit->members[i];
	struct mgr_peer *p = &m->peers[i];

	p->mp_connected = false;
	p->mp_since_ms = now;
	flush_queue(p);
	LB_WARN("member %s disconnected (%s)", mb->id,
		mb->state == MGR_MEMBER_IN_SYNC ? "was in sync" : "was fenced");
	/* Gone, it cannot vote: fenced now between rounds (mgr_commit_gone). */
	mgr_commit_gone(m->commit, mb->id);
	mgr_run_actions(m, now);
}

void
mgr_net_pipes(struct mgr *m, uint64_t now)
{
	uint32_t ids[64];
	ssize_t n;
	int i;

	while ((n = read(m->pipe_ev[0], ids, sizeof(ids))) > 0) {
		for (i = 0; i < (int)(n / (ssize_t)sizeof(ids[0])); i++) {
			int k = find_pipe(m, ids[i]);

			if (k >= 0)
				disconnected(m, k, now);
		}
	}
}

/* ---- sockets ---- */

static int
tls_setup(struct mgr *m, char *err, size_t len)
{
	const struct mgr_config *c = &m->cfg;
	char *cert = NULL, *key = NULL;
	int rv;

	if ((rv = nng_tls_config_alloc(&m->tls, NNG_TLS_MODE_SERVER)) != 0) {
		snprintf(err, len, "tls: %s", nng_strerror(rv));
		return -LB_EINVAL;
	}
	/* Mutual: a member or operator without a certificate from our CA is refused. */
	if ((rv = nng_tls_config_auth_mode(m->tls, NNG_TLS_AUTH_MODE_REQUIRED)) != 0) {
		snprintf(err, len, "tls: require client certificates: %s", nng_strerror(rv));
		return -LB_EINVAL;
	}
	if ((rv = nng_tls_config_ca_file(m->tls, c->mc_ca)) != 0) {
		snprintf(err, len, "tls: ca %s: %s", c->mc_ca, nng_strerror(rv));
		return -LB_EINVAL;
	}
	if ((rv = lb_read_file(c->mc_cert, 1 << 20, &cert, NULL)) != 0 ||
		(rv = lb_read_file(c->mc_key, 1 << 20, &key, NULL)) != 0) {
		snprintf(err, len, "tls: cannot read %s: %s", cert == NULL ? c->mc_cert : c->mc_key,
			strerror(-rv));
		free(cert);
		return -LB_EINVAL;
	}
	rv = nng_tls_config_own_cert(m->tls, cert, key, NULL);
	/* Members and operators over TLS prove their names (lb_proof.h). */
	if (rv == 0) {
		char perr[256];

		if ((m->proof_ca = lb_proof_ca_load(c->mc_ca, perr, sizeof(perr))) == NULL ||
			getrandom(m->nonce_key, sizeof(m->nonce_key), 0) != sizeof(m->nonce_key)) {
			snprintf(err, len, "tls: proofs of names: %s",
				m->proof_ca == NULL ? perr : strerror(errno));
			free(cert);
			free(key);
			return -LB_EINVAL;
		}
	}
	free(cert);
	free(key);
	if (rv != 0) {
		snprintf(err, len, "tls: certificate %s with key %s: %s", c->mc_cert, c->mc_key,
			nng_strerror(rv));
		return -LB_EINVAL;
	}
	return 0;
}

int
mgr_net_start(struct mgr *m, char *err, size_t len)
{
	const struct mgr_config *c = &m->cfg;
	int rv;

	m->snap = mgr_snap_new();
	if (m->snap == NULL) {
		snprintf(err, len, "snapshots: out of memory");
		return -LB_ENOMEM;
	}
	if (pipe2(m->pipe_ev, O_NONBLOCK | O_CLOEXEC) != 0) {
		snprintf(err, len, "pipe: %s", strerror(errno));
		return -LB_EIO;
	}
	if (c->mc_has_tls && tls_setup(m, err, len) != 0)
		return -LB_EINVAL;
	if ((rv = nng_pair1_open_poly(&m->msock)) != 0 ||
		(rv = nng_socket_set_size(m->msock, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES)) != 0 ||
		(rv = nng_socket_set_int(m->msock, NNG_OPT_SENDBUF, 1024)) != 0 ||
		(rv = nng_socket_set_int(m->msock, NNG_OPT_RECVBUF, 1024)) != 0 ||
		(rv = nng_pipe_notify(m->msock, NNG_PIPE_EV_REM_POST, pipe_gone, m)) != 0 ||
		(rv = nng_socket_get_int(m->msock, NNG_OPT_RECVFD, &m->msock_fd)) != 0) {
		snprintf(err, len, "members socket: %s", nng_strerror(rv));
		return -LB_EIO;
	}
	if ((rv = nng_rep0_open(&m->csock)) != 0 ||
		(rv = nng_socket_set_size(m->csock, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES)) != 0 ||
		/* A reply waits this long for a client that does not read. */
		(rv = nng_socket_set_ms(m->csock, NNG_OPT_SENDTIMEO, MGR_CTL_SEND_MS)) != 0 ||
		(rv = nng_socket_get_int(m->csock, NNG_OPT_RECVFD, &m->csock_fd)) != 0) {
		snprintf(err, len, "ctl socket: %s", nng_strerror(rv));
		return -LB_EIO;
	}
	/* The guard checks the TLS listeners with our own certificate. */
	m->guard = mgr_guard_new(
		m->tls, c->mc_has_tls ? c->mc_cert : NULL, c->mc_has_tls ? c->mc_key : NULL);
	if (m->guard == NULL) {
		snprintf(err, len, "listener guard: out of memory");
		return -LB_ENOMEM;
	}
	if (mgr_guard_listen(m->guard, m->msock, c->mc_listen, "members", false, err, len) != 0 ||
		mgr_guard_listen(m->guard, m->csock, c->mc_ctl, "ctl", true, err, len) != 0 ||
		(c->mc_ctl_tls[0] != '\0' && mgr_guard_listen(m->guard, m->csock, c->mc_ctl_tls,
						     "ctl_tls", true, err, len) != 0))
		return -LB_EIO;
	if ((rv = mgr_guard_start(m->guard)) != 0) {
		snprintf(err, len, "listener guard: %s", strerror(rv));
		return -LB_EIO;
	}
	return 0;
}

static void *
close_sockets(void *arg)
{
	struct mgr *m = arg;

	if (nng_socket_id(m->msock) > 0)
		nng_close(m->msock);
	if (nng_socket_id(m->csock) > 0)
		nng_close(m->csock);
	return NULL;
}

/*
 * Close both sockets, or give up after MGR_CLOSE_WAIT_S: nng 1.5.2's close
 * can wait forever for a connection it orphaned when a listener was closed
 * in the middle of a handshake (nng issue 1498; the guard closes listeners).
 * The process is ending and the database is closed: the kernel closes what
 * nng could not. Returns false if it gave up (the thread may still run).
 */
static bool
close_sockets_within(struct mgr *m)
{
	struct timespec until;
	pthread_t t;

	if (pthread_create(&t, NULL, close_sockets, m) != 0) {
		close_sockets(m);
		return true;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += MGR_CLOSE_WAIT_S;
	if (pthread_timedjoin_np(t, NULL, &until) == 0)
		return true;
	LB_WARN("nng did not close its sockets within %d s (nng 1.5.2 can hang there, see "
		"docs/reliability.md); leaving them to the kernel",
		MGR_CLOSE_WAIT_S);
	pthread_detach(t);
	return false;
}

void
mgr_net_stop(struct mgr *m)
{
	uint32_t i;

	for (i = 0; i < MGR_MAX_MEMBERS; i++)
		flush_queue(&m->peers[i]);
	if (!mgr_guard_stop(m->guard))
		m->abandoned = true; /* its thread may still read the guard and the TLS config */
	if (!close_sockets_within(m)) {
		m->abandoned = true; /* nng may still use what it was given: keep it */
		return;
	}
	if (m->tls != NULL && !m->abandoned)
		nng_tls_config_free(m->tls);
	if (!m->abandoned) {
		mgr_guard_free(m->guard);
		m->guard = NULL;
	}
	m->tls = NULL;
	lb_proof_ca_free(m->proof_ca);
	m->proof_ca = NULL;
	if (m->pipe_ev[0] > 0) {
		close(m->pipe_ev[0]);
		close(m->pipe_ev[1]);
	}
	mgr_snap_free(m->snap);
	m->snap = NULL;
}

/* ---- paced sends ---- */

static void
pump_peer(struct mgr *m, int i, uint64_t now)
{
	struct mgr_peer *p = &m->peers[i];

	while (p->mp_head != NULL && p->mp_done_ms[0] <= now) {
		struct mgr_out *o = p->mp_head;
		uint64_t start = p->mp_done_ms[1] > now ? p->mp_done_ms[1] : now;
		int rv;

		p->mp_head = o->mo_next;
		if (p->mp_head == NULL)
			p->mp_tail = NULL;
		p->mp_queued--;
		rv = nng_sendmsg(m->msock, o->mo_msg, NNG_FLAG_NONBLOCK);
		if (rv != 0) {
			LB_WARN("member %s: message of %zu bytes not sent: %s",
				m->commit->members[i].id, o->mo_size, nng_strerror(rv));
			nng_msg_free(o->mo_msg);
		}
		p->mp_done_ms[0] = p->mp_done_ms[1];
		p->mp_done_ms[1] = start + 1 + o->mo_size / MGR_SEND_BYTES_PER_MS;
		free(o);
	}
}

void
mgr_send(struct mgr *m, int i, const uint8_t *buf, size_t len, uint64_t now)
{
	struct mgr_peer *p;
	struct mgr_out *o;

	if (i < 0 || (uint32_t)i >= m->commit->n_members || !m->peers[i].mp_connected)
		return;
	p = &m->peers[i];
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return;
	if (nng_msg_alloc(&o->mo_msg, 0) != 0 || nng_msg_append(o->mo_msg, buf, len) != 0) {
		if (o->mo_msg != NULL)
			nng_msg_free(o->mo_msg);
		free(o);
		LB_WARN("member %s: out of memory for a message", m->commit->members[i].id);
		return;
	}
	nng_msg_set_pipe(o->mo_msg, p->mp_pipe);
	o->mo_size = len;
	if (p->mp_tail != NULL)
		p->mp_tail->mo_next = o;
	else
		p->mp_head = o;
	p->mp_tail = o;
	p->mp_queued++;
	pump_peer(m, i, now);
}

void
mgr_send_msg(struct mgr *m, int i, const struct lb_msg *msg, uint64_t now)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = lb_msg_encode(msg, &buf, &len);

	if (rc != 0) {
		LB_ERR("cannot encode a message (type %d): %s", msg->type, lb_strerror(rc));
		return;
	}
	mgr_send(m, i, buf, len, now);
	free(buf);
}

/* Send on a pipe no member owns yet (REFUSED to a stranger). */
static void
send_pipe(struct mgr *m, nng_pipe pipe, const struct lb_msg *msg)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	nng_msg *nm;

	if (lb_msg_encode(msg, &buf, &len) != 0)
		return;
	if (nng_msg_alloc(&nm, 0) == 0) {
		if (nng_msg_append(nm, buf, len) == 0) {
			nng_msg_set_pipe(nm, pipe);
			if (nng_sendmsg(m->msock, nm, NNG_FLAG_NONBLOCK) == 0)
				nm = NULL;
		}
		if (nm != NULL)
			nng_msg_free(nm);
	}
	free(buf);
}

/* ---- snapshots ---- */

void
mgr_send_snapshot(struct mgr *m, int i, uint64_t now)
{
	struct mgr_snap_chunks sc;
	struct mgr_peer *p;
	size_t bytes = 0;
	uint32_t k;
	int rc;

	if (i < 0 || (uint32_t)i >= m->commit->n_members || !m->peers[i].mp_connected)
		return; /* it gets one when it says hello again */
	p = &m->peers[i];
	rc = mgr_snap_get(m->snap, &m->committed, m->committed_version, m->committed_digest, &sc);
	if (rc != 0) {
		LB_ERR("member %s: cannot build a snapshot of version %" PRIu64 ": %s",
			m->commit->members[i].id, m->committed_version, lb_strerror(rc));
		return;
	}
	for (k = 0; k < sc.count; k++) {
		mgr_send(m, i, sc.buf[k], sc.len[k], now);
		bytes += sc.len[k];
	}
	p->mp_snap_version = sc.version;
	p->mp_snap_ms = now;
	p->mp_snaps++;
	if (p->mp_snap_backoff_ms == 0)
		p->mp_snap_backoff_ms = MGR_SNAP_RETRY_MS;
	LB_INFO("member %s: snapshot of version %" PRIu64 " sent (%u chunk%s, %zu bytes)",
		m->commit->members[i].id, sc.version, sc.count, sc.count == 1 ? "" : "s", bytes);
}

void
mgr_net_pump(struct mgr *m, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < m->commit->n_members; i++) {
		struct mgr_peer *p = &m->peers[i];

		if (!p->mp_connected)
			continue;
		pump_peer(m, (int)i, now);
		/* A fenced member that did not come back: its snapshot may be lost. */
		if (m->commit->members[i].state == MGR_MEMBER_FENCED && p->mp_snap_ms != 0 &&
			p->mp_snap_backoff_ms != 0 &&
			now >= p->mp_snap_ms + p->mp_snap_backoff_ms) {
			p->mp_snap_backoff_ms = p->mp_snap_backoff_ms * 2 > MGR_SNAP_RETRY_MAX_MS
							? MGR_SNAP_RETRY_MAX_MS
							: p->mp_snap_backoff_ms * 2;
			LB_WARN("member %s: still fenced (%s); sending the snapshot again",
				m->commit->members[i].id, m->commit->members[i].why);
			mgr_send_snapshot(m, (int)i, now);
		}
	}
}

uint64_t
mgr_net_next_deadline(const struct mgr *m, uint64_t now)
{
	uint64_t d = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < m->commit->n_members; i++) {
		const struct mgr_peer *p = &m->peers[i];

		if (!p->mp_connected)
			continue;
		if (p->mp_head != NULL && p->mp_done_ms[0] < d)
			d = p->mp_done_ms[0];
		if (m->commit->members[i].state == MGR_MEMBER_FENCED && p->mp_snap_ms != 0 &&
			p->mp_snap_backoff_ms != 0 && p->mp_snap_ms + p->mp_snap_backoff_ms < d)
			d = p->mp_snap_ms + p->mp_snap_backoff_ms;
		if (!p->mp_silent_logged && p->mp_last_contact_ms + MGR_SILENT_MS < d)
			d = p->mp_last_contact_ms + MGR_SILENT_MS;
	}
	return d < now ? now : d;
}

/* ---- the member protocol ---- */

/* Log a peer's bad messages once per connection; count them all. */
static bool
first_bad(struct mgr *m, nng_pipe pipe)
{
	uint32_t id = (uint32_t)nng_pipe_id(pipe), i;

	for (i = 0; i < m->n_bad_pipes && i < 64; i++)
		if (m->bad_pipes[i] == id)
			return false;
	m->bad_pipes[m->n_bad_pipes++ % 64] = id;
	return true;
}

static void refuse(struct mgr *m, nng_pipe pipe, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
refuse(struct mgr *m, nng_pipe pipe, const char *fmt, ...)
{
	struct lb_msg *r = calloc(1, sizeof(*r));
	va_list ap;

	m->n_refused++;
	if (r == NULL)
		return;
	r->type = LB_MSG_REFUSED;
	snprintf(r->sender, sizeof(r->sender), "manager");
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	send_pipe(m, pipe, r);
	free(r);
}

/*
 * A connection over ipc, as the kernel says (its peer's uid). Anything else
 * must prove its name, including a connection nng has already forgotten: a
 * message can outlive its connection in the socket's queue, and then no
 * option of the pipe can be read any more. Fail closed.
 */
static bool
pipe_ipc_uid(nng_pipe pipe, uint64_t *uid)
{
	return nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_UID, uid) == 0;
}

/*
 * Over TLS a hello counts only once its id is proven on this connection
 * (lb_proof.h): the first is answered with a CHALLENGE, the next must carry
 * a proof by the key of a certificate of our CA that names the id. false:
 * not (yet); the hello is to be ignored.
 */
static bool
proven(struct mgr *m, nng_pipe pipe, const struct lb_msg *h)
{
	uint32_t pid = (uint32_t)nng_pipe_id(pipe);
	uint8_t nonce[LB_NONCE_LEN];
	char why[LB_MSG_TEXT - 64];
	uint64_t uid;
	int i;

	if (m->proof_ca == NULL || pipe_ipc_uid(pipe, &uid)) /* ipc: local, owner-only */
		return true;
	i = mgr_commit_find(m->commit, h->id);
	if (i >= 0 && m->peers[i].mp_proven_pipe == pid)
		return true;
	lb_proof_nonce(m->nonce_key, pid, nonce);
	if (h->proof_len == 0) {
		struct lb_msg *ch = calloc(1, sizeof(*ch));

		m->n_challenges++;
		if (ch == NULL)
			return false;
		ch->type = LB_MSG_CHALLENGE;
		snprintf(ch->sender, sizeof(ch->sender), "manager");
		memcpy(ch->nonce, nonce, LB_NONCE_LEN);
		send_pipe(m, pipe, ch);
		free(ch);
		return false;
	}
	if (memcmp(h->nonce, nonce, LB_NONCE_LEN) != 0)
		snprintf(why, sizeof(why), "the proof answers another connection's challenge");
	else if (lb_proof_verify(m->proof_ca, h->body, strlen(h->body) + 1, nonce, h->id, h->proof,
			 h->proof_len, why, sizeof(why)) == 0)
		return true;
	m->n_unproven++;
	LB_WARN("connection %u: hello as %s refused: %s", pid, h->id, why);
	refuse(m, pipe, "hello as %s refused: %s", h->id, why);
	return false;
}

static void
on_hello(struct mgr *m, nng_pipe pipe, const struct lb_msg *h, uint64_t now)
{
	struct mgr_commit *c = m->commit;
	struct mgr_peer *p;
	struct lb_msg *w;
	bool current;
	int i;

	if (h->role != LB_ROLE_MUX && h->role != LB_ROLE_AGENT) {
		refuse(m, pipe, "role %s cannot be a member (mux or agent)",
			mgr_role_name(h->role));
		return;
	}
	if (h->id[0] == '\0') {
		refuse(m, pipe, "hello without a member id");
		return;
	}
	if (!proven(m, pipe, h))
		return;
	i = mgr_commit_find(c, h->id);
	if (i >= 0 && m->peers[i].mp_connected &&
		nng_pipe_id(m->peers[i].mp_pipe) != nng_pipe_id(pipe)) {
		/* The newest connection wins (a restart beat the old one's close). */
		LB_WARN("member %s: hello on a new connection; closing the old one", h->id);
		flush_queue(&m->peers[i]);
		nng_pipe_close(m->peers[i].mp_pipe);
	}
	mgr_commit_hello(c, h->id, h->role, h->version, h->digest, now);
	i = mgr_commit_find(c, h->id);
	if (i < 0) {
		refuse(m, pipe, "the manager has %d members already", MGR_MAX_MEMBERS);
		return;
	}
	mgr_vip_probe_hello(m->vip, i, h->id, &h->probe_addr);
	p = &m->peers[i];
	if (m->proof_ca != NULL)
		p->mp_proven_pipe = (uint32_t)nng_pipe_id(pipe);
	if (!p->mp_connected || nng_pipe_id(p->mp_pipe) != nng_pipe_id(pipe)) {
		flush_queue(p);
		p->mp_pipe = pipe;
		p->mp_connected = true;
		p->mp_since_ms = now;
	}
	p->mp_last_contact_ms = now;
	p->mp_silent_logged = false;
	current = h->version == c->committed &&
		  (c->committed == 0 || memcmp(h->digest, c->committed_digest, LB_DIGEST_LEN) == 0);
	if (c->members[i].state == MGR_MEMBER_IN_SYNC) {
		p->mp_snap_ms = 0;
		p->mp_snap_backoff_ms = 0;
	}
	LB_INFO("member %s (%s) hello at version %" PRIu64 ": %s%s", h->id, mgr_role_name(h->role),
		h->version, c->members[i].state == MGR_MEMBER_IN_SYNC ? "in sync" : "fenced: ",
		c->members[i].state == MGR_MEMBER_IN_SYNC ? "" : c->members[i].why);
	w = calloc(1, sizeof(*w));
	if (w != NULL) {
		w->type = LB_MSG_WELCOME;
		snprintf(w->sender, sizeof(w->sender), "manager");
		w->version = c->committed;
		w->flag = !current;
		mgr_send_msg(m, i, w, now);
		/* It may hold what a round before our restart prepared. */
		if (m->rec_abort_version != 0 && m->rec_abort_version == c->committed + 1) {
			memset(w, 0, sizeof(*w));
			w->type = LB_MSG_ABORT;
			snprintf(w->sender, sizeof(w->sender), "manager");
			w->version = m->rec_abort_version;
			memcpy(w->digest, m->rec_digest, LB_DIGEST_LEN);
			snprintf(w->text, sizeof(w->text), "manager restarted before deciding");
			mgr_send_msg(m, i, w, now);
		}
		free(w);
	}
	mgr_run_actions(m, now);
}

/* A "no" from a member behind the committed version fences it (mgr_commit_vote). */
static void
on_vote(struct mgr *m, int i, const struct lb_msg *msg, uint64_t now)
{
	char id[LB_MSG_ID];

	snprintf(id, sizeof(id), "%s", m->commit->members[i].id);
	mgr_commit_vote(m->commit, id, msg->version, msg->digest, msg->flag, msg->text, now);
	mgr_run_actions(m, now);
}

static void
on_member_msg(struct mgr *m, nng_pipe pipe, const struct lb_msg *msg, uint64_t now)
{
	int i = find_pipe(m, (uint32_t)nng_pipe_id(pipe));
	struct mgr_peer *p;

	if (msg->type == LB_MSG_HELLO) {
		on_hello(m, pipe, msg, now);
		return;
	}
	if (i < 0) {
		m->n_unexpected++;
		if (first_bad(m, pipe))
			LB_WARN("connection %d: message type %d before any hello: ignored",
				nng_pipe_id(pipe), msg->type);
		return;
	}
	p = &m->peers[i];
	p->mp_last_contact_ms = now;
	p->mp_silent_logged = false;
	switch (msg->type) {
	case LB_MSG_VOTE:
		on_vote(m, i, msg, now);
		break;
	case LB_MSG_SNAPSHOT_REQUEST:
		/* The WELCOME that asked for it usually came with one already. */
		if (p->mp_snap_version == m->committed_version &&
			now < p->mp_snap_ms + MGR_SNAP_DEDUP_MS)
			break;
		mgr_send_snapshot(m, i, now);
		break;
	case LB_MSG_STATUS:
		/* Not a hello: a hello mid-round would fence it. */
		mgr_commit_status(m->commit, m->commit->members[i].id, msg->version);
		p->mp_n_counters = msg->n_counters;
		memcpy(p->mp_counters, msg->counters, msg->n_counters * sizeof(msg->counters[0]));
		break;
	case LB_MSG_REFUSED:
		LB_WARN("member %s refused the manager: %s", m->commit->members[i].id, msg->text);
		break;
	default:
		m->n_unexpected++;
		p->mp_bad_msgs++;
		if (!p->mp_bad_logged) {
			p->mp_bad_logged = true;
			LB_WARN("member %s: unexpected message type %d: ignored",
				m->commit->members[i].id, msg->type);
		}
		break;
	}
}

void
mgr_net_members(struct mgr *m, uint64_t now)
{
	struct lb_msg *msg = calloc(1, sizeof(*msg));
	char e[LB_MSG_TEXT];
	nng_msg *nm;
	int rv;

	if (msg == NULL)
		return;
	while ((rv = nng_recvmsg(m->msock, &nm, NNG_FLAG_NONBLOCK)) == 0) {
		nng_pipe pipe = nng_msg_get_pipe(nm);
		int rc = lb_msg_decode(nng_msg_body(nm), nng_msg_len(nm), msg, e, sizeof(e));

		if (rc == -LB_EPROTOCOL) {
			if (first_bad(m, pipe))
				LB_WARN("connection %d refused: %s", nng_pipe_id(pipe), e);
			refuse(m, pipe, "%s", e);
		} else if (rc != 0) {
			int i = find_pipe(m, (uint32_t)nng_pipe_id(pipe));

			m->n_malformed++;
			if (i >= 0)
				m->peers[i].mp_bad_msgs++;
			if (first_bad(m, pipe)) { /* said once per connection */
				if (i >= 0)
					LB_WARN("member %s: malformed message ignored: %s",
						m->commit->members[i].id, e);
				else
					LB_WARN("connection %d: malformed message ignored: %s",
						nng_pipe_id(pipe), e);
			}
		} else {
			on_member_msg(m, pipe, msg, now);
		}
		lb_msg_free(msg);
		nng_msg_free(nm);
	}
	if (rv != NNG_EAGAIN && rv != NNG_ECLOSED)
		LB_WARN("members socket: %s", nng_strerror(rv));
	free(msg);
}

/* ---- sluicectl ---- */

/*
 * Over ctl_tls a request is served only with a proof of the operator's name
 * (lb_proof.h): its certificate, of our CA and naming it, and a signature of
 * this connection's nonce and the name by the certificate's key. A request
 * without one is answered with a CHALLENGE, which sluicectl answers by
 * sending the request again with the proof. true: serve it (over TLS, the
 * name proven is req->id); false: rep is the challenge or the refusal.
 */
static bool
ctl_proven(struct mgr *m, const struct lb_msg *req, nng_pipe pipe, bool ipc, struct lb_msg *rep)
{
	uint32_t pid = (uint32_t)nng_pipe_id(pipe);
	uint8_t nonce[LB_NONCE_LEN];
	char why[LB_MSG_TEXT - 96];

	if (m->proof_ca == NULL || ipc)
		return true; /* ipc: the kernel names the uid */
	lb_proof_nonce(m->nonce_key, pid, nonce);
	/*
	 * No proof, or one for another connection (a client that kept its proof
	 * across a reconnect): this connection's challenge.
	 */
	if (req->proof_len == 0 || memcmp(req->nonce, nonce, LB_NONCE_LEN) != 0) {
		m->n_challenges++;
		rep->type = LB_MSG_CHALLENGE;
		memcpy(rep->nonce, nonce, LB_NONCE_LEN);
		return false;
	}
	if (req->cert == NULL)
		snprintf(why, sizeof(why), "no certificate");
	else if (lb_proof_verify(m->proof_ca, req->cert, strlen(req->cert) + 1, nonce, req->id,
			 req->proof, req->proof_len, why, sizeof(why)) == 0)
		return true;
	m->n_unproven++;
	if (first_bad(m, pipe))
		LB_WARN("ctl connection %u: request as operator %s refused: %s", pid, req->id, why);
	rep->type = LB_MSG_CTL_REPLY;
	rep->flag = false;
	snprintf(rep->text, sizeof(rep->text), "refused: operator %.60s: %s", req->id, why);
	return false;
}

/*
 * Who asks, for history: what the client says it is (sluicectl sends
 * "user@host") and, over ipc, the uid the kernel vouches for (uid); over
 * TLS, the name its certificate proved (ctl_proven()).
 */
static void
who_asks(struct mgr *m, const struct lb_msg *req, const uint64_t *uid)
{
	const char *who = strncmp(req->sender, "ctl:", 4) == 0 ? req->sender + 4 : req->sender;

	if (uid != NULL)
		snprintf(m->asker, sizeof(m->asker), "%.60s (uid %" PRIu64 ")", who, *uid);
	else if (req->proof_len != 0)
		snprintf(m->asker, sizeof(m->asker), "%.40s (certificate %.40s)", who, req->id);
	else
		snprintf(m->asker, sizeof(m->asker), "%.60s (not proven)", who);
}

void
mgr_net_ctl(struct mgr *m, uint64_t now)
{
	struct lb_msg *req = calloc(1, sizeof(*req)), *rep = calloc(1, sizeof(*rep));
	char e[LB_MSG_TEXT];
	int rv = NNG_EAGAIN, budget = MGR_CTL_BATCH;
	nng_msg *nm;

	if (req == NULL || rep == NULL)
		goto out;
	/* A bounded batch per pass: a flood never starves the members. */
	while (budget-- > 0 && (rv = nng_recvmsg(m->csock, &nm, NNG_FLAG_NONBLOCK)) == 0) {
		int rc = lb_msg_decode(nng_msg_body(nm), nng_msg_len(nm), req, e, sizeof(e));
		nng_pipe pipe = nng_msg_get_pipe(nm);
		uint8_t *buf = NULL;
		uint64_t uid = 0;
		size_t len = 0;
		bool ipc;

		nng_msg_free(nm);
		memset(rep, 0, sizeof(*rep));
		snprintf(rep->sender, sizeof(rep->sender), "manager");
		if (rc == -LB_EPROTOCOL) {
			m->n_refused++;
			rep->type = LB_MSG_REFUSED;
			snprintf(rep->text, sizeof(rep->text), "%s", e);
		} else if (rc != 0 || req->type != LB_MSG_CTL_REQUEST) {
			m->n_malformed++;
			if (first_bad(m, pipe))
				LB_WARN("ctl connection %d: malformed request ignored: %s",
					nng_pipe_id(pipe), rc != 0 ? e : "not a CTL_REQUEST");
			rep->type = LB_MSG_CTL_REPLY;
			rep->flag = false;
			snprintf(rep->text, sizeof(rep->text), "malformed request: %.200s",
				rc != 0 ? e : "not a CTL_REQUEST");
		} else if (ctl_proven(m, req, pipe, (ipc = pipe_ipc_uid(pipe, &uid)), rep)) {
			m->n_ctl++;
			who_asks(m, req, ipc ? &uid : NULL);
			mgr_ctl_handle(m, req, rep, now);
			m->asker[0] = '\0';
		}
		lb_msg_free(req);
		rc = lb_msg_encode(rep, &buf, &len);
		lb_msg_free(rep);
		if (rc != 0) {
			LB_ERR("ctl: cannot encode the reply: %s", lb_strerror(rc));
			continue; /* the client times out; rep0 drops the request */
		}
		if ((rv = nng_send(m->csock, buf, len, 0)) != 0) {
			/*
			 * Its last reply is still unread: a client that sends and
			 * never reads would hold the manager's one thread. Drop it.
			 */
			m->n_ctl_dropped++;
			LB_WARN("ctl connection %d: reply not taken (%s): connection closed",
				nng_pipe_id(pipe), nng_strerror(rv));
			nng_pipe_close(pipe);
			rv = 0;
		}
		free(buf);
	}
	if (rv != 0 && rv != NNG_EAGAIN && rv != NNG_ECLOSED)
		LB_WARN("ctl socket: %s", nng_strerror(rv));
out:
	free(req);
	free(rep);
}
