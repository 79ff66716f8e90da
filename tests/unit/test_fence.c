/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Term fencing on a member (proto/lb_fence.h): messages from an older term
 * than the highest seen are refused, a newer term is taken and raises the
 * bar, term 0 (a single manager) is taken only until a term was seen. Each
 * case is a row: the terms that arrive, one verdict each.
 */
#include <criterion/criterion.h>

#include "lb_fence.h"

#define S LB_FENCE_SAME
#define N LB_FENCE_NEWER
#define X LB_FENCE_STALE

struct fence_case {
	const char *name;
	uint64_t start; /* the highest term seen before (a last-known-good file's) */
	int n;
	uint64_t terms[8];
	enum lb_fence_verdict want[8];
	uint64_t highest; /* after */
};

static const struct fence_case cases[] = {
	{"a single manager: term 0 throughout", 0, 3, {0, 0, 0}, {S, S, S}, 0},
	{"a first leader", 0, 3, {5, 5, 5}, {N, S, S}, 5},
	{"a new leader, then the deposed one resumes", 0, 4, {5, 9, 5, 9}, {N, N, X, S}, 9},
	{"after a leader, term 0 is refused", 0, 2, {3, 0}, {N, X}, 3},
	{"a restart keeps the term its file had", 9, 3, {5, 9, 12}, {X, S, N}, 12},
	{"a stale message never raises the bar", 7, 3, {6, 6, 7}, {X, X, S}, 7},
};

Test(fence, table)
{
	size_t i;
	int k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fence_case *c = &cases[i];
		struct lb_fence f = {.highest = c->start};

		for (k = 0; k < c->n; k++) {
			bool stale = lb_fence_stale(&f, c->terms[k]);

			cr_expect_eq(stale, c->want[k] == X, "%s: message %d: stale %d", c->name, k,
				stale);
			cr_expect_eq(lb_fence_check(&f, c->terms[k]), c->want[k],
				"%s: message %d (term %llu)", c->name, k,
				(unsigned long long)c->terms[k]);
		}
		cr_expect_eq(f.highest, c->highest, "%s: highest %llu", c->name,
			(unsigned long long)f.highest);
	}
}
