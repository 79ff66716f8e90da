/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's Prometheus metrics (GET /metrics, lb_metrics.h): the totals
 * from the list in mux_counters.h (its metric column), the drops by
 * reason, the connection tables, the running flow table, and per service
 * and per backend packets, bytes and new connections, and per admission
 * rule its checks and outcomes (docs/protection.md), and the BGP
 * announcement state (mux_route_metrics).
 *
 * Read as telemetry reads: counters are plain per-worker words summed
 * here (dp_counters.h), never on a worker lcore; the generation is held
 * by gen_lock, the lock a replacement takes (this thread is no RCU
 * reader). Labels are the service (vip, port, proto) and the backend
 * (DIP:port): what the flow table holds, never a client's address.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include "lb_hdr.h"
#include "lb_prom.h"
#include "mux_app.h"
#include "mux_conn.h"
#include "mux_gen.h"
#include "mux_limit.h"
#include "mux_route.h"

/* The label set of a service: vip, port, proto. */
static const char *
svc_labels(const struct mux_service *sv, char *buf, size_t len)
{
	char vip[INET6_ADDRSTRLEN], port[8];

	inet_ntop(sv->key.af == LB_AF_INET6 ? AF_INET6 : AF_INET, &sv->key.vip, vip, sizeof(vip));
	snprintf(port, sizeof(port), "%u", lb_be16_to_cpu(sv->key.port));
	return lb_prom_labels(buf, len, "vip", vip, "port", port, "proto",
		sv->key.proto == LB_IPPROTO_TCP	  ? "tcp"
		: sv->key.proto == LB_IPPROTO_UDP ? "udp"
						  : "other",
		NULL);
}

/* ... and backend id's: the service's and backend="DIP:port" ("[DIP6]:port"). */
static const char *
be_labels(const char *svc, const struct mux_gen *g, const struct mux_service *sv, uint32_t id,
	char *buf, size_t len)
{
	char dip[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN + 10];
	bool v6 = sv->key.af == LB_AF_INET6;

	mux_stats_dip(g, sv, id, dip);
	snprintf(b, sizeof(b), "%s%s%s:%u", v6 ? "[" : "", dip, v6 ? "]" : "",
		lb_be16_to_cpu(g->backends[id].port));
	return lb_prom_labels_add(buf, len, svc, "backend", b);
}

enum flow_field { FLOW_PKTS, FLOW_BYTES, FLOW_NEW };

static uint64_t
flow_field(const struct mux_flow_counters *fc, enum flow_field f)
{
	return f == FLOW_PKTS ? fc->pkts : f == FLOW_BYTES ? fc->bytes : fc->new_conns;
}

/* One family per service (backends 0) or per backend: field of each. */
static void
flows(struct lb_prom *p, const struct mux_app *app, int backends, const char *name,
	const char *help, enum flow_field f)
{
	const struct mux_gen *g = app->ctx.gen;
	struct mux_flow_counters fc;
	char sl[160], bl[224];
	uint32_t s, i;

	lb_prom_family(p, name, LB_PROM_COUNTER, help);
	for (s = 0; s < g->n_services; s++) {
		const struct mux_service *sv = &g->services[s];

		svc_labels(sv, sl, sizeof(sl));
		if (!backends) {
			mux_stats_flow(app, 0, sv->sid, &fc);
			lb_prom_sample(p, sl, flow_field(&fc, f));
			continue;
		}
		for (i = 0; i < sv->n_backends; i++) {
			uint32_t id = sv->first_backend + i;

			mux_stats_flow(app, 1, g->backends[id].sid, &fc);
			lb_prom_sample(
				p, be_labels(sl, g, sv, id, bl, sizeof(bl)), flow_field(&fc, f));
		}
	}
}

enum lim_field { LIM_CHECKED, LIM_PASSED, LIM_WOULD_DENY, LIM_DENIED };

static uint64_t
lim_field(const struct mux_lim_cnt *c, enum lim_field f)
{
	return f == LIM_CHECKED	     ? c->checked
	       : f == LIM_PASSED     ? c->passed
	       : f == LIM_WOULD_DENY ? c->would_deny
				     : c->denied;
}

/*
 * One family per outcome: a sample per service rule (the service's labels
 * and rule="new_per_second" ...), then the mux-wide cap as its own family
 * (no service to label it with).
 */
