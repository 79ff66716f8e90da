/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How a service chooses a backend beyond weighted Maglev on the five-tuple
 * (docs/architecture.md, "Choosing a backend"): the key the choice is made
 * on (affinity), what a client gets when its backend is not usable (the
 * failure policy), and whether a mux keeps new flows in its own zone.
 *
 * Each is part of the flow table, beside the service, so the digest covers
 * it and every mux switches at one version. All zero is what every table
 * had before they existed: the five-tuple, redistribute, cross-zone on.
 */
#ifndef LB_CHOICE_H
#define LB_CHOICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The key Maglev looks up a new flow by. */
enum lb_affinity {
	LB_AFF_TUPLE,	     /* the symmetric five-tuple: connections spread */
	LB_AFF_CLIENT_PROTO, /* client address and protocol */
	LB_AFF_CLIENT,	     /* client address alone */
	LB_AFF_N
};

/* A new flow whose first choice is not usable (down, draining, removed, weight 0). */
enum lb_unusable {
	LB_UNUSABLE_REDISTRIBUTE, /* the next usable choice (Maglev over the usable) */
	LB_UNUSABLE_REJECT,	  /* a TCP RST or ICMP port unreachable from the VIP */
	LB_UNUSABLE_N
};

/*
 * How the manager weighs the pool (manager/core/mgr_load.c), from the load
 * the host agents report: the muxes only see the weights it makes.
 */
enum lb_balance {
	LB_BALANCE_WEIGHTED,	      /* the configured weights */
	LB_BALANCE_LEAST_CONNECTIONS, /* weights steered by the agents' active connections */
	LB_BALANCE_N
};

struct lb_svc_choice {
	uint8_t affinity;    /* enum lb_affinity */
	uint8_t on_unusable; /* enum lb_unusable */
	uint8_t zonal;	     /* 1: cross_zone off, a mux picks in its own zone */
	uint8_t balance;     /* enum lb_balance */
	uint8_t mitigate;    /* 1: anomaly mitigation (a failing outlier's weight lowered) */
};

/* A zone's name: 1..15 of [A-Za-z0-9._-], NUL-padded; "" is none. */
#define LB_ZONE_LEN 16

extern const char *const lb_affinity_names[LB_AFF_N];
extern const char *const lb_unusable_names[LB_UNUSABLE_N];
extern const char *const lb_balance_names[LB_BALANCE_N];

/* Anything but the defaults. */
static inline bool
lb_choice_any(const struct lb_svc_choice *c)
{
	return c->affinity != 0 || c->on_unusable != 0 || c->zonal != 0 || c->balance != 0 ||
	       c->mitigate != 0;
}

/*
 * Does a first choice need a table over the whole pool (lb_choice.c)?
 * Affinity keys and the reject policy do: a client's first choice then
 * depends on the pool alone, never on the others' health.
 */
static inline bool
lb_choice_first(const struct lb_svc_choice *c)
{
	return c->affinity != LB_AFF_TUPLE || c->on_unusable == LB_UNUSABLE_REJECT;
}

/*
 * Check a zone name of length up to LB_ZONE_LEN - 1 (empty allowed when
 * empty_ok). NULL: fine; otherwise why not.
 */
const char *lb_zone_problem(const char *z, bool empty_ok);

/* Check what a table received from elsewhere holds. 0, or -1 with why in err. */
int lb_choice_check(const struct lb_svc_choice *c, char *err, size_t len);

#endif /* LB_CHOICE_H */
