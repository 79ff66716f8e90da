/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operator API's changes: vip add/set/del, backend add/del/set,
 * mux drain/undrain and config apply. Each builds the next desired table from the one the
 * request found, checks what the request gives (the error names the
 * field), and hands it to the commit driver, which stores it before the
 * answer says which version will carry it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_hdr.h"
#include "lb_log.h"
#include "lb_maglev.h"
#include "mgr_api_int.h"
#include "mgr_members.h"
#include "mgr_services.h"

/* ---- changes ---- */

/*
 * Take `next` as the desired table and `pools` as its pool options (both
 * taken over; pools NULL: they stay) and answer with the version it
 * commits as.
 */
static void
change(struct mgr_api *api, const struct mgr_api_req *q, struct lb_ftable *next,
	struct mgr_pools *pools, const struct mgr_meta *meta, const char *what)
{
	struct mgr_buf b = {0}, j = {0};
	struct mgr_pools keep;
	uint8_t d[LB_DIGEST_LEN];
	char e[LB_MSG_TEXT];
	uint64_t v;
	int rc;

	if (pools == NULL) {
		if (mgr_pools_copy(&keep, q->v.pools) != 0) {
			lb_ftable_free(next);
			mgr_api_refuse(q->rep, "out of memory");
			return;
		}
		pools = &keep;
	}
	lb_ftable_sort(next);
	lb_ftable_digest(next, d);
	mgr_pools_prune(pools, next);
	if (memcmp(d, q->v.desired_digest, LB_DIGEST_LEN) == 0 &&
		mgr_pools_equal(pools, q->v.pools)) {
		lb_ftable_free(next);
		mgr_pools_free(pools);
		v = mgr_driver_promise_unchanged(api->deps.driver);
		if (strcmp(what, "no change") == 0)
			mgr_buf_printf(&b, "no change: version %" PRIu64 " holds this table\n", v);
		else
			mgr_buf_printf(
				&b, "no change (%s): version %" PRIu64 " holds it\n", what, v);
		mgr_buf_printf(
			&j, "{\"version\":%" PRIu64 ",\"state\":\"unchanged\",\"change\":", v);
		mgr_buf_json_str(&j, what);
		mgr_buf_printf(&j, "}");
		q->rep->version = v;
		mgr_api_reply(q->rep, &b, &j);
		return;
	}
	rc = mgr_driver_set_desired(
		api->deps.driver, next, pools, meta, q->asker, &v, e, sizeof(e), q->now);
	if (rc != 0) {
		mgr_api_refuse(q->rep, "%s%s", rc == -LB_EIO ? "change refused: " : "", e);
		return;
	}
	LB_INFO("accepted, will commit as version %" PRIu64 ": %s", v, what);
	mgr_buf_printf(&b, "accepted: %s; will commit as version %" PRIu64 "\n", what, v);
	mgr_buf_printf(&j, "{\"version\":%" PRIu64 ",\"state\":\"accepted\",\"change\":", v);
	mgr_buf_json_str(&j, what);
	mgr_buf_printf(&j, "}");
	q->rep->version = v;
	mgr_api_reply(q->rep, &b, &j);
}

static int
svc_in(const struct lb_ftable *t, const struct lb_msg *req, struct lb_msg *rep)
{
	char k[MGR_SVC_STR];
	int i;

	if (!req->ctl.has_svc) {
		mgr_api_refuse(rep, "the request names no service");
		return -1;
	}
	i = lb_ftable_find(t, &req->ctl.svc);
	if (i < 0)
		mgr_api_refuse(rep, "no service %s", mgr_key_str(&req->ctl.svc, k, sizeof(k)));
	return i;
}

static int
be_in(const struct lb_service_cfg *sc, const struct lb_backend_cfg *be)
{
	uint32_t i;

	for (i = 0; i < sc->n_backends; i++)
		if (lb_addr_eq(&sc->backends[i].dip, &be->dip) && sc->backends[i].port == be->port)
			return (int)i;
	return -1;
}

/*
 * What a request's backend fields may hold; the error names the field. A
 * DIP is of its service's family (the codec says the DIP's by its length);
 * the host (PA) may be of either, but of one the DIP's agent has, when the
 * agent has said hello (mgr_members_pa_check()).
 */
