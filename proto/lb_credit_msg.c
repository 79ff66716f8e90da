/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The credit channel's codec (lb_credit_msg.h): the only code that sees
 * the generated CreditGrant and CreditReport types.
 */
#include "lb_codec_int.h"
#include "lb_credit_msg.h"

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
		c[i].backend = g->c[i].backend;
		c[i].grant = g->c[i].grant;
		c[i].count = g->c[i].count;
		c[i].revoke_below = g->c[i].revoke_below;
		c[i].granted = g->c[i].granted;
		c[i].renew = g->c[i].renew;
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
		u[i].backend = r->u[i].backend;
		u[i].received = r->u[i].received;
		u[i].used = r->u[i].used;
		u[i].expired = r->u[i].expired;
		u[i].revoked = r->u[i].revoked;
		u[i].denied = r->u[i].denied;
		u[i].live = r->u[i].live;
		u[i].granted = r->u[i].granted;
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

/* Each backend once: a second entry would count its credits twice. */
static bool
listed_before(uint32_t id, const uint32_t *ids, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

int
lb_credit_grant_decode(
	const uint8_t *buf, size_t len, struct lb_credit_grant *g, char *err, size_t elen)
{
	Sluice__CreditGrant *m;
	uint32_t ids[LB_CREDIT_MAX];
	size_t i;
	int rc;

	memset(g, 0, sizeof(*g));
	if ((m = sluice__credit_grant__unpack(NULL, len, buf)) == NULL)
		return lb_fail(err, elen, -LB_EPARSE, "not a credit grant (%zu bytes)", len);
	rc = check_head(m->protocol, m->agent, m->n_credits, "a grant", err, elen);
	if (rc == 0 && (m->ttl_ms < LB_CREDIT_TTL_MIN || m->ttl_ms > LB_CREDIT_TTL_MAX))
		rc = lb_fail(err, elen, -LB_EPARSE, "a grant's ttl of %u ms (%u..%u)", m->ttl_ms,
			LB_CREDIT_TTL_MIN, LB_CREDIT_TTL_MAX);
	for (i = 0; rc == 0 && i < m->n_credits; i++) {
		const Sluice__Credit *c = m->credits[i];

		if (listed_before(c->backend, ids, (uint32_t)i))
			rc = lb_fail(err, elen, -LB_EPARSE, "backend %u granted twice", c->backend);
		else if (c->count > LB_MAX_CONNS_CAP || (c->grant == 0) != (c->count == 0))
			rc = lb_fail(err, elen, -LB_EPARSE,
				"backend %u: a grant of %u credits named %llu", c->backend,
				c->count, (unsigned long long)c->grant);
		ids[i] = c->backend;
		g->c[i] = (struct lb_credit){
			c->backend, c->grant, c->count, c->revoke_below, c->granted, c->renew};
	}
	if (rc == 0) {
		lb_dec_text(g->agent, sizeof(g->agent), m->agent);
		g->incarnation = m->incarnation;
		g->ttl_ms = m->ttl_ms;
		g->n = (uint32_t)m->n_credits;
	} else {
		memset(g, 0, sizeof(*g));
	}
	sluice__credit_grant__free_unpacked(m, NULL);
	return rc;
}

int
lb_credit_report_decode(
	const uint8_t *buf, size_t len, struct lb_credit_report *r, char *err, size_t elen)
{
	Sluice__CreditReport *m;
	uint32_t ids[LB_CREDIT_MAX];
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((m = sluice__credit_report__unpack(NULL, len, buf)) == NULL)
		return lb_fail(err, elen, -LB_EPARSE, "not a credit report (%zu bytes)", len);
	rc = check_head(m->protocol, m->mux, m->n_uses, "a report", err, elen);
	for (i = 0; rc == 0 && i < m->n_uses; i++) {
		const Sluice__CreditUse *u = m->uses[i];

		if (listed_before(u->backend, ids, (uint32_t)i))
			rc = lb_fail(
				err, elen, -LB_EPARSE, "backend %u reported twice", u->backend);
		/* What was spent, expired or taken back was received first (no sum: it could wrap).
		 */
		else if (u->used > u->received || u->expired > u->received - u->used ||
			 u->revoked > u->received - u->used - u->expired)
			rc = lb_fail(err, elen, -LB_EPARSE,
				"backend %u: %llu credits spent or dropped of %llu received",
				u->backend, (unsigned long long)u->used + u->expired + u->revoked,
				(unsigned long long)u->received);
		ids[i] = u->backend;
		r->u[i] = (struct lb_credit_use){u->backend, u->received, u->used, u->expired,
			u->revoked, u->denied, u->live, u->granted};
	}
	if (rc == 0) {
		lb_dec_text(r->mux, sizeof(r->mux), m->mux);
		lb_dec_text(r->refused, sizeof(r->refused), m->refused);
		r->incarnation = m->incarnation;
		r->agent_incarnation = m->agent_incarnation;
		r->n = (uint32_t)m->n_uses;
	} else {
		memset(r, 0, sizeof(*r));
	}
	sluice__credit_report__free_unpacked(m, NULL);
	return rc;
}
