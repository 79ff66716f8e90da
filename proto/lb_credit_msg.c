/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The credit channel's codec (lb_credit_msg.h): the only code that sees
 * the generated CreditGrant and CreditReport types.
 */
#include "lb_codec_int.h"
#include "lb_credit_msg.h"

/*
 * The fields of one entry, named alike in struct lb_credit (lb_credit_use)
 * and the .proto's Credit (CreditUse): one list for both directions, so
 * that a field added to one is copied both ways.
 */
#define CREDIT_FIELDS(X) X(backend) X(grant) X(count) X(revoke_below) X(granted) X(renew)
#define USE_FIELDS(X)                                                                              \
	X(backend) X(received) X(used) X(expired) X(revoked) X(denied) X(live) X(granted)

int
lb_credit_grant_encode(const struct lb_credit_grant *g, uint8_t **buf, size_t *len)
{
	Sluice__CreditGrant m = SLUICE__CREDIT_GRANT__INIT;
	Sluice__Credit c[LB_CREDIT_MAX], *cp[LB_CREDIT_MAX];
	uint32_t i;

	m.protocol = LB_CREDIT_PROTOCOL;
	m.agent = (char *)g->agent;
	m.incarnation = g->incarnation;
	m.ttl_ms = g->ttl_ms;
	for (i = 0; i < g->n && i < LB_CREDIT_MAX; i++) {
		sluice__credit__init(&c[i]);
#define X(f) c[i].f = g->c[i].f;
		CREDIT_FIELDS(X)
#undef X
		cp[i] = &c[i];
	}
	m.n_credits = i;
	m.credits = cp;
	return lb_enc_pack(&m.base, buf, len);
}

int
lb_credit_report_encode(const struct lb_credit_report *r, uint8_t **buf, size_t *len)
{
	Sluice__CreditReport m = SLUICE__CREDIT_REPORT__INIT;
	Sluice__CreditUse u[LB_CREDIT_MAX], *up[LB_CREDIT_MAX];
	uint32_t i;

	m.protocol = LB_CREDIT_PROTOCOL;
	m.mux = (char *)r->mux;
	m.incarnation = r->incarnation;
	m.agent_incarnation = r->agent_incarnation;
	m.refused = (char *)r->refused;
	for (i = 0; i < r->n && i < LB_CREDIT_MAX; i++) {
		sluice__credit_use__init(&u[i]);
#define X(f) u[i].f = r->u[i].f;
		USE_FIELDS(X)
#undef X
		up[i] = &u[i];
	}
	m.n_uses = i;
	m.uses = up;
	return lb_enc_pack(&m.base, buf, len);
}

/* The checks both directions share: protocol, sender id, entry count. */
static int
check_head(uint32_t protocol, const char *id, size_t n, const char *what, char *err, size_t elen)
{
	if (protocol != LB_CREDIT_PROTOCOL)
		return lb_fail(err, elen, -LB_EPROTOCOL,
			"%s speaks credit protocol %u, this build speaks %u", what, protocol,
			LB_CREDIT_PROTOCOL);
	if (id == NULL || id[0] == 0 || strlen(id) >= LB_MSG_ID)
		return lb_fail(err, elen, -LB_EPARSE, "%s without a valid id", what);
	if (n > LB_CREDIT_MAX)
		return lb_fail(err, elen, -LB_EPARSE, "%s with %zu backends (at most %u)", what, n,
			LB_CREDIT_MAX);
	return 0;
}

/*
 * Each backend once: a second entry would count its credits twice. Entry i
 * names backend; ids holds the entries before it and takes this one.
 */
static int
check_once(uint32_t backend, uint32_t *ids, size_t i, const char *twice, char *err, size_t elen)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (ids[j] == backend)
			return lb_fail(
				err, elen, -LB_EPARSE, "backend %u %s twice", backend, twice);
	ids[i] = backend;
	return 0;
}

/* A decoded message's checks and copy into out: 0, or why not in err. */
typedef int (*copy_fn)(const ProtobufCMessage *m, void *out, char *err, size_t elen);

/*
 * What both directions do around their own checks: unpack the bytes as a
 * message of descriptor d (a credit what), copy it into out, and leave
 * out zeroed unless every check passed.
 */