static bool
be_fields_ok(struct mgr_api *api, const struct lb_msg *req, bool adding, struct lb_msg *rep)
{
	const struct lb_ctl *c = &req->ctl;
	char d[MGR_BE_STR], e[LB_MSG_TEXT];

	if (!c->has_be) {
		mgr_api_refuse(rep, "the request names no backend");
		return false;
	}
	mgr_be_str(c->be_af, &c->be, d, sizeof(d));
	if (c->be_af == LB_AF_NONE || lb_addr_is_zero(&c->be.dip) || c->be.port == 0) {
		mgr_api_refuse(rep, "backend %s: dip and port are required", d);
		return false;
	}
	if (c->be_af != c->svc.af) {
		mgr_api_refuse(rep,
			"backend %s: dip is an IPv%u address in an IPv%u service (a service is one "
			"family; its host may be either)",
			d, c->be_af, c->svc.af);
		return false;
	}
	if ((adding || c->set_weight) && c->be.weight > LB_MAGLEV_MAX_WEIGHT) {
		mgr_api_refuse(rep, "backend %s: weight %u out of range 0..%u", d, c->be.weight,
			LB_MAGLEV_MAX_WEIGHT);
		return false;
	}
	if ((adding || c->set_state) && c->be.state > LB_BACKEND_MAINT) {
		mgr_api_refuse(
			rep, "backend %s: state %u is not active, drain or maint", d, c->be.state);
		return false;
	}
	if ((adding || c->set_max_conns) && c->be.max_conns != 0 &&
		(c->svc.proto != LB_IPPROTO_TCP || c->be.max_conns > LB_MAX_CONNS_CAP)) {
		mgr_api_refuse(rep,
			"backend %s: max_connections %u: a cap of 1..%u, on a TCP service (the "
			"agent counts TCP connections)",
			d, c->be.max_conns, LB_MAX_CONNS_CAP);
		return false;
	}
	if ((adding || c->set_host) && lb_addr_is_zero(&c->be.host)) {
		mgr_api_refuse(rep, "backend %s: host (the PA of its server) is required", d);
		return false;
	}
	if ((adding || c->set_host) && api->deps.members != NULL &&
		mgr_members_pa_check(api->deps.members, c->be_af, &c->be.dip,
			c->be.host6 ? LB_AF_INET6 : LB_AF_INET, &c->be.host, e, sizeof(e)) != 0) {
		mgr_api_refuse(rep, "backend %s: host %s", d, e);
		return false;
	}
	return true;
}

/* The pool options a request gives, over `p`; the error names the field. */
static bool
pool_ok(const struct lb_msg *req, struct mgr_pool *p, struct lb_msg *rep)
{
	char k[MGR_SVC_STR], e[LB_MSG_TEXT];

	if (req->ctl.pool.given == 0)
		return true;
	if (mgr_pool_apply(p, &req->ctl.pool, e, sizeof(e)) != 0) {
		mgr_api_refuse(rep, "pool of %s: %s", mgr_key_str(&req->ctl.svc, k, sizeof(k)), e);
		return false;
	}
	return true;
}

/* "interval 30->5, probe tcp->http": what a pool change changes. */
static void
pool_diff(const struct mgr_pool *a, const struct mgr_pool *b, char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
#define PD(cond, ...)                                                                              \
	do {                                                                                       \
		if ((cond) && off < len)                                                           \
			off += (size_t)snprintf(out + off, len - off, __VA_ARGS__);                \
	} while (0)
	PD(a->pl_probe != b->pl_probe, " probe %s->%s", mgr_probe_name(a->pl_probe),
		mgr_probe_name(b->pl_probe));
	PD(a->pl_probe_port != b->pl_probe_port, " probe_port %u->%u", a->pl_probe_port,
		b->pl_probe_port);
	PD(strcmp(a->pl_path, b->pl_path) != 0, " path %s", b->pl_path);
	PD(strcmp(a->pl_codes, b->pl_codes) != 0, " codes %s", b->pl_codes);
#define X(c, bit, pb, name) PD(a->pl_##c != b->pl_##c, " " name " %u->%u", a->pl_##c, b->pl_##c);
	LB_POOL_NUMBERS(X)
#undef X
#undef PD
}

