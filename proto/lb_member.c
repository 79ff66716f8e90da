/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The member side of the two-phase commit (see lb_member.h): one control
 * thread per daemon, one nng pair1 connection to the manager.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_err.h"
#include "lb_fence.h"
#include "lb_file.h"
#include "lb_ftable.h"
#include "lb_lkg.h"
#include "lb_log.h"
#include "lb_member.h"
#include "lb_credit_net.h"
#include "lb_member_int.h"
#include "lb_nng.h"
#include "lb_proof.h"

/* ---- applying ---- */

static void
drop_prepared(struct lb_member *m)
{
	if (!m->prepared)
		return;
	if (m->prep_built != NULL)
		m->ops->discard(m->arg, m->prep_built);
	lb_ftable_free(&m->prep_table);
	m->prep_built = NULL;
	m->prepared = false;
}

static void
on_prepare(struct lb_member *m, struct lb_msg *msg)
{
	uint8_t digest[LB_DIGEST_LEN];
	char err[LB_MSG_TEXT] = "";

	if (!lb_mbr_term_ok(m, msg->term, "prepare")) {
		snprintf(err, sizeof(err), "%s: term %llu is older than term %llu: not the leader",
			m->cfg.id, (unsigned long long)msg->term,
			(unsigned long long)m->fence.highest);
		lb_mbr_send_vote(m, msg->version, msg->digest, false, err);
		return;
	}
	lb_mbr_heard(m, msg->base_version);
	if (m->prepared && m->prep_version == msg->version &&
		memcmp(m->prep_digest, msg->digest, LB_DIGEST_LEN) == 0) {
		/* A retry: the same answer. */
		lb_mbr_send_vote(m, msg->version, msg->digest, m->prep_yes, m->prep_reason);
		return;
	}
	/* A new round supersedes one we never heard the end of. */
	drop_prepared(m);
	if (msg->base_version != m->applied_version) {
		snprintf(err, sizeof(err), "%s runs version %llu, not the base %llu", m->cfg.id,
			(unsigned long long)m->applied_version,
			(unsigned long long)msg->base_version);
		lb_mbr_send_vote(m, msg->version, msg->digest, false, err);
		lb_mbr_ask_snapshot(m, err);
		return;
	}
	m->prepared = true;
	m->prep_version = msg->version;
	memcpy(m->prep_digest, msg->digest, LB_DIGEST_LEN);
	m->prep_yes = false;
	if (lb_ftable_apply(&m->applied, &msg->delta, &m->prep_table, err, sizeof(err)) == 0) {
		lb_ftable_digest(&m->prep_table, digest);
		if (memcmp(digest, msg->digest, LB_DIGEST_LEN) != 0)
			snprintf(err, sizeof(err), "the delta does not give the announced digest");
		else
			m->prep_built = m->ops->build(
				m->arg, &m->prep_table, msg->version, err, sizeof(err));
		m->prep_yes = m->prep_built != NULL;
	}
	if (m->prep_yes)
		snprintf(m->prep_reason, sizeof(m->prep_reason), "%s", "");
	else
		snprintf(m->prep_reason, sizeof(m->prep_reason), "%s: %s", m->cfg.id, err);
	if (!m->prep_yes)
		LB_WARN("manager: voting no on version %llu: %s", (unsigned long long)msg->version,
			err);
	lb_mbr_send_vote(m, msg->version, msg->digest, m->prep_yes, m->prep_reason);
}

static void
on_commit(struct lb_member *m, const struct lb_msg *msg)
{
	if (!lb_mbr_term_ok(m, msg->term, "commit"))
		return;
	if (m->prepared && m->prep_yes && m->prep_version == msg->version &&
		memcmp(m->prep_digest, msg->digest, LB_DIGEST_LEN) == 0) {
		m->ops->publish(m->arg, m->prep_built, msg->version);
		m->prep_built = NULL;
		m->prepared = false;
		lb_mbr_became(m, &m->prep_table, msg->version, msg->digest);
		LB_INFO("manager: version %llu committed and running",
			(unsigned long long)msg->version);
		lb_mbr_lkg_save(m);
		lb_mbr_send_status(m);
		return;
	}
	if (msg->version > m->applied_version)
		lb_mbr_ask_snapshot(m, "a commit for a version this member did not prepare");
}

static void
on_abort(struct lb_member *m, const struct lb_msg *msg)
{
	if (!lb_mbr_term_ok(m, msg->term, "abort"))
		return;
	if (m->prepared && m->prep_version == msg->version) {
		LB_INFO("manager: version %llu aborted: %s", (unsigned long long)msg->version,
			msg->text);
		drop_prepared(m);
	}
}

