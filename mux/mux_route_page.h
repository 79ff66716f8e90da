/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The page the mux and its speaker share: a MAP_SHARED anonymous mapping
 * made before the mux forks the speaker (mux_route.c), so both processes
 * see the same bytes and nothing else is shared.
 *
 * Two sections, one writer each: the mux writes `mux` (heartbeat, the VIPs
 * it wants announced, withdraw-all, stop), the speaker writes `spk` (what
 * BIRD announces, since when, the sessions, its errors). Each section sits
 * behind its own sequence counter (a seqlock): the writer makes it odd,
 * copies its prepared section in, makes it even again; a reader copies the
 * section out and keeps the copy only if the counter was even and did not
 * move meanwhile. Neither process ever waits for the other, and a process
 * that dies (or is stopped) mid-write leaves an odd counter that the other
 * reads as "no consistent section": the speaker then treats the mux as
 * frozen, which is the truth.
 *
 * Times are CLOCK_MONOTONIC milliseconds, the same clock in both processes.
 */
#ifndef MUX_ROUTE_PAGE_H
#define MUX_ROUTE_PAGE_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "lb_clock.h"
#include "mux_bgp_cfg.h"

#define MUX_RP_MAGIC 0x534c5250u /* "SLRP" */
#define MUX_RP_MAX_VIPS 1024
#define MUX_RP_TEXT 128

struct mux_rp_mux {
	uint64_t heartbeat_ms; /* bumped only while every worker progresses and ports are up */
	uint64_t request;      /* bumped on every change of the fields below */
	uint32_t withdraw_all; /* shutting down (or drained): announce nothing */
	uint32_t stop;	       /* the mux exits: bring BIRD down and exit */
	uint32_t n_vips;
	uint32_t vips[MUX_RP_MAX_VIPS]; /* network order, sorted */
	char reason[MUX_RP_TEXT];	/* why the set is empty, when it is */
};

struct mux_rp_peer {
	uint32_t addr; /* network order */
	uint32_t as;
	uint32_t established;
	uint64_t since_unix; /* BIRD's "since" of the session's state, unix seconds */
	char state[24];	     /* BGP state as BIRD says it: Established, Active, Connect ... */
	char error[96];	     /* BIRD's last error on the session, if any */
};

struct mux_rp_speaker {
	uint64_t updated_ms;	  /* the speaker's last pass */
	uint64_t applied_request; /* BIRD runs what this request asked (or less) */
	uint64_t announces;	  /* VIP routes given to BIRD */
	uint64_t withdraws;	  /* VIP routes taken from BIRD */
	uint64_t errors;	  /* failed reconfigurations, BIRD exits, control socket failures */
	uint64_t stale_withdrawals; /* times the heartbeat went stale: all withdrawn */
	uint64_t last_exported_ms;  /* last pass with routes up on an established session */
	uint64_t last_error_ms;
	uint32_t bird_pid;
	uint32_t stale;	 /* withdrawn now because the heartbeat is too old */
	uint32_t n_vips; /* what BIRD announces */
	uint32_t vips[MUX_RP_MAX_VIPS];
	uint64_t since_ms[MUX_RP_MAX_VIPS];
	uint32_t n_peers;
	struct mux_rp_peer peers[MUX_BGP_MAX_NEIGHBORS];
	char state[MUX_RP_TEXT]; /* "running", "BIRD restarting", "stopped" ... */
	char last_error[MUX_RP_TEXT];
};

struct mux_route_page {
	uint32_t magic;
	uint32_t mux_seq __attribute__((aligned(64)));
	struct mux_rp_mux mux;
	uint32_t spk_seq __attribute__((aligned(64)));
	struct mux_rp_speaker spk;
};

/* Publish len bytes of src into the section dst behind *seq (its only writer). */
static inline void
mux_rp_write(uint32_t *seq, void *dst, const void *src, size_t len)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(dst, src, len);
	__atomic_store_n(seq, s + 2, __ATOMIC_RELEASE);
}

/*
 * Copy the section src behind *seq into dst. false: no consistent copy in
 * a few hundred tries (the writer is stopped or died mid-write).
 */
static inline bool
mux_rp_read(const uint32_t *seq, void *dst, const void *src, size_t len)
{
	int tries;

	for (tries = 0; tries < 256; tries++) {
		uint32_t s1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE), s2;

		if (s1 & 1) {
			sched_yield();
			continue;
		}
		memcpy(dst, src, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return true;
	}
	return false;
}

/*
 * Is vip (network order) among what BIRD announces, in the speaker's
 * section s? true: *since is since when. A plain scan: the list is short.
 */
static inline bool
mux_rp_announces(const struct mux_rp_speaker *s, uint32_t vip, uint64_t *since)
{
	uint32_t i;

	for (i = 0; i < s->n_vips; i++)
		if (s->vips[i] == vip) {
			*since = s->since_ms[i];
			return true;
		}
	return false;
}

#endif /* MUX_ROUTE_PAGE_H */
