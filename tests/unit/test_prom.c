/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exposition format byte for byte: a family is HELP, TYPE and its
 * samples; HELP text and label values are escaped so that nothing a
 * configuration holds (a VM's name, say) can break a line; histograms are
 * cumulative, end in +Inf and carry _sum and _count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_prom.h"

struct mem {
	char *buf;
	size_t len;
	FILE *f;
	struct lb_prom p;
};

static void
mem_open(struct mem *m)
{
	m->f = open_memstream(&m->buf, &m->len);
	cr_assert(m->f != NULL);
	lb_prom_init(&m->p, m->f, "sluice_");
}

/* What was written; the caller frees. */
static char *
mem_close(struct mem *m)
{
	fclose(m->f);
	return m->buf;
}

Test(prom, family_and_samples)
{
	struct mem m;
	char l[128];
	char *out;

	mem_open(&m);
	lb_prom_family(&m.p, "drops_total", LB_PROM_COUNTER, "Packets dropped, by reason.");
	lb_prom_sample(&m.p, lb_prom_labels(l, sizeof(l), "reason", "ttl_expired", NULL), 3);
	lb_prom_sample(&m.p, lb_prom_labels(l, sizeof(l), "reason", "fragment", NULL), 0);
	lb_prom_one(&m.p, "flow_table_version", LB_PROM_GAUGE, "Version applied.", 42);
	lb_prom_family(&m.p, "share", LB_PROM_GAUGE, "A share.");
	lb_prom_sample_f(&m.p, NULL, 0.25);
	out = mem_close(&m);
	cr_expect_str_eq(out, "# HELP sluice_drops_total Packets dropped, by reason.\n"
			      "# TYPE sluice_drops_total counter\n"
			      "sluice_drops_total{reason=\"ttl_expired\"} 3\n"
			      "sluice_drops_total{reason=\"fragment\"} 0\n"
			      "# HELP sluice_flow_table_version Version applied.\n"
			      "# TYPE sluice_flow_table_version gauge\n"
			      "sluice_flow_table_version 42\n"
			      "# HELP sluice_share A share.\n"
			      "# TYPE sluice_share gauge\n"
			      "sluice_share 0.25\n");
	free(out);
}

Test(prom, escapes)
{
	struct mem m;
	char l[128];
	char *out;

	mem_open(&m);
	lb_prom_family(
		&m.p, "vm_packets_total", LB_PROM_COUNTER, "back\\slash\nnewline \"quoted\"");
	lb_prom_sample(
		&m.p, lb_prom_labels(l, sizeof(l), "vm", "a\"b\\c\nd", "dir", "in", NULL), 1);
	out = mem_close(&m);
	/* HELP escapes \ and newline only; label values \, " and newline */
	cr_expect_str_eq(out, "# HELP sluice_vm_packets_total back\\\\slash\\nnewline \"quoted\"\n"
			      "# TYPE sluice_vm_packets_total counter\n"
			      "sluice_vm_packets_total{vm=\"a\\\"b\\\\c\\nd\",dir=\"in\"} 1\n");
	free(out);
}

Test(prom, labels_cut_at_a_whole_label)
{
	char l[24];

	/* vip="192.0.2.10" is 16 bytes; a second label does not fit in 24 */
	cr_expect_str_eq(lb_prom_labels(l, sizeof(l), "vip", "192.0.2.10", "port", "80", NULL),
		"vip=\"192.0.2.10\"");
	cr_expect_str_eq(lb_prom_labels(l, sizeof(l), NULL), "");
	cr_expect_str_eq(lb_prom_labels_add(l, sizeof(l), "a=\"1\"", "b", "2"), "a=\"1\",b=\"2\"");
	cr_expect_str_eq(lb_prom_labels_add(l, sizeof(l), NULL, "b", "2"), "b=\"2\"");
}

Test(prom, histogram)
{
	const double le[] = {0.001, 0.01, 0.1};
	struct lb_hist h;
	struct mem m;
	char l[64];
	char *out;

	lb_hist_init(&h, le, 3);
	lb_hist_observe(&h, 0.0005);
	lb_hist_observe(&h, 0.001); /* on the bound: in it */
	lb_hist_observe(&h, 0.05);
	lb_hist_observe(&h, 2);
	mem_open(&m);
	lb_prom_family(&m.p, "sync_delay_seconds", LB_PROM_HISTOGRAM, "Delay.");
	lb_prom_hist(&m.p, lb_prom_labels(l, sizeof(l), "member", "mux1", NULL), &h);
	out = mem_close(&m);
	cr_expect_str_eq(out, "# HELP sluice_sync_delay_seconds Delay.\n"
			      "# TYPE sluice_sync_delay_seconds histogram\n"
			      "sluice_sync_delay_seconds_bucket{member=\"mux1\",le=\"0.001\"} 2\n"
			      "sluice_sync_delay_seconds_bucket{member=\"mux1\",le=\"0.01\"} 2\n"
			      "sluice_sync_delay_seconds_bucket{member=\"mux1\",le=\"0.1\"} 3\n"
			      "sluice_sync_delay_seconds_bucket{member=\"mux1\",le=\"+Inf\"} 4\n"
			      "sluice_sync_delay_seconds_sum{member=\"mux1\"} 2.0515\n"
			      "sluice_sync_delay_seconds_count{member=\"mux1\"} 4\n");
	free(out);
}
