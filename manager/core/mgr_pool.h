/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pool options: what AWS calls a target group's settings, per service, kept
 * by the manager alone. Members never see them; they get the effective
 * table the options produce (mgr_health.h).
 *
 * A pool is resolved: every field has its value, defaults filled in. The
 * defaults follow an ALB target group's (a TCP probe on the backend's port
 * every 30 s, timeout 5 s, 5 successes to become healthy, 2 failures to
 * become unhealthy, deregistration delay 300 s, no slow start, fail open
 * when no backend is healthy, never withdraw the VIP), with ranges wide
 * enough for a lab (1 s intervals). Errors name the field as the services file spells it:
 * "timeout: 5 must be less than interval (5)".
 *
 * The manager keeps the pools that differ from the defaults in a list
 * sorted by service key; a service without an entry has the defaults.
 */
#ifndef MGR_POOL_H
#define MGR_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_codec.h"
#include "lb_config.h"

#define MGR_POOL_RANGES 8

#define MGR_POOL_DEFAULT_INTERVAL 30
#define MGR_POOL_DEFAULT_TIMEOUT 5
#define MGR_POOL_DEFAULT_HEALTHY 5
#define MGR_POOL_DEFAULT_UNHEALTHY 2
#define MGR_POOL_DEFAULT_DRAIN_DELAY 300
#define MGR_POOL_DEFAULT_MIN_HEALTHY 1

struct mgr_pool {
	uint8_t pl_probe;	/* enum lb_probe_type, never LB_PROBE_UNSET */
	uint16_t pl_probe_port; /* 0: the backend's port */
	char pl_path[LB_POOL_PATH_LEN];
	char pl_codes[LB_POOL_CODES_LEN];
	uint8_t pl_n_ranges; /* pl_codes parsed */
	uint16_t pl_lo[MGR_POOL_RANGES], pl_hi[MGR_POOL_RANGES];
	uint32_t pl_interval_s;
	uint32_t pl_timeout_s;
	uint32_t pl_healthy;
	uint32_t pl_unhealthy;
	uint32_t pl_drain_delay_s;
	uint32_t pl_slow_start_s;
	uint32_t pl_min_healthy;
	uint32_t pl_min_healthy_pct;
	/* Routing (ALB's DNS failover): below it every mux withdraws the VIP; 0: off. */
	uint32_t pl_withdraw_below;
	uint32_t pl_withdraw_below_pct;
};

/* The defaults (a pool no operator touched). */
const struct mgr_pool *mgr_pool_defaults(void);

/*
 * Set the fields o->given names in *p, then check the whole pool (a new
 * timeout against the old interval too). Returns 0, or -LB_EINVAL with the
 * reason in err, naming the field; *p is then unchanged.
 */
int mgr_pool_apply(struct mgr_pool *p, const struct lb_pool_opts *o, char *err, size_t len);

/*
 * Check a whole pool. Returns 0 or -LB_EINVAL (err names the field; a
 * withdraw threshold below the fail-open one names both).
 */
int mgr_pool_check(const struct mgr_pool *p, char *err, size_t len);

/*
 * The withdraw threshold must be at or above the fail-open threshold, as
 * ALB requires of DNS failover: whenever the pool fails open (fewer than
 * min_healthy, or min_healthy_percent, of its `registered` backends
 * healthy) the VIP must already be withdrawn, never announced with its
 * traffic spread over unhealthy backends. Exactly, for every pool size:
 * with a withdraw threshold on, min_healthy <= 1 or withdraw_below >=
 * min_healthy, and min_healthy_percent == 0 or withdraw_below_percent >=
 * min_healthy_percent (a min_healthy of 1 fails open at 0 healthy only,
 * which any withdraw threshold covers). Returns 0, or -LB_EINVAL with
 * both fields named in err.
 */
int mgr_pool_check_withdraw(const struct mgr_pool *p, char *err, size_t len);

/* Does the pool set a withdraw threshold? */
bool mgr_pool_withdraws(const struct mgr_pool *p);

/*
 * Is a pool with `healthy` of its `registered` (active) backends healthy
 * below its withdraw threshold? (No registered backend at all is below any
 * threshold.) False when it sets none.
 */
bool mgr_pool_below_withdraw(const struct mgr_pool *p, uint32_t healthy, uint32_t registered);

/* Does the HTTP status `code` pass? */
bool mgr_pool_code_ok(const struct mgr_pool *p, unsigned code);

bool mgr_pool_equal(const struct mgr_pool *a, const struct mgr_pool *b);

const char *mgr_probe_name(uint8_t probe);

/* "50%" / "2" / "2 or 50%" / "off": the minimum healthy, as people read it. */
const char *mgr_pool_min_str(const struct mgr_pool *p, char *buf, size_t len);

/* The same for the withdraw threshold. */
const char *mgr_pool_withdraw_str(const struct mgr_pool *p, char *buf, size_t len);

/*
 * The pool as the fields of a services file's `pools` entry (no braces),
 * "probe = \"http\"; path = \"/\"; ...", every field written.
 */
void mgr_pool_write(const struct mgr_pool *p, FILE *f);

/*
 * Read one `pools` entry's option fields from group g (the key fields,
 * vip/port/protocol, are the caller's), over the defaults. Errors are
 * located ("FILE:LINE: pools[0].interval: 0 is out of range 1..300").
 * Returns 0 or -LB_ECONFIG.
 */
int mgr_pool_from_cfg(const config_setting_t *g, struct mgr_pool *p, struct lb_cfg_err *err);

/* The option fields a `pools` entry may hold, NULL-terminated. */
extern const char *const mgr_pool_cfg_fields[];

/* ---- the pools of a table: services whose options are not the defaults ---- */

struct mgr_pool_entry {
	struct lb_svc_key pe_key;
	struct mgr_pool pe_pool;
};

struct mgr_pools {
	uint32_t ps_n;
	struct mgr_pool_entry *ps_v; /* sorted by key (memcmp) */
};

/* The pool of service k: its entry, or the defaults. Never NULL. */
const struct mgr_pool *mgr_pools_get(const struct mgr_pools *ps, const struct lb_svc_key *k);

/* Set service k's pool; an entry equal to the defaults is removed. 0 or -LB_ENOMEM. */
int mgr_pools_set(struct mgr_pools *ps, const struct lb_svc_key *k, const struct mgr_pool *p);

void mgr_pools_del(struct mgr_pools *ps, const struct lb_svc_key *k);

/* Drop the entries of services t does not have. */
void mgr_pools_prune(struct mgr_pools *ps, const struct lb_ftable *t);

/* Deep copy; 0 or -LB_ENOMEM (dst empty). */
int mgr_pools_copy(struct mgr_pools *dst, const struct mgr_pools *src);

bool mgr_pools_equal(const struct mgr_pools *a, const struct mgr_pools *b);

void mgr_pools_free(struct mgr_pools *ps);

#endif /* MGR_POOL_H */
