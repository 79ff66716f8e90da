/* SPDX-License-Identifier: BSD-3-Clause */
/* The member protocol (mgr_members.h has the design). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "lb_log.h"
#include "mgr_driver.h"
#include "mgr_members.h"
#include "mgr_msg.h"
#include "mgr_snap.h"
#include "mgr_text.h"
#include "mgr_transport.h"
#include "mgr_vip_probe.h"

#define MGR_SNAP_DEDUP_MS 1000

/* What the manager knows of member i beyond the commit state machine's members[i]. */
struct mgr_peer {
	uint32_t mp_pipe; /* its connection */
	bool mp_connected;
	uint64_t mp_share;    /* the SHARES last sent: divisor << 32 | index; 0: none */
	uint64_t mp_since_ms; /* connected / disconnected at */
	uint64_t mp_last_contact_ms;
	uint32_t mp_n_counters;
	struct lb_counter mp_counters[LB_MSG_MAX_COUNTERS];
	uint64_t mp_status_ms; /* its last STATUS came at; 0: none yet */
	/* the STATUS before it (sluicectl top's rates) */
	uint32_t mp_n_prev;
	struct lb_counter mp_prev[LB_MSG_MAX_COUNTERS];
	uint64_t mp_prev_ms;
	uint64_t mp_bad_msgs;
	bool mp_bad_logged;
	bool mp_silent_logged;
	struct mgr_sendq mp_q; /* paced sends */
	/* snapshots */
	uint64_t mp_snap_version;
	uint64_t mp_snap_ms;
	uint32_t mp_snap_backoff_ms;
	uint64_t mp_snaps;
	uint32_t mp_proven_pipe; /* the connection its id was proven on (0: none) */
	/* routing */
	struct mgr_notice mp_notice; /* the last notice sent on this connection */
	uint64_t mp_notice_ms;
	struct lb_route_state *mp_route; /* from its last STATUS, NULL: none */
	/* An agent's PAs and DIPs, from its last hello (kept when it goes). */
	bool mp_agent;
	uint32_t mp_n_pas, mp_n_dips;
	struct lb_host_addr mp_pas[LB_MSG_MAX_PAS];
	struct lb_host_addr mp_dips[LB_MSG_MAX_DIPS];
};

struct mgr_members {
	struct mgr_transport *t;
	struct mgr_driver *d;
	struct mgr_members_hooks hooks;
	struct mgr_snap *snap; /* the committed version, encoded for resyncs */
	struct mgr_peer peers[MGR_MAX_MEMBERS];
	uint64_t n_unexpected;
};

struct mgr_members *
mgr_members_new(
	struct mgr_transport *t, struct mgr_driver *d, const struct mgr_members_hooks *hooks)
{
	struct mgr_members *mb = calloc(1, sizeof(*mb));

	if (mb == NULL)
		return NULL;
	mb->snap = mgr_snap_new();
	if (mb->snap == NULL) {
		free(mb);
		return NULL;
	}
	mgr_snap_set_term(mb->snap, mgr_driver_term(d));
	mb->t = t;
	mb->d = d;
	mb->hooks = *hooks;
	return mb;
}

void
mgr_members_flush(struct mgr_members *mb)
{
	uint32_t i;

	for (i = 0; i < MGR_MAX_MEMBERS; i++)
		mgr_sendq_flush(&mb->peers[i].mp_q);
}

void
mgr_members_free(struct mgr_members *mb)
{
	uint32_t i;

	if (mb == NULL)
		return;
	mgr_members_flush(mb);
	mgr_snap_free(mb->snap);
	for (i = 0; i < MGR_MAX_MEMBERS; i++)
		free(mb->peers[i].mp_route);
	free(mb);
}

/* The commit state machine: who the members are, the committed version. */
static const struct mgr_commit *
commit_of(const struct mgr_members *mb)
{
	return mgr_driver_commit(mb->d);
}

static const char *
id_of(const struct mgr_members *mb, int i)
{
	return commit_of(mb)->members[i].id;
}

