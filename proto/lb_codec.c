/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The envelope, and the messages small enough to map here: the codec's
 * entry points. Encoding fills the generated structs of one message from
 * plain C (tables in lb_codec_table.c, the operator API in lb_codec_ctl.c)
 * and packs them; decoding unpacks, validates, and copies into plain C
 * before freeing the generated tree, so no pointer into it escapes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_codec_int.h"
#include "lb_err.h"
#include "lb_hdr.h"

/* ---- encoding ---- */

static void
enc_init(struct lb_enc *e)
{
	memset(e, 0, sizeof(*e));
	sluice__envelope__init(&e->env);
	sluice__hello__init(&e->hello);
	sluice__challenge__init(&e->chal);
	sluice__welcome__init(&e->welcome);
	sluice__prepare__init(&e->prepare);
	sluice__delta__init(&e->delta);
	sluice__vote__init(&e->vote);
	sluice__commit__init(&e->commit);
	sluice__abort__init(&e->abort_);
	sluice__snapshot_request__init(&e->sreq);
	sluice__snapshot_chunk__init(&e->chunk);
	sluice__status__init(&e->status);
	sluice__refused__init(&e->refused);
	sluice__ctl_request__init(&e->creq);
	sluice__ctl_reply__init(&e->crep);
	sluice__backend__init(&e->cbe);
	sluice__pool_options__init(&e->cpool);
	sluice__sync_state__init(&e->sync);
	sluice__route_state__init(&e->route);
	sluice__shares__init(&e->shares);
	sluice__limit_change__init(&e->clim);
}

static void
enc_free(struct lb_enc *e)
{
	lb_enc_table_free(e);
	free(e->ce);
	free(e->cep);
	free(e->fc);
	free(e->fcp);
	free(e->fck);
	free(e->ckey);
	free(e->rv);
	free(e->rvp);
}

static void
enc_hello(struct lb_enc *e, const struct lb_msg *m)
{
	Sluice__Hello *h = &e->hello;
	uint32_t i;

	h->id = (char *)m->id;
	h->role = (Sluice__Role)m->role;
	h->applied_version = m->version;
	h->applied_digest = lb_enc_bin(m->digest, LB_DIGEST_LEN);
	if (m->probe_addr.a32[0] != 0)
		h->probe_address = lb_enc_addr(LB_AF_INET, &m->probe_addr);
	if (!lb_addr_is_zero(&m->probe_addr6))
		h->probe_address6 = lb_enc_addr(LB_AF_INET6, &m->probe_addr6);
	for (i = 0; i < m->n_pas && i < LB_MSG_MAX_PAS; i++)
		e->pas[i] = lb_enc_addr(m->pas[i].af, &m->pas[i].a);
	h->n_pa = i;
	h->pa = e->pas;
	for (i = 0; i < m->n_dips && i < LB_MSG_MAX_DIPS; i++)
		e->dips[i] = lb_enc_addr(m->dips[i].af, &m->dips[i].a);
	h->n_dip = i;
	h->dip = e->dips;
	/* Over TLS, the answer to a CHALLENGE: the certificate rides in body. */
	lb_enc_proof(m, m->body, &h->nonce, &h->proof, &h->certificate);
	e->env.body_case = SLUICE__ENVELOPE__BODY_HELLO;
	e->env.hello = h;
}

/* A mux's routes, in its STATUS. */
static void
enc_route(struct lb_enc *e, const struct lb_route_state *r)
{
	Sluice__RouteState *rs = &e->route;
	uint32_t i, n = r->n_vips < LB_ROUTE_MAX_VIPS ? r->n_vips : LB_ROUTE_MAX_VIPS;

	rs->status = (char *)r->status;
	rs->reason = (char *)r->reason;
	rs->since_unix_ms = r->since_unix_ms;
	rs->sessions = r->sessions;
	rs->sessions_up = r->sessions_up;
	rs->vips = r->n_vips_total;
	e->rv = lb_enc_alloc(e, n, sizeof(*e->rv));
	e->rvp = lb_enc_alloc(e, n, sizeof(*e->rvp));
	for (i = 0; e->err == 0 && i < n; i++) {
		Sluice__RouteVip *v = &e->rv[i];

		sluice__route_vip__init(v);
		v->vip = lb_enc_bin(&r->vips[i].vip, 4);
		v->announced = r->vips[i].announced;
		v->reason = (char *)r->vips[i].reason;
		v->since_unix_ms = r->vips[i].since_unix_ms;
		e->rvp[i] = v;
		rs->n_vip = i + 1;
	}
	rs->vip = e->rvp;
	e->status.route = rs;
}

