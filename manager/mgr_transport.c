/* SPDX-License-Identifier: BSD-3-Clause */
/* The manager's transport (mgr_transport.h has the design). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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
#include "mgr_guard.h"
#include "mgr_msg.h"
#include "mgr_transport.h"

/* Conservative wire rate for pacing (10 MB/s), plus 1 ms per message. */
#define MGR_SEND_BYTES_PER_MS 10000
#define MGR_BAD_PIPES 64

/* A message waiting for its connection to take it. */
struct mgr_out {
	struct mgr_out *mo_next;
	nng_msg *mo_msg;
	size_t mo_size;
};

struct mgr_transport {
	const struct mgr_config *cfg;
	struct mgr_transport_ops ops;
	nng_socket msock; /* members: pair1 polyamorous */
	nng_socket csock; /* sluicectl: rep0 */
	int msock_fd, csock_fd;
	int pipe_ev[2]; /* ids of closed connections, from nng's thread */
	nng_tls_config *tls;
	/* Members and operators over TLS prove their names: the CA, the nonces' key. */
	struct lb_proof_ca *proof_ca;
	uint8_t nonce_key[32];
	uint32_t bad_pipes[MGR_BAD_PIPES]; /* connections already logged for bad messages */
	uint32_t n_bad_pipes;
	struct mgr_transport_stats st;
};

static nng_pipe
pipe_of(uint32_t id)
{
	nng_pipe p = NNG_PIPE_INITIALIZER;

	p.id = id;
	return p;
}

/* ---- closed connections: nng's thread -> the loop ---- */

static void
pipe_gone(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct mgr_transport *t = arg;
	uint32_t id = (uint32_t)nng_pipe_id(p);
	ssize_t w;

	(void)ev;
	/* Four bytes to a pipe are atomic; if it is full the loop rescans. */
	w = write(t->pipe_ev[1], &id, sizeof(id));
	(void)w;
}

void
mgr_transport_recv_pipes(struct mgr_transport *t, uint64_t now)
{
	uint32_t ids[64];
	ssize_t n;
	int i;

	while ((n = read(t->pipe_ev[0], ids, sizeof(ids))) > 0)
		for (i = 0; i < (int)(n / (ssize_t)sizeof(ids[0])); i++)
			t->ops.member_gone(t->ops.ctx, ids[i], now);
}

/* ---- sockets ---- */