static int
find_pipe(const struct mgr_members *mb, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < commit_of(mb)->n_members; i++)
		if (mb->peers[i].mp_connected && mb->peers[i].mp_pipe == id)
			return (int)i;
	return -1;
}

void
mgr_members_on_gone(struct mgr_members *mb, uint32_t pipe, uint64_t now)
{
	int i = find_pipe(mb, pipe);
	const struct mgr_member *m;
	struct mgr_peer *p;

	if (i < 0)
		return;
	m = &commit_of(mb)->members[i];
	p = &mb->peers[i];
	p->mp_connected = false;
	p->mp_since_ms = now;
	mgr_sendq_flush(&p->mp_q);
	LB_WARN("member %s disconnected (%s)", m->id,
		m->state == MGR_MEMBER_IN_SYNC ? "was in sync" : "was fenced");
	/* Gone, it cannot vote: fenced now between rounds (mgr_commit_gone). */
	mgr_driver_gone(mb->d, i);
	if (p->mp_agent) /* its backends' load is no longer known */
		mgr_driver_loads(mb->d, p->mp_counters, p->mp_n_counters, NULL, 0);
	mgr_driver_run(mb->d, now);
	if (mb->hooks.gone != NULL)
		mb->hooks.gone(mb->hooks.ctx, i);
}

/* ---- paced sends ---- */

void
mgr_members_send(struct mgr_members *mb, int i, const uint8_t *buf, size_t len, uint64_t now)
{
	struct mgr_peer *p;

	if (i < 0 || (uint32_t)i >= commit_of(mb)->n_members || !mb->peers[i].mp_connected)
		return;
	p = &mb->peers[i];
	mgr_transport_send(mb->t, &p->mp_q, p->mp_pipe, buf, len, id_of(mb, i), now);
}

void
mgr_members_send_msg(struct mgr_members *mb, int i, const struct lb_msg *msg, uint64_t now)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = lb_msg_encode(msg, &buf, &len);

	if (rc != 0) {
		LB_ERR("cannot encode a message (type %d): %s", msg->type, lb_strerror(rc));
		return;
	}
	mgr_members_send(mb, i, buf, len, now);
	free(buf);
}

/* ---- notices: may a mux announce? ---- */

static void
notify_one(struct mgr_members *mb, int i, uint64_t now)
{
	const struct mgr_commit *c = commit_of(mb);
	const struct mgr_member *m = &c->members[i];
	struct mgr_peer *p = &mb->peers[i];
	struct mgr_notice n;
	char why[LB_MSG_TEXT] = "";
	struct lb_msg *msg;
	bool failing;

	if (!p->mp_connected || m->role != LB_ROLE_MUX)
		return;
	failing = mb->hooks.probe_failing != NULL &&
		  mb->hooks.probe_failing(mb->hooks.ctx, i, why, sizeof(why));
	mgr_notice_of(m, failing, why, &n);
	if (!mgr_notice_update(&p->mp_notice, &n))
		return;
	msg = mgr_msg_new(LB_MSG_SYNC);
	if (msg == NULL) {
		mgr_notice_reset(&p->mp_notice); /* again next time */
		return;
	}
	msg->version = c->committed;
	msg->flag = n.nt_in_sync;
	snprintf(msg->text, sizeof(msg->text), "%s", n.nt_why);
	mgr_members_send_msg(mb, i, msg, now);
	free(msg);
	p->mp_notice_ms = now;
	LB_INFO("mux %s: %s", m->id,
		n.nt_in_sync ? "may announce (in sync)" : "must withdraw: not in sync");
	if (!n.nt_in_sync)
		LB_INFO("mux %s: %s", m->id, n.nt_why);
}

void
mgr_members_notify(struct mgr_members *mb, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < commit_of(mb)->n_members; i++)
		notify_one(mb, (int)i, now);
}

/* ---- snapshots ---- */

void
mgr_members_committed(struct mgr_members *mb)
{
	mgr_snap_clear(mb->snap);
}

