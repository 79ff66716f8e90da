/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The member side of the two-phase commit (see lb_member.h): one control
 * thread per daemon, one nng pair1 connection to the manager.
 */
#include <errno.h>
#include <inttypes.h>
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
#include "lb_proof.h"

#define RECV_TICK_MS 100       /* how often the loop looks at the clock and stop */
#define SNAPSHOT_RETRY_MS 1000 /* at most one snapshot request per this */
#define HELLO_RETRY_MS 1000    /* a hello not answered by a welcome is sent again */
#define REFUSED_HOLD_MS 30000  /* ... but only this long after a refusal */
#define REDIAL_MS 3000	       /* disconnected this long: a new dialer */
#define MOVE_MIN_MS 1000       /* between two moves to another manager, at least */
#define TOUCH_MS 10000	       /* the last-known-good file's time moves at most this often */

struct lb_member {
	struct lb_member_cfg cfg;
	const struct lb_member_ops *ops;
	void *arg;
	nng_socket sock;
	nng_dialer dialer;
	nng_tls_config *tls;
	/* Over TLS: the proof of our id asked for on this connection (lb_proof.h). */
	struct lb_proof_signer *signer;
	uint8_t nonce[LB_NONCE_LEN];
	uint8_t proof[LB_PROOF_MAX];
	size_t proof_len; /* 0: no challenge on this connection yet */

	/* What runs. */
	struct lb_ftable applied;
	uint64_t applied_version; /* atomic for readers on other threads */
	uint8_t applied_digest[LB_DIGEST_LEN];

	/* What PREPARE built, waiting for COMMIT or ABORT. */
	bool prepared;
	uint64_t prep_version;
	uint8_t prep_digest[LB_DIGEST_LEN];
	struct lb_ftable prep_table;
	void *prep_built;
	bool prep_yes;
	char prep_reason[LB_MSG_TEXT];

	/* A snapshot being assembled. */
	bool snap_open;
	uint64_t snap_version;
	uint8_t snap_digest[LB_DIGEST_LEN];
	uint32_t snap_next, snap_count, snap_cap;
	struct lb_ftable snap;
	uint64_t snap_asked_ms;

	uint64_t status_sent_ms;
	uint64_t hello_sent_ms;
	uint64_t hello_hold_ms; /* refused: no hello again before this */
	uint64_t down_since_ms; /* 0 while connected */
	bool redialing;		/* said so once for this outage */
	bool welcomed;		/* the manager answered this connection's hello */
	int stop;		/* atomic */
	int need_hello;		/* atomic: set by the pipe callback */
	int lost;		/* atomic: a connection closed (pipe callback) */
	int connected;		/* atomic: pipes open (pair1 has one, but events may cross) */

