/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A service's top talkers over the muxes (sluicectl top): each mux's list
 * of its largest sources (lb_limits.h, "top.": LB_TOP_REPORTED of them,
 * merged over its workers, counts since it started and their error
 * bounds), merged as the workers' summaries merge (lb_topk.h): counts and
 * errors of a source added, and a source a mux's full list lacks may have
 * had up to that list's smallest count there, which its error adds.
 *
 * Rates from each mux's last two lists, dt seconds apart: a source's count
 * grew by so much; a source not in the earlier list (or whose count went
 * back: the mux restarted) entered the summary since and has been counted
 * exactly since then, count - err. Rates add over the muxes.
 */
#ifndef MGR_TOP_H
#define MGR_TOP_H

#include <stdint.h>

#include "lb_limits.h"

/* One mux's list, largest first. */
struct mgr_top_list {
	uint32_t k;		       /* entries */
	uint32_t src[LB_TOP_REPORTED]; /* IPv4, network order */
	uint64_t n[LB_TOP_REPORTED];
	uint64_t err[LB_TOP_REPORTED];
};

struct mgr_top_row {
	uint32_t src;
	uint64_t n, err;
	double rate;	/* per second, over the muxes with a rate */
	uint32_t muxes; /* whose lists have it */
};

/*
 * Merge n muxes' lists cur[i], with prev[i] the list before it and dt[i]
 * the seconds between them (0: no rate for that mux), into rows (room for
 * n * LB_TOP_REPORTED), largest count first. Returns the rows.
 */
uint32_t mgr_top_merge(const struct mgr_top_list *cur, const struct mgr_top_list *prev,
	const double *dt, uint32_t n, struct mgr_top_row *rows);

#endif /* MGR_TOP_H */
