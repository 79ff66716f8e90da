/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's lcore loop: poll the uplink and every VM port, flush, report
 * RCU quiescence (the mapping may be swapped by a reload), and nap with a
 * doubling back-off when nothing arrives (busy_poll spins instead); a
 * frame on a VM's tap ends the nap (dp_idle.h).
 */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_rcu_qsbr.h>

#include "dp_idle.h"
#include "dp_wake.h"
#include "ha_agent.h"
#include "ha_track.h"

#define HA_IDLE_SPINS 64
#define HA_FIRST_NAP_US 8

/* Buffered transmit (dp_tx.h): every port on TX queue 0, the lcore's. */
void
ha_flush(struct ha_worker *w)
{
	w->cnt.tx += dp_flush(w->tx, HA_MAX_PORTS, 0, w->cnt.drops);
}

int
ha_worker_main(void *arg)
{
	struct ha_worker *w = arg;
	struct rte_mbuf *pkts[HA_BURST];
	uint32_t empty = 0, nap = HA_FIRST_NAP_US, longest;
	uint64_t tsc0, tsc_per_ms;
	uint16_t n, got, ports[HA_MAX_PORTS], queues[HA_MAX_PORTS] = {0};
	struct dp_wake wake;
	int v;

	dp_worker_signals(); /* a VM's frame wakes this lcore (dp_idle.h) */
	ports[0] = w->uplink;
	for (v = 0; v < w->n_vms; v++)
		ports[v + 1] = w->vms[v].port;
	dp_wake_init(&wake, ports, queues, w->n_vms + 1u, true); /* and the uplink's (dp_wake.h) */
	longest = dp_wake_longest_us(&wake, w->idle_sleep_us);
	/*
	 * The loop's clock is the TSC, as the mux's: clock_gettime() on every
	 * loop (the vDSO's, which a paravirtualized guest's clock makes slow)
	 * was 0.4 us of CPU per keep-alive request in the lab (docs/performance.md).
	 */
	tsc0 = rte_rdtsc();
	tsc_per_ms = RTE_MAX(rte_get_tsc_hz() / 1000, UINT64_C(1));
	rte_rcu_qsbr_thread_register(w->qsv, 0);
	rte_rcu_qsbr_thread_online(w->qsv, 0);
	while (!w->quit) {
		got = 0;
		w->loops++;
		w->now_ms = (uint32_t)((rte_rdtsc() - tsc0) / tsc_per_ms);
		n = rte_eth_rx_burst(w->uplink, 0, pkts, HA_BURST);
		if (n != 0) {
			got += n;
			ha_uplink_burst(w, pkts, n);
		}
		for (v = 0; v < w->n_vms; v++) {
			n = rte_eth_rx_burst(w->vms[v].port, 0, pkts, HA_BURST);
			if (n != 0) {
				got += n;
				ha_vm_burst(w, v, pkts, n);
			}
		}
		ha_flush(w);
		ha_frag_expire(w, rte_rdtsc());
		/* Done with this loop's map: a replaced one may now be freed. */
		rte_rcu_qsbr_quiescent(w->qsv, 0);
		if (got != 0) {
			ha_track_sweep(w);
			empty = 0;
			nap = HA_FIRST_NAP_US;
			continue;
		}
		/* Idle, the tracker ages once per nap, not on each empty poll (as the mux). */
		if (!w->busy_poll && ++empty < HA_IDLE_SPINS)
			continue;
		ha_track_sweep(w);
		if (w->busy_poll)
			continue;
		rte_rcu_qsbr_thread_offline(w->qsv, 0);
		w->cnt.idle_wakes += dp_wake_nap(&wake, nap);
		rte_rcu_qsbr_thread_online(w->qsv, 0);
		w->cnt.idle_sleeps++;
		nap = RTE_MIN(nap * 2, longest);
	}
	ha_flush(w);
	rte_rcu_qsbr_thread_offline(w->qsv, 0);
	rte_rcu_qsbr_thread_unregister(w->qsv, 0);
	return 0;
}
