/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow tables on the wire: service keys, services and their backends, the
 * table options, and the two messages that carry them (PREPARE's delta,
 * SNAPSHOT_CHUNK's services). Decoding checks what a peer could get wrong
 * or forge: address lengths, a DIP of its service's family, ports,
 * protocols, weights, states, the seed and the Maglev size. An address's
 * length is its family on the wire: 4 bytes IPv4, 16 IPv6.
 */
#include <stdlib.h>
#include <string.h>

#include "lb_codec_int.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "lb_maglev.h"

/* ---- encoding ---- */

Sluice__ServiceKey *
lb_enc_key(struct lb_enc *e, uint8_t af, const struct lb_addr *vip, uint8_t proto, uint16_t port)
{
	Sluice__ServiceKey *k = lb_enc_alloc(e, 1, sizeof(*k));

	if (k == NULL)
		return NULL;
	sluice__service_key__init(k);
	k->vip = lb_enc_addr(af, vip);
	k->protocol = proto;
	k->port = port;
	return k;
}

static void
enc_rule(Sluice__LimitRule *r, const struct lb_limit_rule *c)
{
	sluice__limit_rule__init(r);
	r->limit = c->limit;
	r->burst = c->burst;
	r->mode = (Sluice__LimitMode)c->mode;
}

/* A service's rules in one block (freed with its first member), or NULL. */
static Sluice__ServiceLimits *
enc_limits(struct lb_enc *e, const struct lb_svc_limits *l)
{
	struct {
		Sluice__ServiceLimits sl;
		Sluice__LimitRule r[LB_LIM_N];
	} * b;
	int k;

	if (!lb_limits_any(l) || (b = lb_enc_alloc(e, 1, sizeof(*b))) == NULL)
		return NULL;
	sluice__service_limits__init(&b->sl);
	for (k = 0; k < LB_LIM_N; k++)
		enc_rule(&b->r[k], &l->rule[k]);
	b->sl.per_source = &b->r[LB_LIM_SOURCE];
	b->sl.new_per_second = &b->r[LB_LIM_RATE];
	b->sl.max_connections = &b->r[LB_LIM_CONNS];
	b->sl.source_prefix = l->source_prefix;
	b->sl.refuse = (Sluice__RefuseAction)l->refuse;
	return &b->sl;
}

static Sluice__Service *
enc_service(struct lb_enc *e, const struct lb_service_cfg *sc)
{
	Sluice__Service *s = lb_enc_alloc(e, 1, sizeof(*s));
	uint32_t i;

	if (s == NULL)
		return NULL;
	sluice__service__init(s);
	s->key = lb_enc_key(e, sc->af, &sc->vip, sc->proto, sc->port);
	s->id = sc->id;
	s->withdrawn = sc->withdrawn != 0;
	s->limits = enc_limits(e, &sc->limits);
	s->affinity = sc->choice.affinity;
	s->on_unusable = sc->choice.on_unusable;
	s->zonal = sc->choice.zonal != 0;
	s->balance = sc->choice.balance;
	s->mitigate = sc->choice.mitigate != 0;
	if (sc->n_wzones != 0) {
		uint32_t z;

		/* Validated tables end each name inside its array: the message only borrows them.
		 */
		s->withdrawn_zones = lb_enc_alloc(e, sc->n_wzones, sizeof(*s->withdrawn_zones));
		for (z = 0; s->withdrawn_zones != NULL && z < sc->n_wzones && z < LB_WZONES; z++)
			if (strnlen(sc->wzones[z], LB_ZONE_LEN) < LB_ZONE_LEN)
				s->withdrawn_zones[s->n_withdrawn_zones++] = (char *)sc->wzones[z];
	}
	s->backends = lb_enc_alloc(e, sc->n_backends, sizeof(*s->backends));
	if (s->key == NULL || s->backends == NULL)
		return s;
	for (i = 0; i < sc->n_backends; i++) {
		const struct lb_backend_cfg *bc = &sc->backends[i];
		Sluice__Backend *b = lb_enc_alloc(e, 1, sizeof(*b));

		if (b == NULL)
			return s;
		sluice__backend__init(b);
		b->id = bc->id;
		b->dip = lb_enc_addr(sc->af, &bc->dip);
		b->port = bc->port;
		b->weight = bc->weight;
		b->host = lb_enc_addr(bc->host6 ? LB_AF_INET6 : LB_AF_INET, &bc->host);
		b->state = (Sluice__BackendState)bc->state;
		/* Validated tables end their zone inside the array; the message only borrows it. */
		if (bc->zone[0] != 0 && strnlen(bc->zone, LB_ZONE_LEN) < LB_ZONE_LEN)
			b->zone = (char *)bc->zone;
		b->max_connections = bc->max_conns;
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
	free(s->withdrawn_zones);
	free(s->key);
	free(s->limits);
	free(s);
}

/*
 * The seed as 16 bytes, big-endian k0 then k1, in e->seed_raw; the mux-wide
 * rule in the same block as the options (freed with them); the drained muxes.
 */
static Sluice__FlowTableOptions *
enc_options(struct lb_enc *e, const struct lb_hash_seed *seed, uint32_t maglev_size,
	const struct lb_limit_rule *mux_rate, const lb_ftable_id *drained, uint32_t n_drained)
{
	struct {
		Sluice__FlowTableOptions o;
		Sluice__LimitRule r;
	} *b = lb_enc_alloc(e, 1, sizeof(*b));
	Sluice__FlowTableOptions *o;
	uint32_t i;

	if (b == NULL)
		return NULL;
	o = &b->o;
	sluice__flow_table_options__init(o);
	if (mux_rate->limit != 0) {
		enc_rule(&b->r, mux_rate);
		o->mux_new_per_second = &b->r;
	}
	for (i = 0; i < 8; i++) {
		e->seed_raw[i] = (uint8_t)(seed->k0 >> (56 - 8 * i));
		e->seed_raw[8 + i] = (uint8_t)(seed->k1 >> (56 - 8 * i));
	}
	o->hash_seed = lb_enc_bin(e->seed_raw, 16);
	o->maglev_size = maglev_size;
	if (n_drained != 0) {
		e->drained = lb_enc_alloc(e, n_drained, sizeof(*e->drained));
		for (i = 0; e->drained != NULL && i < n_drained; i++)
			e->drained[i] = (char *)drained[i];
		o->drained_muxes = e->drained;
		o->n_drained_muxes = e->drained != NULL ? n_drained : 0;
	}
	return o;
}

/* e->svcs for n services of v. */
static void
enc_services(struct lb_enc *e, const struct lb_service_cfg *v, uint32_t n)
{
	uint32_t i;

	e->n_svcs = n;
	e->svcs = lb_enc_alloc(e, n, sizeof(*e->svcs));
	for (i = 0; e->err == 0 && i < n; i++)
		e->svcs[i] = enc_service(e, &v[i]);
}

void
lb_enc_prepare(struct lb_enc *e, const struct lb_msg *m)
{
	uint32_t i;

	e->prepare.version = m->version;
	e->prepare.base_version = m->base_version;
	e->prepare.term = m->term;
	e->prepare.digest = lb_enc_bin(m->digest, LB_DIGEST_LEN);
	enc_services(e, m->delta.upsert, m->delta.n_upsert);
	e->keys = lb_enc_alloc(e, m->delta.n_remove, sizeof(*e->keys));
	for (i = 0; e->err == 0 && i < m->delta.n_remove; i++) {
		const struct lb_svc_key *k = &m->delta.remove[i];

		e->keys[i] = lb_enc_key(e, k->af, &k->vip, k->proto, lb_be16_to_cpu(k->port));
		e->n_keys = e->delta.n_remove = i + 1;
	}
	e->delta.upsert = e->svcs;
	e->delta.n_upsert = e->n_svcs;
	e->delta.remove = e->keys;
	if (m->delta.has_options)
		e->delta.options = e->opts = enc_options(e, &m->delta.seed, m->delta.maglev_size,
			&m->delta.mux_rate, m->delta.drained, m->delta.n_drained);
	e->prepare.delta = &e->delta;
	e->env.body_case = SLUICE__ENVELOPE__BODY_PREPARE;
	e->env.prepare = &e->prepare;
}

void
lb_enc_chunk(struct lb_enc *e, const struct lb_msg *m)
{
	e->chunk.version = m->version;
	e->chunk.digest = lb_enc_bin(m->digest, LB_DIGEST_LEN);
	e->chunk.index = m->index;
	e->chunk.count = m->count;
	e->chunk.term = m->term;
	enc_services(e, m->table.services, m->table.n_services);
	e->chunk.services = e->svcs;
	e->chunk.n_services = e->n_svcs;
	if (m->index == 0)
		e->chunk.options = e->opts = enc_options(e, &m->table.seed, m->table.maglev_size,
			&m->table.mux_rate, m->table.drained, m->table.n_drained);
	e->env.body_case = SLUICE__ENVELOPE__BODY_SNAPSHOT_CHUNK;
	e->env.snapshot_chunk = &e->chunk;
}

void
lb_enc_table_free(struct lb_enc *e)
{
	size_t i;

	for (i = 0; e->svcs != NULL && i < e->n_svcs; i++)
		free_service(e->svcs[i]);
	for (i = 0; e->keys != NULL && i < e->n_keys; i++)
		free(e->keys[i]);
	free(e->svcs);
	free(e->keys);
	free(e->opts);
	free(e->drained);
}

/* ---- decoding ---- */

int
lb_dec_key(const Sluice__ServiceKey *k, struct lb_svc_key *out, char *errbuf, size_t len)
{
	struct lb_addr vip;
	uint8_t af;
	int rc;

	if (k == NULL)
		return lb_fail(errbuf, len, -LB_EPARSE, "service without a key");
	rc = lb_dec_addr(&k->vip, &vip, &af, "vip", errbuf, len);
	if (rc != 0)
		return rc;
	if (k->protocol != LB_IPPROTO_TCP && k->protocol != LB_IPPROTO_UDP)
		return lb_fail(
			errbuf, len, -LB_EPARSE, "protocol %u is neither TCP nor UDP", k->protocol);
	if (k->port < 1 || k->port > 65535)
		return lb_fail(errbuf, len, -LB_EPARSE, "port %u out of range", k->port);
	lb_svc_key_make(out, af, &vip, lb_cpu_to_be16((uint16_t)k->port), (uint8_t)k->protocol);
	return 0;
}

static void
dec_rule(const Sluice__LimitRule *r, struct lb_limit_rule *c)
{
	if (r == NULL)
		return;
	c->limit = r->limit;
	c->burst = r->burst;
	c->mode = (unsigned)r->mode > 255 ? 255 : (uint8_t)r->mode;
}

/* A service's rules, checked as a file's are (lb_limits_check()). */
static int
dec_limits(const Sluice__ServiceLimits *l, struct lb_service_cfg *sc, char *errbuf, size_t len)
{
	struct lb_svc_limits *c = &sc->limits;
	char why[160];

	if (l == NULL)
		return 0;
	dec_rule(l->per_source, &c->rule[LB_LIM_SOURCE]);
	dec_rule(l->new_per_second, &c->rule[LB_LIM_RATE]);
	dec_rule(l->max_connections, &c->rule[LB_LIM_CONNS]);
	c->source_prefix = l->source_prefix > 255 ? 255 : (uint8_t)l->source_prefix;
	c->refuse = (unsigned)l->refuse > 255 ? 255 : (uint8_t)l->refuse;
	if (lb_limits_check(c, sc->af, sc->proto, why, sizeof(why)) != 0)
		return lb_fail(errbuf, len, -LB_EPARSE, "service port %u: %s", sc->port, why);
	return 0;
}

static int
dec_service(const Sluice__Service *s, struct lb_service_cfg *sc, char *errbuf, size_t len)
{
	struct lb_svc_key key;
	size_t i;
	int rc;

	if (s == NULL)
		return lb_fail(errbuf, len, -LB_EPARSE, "empty service");
	rc = lb_dec_key(s->key, &key, errbuf, len);
	if (rc != 0)
		return rc;
	sc->vip = key.vip;
	sc->af = key.af;
	sc->proto = key.proto;
	sc->port = lb_be16_to_cpu(key.port);
	sc->id = s->id;
	sc->withdrawn = s->withdrawn;
	rc = dec_limits(s->limits, sc, errbuf, len);
	if (rc != 0)
		return rc;
	if (s->affinity >= LB_AFF_N || s->on_unusable >= LB_UNUSABLE_N ||
		s->balance >= LB_BALANCE_N)
		return lb_fail(errbuf, len, -LB_EPARSE,
			"service port %u: affinity %u, on_unusable %u or balance %u out of range",
			sc->port, s->affinity, s->on_unusable, s->balance);
	sc->choice.affinity = (uint8_t)s->affinity;
	sc->choice.on_unusable = (uint8_t)s->on_unusable;
	sc->choice.zonal = s->zonal;
	sc->choice.balance = (uint8_t)s->balance;
	sc->choice.mitigate = s->mitigate;
	if (s->n_withdrawn_zones > LB_WZONES)
		return lb_fail(errbuf, len, -LB_EPARSE, "service port %u: withdrawn in %zu zones",
			sc->port, s->n_withdrawn_zones);
	for (i = 0; i < s->n_withdrawn_zones; i++) {
		const char *z = s->withdrawn_zones[i], *why = lb_zone_problem(z, false);

		if (why != NULL)
			return lb_fail(errbuf, len, -LB_EPARSE,
				"service port %u: a withdrawn zone is %s", sc->port, why);
		memcpy(sc->wzones[i], z, strlen(z));
	}
	sc->n_wzones = (uint8_t)s->n_withdrawn_zones;
	if (s->n_backends > LB_MAGLEV_MAX_BACKENDS)
		return lb_fail(
			errbuf, len, -LB_EPARSE, "%zu backends in one service", s->n_backends);
	sc->backends = calloc(s->n_backends ? s->n_backends : 1, sizeof(*sc->backends));
	if (sc->backends == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < s->n_backends; i++) {
		const Sluice__Backend *b = s->backends[i];
		struct lb_backend_cfg *bc = &sc->backends[i];
		uint8_t daf, haf;

		if ((rc = lb_dec_addr(&b->dip, &bc->dip, &daf, "dip", errbuf, len)) != 0 ||
			(rc = lb_dec_addr(&b->host, &bc->host, &haf, "host", errbuf, len)) != 0)
			return rc;
		/* A service is one family; the host (PA) may be either. */
		if (daf != sc->af)
			return lb_fail(errbuf, len, -LB_EPARSE,
				"backend %zu: dip is IPv%u in an IPv%u service", i, daf, sc->af);
		if (b->port < 1 || b->port > 65535 || b->weight > LB_MAGLEV_MAX_WEIGHT ||
			(unsigned)b->state > LB_BACKEND_MAINT)
			return lb_fail(errbuf, len, -LB_EPARSE,
				"backend %zu: port %u, weight %u or state %d out of range", i,
				b->port, b->weight, (int)b->state);
		bc->port = (uint16_t)b->port;
		bc->weight = b->weight;
		bc->state = (uint8_t)b->state;
		bc->host6 = haf == LB_AF_INET6;
		bc->id = b->id;
		bc->max_conns = b->max_connections; /* its range: lb_ftable_validate() */
		if (b->zone != NULL && b->zone[0] != 0) {
			const char *why = lb_zone_problem(b->zone, false);

			if (why != NULL)
				return lb_fail(errbuf, len, -LB_EPARSE,
					"backend %zu: the zone is %s", i, why);
			memcpy(bc->zone, b->zone, strlen(b->zone));
		} else if (sc->choice.zonal) {
			return lb_fail(errbuf, len, -LB_EPARSE,
				"backend %zu: no zone in a service with cross_zone off", i);
		}
		sc->n_backends = (uint32_t)i + 1;
	}
	return 0;
}

/* n services of v into *out (n_out counts the ones decoded, for the free). */
static int
dec_services(Sluice__Service *const *v, size_t n, struct lb_service_cfg **out, uint32_t *n_out,
	char *errbuf, size_t len)
{
	size_t i;
	int rc;

	*out = calloc(n ? n : 1, sizeof(**out));
	if (*out == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < n; i++) {
		*n_out = (uint32_t)i + 1;
		rc = dec_service(v[i], &(*out)[i], errbuf, len);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The drained muxes: ids that fit (a cut one would name another mux), at most the limit. */
static int
dec_drained(const Sluice__FlowTableOptions *o, lb_ftable_id **out, uint32_t *n, char *errbuf,
	size_t len)
{
	size_t i;

	*out = NULL;
	*n = 0;
	if (o->n_drained_muxes == 0)
		return 0;
	if (o->n_drained_muxes > LB_FTABLE_MAX_DRAINED)
		return lb_fail(errbuf, len, -LB_EPARSE, "%zu drained muxes (at most %d)",
			o->n_drained_muxes, LB_FTABLE_MAX_DRAINED);
	*out = calloc(o->n_drained_muxes, sizeof(**out));
	if (*out == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < o->n_drained_muxes; i++) {
		const char *id = o->drained_muxes[i];

		if (id == NULL || id[0] == '\0' || strlen(id) >= LB_FTABLE_ID_LEN)
			return lb_fail(errbuf, len, -LB_EPARSE,
				"drained mux %zu: an id of 1 to %d bytes", i, LB_FTABLE_ID_LEN - 1);
		snprintf((*out)[i], sizeof((*out)[i]), "%s", id);
		*n = (uint32_t)i + 1;
	}
	return 0;
}

static int
dec_options(const Sluice__FlowTableOptions *o, struct lb_hash_seed *seed, uint32_t *msize,
	struct lb_limit_rule *mux_rate, char *errbuf, size_t len)
{
	char why[160];
	size_t i;

	memset(mux_rate, 0, sizeof(*mux_rate));
	dec_rule(o->mux_new_per_second, mux_rate);
	if (lb_limit_rule_check(mux_rate, "mux_new_per_second", why, sizeof(why)) != 0)
		return lb_fail(errbuf, len, -LB_EPARSE, "%s", why);

	if (o->hash_seed.len != 16)
		return lb_fail(errbuf, len, -LB_EPARSE, "hash seed of %zu bytes", o->hash_seed.len);
	if (!lb_is_prime(o->maglev_size) || o->maglev_size < LB_MAGLEV_MIN_SIZE ||
		o->maglev_size > LB_MAGLEV_MAX_SIZE)
		return lb_fail(errbuf, len, -LB_EPARSE, "maglev size %u", o->maglev_size);
	seed->k0 = seed->k1 = 0;
	for (i = 0; i < 8; i++) {
		seed->k0 = seed->k0 << 8 | o->hash_seed.data[i];
		seed->k1 = seed->k1 << 8 | o->hash_seed.data[8 + i];
	}
	*msize = o->maglev_size;
	return 0;
}

int
lb_dec_prepare(const Sluice__Prepare *p, struct lb_msg *m, char *errbuf, size_t len)
{
	const Sluice__Delta *d = p->delta;
	size_t i;
	int rc;

	m->type = LB_MSG_PREPARE;
	m->version = p->version;
	m->base_version = p->base_version;
	m->term = p->term;
	if (m->version != m->base_version + 1)
		return lb_fail(errbuf, len, -LB_EPARSE, "prepare %llu on base %llu",
			(unsigned long long)m->version, (unsigned long long)m->base_version);
	rc = lb_dec_digest(&p->digest, m->digest, errbuf, len);
	if (rc != 0 || d == NULL)
		return rc != 0 ? rc : lb_fail(errbuf, len, -LB_EPARSE, "prepare without delta");
	m->delta.remove = calloc(d->n_remove ? d->n_remove : 1, sizeof(*m->delta.remove));
	if (m->delta.remove == NULL)
		return -LB_ENOMEM;
	rc = dec_services(
		d->upsert, d->n_upsert, &m->delta.upsert, &m->delta.n_upsert, errbuf, len);
	if (rc != 0)
		return rc;
	for (i = 0; i < d->n_remove; i++) {
		rc = lb_dec_key(d->remove[i], &m->delta.remove[i], errbuf, len);
		if (rc != 0)
			return rc;
		m->delta.n_remove = (uint32_t)i + 1;
	}
	if (d->options != NULL) {
		m->delta.has_options = true;
		rc = dec_options(d->options, &m->delta.seed, &m->delta.maglev_size,
			&m->delta.mux_rate, errbuf, len);
		if (rc == 0)
			rc = dec_drained(
				d->options, &m->delta.drained, &m->delta.n_drained, errbuf, len);
		return rc;
	}
	return 0;
}

int
lb_dec_chunk(const Sluice__SnapshotChunk *c, struct lb_msg *m, char *errbuf, size_t len)
{
	int rc;

	m->type = LB_MSG_SNAPSHOT_CHUNK;
	m->version = c->version;
	m->term = c->term;
	m->index = c->index;
	m->count = c->count;
	if (c->count == 0 || c->index >= c->count)
		return lb_fail(errbuf, len, -LB_EPARSE, "chunk %u of %u", c->index, c->count);
	rc = lb_dec_digest(&c->digest, m->digest, errbuf, len);
	if (rc != 0)
		return rc;
	if (c->index == 0) {
		if (c->options == NULL)
			return lb_fail(errbuf, len, -LB_EPARSE, "first chunk without options");
		rc = dec_options(c->options, &m->table.seed, &m->table.maglev_size,
			&m->table.mux_rate, errbuf, len);
		if (rc == 0)
			rc = dec_drained(
				c->options, &m->table.drained, &m->table.n_drained, errbuf, len);
		if (rc != 0)
			return rc;
	}
	return dec_services(
		c->services, c->n_services, &m->table.services, &m->table.n_services, errbuf, len);
}
