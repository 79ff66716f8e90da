/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The only file that includes the generated protobuf-c code. Encoding builds
 * the generated structs on the heap from plain C and packs them; decoding
 * unpacks, validates, and copies into plain C before freeing the generated
 * tree, so no pointer into it escapes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_codec.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "lb_maglev.h"
#include "sluice.pb-c.h"

/* ---- encoding ---- */

struct enc {
	int err;
};

static void *
ezalloc(struct enc *e, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p == NULL)
		e->err = -LB_ENOMEM;
	return p;
}

static ProtobufCBinaryData
bin(const void *p, size_t len)
{
	ProtobufCBinaryData b = {len, (uint8_t *)(uintptr_t)p};

	return b;
}

static Sluice__ServiceKey *
enc_key(struct enc *e, const struct lb_addr *vip, uint8_t proto, uint16_t port)
{
	Sluice__ServiceKey *k = ezalloc(e, 1, sizeof(*k));

	if (k == NULL)
		return NULL;
	sluice__service_key__init(k);
	k->vip = bin(&vip->a32[0], 4);
	k->protocol = proto;
	k->port = port;
	return k;
}

static Sluice__Service *
enc_service(struct enc *e, const struct lb_service_cfg *sc)
{
	Sluice__Service *s = ezalloc(e, 1, sizeof(*s));
	uint32_t i;

	if (s == NULL)
		return NULL;
	sluice__service__init(s);
	s->key = enc_key(e, &sc->vip, sc->proto, sc->port);
	s->id = sc->id;
	s->backends = ezalloc(e, sc->n_backends, sizeof(*s->backends));
	if (s->key == NULL || s->backends == NULL)
		return s;
	for (i = 0; i < sc->n_backends; i++) {
		const struct lb_backend_cfg *bc = &sc->backends[i];
		Sluice__Backend *b = ezalloc(e, 1, sizeof(*b));

		if (b == NULL)
			return s;
		sluice__backend__init(b);
		b->id = bc->id;
		b->dip = bin(&bc->dip.a32[0], 4);
		b->port = bc->port;
		b->weight = bc->weight;
		b->host = bin(&bc->host.a32[0], 4);
		b->state = (Sluice__BackendState)bc->state;
		s->backends[s->n_backends++] = b;
	}
	return s;
}

static void
free_service(Sluice__Service *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n_backends; i++)
		free(s->backends[i]);
	free(s->backends);
	free(s->key);
	free(s);
}

static Sluice__FlowTableOptions *
enc_options(struct enc *e, const struct lb_hash_seed *seed, uint32_t maglev_size, uint8_t raw[16])
{
	Sluice__FlowTableOptions *o = ezalloc(e, 1, sizeof(*o));
	int i;

	if (o == NULL)
		return NULL;
	sluice__flow_table_options__init(o);
	for (i = 0; i < 8; i++) {
		raw[i] = (uint8_t)(seed->k0 >> (56 - 8 * i));
		raw[8 + i] = (uint8_t)(seed->k1 >> (56 - 8 * i));
	}
	o->hash_seed = bin(raw, 16);
	o->maglev_size = maglev_size;
	return o;
}

static void
enc_pool(Sluice__PoolOptions *p, const struct lb_pool_opts *o)
{
	p->given = o->given;
	p->probe = (Sluice__ProbeType)o->probe;
	p->probe_port = o->probe_port;
	p->path = (char *)o->path;
	p->codes = (char *)o->codes;
	p->interval_s = o->interval_s;
	p->timeout_s = o->timeout_s;
	p->healthy = o->healthy;
	p->unhealthy = o->unhealthy;
	p->drain_delay_s = o->drain_delay_s;
	p->slow_start_s = o->slow_start_s;
	p->min_healthy = o->min_healthy;
	p->min_healthy_percent = o->min_healthy_pct;
}

