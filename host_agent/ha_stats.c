/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's counters for operators: summary, JSON and telemetry. The
 * lcore writes them as plain words; these functions only read.
 */
#include <inttypes.h>
#include <stdio.h>

#include <rte_telemetry.h>

#include "ha_agent.h"
#include "ha_stats.h"

#define RD(x) (*(const volatile uint64_t *)&(x))

static const struct ha_worker *tel_w;

/* One counter per line: clang-format keeps this layout (not a mixed one). */
#define HA_COUNTERS(X)                                                                             \
	X(uplink_rx)                                                                               \
	X(decap)                                                                                   \
	X(vm_rx)                                                                                   \
	X(dsr)                                                                                     \
	X(passthrough)                                                                             \
	X(probe_in)                                                                                \
	X(probe_out)                                                                               \
	X(icmp_translated)                                                                         \
	X(mss_clamped)                                                                             \
	X(arp_replies)                                                                             \
	X(echo_replies)                                                                            \
	X(frags_in)                                                                                \
	X(reassembled)                                                                             \
	X(tx)

void
ha_stats_print(const struct ha_worker *w, const struct ha_config *cfg, FILE *out)
{
	char a[16];
	int d, v;

	fprintf(out, "sluice-agent summary (PA %s, flow table version %llu)\n",
		inet_ntop(AF_INET, &cfg->pa, a, sizeof(a)), (unsigned long long)w->map->version);
#define P(name) fprintf(out, "  %-16s %12" PRIu64 "\n", #name, RD(w->cnt.name));
	HA_COUNTERS(P)
#undef P
	for (v = 0; v < w->n_vms; v++)
		fprintf(out, "  vm %-8s %s  from VM %" PRIu64 ", to VM %" PRIu64 "\n",
			cfg->vms[v].name, inet_ntop(AF_INET, &cfg->vms[v].dip, a, sizeof(a)),
			RD(w->vm_rx[v]), RD(w->vm_tx[v]));
	fprintf(out, "  drops:");
	for (d = 1; d < LB_DROP_MAX; d++)
		if (RD(w->cnt.drops[d]) != 0)
			fprintf(out, " %s=%" PRIu64, lb_drop_name(d), RD(w->cnt.drops[d]));
	fprintf(out, "\n");
}

void
ha_stats_json(const struct ha_worker *w, const struct ha_config *cfg, FILE *out)
{
	char a[16];
	int d, v;

	fprintf(out, "{\"pa\":\"%s\",\"version\":%llu", inet_ntop(AF_INET, &cfg->pa, a, sizeof(a)),
		(unsigned long long)w->map->version);
#define J(name) fprintf(out, ",\"%s\":%" PRIu64, #name, RD(w->cnt.name));
	HA_COUNTERS(J)
#undef J
	fprintf(out, ",\"drops\":{");
	for (d = 1; d < LB_DROP_MAX; d++)
		fprintf(out, "%s\"%s\":%" PRIu64, d > 1 ? "," : "", lb_drop_name(d),
			RD(w->cnt.drops[d]));
	fprintf(out, "},\"vms\":[");
	for (v = 0; v < w->n_vms; v++)
		fprintf(out,
			"%s{\"name\":\"%s\",\"dip\":\"%s\",\"from_vm\":%" PRIu64
			",\"to_vm\":%" PRIu64 "}",
			v ? "," : "", cfg->vms[v].name,
			inet_ntop(AF_INET, &cfg->vms[v].dip, a, sizeof(a)), RD(w->vm_rx[v]),
			RD(w->vm_tx[v]));
	fprintf(out, "]}\n");
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int r;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
#define T(name) rte_tel_data_add_dict_u64(d, #name, RD(tel_w->cnt.name));
	HA_COUNTERS(T)
#undef T
	for (r = 1; r < LB_DROP_MAX; r++)
		if (RD(tel_w->cnt.drops[r]) != 0)
			rte_tel_data_add_dict_u64(d, lb_drop_name(r), RD(tel_w->cnt.drops[r]));
	return 0;
}

int
ha_telemetry_register(const struct ha_worker *w)
{
	tel_w = w;
	return rte_telemetry_register_cmd("/sluice/agent/stats", tel_stats,
		"Host agent counters and non-zero drops. No parameters.");
}