/* A mux's flow counts (STATUS): at most LB_MSG_MAX_FLOWS; addresses of the service's family. */
static void
enc_flows(struct lb_enc *e, const struct lb_msg *m)
{
	uint32_t i, n = m->n_flows < LB_MSG_MAX_FLOWS ? m->n_flows : LB_MSG_MAX_FLOWS;

	if (n == 0 || m->flows == NULL)
		return;
	e->fc = lb_enc_alloc(e, n, sizeof(*e->fc));
	e->fcp = lb_enc_alloc(e, n, sizeof(*e->fcp));
	e->fck = lb_enc_alloc(e, n, sizeof(*e->fck));
	for (i = 0; e->err == 0 && i < n; i++) {
		const struct lb_flow_count *f = &m->flows[i];

		sluice__flow_count__init(&e->fc[i]);
		sluice__service_key__init(&e->fck[i]);
		e->fck[i].vip = lb_enc_addr(f->af, &f->vip);
		e->fck[i].protocol = f->proto;
		e->fck[i].port = f->port;
		e->fc[i].service = &e->fck[i];
		if (f->dip_port != 0) {
			e->fc[i].dip = lb_enc_addr(f->af, &f->dip);
			e->fc[i].dip_port = f->dip_port;
		}
		e->fc[i].packets = f->pkts;
		e->fc[i].bytes = f->bytes;
		e->fc[i].new_connections = f->new_conns;
		e->fcp[i] = &e->fc[i];
	}
	if (e->err == 0) {
		e->status.n_flows = n;
		e->status.flows = e->fcp;
		e->status.flows_first = m->flows_first;
		e->status.flows_total = m->flows_total;
	}
}

static void
enc_status(struct lb_enc *e, const struct lb_msg *m)
{
	uint32_t i;

	e->status.applied_version = m->version;
	e->ce = lb_enc_alloc(e, m->n_counters, sizeof(*e->ce));
	e->cep = lb_enc_alloc(e, m->n_counters, sizeof(*e->cep));
	for (i = 0; e->err == 0 && i < m->n_counters && i < LB_MSG_MAX_COUNTERS; i++) {
		sluice__status__counters_entry__init(&e->ce[i]);
		e->ce[i].key = (char *)m->counters[i].name;
		e->ce[i].value = m->counters[i].value;
		e->cep[i] = &e->ce[i];
		e->status.n_counters = i + 1;
	}
	e->status.counters = e->cep;
	enc_flows(e, m);
	if (m->route != NULL)
		enc_route(e, m->route);
	e->env.body_case = SLUICE__ENVELOPE__BODY_STATUS;
	e->env.status = &e->status;
}