void
mgr_members_send_snapshot(struct mgr_members *mb, int i, uint64_t now)
{
	const struct lb_ftable *t;
	const uint8_t *digest;
	struct mgr_snap_chunks sc;
	struct mgr_peer *p;
	uint64_t version;
	size_t bytes = 0;
	uint32_t k;
	int rc;

	if (i < 0 || (uint32_t)i >= commit_of(mb)->n_members || !mb->peers[i].mp_connected)
		return; /* it gets one when it says hello again */
	p = &mb->peers[i];
	t = mgr_driver_committed(mb->d, &version, &digest);
	rc = mgr_snap_get(mb->snap, t, version, digest, &sc);
	if (rc != 0) {
		LB_ERR("member %s: cannot build a snapshot of version %" PRIu64 ": %s",
			id_of(mb, i), version, lb_strerror(rc));
		return;
	}
	for (k = 0; k < sc.count; k++) {
		mgr_members_send(mb, i, sc.buf[k], sc.len[k], now);
		bytes += sc.len[k];
	}
	p->mp_snap_version = sc.version;
	p->mp_snap_ms = now;
	p->mp_snaps++;
	if (p->mp_snap_backoff_ms == 0)
		p->mp_snap_backoff_ms = MGR_SNAP_RETRY_MS;
	LB_INFO("member %s: snapshot of version %" PRIu64 " sent (%u chunk%s, %zu bytes)",
		id_of(mb, i), sc.version, sc.count, sc.count == 1 ? "" : "s", bytes);
}

static void
check_silent(struct mgr_members *mb, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < commit_of(mb)->n_members; i++) {
		struct mgr_peer *p = &mb->peers[i];

		if (!p->mp_connected || p->mp_silent_logged ||
			now < p->mp_last_contact_ms + MGR_SILENT_MS)
			continue;
		p->mp_silent_logged = true;
		LB_WARN("member %s: connected but silent for %" PRIu64 " s", id_of(mb, (int)i),
			(now - p->mp_last_contact_ms) / 1000);
	}
}

/*
 * The VIPs' admission limits are divided among the muxes that carry them
 * (docs/protection.md). Until the PoP's route state says which muxes
 * announce a VIP, that is every mux in sync and connected: each is told
 * how many they are and its place among them (SHARES) whenever that
 * changes. Not a version: the rule is versioned, its division follows the
 * members.
 */
static void
send_shares(struct mgr_members *mb, uint64_t now)
{
	const struct mgr_commit *c = commit_of(mb);
	uint32_t i, n = 0, k = 0;

	for (i = 0; i < c->n_members; i++)
		n += c->members[i].role == LB_ROLE_MUX && mb->peers[i].mp_connected &&
		     c->members[i].state == MGR_MEMBER_IN_SYNC;
	for (i = 0; i < c->n_members; i++) {
		struct mgr_peer *p = &mb->peers[i];
		struct lb_msg *m;
		uint64_t share;

		if (c->members[i].role != LB_ROLE_MUX || !p->mp_connected ||
			c->members[i].state != MGR_MEMBER_IN_SYNC)
			continue;
		share = (uint64_t)n << 32 | k++;
		if (share == p->mp_share || (m = mgr_msg_new(LB_MSG_SHARES)) == NULL)
			continue;
		m->count = n;
		m->index = (uint32_t)(share & 0xffffffffu);
		mgr_members_send_msg(mb, (int)i, m, now);
		p->mp_share = share;
		LB_INFO("member %s: admission limits shared by %u muxes, its place %u",
			c->members[i].id, n, m->index);
		free(m);
	}
}

void
mgr_members_tick(struct mgr_members *mb, uint64_t now)
{
	const struct mgr_commit *c = commit_of(mb);
	uint32_t i;

	check_silent(mb, now);
	mgr_members_notify(mb, now);
	send_shares(mb, now);
	for (i = 0; i < c->n_members; i++) {
		struct mgr_peer *p = &mb->peers[i];

		if (!p->mp_connected)
			continue;
		mgr_transport_pump(mb->t, &p->mp_q, c->members[i].id, now);
		/* A fenced member that did not come back: its snapshot may be lost. */
		if (c->members[i].state == MGR_MEMBER_FENCED && p->mp_snap_ms != 0 &&
			p->mp_snap_backoff_ms != 0 &&
			now >= p->mp_snap_ms + p->mp_snap_backoff_ms) {
			p->mp_snap_backoff_ms = p->mp_snap_backoff_ms * 2 > MGR_SNAP_RETRY_MAX_MS
							? MGR_SNAP_RETRY_MAX_MS
							: p->mp_snap_backoff_ms * 2;
			LB_WARN("member %s: still fenced (%s); sending the snapshot again",
				c->members[i].id, c->members[i].why);
			mgr_members_send_snapshot(mb, (int)i, now);
		}
	}
}

