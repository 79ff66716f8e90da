/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside DIP health: the records mgr_health.c keeps, mgr_effective.c turns
 * into the effective table and the DIP prober (mgr_dip_prober.c) probes.
 * Not for other modules.
 *
 * Records and service entries are allocated one by one, so their addresses
 * are stable (epoll and the heap hold pointers); sorted arrays of pointers,
 * rebuilt at every sync, find them by key.
 */
#ifndef MGR_HREC_H
#define MGR_HREC_H

#include "mgr_health.h"

struct mgr_dip_probe;

/* What decided a backend's effective state, for history's "why". */
enum mgr_why {
	MGR_WHY_ADMIN = 0, /* the operators' state and weight, as they are */
	MGR_WHY_HEALTHY,
	MGR_WHY_INITIAL,
	MGR_WHY_UNHEALTHY,
	MGR_WHY_FAIL_OPEN,
	MGR_WHY_SLOW_START,
	MGR_WHY_DEREG,
	MGR_WHY_GONE,
	MGR_WHY_LOAD,	   /* least_connections steers its weight (mgr_load.c) */
	MGR_WHY_MITIGATED, /* anomaly mitigation lowered it */
	MGR_WHY_RESTART,   /* unhealthy, held as it ran until its pool has spoken */
};

struct mgr_hsvc {
	struct lb_svc_key hs_key;
	struct mgr_pool hs_pool;
	bool hs_seen;
	bool hs_was_probed;   /* before this sync */
	bool hs_pool_changed; /* by this sync */
	/* from the last effective table */
	uint32_t hs_registered, hs_healthy;
	bool hs_fail_open;
	bool hs_fail_open_logged;
	uint64_t hs_fail_open_since;
	bool hs_below_withdraw; /* below its pool's withdraw threshold */
	bool hs_withdrawn;	/* its VIP is withdrawn (every service of it alike) */
	/*
	 * Committed withdrawn when the manager started: withdrawn still until
	 * each of its backends has a verdict (health taken from the committed
	 * table cannot tell a pool that failed open from a healthy one).
	 */
	bool hs_restart_withdrawn;
	/*
	 * Some backend has had no verdict since the manager started: one found
	 * unhealthy meanwhile stays as it ran. A pool that failed open runs
	 * every backend active, so the first verdicts would otherwise take its
	 * backends out one by one until the last reopened it.
	 */
	bool hs_restart_hold;
	uint64_t hs_withdrawn_since;
	uint32_t hs_scale;	/* weights x10 while a light backend ramps */
	uint64_t hs_sum_weight; /* of its active backends, for shares */
	/* steering by load (mgr_load.c), from the desired service's choice */
	uint8_t hs_balance;	  /* enum lb_balance */
	bool hs_mitigate;	  /* anomaly mitigation */
	uint64_t hs_load_next_ms; /* the next step */
	double hs_load_mean;	  /* active connections per unit of weight, at the last step */
	double hs_fail_median;	  /* the pool's failure rate at the last step */
	uint32_t hs_zones_open;	  /* cross_zone off: the zones failing open on their own */
	/*
	 * cross_zone off with a withdraw threshold: judged per zone (hs_zonal;
	 * not when more zones are below than a table lists: then whole). The
	 * zones below it (none when every zone is: then it is announced
	 * everywhere), and the zones its VIP is withdrawn in at the last table
	 * (the log's).
	 */
	bool hs_zonal;
	uint8_t hs_n_wz;
	char hs_wz[LB_WZONES][LB_ZONE_LEN];
	uint8_t hs_n_wz_on;
	char hs_wz_on[LB_WZONES][LB_ZONE_LEN];
};

/* A backend's load as its host agent reports it (host_agent/ha_track.h). */
struct mgr_load {
	bool known;
	uint64_t active, opened, failed;
};