/* The message's body into e; 0 or -LB_EINVAL (unknown type or operation). */
static int
enc_body(struct lb_enc *e, const struct lb_msg *m)
{
	switch (m->type) {
	case LB_MSG_HELLO:
		enc_hello(e, m);
		return 0;
	case LB_MSG_CHALLENGE:
		e->chal.nonce = lb_enc_bin(m->nonce, LB_NONCE_LEN);
		e->env.body_case = SLUICE__ENVELOPE__BODY_CHALLENGE;
		e->env.challenge = &e->chal;
		return 0;
	case LB_MSG_WELCOME:
		e->welcome.current_version = m->version;
		e->welcome.resync = m->flag;
		e->welcome.term = m->term;
		e->env.body_case = SLUICE__ENVELOPE__BODY_WELCOME;
		e->env.welcome = &e->welcome;
		return 0;
	case LB_MSG_PREPARE:
		lb_enc_prepare(e, m);
		return 0;
	case LB_MSG_VOTE:
		e->vote.version = m->version;
		e->vote.digest = lb_enc_bin(m->digest, LB_DIGEST_LEN);
		e->vote.yes = m->flag;
		e->vote.reason = (char *)m->text;
		e->vote.term_seen = m->term;
		e->env.body_case = SLUICE__ENVELOPE__BODY_VOTE;
		e->env.vote = &e->vote;
		return 0;
	case LB_MSG_COMMIT:
		e->commit.version = m->version;
		e->commit.digest = lb_enc_bin(m->digest, LB_DIGEST_LEN);
		e->commit.term = m->term;
		e->env.body_case = SLUICE__ENVELOPE__BODY_COMMIT;
		e->env.commit = &e->commit;
		return 0;
	case LB_MSG_ABORT:
		e->abort_.version = m->version;
		e->abort_.digest = lb_enc_bin(m->digest, LB_DIGEST_LEN);
		e->abort_.reason = (char *)m->text;
		e->abort_.term = m->term;
		e->env.body_case = SLUICE__ENVELOPE__BODY_ABORT;
		e->env.abort = &e->abort_;
		return 0;
	case LB_MSG_SNAPSHOT_REQUEST:
		e->sreq.have_version = m->version;
		e->env.body_case = SLUICE__ENVELOPE__BODY_SNAPSHOT_REQUEST;
		e->env.snapshot_request = &e->sreq;
		return 0;
	case LB_MSG_SNAPSHOT_CHUNK:
		lb_enc_chunk(e, m);
		return 0;
	case LB_MSG_STATUS:
		enc_status(e, m);
		return 0;
	case LB_MSG_SYNC:
		e->sync.committed_version = m->version;
		e->sync.in_sync = m->flag;
		e->sync.reason = (char *)m->text;
		e->env.body_case = SLUICE__ENVELOPE__BODY_SYNC_STATE;
		e->env.sync_state = &e->sync;
		return 0;
	case LB_MSG_REFUSED:
		e->refused.reason = (char *)m->text;
		e->refused.protocol = LB_PROTOCOL;
		e->refused.not_leader = m->not_leader;
		e->refused.leader_url = (char *)m->leader_url;
		e->env.body_case = SLUICE__ENVELOPE__BODY_REFUSED;
		e->env.refused = &e->refused;
		return 0;
	case LB_MSG_SHARES:
		e->shares.divisor = m->count;
		e->shares.index = m->index;
		e->env.body_case = SLUICE__ENVELOPE__BODY_SHARES;
		e->env.shares = &e->shares;
		return 0;
	case LB_MSG_CTL_REQUEST:
		return lb_enc_ctl_request(e, m);
	case LB_MSG_CTL_REPLY:
		lb_enc_ctl_reply(e, m);
		return 0;
	default:
		return -LB_EINVAL;
	}
}

int
lb_enc_pack(const ProtobufCMessage *m, uint8_t **buf, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(m);
	if ((*buf = malloc(*len ? *len : 1)) == NULL)
		return -LB_ENOMEM;
	protobuf_c_message_pack(m, *buf);
	return 0;
}

int
lb_msg_encode(const struct lb_msg *m, uint8_t **buf, size_t *len)
{
	struct lb_enc *e = malloc(sizeof(*e));
	int rc;

	if (e == NULL)
		return -LB_ENOMEM;
	enc_init(e);
	e->env.protocol = LB_PROTOCOL;
	e->env.sender = (char *)m->sender;
	rc = enc_body(e, m);
	if (rc == 0 && e->err == 0)
		e->err = lb_enc_pack(&e->env.base, buf, len);
	if (rc == 0)
		rc = e->err;
	enc_free(e);
	free(e);
	return rc;
}

/* ---- decoding ---- */

/* A tunnel address for VIP probes: none, or one of family af. */
static int
dec_probe_addr(const ProtobufCBinaryData *b, uint8_t af, struct lb_addr *out, const char *what,
	char *errbuf, size_t len)
{
	uint8_t got = LB_AF_NONE;
	int rc;

	if (b->len == 0)
		return 0;
	if ((rc = lb_dec_addr(b, out, &got, what, errbuf, len)) != 0)
		return rc;
	if (got != af)
		return lb_fail(
			errbuf, len, -LB_EPARSE, "hello: %s is IPv%u, not IPv%u", what, got, af);
	return 0;
}