	/* Several managers: the one dialed, moves to another, the leader's silence. */
	uint32_t url_i;	     /* cfg.urls[url_i] is dialed */
	uint32_t dialer_id;  /* atomic: the pipe callback ignores older dialers' pipes */
	uint64_t move_at_ms; /* 0: none planned; else dial urls[move_to] then */
	uint32_t move_to;
	uint64_t moved_ms;	  /* the last move */
	bool acked;		  /* this connection's leader answers STATUS (WELCOME) */
	uint64_t last_rx_ms;	  /* the last message on this connection */
	struct lb_fence fence;	  /* the highest term seen (lb_fence.h) */
	uint64_t known_committed; /* atomic: the newest committed version heard of */
	int leader_ok;		  /* atomic: a leader welcomed us on this connection */
	/* Last known good (lb_lkg.h). */
	uint64_t start_ms;
	bool ever_welcomed;   /* a manager welcomed us since the start */
	bool synced;	      /* ... and holds us in sync (no resync asked) */
	bool lkg_done;	      /* the file was considered at the start */
	int64_t confirmed_ms; /* atomic, Unix ms: a manager last confirmed the table */
	uint64_t touched_ms;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- sending ---- */

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

static void
send_hello(struct lb_member *m)
{
	struct lb_msg msg = {.type = LB_MSG_HELLO, .role = m->cfg.role};

	snprintf(msg.id, sizeof(msg.id), "%s", m->cfg.id);
	msg.version = m->applied_version;
	memcpy(msg.digest, m->applied_digest, LB_DIGEST_LEN);
	msg.probe_addr.a32[0] = m->cfg.probe_addr;
	if (m->proof_len != 0) {
		size_t n;

		memcpy(msg.nonce, m->nonce, LB_NONCE_LEN);
		memcpy(msg.proof, m->proof, m->proof_len);
		msg.proof_len = (uint16_t)m->proof_len;
		msg.body = (char *)lb_proof_signer_cert(m->signer, &n);
	}
	send_msg(m, &msg);
	m->hello_sent_ms = now_ms();
	m->welcomed = false;
}

static void
send_status(struct lb_member *m)
{
	struct lb_msg *msg = calloc(1, sizeof(*msg));

	if (msg == NULL)
		return;
	msg->type = LB_MSG_STATUS;
	msg->version = m->applied_version;
	if (m->ops->counters != NULL)
		msg->n_counters = m->ops->counters(m->arg, msg->counters, LB_MSG_MAX_COUNTERS);
	send_msg(m, msg);
	free(msg);
	m->status_sent_ms = now_ms();
}

static void
send_vote(
	struct lb_member *m, uint64_t version, const uint8_t *digest, bool yes, const char *reason)
{
	struct lb_msg msg = {
		.type = LB_MSG_VOTE, .version = version, .flag = yes, .term = m->fence.highest};

