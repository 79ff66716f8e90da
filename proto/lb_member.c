/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The member side of the two-phase commit (see lb_member.h): one control
 * thread per daemon, one nng pair1 connection to the manager.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_err.h"
#include "lb_file.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "lb_member.h"
#include "lb_proof.h"

#define RECV_TICK_MS 100       /* how often the loop looks at the clock and stop */
#define SNAPSHOT_RETRY_MS 1000 /* at most one snapshot request per this */
#define HELLO_RETRY_MS 1000    /* a hello not answered by a welcome is sent again */
#define REFUSED_HOLD_MS 30000  /* ... but only this long after a refusal */
#define REDIAL_MS 3000	       /* disconnected this long: a new dialer */

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
	struct lb_flow_count *flows; /* ops->flows' room, LB_MSG_MAX_FLOWS */
	uint32_t flows_next;	     /* where the next STATUS's flows start */
	uint64_t hello_sent_ms;
	uint64_t hello_hold_ms; /* refused: no hello again before this */
	uint64_t down_since_ms; /* 0 while connected */
	bool redialing;		/* said so once for this outage */
	bool welcomed;		/* the manager answered this connection's hello */
	int stop;		/* atomic */
	int need_hello;		/* atomic: set by the pipe callback */
	int lost;		/* atomic: a connection closed (pipe callback) */
	int connected;		/* atomic: pipes open (pair1 has one, but events may cross) */
	int synced; /* atomic: welcomed in sync, or a snapshot or commit applied since */
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- configuration ---- */

static int
cfg_path(const config_setting_t *g, const char *name, bool required, const char *dir, char *out,
	size_t len, struct lb_cfg_err *err)
{
	const char *v = NULL;
	int rc = lb_cfg_get_string(g, name, required, NULL, &v, err);

	out[0] = '\0';
	if (rc != 0 || v == NULL)
		return rc;
	if ((size_t)snprintf(
		    out, len, "%s%s%s", v[0] == '/' ? "" : dir, v[0] == '/' ? "" : "/", v) >= len)
		return lb_cfg_error(err, config_setting_get_member(g, name), NULL, "path too long");
	if (access(out, R_OK) != 0)
		return lb_cfg_error(err, config_setting_get_member(g, name), NULL, "%s: %s", out,
			strerror(errno));
	return 0;
}

int
lb_member_cfg_load(const config_setting_t *root, const char *path, struct lb_member_cfg *cfg,
	struct lb_cfg_err *err)
{
	static const char *const fields[] = {
		"url", "id", "ca", "cert", "key", "server_name", "heartbeat_ms", NULL};
	const config_setting_t *g = config_setting_get_member(root, "manager");
	const char *url = NULL, *id = NULL, *sn = NULL;
	char dirbuf[PATH_MAX], *dir;
	long long hb;
	bool tls;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (g == NULL)
		return 0;
	if (!config_setting_is_group(g))
		return lb_cfg_error(err, g, NULL, "expected a group { url = ...; id = ...; }");
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	dir = dirname(dirbuf);
	if ((rc = lb_cfg_check_fields(g, fields, err)) != 0 ||
		(rc = lb_cfg_get_string(g, "url", true, NULL, &url, err)) != 0 ||
		(rc = lb_cfg_get_string(g, "id", true, NULL, &id, err)) != 0 ||
		(rc = lb_cfg_get_string(g, "server_name", false, "sluice-manager", &sn, err)) !=
			0 ||
		(rc = lb_cfg_get_int(g, "heartbeat_ms", false, 100, 60000, 1000, &hb, err)) != 0)
		return rc;
	tls = strncmp(url, "tls+tcp://", 10) == 0;
	if (!tls && strncmp(url, "ipc://", 6) != 0)
		return lb_cfg_error(err, config_setting_get_member(g, "url"), NULL,
			"\"%s\": the manager is reached by tls+tcp:// (mutual TLS) or ipc://", url);
	if (strlen(url) >= sizeof(cfg->url))
		return lb_cfg_error(err, config_setting_get_member(g, "url"), NULL, "too long");
	if (id[0] == '\0' || strlen(id) >= sizeof(cfg->id))
		return lb_cfg_error(err, config_setting_get_member(g, "id"), NULL,
			"1 to %zu characters", sizeof(cfg->id) - 1);
	if ((rc = cfg_path(g, "ca", tls, dir, cfg->ca, sizeof(cfg->ca), err)) != 0 ||
		(rc = cfg_path(g, "cert", tls, dir, cfg->cert, sizeof(cfg->cert), err)) != 0 ||
		(rc = cfg_path(g, "key", tls, dir, cfg->key, sizeof(cfg->key), err)) != 0)
		return rc;
	snprintf(cfg->url, sizeof(cfg->url), "%s", url);
	snprintf(cfg->id, sizeof(cfg->id), "%s", id);
	snprintf(cfg->server_name, sizeof(cfg->server_name), "%s", sn);
	cfg->heartbeat_ms = (uint32_t)hb;
	return 1;
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
	if (m->ops->flows != NULL && m->flows == NULL)
		m->flows = calloc(LB_MSG_MAX_FLOWS, sizeof(*m->flows));
	if (m->flows != NULL) {
		/* a window of them each time, round and round */
		msg->n_flows = m->ops->flows(
			m->arg, m->flows, LB_MSG_MAX_FLOWS, m->flows_next, &msg->flows_total);
		msg->flows = m->flows;
		msg->flows_first = m->flows_next;
		m->flows_next = msg->flows_total != 0
					? (m->flows_next + msg->n_flows) % msg->flows_total
					: 0;
	}
	send_msg(m, msg);
	free(msg);
	m->status_sent_ms = now_ms();
}