static int
dec_hello(const Sluice__Hello *h, struct lb_msg *m, char *errbuf, size_t len)
{
	size_t i;
	int rc;

	m->type = LB_MSG_HELLO;
	lb_dec_text(m->id, sizeof(m->id), h->id);
	m->role = (enum lb_role)h->role;
	if (m->role < LB_ROLE_MUX || m->role > LB_ROLE_CTL)
		return lb_fail(errbuf, len, -LB_EPARSE, "hello: unknown role %d", m->role);
	m->version = h->applied_version;
	if ((rc = dec_probe_addr(&h->probe_address, LB_AF_INET, &m->probe_addr, "probe_address",
		     errbuf, len)) != 0 ||
		(rc = dec_probe_addr(&h->probe_address6, LB_AF_INET6, &m->probe_addr6,
			 "probe_address6", errbuf, len)) != 0)
		return rc;
	if (h->n_pa > LB_MSG_MAX_PAS || h->n_dip > LB_MSG_MAX_DIPS)
		return lb_fail(errbuf, len, -LB_EPARSE,
			"hello: %zu PAs and %zu DIPs (at most %d, %d)", h->n_pa, h->n_dip,
			LB_MSG_MAX_PAS, LB_MSG_MAX_DIPS);
	for (i = 0; i < h->n_pa; i++)
		if ((rc = lb_dec_addr(&h->pa[i], &m->pas[i].a, &m->pas[i].af, "pa", errbuf, len)) !=
			0)
			return rc;
	m->n_pas = (uint32_t)h->n_pa;
	for (i = 0; i < h->n_dip; i++)
		if ((rc = lb_dec_addr(
			     &h->dip[i], &m->dips[i].a, &m->dips[i].af, "dip", errbuf, len)) != 0)
			return rc;
	m->n_dips = (uint32_t)h->n_dip;
	if ((rc = lb_dec_proof("hello", &h->nonce, &h->proof, &h->certificate, m, &m->body, errbuf,
		     len)) != 0)
		return rc;
	return h->applied_digest.len == 0
		       ? 0
		       : lb_dec_digest(&h->applied_digest, m->digest, errbuf, len);
}

/* A mux's routes: at most LB_ROUTE_MAX_VIPS of them, each an IPv4 address. */
static int
dec_route(const Sluice__RouteState *rs, struct lb_msg *m, char *errbuf, size_t len)
{
	struct lb_route_state *r;
	size_t i;

	if (rs->n_vip > LB_ROUTE_MAX_VIPS)
		return lb_fail(errbuf, len, -LB_EPARSE, "status: %zu route VIPs (at most %d)",
			rs->n_vip, LB_ROUTE_MAX_VIPS);
	r = m->route = calloc(1, sizeof(*m->route));
	if (r == NULL)
		return -LB_ENOMEM;
	lb_dec_text(r->status, sizeof(r->status), rs->status);
	lb_dec_text(r->reason, sizeof(r->reason), rs->reason);
	r->since_unix_ms = rs->since_unix_ms;
	r->sessions = rs->sessions;
	r->sessions_up = rs->sessions_up;
	r->n_vips_total = rs->vips;
	for (i = 0; i < rs->n_vip; i++) {
		struct lb_addr a = {0};
		uint8_t af = LB_AF_NONE;
		int rc = lb_dec_addr(&rs->vip[i]->vip, &a, &af, "route vip", errbuf, len);

		if (rc != 0)
			return rc;
		if (af != LB_AF_INET)
			return lb_fail(errbuf, len, -LB_EPARSE, "status: an IPv6 route VIP");
		r->vips[i].vip = a.a32[0];
		r->vips[i].announced = rs->vip[i]->announced;
		lb_dec_text(r->vips[i].reason, sizeof(r->vips[i].reason), rs->vip[i]->reason);
		r->vips[i].since_unix_ms = rs->vip[i]->since_unix_ms;
		r->n_vips = (uint32_t)i + 1;
	}
	return 0;
}