static void
limits(struct lb_prom *p, const struct mux_app *app)
{
	static const struct {
		const char *rule, *mux, *help;
	} fam[] = {
		{"limit_rule_checks_total", "limit_mux_checks_total",
			"checked on a new connection"},
		{"limit_rule_passed_total", "limit_mux_passed_total", "checks passed"},
		{"limit_rule_would_deny_total", "limit_mux_would_deny_total",
			"checks failed in monitor mode (the connection went through)"},
		{"limit_rule_denied_total", "limit_mux_denied_total",
			"new connections refused in intercept mode"},
	};
	const struct mux_gen *g = app->ctx.gen;
	char sl[160], rl[224], help[128];
	struct mux_lim_cnt c;
	uint32_t s;
	unsigned f;
	int k;

	for (f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		snprintf(help, sizeof(help), "Admission rules of each service: %s.", fam[f].help);
		lb_prom_family(p, fam[f].rule, LB_PROM_COUNTER, help);
		for (s = 0; s < g->n_services; s++) {
			svc_labels(&g->services[s], sl, sizeof(sl));
			for (k = 0; k < LB_LIM_N; k++) {
				if (g->limits[s].rule[k].limit == 0)
					continue;
				mux_limit_sum(app->workers, app->n_workers, app->lim_base,
					g->services[s].sid, k, &c);
				lb_prom_sample(p,
					lb_prom_labels_add(
						rl, sizeof(rl), sl, "rule", lb_limit_kind_names[k]),
					lim_field(&c, (enum lim_field)f));
			}
		}
		if (g->mux_rate.limit == 0)
			continue;
		snprintf(help, sizeof(help), "The mux-wide cap mux_new_per_second: %s.",
			fam[f].help);
		mux_limit_sum(app->workers, app->n_workers, NULL, 0, LB_LIM_N, &c);
		lb_prom_one(p, fam[f].mux, LB_PROM_COUNTER, help, lim_field(&c, (enum lim_field)f));
	}
}

static void
workers(struct lb_prom *p, const struct mux_app *app)
{
	char l[32], w[8];
	uint16_t i;

	lb_prom_family(p, "worker_loops_total", LB_PROM_COUNTER,
		"Loops of each worker lcore: a worker that stops counting is stuck.");
	for (i = 0; i < app->n_workers; i++) {
		snprintf(w, sizeof(w), "%u", i);
		lb_prom_sample(p, lb_prom_labels(l, sizeof(l), "worker", w, NULL),
			DP_RD(app->workers[i].loops));
	}
	lb_prom_family(p, "worker_received_packets_total", LB_PROM_COUNTER,
		"Frames each worker took from its RX queues (the spread of RSS).");
	for (i = 0; i < app->n_workers; i++) {
		snprintf(w, sizeof(w), "%u", i);
		lb_prom_sample(p, lb_prom_labels(l, sizeof(l), "worker", w, NULL),
			DP_RD(app->workers[i].cnt.rx_pkts));
	}
}

void
mux_metrics_render(void *arg, FILE *out)
{
	struct mux_app *app = arg;
	const struct mux_gen *g = app->ctx.gen;
	struct mux_counters t;
	struct lb_prom p;
	uint64_t cap = 0;
	uint16_t w;

	lb_prom_init(&p, out, "sluice_");
	mux_stats_total(app, &t);
#define M(name, show, status, summary, help, metric) dp_prom_u64(&p, metric, help, t.name);
	MUX_COUNTERS(M)
#undef M
	dp_prom_drops(&p, t.drops);
	for (w = 0; w < app->n_workers; w++)
		cap += app->workers[w].conn->entries + app->workers[w].conn6->entries;
	lb_prom_one(&p, "conn_table_entries", LB_PROM_GAUGE,
		"Live entries of every worker's connection table.", mux_stats_conns(app));
	lb_prom_one(&p, "conn_table_capacity", LB_PROM_GAUGE,
		"Entries every worker's connection table can hold, together.", cap);
	lb_prom_one(&p, "flow_table_version", LB_PROM_GAUGE,
		"Version of the flow table the mux runs (managed: the manager's).", g->version);
	lb_prom_one(&p, "flow_table_services", LB_PROM_GAUGE, "Services in the running flow table.",
		g->n_services);
	lb_prom_one(&p, "flow_table_backends", LB_PROM_GAUGE, "Backends in the running flow table.",
		g->n_backends);
	lb_prom_one(&p, "managed", LB_PROM_GAUGE,
		"1 if the flow table comes from sluice-manager, 0 if from the file.",
		app->cfg.managed);
	lb_prom_one(&p, "manager_connected", LB_PROM_GAUGE,
		"1 while connected to sluice-manager (managed mode).",
		dp_member_connected(&app->member));
	lb_prom_one(&p, "workers", LB_PROM_GAUGE, "Worker lcores.", app->n_workers);
	workers(&p, app);
	flows(&p, app, 0, "service_packets_total", "Packets forwarded for each service.",
		FLOW_PKTS);
	flows(&p, app, 0, "service_bytes_total", "Inner IP bytes forwarded for each service.",
		FLOW_BYTES);
	flows(&p, app, 0, "service_new_connections_total",
		"New connections (connection-table entries made) of each service.", FLOW_NEW);
	flows(&p, app, 1, "backend_packets_total", "Packets forwarded to each backend.", FLOW_PKTS);
	flows(&p, app, 1, "backend_bytes_total", "Inner IP bytes forwarded to each backend.",
		FLOW_BYTES);
	flows(&p, app, 1, "backend_new_connections_total", "New connections given to each backend.",
		FLOW_NEW);
	limits(&p, app);
	mux_route_metrics(app->route, &p);
}