	memcpy(msg.digest, digest, LB_DIGEST_LEN);
	snprintf(msg.text, sizeof(msg.text), "%s", reason);
	send_msg(m, &msg);
}

static void
ask_snapshot(struct lb_member *m, const char *why)
{
	struct lb_msg msg = {.type = LB_MSG_SNAPSHOT_REQUEST};
	uint64_t now = now_ms();

	if (m->snap_asked_ms != 0 && now - m->snap_asked_ms < SNAPSHOT_RETRY_MS)
		return;
	m->snap_asked_ms = now;
	LB_INFO("manager: asking for a snapshot (%s)", why);
	msg.version = m->applied_version;
	send_msg(m, &msg);
}

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

/* The table `next` (taken over) at `version` is now the running one. */
static void
became(struct lb_member *m, struct lb_ftable *next, uint64_t version, const uint8_t *digest)
{
	lb_ftable_free(&m->applied);
	m->applied = *next;
	memset(next, 0, sizeof(*next));
	memcpy(m->applied_digest, digest, LB_DIGEST_LEN);
	__atomic_store_n(&m->applied_version, version, __ATOMIC_RELEASE);
}

/* The newest committed version this member has heard of (a max). */
static void
heard(struct lb_member *m, uint64_t version)
{
	if (version > __atomic_load_n(&m->known_committed, __ATOMIC_ACQUIRE))
		__atomic_store_n(&m->known_committed, version, __ATOMIC_RELEASE);
}

/* The table now running came from a manager: keep it as the last known good. */
static void
lkg_save(struct lb_member *m)
{
	char err[LB_LKG_WHY + 512];

	m->synced = true;
	heard(m, m->applied_version);
	if (m->cfg.state_file[0] == '\0' || m->applied_version == 0)
		return;
	if (lb_lkg_save(m->cfg.state_file, &m->applied, m->applied_version, m->applied_digest,
		    m->fence.highest, err, sizeof(err)) != 0)
		LB_WARN("manager: last known good table not kept: %s", err);
	m->touched_ms = now_ms();
}

/*
 * While a leader holds us in sync, the table is confirmed: a table served
 * without a manager is as old as the last moment this held (the file's
 * time says it after a restart).
 */
static void
confirm(struct lb_member *m, uint64_t now)
{
	if (!m->welcomed || !m->synced || m->applied_version == 0)
		return;
	__atomic_store_n(&m->confirmed_ms, wall_ms(), __ATOMIC_RELEASE);
	if (m->cfg.state_file[0] != '\0' && now - m->touched_ms >= TOUCH_MS) {
		lb_lkg_touch(m->cfg.state_file);
		m->touched_ms = now;
	}
}

/* A message of term `term`: false when an older term than one seen (refused). */
static bool
term_ok(struct lb_member *m, uint64_t term, const char *what)
{
	switch (lb_fence_check(&m->fence, term)) {
	case LB_FENCE_STALE:
		LB_WARN("manager: %s of term %" PRIu64 " refused: term %" PRIu64
			" was seen, this one comes from a deposed leader",
			what, term, m->fence.highest);
		return false;
	case LB_FENCE_NEWER:
		LB_INFO("manager: the leader's term is %" PRIu64, term);
		return true;
	default:
		return true;
	}
}

static void
on_prepare(struct lb_member *m, struct lb_msg *msg)
{
	uint8_t digest[LB_DIGEST_LEN];
	char err[LB_MSG_TEXT] = "";

	if (!term_ok(m, msg->term, "prepare")) {
		snprintf(err, sizeof(err), "%s: term %llu is older than term %llu: not the leader",
			m->cfg.id, (unsigned long long)msg->term,
			(unsigned long long)m->fence.highest);
		send_vote(m, msg->version, msg->digest, false, err);
		return;
	}
	heard(m, msg->base_version);
	if (m->prepared && m->prep_version == msg->version &&
		memcmp(m->prep_digest, msg->digest, LB_DIGEST_LEN) == 0) {
		/* A retry: the same answer. */
		send_vote(m, msg->version, msg->digest, m->prep_yes, m->prep_reason);
		return;
	}
	/* A new round supersedes one we never heard the end of. */
	drop_prepared(m);
	if (msg->base_version != m->applied_version) {
		snprintf(err, sizeof(err), "%s runs version %llu, not the base %llu", m->cfg.id,
			(unsigned long long)m->applied_version,
			(unsigned long long)msg->base_version);
		send_vote(m, msg->version, msg->digest, false, err);
		ask_snapshot(m, err);
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
	send_vote(m, msg->version, msg->digest, m->prep_yes, m->prep_reason);
}

static void
on_commit(struct lb_member *m, const struct lb_msg *msg)
{
	if (!term_ok(m, msg->term, "commit"))
		return;
	if (m->prepared && m->prep_yes && m->prep_version == msg->version &&
		memcmp(m->prep_digest, msg->digest, LB_DIGEST_LEN) == 0) {
		m->ops->publish(m->arg, m->prep_built, msg->version);
		m->prep_built = NULL;
		m->prepared = false;
		became(m, &m->prep_table, msg->version, msg->digest);
		LB_INFO("manager: version %llu committed and running",
			(unsigned long long)msg->version);
		lkg_save(m);
		send_status(m);
		return;
	}
	if (msg->version > m->applied_version)
		ask_snapshot(m, "a commit for a version this member did not prepare");
}

static void
on_abort(struct lb_member *m, const struct lb_msg *msg)
{
	if (!term_ok(m, msg->term, "abort"))
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

	if (!term_ok(m, msg->term, "snapshot"))
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
	became(m, &m->snap, m->snap_version, m->snap_digest);
	lkg_save(m);
	snap_reset(m);
	m->snap_asked_ms = 0;
	LB_INFO("manager: snapshot of version %llu applied (%u services)",
		(unsigned long long)m->applied_version, m->applied.n_services);
	/* Tell the manager we hold its committed version: it takes us back in sync. */
	send_hello(m);
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
	send_hello(m);
}

/* Dial urls[i] from now on (after MOVE_MIN_MS since the last move): why is logged. */
static void
plan_move(struct lb_member *m, uint32_t i, const char *why)
{
	uint64_t at = m->moved_ms + MOVE_MIN_MS, now = now_ms();

	if (m->move_at_ms != 0)
		return; /* one is planned */
	LB_INFO("manager: %s: dialing %s%s", why, m->cfg.urls[i], i == m->url_i ? " again" : "");
	m->move_to = i;
	m->move_at_ms = at > now ? at : now;
	/* No hello to this one meanwhile. */
	m->hello_hold_ms = m->move_at_ms;
}

static uint32_t
next_url(const struct lb_member *m)
{
	return (m->url_i + 1) % m->cfg.n_urls;
}

/* WELCOME: the hello's answer, and a leader's answer to every STATUS. */
static void
on_welcome(struct lb_member *m, const struct lb_msg *msg)
{
	if (!term_ok(m, msg->term, "welcome")) {
		plan_move(m, next_url(m), "welcomed by a deposed leader");
		return;
	}
	if (m->welcomed && msg->term != 0)
		m->acked = true; /* a leader that answers: its silence will mean something */
	if (!m->welcomed)
		send_status(m); /* the counters at once, then every heartbeat */
	m->welcomed = true;
	m->ever_welcomed = true;
	__atomic_store_n(&m->leader_ok, 1, __ATOMIC_RELEASE);
	heard(m, msg->version);
	m->synced = !msg->flag && msg->version == m->applied_version;
	if (msg->flag)
		ask_snapshot(m, "the manager says this member is out of sync");
}

/* A standby manager refused our hello: dial the leader it names, or the next one. */
static void
on_not_leader(struct lb_member *m, const struct lb_msg *msg)
{
	char why[LB_MSG_URL + 96];
	uint32_t i;

	__atomic_store_n(&m->leader_ok, 0, __ATOMIC_RELEASE);
	for (i = 0; i < m->cfg.n_urls; i++)
		if (msg->leader_url[0] != '\0' && strcmp(m->cfg.urls[i], msg->leader_url) == 0)
			break;
	snprintf(why, sizeof(why), "%s is not the leader (%s)", m->cfg.urls[m->url_i],
		msg->leader_url[0] == '\0' ? "it knows none yet"
		: i < m->cfg.n_urls	   ? "the leader is one of ours"
					   : "it names a leader not in our urls");
	plan_move(m, i < m->cfg.n_urls && i != m->url_i ? i : next_url(m), why);
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
	m->last_rx_ms = now_ms();
	switch (msg->type) {
	case LB_MSG_WELCOME:
		on_welcome(m, msg);
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
			on_not_leader(m, msg);
			break;
		}
		/* It will say so again until something changes: ask less often. */
		LB_ERR("manager refused this member: %s (again in %u s)", msg->text,
			REFUSED_HOLD_MS / 1000);
		m->hello_hold_ms = now_ms() + REFUSED_HOLD_MS;
		break;
	case LB_MSG_CHALLENGE:
		on_challenge(m, msg);
		break;
	default:
		break;
	}
	lb_msg_free(msg);
	free(msg);
}

/* ---- connection ---- */

static void
pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct lb_member *m = arg;
	/* A dialer closed by a move to another manager says nothing about this one. */
	bool current = (uint32_t)nng_dialer_id(nng_pipe_dialer(p)) ==
		       __atomic_load_n(&m->dialer_id, __ATOMIC_ACQUIRE);

