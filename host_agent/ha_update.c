/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replacing the agent's mapping while it runs, on SIGHUP (standalone) or
 * the manager's COMMIT (managed): the new map is built beside the old one,
 * published with one atomic pointer store, and the old one is freed after
 * the lcore has reported an RCU quiescent state (or gone offline to nap).
 * The map holds no stable ids, so unlike the mux's generations a build
 * does not depend on the map it replaces.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_rcu_qsbr.h>
#include <rte_telemetry.h>

#include "dp_counters.h"
#include "dp_status.h"
#include "ha_stats.h"
#include "ha_agent.h"
#include "ha_update.h"
#include "lb_err.h"
#include "lb_log.h"
#include "lb_member.h"

static void
warn_unreloadable(const struct ha_config *a, const struct ha_config *b)
{
	uint16_t v;
	int i, same = a->pa == b->pa && a->n_muxes == b->n_muxes && a->n_vms == b->n_vms &&
		      a->mss_clamp == b->mss_clamp && a->busy_poll == b->busy_poll &&
		      a->idle_sleep_us == b->idle_sleep_us && a->n_eal_args == b->n_eal_args &&
		      memcmp(a->muxes, b->muxes, sizeof(a->muxes[0]) * a->n_muxes) == 0 &&
		      a->has_pa6 == b->has_pa6 && lb_addr_eq(&a->pa6, &b->pa6) &&
		      a->n_muxes6 == b->n_muxes6 &&
		      memcmp(a->muxes6, b->muxes6, sizeof(a->muxes6[0]) * a->n_muxes6) == 0 &&
		      a->n_probers == b->n_probers && a->n_probers6 == b->n_probers6 &&
		      memcmp(a->probers, b->probers, sizeof(a->probers)) == 0 &&
		      memcmp(a->probers6, b->probers6, sizeof(a->probers6)) == 0 &&
		      a->has_gateway6 == b->has_gateway6 &&
		      lb_addr_eq(&a->gateway6, &b->gateway6) && a->mss_clamp6 == b->mss_clamp6 &&
		      memcmp(a->next_hop_mac, b->next_hop_mac, 6) == 0 &&
		      strcmp(a->uplink_devargs, b->uplink_devargs) == 0;

	for (i = 0; same && i < a->n_eal_args; i++)
		same = strcmp(a->eal_args[i], b->eal_args[i]) == 0;
	for (v = 0; same && v < a->n_vms; v++)
		same = a->vms[v].dip == b->vms[v].dip && a->vms[v].has_dip6 == b->vms[v].has_dip6 &&
		       lb_addr_eq(&a->vms[v].dip6, &b->vms[v].dip6) &&
		       strcmp(a->vms[v].name, b->vms[v].name) == 0 &&
		       strcmp(a->vms[v].devargs, b->vms[v].devargs) == 0 &&
		       memcmp(a->vms[v].mac, b->vms[v].mac, 6) == 0;
	if (!same)
		LB_WARN("reload applies the flow table only; restart to apply the other changes");
}

/* A map of ours (from calloc) with its tables; NULL: none. */
static void
map_destroy(struct ha_map *m)
{
	if (m == NULL)
		return;
	ha_map_free(m);
	free(m);
}

void
ha_map_publish(struct ha_update *u, struct ha_map *m)
{
	struct ha_worker *w = u->w;
	struct ha_map *old;

	pthread_mutex_lock(&u->map_lock);
	old = (struct ha_map *)(uintptr_t)w->map;
	__atomic_store_n(&w->map, m, __ATOMIC_RELEASE);
	/* The lcore finishes the loop that loaded the old pointer first. */
	rte_rcu_qsbr_synchronize(w->qsv, RTE_QSBR_THRID_INVALID);
	map_destroy(old);
	pthread_mutex_unlock(&u->map_lock);
}

