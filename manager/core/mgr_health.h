/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DIP health and the effective table.
 *
 * The manager keeps one record per backend of the desired table (and per
 * backend still draining after it left it). Each record is probed on its
 * pool's interval by the DIP prober (mgr_dip_prober.h, non-blocking
 * sockets in the manager's one event loop); health keeps every record's
 * next event (its next probe, or the deadline of the one in flight) in one
 * binary heap and judges the verdicts, with no socket or clock of its own
 * (the caller gives the time). Probe start times are spread: a sync that adds many backends
 * staggers their first probes, and each record keeps its phase afterwards, so 10,000 backends on a
 * 5 s interval start about two a millisecond, never all at once.
 *
 * A backend is `initial` until its first probe passes (then healthy) or
 * `unhealthy` consecutive probes fail; a healthy one becomes unhealthy
 * after `unhealthy` consecutive failures, an unhealthy one healthy after
 * `healthy` consecutive successes. Pools with probe "none" are healthy.
 *
 * The effective table is what members run: the desired table with each
 * backend's state and weight decided by its admin state, its health, its
 * draining and its slow start, and its pool's minimum healthy (fail-open);
 * see docs/manager.md. mgr_health_effective() computes it; the caller
 * batches the changes into versions.
 */
#ifndef MGR_HEALTH_H
#define MGR_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_ftable.h"
#include "mgr_pool.h"

struct mgr_health;
struct mgr_hrec;

/* What one DIP probe says (mgr_dip_probe.h runs it). */
#define MGR_DIP_PROBE_WHY 96

enum mgr_dip_probe_rc {
	MGR_DIP_PENDING = 0, /* wait for the next event */
	MGR_DIP_UP,	     /* the backend passed */
	MGR_DIP_DOWN,	     /* it failed; why says how */
	MGR_DIP_NOSOCK,	     /* the manager is out of sockets: not the backend's fault */
};

enum mgr_hstate { MGR_H_INITIAL = 1, MGR_H_HEALTHY, MGR_H_UNHEALTHY };

/* One backend as sluicectl shows it. */
struct mgr_hview {
	bool hv_found;
	bool hv_probed;	      /* its pool probes (probe != none) */
	bool hv_deregistered; /* gone from desired, draining until the delay ends */
	uint8_t hv_admin;     /* enum lb_backend_state the operators gave */
	uint32_t hv_admin_weight;
	uint8_t hv_health;			 /* enum mgr_hstate */
	uint64_t hv_health_ms;			 /* in that state for */
	uint32_t hv_successes, hv_failures;	 /* consecutive */
	char hv_last_failure[MGR_DIP_PROBE_WHY]; /* "" when none */
	uint64_t hv_last_failure_ago_ms;
	bool hv_draining;	   /* admin drain or deregistered */
	uint64_t hv_drain_left_ms; /* 0: the delay is over */
	bool hv_slow_start;
	uint64_t hv_slow_start_left_ms;
	uint32_t hv_slow_weight, hv_slow_target; /* weight now, at the end */
	uint32_t hv_share_permille;		 /* of the pool's new connections */
	char hv_why[MGR_DIP_PROBE_WHY + 48];	 /* why it runs as it does, or "" */
};

/* One service's pool as the last effective table left it. */
struct mgr_sview {
	bool sv_found;
	uint32_t sv_registered; /* backends the operators left active */
	uint32_t sv_healthy;	/* of those, healthy */
	bool sv_fail_open;
	uint64_t sv_fail_open_ms; /* for how long */
	bool sv_below_withdraw;	  /* below its pool's withdraw_below */
	bool sv_withdrawn;	  /* its VIP is withdrawn from every mux ... */
	uint64_t sv_withdrawn_ms; /* ... for how long */
};

struct mgr_dip_probe_stats {
	uint32_t ps_backends;	   /* records probed */
	uint32_t ps_in_flight;	   /* the prober's (mgr_dip_prober_stats) */
	uint32_t ps_max_in_flight; /* the cap (file descriptors), the prober's too */
	uint64_t ps_started, ps_up, ps_down, ps_nosock;
	uint64_t ps_late_max_ms; /* start time past the due time, since the manager started */
	uint64_t ps_late_sum_ms;
	/* starts by lateness: <1, <2, <5, <10, <20, <50, <100, <200, <500, <1000, more (ms) */
	uint64_t ps_late_hist[11];
	uint64_t ps_transitions; /* health state changes */
};

/*
 * A record whose probe may be in flight goes away or stops being probed:
 * the prober closes the probe without a verdict (mgr_dip_prober_release).
 */
typedef void (*mgr_health_release_fn)(void *ctx, struct mgr_hrec *r);