	if (ev == NNG_PIPE_EV_ADD_POST) {
		__atomic_add_fetch(&m->connected, 1, __ATOMIC_ACQ_REL);
		if (current)
			__atomic_store_n(&m->need_hello, 1, __ATOMIC_RELEASE);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		if (current)
			__atomic_store_n(&m->lost, 1, __ATOMIC_RELEASE);
		__atomic_sub_fetch(&m->connected, 1, __ATOMIC_ACQ_REL);
	}
}

static int
setup_tls(struct lb_member *m, char *err, size_t len)
{
	char *cert = NULL, *key = NULL;
	const char *what = "allocating the TLS configuration";
	int rc;

	rc = nng_tls_config_alloc(&m->tls, NNG_TLS_MODE_CLIENT);
	if (rc == 0) {
		what = m->cfg.ca;
		rc = nng_tls_config_ca_file(m->tls, m->cfg.ca);
	}
	if (rc == 0) {
		lb_read_file(m->cfg.cert, LB_PROOF_CERT_MAX, &cert, NULL);
		lb_read_file(m->cfg.key, LB_PROOF_CERT_MAX, &key, NULL);
		what = cert == NULL ? m->cfg.cert : m->cfg.key;
		rc = cert == NULL || key == NULL ? NNG_ENOENT
						 : nng_tls_config_own_cert(m->tls, cert, key, NULL);
		if (rc != 0 && cert != NULL && key != NULL)
			what = "the certificate and key";
	}
	free(cert);
	free(key);
	if (rc == 0)
		rc = nng_tls_config_server_name(m->tls, m->cfg.server_name);
	if (rc == 0)
		rc = nng_tls_config_auth_mode(m->tls, NNG_TLS_AUTH_MODE_REQUIRED);
	if (rc != 0)
		snprintf(err, len, "TLS: %s: %s", what, nng_strerror(rc));
	return rc;
}