static void
snap_reset(struct lb_member *m)
{
	lb_ftable_free(&m->snap);
	m->snap_open = false;
	m->snap_cap = 0;
}

static void
on_chunk(struct lb_member *m, struct lb_msg *msg)
{
	struct lb_ftable *t = &msg->table;
	uint8_t digest[LB_DIGEST_LEN];
	char err[LB_MSG_TEXT];
	void *built;

	if (!lb_mbr_term_ok(m, msg->term, "snapshot"))
		return;
	if (msg->index == 0) {
		snap_reset(m);
		m->snap_open = true;
		m->snap_version = msg->version;
		memcpy(m->snap_digest, msg->digest, LB_DIGEST_LEN);
		m->snap_next = 0;
		m->snap_count = msg->count;
		m->snap.seed = t->seed;
		m->snap.maglev_size = t->maglev_size;
		/* The drained muxes ride in chunk 0 with the options: taken over. */
		m->snap.drained = t->drained;
		m->snap.n_drained = t->n_drained;
		t->drained = NULL;
		t->n_drained = 0;
		m->snap.mux_rate = t->mux_rate;
	}
	if (!m->snap_open || msg->version != m->snap_version || msg->index != m->snap_next ||
		msg->count != m->snap_count ||
		memcmp(msg->digest, m->snap_digest, LB_DIGEST_LEN) != 0) {
		/* Out of order or from another snapshot: start over. */
		snap_reset(m);
		return;
	}
	if (m->snap.n_services + t->n_services > m->snap_cap) {
		uint32_t cap = (m->snap.n_services + t->n_services) * 2 + 16;
		struct lb_service_cfg *s = realloc(m->snap.services, sizeof(*s) * cap);

		if (s == NULL) {
			snap_reset(m);
			return;
		}
		m->snap.services = s;
		m->snap_cap = cap;
	}
	/* Take the chunk's services over; the message keeps only its array. */
	if (t->n_services > 0)
		memcpy(&m->snap.services[m->snap.n_services], t->services,
			sizeof(*t->services) * t->n_services);
	m->snap.n_services += t->n_services;
	t->n_services = 0;
	if (++m->snap_next < m->snap_count)
		return;

	m->snap_open = false;
	lb_ftable_sort(&m->snap);
	lb_ftable_digest(&m->snap, digest);
	if (lb_ftable_validate(&m->snap, err, sizeof(err)) != 0 ||
		(memcmp(digest, m->snap_digest, LB_DIGEST_LEN) != 0 &&
			snprintf(err, sizeof(err), "digest mismatch") > 0)) {
		LB_ERR("manager: snapshot of version %llu refused: %s",
			(unsigned long long)m->snap_version, err);
		snap_reset(m);
		return;
	}
	drop_prepared(m);
	built = m->ops->build(m->arg, &m->snap, m->snap_version, err, sizeof(err));
	if (built == NULL) {
		LB_ERR("manager: snapshot of version %llu cannot be built: %s",
			(unsigned long long)m->snap_version, err);
		snap_reset(m);
		return;
	}
	m->ops->publish(m->arg, built, m->snap_version);
	lb_mbr_became(m, &m->snap, m->snap_version, m->snap_digest);
	lb_mbr_lkg_save(m);
	snap_reset(m);
	m->snap_asked_ms = 0;
	LB_INFO("manager: snapshot of version %llu applied (%u services)",
		(unsigned long long)m->applied_version, m->applied.n_services);
	/* Tell the manager we hold its committed version: it takes us back in sync. */
	lb_mbr_send_hello(m);
}

/* Over TLS the manager asks us to prove our id: sign its nonce, hello again. */
static void
on_challenge(struct lb_member *m, const struct lb_msg *msg)
{
	char err[LB_MSG_TEXT];

	if (m->signer == NULL) {
		LB_ERR("manager: asked to prove the id %s, but this member has no certificate",
			m->cfg.id);
		return;
	}
	if (lb_proof_sign(m->signer, msg->nonce, m->cfg.id, m->proof, &m->proof_len, err,
		    sizeof(err)) != 0) {
		m->proof_len = 0;
		LB_ERR("manager: cannot prove the id %s: %s", m->cfg.id, err);
		return;
	}
	memcpy(m->nonce, msg->nonce, LB_NONCE_LEN);
	lb_mbr_send_hello(m);
}

