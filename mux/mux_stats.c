/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters as operators see them: the summary, the JSON summary and
 * telemetry, the totals made from the list in mux_counters.h. Workers own
 * their counters and write them as plain words; readers here sum them
 * without stopping anyone (dp_counters.h).
 */
#include <inttypes.h>
#include <stdlib.h>

#include <rte_telemetry.h>

#include "dp_counters.h"
#include "lb_hdr.h"
#include "mux_app.h"
#include "mux_conn.h"
#include "mux_gen.h"

void
mux_stats_total(const struct mux_app *app, struct mux_counters *sum)
{
	uint16_t w;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < app->n_workers; w++)
		dp_counters_add((uint64_t *)sum, (const uint64_t *)&app->workers[w].cnt,
			sizeof(*sum) / sizeof(uint64_t));
}

uint64_t
mux_stats_conns(const struct mux_app *app)
{
	uint64_t n = 0;
	uint16_t w;

	for (w = 0; w < app->n_workers; w++)
		n += mux_conn_count(app->workers[w].conn) + mux_conn6_count(app->workers[w].conn6);
	return n;
}

void
mux_stats_flow_raw(
	const struct mux_app *app, int backend, uint32_t sid, struct mux_flow_counters *out)
{
	uint16_t w;

	memset(out, 0, sizeof(*out));
	for (w = 0; w < app->n_workers; w++) {
		const struct mux_flow_counters *c =
			backend ? &app->workers[w].be_cnt[sid] : &app->workers[w].svc_cnt[sid];

		out->pkts += DP_RD(c->pkts);
		out->bytes += DP_RD(c->bytes);
		out->new_conns += DP_RD(c->new_conns);
	}
}

/*
 * A service's or backend's counters since its id was given to it: workers
 * never reset counters, so an id handed to a newcomer starts from the
 * baseline recorded then.
 */
static void
flow_total(const struct mux_app *app, int backend, uint32_t sid, struct mux_flow_counters *out)
{
	const struct mux_flow_counters *base = backend ? app->be_base : app->svc_base;

	mux_stats_flow_raw(app, backend, sid, out);
	if (base != NULL) {
		out->pkts -= base[sid].pkts;
		out->bytes -= base[sid].bytes;
		out->new_conns -= base[sid].new_conns;
	}
}

void
mux_stats_flow(const struct mux_app *app, int backend, uint32_t sid, struct mux_flow_counters *out)
{
	flow_total(app, backend, sid, out);
}

/* A service's VIP, as text. */
static const char *
vip_str(const struct mux_service *sv, char *buf)
{
	return lb_addr_ntop(sv->key.af, &sv->key.vip, buf, LB_ADDR_STRLEN);
}

const char *
mux_stats_dip(const struct mux_gen *g, const struct mux_service *sv, uint32_t id, char *buf)
{
	struct lb_addr a;

	if (sv->key.af == LB_AF_INET6)
		lb_addr_v6(&a, g->addr6[id].dip);
	else
		lb_addr_v4(&a, g->backends[id].dip);
	return lb_addr_ntop(sv->key.af, &a, buf, LB_ADDR_STRLEN);
}

static const char *
host_str(const struct mux_gen *g, uint32_t id, char *buf)
{
	struct lb_addr a;
	bool v6 = g->backends[id].flags & MUX_BE_HOST6;

	if (v6)
		lb_addr_v6(&a, g->addr6[id].host);
	else
		lb_addr_v4(&a, g->backends[id].host);
	return lb_addr_ntop(v6 ? LB_AF_INET6 : LB_AF_INET, &a, buf, LB_ADDR_STRLEN);
}

/* "192.0.2.10:80", "[2001:db8::10]:80" */
static const char *
endpoint_str(const char *addr, uint8_t af, lb_be16_t port, char *buf, size_t len)
{
	snprintf(buf, len, af == LB_AF_INET6 ? "[%s]:%u" : "%s:%u", addr, lb_be16_to_cpu(port));
	return buf;
}

static const char *
proto_name(uint8_t p)
{
	return p == LB_IPPROTO_TCP ? "tcp" : p == LB_IPPROTO_UDP ? "udp" : "?";
}