struct mgr_hrec {
	struct mgr_hsvc *hr_svc;
	struct lb_backend_cfg hr_be; /* as desired has it (as it was, when deregistered) */
	bool hr_seen;
	bool hr_dereg; /* gone from desired: draining */
	bool hr_gone;  /* drained and removed; kept a while for history's why */
	bool hr_hold;  /* new: the next round waits a little for its first verdict */
	uint64_t hr_gone_ms;
	/* health */
	uint8_t hr_health; /* enum mgr_hstate */
	uint8_t hr_succ, hr_fail;
	uint64_t hr_health_since;
	char hr_last_fail[MGR_DIP_PROBE_WHY];
	uint64_t hr_last_fail_ms;
	/* draining: admin drain or deregistration */
	uint64_t hr_drain_since, hr_drain_until; /* 0: not draining */
	/* slow start */
	uint64_t hr_ss_start; /* 0: none */
	/* scheduling: the next probe, or the deadline of the one in flight */
	uint64_t hr_due;
	uint64_t hr_probe_due; /* when the probe in flight was due (lateness) */
	uint64_t hr_deferred;  /* a start put off (every socket busy): when it was due; 0: none */
	uint32_t hr_heap;      /* index in the heap, MGR_NO_HEAP when out */
	bool hr_in_flight;     /* its probe runs: hr_due is the deadline */
	bool hr_inferred;      /* health from the committed table, not yet settled by probes */
	bool hr_ran_healthy;   /* ... and it ran in that table (hs_restart_hold) */
	bool hr_as_run;	       /* a drain rebuilt after a restart: hr_be.weight is as committed */
	/* the prober's state for r (mgr_dip_prober.c), NULL until it probes r */
	struct mgr_dip_probe *hr_probe;
	/* from the last effective table */
	uint8_t hr_cause; /* enum mgr_why */
	uint8_t hr_eff_state;
	uint32_t hr_eff_weight;
	bool hr_in_eff;
	/* load (mgr_load.c): the last report, the one at the last step, the factors */
	struct mgr_load hr_load, hr_load_step;
	uint32_t hr_lc;	     /* least_connections' factor, MGR_LOAD_ONE = 1 */
	uint32_t hr_mit;     /* mitigation's factor, MGR_LOAD_ONE = 1: not mitigated */
	double hr_fail_rate; /* at the last step, -1: too few new connections to say */
	bool hr_zone_open;   /* cross_zone off, and its zone is below the pool's minimum */
};

#define MGR_NO_HEAP UINT32_MAX
#define MGR_SS_STEPS 10
#define MGR_SS_SCALE 10
#define MGR_GONE_KEEP_MS 60000
#define MGR_FIRST_PROBE_WAIT_MS 1000

struct mgr_health {
	mgr_health_release_fn h_release; /* the prober's, for records going away */
	void *h_release_ctx;
	/* sorted by key */
	struct mgr_hsvc **h_svcs;
	uint32_t h_n_svcs;
	struct mgr_hrec **h_recs; /* by (service, dip, port) */
	uint32_t h_n_recs;
	/* the heap of records by hr_due */
	struct mgr_hrec **h_heap;
	uint32_t h_n_heap, h_cap_heap;
	struct mgr_dip_probe_stats h_stats;
	bool h_nosock_logged;
	uint64_t h_hold_until; /* rounds wait for new backends' first probes until then */
	uint32_t h_hold_n;     /* records with hr_hold */
};

/* The orders of the sorted arrays, for qsort (mgr_hrec.c). */
int mgr_hrec_cmp(const void *a, const void *b); /* struct mgr_hrec *: service, DIP, port */
int mgr_hsvc_cmp(const void *a, const void *b); /* struct mgr_hsvc *: service */

/* Lookups in the sorted arrays (mgr_hrec.c). */
struct mgr_hsvc *mgr_hsvc_find(const struct mgr_health *h, const struct lb_svc_key *k);

/* The service record of sc's key (NULL when there is none). */
struct mgr_hsvc *mgr_hsvc_of(const struct mgr_health *h, const struct lb_service_cfg *sc);

/* Index of the first record of service k (or where it would be). */
uint32_t mgr_hrec_lower(const struct mgr_health *h, const struct lb_svc_key *k);

struct mgr_hrec *mgr_hrec_find(const struct mgr_health *h, const struct lb_svc_key *k,
	const struct lb_addr *dip, uint16_t port);

/* Why r runs as it does, "" when the operators' settings rule (mgr_effective.c). */
void mgr_hrec_why(const struct mgr_hrec *r, char *buf, size_t len);

/* Does r's pool probe it? */
static inline bool
mgr_hrec_probed(const struct mgr_hrec *r)
{
	return r->hr_svc->hs_pool.pl_probe != LB_PROBE_NONE && !r->hr_dereg && !r->hr_gone;
}

/* In its pool's slow start at now (a ramp that ended is cleared when the table is next made). */
static inline bool
mgr_hrec_ramping(const struct mgr_hrec *r, uint64_t now)
{
	const struct mgr_pool *p = &r->hr_svc->hs_pool;

	return r->hr_ss_start != 0 && p->pl_slow_start_s != 0 &&
	       now < r->hr_ss_start + (uint64_t)p->pl_slow_start_s * 1000;
}

/* Healthy for the pool: passed its probes, or its pool does not probe. */
static inline bool
mgr_hrec_healthy(const struct mgr_hrec *r)
{
	return r->hr_svc->hs_pool.pl_probe == LB_PROBE_NONE || r->hr_health == MGR_H_HEALTHY;
}

#endif /* MGR_HREC_H */