static void
handle(struct lb_member *m, const void *buf, size_t len)
{
	struct lb_msg *msg = calloc(1, sizeof(*msg));
	char err[LB_MSG_TEXT];
	int rc;

	if (msg == NULL)
		return;
	rc = lb_msg_decode(buf, len, msg, err, sizeof(err));
	if (rc != 0) {
		LB_WARN("manager: message refused: %s", err);
		lb_msg_free(msg);
		free(msg);
		return;
	}
	m->last_rx_ms = lb_now_ms();
	switch (msg->type) {
	case LB_MSG_WELCOME:
		lb_mbr_on_welcome(m, msg);
		break;
	case LB_MSG_PREPARE:
		on_prepare(m, msg);
		break;
	case LB_MSG_COMMIT:
		on_commit(m, msg);
		break;
	case LB_MSG_ABORT:
		on_abort(m, msg);
		break;
	case LB_MSG_SNAPSHOT_CHUNK:
		on_chunk(m, msg);
		break;
	case LB_MSG_REFUSED:
		if (msg->not_leader) {
			lb_mbr_on_not_leader(m, msg);
			break;
		}
		/* It will say so again until something changes: ask less often. */
		LB_ERR("manager refused this member: %s (again in %u s)", msg->text,
			REFUSED_HOLD_MS / 1000);
		m->hello_hold_ms = lb_now_ms() + REFUSED_HOLD_MS;
		break;
	case LB_MSG_CHALLENGE:
		on_challenge(m, msg);
		break;
	case LB_MSG_SYNC:
		if (m->ops->sync != NULL)
			m->ops->sync(m->arg, msg->flag, msg->version, msg->text);
		break;
	case LB_MSG_SHARES:
		if (m->ops->shares != NULL)
			m->ops->shares(m->arg, msg->count, msg->index);
		break;
	default:
		break;
	}
	lb_msg_free(msg);
	free(msg);
}

/* ---- connection ---- */

static int
setup_tls(struct lb_member *m, char *err, size_t len)
{
	return lb_tls_config(
		&m->tls, false, m->cfg.ca, m->cfg.cert, m->cfg.key, m->cfg.server_name, err, len);
}

/*
 * nng 1.5.2's dialer now and then stops redialing after its peer died
 * (seen: a member never back after the manager's kill -9, 1 in about 50).
 * Disconnected for REDIAL_MS, the member closes it and dials afresh.
 */
static void
redial_if_stuck(struct lb_member *m)
{
	uint64_t now = lb_now_ms();

	if (__atomic_load_n(&m->connected, __ATOMIC_ACQUIRE) > 0) {
		m->down_since_ms = 0;
		m->redialing = false;
		return;
	}
	if (m->down_since_ms == 0) {
		m->down_since_ms = now;
		return;
	}
	if (now - m->down_since_ms < REDIAL_MS)
		return;
	if (!m->redialing)
		LB_INFO("manager: no connection for %u s: dialing afresh every %u s until one "
			"holds",
			REDIAL_MS / 1000, REDIAL_MS / 1000);
	m->redialing = true;
	m->down_since_ms = now;
	/* With several managers, the next one: this one may be gone for good. */
	m->move_to = lb_mbr_next_url(m);
	lb_mbr_move(m);
	m->redialing = true;
}

struct lb_member *
lb_member_create(const struct lb_member_cfg *cfg, const struct lb_member_ops *ops, void *arg,
	const struct lb_ftable *initial, uint64_t version, char *err, size_t len)
{
	struct lb_member *m = lb_zalloc(sizeof(*m), NULL, err, len);
	int rc;

	if (m == NULL)
		return NULL;
	m->cfg = *cfg;
	if (m->cfg.heartbeat_ms == 0)
		m->cfg.heartbeat_ms = 1000;
	if (m->cfg.n_urls == 0) {
		/* A caller that filled url alone: one manager. */
		snprintf(m->cfg.urls[0], sizeof(m->cfg.urls[0]), "%s", m->cfg.url);
		m->cfg.n_urls = 1;
	}
	m->start_ms = lb_now_ms();
	m->ops = ops;
	m->arg = arg;
	if (lb_ftable_copy(&m->applied, initial) != 0) {
		snprintf(err, len, "out of memory");
		free(m);
		return NULL;
	}
	lb_ftable_sort(&m->applied);
	lb_ftable_digest(&m->applied, m->applied_digest);
	m->applied_version = version;

	rc = lb_mbr_open_sock(m, &m->sock);
	if (rc != 0) {
		snprintf(err, len, "nng: %s", nng_strerror(rc));
		lb_ftable_free(&m->applied);
		free(m);
		return NULL;
	}
	if (strncmp(m->cfg.url, "tls+tcp://", 10) == 0) {
		rc = setup_tls(m, err, len);
		/* The same certificate and key prove our id when the manager asks. */
		if (rc == 0 && (m->signer = lb_proof_signer_load(
					m->cfg.cert, m->cfg.key, err, len)) == NULL)
			rc = -LB_EINVAL;
	} else {
		rc = 0;
	}
	if (rc == 0)
		rc = lb_mbr_dial(m, err, len);
	if (rc != 0) {
		lb_member_destroy(m);
		return NULL;
	}
	LB_INFO("manager: member %s dials %s%s, starting at version %llu", m->cfg.id, m->cfg.url,
		m->cfg.n_urls > 1 ? " (the first of its managers)" : "",
		(unsigned long long)version);
	return m;
}