void
mux_stats_print(const struct mux_app *app, FILE *out)
{
	const struct mux_gen *g = app->ctx.gen;
	struct mux_counters t;
	struct mux_flow_counters fc;
	char a[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN], e[LB_ADDR_STRLEN + 10];
	uint32_t s, id;

	mux_stats_total(app, &t);
	fprintf(out, "sluice-mux summary (flow table version %" PRIu64 ", %u workers)\n",
		g->version, app->n_workers);
#define P(name, show, status, summary, ...) dp_print_u64(out, summary, t.name);
	MUX_COUNTERS(P)
#undef P
	fprintf(out, ", live %" PRIu64 "\n", mux_stats_conns(app));
	for (s = 0; s < g->n_services; s++) {
		const struct mux_service *sv = &g->services[s];

		flow_total(app, 0, sv->sid, &fc);
		fprintf(out,
			"  service %s/%s  packets %" PRIu64 " bytes %" PRIu64 " new %" PRIu64 "\n",
			endpoint_str(vip_str(sv, a), sv->key.af, sv->key.port, e, sizeof(e)),
			proto_name(sv->key.proto), fc.pkts, fc.bytes, fc.new_conns);
		for (id = sv->first_backend; id < sv->first_backend + sv->n_backends; id++) {
			const struct mux_backend *be = &g->backends[id];

			flow_total(app, 1, be->sid, &fc);
			fprintf(out,
				"    backend %s via %s  packets %" PRIu64 " bytes %" PRIu64
				" new %" PRIu64 "\n",
				endpoint_str(mux_stats_dip(g, sv, id, a), sv->key.af, be->port, e,
					sizeof(e)),
				host_str(g, id, b), fc.pkts, fc.bytes, fc.new_conns);
		}
	}
	dp_drops_print(out, t.drops);
}