/* One flow count: a valid service key; a backend's DIP and port, or neither. */
static int
dec_flow(const Sluice__FlowCount *f, struct lb_flow_count *out, char *errbuf, size_t len)
{
	struct lb_svc_key k;
	uint8_t daf = LB_AF_NONE;
	int rc = lb_dec_key(f->service, &k, errbuf, len);

	if (rc != 0)
		return rc;
	out->vip = k.vip;
	out->af = k.af;
	out->port = lb_be16_to_cpu(k.port);
	out->proto = k.proto;
	if (f->dip_port > 65535)
		return lb_fail(errbuf, len, -LB_EPARSE, "flow: port %u out of range", f->dip_port);
	if ((f->dip.len == 0) != (f->dip_port == 0))
		return lb_fail(
			errbuf, len, -LB_EPARSE, "flow: a backend needs its DIP and its port");
	if (f->dip.len != 0 &&
		(rc = lb_dec_addr(&f->dip, &out->dip, &daf, "flow dip", errbuf, len)) != 0)
		return rc;
	if (f->dip.len != 0 && daf != k.af)
		return lb_fail(errbuf, len, -LB_EPARSE, "flow: a DIP of the other family");
	out->dip_port = (uint16_t)f->dip_port;
	out->pkts = f->packets;
	out->bytes = f->bytes;
	out->new_conns = f->new_connections;
	return 0;
}

static int
dec_status(const Sluice__Status *s, struct lb_msg *m, char *errbuf, size_t len)
{
	size_t i;
	int rc;

	m->type = LB_MSG_STATUS;
	m->version = s->applied_version;
	for (i = 0; i < s->n_counters && i < LB_MSG_MAX_COUNTERS; i++) {
		lb_dec_text(m->counters[i].name, sizeof(m->counters[i].name), s->counters[i]->key);
		m->counters[i].value = s->counters[i]->value;
		m->n_counters = (uint32_t)i + 1;
	}
	if (s->route != NULL && (rc = dec_route(s->route, m, errbuf, len)) != 0)
		return rc;
	if (s->n_flows == 0)
		return 0;
	/* A member may not make the manager hold more than this. */
	if (s->n_flows > LB_MSG_MAX_FLOWS)
		return lb_fail(errbuf, len, -LB_EPARSE, "status: %zu flows, at most %u", s->n_flows,
			LB_MSG_MAX_FLOWS);
	m->flows = calloc(s->n_flows, sizeof(*m->flows));
	if (m->flows == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < s->n_flows; i++)
		if ((rc = dec_flow(s->flows[i], &m->flows[i], errbuf, len)) != 0)
			return rc;
	m->n_flows = (uint32_t)s->n_flows;
	m->flows_first = s->flows_first;
	m->flows_total = s->flows_total;
	return 0;
}

