/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running mux as one object, for main, the summary and telemetry;
 * mux_app.c starts it.
 */
#ifndef MUX_APP_H
#define MUX_APP_H

#include <pthread.h>
#include <stdio.h>

#include "dp_counters.h"
#include "dp_member.h"
#include "mux_config.h"
#include "mux_port.h"
#include "mux_worker.h"

struct mux_route;
struct mux_service;

struct mux_app {
	struct mux_config cfg;
	struct mux_ctx ctx;
	struct mux_port ports[MUX_MAX_PORTS];
	uint16_t n_workers;
	struct mux_worker *workers; /* [n_workers] */
	pthread_mutex_t gen_lock;   /* telemetry vs. generation swaps; never a worker */
	uint64_t *be_freed_at;	    /* [cap_backends]: TSC when a backend sid was removed, or 0 */
	uint64_t *svc_freed_at;	    /* [cap_services]: ... a service sid */
	/* Counters at the moment an id was (re)assigned: [cap_backends], [cap_services]. */
	struct mux_flow_counters *be_base;
	struct mux_flow_counters *svc_base;
	struct mux_lim_base *lim_base; /* [cap_services]: ... its rules' counters (mux_limit.h) */
	/*
	 * The hash seed keys the connection tables: it may change only while
	 * no generation with a service has run (a managed mux's version 0).
	 */
	bool seed_fixed;
	/* Managed mode (cfg.managed): the member of the manager's commit, and its id. */
	struct dp_member member;
	char member_id[LB_FTABLE_ID_LEN];
	/* The "bgp" group: announcements through the speaker (mux_route.h), or NULL. */
	struct mux_route *route;
};

/*
 * After EAL and the ports: the first generation (the file's table, or an
 * empty one at version 0 when managed) and its RCU state, the settings
 * every worker reads, the pools of outer fragmentation (headers from pool),
 * the workers (not launched yet), telemetry. With exit_on_eof every port
 * must read rx_pcap files only; *eof_pkts gets their packets. Returns 0,
 * or -1 with errbuf.
 */
int mux_app_start(struct mux_app *app, struct rte_mempool *pool, bool exit_on_eof,
	uint64_t *eof_pkts, char *errbuf, size_t len);

/* A service's (backend == 0) or backend's counters summed over workers, since start. */
void mux_stats_flow_raw(
	const struct mux_app *app, int backend, uint32_t sid, struct mux_flow_counters *out);

/*
 * The same since the id was given to this service or backend (what the
 * summary, telemetry and metrics show: a reused id starts from zero).
 */
void mux_stats_flow(
	const struct mux_app *app, int backend, uint32_t sid, struct mux_flow_counters *out);

/* Sum of every worker's counters. */
void mux_stats_total(const struct mux_app *app, struct mux_counters *sum);

/* Live connection-table entries over all workers. */
uint64_t mux_stats_conns(const struct mux_app *app);

/* Backend id of service sv: its DIP as text, of the service's family (LB_ADDR_STRLEN). */
const char *mux_stats_dip(
	const struct mux_gen *g, const struct mux_service *sv, uint32_t id, char *buf);

/* Human-readable summary: totals, per service and backend, drops by reason. */
void mux_stats_print(const struct mux_app *app, FILE *out);

/* The same as the members of one JSON object (without its braces). */
void mux_stats_json(const struct mux_app *app, FILE *out);

/* Both, as the first section of the daemon's report (dp_report()). */
struct dp_section mux_stats_section(const struct mux_app *app);

/*
 * Every metric in Prometheus' text format (lb_metrics_render_fn: arg is
 * the mux_app), for GET /metrics; run under gen_lock (dp_metrics_start()).
 */
void mux_metrics_render(void *arg, FILE *out);

/* Register the read-only /sluice/... telemetry commands. */
int mux_telemetry_register(struct mux_app *app);

#endif /* MUX_APP_H */
