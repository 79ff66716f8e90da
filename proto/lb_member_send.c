/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the member's protocol (lb_member.c) and its high availability
 * (lb_member_ha.c) both stand on: each message it sends the manager, the
 * dialer and the socket, and the swap of the running table. It calls neither of them, so
 * the two depend on this file and not on each other's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_ftable.h"
#include "lb_log.h"
#include "lb_member_int.h"
#include "lb_proof.h"

static void
send_msg(struct lb_member *m, struct lb_msg *msg)
{
	uint8_t *buf;
	size_t len;
	int rc;

	snprintf(msg->sender, sizeof(msg->sender), "%s", m->cfg.id);
	if (lb_msg_encode(msg, &buf, &len) != 0) {
		LB_ERR("manager: cannot encode message type %d", msg->type);
		return;
	}
	rc = nng_send(m->sock, buf, len, NNG_FLAG_NONBLOCK);
	if (rc == NNG_EAGAIN)
		LB_WARN("manager: send queue full (not connected?): message type %d dropped",
			msg->type);
	else if (rc != 0)
		LB_WARN("manager: send: %s", nng_strerror(rc));
	free(buf);
}

void
lb_mbr_send_hello(struct lb_member *m)
{
	struct lb_msg msg = {.type = LB_MSG_HELLO, .role = m->cfg.role};

	snprintf(msg.id, sizeof(msg.id), "%s", m->cfg.id);
	msg.version = m->applied_version;
	memcpy(msg.digest, m->applied_digest, LB_DIGEST_LEN);
	msg.probe_addr.a32[0] = m->cfg.probe_addr;
	msg.probe_addr6 = m->cfg.probe_addr6;
	msg.n_pas = m->cfg.n_pas;
	memcpy(msg.pas, m->cfg.pas, sizeof(msg.pas));
	msg.n_dips = m->cfg.n_dips;
	memcpy(msg.dips, m->cfg.dips, sizeof(msg.dips));
	if (m->proof_len != 0) {
		size_t n;

		memcpy(msg.nonce, m->nonce, LB_NONCE_LEN);
		memcpy(msg.proof, m->proof, m->proof_len);
		msg.proof_len = (uint16_t)m->proof_len;
		msg.body = (char *)lb_proof_signer_cert(m->signer, &n);
	}
	send_msg(m, &msg);
	m->hello_sent_ms = lb_now_ms();
	m->welcomed = false;
}

void
lb_mbr_send_status(struct lb_member *m)
{
	struct lb_msg *msg = calloc(1, sizeof(*msg));

	if (msg == NULL)
		return;
	msg->type = LB_MSG_STATUS;
	msg->version = m->applied_version;
	if (m->ops->counters != NULL)
		msg->n_counters = m->ops->counters(m->arg, msg->counters, LB_MSG_MAX_COUNTERS);
	if (m->ops->route != NULL) {
		msg->route = calloc(1, sizeof(*msg->route));
		if (msg->route != NULL && !m->ops->route(m->arg, msg->route)) {
			free(msg->route);
			msg->route = NULL;
		}
	}
	if (m->ops->flows != NULL && m->flows == NULL)
		m->flows = calloc(LB_MSG_MAX_FLOWS, sizeof(*m->flows));
	if (m->flows != NULL) {
		/* a window of them each time, round and round */
		msg->n_flows = m->ops->flows(
			m->arg, m->flows, LB_MSG_MAX_FLOWS, m->flows_next, &msg->flows_total);
		msg->flows = m->flows;
		/* Where the window starts, as ops->flows took it: the table may have shrunk. */
		msg->flows_first = msg->flows_total != 0 ? m->flows_next % msg->flows_total : 0;
		m->flows_next = msg->flows_total != 0
					? (msg->flows_first + msg->n_flows) % msg->flows_total
					: 0;
	}
	send_msg(m, msg);
	free(msg->route);
	free(msg);
	m->status_sent_ms = lb_now_ms();
}

void
lb_mbr_send_vote(
	struct lb_member *m, uint64_t version, const uint8_t *digest, bool yes, const char *reason)
{
	struct lb_msg msg = {
		.type = LB_MSG_VOTE, .version = version, .flag = yes, .term = m->fence.highest};

	memcpy(msg.digest, digest, LB_DIGEST_LEN);
	snprintf(msg.text, sizeof(msg.text), "%s", reason);
	send_msg(m, &msg);
}

void
lb_mbr_ask_snapshot(struct lb_member *m, const char *why)
{
	struct lb_msg msg = {.type = LB_MSG_SNAPSHOT_REQUEST};
	uint64_t now = lb_now_ms();

	if (m->snap_asked_ms != 0 && now - m->snap_asked_ms < SNAPSHOT_RETRY_MS)
		return;
	m->snap_asked_ms = now;
	LB_INFO("manager: asking for a snapshot (%s)", why);
	msg.version = m->applied_version;
	send_msg(m, &msg);
}

