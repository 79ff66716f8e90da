/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's counters for operators: summary, JSON and telemetry, made
 * from the list in ha_counters.h. The lcore writes them as plain words;
 * these functions only read (dp_counters.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include <rte_telemetry.h>

#include "ha_agent.h"
#include "ha_track.h"
#include "ha_stats.h"
#include "ha_update.h"
#include "lb_addr.h"

static const struct ha_worker *tel_w;

/* An IPv4 address (0: none, printed "-") or an IPv6 one (absent: "-"), as text. */
static const char *
v4_str(lb_be32_t a, char *buf)
{
	struct lb_addr x;

	if (a == 0)
		return strcpy(buf, "-");
	lb_addr_v4(&x, a);
	return lb_addr_ntop(LB_AF_INET, &x, buf, LB_ADDR_STRLEN);
}

static const char *
v6_str(bool has, const struct lb_addr *a, char *buf)
{
	return has ? lb_addr_ntop(LB_AF_INET6, a, buf, LB_ADDR_STRLEN) : strcpy(buf, "-");
}

void
ha_stats_print(const struct ha_worker *w, const struct ha_config *cfg, FILE *out)
{
	char a[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN];
	int v;

	fprintf(out, "sluice-agent summary (PA %s, PA6 %s, flow table version %llu)\n",
		v4_str(cfg->pa, a), v6_str(cfg->has_pa6, &cfg->pa6, b),
		(unsigned long long)w->map->version);
#define P(name, ...) fprintf(out, "  %-16s %12" PRIu64 "\n", #name, DP_RD(w->cnt.name));
	HA_COUNTERS(P)
#undef P
	for (v = 0; v < w->n_vms; v++)
		fprintf(out, "  vm %-8s %s %s  from VM %" PRIu64 ", to VM %" PRIu64 "\n",
			cfg->vms[v].name, v4_str(cfg->vms[v].dip, a),
			v6_str(cfg->vms[v].has_dip6, &cfg->vms[v].dip6, b), DP_RD(w->vm_rx[v]),
			DP_RD(w->vm_tx[v]));
	dp_drops_print(out, w->cnt.drops);
}

void
ha_stats_json(const struct ha_worker *w, const struct ha_config *cfg, FILE *out)
{
	char a[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN];
	int v;

	fprintf(out, "\"pa\":\"%s\",\"pa6\":\"%s\",\"version\":%llu", v4_str(cfg->pa, a),
		v6_str(cfg->has_pa6, &cfg->pa6, b), (unsigned long long)w->map->version);
#define J(name, show, ...) dp_json_u64(out, show, #name, DP_RD(w->cnt.name));
	HA_COUNTERS(J)
#undef J
	dp_drops_json(out, w->cnt.drops);
	fprintf(out, ",\"vms\":[");
	for (v = 0; v < w->n_vms; v++)
		fprintf(out,
			"%s{\"name\":\"%s\",\"dip\":\"%s\",\"dip6\":\"%s\",\"from_vm\":%" PRIu64
			",\"to_vm\":%" PRIu64 "}",
			v ? "," : "", cfg->vms[v].name, v4_str(cfg->vms[v].dip, a),
			v6_str(cfg->vms[v].has_dip6, &cfg->vms[v].dip6, b), DP_RD(w->vm_rx[v]),
			DP_RD(w->vm_tx[v]));
	fprintf(out, "]");
	ha_stats_load_json(w, out);
}

void
ha_stats_load_json(const struct ha_worker *w, FILE *out)
{
	char a[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN];
	uint32_t i;

	fprintf(out,
		",\"conn_untracked\":%" PRIu64 ",\"conn_adopted\":%" PRIu64
		",\"backends_forgotten\":%" PRIu64 ",\"backends\":[",
		ha_track_untracked(w->track), ha_track_adopted(w->track),
		ha_track_forgotten(w->track));
	for (i = 0; i < w->map->n_lb; i++) {
		const struct ha_lb *lb = &w->map->lb[i];
		const struct ha_be_load *l = ha_track_load(w->track, lb->be_id);

		fprintf(out,
			"%s{\"id\":%u,\"vip\":\"%s\",\"vport\":%u,\"dip\":\"%s\",\"dport\":%u,"
			"\"proto\":\"%s\"",
			i ? "," : "", lb->be_id, lb_addr_ntop(lb->af, &lb->vip, a, sizeof(a)),
			lb_be16_to_cpu(lb->vport), lb_addr_ntop(lb->af, &lb->dip, b, sizeof(b)),
			lb_be16_to_cpu(lb->dport), lb->proto == LB_IPPROTO_UDP ? "udp" : "tcp");
		if (l != NULL)
			fprintf(out,
				",\"active\":%" PRIu64 ",\"opened\":%" PRIu64
				",\"refused\":%" PRIu64 ",\"unanswered\":%" PRIu64,
				DP_RD(l->active), DP_RD(l->opened), DP_RD(l->refused),
				DP_RD(l->unanswered));
		fprintf(out, "}");
	}
	fprintf(out, "]");
}

uint32_t
ha_stats_load_status(const struct ha_worker *w, struct lb_counter *out, uint32_t max)
{
	static const char *const names[3] = {"act", "new", "fail"};
	uint32_t i, n = 0;
	char name[sizeof(out->name)];
	int f;

	for (i = 0; i < w->map->n_lb; i++) {
		const struct ha_lb *lb = &w->map->lb[i];
		const struct ha_be_load *l = ha_track_load(w->track, lb->be_id);

		if (l == NULL || lb->proto != LB_IPPROTO_TCP)
			continue;
		for (f = 0; f < 3; f++) {
			uint64_t v = f == 0   ? DP_RD(l->active)
				     : f == 1 ? DP_RD(l->opened)
					      : DP_RD(l->refused) + DP_RD(l->unanswered);

			snprintf(name, sizeof(name), "be.%u.%s", lb->be_id, names[f]);
			lb_counter_put(out, &n, max, name, v);
		}
	}
	return n;
}

static void
section_print(const void *arg, FILE *out)
{
	const struct ha_update *u = arg;

	ha_stats_print(u->w, u->cfg, out);
}

static void
section_json(const void *arg, FILE *out)
{
	const struct ha_update *u = arg;

	ha_stats_json(u->w, u->cfg, out);
}

struct dp_section
ha_stats_section(const struct ha_update *u)
{
	return (struct dp_section){.print = section_print, .json = section_json, .arg = u};
}

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
#define T(name, show, ...) dp_tel_u64(d, show, #name, DP_RD(tel_w->cnt.name));
	HA_COUNTERS(T)
#undef T
	dp_drops_tel(d, tel_w->cnt.drops, 1);
	return 0;
}

int
ha_telemetry_register(const struct ha_worker *w)
{
	tel_w = w;
	return DP_TEL_REGISTER("/sluice/agent/stats", tel_stats,
		"Host agent counters and non-zero drops. No parameters.");
}