static int
dec_body(const Sluice__Envelope *env, struct lb_msg *m, char *errbuf, size_t len)
{
	switch (env->body_case) {
	case SLUICE__ENVELOPE__BODY_HELLO:
		return dec_hello(env->hello, m, errbuf, len);
	case SLUICE__ENVELOPE__BODY_CHALLENGE:
		m->type = LB_MSG_CHALLENGE;
		if (env->challenge->nonce.len != LB_NONCE_LEN)
			return lb_fail(errbuf, len, -LB_EPARSE, "challenge: nonce of %zu bytes",
				env->challenge->nonce.len);
		memcpy(m->nonce, env->challenge->nonce.data, LB_NONCE_LEN);
		return 0;
	case SLUICE__ENVELOPE__BODY_WELCOME:
		m->type = LB_MSG_WELCOME;
		m->version = env->welcome->current_version;
		m->flag = env->welcome->resync;
		m->term = env->welcome->term;
		return 0;
	case SLUICE__ENVELOPE__BODY_PREPARE:
		return lb_dec_prepare(env->prepare, m, errbuf, len);
	case SLUICE__ENVELOPE__BODY_VOTE:
		m->type = LB_MSG_VOTE;
		m->version = env->vote->version;
		m->flag = env->vote->yes;
		m->term = env->vote->term_seen;
		lb_dec_text(m->text, sizeof(m->text), env->vote->reason);
		return lb_dec_digest(&env->vote->digest, m->digest, errbuf, len);
	case SLUICE__ENVELOPE__BODY_COMMIT:
		m->type = LB_MSG_COMMIT;
		m->version = env->commit->version;
		m->term = env->commit->term;
		return lb_dec_digest(&env->commit->digest, m->digest, errbuf, len);
	case SLUICE__ENVELOPE__BODY_ABORT:
		m->type = LB_MSG_ABORT;
		m->version = env->abort->version;
		m->term = env->abort->term;
		lb_dec_text(m->text, sizeof(m->text), env->abort->reason);
		return lb_dec_digest(&env->abort->digest, m->digest, errbuf, len);
	case SLUICE__ENVELOPE__BODY_SNAPSHOT_REQUEST:
		m->type = LB_MSG_SNAPSHOT_REQUEST;
		m->version = env->snapshot_request->have_version;
		return 0;
	case SLUICE__ENVELOPE__BODY_SNAPSHOT_CHUNK:
		return lb_dec_chunk(env->snapshot_chunk, m, errbuf, len);
	case SLUICE__ENVELOPE__BODY_STATUS:
		return dec_status(env->status, m, errbuf, len);
	case SLUICE__ENVELOPE__BODY_SYNC_STATE:
		m->type = LB_MSG_SYNC;
		m->version = env->sync_state->committed_version;
		m->flag = env->sync_state->in_sync;
		lb_dec_text(m->text, sizeof(m->text), env->sync_state->reason);
		return 0;
	case SLUICE__ENVELOPE__BODY_REFUSED:
		m->type = LB_MSG_REFUSED;
		lb_dec_text(m->text, sizeof(m->text), env->refused->reason);
		m->not_leader = env->refused->not_leader;
		lb_dec_text(m->leader_url, sizeof(m->leader_url), env->refused->leader_url);
		return 0;
	case SLUICE__ENVELOPE__BODY_SHARES:
		m->type = LB_MSG_SHARES;
		m->count = env->shares->divisor;
		m->index = env->shares->index;
		if (m->count == 0 || m->index >= m->count)
			return lb_fail(errbuf, len, -LB_EPARSE, "shares: index %u of %u", m->index,
				m->count);
		return 0;
	case SLUICE__ENVELOPE__BODY_CTL_REQUEST:
		return lb_dec_ctl_request(env->ctl_request, m, errbuf, len);
	case SLUICE__ENVELOPE__BODY_CTL_REPLY:
		return lb_dec_ctl_reply(env->ctl_reply, m, errbuf, len);
	default:
		return lb_fail(errbuf, len, -LB_EPARSE, "message without a body");
	}
}

static void
msg_clear(struct lb_msg *m)
{
	lb_ftable_delta_free(&m->delta);
	lb_ftable_free(&m->table);
	free(m->body);
	free(m->json);
	free(m->cert);
	free(m->route);
	free(m->flows);
	memset(m, 0, sizeof(*m));
}

int
lb_msg_decode(const uint8_t *buf, size_t len, struct lb_msg *m, char *errbuf, size_t errlen)
{
	Sluice__Envelope *env;
	uint32_t proto;
	int rc;

	memset(m, 0, sizeof(*m));
	if (len > LB_MSG_MAX_BYTES)
		return lb_fail(errbuf, errlen, -LB_EPARSE, "message of %zu bytes (limit %u)", len,
			LB_MSG_MAX_BYTES);
	env = sluice__envelope__unpack(NULL, len, buf);
	if (env == NULL)
		return lb_fail(errbuf, errlen, -LB_EPARSE, "not a Sluice message (%zu bytes)", len);
	proto = env->protocol;
	if (proto != LB_PROTOCOL) {
		sluice__envelope__free_unpacked(env, NULL);
		m->protocol = proto;
		return lb_fail(errbuf, errlen, -LB_EPROTOCOL,
			"peer speaks protocol %u, this build speaks %u", proto, LB_PROTOCOL);
	}
	lb_dec_text(m->sender, sizeof(m->sender), env->sender);
	rc = dec_body(env, m, errbuf, errlen);
	sluice__envelope__free_unpacked(env, NULL);
	if (rc != 0)
		msg_clear(m);
	m->protocol = proto;
	return rc;
}

void
lb_msg_free(struct lb_msg *m)
{
	msg_clear(m);
}