void
mgr_api_vip_add(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct mgr_pool pool = *mgr_pool_defaults();
	struct mgr_meta meta = *q->v.meta;
	struct lb_service_cfg *svcs, *sc;
	struct mgr_pools pools;
	struct lb_ftable next;
	char k[MGR_SVC_STR], what[96];

	if (!q->req->ctl.has_svc) {
		mgr_api_refuse(q->rep, "the request names no service");
		return;
	}
	mgr_key_str(&q->req->ctl.svc, k, sizeof(k));
	if (lb_ftable_find(q->v.desired, &q->req->ctl.svc) >= 0) {
		mgr_api_refuse(q->rep, "service %s already exists", k);
		return;
	}
	if (!pool_ok(q->req, &pool, q->rep))
		return;
	if (mgr_pools_copy(&pools, q->v.pools) != 0)
		goto nomem;
	if (mgr_pools_set(&pools, &q->req->ctl.svc, &pool) != 0) {
		mgr_pools_free(&pools);
		goto nomem;
	}
	if (lb_ftable_copy(&next, q->v.desired) != 0) {
		mgr_pools_free(&pools);
		goto nomem;
	}
	svcs = realloc(next.services, (next.n_services + 1) * sizeof(*svcs));
	if (svcs == NULL)
		goto nomem_next;
	next.services = svcs;
	sc = &svcs[next.n_services];
	memset(sc, 0, sizeof(*sc));
	sc->backends = calloc(1, sizeof(*sc->backends));
	if (sc->backends == NULL)
		goto nomem_next;
	next.n_services++;
	sc->vip = q->req->ctl.svc.vip;
	sc->port = lb_be16_to_cpu(q->req->ctl.svc.port);
	sc->proto = q->req->ctl.svc.proto;
	sc->af = q->req->ctl.svc.af;
	sc->id = meta.mm_next_service_id++;
	snprintf(what, sizeof(what), "+vip %s", k);
	change(api, q, &next, &pools, &meta, what);
	return;
nomem_next:
	lb_ftable_free(&next);
	mgr_pools_free(&pools);
nomem:
	mgr_api_refuse(q->rep, "out of memory");
}

void
mgr_api_vip_set(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct mgr_pools pools;
	struct mgr_pool pool;
	struct lb_ftable next;
	char k[MGR_SVC_STR], what[400], diff[320];
	int i = svc_in(q->v.desired, q->req, q->rep);

	if (i < 0)
		return;
	if (q->req->ctl.pool.given == 0) {
		mgr_api_refuse(
			q->rep, "nothing to change: give a pool option (--probe, --interval, ...)");
		return;
	}
	pool = *mgr_pools_get(q->v.pools, &q->req->ctl.svc);
	if (!pool_ok(q->req, &pool, q->rep))
		return;
	pool_diff(mgr_pools_get(q->v.pools, &q->req->ctl.svc), &pool, diff, sizeof(diff));
	if (mgr_pools_copy(&pools, q->v.pools) != 0 ||
		mgr_pools_set(&pools, &q->req->ctl.svc, &pool) != 0) {
		mgr_pools_free(&pools);
		mgr_api_refuse(q->rep, "out of memory");
		return;
	}
	if (lb_ftable_copy(&next, q->v.desired) != 0) {
		mgr_pools_free(&pools);
		mgr_api_refuse(q->rep, "out of memory");
		return;
	}
	snprintf(what, sizeof(what), "~pool %s:%s", mgr_key_str(&q->req->ctl.svc, k, sizeof(k)),
		diff[0] ? diff : " no change");
	change(api, q, &next, &pools, q->v.meta, what);
}

void
mgr_api_vip_del(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct lb_ftable next;
	char k[MGR_SVC_STR], what[96];
	int i = svc_in(q->v.desired, q->req, q->rep);

	if (i < 0)
		return;
	if (lb_ftable_copy(&next, q->v.desired) != 0) {
		mgr_api_refuse(q->rep, "out of memory");
		return;
	}
	free(next.services[i].backends);
	memmove(&next.services[i], &next.services[i + 1],
		(next.n_services - (uint32_t)i - 1) * sizeof(next.services[0]));
	next.n_services--;
	snprintf(what, sizeof(what), "-vip %s", mgr_key_str(&q->req->ctl.svc, k, sizeof(k)));
	change(api, q, &next, NULL, q->v.meta, what);
}

