/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the micro mode's two halves share: a scenario (what to build and how
 * to drive it), a run's result, and the environment the EAL set up.
 * bench_micro_run.c builds a scenario's tables and times its batches;
 * bench_micro.c holds the suites, judges and reports the results, and
 * starts the EAL.
 */
#ifndef BENCH_MICRO_H
#define BENCH_MICRO_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench.h"
#include "mux_worker.h"

#define BENCH_BATCH 64 /* bursts per timed batch */
#define BENCH_BATCH_PKTS (BENCH_BATCH * MUX_BURST)
#define BENCH_SEQ_LEN (1u << 22)    /* flow picks before the sequence wraps */
#define BENCH_NOW 1000		    /* the connection table's clock, seconds */
#define BENCH_NEW_BASE (1ull << 32) /* flow numbers never used by warm-up */
#define BENCH_SAMPLE 64		    /* timed RCU runs: check one batch in this many */
#define BENCH_SWAP_POOL 4	    /* generations pre-built when a build is too slow */
#define BENCH_SMOKE_SWAPS 20	    /* the smoke swap run lasts at least this many swaps */

/*
 * The floor scenarios time what every forwarded packet costs before the
 * mux has chosen anything: mux_burst()'s parse (floor-parse), and that with
 * the connection key and the keyed flow hash (floor-parse-hash), the same
 * inline functions on the same frames. No real mux can cost less per packet
 * than floor-parse-hash (the design's keyed, symmetric flow hash), so it
 * bounds what any tuning of the rest can reach (docs/performance.md).
 */
enum bench_floor { BENCH_FLOOR_NONE, BENCH_FLOOR_PARSE, BENCH_FLOOR_HASH };

struct scenario {
	const char *name;
	const char *what;
	uint32_t services;
	uint32_t backends;
	uint32_t maglev;
	uint32_t conns; /* established flows, inserted before timing */
	enum bench_dist dist;
	bool syn;		/* every packet a new flow (SYN) */
	bool fill;		/* fill the table to the first failed insert first */
	uint32_t entries;	/* connection-table size */
	uint32_t reset_at;	/* syn: reset the table (untimed) once it holds this many */
	uint32_t swap_us;	/* replace the generation every swap_us microseconds (0: never) */
	bool rcu;		/* load ctx->gen and report RCU quiescence per burst, as a worker */
	enum bench_floor floor; /* time only the first steps of mux_burst (a lower bound) */
	bool rules;		/* every service has every admission rule, none ever refusing */
	bool v6;		/* IPv6 clients, VIPs, DIPs and PAs (6in6) */
	bool sweep;		/* after each burst the busy sweep, as a worker runs it */
};

struct result {
	uint64_t pkts;
	uint64_t mux_cyc;
	uint64_t prep_cyc;
	uint64_t fwd, hit, new_conns, full, drops, tx, tx_full;
	uint64_t live;
	double build_s;
	double warm_s;		/* the warm-up: inserting every connection */
	uint64_t table_bytes;	/* the scenario's connection table: its buckets */
	uint64_t table_entries; /* ... and the entries they hold */
	/* RCU scenarios */
	uint64_t swaps;	  /* generations published during the timed loop */
	uint64_t checked; /* packets checked frame by frame (sampled batches) */
	double loop_s;	  /* wall time of the timed loop, untimed parts included */
	double sync_us;	  /* mean and longest rte_rcu_qsbr_synchronize() wait */
	double sync_max_us;
	double swap_build_ms; /* mean build of a swapped-in generation (fresh mode) */
	bool fresh;	      /* each swap built a new generation (else: a pre-built pool) */
	/*
	 * Scenarios of 1M connections or more: how long one burst took
	 * (mux_burst(), and the sweep where the scenario runs it), the wait of
	 * its last packet before the next poll. Percentiles 50, 99, 99.9 and
	 * the longest, in microseconds; n_lat bursts timed.
	 */
	double lat_us[4];
	uint64_t n_lat;
};

struct bench_env {
	struct rte_mempool *pool;
	struct mux_ctx ctx;
	uint16_t port;
	uint64_t hz;
	int socket;
	uint16_t idx;	    /* the worker's index (its tables' names): 0, or 1 beside it */
	cpu_set_t ctl_cpus; /* where the swapping control thread runs */
};

/*
 * Build sc's tables, warm its flows up and time mux_burst() over them for
 * seconds (check: the smoke run, every packet checked, nothing timed).
 * Returns 0 or -1 (the reason on stderr).
 */
int bench_run_scenario(struct bench_env *env, const struct scenario *sc, double seconds, bool check,
	struct result *r);

#endif /* BENCH_MICRO_H */
