/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The member protocol: who the members are (their connection, contact,
 * counters, snapshots), their HELLO, VOTE, STATUS and SNAPSHOT_REQUEST,
 * and what the commit driver sends them. The bytes move through the
 * transport (mgr_transport.h); the decisions are the commit state
 * machine's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_log.h"
#include "mgr.h"
#include "mgr_snap.h"
#include "mgr_text.h"
#include "mgr_transport.h"

#define MGR_SNAP_DEDUP_MS 1000

static int
find_pipe(const struct mgr *m, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < m->commit->n_members; i++)
		if (m->peers[i].mp_connected && m->peers[i].mp_pipe == id)
			return (int)i;
	return -1;
}

static void
disconnected(struct mgr *m, int i, uint64_t now)
{
	struct mgr_member *mb = &m->commit->members[i];
	struct mgr_peer *p = &m->peers[i];

	p->mp_connected = false;
	p->mp_since_ms = now;
	mgr_sendq_flush(&p->mp_q);
	LB_WARN("member %s disconnected (%s)", mb->id,
		mb->state == MGR_MEMBER_IN_SYNC ? "was in sync" : "was fenced");
	/* Gone, it cannot vote: fenced now between rounds (mgr_commit_gone). */
	mgr_commit_gone(m->commit, mb->id);
	mgr_run_actions(m, now);
}

void
mgr_net_gone(struct mgr *m, uint32_t pipe, uint64_t now)
{
	int k = find_pipe(m, pipe);

	if (k >= 0)
		disconnected(m, k, now);
}

/* ---- paced sends ---- */

void
mgr_send(struct mgr *m, int i, const uint8_t *buf, size_t len, uint64_t now)
{
	struct mgr_peer *p;

	if (i < 0 || (uint32_t)i >= m->commit->n_members || !m->peers[i].mp_connected)
		return;
	p = &m->peers[i];
	mgr_transport_send(
		m->transport, &p->mp_q, p->mp_pipe, buf, len, m->commit->members[i].id, now);
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
		mgr_transport_pump(m->transport, &p->mp_q, m->commit->members[i].id, now);
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
		if (mgr_sendq_due(&p->mp_q) < d)
			d = mgr_sendq_due(&p->mp_q);
		if (m->commit->members[i].state == MGR_MEMBER_FENCED && p->mp_snap_ms != 0 &&
			p->mp_snap_backoff_ms != 0 && p->mp_snap_ms + p->mp_snap_backoff_ms < d)
			d = p->mp_snap_ms + p->mp_snap_backoff_ms;
		if (!p->mp_silent_logged && p->mp_last_contact_ms + MGR_SILENT_MS < d)
			d = p->mp_last_contact_ms + MGR_SILENT_MS;
	}
	return d < now ? now : d;
}

/* ---- the member protocol ---- */

/*
 * Over TLS a hello counts only once its id is proven on this connection
 * (lb_proof.h): the first is answered with a CHALLENGE, the next must carry
 * a proof by the key of a certificate of our CA that names the id. false:
 * not (yet); the hello is to be ignored.
 */
static bool
proven(struct mgr *m, uint32_t pipe, const struct lb_msg *h)
{
	int i;

	if (mgr_transport_trusted(m->transport, pipe)) /* ipc: local, owner-only */
		return true;
	i = mgr_commit_find(m->commit, h->id);
	if (i >= 0 && m->peers[i].mp_proven_pipe == pipe)
		return true;
	return mgr_transport_prove(m->transport, pipe, h);
}

static void
on_hello(struct mgr *m, uint32_t pipe, const struct lb_msg *h, uint64_t now)
{
	struct mgr_commit *c = m->commit;
	struct mgr_peer *p;
	struct lb_msg *w;
	bool current;
	int i;

	if (h->role != LB_ROLE_MUX && h->role != LB_ROLE_AGENT) {
		mgr_transport_refuse(m->transport, pipe,
			"role %s cannot be a member (mux or agent)", mgr_role_name(h->role));
		return;
	}
	if (h->id[0] == '\0') {
		mgr_transport_refuse(m->transport, pipe, "hello without a member id");
		return;
	}
	if (!proven(m, pipe, h))
		return;
	i = mgr_commit_find(c, h->id);
	if (i >= 0 && m->peers[i].mp_connected && m->peers[i].mp_pipe != pipe) {
		/* The newest connection wins (a restart beat the old one's close). */
		LB_WARN("member %s: hello on a new connection; closing the old one", h->id);
		mgr_sendq_flush(&m->peers[i].mp_q);
		mgr_transport_close_pipe(m->transport, m->peers[i].mp_pipe);
	}
	mgr_commit_hello(c, h->id, h->role, h->version, h->digest, now);
	i = mgr_commit_find(c, h->id);
	if (i < 0) {
		mgr_transport_refuse(
			m->transport, pipe, "the manager has %d members already", MGR_MAX_MEMBERS);
		return;
	}
	mgr_vip_probe_hello(m->vip, i, h->id, &h->probe_addr);
	p = &m->peers[i];
	if (mgr_transport_proofs(m->transport))
		p->mp_proven_pipe = pipe;
	if (!p->mp_connected || p->mp_pipe != pipe) {
		mgr_sendq_flush(&p->mp_q);
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

void
mgr_net_member_msg(struct mgr *m, uint32_t pipe, const struct lb_msg *msg, uint64_t now)
{
	int i = find_pipe(m, pipe);
	struct mgr_peer *p;

	if (msg->type == LB_MSG_HELLO) {
		on_hello(m, pipe, msg, now);
		return;
	}
	if (i < 0) {
		m->n_unexpected++;
		if (mgr_transport_first_bad(m->transport, pipe))
			LB_WARN("connection %u: message type %d before any hello: ignored", pipe,
				msg->type);
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
mgr_net_member_malformed(struct mgr *m, uint32_t pipe, const char *why, bool first)
{
	int i = find_pipe(m, pipe);

	if (i >= 0)
		m->peers[i].mp_bad_msgs++;
	if (!first) /* said once per connection */
		return;
	if (i >= 0)
		LB_WARN("member %s: malformed message ignored: %s", m->commit->members[i].id, why);
	else
		LB_WARN("connection %u: malformed message ignored: %s", pipe, why);
}
