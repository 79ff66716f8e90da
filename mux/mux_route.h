/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's side of routing: it decides what this mux announces and hands
 * that to its speaker (mux_speaker.c), which makes BIRD announce it.
 *
 *   mux_route_create()  before EAL: checks the bgp group against this host
 *                       (the local address is ours, BIRD takes the
 *                       generated configuration: "bird -p"), maps the
 *                       shared page and forks the speaker, while the mux
 *                       has no thread that a fork could catch mid-lock.
 *   mux_route_start()   after the workers run: the route thread and the
 *                       /sluice/route telemetry command.
 *   the route thread    every 100 ms: reads the running table's VIPs (under
 *                       gen_lock, as telemetry does), each worker's loop
 *                       counter and the ports' links; feeds them to the
 *                       decision (mux_announce.c); publishes the set to
 *                       announce, and bumps the heartbeat only if every
 *                       worker's loop moved since the last pass and every
 *                       port is up. A mux that freezes (SIGSTOP, a stuck
 *                       lcore) stops the heartbeat, and the speaker, which
 *                       does not freeze with it, withdraws.
 *   SIGTERM, SIGINT     land in mux_route_quit_flag(), not in the workers'
 *                       quit: the route thread withdraws everything, waits
 *                       (bounded) until the speaker reports BIRD runs the
 *                       empty set, keeps the workers forwarding for
 *                       drain_time after the last moment a route was up on
 *                       an established session (packets routed before the
 *                       withdrawal still arrive), and only then sets the
 *                       workers' quit. main.c goes on as without BGP.
 *   mux_route_stop(), mux_route_destroy()
 *                       join the thread; stop the speaker (BIRD goes down
 *                       with a Cease), reap it, remove the run folder.
 *
 * A managed mux's decision hears the manager two ways: its SyncState
 * notices (in sync, or fenced and why) through mux_route_sync() from the
 * member's thread, and the running table's drained list and withdrawn
 * VIPs, which the route thread reads with the table (docs/routing.md).
 */
#ifndef MUX_ROUTE_H
#define MUX_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "dp_counters.h"
#include "mux_bgp_cfg.h"

struct lb_route_state;
struct mux_app;
struct mux_route;

/*
 * Before EAL: validate cfg on this host, write BIRD's configuration into
 * the run folder (cfg->run_dir, or /run/sluice/<EAL file prefix>), and
 * fork the speaker. eal_args are the EAL arguments of the configuration
 * (for the file prefix); managed says whether a version 0 means "no table".
 * Returns NULL with the reason in err (naming the field where there is one).
 */
struct mux_route *mux_route_create(const struct mux_bgp_cfg *cfg, bool managed,
	const char *const *eal_args, int n_eal_args, char *err, size_t len);

/* What SIGTERM/SIGINT must set instead of the workers' quit (lb_signals_install). */
volatile bool *mux_route_quit_flag(struct mux_route *r);

/*
 * Start the route thread and register /sluice/route. The thread sets
 * app->ctx.quit once a shutdown has withdrawn and drained. Returns 0 or -1
 * with err.
 */
int mux_route_start(struct mux_route *r, struct mux_app *app, char *err, size_t len);

/* Join the route thread (after app->ctx.quit); the speaker keeps running. */
void mux_route_stop(struct mux_route *r);

/* Stop the speaker and BIRD, remove the run folder, free r. NULL: nothing. */
void mux_route_destroy(struct mux_route *r);

/*
 * The manager's word (the member's thread; any thread but a worker): in
 * sync from `version` on, or not and why. The next pass acts on it. NULL r:
 * nothing.
 */
void mux_route_sync(struct mux_route *r, bool in_sync, uint64_t version, const char *why);

/* STATUS: this mux's routes (mux_route_report.c). false when r is NULL. */
bool mux_route_status(struct mux_route *r, struct lb_route_state *out);

struct lb_prom;
/*
 * The BGP announcement state as Prometheus families (GET /metrics): per
 * VIP announced or not (the speaker's word), the mux-wide reason, the
 * sessions, the counts. NULL r: nothing (no "bgp" group).
 */
void mux_route_metrics(struct mux_route *r, struct lb_prom *p);

/*
 * The summary's lines and the stats JSON's "route" member
 * (",\"route\":{...}"), as a section of the daemon's report after the
 * counters (dp_report()).
 */
struct dp_section mux_route_section(struct mux_route *r);

#endif /* MUX_ROUTE_H */
