/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's Prometheus metrics (GET /metrics, lb_metrics.h): the
 * counters of ha_counters.h (its metric column), the drops by reason, each
 * VM's packets both ways, and the mapping the agent runs. The lcore writes
 * its counters as plain words; this only reads them (dp_counters.h), on
 * nng's thread, with map_lock held against a mapping swap.
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "ha_agent.h"
#include "ha_stats.h"
#include "ha_update.h"
#include "lb_prom.h"

static void
vm_family(
	struct lb_prom *p, const struct ha_update *u, const char *direction, const uint64_t *count)
{
	const struct ha_worker *w = u->w;
	char l[192], dip[INET6_ADDRSTRLEN];
	uint16_t v;

	for (v = 0; v < w->n_vms; v++) {
		const struct ha_vm_cfg *vc = &u->cfg->vms[v];

		/* Its IPv4 DIP, or its IPv6 one when it has none (not 0.0.0.0). */
		if (vc->dip != 0 || !vc->has_dip6)
			inet_ntop(AF_INET, &vc->dip, dip, sizeof(dip));
		else
			inet_ntop(AF_INET6, vc->dip6.a8, dip, sizeof(dip));
		lb_prom_sample(p,
			lb_prom_labels(l, sizeof(l), "vm", u->cfg->vms[v].name, "dip", dip,
				"direction", direction, NULL),
			DP_RD(count[v]));
	}
}

void
ha_metrics_render(void *arg, FILE *out)
{
	const struct ha_update *u = arg;
	const struct ha_worker *w = u->w;
	struct lb_prom p;

	lb_prom_init(&p, out, "sluice_");
#define M(name, show, status, help, metric) dp_prom_u64(&p, metric, help, DP_RD(w->cnt.name));
	HA_COUNTERS(M)
#undef M
	dp_prom_drops(&p, w->cnt.drops);
	lb_prom_family(&p, "vm_packets_total", LB_PROM_COUNTER,
		"Packets of each VM's port: from_vm (taken from it), to_vm (delivered to it).");
	vm_family(&p, u, "from_vm", w->vm_rx);
	vm_family(&p, u, "to_vm", w->vm_tx);
	lb_prom_one(&p, "flow_table_version", LB_PROM_GAUGE,
		"Version of the flow table the mapping was compiled from (managed: the manager's).",
		w->map->version);
	lb_prom_one(&p, "lb_endpoints", LB_PROM_GAUGE,
		"Load-balanced DIP:port endpoints on this host (the mapping's entries).",
		w->map->n_lb);
	lb_prom_one(&p, "managed", LB_PROM_GAUGE,
		"1 if the flow table comes from sluice-manager, 0 if from the file.",
		u->cfg->managed);
	lb_prom_one(&p, "manager_connected", LB_PROM_GAUGE,
		"1 while connected to sluice-manager (managed mode).",
		dp_member_connected(&u->member));
	lb_prom_one(&p, "worker_loops_total", LB_PROM_COUNTER,
		"Loops of the agent's lcore: an lcore that stops counting is stuck.",
		DP_RD(w->loops));
}