/* A dialer for the manager, started in the background (nng redials by itself). */
static int
dial(struct lb_member *m, char *err, size_t len)
{
	const char *url = m->cfg.urls[m->url_i];
	int rc = nng_dialer_create(&m->dialer, m->sock, url);

	if (rc == 0)
		__atomic_store_n(
			&m->dialer_id, (uint32_t)nng_dialer_id(m->dialer), __ATOMIC_RELEASE);
	if (rc == 0 && m->tls != NULL)
		rc = nng_dialer_set_ptr(m->dialer, NNG_OPT_TLS_CONFIG, m->tls);
	/* In the background: the manager may come up after us. */
	if (rc == 0)
		rc = nng_dialer_start(m->dialer, NNG_FLAG_NONBLOCK);
	if (rc != 0)
		snprintf(err, len, "%s: %s", url, nng_strerror(rc));
	return rc;
}

/* The planned move: a new dialer for urls[move_to]; this connection is over. */
static void
move(struct lb_member *m)
{
	char err[LB_MSG_URL + 64];

	m->url_i = m->move_to;
	m->move_at_ms = 0;
	m->moved_ms = now_ms();
	m->down_since_ms = 0;
	m->welcomed = false;
	m->acked = false;
	m->proof_len = 0;
	__atomic_store_n(&m->leader_ok, 0, __ATOMIC_RELEASE);
	nng_dialer_close(m->dialer);
	if (dial(m, err, sizeof(err)) != 0)
		LB_WARN("manager: dial: %s", err);
}

/*
 * nng 1.5.2's dialer now and then stops redialing after its peer died
 * (seen: a member never back after the manager's kill -9, 1 in about 50).
 * Disconnected for REDIAL_MS, the member closes it and dials afresh.
 */
static void
redial_if_stuck(struct lb_member *m)
{
	uint64_t now = now_ms();

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
	m->move_to = next_url(m);
	move(m);
	m->redialing = true;
}