int
lb_msg_encode(const struct lb_msg *m, uint8_t **buf, size_t *len)
{
	Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
	Sluice__Hello hello = SLUICE__HELLO__INIT;
	Sluice__Welcome welcome = SLUICE__WELCOME__INIT;
	Sluice__Prepare prepare = SLUICE__PREPARE__INIT;
	Sluice__Delta delta = SLUICE__DELTA__INIT;
	Sluice__Vote vote = SLUICE__VOTE__INIT;
	Sluice__Commit commit = SLUICE__COMMIT__INIT;
	Sluice__Abort abort_ = SLUICE__ABORT__INIT;
	Sluice__SnapshotRequest sreq = SLUICE__SNAPSHOT_REQUEST__INIT;
	Sluice__SnapshotChunk chunk = SLUICE__SNAPSHOT_CHUNK__INIT;
	Sluice__Status status = SLUICE__STATUS__INIT;
	Sluice__Refused refused = SLUICE__REFUSED__INIT;
	Sluice__CtlRequest creq = SLUICE__CTL_REQUEST__INIT;
	Sluice__CtlReply crep = SLUICE__CTL_REPLY__INIT;
	Sluice__Challenge chal = SLUICE__CHALLENGE__INIT;
	Sluice__ServiceKey *ckey = NULL;
	Sluice__Backend cbe = SLUICE__BACKEND__INIT;
	Sluice__PoolOptions cpool = SLUICE__POOL_OPTIONS__INIT;
	Sluice__Status__CountersEntry *ce = NULL, **cep = NULL;
	Sluice__Service **svcs = NULL;
	Sluice__ServiceKey **keys = NULL;
	Sluice__FlowTableOptions *opts = NULL;
	struct enc e = {0};
	uint8_t seed_raw[16];
	uint32_t i, n_svcs = 0;
	int rc = 0;

	env.protocol = LB_PROTOCOL;
	env.sender = (char *)m->sender;
	switch (m->type) {
	case LB_MSG_HELLO:
		hello.id = (char *)m->id;
		hello.role = (Sluice__Role)m->role;
		hello.applied_version = m->version;
		hello.applied_digest = bin(m->digest, LB_DIGEST_LEN);
		if (m->probe_addr.a32[0] != 0)
			hello.probe_address = bin(&m->probe_addr.a32[0], 4);
		if (m->proof_len != 0) {
			hello.nonce = bin(m->nonce, LB_NONCE_LEN);
			hello.proof = bin(m->proof, m->proof_len);
			if (m->body != NULL)
				hello.certificate = bin(m->body, strlen(m->body) + 1);
		}
		env.body_case = SLUICE__ENVELOPE__BODY_HELLO;
		env.hello = &hello;
		break;
	case LB_MSG_CHALLENGE:
		chal.nonce = bin(m->nonce, LB_NONCE_LEN);
		env.body_case = SLUICE__ENVELOPE__BODY_CHALLENGE;
		env.challenge = &chal;
		break;
	case LB_MSG_WELCOME:
		welcome.current_version = m->version;
		welcome.resync = m->flag;
		env.body_case = SLUICE__ENVELOPE__BODY_WELCOME;
		env.welcome = &welcome;
		break;
	case LB_MSG_PREPARE:
		prepare.version = m->version;
		prepare.base_version = m->base_version;
		prepare.digest = bin(m->digest, LB_DIGEST_LEN);
		n_svcs = m->delta.n_upsert;
		svcs = ezalloc(&e, n_svcs, sizeof(*svcs));
		keys = ezalloc(&e, m->delta.n_remove, sizeof(*keys));
		for (i = 0; e.err == 0 && i < n_svcs; i++)
			svcs[i] = enc_service(&e, &m->delta.upsert[i]);
		for (i = 0; e.err == 0 && i < m->delta.n_remove; i++) {
			const struct lb_svc_key *k = &m->delta.remove[i];

			keys[i] = enc_key(&e, &k->vip, k->proto, lb_be16_to_cpu(k->port));
			delta.n_remove = i + 1;
		}
		delta.upsert = svcs;
		delta.n_upsert = n_svcs;
		delta.remove = keys;
		if (m->delta.has_options)
			delta.options = opts =
				enc_options(&e, &m->delta.seed, m->delta.maglev_size, seed_raw);
		prepare.delta = &delta;
		env.body_case = SLUICE__ENVELOPE__BODY_PREPARE;
		env.prepare = &prepare;
		break;
	case LB_MSG_VOTE:
		vote.version = m->version;
		vote.digest = bin(m->digest, LB_DIGEST_LEN);
		vote.yes = m->flag;
		vote.reason = (char *)m->text;
		env.body_case = SLUICE__ENVELOPE__BODY_VOTE;
		env.vote = &vote;
		break;
	case LB_MSG_COMMIT:
		commit.version = m->version;
		commit.digest = bin(m->digest, LB_DIGEST_LEN);
		env.body_case = SLUICE__ENVELOPE__BODY_COMMIT;
		env.commit = &commit;
		break;
	case LB_MSG_ABORT:
		abort_.version = m->version;
		abort_.digest = bin(m->digest, LB_DIGEST_LEN);
		abort_.reason = (char *)m->text;
		env.body_case = SLUICE__ENVELOPE__BODY_ABORT;
		env.abort = &abort_;
		break;
	case LB_MSG_SNAPSHOT_REQUEST:
		sreq.have_version = m->version;
		env.body_case = SLUICE__ENVELOPE__BODY_SNAPSHOT_REQUEST;
		env.snapshot_request = &sreq;
		break;
	case LB_MSG_SNAPSHOT_CHUNK:
		chunk.version = m->version;
		chunk.digest = bin(m->digest, LB_DIGEST_LEN);
		chunk.index = m->index;
		chunk.count = m->count;
		n_svcs = m->table.n_services;
		svcs = ezalloc(&e, n_svcs, sizeof(*svcs));
		for (i = 0; e.err == 0 && i < n_svcs; i++)
			svcs[i] = enc_service(&e, &m->table.services[i]);
		chunk.services = svcs;
		chunk.n_services = n_svcs;
		if (m->index == 0)
			chunk.options = opts =
				enc_options(&e, &m->table.seed, m->table.maglev_size, seed_raw);
		env.body_case = SLUICE__ENVELOPE__BODY_SNAPSHOT_CHUNK;
		env.snapshot_chunk = &chunk;
		break;
	case LB_MSG_STATUS:
		status.applied_version = m->version;
		ce = ezalloc(&e, m->n_counters, sizeof(*ce));
		cep = ezalloc(&e, m->n_counters, sizeof(*cep));
		for (i = 0; e.err == 0 && i < m->n_counters && i < LB_MSG_MAX_COUNTERS; i++) {
			sluice__status__counters_entry__init(&ce[i]);
			ce[i].key = (char *)m->counters[i].name;
			ce[i].value = m->counters[i].value;
			cep[i] = &ce[i];
			status.n_counters = i + 1;
		}
		status.counters = cep;
		env.body_case = SLUICE__ENVELOPE__BODY_STATUS;
		env.status = &status;
		break;
	case LB_MSG_REFUSED:
		refused.reason = (char *)m->text;
		refused.protocol = LB_PROTOCOL;
		env.body_case = SLUICE__ENVELOPE__BODY_REFUSED;
		env.refused = &refused;
		break;
	case LB_MSG_CTL_REQUEST:
		if (m->ctl.op < LB_CTL_STATUS || m->ctl.op > LB_CTL_OP_MAX)
			return -LB_EINVAL;
		creq.op = (Sluice__CtlOp)m->ctl.op;
		if (m->ctl.has_svc) {
			creq.service = ckey = enc_key(&e, &m->ctl.svc.vip, m->ctl.svc.proto,
				lb_be16_to_cpu(m->ctl.svc.port));
		}
		if (m->ctl.has_be) {
			cbe.id = m->ctl.be.id;
			cbe.dip = bin(&m->ctl.be.dip.a32[0], 4);
			cbe.port = m->ctl.be.port;
			cbe.weight = m->ctl.be.weight;
			cbe.host = bin(&m->ctl.be.host.a32[0], 4);
			cbe.state = (Sluice__BackendState)m->ctl.be.state;
			creq.backend = &cbe;
		}
		creq.set_weight = m->ctl.set_weight;
		creq.set_state = m->ctl.set_state;
		creq.set_host = m->ctl.set_host;
		creq.config = m->body != NULL ? m->body : (char *)"";
		creq.version = m->version;
		creq.limit = m->ctl.limit;
		if (m->ctl.pool.given != 0) {
			enc_pool(&cpool, &m->ctl.pool);
			creq.pool = &cpool;
		}
		creq.operator_name = (char *)m->id;
		if (m->proof_len != 0) {
			creq.nonce = bin(m->nonce, LB_NONCE_LEN);
			creq.proof = bin(m->proof, m->proof_len);
			if (m->cert != NULL)
				creq.certificate = bin(m->cert, strlen(m->cert) + 1);
		}
		env.body_case = SLUICE__ENVELOPE__BODY_CTL_REQUEST;
		env.ctl_request = &creq;
		break;
	case LB_MSG_CTL_REPLY:
		crep.ok = m->flag;
		crep.error = (char *)m->text;
		crep.version = m->version;
		crep.text = m->body != NULL ? m->body : (char *)"";
		crep.json = m->json != NULL ? m->json : (char *)"";
		env.body_case = SLUICE__ENVELOPE__BODY_CTL_REPLY;
		env.ctl_reply = &crep;
		break;
	default:
		return -LB_EINVAL;
	}
	if (e.err == 0) {
		*len = sluice__envelope__get_packed_size(&env);
		*buf = malloc(*len ? *len : 1);
		if (*buf == NULL)
			e.err = -LB_ENOMEM;
		else
			sluice__envelope__pack(&env, *buf);
	}
	rc = e.err;
	for (i = 0; svcs != NULL && i < n_svcs; i++)
		free_service(svcs[i]);
	for (i = 0; keys != NULL && i < m->delta.n_remove; i++)
		free(keys[i]);
	free(svcs);
	free(keys);
	free(opts);
	free(ce);
	free(cep);
	free(ckey);
	return rc;
}

