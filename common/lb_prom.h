/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prometheus' text exposition format (version 0.0.4), written to a FILE:
 * what each daemon's /metrics answers (lb_metrics.h serves it).
 *
 * A metric family is written as one block: "# HELP", "# TYPE", then all
 * its samples, which is what the format requires (a family's samples may
 * not be scattered). The writer adds the namespace ("sluice_") to every
 * name and escapes HELP text and label values, so no caller can produce
 * a line Prometheus refuses. Counters are named ..._total, in base units
 * (_bytes, _seconds), labels of low cardinality (never a client address).
 *
 *     struct lb_prom p;
 *     char l[128];
 *
 *     lb_prom_init(&p, out, "sluice_");
 *     lb_prom_family(&p, "drops_total", LB_PROM_COUNTER, "Packets dropped, by reason.");
 *     lb_prom_sample(&p, lb_prom_labels(l, sizeof(l), "reason", "ttl_expired", NULL), 3);
 *
 * Histograms (struct lb_hist) keep cumulative counts per upper bound, the
 * sum and the count of what was observed; lb_prom_hist() writes one
 * labelled instance of a histogram family (_bucket{le=...}, _sum, _count).
 */
#ifndef LB_PROM_H
#define LB_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The content type of the format, for the HTTP response. */
#define LB_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

enum lb_prom_type { LB_PROM_COUNTER, LB_PROM_GAUGE, LB_PROM_HISTOGRAM };

struct lb_prom {
	FILE *out;
	const char *ns;	    /* prepended to every name */
	const char *family; /* the family being written */
};

void lb_prom_init(struct lb_prom *p, FILE *out, const char *ns);

/* Begin a family: its HELP and TYPE lines (help escaped). */
void lb_prom_family(struct lb_prom *p, const char *name, enum lb_prom_type type, const char *help);

/* One sample of the family begun last: name{labels} v. labels may be NULL or "". */
void lb_prom_sample(struct lb_prom *p, const char *labels, uint64_t v);

/* The same with a floating-point value (shares, seconds). */
void lb_prom_sample_f(struct lb_prom *p, const char *labels, double v);

/* A family of one unlabelled sample. */
void lb_prom_one(
	struct lb_prom *p, const char *name, enum lb_prom_type type, const char *help, uint64_t v);

/*
 * A label set "k1=\"v1\",k2=\"v2\"" in buf from NULL-terminated key, value
 * pairs, the values escaped (backslash, double quote, newline). A set that
 * does not fit is cut at the last whole label. Returns buf.
 */
const char *lb_prom_labels(char *buf, size_t len, ...) __attribute__((sentinel));

/* The label set a with one more label appended (into buf). Returns buf. */
const char *lb_prom_labels_add(
	char *buf, size_t len, const char *a, const char *key, const char *value);

#define LB_HIST_MAX_BUCKETS 16

/* A histogram: counts per upper bound (seconds, ...), in increasing order. */
struct lb_hist {
	unsigned n;			      /* buckets, +Inf not counted */
	double le[LB_HIST_MAX_BUCKETS];	      /* upper bounds */
	uint64_t bucket[LB_HIST_MAX_BUCKETS]; /* observations <= le[i] (not cumulative) */
	uint64_t count;			      /* every observation: the +Inf bucket */
	double sum;
};

/* An empty histogram with the n (at most LB_HIST_MAX_BUCKETS) bounds le. */
void lb_hist_init(struct lb_hist *h, const double *le, unsigned n);

void lb_hist_observe(struct lb_hist *h, double v);

/* One instance of the histogram family begun last, with labels (or NULL). */
void lb_prom_hist(struct lb_prom *p, const char *labels, const struct lb_hist *h);

#endif /* LB_PROM_H */
