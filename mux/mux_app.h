/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running mux as one object, for main, the summary and telemetry.
 */
#ifndef MUX_APP_H
#define MUX_APP_H

#include <pthread.h>
#include <stdio.h>

#include "mux_config.h"
#include "mux_port.h"
#include "mux_worker.h"

struct lb_member;
struct mux_route;

struct mux_app {
	struct mux_config cfg;
	struct mux_ctx ctx;
	struct mux_port ports[MUX_MAX_PORTS];
	uint16_t n_workers;
	struct mux_worker *workers; /* [n_workers] */
	struct rte_mempool *pool;
	pthread_mutex_t gen_lock; /* telemetry vs. generation swaps; never a worker */
	uint64_t *be_freed_at;	  /* [cap_backends]: TSC when a backend sid was removed, or 0 */
	/* Counters at the moment an id was (re)assigned: [cap_backends], [cap_services]. */
	struct mux_flow_counters *be_base;
	struct mux_flow_counters *svc_base;
	/*
	 * The hash seed keys the connection tables: it may change only while
	 * no generation with a service has run (a managed mux's version 0).
	 */
	bool seed_fixed;
	/*
	 * Managed mode (cfg.managed): the member of the manager's commit, set
	 * by main.c, which alone links the member library, hence the function
	 * pointer. Both are read by telemetry under gen_lock.
	 */
	struct lb_member *member;
	bool (*member_connected)(const struct lb_member *m);
	/* The "bgp" group: announcements through the speaker (mux_route.h), or NULL. */
	struct mux_route *route;
};

struct mux_gen;
struct lb_member_ops;

/*
 * The mux's side of the manager's commit (arg: the struct mux_app): build
 * a generation for a table off the fast path, publish it, or throw it away.
 * Only the member's thread calls them, and in managed mode nothing else
 * replaces the generation.
 */
extern const struct lb_member_ops mux_member_ops;

/* Publish ng, wait an RCU grace period, free the generation it replaced. */
void mux_gen_publish(struct mux_app *app, struct mux_gen *ng);

/*
 * Re-read the configuration file and apply its flow table (SIGHUP). A
 * managed mux only checks the file: its flow table comes from the manager.
 */
int mux_reload(struct mux_app *app);

/* A service's (backend == 0) or backend's counters summed over workers, since start. */
void mux_stats_flow_raw(
	const struct mux_app *app, int backend, uint32_t sid, struct mux_flow_counters *out);

/* Sum of every worker's counters. */
void mux_stats_total(const struct mux_app *app, struct mux_counters *sum);

/* Live connection-table entries over all workers. */
uint64_t mux_stats_conns(const struct mux_app *app);

/* Human-readable summary: totals, per service and backend, drops by reason. */
void mux_stats_print(const struct mux_app *app, FILE *out);

/* The same as one JSON object. */
void mux_stats_json(const struct mux_app *app, FILE *out);

/* Register the read-only /sluice/... telemetry commands. */
int mux_telemetry_register(struct mux_app *app);

#endif /* MUX_APP_H */