/* ---- decoding ---- */

static int
fail(char *errbuf, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, len, fmt, ap);
	va_end(ap);
	return rc;
}

static int
dec_addr(
	const ProtobufCBinaryData *b, struct lb_addr *a, const char *what, char *errbuf, size_t len)
{
	if (b->len == 16)
		return fail(errbuf, len, -LB_EUNSUPPORTED, "%s: IPv6 is not forwarded yet", what);
	if (b->len != 4)
		return fail(errbuf, len, -LB_EPARSE, "%s: %zu address bytes", what, b->len);
	memset(a, 0, sizeof(*a));
	memcpy(&a->a32[0], b->data, 4);
	return 0;
}

static int
dec_key(const Sluice__ServiceKey *k, struct lb_addr *vip, uint8_t *proto, uint16_t *port,
	char *errbuf, size_t len)
{
	int rc;

	if (k == NULL)
		return fail(errbuf, len, -LB_EPARSE, "service without a key");
	rc = dec_addr(&k->vip, vip, "vip", errbuf, len);
	if (rc != 0)
		return rc;
	if (k->protocol != LB_IPPROTO_TCP && k->protocol != LB_IPPROTO_UDP)
		return fail(
			errbuf, len, -LB_EPARSE, "protocol %u is neither TCP nor UDP", k->protocol);
	if (k->port < 1 || k->port > 65535)
		return fail(errbuf, len, -LB_EPARSE, "port %u out of range", k->port);
	*proto = (uint8_t)k->protocol;
	*port = (uint16_t)k->port;
	return 0;
}