struct lb_member *
lb_member_create(const struct lb_member_cfg *cfg, const struct lb_member_ops *ops, void *arg,
	const struct lb_ftable *initial, uint64_t version, char *err, size_t len)
{
	struct lb_member *m = calloc(1, sizeof(*m));
	int rc;

	if (m == NULL) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	m->cfg = *cfg;
	if (m->cfg.heartbeat_ms == 0)
		m->cfg.heartbeat_ms = 1000;
	if (m->cfg.n_urls == 0) {
		/* A caller that filled url alone: one manager. */
		snprintf(m->cfg.urls[0], sizeof(m->cfg.urls[0]), "%s", m->cfg.url);
		m->cfg.n_urls = 1;
	}
	m->start_ms = now_ms();
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

	rc = nng_pair1_open(&m->sock);
	if (rc != 0) {
		snprintf(err, len, "nng: %s", nng_strerror(rc));
		lb_ftable_free(&m->applied);
		free(m);
		return NULL;
	}
	nng_socket_set_size(m->sock, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES);
	/* Room to queue: a send never blocks the loop, and none is lost while
	 * the one before it is still being written. */
	nng_socket_set_int(m->sock, NNG_OPT_SENDBUF, 64);
	nng_socket_set_ms(m->sock, NNG_OPT_RECVTIMEO, RECV_TICK_MS);
	nng_socket_set_ms(m->sock, NNG_OPT_RECONNMINT, 100);
	nng_socket_set_ms(m->sock, NNG_OPT_RECONNMAXT, 1000);
	nng_pipe_notify(m->sock, NNG_PIPE_EV_ADD_POST, pipe_event, m);
	nng_pipe_notify(m->sock, NNG_PIPE_EV_REM_POST, pipe_event, m);
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
		rc = dial(m, err, len);
	if (rc != 0) {
		lb_member_destroy(m);
		return NULL;
	}
	LB_INFO("manager: member %s dials %s%s, starting at version %llu", m->cfg.id, m->cfg.url,
		m->cfg.n_urls > 1 ? " (the first of its managers)" : "",
		(unsigned long long)version);
	return m;
}

/* No manager welcomed us within lkg_wait_ms of the start: run the file's table. */
static void
lkg_start(struct lb_member *m)
{
	char err[LB_LKG_WHY + 512];
	struct lb_lkg l;
	int64_t mtime = 0;
	void *built;
	int rc;

	if (m->cfg.state_file[0] == '\0' || m->applied_version != 0)
		return;
	rc = lb_lkg_load(m->cfg.state_file, &l, &mtime, err, sizeof(err));
	if (rc == -LB_ENOENT) {
		LB_INFO("manager: none answered within %u ms and there is no last known good "
			"table (%s): waiting for one",
			m->cfg.lkg_wait_ms, m->cfg.state_file);
		return;
	}
	if (rc != 0) {
		LB_ERR("manager: none answered within %u ms; the last known good table %s is "
		       "ignored: %s; starting empty, waiting for a manager",
			m->cfg.lkg_wait_ms, m->cfg.state_file, err);
		return;
	}
	built = m->ops->build(m->arg, &l.table, l.version, err, sizeof(err));
	if (built == NULL) {
		LB_ERR("manager: the last known good table %s (version %" PRIu64
		       ") cannot be built: %s; waiting for a manager",
			m->cfg.state_file, l.version, err);
		lb_lkg_free(&l);
		return;
	}
	m->ops->publish(m->arg, built, l.version);
	lb_fence_check(&m->fence, l.term);
	heard(m, l.version);
	__atomic_store_n(&m->confirmed_ms, mtime, __ATOMIC_RELEASE);
	became(m, &l.table, l.version, l.digest);
	LB_WARN("manager: none answered within %u ms: forwarding from the last known good table "
		"%s, version %" PRIu64 " (term %" PRIu64 ", %u services, confirmed %" PRId64
		" s ago)",
		m->cfg.lkg_wait_ms, m->cfg.state_file, l.version, l.term, m->applied.n_services,
		(wall_ms() - mtime) / 1000);
	lb_lkg_free(&l);
	if (__atomic_load_n(&m->connected, __ATOMIC_ACQUIRE) > 0)
		send_hello(m); /* whoever listens learns what we run now */
}