void
mgr_api_backend_add(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct mgr_meta meta = *q->v.meta;
	struct lb_backend_cfg *bes, *be;
	struct lb_service_cfg *sc;
	struct lb_ftable next;
	char k[MGR_SVC_STR], d[MGR_BE_STR], what[160];
	int i = svc_in(q->v.desired, q->req, q->rep);

	if (i < 0 || !be_fields_ok(api, q->req, true, q->rep))
		return;
	mgr_key_str(&q->req->ctl.svc, k, sizeof(k));
	mgr_be_str(q->req->ctl.be_af, &q->req->ctl.be, d, sizeof(d));
	sc = &q->v.desired->services[i];
	if (be_in(sc, &q->req->ctl.be) >= 0) {
		mgr_api_refuse(q->rep, "backend %s already in %s", d, k);
		return;
	}
	if (sc->n_backends >= LB_MAGLEV_MAX_BACKENDS) {
		mgr_api_refuse(q->rep, "%s has %u backends, the most a service can have", k,
			sc->n_backends);
		return;
	}
	if (lb_ftable_copy(&next, q->v.desired) != 0)
		goto nomem;
	sc = &next.services[i];
	bes = realloc(sc->backends, (sc->n_backends + 1) * sizeof(*bes));
	if (bes == NULL) {
		lb_ftable_free(&next);
		goto nomem;
	}
	sc->backends = bes;
	be = &bes[sc->n_backends++];
	memset(be, 0, sizeof(*be));
	be->dip = q->req->ctl.be.dip;
	be->port = q->req->ctl.be.port;
	be->host = q->req->ctl.be.host;
	be->host6 = q->req->ctl.be.host6;
	be->weight = q->req->ctl.be.weight;
	be->state = q->req->ctl.be.state;
	be->max_conns = q->req->ctl.be.max_conns;
	be->id = meta.mm_next_backend_id++;
	snprintf(what, sizeof(what), "+backend %s on %s", d, k);
	change(api, q, &next, NULL, &meta, what);
	return;
nomem:
	mgr_api_refuse(q->rep, "out of memory");
}

/*
 * The request's backend in service i of desired: its index, with *next a
 * copy of desired to change and k, d their names. -1 after refusing.
 */
static int
backend_of(const struct mgr_api_req *q, int i, struct lb_ftable *next, char k[MGR_SVC_STR],
	char d[MGR_BE_STR])
{
	int b;

	mgr_key_str(&q->req->ctl.svc, k, MGR_SVC_STR);
	mgr_be_str(q->req->ctl.svc.af, &q->req->ctl.be, d, MGR_BE_STR);
	b = be_in(&q->v.desired->services[i], &q->req->ctl.be);
	if (b < 0) {
		mgr_api_refuse(q->rep, "no backend %s in %s", d, k);
		return -1;
	}
	if (lb_ftable_copy(next, q->v.desired) != 0) {
		mgr_api_refuse(q->rep, "out of memory");
		return -1;
	}
	return b;
}

void
mgr_api_backend_del(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct lb_service_cfg *sc;
	struct lb_ftable next;
	char k[MGR_SVC_STR], d[MGR_BE_STR], what[160];
	int i = svc_in(q->v.desired, q->req, q->rep), b;

	if (i < 0)
		return;
	if (!q->req->ctl.has_be) {
		mgr_api_refuse(q->rep, "the request names no backend");
		return;
	}
	if ((b = backend_of(q, i, &next, k, d)) < 0)
		return;
	sc = &next.services[i];
	memmove(&sc->backends[b], &sc->backends[b + 1],
		(sc->n_backends - (uint32_t)b - 1) * sizeof(sc->backends[0]));
	sc->n_backends--;
	snprintf(what, sizeof(what), "-backend %s on %s", d, k);
	change(api, q, &next, NULL, q->v.meta, what);
}

