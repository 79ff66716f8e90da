/* SPDX-License-Identifier: BSD-3-Clause */
/* Top talkers: merging the workers' summaries (lb_topk.h). */
#include <stdlib.h>

#include "lb_topk.h"

static int
by_count(const void *a, const void *b)
{
	const struct lb_topk_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

uint32_t
lb_topk_merge(const struct lb_topk *const *t, uint32_t n, struct lb_topk_entry *out)
{
	uint32_t s, i, j, m = 0;

	for (s = 0; s < n; s++)
		for (i = 0; i < LB_TOPK; i++) {
			if (t[s]->count[i] == 0)
				continue;
			for (j = 0; j < m && out[j].key != t[s]->key[i]; j++)
				;
			if (j == m)
				out[m++] = (struct lb_topk_entry){t[s]->key[i], 0, 0};
		}
	for (j = 0; j < m; j++)
		for (s = 0; s < n; s++) {
			for (i = 0; i < LB_TOPK; i++)
				if (t[s]->count[i] != 0 && t[s]->key[i] == out[j].key)
					break;
			if (i < LB_TOPK) {
				out[j].count += t[s]->count[i];
				out[j].err += t[s]->err[i];
			} else {
				out[j].err += lb_topk_floor(t[s]);
			}
		}
	if (m > 1)
		qsort(out, m, sizeof(*out), by_count);
	return m;
}
