/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HA_STATS_H
#define HA_STATS_H

#include <arpa/inet.h>
#include <stdio.h>

#include "dp_counters.h"
#include "ha_agent.h"
#include "lb_codec.h"

struct ha_update;

/* Summary: the counters, each VM's, the drops by reason. */
void ha_stats_print(const struct ha_worker *w, const struct ha_config *cfg, FILE *out);

/* The same as the members of one JSON object (without its braces). */
void ha_stats_json(const struct ha_worker *w, const struct ha_config *cfg, FILE *out);

/*
 * The backends' load (ha_track.h): ',"conn_untracked":N,"backends":[...]'
 * for the JSON summary; into STATUS, "be.<id>.act" (active), ".new"
 * (opened) and ".fail" (refused + unanswered) per TCP backend, at most
 * max counters. The caller holds the mapping (map_lock, or the lcore gone).
 */
void ha_stats_load_json(const struct ha_worker *w, FILE *out);
uint32_t ha_stats_load_status(const struct ha_worker *w, struct lb_counter *out, uint32_t max);

/* Both, as the first section of the daemon's report (dp_report()). */
struct dp_section ha_stats_section(const struct ha_update *u);

/*
 * Every metric in Prometheus' text format (lb_metrics_render_fn: arg is
 * the ha_update), for GET /metrics; run under map_lock (dp_metrics_start()).
 */
void ha_metrics_render(void *arg, FILE *out);

/* Register /sluice/agent/stats (read-only). */
int ha_telemetry_register(const struct ha_worker *w);

#endif /* HA_STATS_H */
