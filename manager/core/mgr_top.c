/* SPDX-License-Identifier: BSD-3-Clause */
/* Top talkers merged over the muxes, with their rates (mgr_top.h). */
#include <stdlib.h>
#include <string.h>

#include "mgr_top.h"

static int
list_find(const struct mgr_top_list *l, uint32_t src)
{
	uint32_t i;

	for (i = 0; i < l->k; i++)
		if (l->src[i] == src)
			return (int)i;
	return -1;
}

static struct mgr_top_row *
row_of(struct mgr_top_row *rows, uint32_t *n_rows, uint32_t src)
{
	uint32_t i;

	for (i = 0; i < *n_rows; i++)
		if (rows[i].src == src)
			return &rows[i];
	memset(&rows[*n_rows], 0, sizeof(rows[0]));
	rows[*n_rows].src = src;
	return &rows[(*n_rows)++];
}

static int
by_count(const void *a, const void *b)
{
	const struct mgr_top_row *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : x->src < y->src ? -1 : x->src > y->src;
}

uint32_t
mgr_top_merge(const struct mgr_top_list *cur, const struct mgr_top_list *prev, const double *dt,
	uint32_t n, struct mgr_top_row *rows)
{
	uint32_t m, i, r, n_rows = 0;

	for (m = 0; m < n; m++)
		for (i = 0; i < cur[m].k; i++) {
			struct mgr_top_row *row = row_of(rows, &n_rows, cur[m].src[i]);
			int was = list_find(&prev[m], cur[m].src[i]);
			uint64_t c = cur[m].n[i], since;

			row->n += c;
			row->err += cur[m].err[i];
			row->muxes++;
			if (dt[m] <= 0)
				continue;
			if (was >= 0 && c >= prev[m].n[was])
				since = c - prev[m].n[was];
			else
				since = c >= cur[m].err[i] ? c - cur[m].err[i] : 0;
			row->rate += (double)since / dt[m];
		}
	for (m = 0; m < n; m++)
		for (r = 0; cur[m].k == LB_TOP_REPORTED && r < n_rows; r++)
			if (list_find(&cur[m], rows[r].src) < 0)
				rows[r].err += cur[m].n[LB_TOP_REPORTED - 1];
	qsort(rows, n_rows, sizeof(rows[0]), by_count);
	return n_rows;
}