static int
dec_service(const Sluice__Service *s, struct lb_service_cfg *sc, char *errbuf, size_t len)
{
	size_t i;
	int rc;

	if (s == NULL)
		return fail(errbuf, len, -LB_EPARSE, "empty service");
	rc = dec_key(s->key, &sc->vip, &sc->proto, &sc->port, errbuf, len);
	if (rc != 0)
		return rc;
	sc->af = LB_AF_INET;
	sc->id = s->id;
	if (s->n_backends > LB_MAGLEV_MAX_BACKENDS)
		return fail(errbuf, len, -LB_EPARSE, "%zu backends in one service", s->n_backends);
	sc->backends = calloc(s->n_backends ? s->n_backends : 1, sizeof(*sc->backends));
	if (sc->backends == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < s->n_backends; i++) {
		const Sluice__Backend *b = s->backends[i];
		struct lb_backend_cfg *bc = &sc->backends[i];

		if ((rc = dec_addr(&b->dip, &bc->dip, "dip", errbuf, len)) != 0 ||
			(rc = dec_addr(&b->host, &bc->host, "host", errbuf, len)) != 0)
			return rc;
		if (b->port < 1 || b->port > 65535 || b->weight > LB_MAGLEV_MAX_WEIGHT ||
			(unsigned)b->state > LB_BACKEND_MAINT)
			return fail(errbuf, len, -LB_EPARSE,
				"backend %zu: port %u, weight %u or state %d out of range", i,
				b->port, b->weight, (int)b->state);
		bc->port = (uint16_t)b->port;
		bc->weight = b->weight;
		bc->state = (uint8_t)b->state;
		bc->id = b->id;
		sc->n_backends = (uint32_t)i + 1;
	}
	return 0;
}