static int
tls_setup(struct mgr_transport *t, char *err, size_t len)
{
	const struct mgr_config *c = t->cfg;
	char *cert = NULL, *key = NULL;
	int rv;

	if ((rv = nng_tls_config_alloc(&t->tls, NNG_TLS_MODE_SERVER)) != 0) {
		snprintf(err, len, "tls: %s", nng_strerror(rv));
		return -LB_EINVAL;
	}
	/* Mutual: a member or operator without a certificate from our CA is refused. */
	if ((rv = nng_tls_config_auth_mode(t->tls, NNG_TLS_AUTH_MODE_REQUIRED)) != 0) {
		snprintf(err, len, "tls: require client certificates: %s", nng_strerror(rv));
		return -LB_EINVAL;
	}
	if ((rv = nng_tls_config_ca_file(t->tls, c->mc_ca)) != 0) {
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
	rv = nng_tls_config_own_cert(t->tls, cert, key, NULL);
	/* Members and operators over TLS prove their names (lb_proof.h). */
	if (rv == 0) {
		char perr[256];

		if ((t->proof_ca = lb_proof_ca_load(c->mc_ca, perr, sizeof(perr))) == NULL ||
			getrandom(t->nonce_key, sizeof(t->nonce_key), 0) != sizeof(t->nonce_key)) {
			snprintf(err, len, "tls: proofs of names: %s",
				t->proof_ca == NULL ? perr : strerror(errno));
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

static int
sockets_open(struct mgr_transport *t, char *err, size_t len)
{
	int rv;

	if (pipe2(t->pipe_ev, O_NONBLOCK | O_CLOEXEC) != 0) {
		snprintf(err, len, "pipe: %s", strerror(errno));
		return -LB_EIO;
	}
	if (t->cfg->mc_has_tls && tls_setup(t, err, len) != 0)
		return -LB_EINVAL;
	if ((rv = nng_pair1_open_poly(&t->msock)) != 0 ||
		(rv = nng_socket_set_size(t->msock, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES)) != 0 ||
		(rv = nng_socket_set_int(t->msock, NNG_OPT_SENDBUF, 1024)) != 0 ||
		(rv = nng_socket_set_int(t->msock, NNG_OPT_RECVBUF, 1024)) != 0 ||
		(rv = nng_pipe_notify(t->msock, NNG_PIPE_EV_REM_POST, pipe_gone, t)) != 0 ||
		(rv = nng_socket_get_int(t->msock, NNG_OPT_RECVFD, &t->msock_fd)) != 0) {
		snprintf(err, len, "members socket: %s", nng_strerror(rv));
		return -LB_EIO;
	}
	if ((rv = nng_rep0_open(&t->csock)) != 0 ||
		(rv = nng_socket_set_size(t->csock, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES)) != 0 ||
		/* A reply waits this long for a client that does not read. */
		(rv = nng_socket_set_ms(t->csock, NNG_OPT_SENDTIMEO, MGR_CTL_SEND_MS)) != 0 ||
		(rv = nng_socket_get_int(t->csock, NNG_OPT_RECVFD, &t->csock_fd)) != 0) {
		snprintf(err, len, "ctl socket: %s", nng_strerror(rv));
		return -LB_EIO;
	}
	return 0;
}

struct mgr_transport *
mgr_transport_open(
	const struct mgr_config *cfg, const struct mgr_transport_ops *ops, char *err, size_t len)
{
	struct mgr_transport *t = lb_zalloc(sizeof(*t), "transport", err, len);

	if (t == NULL)
		return NULL;
	t->cfg = cfg;
	t->ops = *ops;
	t->pipe_ev[0] = t->pipe_ev[1] = -1;
	if (sockets_open(t, err, len) != 0) {
		/* Nothing listens yet: nng closes at once. */
		if (mgr_transport_close(t))
			mgr_transport_free(t);
		return NULL;
	}
	return t;
}

nng_tls_config *
mgr_transport_tls(const struct mgr_transport *t)
{
	return t->tls;
}

int
mgr_transport_listen(struct mgr_transport *t, struct mgr_guard *g, char *err, size_t len)
{
	const struct mgr_config *c = t->cfg;

	if (mgr_guard_listen(g, t->msock, c->mc_listen, "members", false, err, len) != 0 ||
		mgr_guard_listen(g, t->csock, c->mc_ctl, "ctl", true, err, len) != 0 ||
		(c->mc_ctl_tls[0] != '\0' && mgr_guard_listen(g, t->csock, c->mc_ctl_tls, "ctl_tls",
						     true, err, len) != 0))
		return -LB_EIO;
	return 0;
}

static void *
close_sockets(void *arg)
{
	struct mgr_transport *t = arg;

	if (nng_socket_id(t->msock) > 0)
		nng_close(t->msock);
	if (nng_socket_id(t->csock) > 0)
		nng_close(t->csock);
	return NULL;
}

/*
 * The process is ending and the database is closed: the kernel closes what
 * nng could not.
 */
bool
mgr_transport_close(struct mgr_transport *t)
{
	struct timespec until;
	pthread_t th;

	if (pthread_create(&th, NULL, close_sockets, t) != 0) {
		close_sockets(t);
		return true;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += MGR_CLOSE_WAIT_S;
	if (pthread_timedjoin_np(th, NULL, &until) == 0)
		return true;
	LB_WARN("nng did not close its sockets within %d s (nng 1.5.2 can hang there, see "
		"docs/reliability.md); leaving them to the kernel",
		MGR_CLOSE_WAIT_S);
	pthread_detach(th);
	return false;
}

void
mgr_transport_free(struct mgr_transport *t)
{
	if (t == NULL)
		return;
	if (t->tls != NULL)
		nng_tls_config_free(t->tls);
	lb_proof_ca_free(t->proof_ca);
	if (t->pipe_ev[0] >= 0) {
		close(t->pipe_ev[0]);
		close(t->pipe_ev[1]);
	}
	free(t);
}

int
mgr_transport_fd_members(const struct mgr_transport *t)
{
	return t->msock_fd;
}

int
mgr_transport_fd_ctl(const struct mgr_transport *t)
{
	return t->csock_fd;
}

int
mgr_transport_fd_pipes(const struct mgr_transport *t)
{
	return t->pipe_ev[0];
}

void
mgr_transport_stats(const struct mgr_transport *t, struct mgr_transport_stats *s)
{
	*s = t->st;
}

/* ---- paced sends ---- */

void
mgr_sendq_flush(struct mgr_sendq *q)
{
	while (q->q_head != NULL) {
		struct mgr_out *o = q->q_head;

		q->q_head = o->mo_next;
		nng_msg_free(o->mo_msg);
		free(o);
	}
	q->q_tail = NULL;
	q->q_queued = 0;
	q->q_done_ms[0] = q->q_done_ms[1] = 0;
}

uint64_t
mgr_sendq_due(const struct mgr_sendq *q)
{
	return q->q_head != NULL ? q->q_done_ms[0] : UINT64_MAX;
}

void
mgr_transport_pump(struct mgr_transport *t, struct mgr_sendq *q, const char *who, uint64_t now)
{
	while (q->q_head != NULL && q->q_done_ms[0] <= now) {
		struct mgr_out *o = q->q_head;
		uint64_t start = q->q_done_ms[1] > now ? q->q_done_ms[1] : now;
		int rv;

		q->q_head = o->mo_next;
		if (q->q_head == NULL)
			q->q_tail = NULL;
		q->q_queued--;
		rv = nng_sendmsg(t->msock, o->mo_msg, NNG_FLAG_NONBLOCK);
		if (rv != 0) {
			LB_WARN("member %s: message of %zu bytes not sent: %s", who, o->mo_size,
				nng_strerror(rv));
			nng_msg_free(o->mo_msg);
		}
		q->q_done_ms[0] = q->q_done_ms[1];
		q->q_done_ms[1] = start + 1 + o->mo_size / MGR_SEND_BYTES_PER_MS;
		free(o);
	}
}

int
mgr_transport_send(struct mgr_transport *t, struct mgr_sendq *q, uint32_t pipe, const uint8_t *buf,
	size_t len, const char *who, uint64_t now)
{
	struct mgr_out *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return -LB_ENOMEM;
	if (nng_msg_alloc(&o->mo_msg, 0) != 0 || nng_msg_append(o->mo_msg, buf, len) != 0) {
		if (o->mo_msg != NULL)
			nng_msg_free(o->mo_msg);
		free(o);
		LB_WARN("member %s: out of memory for a message", who);
		return -LB_ENOMEM;
	}
	nng_msg_set_pipe(o->mo_msg, pipe_of(pipe));
	o->mo_size = len;
	if (q->q_tail != NULL)
		q->q_tail->mo_next = o;
	else
		q->q_head = o;
	q->q_tail = o;
	q->q_queued++;
	mgr_transport_pump(t, q, who, now);
	return 0;
}

void
mgr_transport_send_pipe(struct mgr_transport *t, uint32_t pipe, const struct lb_msg *msg)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	nng_msg *nm;

	if (lb_msg_encode(msg, &buf, &len) != 0)
		return;
	if (nng_msg_alloc(&nm, 0) == 0) {
		if (nng_msg_append(nm, buf, len) == 0) {
			nng_msg_set_pipe(nm, pipe_of(pipe));
			if (nng_sendmsg(t->msock, nm, NNG_FLAG_NONBLOCK) == 0)
				nm = NULL;
		}
		if (nm != NULL)
			nng_msg_free(nm);
	}
	free(buf);
}

void
mgr_transport_refuse(struct mgr_transport *t, uint32_t pipe, const char *fmt, ...)
{
	struct lb_msg *r = mgr_msg_new(LB_MSG_REFUSED);
	va_list ap;

	t->st.refused++;
	if (r == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	mgr_transport_send_pipe(t, pipe, r);
	free(r);
}

void
mgr_transport_close_pipe(struct mgr_transport *t, uint32_t pipe)
{
	(void)t;
	nng_pipe_close(pipe_of(pipe));
}

bool
mgr_transport_first_bad(struct mgr_transport *t, uint32_t pipe)
{
	uint32_t i;

	for (i = 0; i < t->n_bad_pipes && i < MGR_BAD_PIPES; i++)
		if (t->bad_pipes[i] == pipe)
			return false;
	t->bad_pipes[t->n_bad_pipes++ % MGR_BAD_PIPES] = pipe;
	return true;
}

/* ---- proofs of names ---- */

/* Over ipc, as the kernel says: the peer's uid. */
static bool
pipe_ipc_uid(uint32_t pipe, uint64_t *uid)
{
	return nng_pipe_get_uint64(pipe_of(pipe), NNG_OPT_IPC_PEER_UID, uid) == 0;
}

bool
mgr_transport_proofs(const struct mgr_transport *t)
{
	return t->proof_ca != NULL;
}

bool
mgr_transport_trusted(const struct mgr_transport *t, uint32_t pipe)
{
	uint64_t uid;

	return t->proof_ca == NULL || pipe_ipc_uid(pipe, &uid);
}

bool
mgr_transport_prove(struct mgr_transport *t, uint32_t pipe, const struct lb_msg *h)
{
	uint8_t nonce[LB_NONCE_LEN];
	char why[LB_MSG_TEXT - 64];

	lb_proof_nonce(t->nonce_key, pipe, nonce);
	if (h->proof_len == 0) {
		struct lb_msg *ch = mgr_msg_new(LB_MSG_CHALLENGE);

		t->st.challenges++;
		if (ch == NULL)
			return false;
		memcpy(ch->nonce, nonce, LB_NONCE_LEN);
		mgr_transport_send_pipe(t, pipe, ch);
		free(ch);
		return false;
	}
	if (memcmp(h->nonce, nonce, LB_NONCE_LEN) != 0)
		snprintf(why, sizeof(why), "the proof answers another connection's challenge");
	else if (lb_proof_verify(t->proof_ca, h->body, strlen(h->body) + 1, nonce, h->id, h->proof,
			 h->proof_len, why, sizeof(why)) == 0)
		return true;
	t->st.unproven++;
	LB_WARN("connection %u: hello as %s refused: %s", pipe, h->id, why);
	mgr_transport_refuse(t, pipe, "hello as %s refused: %s", h->id, why);
	return false;
}

/* ---- members' messages ---- */

void
mgr_transport_recv_members(struct mgr_transport *t, uint64_t now)
{
	struct lb_msg *msg = calloc(1, sizeof(*msg));
	char e[LB_MSG_TEXT];
	nng_msg *nm;
	int rv;

	if (msg == NULL)
		return;
	while ((rv = nng_recvmsg(t->msock, &nm, NNG_FLAG_NONBLOCK)) == 0) {
		uint32_t pipe = (uint32_t)nng_pipe_id(nng_msg_get_pipe(nm));
		int rc = lb_msg_decode(nng_msg_body(nm), nng_msg_len(nm), msg, e, sizeof(e));

		if (rc == -LB_EPROTOCOL) {
			if (mgr_transport_first_bad(t, pipe))
				LB_WARN("connection %u refused: %s", pipe, e);
			mgr_transport_refuse(t, pipe, "%s", e);
		} else if (rc != 0) {
			t->st.malformed++;
			t->ops.member_malformed(
				t->ops.ctx, pipe, e, mgr_transport_first_bad(t, pipe));
		} else {
			t->ops.member_msg(t->ops.ctx, pipe, msg, now);
		}
		lb_msg_free(msg);
		nng_msg_free(nm);
	}
	if (rv != NNG_EAGAIN && rv != NNG_ECLOSED)
		LB_WARN("members socket: %s", nng_strerror(rv));
	free(msg);
}

/* ---- sluicectl's requests ---- */

/*
 * Over ctl_tls a request is served only with a proof of the operator's name
 * (lb_proof.h): its certificate, of our CA and naming it, and a signature of
 * this connection's nonce and the name by the certificate's key. A request
 * without one is answered with a CHALLENGE, which sluicectl answers by
 * sending the request again with the proof. true: serve it (over TLS, the
 * name proven is req->id); false: rep is the challenge or the refusal.
 */
static bool
ctl_proven(struct mgr_transport *t, const struct lb_msg *req, uint32_t pipe, bool ipc,
	struct lb_msg *rep)
{
	uint8_t nonce[LB_NONCE_LEN];
	char why[LB_MSG_TEXT - 96];

	if (t->proof_ca == NULL || ipc)
		return true; /* ipc: the kernel names the uid */
	lb_proof_nonce(t->nonce_key, pipe, nonce);
	/*
	 * No proof, or one for another connection (a client that kept its proof
	 * across a reconnect): this connection's challenge.
	 */
	if (req->proof_len == 0 || memcmp(req->nonce, nonce, LB_NONCE_LEN) != 0) {
		t->st.challenges++;
		rep->type = LB_MSG_CHALLENGE;
		memcpy(rep->nonce, nonce, LB_NONCE_LEN);
		return false;
	}
	if (req->cert == NULL)
		snprintf(why, sizeof(why), "no certificate");
	else if (lb_proof_verify(t->proof_ca, req->cert, strlen(req->cert) + 1, nonce, req->id,
			 req->proof, req->proof_len, why, sizeof(why)) == 0)
		return true;
	t->st.unproven++;
	if (mgr_transport_first_bad(t, pipe))
		LB_WARN("ctl connection %u: request as operator %s refused: %s", pipe, req->id,
			why);
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
who_asks(const struct lb_msg *req, const uint64_t *uid, char *out, size_t len)
{
	const char *who = strncmp(req->sender, "ctl:", 4) == 0 ? req->sender + 4 : req->sender;

	if (uid != NULL)
		snprintf(out, len, "%.60s (uid %" PRIu64 ")", who, *uid);
	else if (req->proof_len != 0)
		snprintf(out, len, "%.40s (certificate %.40s)", who, req->id);
	else
		snprintf(out, len, "%.60s (not proven)", who);
}

/* One request in rep's answer (decoded or not). */
static void
serve(struct mgr_transport *t, uint32_t pipe, int rc, const char *e, const struct lb_msg *req,
	struct lb_msg *rep, uint64_t now)
{
	char asker[96];
	uint64_t uid = 0;
	bool ipc;

	memset(rep, 0, sizeof(*rep));
	snprintf(rep->sender, sizeof(rep->sender), "manager");
	if (rc == -LB_EPROTOCOL) {
		t->st.refused++;
		rep->type = LB_MSG_REFUSED;
		snprintf(rep->text, sizeof(rep->text), "%s", e);
	} else if (rc != 0 || req->type != LB_MSG_CTL_REQUEST) {
		t->st.malformed++;
		if (mgr_transport_first_bad(t, pipe))
			LB_WARN("ctl connection %u: malformed request ignored: %s", pipe,
				rc != 0 ? e : "not a CTL_REQUEST");
		rep->type = LB_MSG_CTL_REPLY;
		rep->flag = false;
		snprintf(rep->text, sizeof(rep->text), "malformed request: %.200s",
			rc != 0 ? e : "not a CTL_REQUEST");
	} else if (ctl_proven(t, req, pipe, (ipc = pipe_ipc_uid(pipe, &uid)), rep)) {
		t->st.ctl++;
		who_asks(req, ipc ? &uid : NULL, asker, sizeof(asker));
		t->ops.ctl_request(t->ops.ctx, req, asker, rep, now);
	}
}

void
mgr_transport_recv_ctl(struct mgr_transport *t, uint64_t now)
{
	struct lb_msg *req = calloc(1, sizeof(*req)), *rep = calloc(1, sizeof(*rep));
	char e[LB_MSG_TEXT];
	int rv = NNG_EAGAIN, budget = MGR_CTL_BATCH;
	nng_msg *nm;

	if (req == NULL || rep == NULL)
		goto out;
	/* A bounded batch per pass: a flood never starves the members. */
	while (budget-- > 0 && (rv = nng_recvmsg(t->csock, &nm, NNG_FLAG_NONBLOCK)) == 0) {
		int rc = lb_msg_decode(nng_msg_body(nm), nng_msg_len(nm), req, e, sizeof(e));
		uint32_t pipe = (uint32_t)nng_pipe_id(nng_msg_get_pipe(nm));
		uint8_t *buf = NULL;
		size_t len = 0;

		nng_msg_free(nm);
		serve(t, pipe, rc, e, req, rep, now);
		lb_msg_free(req);
		rc = lb_msg_encode(rep, &buf, &len);
		lb_msg_free(rep);
		if (rc != 0) {
			LB_ERR("ctl: cannot encode the reply: %s", lb_strerror(rc));
			continue; /* the client times out; rep0 drops the request */
		}
		if ((rv = nng_send(t->csock, buf, len, 0)) != 0) {
			/*
			 * Its last reply is still unread: a client that sends and
			 * never reads would hold the manager's one thread. Drop it.
			 */
			t->st.ctl_dropped++;
			LB_WARN("ctl connection %u: reply not taken (%s): connection closed", pipe,
				nng_strerror(rv));
			nng_pipe_close(pipe_of(pipe));
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
