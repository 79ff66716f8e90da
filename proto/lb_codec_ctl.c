/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operator API on the wire: CTL_REQUEST (the service, the backend, the
 * pool options, an operator's proof of its name) and CTL_REPLY (the answer
 * for people and for programs, and WAIT's answer as typed fields). Values
 * are the manager's to judge: the codec checks only what it must to copy
 * them (lengths, enums, ports).
 */
#include <stdlib.h>
#include <string.h>

#include "lb_codec_int.h"
#include "lb_err.h"
#include "lb_hdr.h"

static void
enc_pool(Sluice__PoolOptions *p, const struct lb_pool_opts *o)
{
	p->given = o->given;
	p->probe = (Sluice__ProbeType)o->probe;
	p->probe_port = o->probe_port;
	p->path = (char *)o->path;
	p->codes = (char *)o->codes;
#define X(c, bit, pb, name) p->pb = o->c;
	LB_POOL_NUMBERS(X)
#undef X
}

int
lb_enc_ctl_request(struct lb_enc *e, const struct lb_msg *m)
{
	Sluice__CtlRequest *r = &e->creq;
	const struct lb_ctl *c = &m->ctl;

	if (c->op < LB_CTL_STATUS || c->op > LB_CTL_OP_MAX)
		return -LB_EINVAL;
	r->op = (Sluice__CtlOp)c->op;
	if (c->has_svc)
		r->service = e->ckey = lb_enc_key(
			e, c->svc.af, &c->svc.vip, c->svc.proto, lb_be16_to_cpu(c->svc.port));
	if (c->has_be) {
		e->cbe.id = c->be.id;
		/* be_af unset with a DIP given: IPv4, as host6 unset is. */
		if (c->be_af != LB_AF_NONE || !lb_addr_is_zero(&c->be.dip))
			e->cbe.dip = lb_enc_addr(
				c->be_af == LB_AF_INET6 ? LB_AF_INET6 : LB_AF_INET, &c->be.dip);
		e->cbe.port = c->be.port;
		e->cbe.weight = c->be.weight;
		if (c->be.host6 || !lb_addr_is_zero(&c->be.host))
			e->cbe.host =
				lb_enc_addr(c->be.host6 ? LB_AF_INET6 : LB_AF_INET, &c->be.host);
		e->cbe.state = (Sluice__BackendState)c->be.state;
		e->cbe.max_connections = c->be.max_conns;
		r->backend = &e->cbe;
	}
	r->set_weight = c->set_weight;
	r->set_state = c->set_state;
	r->set_host = c->set_host;
	r->set_max_connections = c->set_max_conns;
	r->config = m->body != NULL ? m->body : (char *)"";
	r->version = m->version;
	r->limit = c->limit;
	if (c->pool.given != 0) {
		enc_pool(&e->cpool, &c->pool);
		r->pool = &e->cpool;
	}
	if (c->lim.given != 0 || c->op == LB_CTL_LIMIT_DEL) {
		e->clim.given = c->lim.given;
		e->clim.mux = c->lim.mux;
		e->clim.rule = c->lim.rule;
		e->clim.limit = c->lim.value.limit;
		e->clim.burst = c->lim.value.burst;
		e->clim.mode = (Sluice__LimitMode)c->lim.value.mode;
		e->clim.prefix = c->lim.prefix;
		e->clim.refuse = (Sluice__RefuseAction)c->lim.refuse;
		r->limit_change = &e->clim;
	}
	r->operator_name = (char *)m->id;
	r->mux = (char *)c->mux;
	lb_enc_proof(m, m->cert, &r->nonce, &r->proof, &r->certificate);
	e->env.body_case = SLUICE__ENVELOPE__BODY_CTL_REQUEST;
	e->env.ctl_request = r;
	return 0;
}

void
lb_enc_ctl_reply(struct lb_enc *e, const struct lb_msg *m)
{
	Sluice__CtlReply *r = &e->crep;

	r->ok = m->flag;
	r->error = (char *)m->text;
	r->version = m->version;
	r->text = m->body != NULL ? m->body : (char *)"";
	r->json = m->json != NULL ? m->json : (char *)"";
	r->wait_state = (Sluice__WaitState)m->wait.state;
	r->committed_as = m->wait.committed_as;
	r->reason = (char *)m->wait.reason;
	r->not_leader = m->not_leader;
	r->leader_url = (char *)m->leader_url;
	e->env.body_case = SLUICE__ENVELOPE__BODY_CTL_REPLY;
	e->env.ctl_reply = r;
}

/* Lengths and the probe type only: the values are the manager's to judge. */
static int
dec_pool(const Sluice__PoolOptions *p, struct lb_pool_opts *o, char *errbuf, size_t len)
{
	if (p->given == 0 || (p->given & ~LB_POOL_ALL) != 0)
		return lb_fail(errbuf, len, -LB_EPARSE, "pool: given fields 0x%x (known: 0x%x)",
			p->given, LB_POOL_ALL);
	if ((p->given & LB_POOL_PROBE) && (p->probe < (Sluice__ProbeType)LB_PROBE_NONE ||
						  p->probe > (Sluice__ProbeType)LB_PROBE_HTTP))
		return lb_fail(errbuf, len, -LB_EPARSE, "pool: probe type %d", (int)p->probe);
	if (p->probe_port > 65535)
		return lb_fail(errbuf, len, -LB_EPARSE, "pool: probe port %u", p->probe_port);
	/* A cut string would be a different path: refuse it whole. */
	if (p->path != NULL && strlen(p->path) >= LB_POOL_PATH_LEN)
		return lb_fail(errbuf, len, -LB_EPARSE, "pool: path longer than %d bytes",
			LB_POOL_PATH_LEN - 1);
	if (p->codes != NULL && strlen(p->codes) >= LB_POOL_CODES_LEN)
		return lb_fail(errbuf, len, -LB_EPARSE, "pool: codes longer than %d bytes",
			LB_POOL_CODES_LEN - 1);
	o->given = p->given;
	o->probe = (uint8_t)p->probe;
	o->probe_port = (uint16_t)p->probe_port;
	lb_dec_text(o->path, sizeof(o->path), p->path);
	lb_dec_text(o->codes, sizeof(o->codes), p->codes);
#define X(c, bit, pb, name) o->c = p->pb;
	LB_POOL_NUMBERS(X)
#undef X
	return 0;
}

int
lb_dec_proof(const char *what, const ProtobufCBinaryData *nonce, const ProtobufCBinaryData *proof,
	const ProtobufCBinaryData *crt, struct lb_msg *m, char **cert, char *errbuf, size_t len)
{
	if (nonce->len == 0 && proof->len == 0 && crt->len == 0)
		return 0;
	if (nonce->len != LB_NONCE_LEN)
		return lb_fail(errbuf, len, -LB_EPARSE, "%s: nonce of %zu bytes", what, nonce->len);
	if (proof->len == 0 || proof->len > LB_PROOF_MAX)
		return lb_fail(errbuf, len, -LB_EPARSE, "%s: proof of %zu bytes", what, proof->len);
	if (crt->len < 2 || crt->len > LB_PROOF_CERT_MAX || crt->data[crt->len - 1] != '\0' ||
		memchr(crt->data, '\0', crt->len - 1) != NULL)
		return lb_fail(errbuf, len, -LB_EPARSE,
			"%s: certificate of %zu bytes, not PEM text", what, crt->len);
	memcpy(m->nonce, nonce->data, LB_NONCE_LEN);
	memcpy(m->proof, proof->data, proof->len);
	m->proof_len = (uint16_t)proof->len;
	*cert = strdup((const char *)crt->data);
	return *cert == NULL ? -LB_ENOMEM : 0;
}

/*
 * The backend of a request, its DIP's family into *daf (LB_AF_NONE when
 * it has none): the manager, which knows the service, judges it.
 */
static int
dec_backend(
	const Sluice__Backend *b, struct lb_backend_cfg *bc, uint8_t *daf, char *errbuf, size_t len)
{
	uint8_t haf = LB_AF_INET;
	int rc;

	*daf = LB_AF_NONE;
	if ((b->dip.len != 0 &&
		    (rc = lb_dec_addr(&b->dip, &bc->dip, daf, "dip", errbuf, len)) != 0) ||
		(b->host.len != 0 &&
			(rc = lb_dec_addr(&b->host, &bc->host, &haf, "host", errbuf, len)) != 0))
		return rc;
	bc->host6 = haf == LB_AF_INET6;
	/* Ranges are the manager's to judge: it names the field. */
	if (b->port > 65535 || (unsigned)b->state > LB_BACKEND_MAINT)
		return lb_fail(errbuf, len, -LB_EPARSE, "backend: port %u or state %d", b->port,
			(int)b->state);
	bc->port = (uint16_t)b->port;
	bc->weight = b->weight;
	bc->state = (uint8_t)b->state;
	bc->id = b->id;
	bc->max_conns = b->max_connections;
	return 0;
}

int
lb_dec_ctl_request(const Sluice__CtlRequest *r, struct lb_msg *m, char *errbuf, size_t len)
{
	struct lb_ctl *c = &m->ctl;
	int rc;

	m->type = LB_MSG_CTL_REQUEST;
	if (r->op < (Sluice__CtlOp)LB_CTL_STATUS || r->op > (Sluice__CtlOp)LB_CTL_OP_MAX)
		return lb_fail(errbuf, len, -LB_EPARSE, "unknown operator request %d", (int)r->op);
	c->op = (enum lb_ctl_op)r->op;
	if (r->service != NULL) {
		/* top VIP asks for every service of the VIP: its key's port is 0 */
		Sluice__ServiceKey k = *r->service;

		if (c->op == LB_CTL_TOP && k.port == 0)
			k.port = 1;
		rc = lb_dec_key(&k, &c->svc, errbuf, len);
		if (rc != 0)
			return rc;
		if (k.port != r->service->port)
			c->svc.port = 0;
		c->has_svc = true;
	}
	if (r->backend != NULL) {
		rc = dec_backend(r->backend, &c->be, &c->be_af, errbuf, len);
		if (rc != 0)
			return rc;
		c->has_be = true;
	}
	c->set_weight = r->set_weight;
	c->set_state = r->set_state;
	c->set_host = r->set_host;
	c->set_max_conns = r->set_max_connections;
	c->limit = r->limit;
	if (r->pool != NULL && (rc = dec_pool(r->pool, &c->pool, errbuf, len)) != 0)
		return rc;
	if (r->limit_change != NULL) {
		const Sluice__LimitChange *l = r->limit_change;

		/* Values are the manager's to judge; enums only must fit. */
		if (l->rule < -1 || l->rule >= LB_LIM_N || (unsigned)l->mode > LB_LIMIT_INTERCEPT ||
			(unsigned)l->refuse > LB_REFUSE_ICMP || l->prefix > 255)
			return lb_fail(errbuf, len, -LB_EPARSE,
				"limit change: rule %d, mode %d, refuse %d or prefix %u", l->rule,
				(int)l->mode, (int)l->refuse, l->prefix);
		c->lim.given = l->given;
		c->lim.mux = l->mux;
		c->lim.rule = (int8_t)l->rule;
		c->lim.value.limit = l->limit;
		c->lim.value.burst = l->burst;
		c->lim.value.mode = (uint8_t)l->mode;
		c->lim.prefix = (uint8_t)l->prefix;
		c->lim.refuse = (uint8_t)l->refuse;
	}
	m->version = r->version;
	if (r->config != NULL && r->config[0] != '\0') {
		m->body = strdup(r->config);
		if (m->body == NULL)
			return -LB_ENOMEM;
	}
	lb_dec_text(m->id, sizeof(m->id), r->operator_name);
	/* A cut id would name another mux. */
	if (r->mux != NULL && strlen(r->mux) >= sizeof(c->mux))
		return lb_fail(errbuf, len, -LB_EPARSE, "mux id longer than %zu bytes",
			sizeof(c->mux) - 1);
	lb_dec_text(c->mux, sizeof(c->mux), r->mux);
	return lb_dec_proof("operator request", &r->nonce, &r->proof, &r->certificate, m, &m->cert,
		errbuf, len);
}

int
lb_dec_ctl_reply(const Sluice__CtlReply *r, struct lb_msg *m, char *errbuf, size_t len)
{
	m->type = LB_MSG_CTL_REPLY;
	m->flag = r->ok;
	m->version = r->version;
	lb_dec_text(m->text, sizeof(m->text), r->error);
	if ((unsigned)r->wait_state > LB_WAIT_ABORTED)
		return lb_fail(
			errbuf, len, -LB_EPARSE, "ctl reply: wait state %d", (int)r->wait_state);
	m->wait.state = (enum lb_wait_state)r->wait_state;
	m->wait.committed_as = r->committed_as;
	lb_dec_text(m->wait.reason, sizeof(m->wait.reason), r->reason);
	m->not_leader = r->not_leader;
	lb_dec_text(m->leader_url, sizeof(m->leader_url), r->leader_url);
	m->body = strdup(r->text ? r->text : "");
	m->json = strdup(r->json ? r->json : "");
	return m->body == NULL || m->json == NULL ? -LB_ENOMEM : 0;
}
