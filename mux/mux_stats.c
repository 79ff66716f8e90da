/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters as operators see them. Workers own their counters and write them
 * as plain words; readers here sum them without stopping anyone. A sum read
 * while traffic flows is a consistent-enough snapshot: each word is read
 * whole (aligned 64-bit loads), only the totals may be a few packets apart.
 */
#include <inttypes.h>
#include <stdlib.h>

#include <rte_telemetry.h>

#include "lb_hdr.h"
#include "mux_app.h"
#include "mux_conn.h"
#include "mux_gen.h"
#include "mux_route.h"

#define RD(x) (*(const volatile uint64_t *)&(x))

void
mux_stats_total(const struct mux_app *app, struct mux_counters *sum)
{
	const uint64_t *src;
	uint64_t *dst = (uint64_t *)sum;
	size_t i, n = sizeof(*sum) / sizeof(uint64_t);
	uint16_t w;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < app->n_workers; w++) {
		src = (const uint64_t *)&app->workers[w].cnt;
		for (i = 0; i < n; i++)
			dst[i] += RD(src[i]);
	}
}

uint64_t
mux_stats_conns(const struct mux_app *app)
{
	uint64_t n = 0;
	uint16_t w;

	for (w = 0; w < app->n_workers; w++)
		n += mux_conn_count(app->workers[w].conn);
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

		out->pkts += RD(c->pkts);
		out->bytes += RD(c->bytes);
		out->new_conns += RD(c->new_conns);
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

static const char *
ip4(rte_be32_t a, char *buf)
{
	const uint8_t *b = (const uint8_t *)&a;

	sprintf(buf, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
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
	char a[16], b[16];
	uint32_t s, i;
	int d;

	mux_stats_total(app, &t);
	fprintf(out, "sluice-mux summary (flow table version %" PRIu64 ", %u workers)\n",
		g->version, app->n_workers);
	fprintf(out, "  received     %12" PRIu64 " packets %14" PRIu64 " bytes\n", t.rx_pkts,
		t.rx_bytes);
	fprintf(out, "  forwarded    %12" PRIu64 " packets %14" PRIu64 " bytes (inner)\n",
		t.fwd_pkts, t.fwd_bytes);
	fprintf(out, "  transmitted  %12" PRIu64 " packets\n", t.tx_pkts);
	fprintf(out,
		"  icmp errors forwarded %" PRIu64 ", echo replies %" PRIu64
		", arp replies %" PRIu64 ", frag-needed sent %" PRIu64 ", vip probes %" PRIu64 "\n",
		t.icmp_err_fwd, t.echo_replies, t.arp_replies, t.too_big_sent, t.vip_probes);
	fprintf(out,
		"  connections: new %" PRIu64 ", hits %" PRIu64 ", table full %" PRIu64
		", live %" PRIu64 "\n",
		t.conn_new, t.conn_hit, t.conn_full, mux_stats_conns(app));
	for (s = 0; s < g->n_services; s++) {
		const struct mux_service *sv = &g->services[s];

		flow_total(app, 0, sv->sid, &fc);
		fprintf(out,
			"  service %s:%u/%s  packets %" PRIu64 " bytes %" PRIu64 " new %" PRIu64
			"\n",
			ip4(sv->key.vip.a32[0], a), rte_be_to_cpu_16(sv->key.port),
			proto_name(sv->key.proto), fc.pkts, fc.bytes, fc.new_conns);
		for (i = 0; i < sv->n_backends; i++) {
			const struct mux_backend *be = &g->backends[sv->first_backend + i];

			flow_total(app, 1, be->sid, &fc);
			fprintf(out,
				"    backend %s:%u via %s  packets %" PRIu64 " bytes %" PRIu64
				" new %" PRIu64 "\n",
				ip4(be->dip, a), rte_be_to_cpu_16(be->port), ip4(be->host, b),
				fc.pkts, fc.bytes, fc.new_conns);
		}
	}
	fprintf(out, "  drops:");
	for (d = 1; d < LB_DROP_MAX; d++)
		if (t.drops[d] != 0)
			fprintf(out, " %s=%" PRIu64, lb_drop_name(d), t.drops[d]);
	fprintf(out, "\n");
	mux_route_print(app->route, out);
}

void
mux_stats_json(const struct mux_app *app, FILE *out)
{
	const struct mux_gen *g = app->ctx.gen;
	struct mux_counters t;
	struct mux_flow_counters fc;
	char a[16], b[16];
	uint32_t s, i;
	int d;

	mux_stats_total(app, &t);
	fprintf(out,
		"{\"version\":%" PRIu64 ",\"workers\":%u,\"rx_pkts\":%" PRIu64
		",\"rx_bytes\":%" PRIu64 ",\"fwd_pkts\":%" PRIu64 ",\"fwd_bytes\":%" PRIu64
		",\"tx_pkts\":%" PRIu64 ",\"icmp_err_fwd\":%" PRIu64 ",\"echo_replies\":%" PRIu64
		",\"arp_replies\":%" PRIu64 ",\"too_big_sent\":%" PRIu64 ",\"conn_new\":%" PRIu64
		",\"conn_hit\":%" PRIu64 ",\"conn_full\":%" PRIu64 ",\"conn_swept\":%" PRIu64
		",\"conn_live\":%" PRIu64 ",\"vip_probes\":%" PRIu64,
		g->version, app->n_workers, t.rx_pkts, t.rx_bytes, t.fwd_pkts, t.fwd_bytes,
		t.tx_pkts, t.icmp_err_fwd, t.echo_replies, t.arp_replies, t.too_big_sent,
		t.conn_new, t.conn_hit, t.conn_full, t.conn_swept, mux_stats_conns(app),
		t.vip_probes);
	fprintf(out, ",\"drops\":{");
	for (d = 1; d < LB_DROP_MAX; d++)
		fprintf(out, "%s\"%s\":%" PRIu64, d > 1 ? "," : "", lb_drop_name(d), t.drops[d]);
	fprintf(out, "},\"per_worker_rx\":[");
	for (i = 0; i < app->n_workers; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", RD(app->workers[i].cnt.rx_pkts));
	fprintf(out, "],\"services\":[");
	for (s = 0; s < g->n_services; s++) {
		const struct mux_service *sv = &g->services[s];

		flow_total(app, 0, sv->sid, &fc);
		fprintf(out,
			"%s{\"vip\":\"%s\",\"port\":%u,\"protocol\":\"%s\",\"pkts\":%" PRIu64
			",\"bytes\":%" PRIu64 ",\"new_conns\":%" PRIu64 ",\"backends\":[",
			s ? "," : "", ip4(sv->key.vip.a32[0], a), rte_be_to_cpu_16(sv->key.port),
			proto_name(sv->key.proto), fc.pkts, fc.bytes, fc.new_conns);
		for (i = 0; i < sv->n_backends; i++) {
			const struct mux_backend *be = &g->backends[sv->first_backend + i];

			flow_total(app, 1, be->sid, &fc);
			fprintf(out,
				"%s{\"dip\":\"%s\",\"port\":%u,\"host\":\"%s\",\"pkts\":%" PRIu64
				",\"bytes\":%" PRIu64 ",\"new_conns\":%" PRIu64 "}",
				i ? "," : "", ip4(be->dip, a), rte_be_to_cpu_16(be->port),
				ip4(be->host, b), fc.pkts, fc.bytes, fc.new_conns);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "]");
	mux_route_json(app->route, out);
	fprintf(out, "}\n");
}

/* ---- telemetry: read-only, paged where lists can be long ---- */

static struct mux_app *tel_app;

#define TEL_PAGE 64

/* Telemetry names allow only [A-Za-z0-9_/]: 192.0.2.10 is written 192_0_2_10. */
static const char *
tel_ip4(rte_be32_t a, char *buf)
{
	const uint8_t *b = (const uint8_t *)&a;

	sprintf(buf, "%u_%u_%u_%u", b[0], b[1], b[2], b[3]);
	return buf;
}

static int
tel_stats_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct mux_counters t;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	mux_stats_total(tel_app, &t);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "version", tel_app->ctx.gen->version);
	rte_tel_data_add_dict_u64(d, "workers", tel_app->n_workers);
	rte_tel_data_add_dict_u64(d, "rx_pkts", t.rx_pkts);
	rte_tel_data_add_dict_u64(d, "rx_bytes", t.rx_bytes);
	rte_tel_data_add_dict_u64(d, "fwd_pkts", t.fwd_pkts);
	rte_tel_data_add_dict_u64(d, "fwd_bytes", t.fwd_bytes);
	rte_tel_data_add_dict_u64(d, "tx_pkts", t.tx_pkts);
	rte_tel_data_add_dict_u64(d, "icmp_err_fwd", t.icmp_err_fwd);
	rte_tel_data_add_dict_u64(d, "echo_replies", t.echo_replies);
	rte_tel_data_add_dict_u64(d, "arp_replies", t.arp_replies);
	rte_tel_data_add_dict_u64(d, "vip_probes", t.vip_probes);
	rte_tel_data_add_dict_u64(d, "too_big_sent", t.too_big_sent);
	rte_tel_data_add_dict_u64(d, "conn_new", t.conn_new);
	rte_tel_data_add_dict_u64(d, "conn_hit", t.conn_hit);
	rte_tel_data_add_dict_u64(d, "conn_full", t.conn_full);
	rte_tel_data_add_dict_u64(d, "conn_live", mux_stats_conns(tel_app));
	rte_tel_data_add_dict_u64(d, "idle_sleeps", t.idle_sleeps);
	/* 22.11 telemetry has no booleans: 1 or 0. */
	rte_tel_data_add_dict_u64(d, "managed", tel_app->cfg.managed);
	rte_tel_data_add_dict_u64(d, "manager_connected",
		tel_app->member != NULL && tel_app->member_connected(tel_app->member));
	return 0;
}

static int
tel_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct mux_counters t;
	int r;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	mux_stats_total(tel_app, &t);
	rte_tel_data_start_dict(d);
	for (r = 1; r < LB_DROP_MAX; r++)
		rte_tel_data_add_dict_u64(d, lb_drop_name(r), t.drops[r]);
	return 0;
}

/* /sluice/services,PAGE: services PAGE*64 .. +63 with their counters. */
static int
tel_services_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct mux_gen *g = tel_app->ctx.gen;
	struct mux_flow_counters fc;
	unsigned long page = params && *params ? strtoul(params, NULL, 10) : 0;
	uint32_t s;
	char a[16], key[48];

	RTE_SET_USED(cmd);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "services", g->n_services);
	rte_tel_data_add_dict_u64(d, "page", page);
	for (s = (uint32_t)(page * TEL_PAGE); s < g->n_services && s < (page + 1) * TEL_PAGE; s++) {
		const struct mux_service *sv = &g->services[s];
		struct rte_tel_data *c = rte_tel_data_alloc();

		if (c == NULL)
			return -ENOMEM;
		/* 22.11 nests arrays only: [pkts, bytes, new_conns, backends, index]. */
		flow_total(tel_app, 0, sv->sid, &fc);
		rte_tel_data_start_array(c, RTE_TEL_U64_VAL);
		rte_tel_data_add_array_u64(c, fc.pkts);
		rte_tel_data_add_array_u64(c, fc.bytes);
		rte_tel_data_add_array_u64(c, fc.new_conns);
		rte_tel_data_add_array_u64(c, sv->n_backends);
		rte_tel_data_add_array_u64(c, s);
		snprintf(key, sizeof(key), "%s_%u_%s", tel_ip4(sv->key.vip.a32[0], a),
			rte_be_to_cpu_16(sv->key.port), proto_name(sv->key.proto));
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

/* /sluice/backends,SERVICE_INDEX: a service's backends (first 64). */
static int
tel_backends_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct mux_gen *g = tel_app->ctx.gen;
	struct mux_flow_counters fc;
	unsigned long s = params && *params ? strtoul(params, NULL, 10) : 0;
	char a[16], key[48];
	uint32_t i;

	RTE_SET_USED(cmd);
	if (s >= g->n_services)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (i = 0; i < g->services[s].n_backends && i < TEL_PAGE; i++) {
		uint32_t id = g->services[s].first_backend + i;
		const struct mux_backend *be = &g->backends[id];
		struct rte_tel_data *c = rte_tel_data_alloc();

		if (c == NULL)
			return -ENOMEM;
		/* [pkts, bytes, new_conns, host PA (host order), weight is zero] */
		flow_total(tel_app, 1, be->sid, &fc);
		rte_tel_data_start_array(c, RTE_TEL_U64_VAL);
		rte_tel_data_add_array_u64(c, fc.pkts);
		rte_tel_data_add_array_u64(c, fc.bytes);
		rte_tel_data_add_array_u64(c, fc.new_conns);
		rte_tel_data_add_array_u64(c, rte_be_to_cpu_32(be->host));
		rte_tel_data_add_array_u64(c, be->weight_zero);
		snprintf(
			key, sizeof(key), "%s_%u", tel_ip4(be->dip, a), rte_be_to_cpu_16(be->port));
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

static int
tel_flow_table_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct mux_gen *g = tel_app->ctx.gen;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
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

int
mux_telemetry_register(struct mux_app *app)
{
	tel_app = app;
	if (rte_telemetry_register_cmd("/sluice/stats", tel_stats,
		    "Mux totals: packets, bytes, connections, flow table version, managed "
		    "and manager_connected (1/0). No parameters.") != 0 ||
		rte_telemetry_register_cmd("/sluice/drops", tel_drops,
			"Dropped packets by reason. No parameters.") != 0 ||
		rte_telemetry_register_cmd("/sluice/services", tel_services,
			"Services, 64 per page: {VIP_PORT_PROTO: [pkts, bytes, new_conns, "
			"backends, index]}. Parameter: page.") != 0 ||
		rte_telemetry_register_cmd("/sluice/backends", tel_backends,
			"Backends of a service: {DIP_PORT: [pkts, bytes, new_conns, host, "
			"weight_zero]}. Parameter: service index.") != 0 ||
		rte_telemetry_register_cmd("/sluice/flow_table", tel_flow_table,
			"Flow table version and sizes. No parameters.") != 0)
		return -1;
	return 0;
}
