/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Updating the agent: replacing the mapping while the lcore runs.
 * A standalone agent takes a new flow table from its file on SIGHUP
 * (ha_reload); a managed one from the manager's two-phase commit only
 * (ha_member_ops, called by the member's thread), and SIGHUP leaves the
 * mapping alone.
 */
#ifndef HA_UPDATE_H
#define HA_UPDATE_H

#include <pthread.h>
#include <stdbool.h>

#include "dp_member.h"
#include "ha_agent.h"

struct lb_member_ops;

struct ha_update {
	struct ha_worker *w;
	const struct ha_config *cfg; /* the running configuration */
	const char *path;	     /* its file, re-read on SIGHUP */
	pthread_mutex_t map_lock;    /* telemetry vs. map swaps; never the lcore */
	/* Managed mode (cfg->managed): the member of the manager's commit. */
	struct dp_member member;
};

/*
 * Re-read the file and apply its flow table to the running agent; other
 * changes need a restart (a warning says so). On a bad file nothing
 * changes and the reason is logged with file, line and field. A managed
 * agent only checks the file. Returns 0 or a negative code.
 */
int ha_reload(struct ha_update *u);

/*
 * Make m the running mapping: one atomic store, an RCU grace period for
 * the lcore, then the old map is freed. m must come from calloc().
 */
void ha_map_publish(struct ha_update *u, struct ha_map *m);

/* The agent's side of the manager's commit (arg: the struct ha_update). */
extern const struct lb_member_ops ha_member_ops;

/* Register /sluice/agent/flow_table (read-only). */
int ha_update_telemetry_register(struct ha_update *u);

#endif /* HA_UPDATE_H */
