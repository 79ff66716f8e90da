/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An idle worker wakes on traffic where its ports allow it.
 *
 * A worker with nothing to read naps (dp_idle.h): up to idle_sleep_us,
 * doubling from a few microseconds. A frame that arrives during the nap
 * waits for its end, unless something ends the nap early:
 *   - net_tap: the PMD's realtime signal per frame (dp_idle.h), sent to
 *     the process: it ends the nap of whichever worker takes it, so it
 *     counts only for a process's sole worker (the agent's lcore; a mux
 *     with one worker). A signal is an edge: one that lands after the
 *     worker's last read of the tap and before its nap is taken then, and
 *     the frame waits for the nap's end (2 ms at the most; a window of a
 *     microsecond or so per loop);
 *   - net_af_packet: DPDK 22.11's PMD has no Rx interrupt, but each queue
 *     is a packet socket with an mmap()ed ring, and poll() on it says when
 *     the ring holds a frame. dp_wake_init() finds those sockets (this
 *     process's AF_PACKET sockets bound to the port's interface, one per
 *     queue pair, in the order the PMD opened them) and the nap becomes a
 *     ppoll() on them, with the same timeout.
 * A worker with any other port (a real NIC, net_ring, net_pcap, net_null,
 * or af_packet sockets not found as expected) keeps the timed nap: none
 * of its ports could wake it, so a wake on some would change nothing for
 * the rest. A real NIC's path is the one it was.
 */
#ifndef DP_WAKE_H
#define DP_WAKE_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#define DP_WAKE_MAX 16

/*
 * Shorter naps stay timed: the first nap after traffic (8 us, which the
 * kernel's timer slack stretches to up to 58). Under load a worker's naps
 * are that short, and a timed one lets a few frames gather for one burst:
 * one wake-up, one transmit system call for them all. Woken by every
 * frame from the first nap on, the lab's processes spent 14-19% more CPU
 * per request under wrk -c32 (docs/performance.md, "Waking on the
 * uplinks' frames").
 */
#define DP_WAKE_MIN_US 16
/*
 * The longest nap of a worker its frames wake (dp_wake_longest_us()):
 * the timer only paces what the worker does when idle (a slice of the
 * connection table ages per nap, the credit and fragment timers, the check
 * of the quit flag), so it may sleep longer than idle_sleep_us, which
 * bounds how long a frame waits on ports that cannot wake it.
 */
#define DP_WAKE_NAP_US 2000

struct dp_wake {
	struct pollfd fds[DP_WAKE_MAX];
	unsigned n;	 /* descriptors to poll: 0 is a timed nap */
	bool by_traffic; /* every queue of the worker ends its nap */
};

/*
 * For a worker that reads n (port, queue) pairs, after the ports started;
 * sole_worker: it is the process's only worker (a tap's signal is its).
 */
void dp_wake_init(struct dp_wake *wk, const uint16_t *ports, const uint16_t *queues, unsigned n,
	bool sole_worker);

/* The longest nap for a worker whose naps are idle_sleep_us at the most otherwise. */
static inline uint32_t
dp_wake_longest_us(const struct dp_wake *wk, uint32_t idle_sleep_us)
{
	return wk->by_traffic && idle_sleep_us < DP_WAKE_NAP_US ? DP_WAKE_NAP_US : idle_sleep_us;
}

/*
 * Nap up to us microseconds: a ppoll() on the worker's af_packet sockets
 * from DP_WAKE_MIN_US on, else a timed nap. True if a frame on a polled
 * socket ended it (a tap's signal ends either kind, and returns false, as
 * the timer).
 */
bool dp_wake_nap(struct dp_wake *wk, uint32_t us);

#endif /* DP_WAKE_H */