static int
decode(const ProtobufCMessageDescriptor *d, const char *what, copy_fn copy, const uint8_t *buf,
	size_t len, void *out, size_t size, char *err, size_t elen)
{
	ProtobufCMessage *m;
	int rc;

	memset(out, 0, size);
	if ((m = protobuf_c_message_unpack(d, NULL, len, buf)) == NULL)
		return lb_fail(err, elen, -LB_EPARSE, "not a credit %s (%zu bytes)", what, len);
	rc = copy(m, out, err, elen);
	if (rc != 0)
		memset(out, 0, size);
	protobuf_c_message_free_unpacked(m, NULL);
	return rc;
}

static int
copy_grant(const ProtobufCMessage *pm, void *out, char *err, size_t elen)
{
	const Sluice__CreditGrant *m = (const Sluice__CreditGrant *)pm;
	struct lb_credit_grant *g = out;
	uint32_t ids[LB_CREDIT_MAX];
	size_t i;
	int rc;

	if ((rc = check_head(m->protocol, m->agent, m->n_credits, "a grant", err, elen)) != 0)
		return rc;
	if (m->ttl_ms < LB_CREDIT_TTL_MIN || m->ttl_ms > LB_CREDIT_TTL_MAX)
		return lb_fail(err, elen, -LB_EPARSE, "a grant's ttl of %u ms (%u..%u)", m->ttl_ms,
			LB_CREDIT_TTL_MIN, LB_CREDIT_TTL_MAX);
	for (i = 0; i < m->n_credits; i++) {
		const Sluice__Credit *c = m->credits[i];

		if ((rc = check_once(c->backend, ids, i, "granted", err, elen)) != 0)
			return rc;
		if (c->count > LB_MAX_CONNS_CAP || (c->grant == 0) != (c->count == 0))
			return lb_fail(err, elen, -LB_EPARSE,
				"backend %u: a grant of %u credits named %llu", c->backend,
				c->count, (unsigned long long)c->grant);
#define X(f) g->c[i].f = c->f;
		CREDIT_FIELDS(X)
#undef X
	}
	lb_dec_text(g->agent, sizeof(g->agent), m->agent);
	g->incarnation = m->incarnation;
	g->ttl_ms = m->ttl_ms;
	g->n = (uint32_t)m->n_credits;
	return 0;
}

static int
copy_report(const ProtobufCMessage *pm, void *out, char *err, size_t elen)
{
	const Sluice__CreditReport *m = (const Sluice__CreditReport *)pm;
	struct lb_credit_report *r = out;
	uint32_t ids[LB_CREDIT_MAX];
	size_t i;
	int rc;

	if ((rc = check_head(m->protocol, m->mux, m->n_uses, "a report", err, elen)) != 0)
		return rc;
	for (i = 0; i < m->n_uses; i++) {
		const Sluice__CreditUse *u = m->uses[i];

		if ((rc = check_once(u->backend, ids, i, "reported", err, elen)) != 0)
			return rc;
		/*
		 * What was spent, expired or taken back was received first (no
		 * sum: it could wrap).
		 */
		if (u->used > u->received || u->expired > u->received - u->used ||
			u->revoked > u->received - u->used - u->expired)
			return lb_fail(err, elen, -LB_EPARSE,
				"backend %u: %llu credits spent or dropped of %llu received",
				u->backend, (unsigned long long)u->used + u->expired + u->revoked,
				(unsigned long long)u->received);
#define X(f) r->u[i].f = u->f;
		USE_FIELDS(X)
#undef X
	}
	lb_dec_text(r->mux, sizeof(r->mux), m->mux);
	lb_dec_text(r->refused, sizeof(r->refused), m->refused);
	r->incarnation = m->incarnation;
	r->agent_incarnation = m->agent_incarnation;
	r->n = (uint32_t)m->n_uses;
	return 0;
}

int
lb_credit_grant_decode(
	const uint8_t *buf, size_t len, struct lb_credit_grant *g, char *err, size_t elen)
{
	return decode(&sluice__credit_grant__descriptor, "grant", copy_grant, buf, len, g,
		sizeof(*g), err, elen);
}

int
lb_credit_report_decode(
	const uint8_t *buf, size_t len, struct lb_credit_report *r, char *err, size_t elen)
{
	return decode(&sluice__credit_report__descriptor, "report", copy_report, buf, len, r,
		sizeof(*r), err, elen);
}
