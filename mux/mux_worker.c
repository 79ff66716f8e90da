/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker loop, and a worker's setup. Poll every owned RX queue, run the burst, flush, report
 * quiescence to RCU once per loop. When several loops in a row find nothing,
 * take the worker offline for RCU and nap, doubling the nap up to the
 * configured ceiling, so an idle lab leaves its cores to others; any packet
 * resets the back-off. busy_poll keeps the lcore spinning for benchmarks.
 */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "dp_idle.h"
#include "dp_wake.h"
#include "lb_err.h"
#include "mux_conn.h"
#include "mux_credit.h"
#include "mux_gen.h"
#include "mux_worker.h"

#define MUX_IDLE_SPINS 64 /* empty loops before the first nap */
#define MUX_FIRST_NAP_US 8

int
mux_worker_init(struct mux_worker *w, struct mux_ctx *ctx, const struct mux_gen *g, uint16_t idx,
	unsigned lcore, uint32_t entries, uint32_t entries6, const uint32_t timeout[3], int socket)
{
	char name[32];

	memset(w, 0, sizeof(*w));
	w->ctx = ctx;
	w->lcore = lcore;
	w->idx = idx;
	w->ip_id = idx;
	w->ip_id_step = (uint16_t)rte_align32pow2(RTE_MAX(ctx->n_workers, idx + 1u));
	snprintf(name, sizeof(name), "conn_%u", idx);
	w->conn = mux_conn_create(name, entries, socket, timeout, &g->seed, g->cap_services);
	snprintf(name, sizeof(name), "conn6_%u", idx);
	w->conn6 = mux_conn6_create(name, entries6, socket, timeout, &g->seed, g->cap_services);
	if (mux_limit_init(&w->lim, g->cap_services, socket) != 0)
		return -LB_ENOMEM;
	/* Indexed by stable id: room for every id a reload may hand out. */
	w->svc_cnt = rte_zmalloc_socket(
		"svc_cnt", sizeof(*w->svc_cnt) * g->cap_services, RTE_CACHE_LINE_SIZE, socket);
	w->be_cnt = rte_zmalloc_socket(
		"be_cnt", sizeof(*w->be_cnt) * g->cap_backends, RTE_CACHE_LINE_SIZE, socket);
	if (w->conn == NULL || w->conn6 == NULL || w->svc_cnt == NULL || w->be_cnt == NULL)
		return -LB_ENOMEM;
	return 0;
}

void
mux_worker_fini(struct mux_worker *w)
{
	mux_conn_free(w->conn);
	mux_conn6_free(w->conn6);
	mux_limit_fini(&w->lim);
	rte_free(w->svc_cnt);
	rte_free(w->be_cnt);
	w->conn = NULL;
	w->conn6 = NULL;
	w->svc_cnt = NULL;
	w->be_cnt = NULL;
}

int
mux_worker_main(void *arg)
{
	struct mux_worker *w = arg;
	struct mux_ctx *ctx = w->ctx;
	struct rte_mbuf *pkts[MUX_BURST];
	uint32_t empty = 0, nap = MUX_FIRST_NAP_US, longest;
	uint16_t q, n, ports[MUX_MAX_PORTS], queues[MUX_MAX_PORTS];
	struct dp_wake wake;

	dp_worker_signals(); /* a frame on a net_tap port wakes this lcore (dp_idle.h) */
	for (q = 0; q < w->n_rxq; q++) {
		ports[q] = w->rxq[q].port;
		queues[q] = w->rxq[q].queue;
	}
	/* and one on af_packet (dp_wake.h) */
	dp_wake_init(&wake, ports, queues, w->n_rxq, ctx->n_workers == 1);
	longest = dp_wake_longest_us(&wake, ctx->idle_sleep_us);
	rte_rcu_qsbr_thread_register(ctx->qsv, w->idx);
	rte_rcu_qsbr_thread_online(ctx->qsv, w->idx);
	while (!ctx->quit) {
		const struct mux_gen *g = __atomic_load_n(&ctx->gen, __ATOMIC_ACQUIRE);
		uint32_t now = mux_now(ctx, rte_rdtsc());
		uint32_t got = 0;

		w->loops++;
		for (q = 0; q < w->n_rxq; q++) {
			n = rte_eth_rx_burst(w->rxq[q].port, w->rxq[q].queue, pkts, MUX_BURST);
			if (n == 0)
				continue;
			got += n;
			mux_burst(w, g, w->rxq[q].port, pkts, n, now);
		}
		mux_flush(w);
		rte_rcu_qsbr_quiescent(ctx->qsv, w->idx);
		/* Grants nobody spends still expire and leave their lane (mux_credit.h). */
		if (ctx->credit != NULL)
			mux_credit_sweep(mux_credit_lane(ctx->credit, w->idx,
						 w->credit_sweep++ % MUX_CREDIT_SLOTS),
				rte_rdtsc());
		if (got != 0) {
			w->cnt.conn_swept += mux_conn_sweep(w->conn, now, MUX_SWEEP_BUSY);
			/* An empty IPv6 table costs nothing: IPv4-only traffic never reads it. */
			if (mux_conn6_count(w->conn6) != 0)
				w->cnt.conn_swept += mux_conn6_sweep(w->conn6, now, MUX_SWEEP_BUSY);
			empty = 0;
			nap = MUX_FIRST_NAP_US;
			continue;
		}
		/*
		 * Idle, a slice of the table ages: on every empty poll of a
		 * busy-polling lcore (its own core), else once before each nap,
		 * not on each of the empty polls before it (a lab's mux between
		 * two packets spun through 64 x 256 slots, docs/performance.md).
		 */
		if (!ctx->busy_poll && ++empty < MUX_IDLE_SPINS)
			continue;
		w->cnt.conn_swept += mux_conn_sweep(w->conn, now, MUX_SWEEP_IDLE);
		if (mux_conn6_count(w->conn6) != 0)
			w->cnt.conn_swept += mux_conn6_sweep(w->conn6, now, MUX_SWEEP_IDLE);
		if (ctx->busy_poll)
			continue;
		rte_rcu_qsbr_thread_offline(ctx->qsv, w->idx);
		w->cnt.idle_wakes += dp_wake_nap(&wake, nap);
		rte_rcu_qsbr_thread_online(ctx->qsv, w->idx);
		w->cnt.idle_sleeps++;
		nap = RTE_MIN(nap * 2, longest);
	}
	mux_flush(w);
	rte_rcu_qsbr_thread_offline(ctx->qsv, w->idx);
	rte_rcu_qsbr_thread_unregister(ctx->qsv, w->idx);
	return 0;
}