static void
send_vote(
	struct lb_member *m, uint64_t version, const uint8_t *digest, bool yes, const char *reason)
{
	struct lb_msg msg = {.type = LB_MSG_VOTE, .version = version, .flag = yes};

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

static void
on_prepare(struct lb_member *m, struct lb_msg *msg)
{
	uint8_t digest[LB_DIGEST_LEN];
	char err[LB_MSG_TEXT] = "";

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
	if (m->prepared && m->prep_yes && m->prep_version == msg->version &&
		memcmp(m->prep_digest, msg->digest, LB_DIGEST_LEN) == 0) {
		m->ops->publish(m->arg, m->prep_built, msg->version);
		m->prep_built = NULL;
		m->prepared = false;
		became(m, &m->prep_table, msg->version, msg->digest);
		__atomic_store_n(&m->synced, 1, __ATOMIC_RELEASE);
		LB_INFO("manager: version %llu committed and running",
			(unsigned long long)msg->version);
		send_status(m);
		return;
	}
	if (msg->version > m->applied_version)
		ask_snapshot(m, "a commit for a version this member did not prepare");
}

static void
on_abort(struct lb_member *m, const struct lb_msg *msg)
{
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

	if (msg->index == 0) {
		snap_reset(m);
		m->snap_open = true;
		m->snap_version = msg->version;
		memcpy(m->snap_digest, msg->digest, LB_DIGEST_LEN);
		m->snap_next = 0;
		m->snap_count = msg->count;
		m->snap.seed = t->seed;
		m->snap.maglev_size = t->maglev_size;
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
	became(m, &m->snap, m->snap_version, m->snap_digest);
	__atomic_store_n(&m->synced, 1, __ATOMIC_RELEASE);
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
	switch (msg->type) {
	case LB_MSG_WELCOME:
		if (!m->welcomed)
			send_status(m); /* the counters at once, then every heartbeat */
		m->welcomed = true;
		__atomic_store_n(&m->synced, !msg->flag, __ATOMIC_RELEASE);
		if (msg->flag)
			ask_snapshot(m, "the manager says this member is out of sync");
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
		/* It will say so again until something changes: ask less often. */
		LB_ERR("manager refused this member: %s (again in %u s)", msg->text,
			REFUSED_HOLD_MS / 1000);
		m->hello_hold_ms = now_ms() + REFUSED_HOLD_MS;
		break;
	case LB_MSG_CHALLENGE:
		on_challenge(m, msg);
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

static void
pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct lb_member *m = arg;

	(void)p;
	if (ev == NNG_PIPE_EV_ADD_POST) {
		__atomic_add_fetch(&m->connected, 1, __ATOMIC_ACQ_REL);
		__atomic_store_n(&m->need_hello, 1, __ATOMIC_RELEASE);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
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
	int rc = nng_dialer_create(&m->dialer, m->sock, m->cfg.url);

	if (rc == 0 && m->tls != NULL)
		rc = nng_dialer_set_ptr(m->dialer, NNG_OPT_TLS_CONFIG, m->tls);
	/* In the background: the manager may come up after us. */
	if (rc == 0)
		rc = nng_dialer_start(m->dialer, NNG_FLAG_NONBLOCK);
	if (rc != 0)
		snprintf(err, len, "%s: %s", m->cfg.url, nng_strerror(rc));
	return rc;
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
	char err[sizeof(m->cfg.url) + 64]; /* the url and nng's error */

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
	nng_dialer_close(m->dialer);
	if (dial(m, err, sizeof(err)) != 0)
		LB_WARN("manager: redial: %s", err);
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
	LB_INFO("manager: member %s dials %s, starting at version %llu", m->cfg.id, m->cfg.url,
		(unsigned long long)version);
	return m;
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
		if (__atomic_exchange_n(&m->lost, 0, __ATOMIC_ACQ_REL))
			m->welcomed = false;
		if (__atomic_exchange_n(&m->need_hello, 0, __ATOMIC_ACQ_REL)) {
			/* A new connection: whatever was half-done is void. */
			snap_reset(m);
			m->proof_len = 0;
			m->snap_asked_ms = 0;
			send_hello(m);
		}
		redial_if_stuck(m);
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