static int
dec_options(const Sluice__FlowTableOptions *o, struct lb_hash_seed *seed, uint32_t *msize,
	char *errbuf, size_t len)
{
	size_t i;

	if (o->hash_seed.len != 16)
		return fail(errbuf, len, -LB_EPARSE, "hash seed of %zu bytes", o->hash_seed.len);
	if (!lb_is_prime(o->maglev_size) || o->maglev_size < LB_MAGLEV_MIN_SIZE ||
		o->maglev_size > LB_MAGLEV_MAX_SIZE)
		return fail(errbuf, len, -LB_EPARSE, "maglev size %u", o->maglev_size);
	seed->k0 = seed->k1 = 0;
	for (i = 0; i < 8; i++) {
		seed->k0 = seed->k0 << 8 | o->hash_seed.data[i];
		seed->k1 = seed->k1 << 8 | o->hash_seed.data[8 + i];
	}
	*msize = o->maglev_size;
	return 0;
}

static int
dec_digest(const ProtobufCBinaryData *b, uint8_t *out, char *errbuf, size_t len)
{
	if (b->len != LB_DIGEST_LEN)
		return fail(errbuf, len, -LB_EPARSE, "digest of %zu bytes", b->len);
	memcpy(out, b->data, LB_DIGEST_LEN);
	return 0;
}

