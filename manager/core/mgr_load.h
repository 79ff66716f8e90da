/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Weights from the load the host agents report (docs/architecture.md,
 * "Weights from load"): least_connections and anomaly mitigation, per
 * service (its choice in the flow table: balance, mitigate). Every
 * MGR_LOAD_STEP_MS the manager takes each backend's last report and moves
 * two factors, which multiply its weight in the effective table:
 *
 *   least_connections  towards (mean + 1) / (own + 1), active connections
 *                      per unit of weight against the pool's mean; at most
 *                      doubled or halved per step, within 1/8..8
 *   mitigation         halved per step (to a floor of 1/8) while the
 *                      backend's failure rate over the step is an outlier:
 *                      at least 50%, and above twice the median of the
 *                      others' rates plus 10 points, with at least MGR_MIT_MIN_NEW new
 *                      connections to judge by; never more than half the
 *                      pool at once; doubled back per step once it opens
 *                      connections without failures
 *
 * A steered pool's weights are scaled by MGR_LOAD_SCALE so that factors
 * below 1 keep their resolution; Maglev depends on the ratios only. The
 * data path stays a hash: the muxes only see new weights, one version per
 * step that changes one.
 */
#ifndef MGR_LOAD_H
#define MGR_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "mgr_hrec.h"

#define MGR_LOAD_STEP_MS 2000
#define MGR_LOAD_ONE 256
#define MGR_LOAD_MIN (MGR_LOAD_ONE / 8)
#define MGR_LOAD_MAX (MGR_LOAD_ONE * 8)
#define MGR_LOAD_SCALE 8
#define MGR_MIT_FLOOR (MGR_LOAD_ONE / 8)
#define MGR_MIT_MIN_NEW 3

/* One backend's report, by stable id (from an agent's STATUS). */
struct mgr_be_load {
	uint32_t id;
	uint64_t active, opened, failed;
};

/* Does service s steer its weights by load? */
static inline bool
mgr_load_steers(const struct mgr_hsvc *s)
{
	return s->hs_balance == LB_BALANCE_LEAST_CONNECTIONS || s->hs_mitigate;
}

/*
 * The agents' reports in an agent's STATUS counters ("be.<id>.act", ".new",
 * ".fail") into out (room for max). Returns how many backends.
 */
uint32_t mgr_load_parse(
	const struct lb_counter *c, uint32_t n, struct mgr_be_load *out, uint32_t max);

/* Sort reports by backend id, and find id's in sorted reports (NULL: none). */
void mgr_load_sort(struct mgr_be_load *v, uint32_t n);
const struct mgr_be_load *mgr_load_find(const struct mgr_be_load *v, uint32_t n, uint32_t id);

/*
 * The backends an agent reported in prev[0..np) and no longer does in
 * cur[0..nc) (both sorted) into out (room for np): their load is unknown
 * again (moved to another host, or no longer served here). Returns how many.
 */
uint32_t mgr_load_dropped(const struct mgr_be_load *prev, uint32_t np,
	const struct mgr_be_load *cur, uint32_t nc, struct mgr_be_load *out);

/*
 * Record the reports v[0..n) in the backends they name (sorts v); forget:
 * the agent that sent them is gone, its backends' load is unknown again.
 */
void mgr_health_loads(struct mgr_health *h, struct mgr_be_load *v, uint32_t n, bool forget);

/* One step of service s over its records recs[0..n), when due; *next: the next step. */
void mgr_load_step(
	struct mgr_hsvc *s, struct mgr_hrec *const *recs, uint32_t n, uint64_t now, uint64_t *next);

/*
 * Weight w of record r (active) with its factors, in a steered pool: at
 * least 1, and not yet fitted under Maglev's largest weight (the caller
 * divides the whole pool alike).
 */
uint64_t mgr_load_weight(const struct mgr_hrec *r, uint32_t w);

#endif /* MGR_LOAD_H */
