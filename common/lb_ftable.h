/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Operations on flow tables as plain C: what the manager and the members
 * do between versions. A version N is the table of N-1 with a delta
 * applied: services replaced whole or removed, and the options (seed,
 * Maglev size) when they change. The manager computes deltas with
 * lb_ftable_diff(); every member rebuilds N with lb_ftable_apply() and
 * proves it holds the manager's table by the digest (lb_codec.h).
 *
 * Tables are kept sorted: services by (vip, proto, port), backends of a
 * service by (dip, port). Functions that build tables sort them, so two
 * tables with the same content are byte-for-byte alike.
 */
#ifndef LB_FTABLE_H
#define LB_FTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_config.h"

/* Version N-1 -> N: services replaced whole or removed, options if changed. */
struct lb_ftable_delta {
	uint32_t n_upsert;
	struct lb_service_cfg *upsert;
	uint32_t n_remove;
	struct lb_svc_key *remove;
	bool has_options;
	struct lb_hash_seed seed;
	uint32_t maglev_size;
};

/* Deep copy. Returns 0 or -LB_ENOMEM (dst left empty). */
int lb_ftable_copy(struct lb_ftable *dst, const struct lb_ftable *src);

/* Sort services and each service's backends into canonical order. */
void lb_ftable_sort(struct lb_ftable *ft);

/*
 * Check what a table received from elsewhere must satisfy: ports, protocols,
 * weights, states, no duplicate service or backend, Maglev size prime,
 * backend ids unique. Returns 0, or -LB_EINVAL with the reason in err.
 */
int lb_ftable_validate(const struct lb_ftable *ft, char *err, size_t len);

/* Index of the service with key k, or -1. */
int lb_ftable_find(const struct lb_ftable *ft, const struct lb_svc_key *k);

/* The key of service sc. */
void lb_ftable_key(const struct lb_service_cfg *sc, struct lb_svc_key *k);

/*
 * out = base with d applied (sorted, validated). A removal of a service
 * base lacks, or an upsert that fails validation, is an error: -LB_EINVAL
 * with the reason in err; out is then left empty.
 */
int lb_ftable_apply(const struct lb_ftable *base, const struct lb_ftable_delta *d,
	struct lb_ftable *out, char *err, size_t len);

/*
 * The delta that turns `from` into `to`: every service of `to` that
 * `from` lacks or holds differently, every service of `from` that `to`
 * lacks, and the options when they differ. Returns 0 or -LB_ENOMEM.
 */
int lb_ftable_diff(
	const struct lb_ftable *from, const struct lb_ftable *to, struct lb_ftable_delta *out);

bool lb_ftable_delta_empty(const struct lb_ftable_delta *d);

void lb_ftable_delta_free(struct lb_ftable_delta *d);

/*
 * Write ft as a libconfig "flow_table" group that lb_ftable_load() reads
 * back to the same table, ids aside (a file does not carry them: the
 * manager keeps a backend's id by its service, DIP and port). Returns 0 or
 * -LB_EIO.
 */
int lb_ftable_write(const struct lb_ftable *ft, FILE *f);

#endif /* LB_FTABLE_H */