void
mgr_api_backend_set(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct lb_ctl *c = &q->req->ctl;
	struct lb_backend_cfg *be;
	struct lb_ftable next;
	char k[MGR_SVC_STR], d[MGR_BE_STR], h[LB_ADDR_STRLEN], what[256];
	size_t off;
	int i = svc_in(q->v.desired, q->req, q->rep), b;

	if (i < 0 || !be_fields_ok(api, q->req, false, q->rep))
		return;
	if (!c->set_weight && !c->set_state && !c->set_host && !c->set_max_conns) {
		mgr_api_refuse(q->rep, "nothing to change: set the weight, the state, the host or "
				       "max_connections");
		return;
	}
	if ((b = backend_of(q, i, &next, k, d)) < 0)
		return;
	be = &next.services[i].backends[b];
	off = (size_t)snprintf(what, sizeof(what), "~backend %s on %s:", d, k);
	if (c->set_weight) {
		be->weight = c->be.weight;
		off += (size_t)snprintf(what + off, sizeof(what) - off, " weight %u", be->weight);
	}
	if (c->set_state) {
		be->state = c->be.state;
		off += (size_t)snprintf(
			what + off, sizeof(what) - off, " state %s", mgr_state_name(be->state));
	}
	if (c->set_max_conns) {
		be->max_conns = c->be.max_conns;
		off += (size_t)snprintf(
			what + off, sizeof(what) - off, " max_connections %u", be->max_conns);
	}
	if (c->set_host) {
		be->host = c->be.host;
		be->host6 = c->be.host6;
		snprintf(
			what + off, sizeof(what) - off, " host %s", mgr_host_str(be, h, sizeof(h)));
	}
	change(api, q, &next, NULL, q->v.meta, what);
}

/*
 * mux drain / undrain: the drained list is desired state, in the desired
 * table, so a drain is versioned, stored and committed like any change,
 * and every member gets it with the table (docs/routing.md, "Draining").
 */
void
mgr_api_mux_drain(struct mgr_api *api, const struct mgr_api_req *q)
{
	bool on = q->req->ctl.op == LB_CTL_MUX_DRAIN;
	const char *id = q->req->ctl.mux;
	const struct mgr_commit *c = q->v.commit;
	struct lb_ftable next;
	char what[LB_MSG_ID + 16];
	int i, rc;

	if (id[0] == '\0') {
		mgr_api_refuse(
			q->rep, "mux %s: the request names no mux", on ? "drain" : "undrain");
		return;
	}
	i = mgr_commit_find(c, id);
	if (i >= 0 && c->members[i].role != LB_ROLE_MUX) {
		mgr_api_refuse(q->rep, "%s is a %s, not a mux: only muxes announce routes", id,
			mgr_role_name(c->members[i].role));
		return;
	}
	/*
	 * Undraining a mux no one knows is a typo, not a change (as limit del
	 * of none); one whose undrain is on its way (still drained in the
	 * committed table) is no change.
	 */
	if (!on && i < 0 && !lb_ftable_drained(q->v.desired, id) &&
		!lb_ftable_drained(q->v.committed, id)) {
		mgr_api_refuse(q->rep, "mux undrain %s: no such mux is drained or a member", id);
		return;
	}
	if (lb_ftable_copy(&next, q->v.desired) != 0) {
		mgr_api_refuse(q->rep, "out of memory");
		return;
	}
	rc = lb_ftable_set_drained(&next, id, on);
	if (rc < 0) {
		lb_ftable_free(&next);
		mgr_api_refuse(q->rep, "mux %s: %s", id,
			rc == -LB_ENOMEM
				? "out of memory"
				: "an id of 1 to 63 characters, at most 256 muxes drained");
		return;
	}
	if (i < 0)
		LB_WARN("mux %s is not a member (yet): its %s applies when it joins", id,
			on ? "drain" : "undrain");
	snprintf(what, sizeof(what), "%s mux %s", on ? "drain" : "undrain", id);
	change(api, q, &next, NULL, q->v.meta, what);
}

/*
 * Every backend's host against the agents' PAs (be_fields_ok()'s rule for
 * a file). t is c's table as loaded: services and backends in the file's
 * order, so that a refusal names the line of the backend's host.
 */
