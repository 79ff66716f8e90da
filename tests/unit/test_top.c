/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl top's arithmetic (manager/core/mgr_top.c): the muxes' lists
 * merged (counts and errors added, a full list's smallest count added to
 * the error of a source it lacks), largest first, and the rates from two
 * lists: growth over the time between, a newcomer's count less its
 * inherited error, a count gone back (a restarted mux) taken as new.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "mgr_top.h"

#define A 0x01005064u /* 100.80.0.1, network order on a little-endian host */
#define B 0x02005064u
#define C 0x03005064u

/* Two muxes' lists (cur), the lists before them (prev), the seconds between (dt). */
static struct mgr_top_list cur[2], prev[2];
static double dt[2];
static struct mgr_top_row r[2 * LB_TOP_REPORTED];

static void
reset(void)
{
	memset(cur, 0, sizeof(cur));
	memset(prev, 0, sizeof(prev));
	memset(dt, 0, sizeof(dt));
	memset(r, 0, sizeof(r));
}

TestSuite(top, .init = reset);

static uint32_t
merge(void)
{
	return mgr_top_merge(cur, prev, dt, 2, r);
}

static void
put(struct mgr_top_list *l, uint32_t src, uint64_t n, uint64_t err)
{
	l->src[l->k] = src;
	l->n[l->k] = n;
	l->err[l->k] = err;
	l->k++;
}

static const struct mgr_top_row *
row(uint32_t n, uint32_t src)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (r[i].src == src)
			return &r[i];
	cr_assert_fail("source %08x not merged", src);
	return NULL;
}

Test(top, sums_over_muxes_largest_first)
{
	uint32_t n;

	put(&cur[0], B, 40, 0);
	put(&cur[0], A, 30, 2);
	put(&cur[1], A, 50, 1);
	put(&cur[1], C, 5, 0);
	n = merge();
	cr_assert_eq(n, 3);
	cr_assert_eq(r[0].src, A);
	cr_assert_eq(r[0].n, 80);
	cr_assert_eq(r[0].err, 3);
	cr_assert_eq(r[0].muxes, 2);
	cr_assert_eq(r[1].src, B);
	cr_assert_eq(r[1].n, 40);
	cr_assert_eq(r[2].src, C);
	/* lists that are not full lack nothing: no error added */
	cr_assert_eq(r[1].err, 0);
	cr_assert_eq(r[2].err, 0);
	cr_assert_eq(r[0].rate, 0);
}

Test(top, a_full_list_bounds_what_it_lacks)
{
	uint32_t i;

	/* mux 0's full list ends at 7: C, which it lacks, may have had 7 there */
	for (i = 0; i < LB_TOP_REPORTED; i++)
		put(&cur[0], 0x0a000000u + i, 100 - 10 * i - (i == LB_TOP_REPORTED - 1 ? 53 : 0),
			0);
	put(&cur[1], C, 20, 1);
	put(&cur[1], 0x0a000000u, 4, 0);
	cr_assert_eq(cur[0].n[LB_TOP_REPORTED - 1], 7);
	cr_assert_eq(merge(), LB_TOP_REPORTED + 1);
	cr_assert_eq(row(LB_TOP_REPORTED + 1, C)->err, 1 + 7);
	cr_assert_eq(row(LB_TOP_REPORTED + 1, C)->muxes, 1);
	/* mux 1's list is not full: what it lacks gets nothing from it */
	cr_assert_eq(row(LB_TOP_REPORTED + 1, 0x0a000001u)->err, 0);
	cr_assert_eq(row(LB_TOP_REPORTED + 1, 0x0a000000u)->n, 104);
}

Test(top, rates_from_two_lists)
{
	uint32_t n;

	dt[0] = 0.5;
	dt[1] = 2.0;

	/* mux 0: A grew 100 -> 150 in 0.5 s; B is new, 30 with 10 inherited */
	put(&prev[0], A, 100, 0);
	put(&cur[0], A, 150, 0);
	put(&cur[0], B, 30, 10);
	/* mux 1 restarted: A went back from 900 to 8 (2 of them inherited) */
	put(&prev[1], A, 900, 0);
	put(&cur[1], A, 8, 2);
	n = merge();
	cr_assert_eq(n, 2);
	cr_assert_float_eq(row(n, A)->rate, 50 / 0.5 + 6 / 2.0, 1e-9);
	cr_assert_float_eq(row(n, B)->rate, 20 / 0.5, 1e-9);
	cr_assert_eq(row(n, A)->n, 158);
}

Test(top, a_mux_without_two_lists_adds_no_rate)
{
	dt[1] = 1.0;

	put(&cur[0], A, 1000, 0);
	put(&prev[1], A, 10, 0);
	put(&cur[1], A, 40, 0);
	cr_assert_eq(merge(), 1);
	cr_assert_float_eq(r[0].rate, 30.0, 1e-9);
	cr_assert_eq(r[0].n, 1040);
}

Test(top, no_muxes_no_rows)
{
	cr_assert_eq(mgr_top_merge(NULL, NULL, NULL, 0, r), 0);
}