int
ha_reload(struct ha_update *u)
{
	const struct ha_map *old = u->w->map;
	struct ha_config nc;
	struct lb_cfg_err err;
	struct ha_map *m;
	char errbuf[256];
	int rc;

	rc = ha_config_load(&nc, u->path, &err);
	if (rc != 0) {
		LB_ERR("reload refused: %s", err.msg);
		return rc;
	}
	warn_unreloadable(u->cfg, &nc);
	if (u->cfg->managed) {
		if (!nc.managed)
			LB_WARN("%s: no manager group any more; restart to run standalone",
				u->path);
		LB_INFO("managed: the flow table comes from the manager");
		ha_config_free(&nc);
		return 0;
	}
	if (nc.managed) {
		/* Its flow table is dropped: applying it would empty the mapping. */
		LB_ERR("reload refused: %s: manager: switching to managed mode needs a restart",
			u->path);
		ha_config_free(&nc);
		return -1;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL || ha_map_build(m, &nc, errbuf, sizeof(errbuf)) != 0) {
		LB_ERR("reload refused: %s: %s", u->path, m ? errbuf : "out of memory");
		map_destroy(m);
		ha_config_free(&nc);
		return -1;
	}
	m->version = old->version + 1;
	ha_map_publish(u, m);
	LB_INFO("reloaded flow table: version %llu, %u load-balanced endpoints",
		(unsigned long long)m->version, m->n_lb);
	ha_config_free(&nc);
	return 0;
}

/* ---- managed mode: the member's callbacks ---- */

static void *
member_build(void *arg, const struct lb_ftable *next, uint64_t version, char *err, size_t len)
{
	struct ha_update *u = arg;
	struct ha_map *m = lb_zalloc(sizeof(*m), NULL, err, len);

	if (m == NULL)
		return NULL;
	if (ha_map_compile(m, u->cfg, next, err, len) != 0) {
		map_destroy(m);
		return NULL;
	}
	m->version = version;
	return m;
}

static void
member_publish(void *arg, void *built, uint64_t version)
{
	struct ha_update *u = arg;
	struct ha_map *m = built;

	m->version = version;
	ha_map_publish(u, m);
	LB_INFO("managed: applied flow table version %llu: %u load-balanced endpoints",
		(unsigned long long)version, m->n_lb);
}

static void
member_discard(void *arg, void *built)
{
	RTE_SET_USED(arg);
	map_destroy(built);
}

/* STATUS: the list's counters with a place there, the drops' sum, the backends' load. */
static uint32_t
member_counters(void *arg, struct lb_counter *out, uint32_t max)
{
	const struct ha_worker *w = ((const struct ha_update *)arg)->w;
	struct dp_status st = {0};

#define S(name, show, status, ...) dp_status_set(&st, status, #name, DP_RD(w->cnt.name));
	HA_COUNTERS(S)
#undef S
	struct ha_update *u = arg;
	uint32_t n;

	dp_status_set(&st, HA_STATUS_DROPS, "drops", dp_drops_total(w->cnt.drops));
	n = dp_status_put(&st, out, max);
	pthread_mutex_lock(&u->map_lock);
	n += ha_stats_load_status(w, out + n, max - n);
	pthread_mutex_unlock(&u->map_lock);
	return n;
}

const struct lb_member_ops ha_member_ops = {
	.build = member_build,
	.publish = member_publish,
	.discard = member_discard,
	.counters = member_counters,
};

/* ---- telemetry ---- */

static struct ha_update *tel_upd;

/* Telemetry runs in its own thread, not an RCU reader: hold the map. */
static int
tel_flow_table(
	const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	pthread_mutex_lock(&tel_upd->map_lock);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "version", tel_upd->w->map->version);
	rte_tel_data_add_dict_u64(d, "endpoints", tel_upd->w->map->n_lb);
	/* 22.11 telemetry has no booleans: 1 or 0. */
	rte_tel_data_add_dict_u64(d, "managed", tel_upd->cfg->managed);
	rte_tel_data_add_dict_u64(d, "manager_connected", dp_member_connected(&tel_upd->member));
	pthread_mutex_unlock(&tel_upd->map_lock);
	return 0;
}

int
ha_update_telemetry_register(struct ha_update *u)
{
	tel_upd = u;
	return DP_TEL_REGISTER("/sluice/agent/flow_table", tel_flow_table,
		"Mapping version, load-balanced endpoints, managed and manager_connected "
		"(1/0). No parameters.");
}