static bool
hosts_ok(struct mgr_api *api, const struct lb_ftable *t, const config_t *c, struct lb_msg *rep)
{
	const config_setting_t *svcs = config_lookup(c, "flow_table.services");
	char k[MGR_SVC_STR], d[MGR_BE_STR], e[LB_MSG_TEXT];
	uint32_t i, j;

	for (i = 0; api->deps.members != NULL && i < t->n_services; i++)
		for (j = 0; j < t->services[i].n_backends; j++) {
			const struct lb_service_cfg *sc = &t->services[i];
			const struct lb_backend_cfg *be = &sc->backends[j];
			const config_setting_t *bs = config_setting_get_elem(
				config_setting_get_member(
					config_setting_get_elem(svcs, i), "backends"),
				j);
			const config_setting_t *h = config_setting_get_member(bs, "host");

			if (mgr_members_pa_check(api->deps.members, sc->af, &be->dip,
				    be->host6 ? LB_AF_INET6 : LB_AF_INET, &be->host, e,
				    sizeof(e)) == 0)
				continue;
			mgr_api_refuse(rep,
				"<apply>:%d: flow_table.services[%u].backends[%u].host: service "
				"%s: backend %s: host %s",
				config_setting_source_line(h != NULL ? h : bs), i, j,
				mgr_svc_str(sc, k, sizeof(k)), mgr_be_str(sc->af, be, d, sizeof(d)),
				e);
			return false;
		}
	return true;
}

/*
 * A file's hash_seed against the manager's own: as at start
 * (mgr_driver_load.c), the two must agree, or the next restart would
 * quietly put the manager's back and move every flow twice.
 */
static bool
seed_ok(struct mgr_api *api, const struct lb_ftable *t, const config_t *c, struct lb_msg *rep)
{
	const struct mgr_config *cfg = api->deps.cfg;
	const config_setting_t *s = config_lookup(c, "flow_table.hash_seed");

	if (cfg == NULL || !cfg->mc_has_seed ||
		(t->seed.k0 == cfg->mc_seed.k0 && t->seed.k1 == cfg->mc_seed.k1))
		return true;
	mgr_api_refuse(rep,
		"<apply>:%d: flow_table.hash_seed: differs from manager.hash_seed in %s (leave it "
		"out, or set the same)",
		s != NULL ? config_setting_source_line(s) : 0, cfg->mc_path);
	return false;
}

void
mgr_api_apply(struct mgr_api *api, const struct mgr_api_req *q)
{
	struct mgr_meta meta = *q->v.meta;
	struct mgr_pools pools;
	struct lb_ftable next;
	char e[LB_MSG_TEXT], what[600];
	config_t c;

	if (q->req->body == NULL || q->req->body[0] == '\0') {
		mgr_api_refuse(q->rep, "<apply>: empty file (expected flow_table = { ... })");
		return;
	}
	config_init(&c);
	if (config_read_string(&c, q->req->body) != CONFIG_TRUE) {
		mgr_api_refuse(
			q->rep, "<apply>:%d: %s", config_error_line(&c), config_error_text(&c));
		config_destroy(&c);
		return;
	}
	if (mgr_services_load(q->v.desired, &c, "<apply>", &meta, &next, &pools, e, sizeof(e)) !=
		0) {
		config_destroy(&c);
		mgr_api_refuse(q->rep, "%s", e);
		return;
	}
	if (!seed_ok(api, &next, &c, q->rep) || !hosts_ok(api, &next, &c, q->rep)) {
		config_destroy(&c);
		lb_ftable_free(&next);
		mgr_pools_free(&pools);
		return;
	}
	config_destroy(&c);
	/* Drains are about muxes, not services: a services file keeps them. */
	if (lb_ftable_copy_drained(&next, q->v.desired) != 0) {
		lb_ftable_free(&next);
		mgr_pools_free(&pools);
		mgr_api_refuse(q->rep, "out of memory");
		return;
	}
	lb_ftable_sort(&next);
	mgr_summary(q->v.desired, &next, what, sizeof(what));
	if (strcmp(what, "no change") == 0 && !mgr_pools_equal(&pools, q->v.pools))
		snprintf(what, sizeof(what), "pool options");
	change(api, q, &next, &pools, &meta, what);
}

void
mgr_api_commit_change(
	struct mgr_api *api, const struct mgr_api_req *q, struct lb_ftable *next, const char *what)
{
	change(api, q, next, NULL, q->v.meta, what);
}

int
mgr_api_find_svc(const struct lb_ftable *t, const struct lb_msg *req, struct lb_msg *rep)
{
	return svc_in(t, req, rep);
}