/* No records yet. NULL when out of memory. */
struct mgr_health *mgr_health_new(mgr_health_release_fn release, void *ctx);

void mgr_health_free(struct mgr_health *h);

/*
 * Bring the records in line with the desired table and its pools, after
 * every desired change. New backends start initial with their first probe
 * due now, staggered when many come at once. A backend that left the
 * desired table while its service stays drains for its pool's
 * deregistration delay if `committed` runs it and sends it traffic;
 * otherwise it goes at once. `restart`: the first sync after the manager
 * started: backends the committed table runs are taken as healthy (out of
 * it as unhealthy), and those it runs that desired lacks drain afresh.
 * Returns 0 or -LB_ENOMEM.
 */
int mgr_health_sync(struct mgr_health *h, const struct lb_ftable *desired,
	const struct mgr_pools *pools, const struct lb_ftable *committed, bool restart,
	uint64_t now);

/* ---- for the DIP prober (mgr_dip_prober.c) ---- */

/*
 * The record whose next event is due at `now`, or NULL: a probe to start,
 * or (hr_in_flight) the deadline of the one in flight.
 */
struct mgr_hrec *mgr_health_due(const struct mgr_health *h, uint64_t now);

/* r's probe starts now: its lateness is counted. */
void mgr_health_started(struct mgr_health *h, struct mgr_hrec *r, uint64_t now);

/* r's probe is in flight: its next event is its deadline (the pool's timeout). */
void mgr_health_pending(struct mgr_health *h, struct mgr_hrec *r, uint64_t now);

/*
 * r's probe ended (UP, DOWN or NOSOCK, with why): rise and fall, and its
 * next probe scheduled. Returns true when its health changed (healthy or
 * not, or a new backend's first verdict): the effective table is made
 * again, with its reasons.
 */
bool mgr_health_verdict(struct mgr_health *h, struct mgr_hrec *r, enum mgr_dip_probe_rc rc,
	const char *why, uint64_t now);

/*
 * Every socket is busy: r's start waits until `until`. Its place in the
 * heap goes to the records behind it (the deadlines of the probes in
 * flight, which free sockets); its lateness and phase still count from
 * when it was due.
 */
void mgr_health_defer(struct mgr_health *h, struct mgr_hrec *r, uint64_t until);

/*
 * Until when the next round should wait for the first probes of backends
 * a sync just added (at most 1 s, or their probe timeout): a backend that
 * answers at once then enters the table healthy, in one version, rather
 * than initial (maint) and healthy in the next. 0: no wait.
 */
uint64_t mgr_health_hold(const struct mgr_health *h, uint64_t now);

/* When the prober has work next (UINT64_MAX: never). */
uint64_t mgr_health_next_deadline(const struct mgr_health *h);

/*
 * The effective table of `desired` at `now` (sorted; out is replaced),
 * with desired's drained muxes and each VIP's withdrawn flag (the VIP
 * rule: mgr_withdraw_vips()). *next_ms: when it will change by itself (a
 * deregistration delay ends, a slow-start step), UINT64_MAX when never.
 * Logs fail-open and withdrawals engaging and ending. Returns 0 or
 * -LB_ENOMEM (out empty).
 */
int mgr_health_effective(struct mgr_health *h, const struct lb_ftable *desired, uint64_t now,
	struct lb_ftable *out, uint64_t *next_ms);

/*
 * Routing's rule for a VIP with several services (ports): a /32
 * withdrawal takes every port of the VIP away, so the VIP is withdrawn
 * only when every one of its services that sets a withdraw threshold is
 * below it; services without a threshold do not vote. svcs[0..n) are the
 * services of one VIP (their pools' thresholds and verdicts: withdraws[i],
 * below[i]). Returns whether the VIP is withdrawn.
 */
bool mgr_withdraw_vip(const bool *withdraws, const bool *below, uint32_t n);

/*
 * Why backend `to` of service k runs as it does where it ran as `from`
 * (either NULL: added, removed), for history: "unhealthy: connect:
 * connection refused", "slow start", ... NULL when the operators' change
 * says it all. `ctx` is the struct mgr_health (mgr_summary's callback).
 */
const char *mgr_health_why(void *ctx, const struct lb_svc_key *k, const struct lb_backend_cfg *from,
	const struct lb_backend_cfg *to, char *buf, size_t len);

void mgr_health_backend(const struct mgr_health *h, const struct lb_svc_key *k,
	const struct lb_addr *dip, uint16_t port, uint64_t now, struct mgr_hview *v);

void mgr_health_service(
	const struct mgr_health *h, const struct lb_svc_key *k, uint64_t now, struct mgr_sview *v);

void mgr_health_stats(const struct mgr_health *h, struct mgr_dip_probe_stats *s);

#endif /* MGR_HEALTH_H */
