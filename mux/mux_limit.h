/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admission control on a worker (docs/protection.md): the rules of the
 * running generation (struct lb_svc_limits per service, the mux-wide cap)
 * checked for each new connection, with state only this worker writes.
 *
 * Each worker enforces its share of the mux's share of a rule: the rule
 * divided among the muxes that share it (ctx->lim_share: a single-writer
 * word the control thread sets from the manager's SHARES) and then by the number of workers
 * (lb_share(): the shares add up to the rule exactly). A worker computes
 * its shares again when the generation or the divisor changes, at the next
 * new connection of the service: one compare of two words otherwise.
 *
 *   per_source       a token bucket per (service, source prefix), in a
 *                    fixed direct-mapped table (MUX_LIM_SOURCES entries): a
 *                    collision gives the newcomer a full bucket
 *   new_per_second   a token bucket per service
 *   max_connections  the service's live entries in this worker's
 *                    connection table (struct mux_conn_table.svc_live)
 *   mux cap          one token bucket for the worker
 *
 * Every checked connection's source also goes into the service's top
 * talkers (lb_topk.h: space-saving, 8 counters, no allocation), which the
 * JSON summary merges over the workers.
 *
 * Checked in that order; the first rule in intercept mode that refuses
 * stops the walk (tokens taken by the rules before it stay taken). A
 * monitor rule counts would_deny and lets the connection through. Nothing
 * here locks, allocates or logs; the clock is the TSC, read once per
 * checked connection.
 */
#ifndef MUX_LIMIT_H
#define MUX_LIMIT_H

#include <stdint.h>
#include <stdio.h>

#include "lb_limits.h"
#include "lb_topk.h"

struct mux_worker;
struct mux_gen;
struct lb_pkt;

/* Per-source buckets per worker: 4096 * 24 bytes. */
#define MUX_LIM_SOURCES 4096

/* A rule's counters on one worker. */
struct mux_lim_cnt {
	uint64_t checked;
	uint64_t passed;
	uint64_t would_deny; /* monitor */
	uint64_t denied;     /* intercept */
};

/* One service on one worker, by stable service id. */
struct mux_lim_svc {
	struct lb_svc_key key;	/* the service the state is for (a sid passes on) */
	uint64_t built;		/* generation version + 1 the shares are for; 0: never */
	uint64_t div;		/* the mux's share (ctx->lim_share) they are for */
	uint32_t conns;		/* this worker's share of max_connections */
	struct lb_tb_rate rate; /* ... of new_per_second */
	struct lb_tb_rate src;	/* ... of per_source */
	struct lb_tbucket tb;
	struct mux_lim_cnt cnt[LB_LIM_N];
	struct lb_topk top; /* the sources of its checked new connections */
};

struct mux_lim_src {
	uint64_t key; /* (sid + 1) << 32 | the source prefix; 0: empty */
	struct lb_tbucket tb;
};

struct mux_limits {
	struct mux_lim_svc *svc; /* [cap_services] */
	struct mux_lim_src *src; /* [MUX_LIM_SOURCES] */
	uint32_t cap_services;
	uint64_t mux_built;
	struct lb_tb_rate mux_rate;
	struct lb_tbucket mux_tb;
	struct mux_lim_cnt mux_cnt;
};

int mux_limit_init(struct mux_limits *l, uint32_t cap_services, int socket);
void mux_limit_fini(struct mux_limits *l);

/*
 * Check a new connection (pi, of the frame p) to service index svc of g,
 * which has rules (g->services[svc].checks). Returns 0 to admit it, or 1 + the service's
 * enum lb_refuse to refuse it.
 */
int mux_limit_check(struct mux_worker *w, const struct mux_gen *g, uint32_t svc,
	const struct lb_pkt *pi, const uint8_t *p);

/*
 * A service's rules' counters as they stood when its sid was given to it
 * (mux_update.c): a worker's counters of a sid run on from one service to
 * the next, so that what is reported never goes back.
 */
struct mux_lim_base {
	struct mux_lim_cnt k[LB_LIM_N];
};

/*
 * A rule's counters (kind, or LB_LIM_N: the mux-wide cap) summed over n
 * workers, less base[sid] (base: [cap_services], or NULL for the raw sums).
 */
void mux_limit_sum(const struct mux_worker *ws, uint16_t n, const struct mux_lim_base *base,
	uint32_t sid, int kind, struct mux_lim_cnt *out);

/*
 * JSON members (each with its leading comma) for service index svc: its
 * live and held entries, and its rules' counters; and the mux-wide cap's.
 */
void mux_limit_json(FILE *out, const struct mux_worker *ws, uint16_t n,
	const struct mux_lim_base *base, const struct mux_gen *g, uint32_t svc);
void mux_limit_json_mux(
	FILE *out, const struct mux_worker *ws, uint16_t n, const struct mux_gen *g);

/*
 * STATUS: every rule's counters summed over the workers, named as
 * lb_limit_counter_name() says, into out (at most max). Returns how many.
 */
struct lb_counter;
uint32_t mux_limit_status(const struct mux_worker *ws, uint16_t nw, const struct mux_lim_base *base,
	const struct mux_gen *g, struct lb_counter *out, uint32_t max);

#endif /* MUX_LIMIT_H */