static void
copy_text(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* Lengths and the probe type only: the values are the manager's to judge. */
static int
dec_pool(const Sluice__PoolOptions *p, struct lb_pool_opts *o, char *errbuf, size_t len)
{
	if (p->given == 0 || (p->given & ~LB_POOL_ALL) != 0)
		return fail(errbuf, len, -LB_EPARSE, "pool: given fields 0x%x (known: 0x%x)",
			p->given, LB_POOL_ALL);
	if ((p->given & LB_POOL_PROBE) && (p->probe < (Sluice__ProbeType)LB_PROBE_NONE ||
						  p->probe > (Sluice__ProbeType)LB_PROBE_HTTP))
		return fail(errbuf, len, -LB_EPARSE, "pool: probe type %d", (int)p->probe);
	if (p->probe_port > 65535)
		return fail(errbuf, len, -LB_EPARSE, "pool: probe port %u", p->probe_port);
	/* A cut string would be a different path: refuse it whole. */
	if (p->path != NULL && strlen(p->path) >= LB_POOL_PATH_LEN)
		return fail(errbuf, len, -LB_EPARSE, "pool: path longer than %d bytes",
			LB_POOL_PATH_LEN - 1);
	if (p->codes != NULL && strlen(p->codes) >= LB_POOL_CODES_LEN)
		return fail(errbuf, len, -LB_EPARSE, "pool: codes longer than %d bytes",
			LB_POOL_CODES_LEN - 1);
	o->given = p->given;
	o->probe = (uint8_t)p->probe;
	o->probe_port = (uint16_t)p->probe_port;
	copy_text(o->path, sizeof(o->path), p->path);
	copy_text(o->codes, sizeof(o->codes), p->codes);
	o->interval_s = p->interval_s;
	o->timeout_s = p->timeout_s;
	o->healthy = p->healthy;
	o->unhealthy = p->unhealthy;
	o->drain_delay_s = p->drain_delay_s;
	o->slow_start_s = p->slow_start_s;
	o->min_healthy = p->min_healthy;
	o->min_healthy_pct = p->min_healthy_percent;
	return 0;
}

/*
 * A proof (of a hello or a ctl request, named what): all three fields or
 * none; the certificate is text ending in its NUL, copied to *cert.
 */
static int
dec_proof(const char *what, const ProtobufCBinaryData *nonce, const ProtobufCBinaryData *proof,
	const ProtobufCBinaryData *crt, struct lb_msg *m, char **cert, char *errbuf, size_t len)
{
	if (nonce->len == 0 && proof->len == 0 && crt->len == 0)
		return 0;
	if (nonce->len != LB_NONCE_LEN)
		return fail(errbuf, len, -LB_EPARSE, "%s: nonce of %zu bytes", what, nonce->len);
	if (proof->len == 0 || proof->len > LB_PROOF_MAX)
		return fail(errbuf, len, -LB_EPARSE, "%s: proof of %zu bytes", what, proof->len);
	if (crt->len < 2 || crt->len > LB_PROOF_CERT_MAX || crt->data[crt->len - 1] != '\0' ||
		memchr(crt->data, '\0', crt->len - 1) != NULL)
		return fail(errbuf, len, -LB_EPARSE, "%s: certificate of %zu bytes, not PEM text",
			what, crt->len);
	memcpy(m->nonce, nonce->data, LB_NONCE_LEN);
	memcpy(m->proof, proof->data, proof->len);
	m->proof_len = (uint16_t)proof->len;
	*cert = strdup((const char *)crt->data);
	return *cert == NULL ? -LB_ENOMEM : 0;
}

static int
dec_ctl_request(const Sluice__CtlRequest *r, struct lb_msg *m, char *errbuf, size_t len)
{
	struct lb_ctl *c = &m->ctl;
	int rc;

	m->type = LB_MSG_CTL_REQUEST;
	if (r->op < (Sluice__CtlOp)LB_CTL_STATUS || r->op > (Sluice__CtlOp)LB_CTL_OP_MAX)
		return fail(errbuf, len, -LB_EPARSE, "unknown operator request %d", (int)r->op);
	c->op = (enum lb_ctl_op)r->op;
	if (r->service != NULL) {
		struct lb_addr vip;
		uint16_t port;
		uint8_t proto;

		rc = dec_key(r->service, &vip, &proto, &port, errbuf, len);
		if (rc != 0)
			return rc;
		lb_svc_key_v4(&c->svc, vip.a32[0], lb_cpu_to_be16(port), proto);
		c->has_svc = true;
	}
	if (r->backend != NULL) {
		const Sluice__Backend *b = r->backend;
		struct lb_backend_cfg *bc = &c->be;

		if ((rc = dec_addr(&b->dip, &bc->dip, "dip", errbuf, len)) != 0 ||
			(b->host.len != 0 &&
				(rc = dec_addr(&b->host, &bc->host, "host", errbuf, len)) != 0))
			return rc;
		/* Ranges are the manager's to judge: it names the field. */
		if (b->port > 65535 || (unsigned)b->state > LB_BACKEND_MAINT)
			return fail(errbuf, len, -LB_EPARSE, "backend: port %u or state %d",
				b->port, (int)b->state);
		bc->port = (uint16_t)b->port;
		bc->weight = b->weight;
		bc->state = (uint8_t)b->state;
		bc->id = b->id;
		c->has_be = true;
	}
	c->set_weight = r->set_weight;
	c->set_state = r->set_state;
	c->set_host = r->set_host;
	c->limit = r->limit;
	if (r->pool != NULL && (rc = dec_pool(r->pool, &c->pool, errbuf, len)) != 0)
		return rc;
	m->version = r->version;
	if (r->config != NULL && r->config[0] != '\0') {
		m->body = strdup(r->config);
		if (m->body == NULL)
			return -LB_ENOMEM;
	}
	copy_text(m->id, sizeof(m->id), r->operator_name);
	return dec_proof("operator request", &r->nonce, &r->proof, &r->certificate, m, &m->cert,
		errbuf, len);
}

static int
dec_body(const Sluice__Envelope *env, struct lb_msg *m, char *errbuf, size_t len)
{
	size_t i;
	int rc;

	switch (env->body_case) {
	case SLUICE__ENVELOPE__BODY_HELLO:
		m->type = LB_MSG_HELLO;
		copy_text(m->id, sizeof(m->id), env->hello->id);
		m->role = (enum lb_role)env->hello->role;
		if (m->role < LB_ROLE_MUX || m->role > LB_ROLE_CTL)
			return fail(errbuf, len, -LB_EPARSE, "hello: unknown role %d", m->role);
		m->version = env->hello->applied_version;
		if (env->hello->probe_address.len != 0 &&
			(rc = dec_addr(&env->hello->probe_address, &m->probe_addr, "probe_address",
				 errbuf, len)) != 0)
			return rc;
		if ((rc = dec_proof("hello", &env->hello->nonce, &env->hello->proof,
			     &env->hello->certificate, m, &m->body, errbuf, len)) != 0)
			return rc;
		return env->hello->applied_digest.len == 0
			       ? 0
			       : dec_digest(&env->hello->applied_digest, m->digest, errbuf, len);
	case SLUICE__ENVELOPE__BODY_CHALLENGE:
		m->type = LB_MSG_CHALLENGE;
		if (env->challenge->nonce.len != LB_NONCE_LEN)
			return fail(errbuf, len, -LB_EPARSE, "challenge: nonce of %zu bytes",
				env->challenge->nonce.len);
		memcpy(m->nonce, env->challenge->nonce.data, LB_NONCE_LEN);
		return 0;
	case SLUICE__ENVELOPE__BODY_WELCOME:
		m->type = LB_MSG_WELCOME;
		m->version = env->welcome->current_version;
		m->flag = env->welcome->resync;
		return 0;
	case SLUICE__ENVELOPE__BODY_PREPARE: {
		const Sluice__Delta *d = env->prepare->delta;

		m->type = LB_MSG_PREPARE;
		m->version = env->prepare->version;
		m->base_version = env->prepare->base_version;
		if (m->version != m->base_version + 1)
			return fail(errbuf, len, -LB_EPARSE, "prepare %llu on base %llu",
				(unsigned long long)m->version,
				(unsigned long long)m->base_version);
		rc = dec_digest(&env->prepare->digest, m->digest, errbuf, len);
		if (rc != 0 || d == NULL)
			return rc != 0 ? rc
				       : fail(errbuf, len, -LB_EPARSE, "prepare without delta");
		m->delta.upsert = calloc(d->n_upsert ? d->n_upsert : 1, sizeof(*m->delta.upsert));
		m->delta.remove = calloc(d->n_remove ? d->n_remove : 1, sizeof(*m->delta.remove));
		if (m->delta.upsert == NULL || m->delta.remove == NULL)
			return -LB_ENOMEM;
		for (i = 0; i < d->n_upsert; i++) {
			m->delta.n_upsert = (uint32_t)i + 1;
			rc = dec_service(d->upsert[i], &m->delta.upsert[i], errbuf, len);
			if (rc != 0)
				return rc;
		}
		for (i = 0; i < d->n_remove; i++) {
			struct lb_svc_key *k = &m->delta.remove[i];
			struct lb_addr vip;
			uint16_t port;
			uint8_t proto;

			rc = dec_key(d->remove[i], &vip, &proto, &port, errbuf, len);
			if (rc != 0)
				return rc;
			lb_svc_key_v4(k, vip.a32[0], lb_cpu_to_be16(port), proto);
			m->delta.n_remove = (uint32_t)i + 1;
		}
		if (d->options != NULL) {
			m->delta.has_options = true;
			return dec_options(
				d->options, &m->delta.seed, &m->delta.maglev_size, errbuf, len);
		}
		return 0;
	}
	case SLUICE__ENVELOPE__BODY_VOTE:
		m->type = LB_MSG_VOTE;
		m->version = env->vote->version;
		m->flag = env->vote->yes;
		copy_text(m->text, sizeof(m->text), env->vote->reason);
		return dec_digest(&env->vote->digest, m->digest, errbuf, len);
	case SLUICE__ENVELOPE__BODY_COMMIT:
		m->type = LB_MSG_COMMIT;
		m->version = env->commit->version;
		return dec_digest(&env->commit->digest, m->digest, errbuf, len);
	case SLUICE__ENVELOPE__BODY_ABORT:
		m->type = LB_MSG_ABORT;
		m->version = env->abort->version;
		copy_text(m->text, sizeof(m->text), env->abort->reason);
		return dec_digest(&env->abort->digest, m->digest, errbuf, len);
	case SLUICE__ENVELOPE__BODY_SNAPSHOT_REQUEST:
		m->type = LB_MSG_SNAPSHOT_REQUEST;
		m->version = env->snapshot_request->have_version;
		return 0;
	case SLUICE__ENVELOPE__BODY_SNAPSHOT_CHUNK: {
		const Sluice__SnapshotChunk *c = env->snapshot_chunk;

		m->type = LB_MSG_SNAPSHOT_CHUNK;
		m->version = c->version;
		m->index = c->index;
		m->count = c->count;
		if (c->count == 0 || c->index >= c->count)
			return fail(errbuf, len, -LB_EPARSE, "chunk %u of %u", c->index, c->count);
		rc = dec_digest(&c->digest, m->digest, errbuf, len);
		if (rc != 0)
			return rc;
		if (c->index == 0) {
			if (c->options == NULL)
				return fail(errbuf, len, -LB_EPARSE, "first chunk without options");
			rc = dec_options(
				c->options, &m->table.seed, &m->table.maglev_size, errbuf, len);
			if (rc != 0)
				return rc;
		}
		m->table.services =
			calloc(c->n_services ? c->n_services : 1, sizeof(*m->table.services));
		if (m->table.services == NULL)
			return -LB_ENOMEM;
		for (i = 0; i < c->n_services; i++) {
			m->table.n_services = (uint32_t)i + 1;
			rc = dec_service(c->services[i], &m->table.services[i], errbuf, len);
			if (rc != 0)
				return rc;
		}
		return 0;
	}
	case SLUICE__ENVELOPE__BODY_STATUS:
		m->type = LB_MSG_STATUS;
		m->version = env->status->applied_version;
		for (i = 0; i < env->status->n_counters && i < LB_MSG_MAX_COUNTERS; i++) {
			copy_text(m->counters[i].name, sizeof(m->counters[i].name),
				env->status->counters[i]->key);
			m->counters[i].value = env->status->counters[i]->value;
			m->n_counters = (uint32_t)i + 1;
		}
		return 0;
	case SLUICE__ENVELOPE__BODY_REFUSED:
		m->type = LB_MSG_REFUSED;
		copy_text(m->text, sizeof(m->text), env->refused->reason);
		return 0;
	case SLUICE__ENVELOPE__BODY_CTL_REQUEST:
		return dec_ctl_request(env->ctl_request, m, errbuf, len);
	case SLUICE__ENVELOPE__BODY_CTL_REPLY:
		m->type = LB_MSG_CTL_REPLY;
		m->flag = env->ctl_reply->ok;
		m->version = env->ctl_reply->version;
		copy_text(m->text, sizeof(m->text), env->ctl_reply->error);
		m->body = strdup(env->ctl_reply->text ? env->ctl_reply->text : "");
		m->json = strdup(env->ctl_reply->json ? env->ctl_reply->json : "");
		return m->body == NULL || m->json == NULL ? -LB_ENOMEM : 0;
	default:
		return fail(errbuf, len, -LB_EPARSE, "message without a body");
	}
}

static void
msg_clear(struct lb_msg *m)
{
	uint32_t i;

	for (i = 0; i < m->delta.n_upsert; i++)
		free(m->delta.upsert[i].backends);
	free(m->delta.upsert);
	free(m->delta.remove);
	lb_ftable_free(&m->table);
	free(m->body);
	free(m->json);
	free(m->cert);
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
		return fail(errbuf, errlen, -LB_EPARSE, "message of %zu bytes (limit %u)", len,
			LB_MSG_MAX_BYTES);
	env = sluice__envelope__unpack(NULL, len, buf);
	if (env == NULL)
		return fail(errbuf, errlen, -LB_EPARSE, "not a Sluice message (%zu bytes)", len);
	proto = env->protocol;
	if (proto != LB_PROTOCOL) {
		sluice__envelope__free_unpacked(env, NULL);
		m->protocol = proto;
		return fail(errbuf, errlen, -LB_EPROTOCOL,
			"peer speaks protocol %u, this build speaks %u", proto, LB_PROTOCOL);
	}
	copy_text(m->sender, sizeof(m->sender), env->sender);
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
