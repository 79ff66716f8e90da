/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RCU state that guards what the workers read (the mux's generation,
 * the agent's mapping): each worker reports quiescence once per loop and
 * goes offline while it naps; the thread that replaces the table waits
 * for all of them (rte_rcu_qsbr_synchronize) before freeing the old one.
 */
#ifndef DP_RCU_H
#define DP_RCU_H

#include <stdio.h>

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

/* QSBR state for n worker threads (ids 0 .. n-1), or NULL with errbuf. */
static inline struct rte_rcu_qsbr *
dp_rcu_create(const char *name, unsigned n, char *errbuf, size_t len)
{
	struct rte_rcu_qsbr *v;

	v = rte_zmalloc(name, rte_rcu_qsbr_get_memsize(n), RTE_CACHE_LINE_SIZE);
	if (v == NULL || rte_rcu_qsbr_init(v, n) != 0) {
		rte_free(v);
		snprintf(errbuf, len, "RCU state: out of memory");
		return NULL;
	}
	return v;
}

#endif /* DP_RCU_H */
