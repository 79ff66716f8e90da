/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HA_STATS_H
#define HA_STATS_H

#include <arpa/inet.h>
#include <stdio.h>

#include "ha_agent.h"

void ha_stats_print(const struct ha_worker *w, const struct ha_config *cfg, FILE *out);

void ha_stats_json(const struct ha_worker *w, const struct ha_config *cfg, FILE *out);

/* Register /sluice/agent/stats (read-only). */
int ha_telemetry_register(const struct ha_worker *w);

#endif /* HA_STATS_H */