/* The table `next` (taken over) at `version` is now the running one. */
void
lb_mbr_became(struct lb_member *m, struct lb_ftable *next, uint64_t version, const uint8_t *digest)
{
	lb_ftable_free(&m->applied);
	m->applied = *next;
	memset(next, 0, sizeof(*next));
	memcpy(m->applied_digest, digest, LB_DIGEST_LEN);
	__atomic_store_n(&m->applied_version, version, __ATOMIC_RELEASE);
}

/* A dialer for the manager, started in the background (nng redials by itself). */
int
lb_mbr_dial(struct lb_member *m, char *err, size_t len)
{
	const char *url = m->cfg.urls[m->url_i];
	int rc = nng_dialer_create(&m->dialer, m->sock, url);

	if (rc == 0 && m->tls != NULL)
		rc = nng_dialer_set_ptr(m->dialer, NNG_OPT_TLS_CONFIG, m->tls);
	/* In the background: the manager may come up after us. */
	if (rc == 0)
		rc = nng_dialer_start(m->dialer, NNG_FLAG_NONBLOCK);
	if (rc != 0)
		snprintf(err, len, "%s: %s", url, nng_strerror(rc));
	return rc;
}

/* ---- the socket ---- */

static void
pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct lb_member *m = arg;

	/* A socket left by a move to another manager says nothing about this one. */
	if ((uint32_t)nng_socket_id(nng_pipe_socket(p)) !=
		__atomic_load_n(&m->sock_id, __ATOMIC_ACQUIRE))
		return;
	if (ev == NNG_PIPE_EV_ADD_POST) {
		__atomic_add_fetch(&m->connected, 1, __ATOMIC_ACQ_REL);
		__atomic_store_n(&m->need_hello, 1, __ATOMIC_RELEASE);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		__atomic_store_n(&m->lost, 1, __ATOMIC_RELEASE);
		__atomic_sub_fetch(&m->connected, 1, __ATOMIC_ACQ_REL);
	}
}

/*
 * The member's socket. A move to another manager opens a new one rather
 * than a new dialer on the old socket: pair1 takes one pipe, and a pipe the
 * old dialer was still making can arrive after the dialer is closed and
 * hold that place, or never end (nng 1.5; docs/reliability.md, Found 8),
 * so a new dialer's pipes would be refused or a member count a connection
 * to nothing.
 */
int
lb_mbr_open_sock(struct lb_member *m, nng_socket *s)
{
	int rc = nng_pair1_open(s);

	if (rc != 0)
		return rc;
	nng_socket_set_size(*s, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES);
	/* Room to queue: a send never blocks the loop, and none is lost while
	 * the one before it is still being written. */
	nng_socket_set_int(*s, NNG_OPT_SENDBUF, 64);
	nng_socket_set_ms(*s, NNG_OPT_RECONNMINT, 100);
	nng_socket_set_ms(*s, NNG_OPT_RECONNMAXT, 1000);
	__atomic_store_n(&m->sock_id, (uint32_t)nng_socket_id(*s), __ATOMIC_RELEASE);
	nng_pipe_notify(*s, NNG_PIPE_EV_ADD_POST, pipe_event, m);
	nng_pipe_notify(*s, NNG_PIPE_EV_REM_POST, pipe_event, m);
	return 0;
}

struct old_sock {
	struct lb_member *m;
	nng_socket s;
};

static void *
close_old_thread(void *arg)
{
	struct old_sock *o = arg;

	nng_close(o->s);
	__atomic_sub_fetch(&o->m->closing, 1, __ATOMIC_ACQ_REL);
	free(o);
	return NULL;
}

/* Close an older socket in the background (its close may never return). */
static void
close_old(struct lb_member *m, nng_socket s)
{
	struct old_sock *o = malloc(sizeof(*o));
	pthread_t t;

	__atomic_add_fetch(&m->closing, 1, __ATOMIC_ACQ_REL);
	if (o != NULL) {
		o->m = m;
		o->s = s;
		if (pthread_create(&t, NULL, close_old_thread, o) == 0) {
			pthread_detach(t);
			return;
		}
		free(o);
	}
	/* No thread: close it here (it has no dialer left, its pipes are closing). */
	nng_close(s);
	__atomic_sub_fetch(&m->closing, 1, __ATOMIC_ACQ_REL);
}

void
lb_mbr_new_sock(struct lb_member *m)
{
	nng_socket s;
	int rc = lb_mbr_open_sock(m, &s);

	if (rc != 0) {
		LB_WARN("manager: a new socket: %s: dialing on the old one", nng_strerror(rc));
		return;
	}
	__atomic_store_n(&m->connected, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&m->need_hello, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&m->lost, 0, __ATOMIC_RELEASE);
	close_old(m, m->sock);
	m->sock = s;
}