void
mux_stats_json(const struct mux_app *app, FILE *out)
{
	const struct mux_gen *g = app->ctx.gen;
	struct mux_counters t;
	struct mux_flow_counters fc;
	char a[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN];
	uint32_t s, i, id;

	mux_stats_total(app, &t);
	fprintf(out, "\"version\":%" PRIu64 ",\"workers\":%u", g->version, app->n_workers);
#define J(name, show, ...) dp_json_u64(out, show, #name, t.name);
	MUX_COUNTERS(J)
#undef J
	dp_json_u64(out, DP_JSON, "conn_live", mux_stats_conns(app));
	dp_drops_json(out, t.drops);
	fprintf(out, ",\"per_worker_rx\":[");
	for (i = 0; i < app->n_workers; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", DP_RD(app->workers[i].cnt.rx_pkts));
	fprintf(out, "],\"services\":[");
	for (s = 0; s < g->n_services; s++) {
		const struct mux_service *sv = &g->services[s];

		flow_total(app, 0, sv->sid, &fc);
		fprintf(out,
			"%s{\"vip\":\"%s\",\"port\":%u,\"protocol\":\"%s\",\"pkts\":%" PRIu64
			",\"bytes\":%" PRIu64 ",\"new_conns\":%" PRIu64 ",\"backends\":[",
			s ? "," : "", vip_str(sv, a), lb_be16_to_cpu(sv->key.port),
			proto_name(sv->key.proto), fc.pkts, fc.bytes, fc.new_conns);
		for (id = sv->first_backend; id < sv->first_backend + sv->n_backends; id++) {
			const struct mux_backend *be = &g->backends[id];

			flow_total(app, 1, be->sid, &fc);
			fprintf(out,
				"%s{\"dip\":\"%s\",\"port\":%u,\"host\":\"%s\",\"pkts\":%" PRIu64
				",\"bytes\":%" PRIu64 ",\"new_conns\":%" PRIu64 "}",
				id > sv->first_backend ? "," : "", mux_stats_dip(g, sv, id, a),
				lb_be16_to_cpu(be->port), host_str(g, id, b), fc.pkts, fc.bytes,
				fc.new_conns);
		}
		fprintf(out, "]");
		mux_limit_json(out, app->workers, app->n_workers, app->lim_base, g, s);
		fprintf(out, "}");
	}
	fprintf(out, "]");
	mux_limit_json_mux(out, app->workers, app->n_workers, g);
}

static void
section_print(const void *app, FILE *out)
{
	mux_stats_print(app, out);
}

static void
section_json(const void *app, FILE *out)
{
	mux_stats_json(app, out);
}

struct dp_section
mux_stats_section(const struct mux_app *app)
{
	return (struct dp_section){.print = section_print, .json = section_json, .arg = app};
}

/* ---- telemetry: read-only, paged where lists can be long ---- */

static struct mux_app *tel_app;

#define TEL_PAGE 64

/*
 * Telemetry names allow only [A-Za-z0-9_/]: 192.0.2.10 is written
 * 192_0_2_10, 2001:db8::10 2001_db8__10.
 */
static const char *
tel_name(char *buf)
{
	char *c;

	for (c = buf; *c != '\0'; c++)
		if (*c == '.' || *c == ':')
			*c = '_';
	return buf;
}

/*
 * Serving without a manager: lkg 1, and whether the PoP should announce
 * meanwhile (lkg_announce) and why. lkg 0 while a leader manages the mux.
 */
static void
tel_lkg(struct rte_tel_data *d)
{
	char why[160];
	bool announce, lkg = dp_member_lkg_verdict(&tel_app->member, &announce, why, sizeof(why));

	rte_tel_data_add_dict_u64(d, "lkg", lkg);
	rte_tel_data_add_dict_u64(d, "lkg_announce", lkg && announce);
	rte_tel_data_add_dict_string(d, "lkg_why", why);
}

static int
tel_stats_locked(
	const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	struct mux_counters t;

	mux_stats_total(tel_app, &t);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "version", tel_app->ctx.gen->version);
	rte_tel_data_add_dict_u64(d, "workers", tel_app->n_workers);
#define T(name, show, ...) dp_tel_u64(d, show, #name, t.name);
	MUX_COUNTERS(T)
#undef T
	rte_tel_data_add_dict_u64(d, "conn_live", mux_stats_conns(tel_app));
	/* 22.11 telemetry has no booleans: 1 or 0. */
	rte_tel_data_add_dict_u64(d, "managed", tel_app->cfg.managed);
	rte_tel_data_add_dict_u64(d, "manager_connected", dp_member_connected(&tel_app->member));
	tel_lkg(d);
	return 0;
}

static int
tel_drops(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	struct mux_counters t;

	mux_stats_total(tel_app, &t);
	rte_tel_data_start_dict(d);
	dp_drops_tel(d, t.drops, 0);
	return 0;
}

/*
 * 22.11 nests arrays only: a service's (backend 0) or backend's counters
 * as [pkts, bytes, new_conns, x, y]. NULL: out of memory.
 */
static struct rte_tel_data *
tel_flow_array(int backend, uint32_t sid, uint64_t x, uint64_t y)
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	struct mux_flow_counters fc;

	if (c == NULL)
		return NULL;
	flow_total(tel_app, backend, sid, &fc);
	rte_tel_data_start_array(c, RTE_TEL_U64_VAL);
	rte_tel_data_add_array_u64(c, fc.pkts);
	rte_tel_data_add_array_u64(c, fc.bytes);
	rte_tel_data_add_array_u64(c, fc.new_conns);
	rte_tel_data_add_array_u64(c, x);
	rte_tel_data_add_array_u64(c, y);
	return c;
}