/* Last known good at the start; the table's confirmation; a leader gone silent. */
static void
lkg_tick(struct lb_member *m)
{
	uint64_t now = now_ms();

	if (!m->lkg_done && (m->ever_welcomed || now - m->start_ms >= m->cfg.lkg_wait_ms)) {
		m->lkg_done = true;
		if (!m->ever_welcomed)
			lkg_start(m);
	}
	confirm(m, now);
	if (m->acked && m->welcomed && m->move_at_ms == 0 &&
		now - m->last_rx_ms > (uint64_t)LB_MEMBER_LEADER_SILENT * m->cfg.heartbeat_ms) {
		char why[96];

		snprintf(why, sizeof(why), "the leader has not answered for %" PRIu64 " ms",
			now - m->last_rx_ms);
		plan_move(m, next_url(m), why);
	}
}

void *
lb_member_run(void *arg)
{
	struct lb_member *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		void *buf = NULL;
		size_t len;
		int rc;

		/* The welcome was for a connection that is gone: no heartbeat
		 * until the next one welcomes us. */
		if (__atomic_exchange_n(&m->lost, 0, __ATOMIC_ACQ_REL)) {
			m->welcomed = false;
			m->acked = false;
			__atomic_store_n(&m->leader_ok, 0, __ATOMIC_RELEASE);
		}
		lkg_tick(m);
		if (__atomic_exchange_n(&m->need_hello, 0, __ATOMIC_ACQ_REL)) {
			/* A new connection: whatever was half-done is void. */
			snap_reset(m);
			m->proof_len = 0;
			m->snap_asked_ms = 0;
			send_hello(m);
		}
		redial_if_stuck(m);
		if (m->move_at_ms != 0 && now_ms() >= m->move_at_ms)
			move(m);
		if (__atomic_load_n(&m->connected, __ATOMIC_ACQUIRE) > 0) {
			/* A hello can be lost to a manager still starting: until it
			 * answers with a welcome, say it again. */
			if (!m->welcomed && now_ms() >= m->hello_hold_ms &&
				now_ms() - m->hello_sent_ms >= HELLO_RETRY_MS)
				send_hello(m);
			/* Heartbeats once welcomed: before, over TLS, the manager
			 * does not know who we are yet. */
			if (m->welcomed && now_ms() - m->status_sent_ms >= m->cfg.heartbeat_ms)
				send_status(m);
		}
		rc = nng_recv(m->sock, &buf, &len, NNG_FLAG_ALLOC);
		if (rc == NNG_ETIMEDOUT)
			continue;
		if (rc != 0) {
			if (rc == NNG_ECLOSED)
				break;
			LB_WARN("manager: receive: %s", nng_strerror(rc));
			continue;
		}
		handle(m, buf, len);
		nng_free(buf, len);
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
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (pthread_timedjoin_np(thread, NULL, &until) == 0)
		return true;
	LB_WARN("manager: the control thread did not stop within %u ms; exiting without it",
		timeout_ms);
	return false;
}

void
lb_member_destroy(struct lb_member *m)
{
	if (m == NULL)
		return;
	nng_close(m->sock);
	if (m->tls != NULL)
		nng_tls_config_free(m->tls);
	lb_proof_signer_free(m->signer);
	drop_prepared(m);
	snap_reset(m);
	lb_ftable_free(&m->applied);
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
lb_member_lkg_verdict(const struct lb_member *m, bool *announce, char *why, size_t len)
{
	if (__atomic_load_n(&m->leader_ok, __ATOMIC_ACQUIRE)) {
		*announce = true;
		if (len > 0)
			why[0] = '\0';
		return false;
	}
	*announce = lb_lkg_verdict(__atomic_load_n(&m->applied_version, __ATOMIC_ACQUIRE),
		__atomic_load_n(&m->known_committed, __ATOMIC_ACQUIRE),
		__atomic_load_n(&m->confirmed_ms, __ATOMIC_ACQUIRE), wall_ms(),
		(uint64_t)m->cfg.lkg_max_age_s * 1000, why, len);
	return true;
}
