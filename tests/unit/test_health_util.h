/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What test_health.c and test_withdraw.c share: backends that are real
 * loopback listeners (127.0.88.i, one port), the prober that probes them,
 * tables and pools of one service, and the manager's health driven on a
 * test clock.
 */
#ifndef SLUICE_TEST_HEALTH_UTIL_H
#define SLUICE_TEST_HEALTH_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_codec.h"
#include "lb_ftable.h"
#include "lb_hdr.h"
#include "mgr_dip_prober.h"
#include "mgr_health.h"
#include "mgr_pool.h"

#define N_BE 3
#define T0 1000000ull /* the test clock starts here (ms) */

extern uint16_t port;		      /* every backend's */
extern struct mgr_dip_prober *prober; /* the real probes, one per test */

/* Backend i's address, 127.0.88.i. */
lb_be32_t be_ip(int i);
/* Backend i listens (healthy once probed), or stops listening. */
void up(int i);
void down(int i);

/*
 * Each test's start and end: a free port on 127.0.88.1 for every backend, a
 * prober, and the fixture below, which teardown frees.
 */
void setup(void);
void teardown(void);

/*
 * The fixture: h, health whose records the test's prober probes; d, its
 * desired table, and ps, its pools, both empty until the test fills them
 * (table(), pools()).
 */
extern struct mgr_health *h;
extern struct lb_ftable d;
extern struct mgr_pools ps;
/* The fixture freed and made again, for a test that starts over. */
void fixture_again(void);

/* Health whose records the test's prober probes. */
struct mgr_health *health_new(void);

/* One service, tcp 10.0.0.10:80, with backends 1..n (state[i], or active). */
void table(struct lb_ftable *t, int n, const uint8_t *state);
/* Its backends 1 and 2 in zone a, 3 in zone b. */
void zones_ab(struct lb_ftable *t);
/* That service's key. */
struct lb_svc_key key(void);
/* Its pool: probes every 1 s (timeout 1 s, 2 to rise, 2 to fall) and these. */
void pools(struct mgr_pools *ps, uint32_t min, uint32_t pct, uint32_t slow, uint32_t drain);

/* Run every probe due by `now` to its end (real sockets, test time). */
void drive(struct mgr_health *h, uint64_t now);
/* The same, true when the prober said some backend's health changed. */
bool drive_changed(struct mgr_health *h, uint64_t now);

/* d under ps as the first table h is given at T0 (nothing committed before). */
void first_table(struct mgr_health *h, const struct lb_ftable *d, const struct mgr_pools *ps);
/*
 * That first table, then the first two rounds of probes, at T0 + 10 and
 * T0 + 1010: by then a backend that listens is healthy and one that does
 * not is unhealthy.
 */
void first_rounds(struct mgr_health *h, const struct lb_ftable *d, const struct mgr_pools *ps);

/* Backend i of the effective table: its state and weight; -1 when absent. */
int eff(struct mgr_health *h, const struct lb_ftable *desired, uint64_t now, int i,
	uint32_t *weight, uint64_t *next);
/* Backend i's health: "healthy", "initial", "gone" or its last failure. */
const char *health_of(struct mgr_health *h, int i, uint64_t now);

#endif /* SLUICE_TEST_HEALTH_UTIL_H */
