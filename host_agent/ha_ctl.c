/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replacing the agent's mapping while it runs (SIGHUP today, the manager's
 * COMMIT later): the new map is built beside the old one, published with
 * one atomic pointer store, and the old one is freed after the lcore has
 * reported an RCU quiescent state (or gone offline to nap).
 */
#include <stdlib.h>
#include <string.h>

#include <rte_rcu_qsbr.h>

#include "ha_agent.h"
#include "ha_ctl.h"
#include "lb_log.h"

static void
warn_unreloadable(const struct ha_config *a, const struct ha_config *b)
{
	uint16_t v;
	int i, same = a->pa == b->pa && a->n_muxes == b->n_muxes && a->n_vms == b->n_vms &&
		      a->mss_clamp == b->mss_clamp && a->busy_poll == b->busy_poll &&
		      a->idle_sleep_us == b->idle_sleep_us && a->n_eal_args == b->n_eal_args &&
		      memcmp(a->muxes, b->muxes, sizeof(a->muxes[0]) * a->n_muxes) == 0 &&
		      memcmp(a->next_hop_mac, b->next_hop_mac, 6) == 0 &&
		      strcmp(a->uplink_devargs, b->uplink_devargs) == 0;

	for (i = 0; same && i < a->n_eal_args; i++)
		same = strcmp(a->eal_args[i], b->eal_args[i]) == 0;
	for (v = 0; same && v < a->n_vms; v++)
		same = a->vms[v].dip == b->vms[v].dip &&
		       strcmp(a->vms[v].name, b->vms[v].name) == 0 &&
		       strcmp(a->vms[v].devargs, b->vms[v].devargs) == 0 &&
		       memcmp(a->vms[v].mac, b->vms[v].mac, 6) == 0;
	if (!same)
		LB_WARN("reload applies the flow table only; restart to apply the other changes");
}

int
ha_reload(struct ha_worker *w, const char *path, const struct ha_config *running)
{
	const struct ha_map *old = w->map;
	struct ha_config nc;
	struct lb_cfg_err err;
	struct ha_map *m;
	char errbuf[256];
	int rc;

	rc = ha_config_load(&nc, path, &err);
	if (rc != 0) {
		LB_ERR("reload refused: %s", err.msg);
		return rc;
	}
	warn_unreloadable(running, &nc);
	m = calloc(1, sizeof(*m));
	if (m == NULL || ha_map_build(m, &nc, errbuf, sizeof(errbuf)) != 0) {
		LB_ERR("reload refused: %s: %s", path, m ? errbuf : "out of memory");
		if (m != NULL)
			ha_map_free(m);
		free(m);
		ha_config_free(&nc);
		return -1;
	}
	m->version = old->version + 1;
	__atomic_store_n(&w->map, m, __ATOMIC_RELEASE);
	rte_rcu_qsbr_synchronize(w->qsv, RTE_QSBR_THRID_INVALID);
	ha_map_free((struct ha_map *)(uintptr_t)old);
	free((void *)(uintptr_t)old);
	LB_INFO("reloaded flow table: version %llu, %u load-balanced endpoints",
		(unsigned long long)m->version, m->n_lb);
	ha_config_free(&nc);
	return 0;
}
