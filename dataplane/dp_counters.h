/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters as the data planes keep and show them.
 *
 * A worker owns its counters and writes them as plain uint64_t words; any
 * other thread reads them with DP_RD() and sums over workers, without
 * stopping anyone. Each word is read whole (an aligned 64-bit load), so a
 * sum read while traffic flows is consistent enough: only the totals may
 * be a few packets apart. Nothing is ever reset.
 *
 * Each daemon lists its counters once, in an X-macro (mux_counters.h,
 * ha_counters.h; as lb_err.h lists the errors), whose first columns are
 *
 *     X(name, show, status, ...)
 *
 *   name    the struct field, and its key in the JSON summary, the
 *           telemetry dict and the member's STATUS counters
 *   show    where it is written besides the printed summary: DP_JSON,
 *           DP_TEL (both: DP_SHOW), or 0
 *   status  its place in the STATUS heartbeat, 1 first (the manager's
 *           status line shows the first four), or 0: not sent
 *
 * and whose last two are
 *
 *   help    what it counts: a comment, and the metric's HELP text
 *   metric  its Prometheus name after "sluice_" (a counter's ends in
 *           _total), or NULL: not exported
 *
 * and the list generates the struct (DP_FIELD), the summary, the JSON, the
 * telemetry, STATUS and the metrics through the helpers below and in
 * dp_status.h.
 * Values computed when read (live connections, the sum of the drops) are
 * written by hand next to the list's.
 */
#ifndef DP_COUNTERS_H
#define DP_COUNTERS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_drop.h"

struct rte_tel_data;

/* Read a word another thread writes: loaded whole, every time. */
#define DP_RD(x) (*(const volatile uint64_t *)&(x))

#define DP_JSON 1u
#define DP_TEL 2u
#define DP_SHOW (DP_JSON | DP_TEL)

/* A counter list's struct fields: struct c { LIST(DP_FIELD) ... }; */
#define DP_FIELD(name, ...) uint64_t name;

/* sum[i] += src[i] for the n words of one worker's counters. */
static inline void
dp_counters_add(uint64_t *sum, const uint64_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sum[i] += DP_RD(src[i]);
}

/* A counter's piece of a printed summary: fmt (for one uint64_t), if not NULL. */
static inline void
dp_print_u64(FILE *out, const char *fmt, uint64_t v)
{
	if (fmt != NULL)
		fprintf(out, fmt, v);
}

/*
 * A counter's metric family and its one sample (the list's help and
 * metric columns; nothing when metric is NULL), for a daemon's /metrics.
 */
struct lb_prom;
void dp_prom_u64(struct lb_prom *p, const char *metric, const char *help, uint64_t v);

/* sluice_drops_total{reason="..."} for every reason. */
void dp_prom_drops(struct lb_prom *p, const uint64_t drops[LB_DROP_MAX]);

/* ,"name":v in a JSON object, if show has DP_JSON. */
void dp_json_u64(FILE *out, unsigned show, const char *name, uint64_t v);

/* name: v in a telemetry dict, if show has DP_TEL. */
void dp_tel_u64(struct rte_tel_data *d, unsigned show, const char *name, uint64_t v);

/* Every drop reason together. */
uint64_t dp_drops_total(const uint64_t drops[LB_DROP_MAX]);

/* The summary's line "  drops: reason=n ..." (reasons that counted any). */
void dp_drops_print(FILE *out, const uint64_t drops[LB_DROP_MAX]);

/* ,"drops":{"reason":n,...} with every reason, in a JSON object. */
void dp_drops_json(FILE *out, const uint64_t drops[LB_DROP_MAX]);

/* Every reason (or those that counted any: nonzero) into a telemetry dict. */
void dp_drops_tel(struct rte_tel_data *d, const uint64_t drops[LB_DROP_MAX], int nonzero);

/*
 * rte_telemetry_register_cmd(), with the help text's length checked when
 * compiling: DPDK 22.11 refuses a help of RTE_TEL_MAX_STRING_LEN (128)
 * bytes or more with -EINVAL, and the command is then simply missing at
 * run time (the daemon only warns).
 */
#define DP_TEL_REGISTER(cmd, fn, help)                                                             \
	({                                                                                         \
		_Static_assert(sizeof(help) <= 128, "telemetry help over 127 bytes: " cmd);        \
		rte_telemetry_register_cmd(cmd, fn, help);                                         \
	})

/*
 * What a telemetry callback reads of a module that starts and stops lives
 * in a static pointer under a mutex (the callback runs on telemetry's own
 * thread): point it at obj, or at NULL when obj goes.
 */
#define DP_TEL_PUBLISH(lock, ptr, obj)                                                             \
	do {                                                                                       \
		pthread_mutex_lock(lock);                                                          \
		(ptr) = (obj);                                                                     \
		pthread_mutex_unlock(lock);                                                        \
	} while (0)

/*
 * One part of what a daemon prints and writes when it stops: summary
 * lines, and members of the JSON summary's top-level object. The daemon's
 * own counters are the first section (its JSON members come first, the
 * first without a comma); a module with a state worth reporting adds a
 * section after it (its members start with a comma). dp_report() writes
 * them in order, inside one pair of braces.
 */
struct dp_section {
	void (*print)(const void *arg, FILE *out);
	void (*json)(const void *arg, FILE *out);
	const void *arg;
};

#endif /* DP_COUNTERS_H */