void *
lb_member_run(void *arg)
{
	struct lb_member *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		nng_msg *msg;
		int rc;

		/* The welcome was for a connection that is gone: no heartbeat
		 * until the next one welcomes us. */
		if (__atomic_exchange_n(&m->lost, 0, __ATOMIC_ACQ_REL)) {
			m->welcomed = false;
			m->acked = false;
			__atomic_store_n(&m->leader_ok, 0, __ATOMIC_RELEASE);
		}
		lb_mbr_lkg_tick(m);
		if (__atomic_exchange_n(&m->need_hello, 0, __ATOMIC_ACQ_REL)) {
			/* A new connection: whatever was half-done is void. */
			snap_reset(m);
			m->proof_len = 0;
			m->snap_asked_ms = 0;
			lb_mbr_send_hello(m);
		}
		redial_if_stuck(m);
		if (m->move_at_ms != 0 && lb_now_ms() >= m->move_at_ms)
			lb_mbr_move(m);
		if (__atomic_load_n(&m->connected, __ATOMIC_ACQUIRE) > 0) {
			/* A hello can be lost to a manager still starting: until it
			 * answers with a welcome, say it again. */
			if (!m->welcomed && lb_now_ms() >= m->hello_hold_ms &&
				lb_now_ms() - m->hello_sent_ms >= HELLO_RETRY_MS)
				lb_mbr_send_hello(m);
			/* Heartbeats once welcomed: before, over TLS, the manager
			 * does not know who we are yet. */
			if (m->welcomed && lb_now_ms() - m->status_sent_ms >= m->cfg.heartbeat_ms)
				lb_mbr_send_status(m);
		}
		rc = lb_nng_recvmsg_wait(m->sock, &msg, RECV_TICK_MS);
		if (rc == NNG_ETIMEDOUT)
			continue;
		if (rc != 0) {
			if (rc == NNG_ECLOSED)
				break;
			LB_WARN("manager: receive: %s", nng_strerror(rc));
			continue;
		}
		handle(m, nng_msg_body(msg), nng_msg_len(msg));
		nng_msg_free(msg);
	}
	return NULL;
}

void
lb_member_stop(struct lb_member *m)
{
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
}

bool
lb_member_join(struct lb_member *m, pthread_t thread, unsigned timeout_ms)
{
	struct timespec until;

	lb_member_stop(m);
	until = lb_deadline(CLOCK_REALTIME, timeout_ms);
	if (pthread_timedjoin_np(thread, NULL, &until) == 0)
		return true;
	LB_WARN("manager: the control thread did not stop within %u ms; exiting without it",
		timeout_ms);
	return false;
}

/*
 * The socket's close is waited for CLOSE_WAIT_MS (lb_nng_close_within()):
 * if it does not return in time, the member (the pipe callbacks' argument)
 * stays as it is: the process is exiting.
 */
void
lb_member_destroy(struct lb_member *m)
{
	if (m == NULL)
		return;
	if (!lb_nng_close_within(m->sock, CLOSE_WAIT_MS)) {
		LB_WARN("manager: closing the connection did not end in %u ms (%d pipes "
			"open, nng): exiting without it",
			CLOSE_WAIT_MS, __atomic_load_n(&m->connected, __ATOMIC_ACQUIRE));
		return;
	}
	/* An older socket still closing may yet call back with m: keep it (exiting). */
	if (__atomic_load_n(&m->closing, __ATOMIC_ACQUIRE) != 0) {
		LB_WARN("manager: %d earlier connections still closing (nng): exiting without them",
			__atomic_load_n(&m->closing, __ATOMIC_ACQUIRE));
		return;
	}
	if (m->tls != NULL)
		nng_tls_config_free(m->tls);
	lb_proof_signer_free(m->signer);
	drop_prepared(m);
	snap_reset(m);
	lb_ftable_free(&m->applied);
	free(m->flows);
	free(m);
}

uint64_t
lb_member_applied(const struct lb_member *m)
{
	return __atomic_load_n(&m->applied_version, __ATOMIC_ACQUIRE);
}

bool
lb_member_connected(const struct lb_member *m)
{
	return __atomic_load_n(&m->connected, __ATOMIC_ACQUIRE) > 0;
}

bool
lb_member_synced(const struct lb_member *m)
{
	return __atomic_load_n(&m->synced, __ATOMIC_ACQUIRE) != 0;
}