uint64_t
mgr_members_next_deadline(const struct mgr_members *mb, uint64_t now)
{
	const struct mgr_commit *c = commit_of(mb);
	uint64_t d = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < c->n_members; i++) {
		const struct mgr_peer *p = &mb->peers[i];

		if (!p->mp_connected)
			continue;
		if (mgr_sendq_due(&p->mp_q) < d)
			d = mgr_sendq_due(&p->mp_q);
		if (c->members[i].state == MGR_MEMBER_FENCED && p->mp_snap_ms != 0 &&
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
proven(struct mgr_members *mb, uint32_t pipe, const struct lb_msg *h)
{
	int i;

	if (mgr_transport_trusted(mb->t, pipe)) /* ipc: local, owner-only */
		return true;
	i = mgr_commit_find(commit_of(mb), h->id);
	if (i >= 0 && mb->peers[i].mp_proven_pipe == pipe)
		return true;
	return mgr_transport_prove(mb->t, pipe, h);
}

static void
on_hello(struct mgr_members *mb, uint32_t pipe, const struct lb_msg *h, uint64_t now)
{
	const struct mgr_commit *c = commit_of(mb);
	struct mgr_peer *p;
	struct lb_msg *w;
	bool current;
	int i;

	if (h->role != LB_ROLE_MUX && h->role != LB_ROLE_AGENT) {
		mgr_transport_refuse(mb->t, pipe, "role %s cannot be a member (mux or agent)",
			mgr_role_name(h->role));
		return;
	}
	if (h->id[0] == '\0') {
		mgr_transport_refuse(mb->t, pipe, "hello without a member id");
		return;
	}
	if (!proven(mb, pipe, h))
		return;
	i = mgr_commit_find(c, h->id);
	if (i >= 0 && mb->peers[i].mp_connected && mb->peers[i].mp_pipe != pipe) {
		/* The newest connection wins (a restart beat the old one's close). */
		LB_WARN("member %s: hello on a new connection; closing the old one", h->id);
		mgr_sendq_flush(&mb->peers[i].mp_q);
		mgr_transport_close_pipe(mb->t, mb->peers[i].mp_pipe);
	}
	i = mgr_driver_hello(mb->d, h, now);
	if (i < 0) {
		mgr_transport_refuse(
			mb->t, pipe, "the manager has %d members already", MGR_MAX_MEMBERS);
		return;
	}
	if (mb->hooks.hello != NULL)
		mb->hooks.hello(mb->hooks.ctx, i, h->id, &h->probe_addr, &h->probe_addr6);
	p = &mb->peers[i];
	if (mgr_transport_proofs(mb->t))
		p->mp_proven_pipe = pipe;
	p->mp_agent = h->role == LB_ROLE_AGENT;
	p->mp_n_pas = h->n_pas;
	memcpy(p->mp_pas, h->pas, sizeof(p->mp_pas));
	p->mp_n_dips = h->n_dips;
	memcpy(p->mp_dips, h->dips, sizeof(p->mp_dips));
	if (!p->mp_connected || p->mp_pipe != pipe) {
		mgr_sendq_flush(&p->mp_q);
		p->mp_pipe = pipe;
		p->mp_connected = true;
		p->mp_since_ms = now;
		p->mp_share = 0;
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
	w = mgr_msg_new(LB_MSG_WELCOME);
	if (w != NULL) {
		w->term = mgr_driver_term(mb->d);
		w->version = c->committed;
		w->flag = !current;
		mgr_members_send_msg(mb, i, w, now);
		/* It may hold what a round before our restart prepared. */
		if (mgr_driver_hello_abort(mb->d, w))
			mgr_members_send_msg(mb, i, w, now);
		free(w);
	}
	/* Its hello's actions (a snapshot to a fenced member) follow the WELCOME. */
	mgr_driver_run(mb->d, now);
	/* Then the word on announcing, for this connection (a mux). */
	mgr_notice_reset(&p->mp_notice);
	notify_one(mb, i, now);
}

/*
 * A leader answers every STATUS with a WELCOME of its term and committed
 * version: a member that stops hearing them takes the leader for frozen
 * and dials the next manager (lb_member.h). A single manager does not.
 */
static void
status_answer(struct mgr_members *mb, int i, uint64_t now)
{
	struct lb_msg *w = mgr_msg_new(LB_MSG_WELCOME);

	if (w == NULL)
		return;
	w->term = mgr_driver_term(mb->d);
	mgr_driver_committed(mb->d, &w->version, NULL);
	mgr_members_send_msg(mb, i, w, now);
	free(w);
}

void
mgr_members_on_msg(struct mgr_members *mb, uint32_t pipe, const struct lb_msg *msg, uint64_t now)
{
	int i = find_pipe(mb, pipe);
	struct mgr_peer *p;

	if (msg->type == LB_MSG_HELLO) {
		on_hello(mb, pipe, msg, now);
		return;
	}
	if (i < 0) {
		mb->n_unexpected++;
		if (mgr_transport_first_bad(mb->t, pipe))
			LB_WARN("connection %u: message type %d before any hello: ignored", pipe,
				msg->type);
		return;
	}
	p = &mb->peers[i];
	p->mp_last_contact_ms = now;
	p->mp_silent_logged = false;
	switch (msg->type) {
	case LB_MSG_VOTE:
		/* A "no" from a member behind the committed version fences it (mgr_commit_vote). */
		mgr_driver_vote(mb->d, i, msg, now);
		mgr_driver_run(mb->d, now);
		break;
	case LB_MSG_SNAPSHOT_REQUEST: {
		uint64_t version;

		/* The WELCOME that asked for it usually came with one already. */
		mgr_driver_committed(mb->d, &version, NULL);
		if (p->mp_snap_version == version && now < p->mp_snap_ms + MGR_SNAP_DEDUP_MS)
			break;
		mgr_members_send_snapshot(mb, i, now);
		break;
	}
	case LB_MSG_STATUS:
		/* Not a hello: a hello mid-round would fence it. One long behind
		 * between rounds is fenced: its snapshot goes now. */
		mgr_driver_status(mb->d, i, msg->version, now);
		mgr_driver_run(mb->d, now);
		if (p->mp_agent)
			mgr_driver_loads(mb->d, p->mp_counters, p->mp_n_counters, msg->counters,
				msg->n_counters);
		p->mp_n_prev = p->mp_n_counters;
		memcpy(p->mp_prev, p->mp_counters, p->mp_n_counters * sizeof(p->mp_counters[0]));
		p->mp_prev_ms = p->mp_status_ms;
		p->mp_n_counters = msg->n_counters;
		memcpy(p->mp_counters, msg->counters, msg->n_counters * sizeof(msg->counters[0]));
		p->mp_status_ms = now;
		if (msg->route == NULL) {
			free(p->mp_route);
			p->mp_route = NULL;
		} else if (p->mp_route != NULL ||
			   (p->mp_route = malloc(sizeof(*p->mp_route))) != NULL) {
			*p->mp_route = *msg->route;
		}
		if (mb->hooks.status != NULL)
			mb->hooks.status(mb->hooks.ctx, i, msg, now);
		if (mgr_driver_term(mb->d) != 0)
			status_answer(mb, i, now);
		break;
	case LB_MSG_REFUSED:
		LB_WARN("member %s refused the manager: %s", id_of(mb, i), msg->text);
		break;
	default:
		mb->n_unexpected++;
		p->mp_bad_msgs++;
		if (!p->mp_bad_logged) {
			p->mp_bad_logged = true;
			LB_WARN("member %s: unexpected message type %d: ignored", id_of(mb, i),
				msg->type);
		}
		break;
	}
}

void
mgr_members_on_malformed(struct mgr_members *mb, uint32_t pipe, const char *why, bool first)
{
	int i = find_pipe(mb, pipe);

	if (i >= 0)
		mb->peers[i].mp_bad_msgs++;
	if (!first) /* said once per connection */
		return;
	if (i >= 0)
		LB_WARN("member %s: malformed message ignored: %s", id_of(mb, i), why);
	else
		LB_WARN("connection %u: malformed message ignored: %s", pipe, why);
}

/* ---- reads ---- */

bool
mgr_members_connected(const void *ctx, int i)
{
	const struct mgr_members *mb = ctx;

	return i >= 0 && i < MGR_MAX_MEMBERS && mb->peers[i].mp_connected;
}

void
mgr_members_view(const struct mgr_members *mb, int i, struct mgr_peer_view *v)
{
	const struct mgr_peer *p = &mb->peers[i];

	v->connected = p->mp_connected;
	v->last_contact_ms = p->mp_last_contact_ms;
	v->n_counters = p->mp_n_counters;
	v->counters = p->mp_counters;
	v->status_ms = p->mp_status_ms;
	v->n_prev = p->mp_n_prev;
	v->prev = p->mp_prev;
	v->prev_ms = p->mp_prev_ms;
	v->snapshots = p->mp_snaps;
	v->bad_msgs = p->mp_bad_msgs;
	v->route = p->mp_route;
	v->notice = &p->mp_notice;
	v->notice_ms = p->mp_notice_ms;
}

uint64_t
mgr_members_unexpected(const struct mgr_members *mb)
{
	return mb->n_unexpected;
}

void
mgr_members_vip_env(const struct mgr_members *mb, struct mgr_vip_env *e)
{
	e->commit = commit_of(mb);
	e->committed = mgr_driver_committed(mb->d, &e->version, NULL);
	e->started = mgr_driver_started(mb->d);
	e->connected = mgr_members_connected;
	e->ctx = mb;
}

/* ---- an agent's addresses ---- */

static bool
addr_in(const struct lb_host_addr *v, uint32_t n, uint8_t af, const struct lb_addr *a)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (v[i].af == af && lb_addr_eq(&v[i].a, a))
			return true;
	return false;
}

int
mgr_members_pa_check(const struct mgr_members *mb, uint8_t daf, const struct lb_addr *dip,
	uint8_t haf, const struct lb_addr *host, char *err, size_t len)
{
	const struct mgr_commit *c = commit_of(mb);
	char h[LB_ADDR_STRLEN], pa[LB_ADDR_STRLEN];
	uint32_t i, k;

	for (i = 0; i < c->n_members; i++) {
		const struct mgr_peer *p = &mb->peers[i];
		size_t off;

		if (!p->mp_agent || !addr_in(p->mp_dips, p->mp_n_dips, daf, dip))
			continue;
		if (addr_in(p->mp_pas, p->mp_n_pas, haf, host))
			return 0;
		lb_addr_ntop(haf, host, h, sizeof(h));
		for (k = 0; k < p->mp_n_pas && p->mp_pas[k].af != haf; k++)
			;
		if (k == p->mp_n_pas) {
			snprintf(err, len,
				"%s is an IPv%u PA, but agent %s, which has the dip, has no IPv%u "
				"PA (%s)",
				h, haf, c->members[i].id, haf, haf == LB_AF_INET6 ? "pa6" : "pa");
			return -1;
		}
		off = (size_t)snprintf(err, len,
			"%s is not a PA of agent %s, which has the dip (its PAs:", h,
			c->members[i].id);
		for (k = 0; k < p->mp_n_pas && off < len; k++)
			off += (size_t)snprintf(err + off, len - off, " %s",
				lb_addr_ntop(p->mp_pas[k].af, &p->mp_pas[k].a, pa, sizeof(pa)));
		if (off < len)
			snprintf(err + off, len - off, ")");
		return -1;
	}
	return 0; /* no agent that said hello has the DIP: not known yet */
}