/* /sluice/services,PAGE: services PAGE*64 .. +63: [pkts, bytes, new_conns, backends, index]. */
static int
tel_services_locked(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	const struct mux_gen *g = tel_app->ctx.gen;
	unsigned long page = params && *params ? strtoul(params, NULL, 10) : 0;
	uint32_t s;
	char a[LB_ADDR_STRLEN], key[72];

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "services", g->n_services);
	rte_tel_data_add_dict_u64(d, "page", page);
	for (s = (uint32_t)(page * TEL_PAGE); s < g->n_services && s < (page + 1) * TEL_PAGE; s++) {
		const struct mux_service *sv = &g->services[s];
		struct rte_tel_data *c = tel_flow_array(0, sv->sid, sv->n_backends, s);

		if (c == NULL)
			return -ENOMEM;
		vip_str(sv, a);
		snprintf(key, sizeof(key), "%s_%u_%s", tel_name(a), lb_be16_to_cpu(sv->key.port),
			proto_name(sv->key.proto));
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

/* /sluice/backends,SERVICE_INDEX: a service's backends (first 64). */
static int
tel_backends_locked(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	const struct mux_gen *g = tel_app->ctx.gen;
	unsigned long s = params && *params ? strtoul(params, NULL, 10) : 0;
	char a[LB_ADDR_STRLEN], key[72];
	uint32_t i;

	if (s >= g->n_services)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (i = 0; i < g->services[s].n_backends && i < TEL_PAGE; i++) {
		uint32_t id = g->services[s].first_backend + i;
		const struct mux_backend *be = &g->backends[id];
		/* [pkts, bytes, new_conns, IPv4 host PA (host order; 0: IPv6), weight is zero] */
		struct rte_tel_data *c = tel_flow_array(1, be->sid,
			be->flags & MUX_BE_HOST6 ? 0 : lb_be32_to_cpu(be->host),
			(be->flags & MUX_BE_WEIGHT_ZERO) != 0);

		if (c == NULL)
			return -ENOMEM;
		mux_stats_dip(g, &g->services[s], id, a);
		snprintf(key, sizeof(key), "%s_%u", tel_name(a), lb_be16_to_cpu(be->port));
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

static int
tel_flow_table_locked(
	const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	const struct mux_gen *g = tel_app->ctx.gen;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "version", g->version);
	rte_tel_data_add_dict_u64(d, "services", g->n_services);
	rte_tel_data_add_dict_u64(d, "backends", g->n_backends);
	rte_tel_data_add_dict_u64(d, "maglev_size", g->maglev_size);
	return 0;
}

/* Telemetry runs in its own thread, not an RCU reader: hold the generation. */
#define TEL_LOCKED(fn)                                                                             \
	static int fn(const char *cmd, const char *params, struct rte_tel_data *d)                 \
	{                                                                                          \
		int rc;                                                                            \
                                                                                                   \
		pthread_mutex_lock(&tel_app->gen_lock);                                            \
		rc = fn##_locked(cmd, params, d);                                                  \
		pthread_mutex_unlock(&tel_app->gen_lock);                                          \
		return rc;                                                                         \
	}

TEL_LOCKED(tel_stats)
TEL_LOCKED(tel_services)
TEL_LOCKED(tel_backends)
TEL_LOCKED(tel_flow_table)

/*
 * rte_telemetry_register_cmd() refuses (-EINVAL) a help text of
 * RTE_TEL_MAX_STRING_LEN (128) characters or more: keep each one shorter.
 */
int
mux_telemetry_register(struct mux_app *app)
{
	tel_app = app;
	if (DP_TEL_REGISTER("/sluice/stats", tel_stats,
		    "Mux totals, flow table version, managed, manager_connected, lkg, "
		    "lkg_announce (1/0), lkg_why. No parameters.") != 0 ||
		DP_TEL_REGISTER("/sluice/drops", tel_drops,
			"Dropped packets by reason. No parameters.") != 0 ||
		DP_TEL_REGISTER("/sluice/services", tel_services,
			"Services, 64 per page: {VIP_PORT_PROTO: [pkts, bytes, new_conns, "
			"backends, index]}. Parameter: page.") != 0 ||
		DP_TEL_REGISTER("/sluice/backends", tel_backends,
			"A service's backends: {DIP_PORT: [pkts, bytes, new_conns, IPv4 host "
			"(0: IPv6), weight_zero]}. Parameter: service index.") != 0 ||
		DP_TEL_REGISTER("/sluice/flow_table", tel_flow_table,
			"Flow table version and sizes. No parameters.") != 0)
		return -1;
	return 0;
}
