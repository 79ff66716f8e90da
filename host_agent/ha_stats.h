/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HA_STATS_H
#define HA_STATS_H

#include <arpa/inet.h>
#include <stdio.h>

#include "dp_counters.h"
#include "ha_agent.h"

struct ha_update;

/* Summary: the counters, each VM's, the drops by reason. */
void ha_stats_print(const struct ha_worker *w, const struct ha_config *cfg, FILE *out);

/* The same as the members of one JSON object (without its braces). */
void ha_stats_json(const struct ha_worker *w, const struct ha_config *cfg, FILE *out);

/* Both, as the first section of the daemon's report (dp_report()). */
struct dp_section ha_stats_section(const struct ha_update *u);

/*
 * Every metric in Prometheus' text format (lb_metrics_render_fn: arg is
 * the ha_update), for GET /metrics; takes map_lock (ha_metrics.c).
 */
void ha_metrics_render(void *arg, FILE *out);

/* Register /sluice/agent/stats (read-only). */
int ha_telemetry_register(const struct ha_worker *w);

#endif /* HA_STATS_H */
