/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writers every counter list shares: one value in JSON, telemetry or
 * the metrics, and the drop reasons, which both data planes count and
 * show alike.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_telemetry.h>

#include "dp_counters.h"
#include "lb_prom.h"

void
dp_prom_u64(struct lb_prom *p, const char *metric, const char *help, uint64_t v)
{
	size_t n;

	if (metric == NULL)
		return;
	n = strlen(metric);
	lb_prom_one(p, metric,
		n > 6 && strcmp(metric + n - 6, "_total") == 0 ? LB_PROM_COUNTER : LB_PROM_GAUGE,
		help, v);
}

void
dp_prom_drops(struct lb_prom *p, const uint64_t drops[LB_DROP_MAX])
{
	char l[64];
	int r;

	lb_prom_family(p, "drops_total", LB_PROM_COUNTER, "Packets dropped, by reason.");
	for (r = 1; r < LB_DROP_MAX; r++)
		lb_prom_sample(p, lb_prom_labels(l, sizeof(l), "reason", lb_drop_name(r), NULL),
			DP_RD(drops[r]));
}

void
dp_json_u64(FILE *out, unsigned show, const char *name, uint64_t v)
{
	if (show & DP_JSON)
		fprintf(out, ",\"%s\":%" PRIu64, name, v);
}

void
dp_tel_u64(struct rte_tel_data *d, unsigned show, const char *name, uint64_t v)
{
	if (show & DP_TEL)
		rte_tel_data_add_dict_u64(d, name, v);
}

uint64_t
dp_drops_total(const uint64_t drops[LB_DROP_MAX])
{
	uint64_t n = 0;
	int r;

	for (r = 1; r < LB_DROP_MAX; r++)
		n += DP_RD(drops[r]);
	return n;
}

void
dp_drops_print(FILE *out, const uint64_t drops[LB_DROP_MAX])
{
	int r;

	fprintf(out, "  drops:");
	for (r = 1; r < LB_DROP_MAX; r++)
		if (DP_RD(drops[r]) != 0)
			fprintf(out, " %s=%" PRIu64, lb_drop_name(r), DP_RD(drops[r]));
	fprintf(out, "\n");
}

void
dp_drops_json(FILE *out, const uint64_t drops[LB_DROP_MAX])
{
	int r;

	fprintf(out, ",\"drops\":{");
	for (r = 1; r < LB_DROP_MAX; r++)
		fprintf(out, "%s\"%s\":%" PRIu64, r > 1 ? "," : "", lb_drop_name(r),
			DP_RD(drops[r]));
	fprintf(out, "}");
}

void
dp_drops_tel(struct rte_tel_data *d, const uint64_t drops[LB_DROP_MAX], int nonzero)
{
	int r;

	for (r = 1; r < LB_DROP_MAX; r++)
		if (!nonzero || DP_RD(drops[r]) != 0)
			rte_tel_data_add_dict_u64(d, lb_drop_name(r), DP_RD(drops[r]));
}
