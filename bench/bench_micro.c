/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Micro mode: drive the real mux_burst() with pre-built mbufs.
 *
 * One worker is set up as mux/main.c's workers_create() does it (context,
 * connection table, per-service and per-backend counters) on the lcore the
 * benchmark runs on. Each round allocates a batch of BENCH_BATCH bursts,
 * writes a frame into every mbuf from the flow sequence ("prep", timed
 * apart), then runs mux_burst() over the batch and takes the results back
 * out of w->tx[0] (the timed region). The reclaimed mbufs are freed in
 * bulk, again outside the timed region. So the timed cycles are exactly
 * those of the function the worker lcores run between rx_burst and tx_burst.
 *
 * A batch is 64 bursts (2048 frames, about 400 KiB of mbufs and data), so the
 * frames mux_burst reads come from L2 rather than L1, roughly what a NIC's
 * DMA into the last-level cache gives a real worker.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "bench.h"
#include "lb_dpdk.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "mux_conn.h"
#include "mux_gen.h"
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

/* Where the floor runs leave their results, so the compiler keeps the work. */
volatile uint64_t bench_sink;

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
};

struct result {
	uint64_t pkts;
	uint64_t mux_cyc;
	uint64_t prep_cyc;
	uint64_t fwd, hit, new_conns, full, drops, tx, tx_full;
	uint64_t live;
	double build_s;
	double warm_s;
	/* RCU scenarios */
	uint64_t swaps;	  /* generations published during the timed loop */
	uint64_t checked; /* packets checked frame by frame (sampled batches) */
	double loop_s;	  /* wall time of the timed loop, untimed parts included */
	double sync_us;	  /* mean and longest rte_rcu_qsbr_synchronize() wait */
	double sync_max_us;
	double swap_build_ms; /* mean build of a swapped-in generation (fresh mode) */
	bool fresh;	      /* each swap built a new generation (else: a pre-built pool) */
};

struct bench_env {
	struct rte_mempool *pool;
	struct mux_ctx ctx;
	uint16_t port;
	uint64_t hz;
	int socket;
	cpu_set_t ctl_cpus; /* where the swapping control thread runs */
};

static const struct scenario full_suite[] = {
	{"est-1k-uniform", "established, 1k connections, uniform", 10, 100, 65537, 1000,
		BENCH_UNIFORM, false, false, 1u << 20, 0},
	{"est-1k-zipf", "established, 1k connections, Zipf s=1", 10, 100, 65537, 1000, BENCH_ZIPF,
		false, false, 1u << 20, 0},
	{"est-10k-uniform", "established, 10k connections, uniform", 10, 100, 65537, 10000,
		BENCH_UNIFORM, false, false, 1u << 20, 0},
	{"est-10k-zipf", "established, 10k connections, Zipf s=1", 10, 100, 65537, 10000,
		BENCH_ZIPF, false, false, 1u << 20, 0},
	{"est-100k-uniform", "established, 100k connections, uniform", 10, 100, 65537, 100000,
		BENCH_UNIFORM, false, false, 1u << 20, 0},
	{"est-100k-zipf", "established, 100k connections, Zipf s=1", 10, 100, 65537, 100000,
		BENCH_ZIPF, false, false, 1u << 20, 0},
	{"est-1m-uniform", "established, 1M connections, uniform", 10, 100, 65537, 1000000,
		BENCH_UNIFORM, false, false, 1310720, 0},
	{"est-1m-zipf", "established, 1M connections, Zipf s=1", 10, 100, 65537, 1000000,
		BENCH_ZIPF, false, false, 1310720, 0},
	{"syn-insert", "new connections (SYN), every packet misses and inserts", 10, 100, 65537, 0,
		BENCH_SEQ, true, false, 1u << 21, 1500000},
	{"syn-full", "new connections (SYN) into a full table: insert fails", 10, 100, 65537, 0,
		BENCH_SEQ, true, true, 1u << 16, 0},
	/* The cost of admission rules (docs/protection.md): run interleaved with their twins. */
	{"est-1k-rules", "est-1k-uniform with every admission rule on every service", 10, 100,
		65537, 1000, BENCH_UNIFORM, false, false, 1u << 20, 0, 0, false, BENCH_FLOOR_NONE,
		true},
	{"syn-insert-rules", "syn-insert with every admission rule checked (none refuses)", 10, 100,
		65537, 0, BENCH_SEQ, true, false, 1u << 21, 1500000, 0, false, BENCH_FLOOR_NONE,
		true},
	{"svc10k-est-1m", "10k services x 100 backends, 1M connections, uniform", 10000, 100, 10007,
		1000000, BENCH_UNIFORM, false, false, 1310720, 0},
	{"svc10k-syn", "10k services x 100 backends, new connections (SYN)", 10000, 100, 10007, 0,
		BENCH_SEQ, true, false, 1u << 21, 1500000},
	/* Each also runs, interleaved, as swap-off-* (same loop, no swaps). */
	{"swap-1ms-est-1k", "established, 1k connections, uniform, table replaced every 1 ms", 10,
		100, 65537, 1000, BENCH_UNIFORM, false, false, 1u << 20, 0, 1000, true},
	{"swap-1ms-est-1m", "established, 1M connections, uniform, table replaced every 1 ms", 10,
		100, 65537, 1000000, BENCH_UNIFORM, false, false, 1310720, 0, 1000, true},
	{"floor-parse", "lower bound: mux_burst's parse only, est-1k-uniform's frames", 10, 100,
		65537, 1000, BENCH_UNIFORM, false, false, 1u << 20, 0, 0, false, BENCH_FLOOR_PARSE},
	{"floor-parse-hash", "lower bound: parse, connection key and flow hash", 10, 100, 65537,
		1000, BENCH_UNIFORM, false, false, 1u << 20, 0, 0, false, BENCH_FLOOR_HASH},
	/* IPv6: the same shapes, 6in6, the IPv6 connection table. */
	{"est6-1k-uniform", "IPv6, established, 1k connections, uniform", 10, 100, 65537, 1000,
		BENCH_UNIFORM, false, false, 1u << 20, 0, 0, false, BENCH_FLOOR_NONE, false, true},
	{"est6-1m-uniform", "IPv6, established, 1M connections, uniform", 10, 100, 65537, 1000000,
		BENCH_UNIFORM, false, false, 1310720, 0, 0, false, BENCH_FLOOR_NONE, false, true},
	{"syn6-insert", "IPv6, new connections (SYN), every packet misses and inserts", 10, 100,
		65537, 0, BENCH_SEQ, true, false, 1u << 21, 1500000, 0, false, BENCH_FLOOR_NONE,
		false, true},
};

/* The smoke run: tiny, and checks every packet instead of timing anything. */
static const struct scenario smoke_suite[] = {
	{"smoke-est", "established, 1k connections", 4, 8, 251, 1000, BENCH_UNIFORM, false, false,
		4096, 0},
	{"smoke-syn", "new connections", 4, 8, 251, 0, BENCH_SEQ, true, false, 1u << 14, 12000},
	{"smoke-swap", "established, 1k connections, table replaced every 1 ms", 4, 8, 251, 1000,
		BENCH_UNIFORM, false, false, 4096, 0, 1000, true},
	{"smoke-est6", "IPv6, established, 1k connections", 4, 8, 251, 1000, BENCH_UNIFORM, false,
		false, 4096, 0, 0, false, BENCH_FLOOR_NONE, false, true},
	{"smoke-syn6", "IPv6, new connections", 4, 8, 251, 0, BENCH_SEQ, true, false, 1u << 14,
		12000, 0, false, BENCH_FLOOR_NONE, false, true},
};

/*
 * Every admission rule on every service and the mux-wide cap, all in
 * intercept mode at the largest limit: every check runs and none refuses,
 * so the scenario forwards exactly what its twin does.
 */
static void
bench_rules(struct lb_ftable *ft)
{
	uint32_t i;
	int k;

	ft->mux_rate = (struct lb_limit_rule){LB_LIMIT_MAX, LB_LIMIT_MAX, LB_LIMIT_INTERCEPT};
	for (i = 0; i < ft->n_services; i++) {
		struct lb_svc_limits *l = &ft->services[i].limits;

		for (k = 0; k < LB_LIM_N; k++)
			l->rule[k] = (struct lb_limit_rule){LB_LIMIT_MAX,
				k == LB_LIM_CONNS ? 0 : LB_LIMIT_MAX, LB_LIMIT_INTERCEPT};
		l->source_prefix = 24;
	}
}

/* A worker as the mux's (mux_worker_init()), on the benchmark's lcore. */
static int
worker_init(struct mux_worker *w, struct bench_env *env, const struct mux_gen *g, uint32_t entries)
{
	static const uint32_t timeout[3] = {300, 15, 30};

	return mux_worker_init(
		w, &env->ctx, g, 0, rte_lcore_id(), entries, entries, timeout, env->socket);
}

/* Fill n mbufs with the frames of flows[0..n), of IPv6 flows if v6. */
static inline void
prep(struct rte_mbuf **m, const uint64_t *flows, uint32_t n, uint32_t n_services, uint8_t flags,
	bool v6)
{
	struct bench_flow fl;
	struct bench_flow6 fl6;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (v6) {
			bench_flow6_of(flows[i], n_services, &fl6);
			bench_frame6(rte_pktmbuf_mtod(m[i], uint8_t *), &fl6, flags);
			m[i]->data_len = BENCH_FRAME6_LEN;
			m[i]->pkt_len = BENCH_FRAME6_LEN;
			continue;
		}
		bench_flow_of(flows[i], n_services, &fl);
		bench_frame(rte_pktmbuf_mtod(m[i], uint8_t *), &fl, flags, BENCH_FRAME_LEN);
		m[i]->data_len = BENCH_FRAME_LEN;
		m[i]->pkt_len = BENCH_FRAME_LEN;
	}
}

/* Run one batch through mux_burst; reclaimed mbufs land in out. Returns the count. */
static inline uint32_t
run_batch(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf **m,
	uint32_t n, struct rte_mbuf **out)
{
	struct dp_txbuf *t = &w->tx[port];
	uint32_t i, got = 0;

	for (i = 0; i < n; i += MUX_BURST) {
		uint16_t k = (uint16_t)RTE_MIN((uint32_t)MUX_BURST, n - i);

		mux_burst(w, g, port, m + i, k, BENCH_NOW);
		memcpy(out + got, t->pkts, sizeof(*out) * t->n);
		got += t->n;
		t->n = 0;
	}
	return got;
}

/*
 * A floor scenario's batch: per burst, what mux_burst()'s first loop does
 * for each packet up to the flow hash (floor), nothing after. The mbufs are
 * handed back untouched in out. Counts the parsed packets in *fwd.
 */
static inline uint32_t
run_batch_floor(const struct mux_gen *g, enum bench_floor floor, struct rte_mbuf **m, uint32_t n,
	struct rte_mbuf **out, uint64_t *fwd)
{
	struct lb_pkt info[MUX_BURST];
	struct mux_conn_key ckey[MUX_BURST];
	uint64_t acc = 0, ok = 0;
	uint32_t i, b;

	for (b = 0; b < n; b += MUX_BURST) {
		uint32_t k = RTE_MIN((uint32_t)MUX_BURST, n - b);

		for (i = 0; i < k; i++) {
			const struct rte_mbuf *mb = m[b + i];
			struct lb_pkt *pi = &info[i];

			if (unlikely(mb->nb_segs != 1) ||
				unlikely(lb_parse(rte_pktmbuf_mtod(mb, const uint8_t *),
						 mb->data_len, pi) != 0))
				continue;
			ok++;
			if (floor == BENCH_FLOOR_PARSE) {
				acc += pi->sport;
				continue;
			}
			mux_conn_key_v4(
				&ckey[i], pi->src, pi->sport, pi->dst, pi->dport, pi->proto);
			acc += mux_conn_hash(&g->seed, &ckey[i]);
		}
	}
	bench_sink = acc;
	memcpy(out, m, sizeof(*out) * n);
	*fwd += ok;
	return n;
}

/*
 * run_batch() as a worker lcore runs it under RCU (mux_worker_main()): the
 * generation is loaded from ctx->gen with acquire before each burst, and
 * quiescence is reported to ctx->qsv (thread 0) after it.
 */
static inline uint32_t
run_batch_rcu(struct mux_worker *w, struct mux_ctx *ctx, uint16_t port, struct rte_mbuf **m,
	uint32_t n, struct rte_mbuf **out)
{
	struct dp_txbuf *t = &w->tx[port];
	uint32_t i, got = 0;

	for (i = 0; i < n; i += MUX_BURST) {
		uint16_t k = (uint16_t)RTE_MIN((uint32_t)MUX_BURST, n - i);
		const struct mux_gen *g = __atomic_load_n(&ctx->gen, __ATOMIC_ACQUIRE);

		mux_burst(w, g, port, m + i, k, BENCH_NOW);
		memcpy(out + got, t->pkts, sizeof(*out) * t->n);
		got += t->n;
		t->n = 0;
		rte_rcu_qsbr_quiescent(ctx->qsv, w->idx);
	}
	return got;
}

/*
 * The inner destination (the backend's DIP) of a forwarded frame: its
 * IPv4 address, or the last four bytes of its IPv6 one (which tell the
 * benchmark's DIPs apart).
 */
static inline lb_be32_t
inner_dst(const struct rte_mbuf *m, bool v6)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *) + sizeof(struct lb_eth_hdr);
	lb_be32_t d;

	if (v6)
		memcpy(&d, p + 2 * sizeof(struct lb_ipv6_hdr) - 4, 4);
	else
		memcpy(&d, p + 2 * sizeof(struct lb_ipv4_hdr) - 4, 4);
	return d;
}

/*
 * The flow table of generation `version` in the swap scenarios: the
 * scenario's services and backends, a quarter of the backends of every
 * service at weight 2 (which quarter rotates with the version) and the rest
 * at 1. Consecutive versions therefore move about a fifth of every
 * service's Maglev slots: a connection that kept its backend across a swap
 * kept it because of the connection table, not because Maglev agreed.
 */
static int
swap_ftable(struct lb_ftable *ft, const struct scenario *sc, uint64_t version)
{
	uint32_t i, j;

	if (bench_ftable(ft, sc->services, sc->backends, sc->maglev, sc->v6) != 0)
		return -1;
	for (i = 0; i < ft->n_services; i++)
		for (j = 0; j < ft->services[i].n_backends; j++)
			ft->services[i].backends[j].weight = (j + version) % 4 == 0 ? 2 : 1;
	return 0;
}

/*
 * Generation `version` built as mux_reload() builds one: sids assigned
 * against the running generation cur (so every backend keeps its stable id),
 * then compiled with cur's capacities.
 */
static struct mux_gen *
swap_gen(const struct scenario *sc, const struct mux_gen *cur, uint64_t version, int socket,
	struct lb_cfg_err *err)
{
	struct lb_ftable ft;
	struct mux_gen *g = NULL;

	if (swap_ftable(&ft, sc, version) != 0) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return NULL;
	}
	if (mux_gen_assign_sids(cur, &ft, NULL, err) == 0)
		g = mux_gen_build(&ft, version, cur->cap_backends, cur->cap_services, LB_ADDR_ANY,
			socket, err);
	lb_ftable_free(&ft);
	return g;
}

/*
 * The control thread of the swap scenarios: every swap_us, publish a new
 * generation to ctx->gen as mux_gen_publish() does (one atomic store, then
 * rte_rcu_qsbr_synchronize()), then free the old one. In fresh mode each
 * new generation is built between swaps, off the deadline; when a build is
 * slower than that allows, it cycles through a pool of pre-built,
 * distinct generations instead and frees nothing (a replaced generation
 * is republished only after its grace period, so that is still safe).
 */
struct swapper {
	struct bench_env *env;
	const struct scenario *sc;
	struct mux_gen *pool[BENCH_SWAP_POOL];
	uint32_t n_pool;
	bool fresh;
	bool stop;
	bool failed;
	uint64_t swaps;
	uint64_t sync_cyc, sync_max_cyc, build_cyc;
	struct lb_cfg_err err;
};

static void
ts_add_us(struct timespec *ts, uint32_t us)
{
	ts->tv_nsec += (long)us * 1000;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static void *
swapper_main(void *arg)
{
	struct swapper *sw = arg;
	struct mux_ctx *ctx = &sw->env->ctx;
	struct timespec next, now;
	uint32_t k = 0;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!__atomic_load_n(&sw->stop, __ATOMIC_ACQUIRE)) {
		struct mux_gen *cur = ctx->gen; /* this thread is the only writer */
		struct mux_gen *ng;

		if (sw->fresh) {
			t = rte_rdtsc();
			ng = swap_gen(sw->sc, cur, cur->version + 1, sw->env->socket, &sw->err);
			sw->build_cyc += rte_rdtsc() - t;
			if (ng == NULL) {
				sw->failed = true;
				break;
			}
		} else {
			k = (k + 1) % sw->n_pool;
			ng = sw->pool[k];
		}
		ts_add_us(&next, sw->sc->swap_us);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec ||
			(now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
			next = now; /* fell behind: no catch-up burst of swaps */
		else
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		if (__atomic_load_n(&sw->stop, __ATOMIC_ACQUIRE)) {
			if (sw->fresh)
				mux_gen_free(ng);
			break;
		}
		__atomic_store_n(&ctx->gen, ng, __ATOMIC_RELEASE);
		t = rte_rdtsc();
		rte_rcu_qsbr_synchronize(ctx->qsv, RTE_QSBR_THRID_INVALID);
		t = rte_rdtsc() - t;
		sw->sync_cyc += t;
		sw->sync_max_cyc = RTE_MAX(sw->sync_max_cyc, t);
		if (sw->fresh)
			mux_gen_free(cur);
		sw->swaps++;
	}
	return NULL;
}

/* Push flows (IPv6 ones if v6) through the mux untimed (warm-up); returns forwarded packets. */
static uint64_t
push_flows(struct bench_env *env, struct mux_worker *w, const struct mux_gen *g, uint64_t first,
	uint64_t n, uint32_t n_services, uint8_t flags, lb_be32_t *dip_of, bool v6)
{
	struct rte_mbuf *m[BENCH_BATCH_PKTS], *out[BENCH_BATCH_PKTS];
	uint64_t fl[BENCH_BATCH_PKTS], done = 0, fwd = 0;
	uint32_t k, i, got;

	while (done < n) {
		k = (uint32_t)RTE_MIN((uint64_t)BENCH_BATCH_PKTS, n - done);
		if (rte_pktmbuf_alloc_bulk(env->pool, m, k) != 0)
			return fwd;
		for (i = 0; i < k; i++)
			fl[i] = first + done + i;
		prep(m, fl, k, n_services, flags, v6);
		got = run_batch(w, g, env->port, m, k, out);
		if (dip_of != NULL && got == k)
			for (i = 0; i < k; i++)
				dip_of[first + done + i] = inner_dst(out[i], v6);
		rte_pktmbuf_free_bulk(out, got);
		fwd += got;
		done += k;
	}
	return fwd;
}

/* Insert flows until the first one the table refuses; returns live entries. */
static uint64_t
fill_table(
	struct bench_env *env, struct mux_worker *w, const struct mux_gen *g, uint32_t n_services)
{
	uint64_t f = 0;

	while (w->cnt.conn_full == 0 && f < (uint64_t)w->conn->entries * 2) {
		push_flows(env, w, g, f, MUX_BURST, n_services, LB_TCP_SYN, NULL, false);
		f += MUX_BURST;
	}
	return mux_conn_count(w->conn);
}

/*
 * The smoke run's checks on every forwarded frame: one outer IPv4 header to
 * the backend's host with a valid checksum, the inner packet DNATed to a
 * backend of the flow's own service with TTL - 1 and valid IPv4 and TCP
 * checksums, Ethernet padding gone. An established flow (number below
 * n_dip) must still go to the backend it was given at warm-up (dip_of).
 */
static int
check_output(const struct bench_env *env, struct rte_mbuf **out, uint32_t got,
	const uint64_t *flows, uint32_t n, const struct scenario *sc, const lb_be32_t *dip_of,
	uint32_t n_dip)
{
	const uint32_t hl = sizeof(struct lb_ipv4_hdr);
	uint32_t i;

	if (got != n) {
		fprintf(stderr, "smoke: %s: %u of %u frames forwarded\n", sc->name, got, n);
		return -1;
	}
	for (i = 0; sc->v6 && i < got; i++) {
		struct bench_flow6 fl;
		const char *bad;
		uint32_t be;

		bench_flow6_of(flows[i], sc->services, &fl);
		bad = bench_check6(rte_pktmbuf_mtod(out[i], const uint8_t *), out[i]->data_len, &fl,
			flows[i], env->ctx.tunnel_addr6, sc->services, sc->backends, &be);
		if (bad == NULL && dip_of != NULL && flows[i] < n_dip &&
			inner_dst(out[i], true) != dip_of[flows[i]])
			bad = "established flow moved to another backend";
		if (bad != NULL) {
			fprintf(stderr, "smoke: %s: frame %u (flow %" PRIu64 "): %s\n", sc->name, i,
				flows[i], bad);
			return -1;
		}
	}
	for (i = 0; !sc->v6 && i < got; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(out[i], const uint8_t *);
		const struct lb_eth_hdr *eth = (const struct lb_eth_hdr *)p;
		const struct lb_ipv4_hdr *o = (const struct lb_ipv4_hdr *)(p + sizeof(*eth));
		const struct lb_ipv4_hdr *in =
			(const struct lb_ipv4_hdr *)((const uint8_t *)o + hl);
		const struct lb_tcp_hdr *tcp =
			(const struct lb_tcp_hdr *)((const uint8_t *)in + hl);
		uint32_t id = lb_be32_to_cpu(in->dst) - BENCH_DIP_BASE - 1;
		struct bench_flow fl;
		const char *bad = NULL;

		bench_flow_of(flows[i], sc->services, &fl);
		if (out[i]->data_len != sizeof(*eth) + 2 * hl + sizeof(*tcp))
			bad = "frame length (padding not trimmed, or no outer header)";
		else if (eth->type != lb_cpu_to_be16(LB_ETHERTYPE_IPV4) ||
			 memcmp(eth->dst, &env->ctx.next_hop, 6) != 0)
			bad = "outer Ethernet header";
		else if (o->ver_ihl != 0x45 || o->proto != LB_IPPROTO_IPIP ||
			 o->src != env->ctx.tunnel_addr || lb_ipv4_hdr_csum(o, hl) != o->csum ||
			 lb_be16_to_cpu(o->total_len) != 2 * hl + sizeof(*tcp))
			bad = "outer IPv4 header";
		else if (id >= sc->services * sc->backends ||
			 id / sc->backends != (uint32_t)(flows[i] % sc->services))
			bad = "inner destination is not a backend of the flow's service";
		else if (dip_of != NULL && flows[i] < n_dip && in->dst != dip_of[flows[i]])
			bad = "established flow moved to another backend";
		else if (o->dst != lb_cpu_to_be32(BENCH_HOST_BASE + (id & 0xffff) + 1))
			bad = "outer destination is not the backend's host";
		else if (in->ttl != 63 || in->src != fl.src || lb_ipv4_hdr_csum(in, hl) != in->csum)
			bad = "inner IPv4 header (TTL, source or checksum)";
		else if (tcp->dport != lb_cpu_to_be16(BENCH_BE_PORT) || tcp->sport != fl.sport ||
			 lb_ipv4_l4_csum(in->src, in->dst, LB_IPPROTO_TCP, tcp, sizeof(*tcp)) != 0)
			bad = "inner TCP header (port or checksum)";
		if (bad != NULL) {
			fprintf(stderr, "smoke: %s: frame %u (flow %" PRIu64 "): %s\n", sc->name, i,
				flows[i], bad);
			return -1;
		}
	}
	return 0;
}

/* Start the control thread of a swap scenario on env->ctl_cpus. */
static int
swapper_start(struct swapper *sw, pthread_t *th)
{
	pthread_attr_t a;
	int rc;

	pthread_attr_init(&a);
	pthread_attr_setaffinity_np(&a, sizeof(sw->env->ctl_cpus), &sw->env->ctl_cpus);
	rc = pthread_create(th, &a, swapper_main, sw);
	pthread_attr_destroy(&a);
	return rc;
}

static int
run_scenario(struct bench_env *env, const struct scenario *sc, double seconds, bool check,
	struct result *r)
{
	struct rte_mbuf *m[BENCH_BATCH_PKTS], *out[BENCH_BATCH_PKTS];
	uint64_t fl[BENCH_BATCH_PKTS];
	struct lb_ftable ft;
	struct lb_cfg_err err;
	struct mux_worker *w;
	struct mux_gen *g;
	struct swapper sw;
	pthread_t swap_th;
	bool swapping = false, online = false, sample;
	lb_be32_t *dip_of = NULL;
	uint32_t *seq = NULL, pos = 0, i, got, live, swept, n_dip = 0;
	uint64_t next_new = BENCH_NEW_BASE, budget, t0, t1, t2, start, batch = 0, floor_fwd = 0;
	uint8_t flags = sc->syn ? LB_TCP_SYN : LB_TCP_ACK;
	double t;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	memset(&sw, 0, sizeof(sw));
	sw.env = env;
	sw.sc = sc;
	sw.fresh = true;
	w = rte_zmalloc_socket("bench_worker", sizeof(*w), RTE_CACHE_LINE_SIZE, env->socket);
	if (w == NULL || (sc->rcu ? swap_ftable(&ft, sc, 1)
				  : bench_ftable(&ft, sc->services, sc->backends, sc->maglev,
					    sc->v6)) != 0) {
		fprintf(stderr, "sluice-bench: %s: out of memory\n", sc->name);
		rte_free(w);
		return -1;
	}
	if (sc->rules)
		bench_rules(&ft);
	t = bench_now_s();
	g = mux_gen_build(&ft, 1, lb_ftable_backend_count(&ft), ft.n_services, LB_ADDR_ANY,
		env->socket, &err);
	r->build_s = bench_now_s() - t;
	lb_ftable_free(&ft);
	if (g == NULL) {
		fprintf(stderr, "sluice-bench: %s: %s\n", sc->name, err.msg);
		rte_free(w);
		return -1;
	}
	env->ctx.gen = g;
	if (worker_init(w, env, g, sc->entries) != 0) {
		fprintf(stderr, "sluice-bench: %s: no memory for the connection table (%s)\n",
			sc->name, rte_strerror(rte_errno));
		goto out;
	}

	/* Warm-up: establish every connection once, untimed. */
	t = bench_now_s();
	if (sc->conns != 0) {
		if (check || sc->rcu) {
			n_dip = sc->conns;
			dip_of = calloc(n_dip, sizeof(*dip_of));
			if (dip_of == NULL)
				goto out;
		}
		push_flows(env, w, g, 0, sc->conns, sc->services, LB_TCP_SYN, dip_of, sc->v6);
		seq = bench_sequence(sc->dist, 1.0, sc->conns, BENCH_SEQ_LEN, 0x5eed);
		if (seq == NULL)
			goto out;
	}
	if (sc->fill)
		fill_table(env, w, g, sc->services);
	r->warm_s = bench_now_s() - t;
	r->live = mux_conn_count(w->conn) + mux_conn6_count(w->conn6);
	memset(&w->cnt, 0, sizeof(w->cnt));

	/*
	 * Swap scenarios: a fresh generation per swap if a build fits well
	 * inside the period (and always in the smoke run, which does not time
	 * anything), else a pool of pre-built ones.
	 */
	if (sc->swap_us != 0) {
		sw.fresh = check || r->build_s * 1e6 < sc->swap_us / 4.0;
		if (!sw.fresh) {
			sw.pool[0] = g;
			sw.n_pool = 1;
			for (i = 1; i < BENCH_SWAP_POOL; i++) {
				sw.pool[i] = swap_gen(sc, g, i + 1, env->socket, &err);
				if (sw.pool[i] == NULL) {
					fprintf(stderr, "sluice-bench: %s: %s\n", sc->name,
						err.msg);
					goto out;
				}
				sw.n_pool++;
			}
		}
	}
	if (sc->rcu) {
		rte_rcu_qsbr_thread_online(env->ctx.qsv, w->idx);
		online = true;
	}
	if (sc->swap_us != 0) {
		if (swapper_start(&sw, &swap_th) != 0) {
			fprintf(stderr, "sluice-bench: %s: cannot start the control thread\n",
				sc->name);
			goto out;
		}
		swapping = true;
	}

	budget = (uint64_t)(seconds * (double)env->hz);
	t = bench_now_s();
	start = rte_rdtsc();
	do {
		if (rte_pktmbuf_alloc_bulk(env->pool, m, BENCH_BATCH_PKTS) != 0) {
			fprintf(stderr, "sluice-bench: %s: mbuf pool empty\n", sc->name);
			goto out;
		}
		if (sc->syn && sc->reset_at != 0 &&
			mux_conn_count(w->conn) + mux_conn6_count(w->conn6) + BENCH_BATCH_PKTS >
				sc->reset_at) {
			mux_conn_reset(w->conn);
			mux_conn6_reset(w->conn6);
		}
		for (i = 0; i < BENCH_BATCH_PKTS; i++) {
			if (sc->syn) {
				fl[i] = next_new++;
			} else {
				fl[i] = seq[pos];
				pos = (pos + 1) & (BENCH_SEQ_LEN - 1);
			}
		}
		t0 = rte_rdtsc();
		prep(m, fl, BENCH_BATCH_PKTS, sc->services, flags, sc->v6);
		t1 = rte_rdtsc();
		if (sc->floor != BENCH_FLOOR_NONE)
			got = run_batch_floor(g, sc->floor, m, BENCH_BATCH_PKTS, out, &floor_fwd);
		else if (sc->rcu)
			got = run_batch_rcu(w, &env->ctx, env->port, m, BENCH_BATCH_PKTS, out);
		else
			got = run_batch(w, g, env->port, m, BENCH_BATCH_PKTS, out);
		t2 = rte_rdtsc();
		r->prep_cyc += t1 - t0;
		r->mux_cyc += t2 - t1;
		r->pkts += BENCH_BATCH_PKTS;
		sample = check || (sc->rcu && batch % BENCH_SAMPLE == 0);
		batch++;
		if (sample) {
			r->checked += BENCH_BATCH_PKTS;
			if (check_output(env, out, got, fl, BENCH_BATCH_PKTS, sc, dip_of, n_dip) !=
				0) {
				rte_pktmbuf_free_bulk(out, got);
				goto out;
			}
		}
		rte_pktmbuf_free_bulk(out, got);
	} while (check ? r->pkts < (uint64_t)sc->conns + 20000 ||
				 (swapping && __atomic_load_n(&sw.swaps, __ATOMIC_RELAXED) <
						      BENCH_SMOKE_SWAPS)
		       : rte_rdtsc() - start < budget);
	r->loop_s = bench_now_s() - t;

	/* Stop the control thread: offline first, so no grace period waits on us. */
	if (swapping) {
		__atomic_store_n(&sw.stop, true, __ATOMIC_RELEASE);
		rte_rcu_qsbr_thread_offline(env->ctx.qsv, w->idx);
		online = false;
		pthread_join(swap_th, NULL);
		swapping = false;
		if (sw.failed) {
			fprintf(stderr, "sluice-bench: %s: building a generation: %s\n", sc->name,
				sw.err.msg);
			goto out;
		}
	}
	r->swaps = sw.swaps;
	r->fresh = sc->swap_us != 0 && sw.fresh;
	if (sw.swaps != 0) {
		r->sync_us = (double)sw.sync_cyc / (double)sw.swaps / (double)env->hz * 1e6;
		r->sync_max_us = (double)sw.sync_max_cyc / (double)env->hz * 1e6;
		r->swap_build_ms = (double)sw.build_cyc / (double)sw.swaps / (double)env->hz * 1e3;
	}

	if (check) {
		/* One burst left queued and sent through the port, as mux_flush() does. */
		if (rte_pktmbuf_alloc_bulk(env->pool, m, MUX_BURST) != 0)
			goto out;
		for (i = 0; i < MUX_BURST; i++)
			fl[i] = sc->syn ? next_new++ : seq[i];
		prep(m, fl, MUX_BURST, sc->services, flags, sc->v6);
		mux_burst(w, env->ctx.gen, env->port, m, MUX_BURST, BENCH_NOW);
		mux_flush(w);
		r->pkts += MUX_BURST;
		/* Long after every timeout, one sweep over the table empties it. */
		live = sc->v6 ? mux_conn6_count(w->conn6) : mux_conn_count(w->conn);
		swept = sc->v6 ? mux_conn6_sweep(w->conn6, BENCH_NOW + 100000, w->conn6->entries)
			       : mux_conn_sweep(w->conn, BENCH_NOW + 100000, w->conn->entries);
		if (live == 0 || swept != live ||
			mux_conn_count(w->conn) + mux_conn6_count(w->conn6) != 0) {
			fprintf(stderr, "smoke: %s: sweep deleted %u of %u entries, %u left\n",
				sc->name, swept, live,
				mux_conn_count(w->conn) + mux_conn6_count(w->conn6));
			goto out;
		}
	}
	r->fwd = w->cnt.fwd_pkts + floor_fwd;
	r->hit = w->cnt.conn_hit;
	r->new_conns = w->cnt.conn_new;
	r->full = w->cnt.conn_full;
	for (i = 1; i < LB_DROP_MAX; i++)
		r->drops += w->cnt.drops[i];
	r->tx = w->cnt.tx_pkts;
	r->tx_full = w->cnt.drops[LB_DROP_TX_FULL];
	rc = 0;
out:
	if (swapping) {
		__atomic_store_n(&sw.stop, true, __ATOMIC_RELEASE);
		rte_rcu_qsbr_thread_offline(env->ctx.qsv, w->idx);
		online = false;
		pthread_join(swap_th, NULL);
	}
	if (online)
		rte_rcu_qsbr_thread_offline(env->ctx.qsv, w->idx);
	free(seq);
	free(dip_of);
	mux_worker_fini(w);
	rte_free(w);
	if (sw.fresh) {
		mux_gen_free(env->ctx.gen); /* g, unless a swap replaced (and freed) it */
	} else {
		for (i = 0; i < sw.n_pool; i++)
			mux_gen_free(sw.pool[i]);
	}
	env->ctx.gen = NULL;
	return rc;
}

static double
cycles_per_pkt(const struct result *r)
{
	return (double)r->mux_cyc / (double)r->pkts;
}

/*
 * Sanity of a timed RCU run (swap scenarios and their twins): every packet
 * forwarded, none dropped, every packet a connection-table hit, and, for a
 * swap scenario, swaps done. The sampled batches were checked frame by frame
 * in run_scenario() (backend of the flow's service, and the same backend as
 * at warm-up).
 */
static int
rcu_verdict(const struct scenario *sc, const struct result *r)
{
	const char *bad = NULL;

	if (r->fwd != r->pkts)
		bad = "not every packet was forwarded";
	else if (r->drops != 0)
		bad = "packets were dropped";
	else if (r->hit != r->pkts || r->live != sc->conns)
		bad = "established flows missed the connection table";
	else if (sc->swap_us != 0 && r->swaps == 0)
		bad = "no generation was swapped in";
	if (bad == NULL)
		return 0;
	fprintf(stderr,
		"sluice-bench: %s: %s (pkts %" PRIu64 " fwd %" PRIu64 " drops %" PRIu64
		" hit %" PRIu64 " live %" PRIu64 " swaps %" PRIu64 ")\n",
		sc->name, bad, r->pkts, r->fwd, r->drops, r->hit, r->live, r->swaps);
	return -1;
}

/* Sort n results by cycles per packet; keep the median, the fastest and the slowest. */
static void
pick_median(struct result *rs, int n, struct result *med, double *lo, double *hi)
{
	struct result t;
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && cycles_per_pkt(&rs[j]) < cycles_per_pkt(&rs[j - 1]); j--) {
			t = rs[j];
			rs[j] = rs[j - 1];
			rs[j - 1] = t;
		}
	*med = rs[n / 2];
	*lo = cycles_per_pkt(&rs[0]);
	*hi = cycles_per_pkt(&rs[n - 1]);
}

/*
 * Run a scenario o->repeat times (once for the smoke run) and keep the run
 * with the median cycles per packet; lo and hi are the fastest and slowest.
 * Shared virtual machines drift by tens of percent between runs. With a
 * second scenario (the swap scenarios' no-swap twin), the two alternate,
 * twin first, so both see the same phases of the host; its results go to
 * med[1], lo[1], hi[1].
 */
static int
run_repeated(struct bench_env *env, const struct scenario *sc, const struct scenario *twin,
	const struct bench_opts *o, struct result *med, double *lo, double *hi)
{
	struct result rs[16], rt[16];
	int n = o->smoke ? 1 : RTE_MIN(RTE_MAX(o->repeat, 1), 16);
	int i;

	for (i = 0; i < n; i++) {
		if (twin != NULL && run_scenario(env, twin, o->seconds, o->smoke, &rt[i]) != 0)
			return -1;
		if (run_scenario(env, sc, o->seconds, o->smoke, &rs[i]) != 0)
			return -1;
		/* Every timed RCU run must pass, not only the median. */
		if (!o->smoke && sc->rcu &&
			(rcu_verdict(sc, &rs[i]) != 0 ||
				(twin != NULL && rcu_verdict(twin, &rt[i]) != 0)))
			return -1;
	}
	pick_median(rs, n, &med[0], &lo[0], &hi[0]);
	if (twin != NULL)
		pick_median(rt, n, &med[1], &lo[1], &hi[1]);
	return 0;
}

/* Sanity of a smoke result: everything forwarded, nothing dropped, table used. */
static int
smoke_verdict(const struct scenario *sc, const struct result *r)
{
	const char *bad = NULL;

	if (r->fwd != r->pkts)
		bad = "not every packet was forwarded";
	else if (r->drops != 0)
		bad = "packets were dropped";
	else if (r->tx != MUX_BURST)
		bad = "mux_flush did not transmit the queued burst";
	else if (!sc->syn && (r->live != sc->conns || r->hit != r->pkts))
		bad = "established flows missed the connection table";
	else if (sc->syn && (r->new_conns != r->pkts || r->full != 0))
		bad = "new connections were not all inserted";
	else if (sc->swap_us != 0 && r->swaps < BENCH_SMOKE_SWAPS)
		bad = "too few generation swaps";
	if (bad == NULL)
		return 0;
	fprintf(stderr,
		"smoke: %s: %s (pkts %" PRIu64 " fwd %" PRIu64 " drops %" PRIu64 " tx %" PRIu64
		" hit %" PRIu64 " new %" PRIu64 " full %" PRIu64 " live %" PRIu64 ")\n",
		sc->name, bad, r->pkts, r->fwd, r->drops, r->tx, r->hit, r->new_conns, r->full,
		r->live);
	return -1;
}

static void
report_header(FILE *out)
{
	fprintf(out, "%-17s %10s %8s %7s %13s %8s %6s %6s %6s %6s %9s %7s\n", "scenario", "packets",
		"cyc/pkt", "Mpps", "min..max", "prep/pkt", "hit%", "new%", "full%", "drop%", "live",
		"build");
}

static void
report_line(FILE *out, const struct scenario *sc, const struct result *r, uint64_t hz, double lo,
	double hi)
{
	double cpp = (double)r->mux_cyc / (double)r->pkts;
	double pk = (double)r->pkts / 100.0;

	fprintf(out,
		"%-17s %10" PRIu64
		" %8.1f %7.2f %6.0f..%-6.0f %8.1f %6.1f %6.1f %6.1f %6.2f %9" PRIu64 " %6.2fs\n",
		sc->name, r->pkts, cpp, (double)hz / cpp / 1e6, lo, hi,
		(double)r->prep_cyc / (double)r->pkts, (double)r->hit / pk,
		(double)r->new_conns / pk, (double)r->full / pk, (double)r->drops / pk, r->live,
		r->build_s);
	if (sc->rcu)
		fprintf(out,
			"%-17s   RCU loop; %" PRIu64 " swaps in %.2fs (%.0f/s, %s), grace period "
			"mean %.1f us max %.1f us; %" PRIu64 " packets checked\n",
			"", r->swaps, r->loop_s, (double)r->swaps / r->loop_s,
			sc->swap_us == 0 ? "no control thread"
			: r->fresh	 ? "each a new build"
					 : "pre-built pool",
			r->sync_us, r->sync_max_us, r->checked);
}

static void
report_csv(const char *path, const struct scenario *sc, const struct result *r, uint64_t hz,
	double lo, double hi)
{
	double cpp = (double)r->mux_cyc / (double)r->pkts;
	long sz;
	FILE *f = fopen(path, "a+");

	if (f == NULL) {
		fprintf(stderr, "sluice-bench: cannot write %s\n", path);
		return;
	}
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	if (sz == 0)
		fprintf(f, "scenario,services,backends,maglev_size,conns,dist,syn,packets,"
			   "cycles_per_pkt,mpps,cycles_min,cycles_max,prep_cycles_per_pkt,hit,new,"
			   "full,drops,live,tsc_hz,swaps\n");
	fprintf(f,
		"%s,%u,%u,%u,%u,%s,%d,%" PRIu64 ",%.2f,%.3f,%.2f,%.2f,%.2f,%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
		sc->name, sc->services, sc->backends, sc->maglev, sc->conns,
		sc->syn			 ? "new"
		: sc->dist == BENCH_ZIPF ? "zipf"
					 : "uniform",
		sc->syn, r->pkts, cpp, (double)hz / cpp / 1e6, lo, hi,
		(double)r->prep_cyc / (double)r->pkts, r->hit, r->new_conns, r->full, r->drops,
		r->live, hz, r->swaps);
	fclose(f);
}

/*
 * Heap bytes one connection table takes, per entry, as the EAL heap accounts
 * them: 64-byte buckets of two entries (16-byte key, 8-byte record, 4-byte
 * signature) and the table's header. Sizes are as asked of
 * mux_conn_create(), which rounds up to a power of two buckets.
 */
static void
report_conn_memory(const struct bench_env *env, FILE *out)
{
	static const uint32_t sizes[] = {65535, 65536, (1u << 20) - 1, 1u << 20, 1310720};
	static const uint32_t timeout[3] = {300, 15, 30};
	struct lb_hash_seed seed = {1, 2};
	struct rte_malloc_socket_stats a, b;
	struct mux_conn_table *ct;
	uint32_t i;

	fprintf(out, "\nconnection table memory (rte_malloc heap, per entry):\n");
	for (i = 0; i < RTE_DIM(sizes); i++) {
		rte_malloc_get_socket_stats(env->socket, &a);
		ct = mux_conn_create("bench_mem", sizes[i], env->socket, timeout, &seed, 1);
		rte_malloc_get_socket_stats(env->socket, &b);
		if (ct == NULL) {
			fprintf(out, "  %8u entries: cannot create (%s)\n", sizes[i],
				rte_strerror(rte_errno));
			continue;
		}
		fprintf(out, "  %8u entries asked, %8u made: %10zu bytes, %.1f bytes/entry\n",
			sizes[i], ct->entries, b.heap_allocsz_bytes - a.heap_allocsz_bytes,
			(double)(b.heap_allocsz_bytes - a.heap_allocsz_bytes) / ct->entries);
		mux_conn_free(ct);
	}
}

static int
port_init(struct bench_env *env)
{
	struct rte_eth_conf conf = {0};
	uint16_t id;

	if (rte_eth_dev_get_port_by_name("net_null0", &id) != 0)
		return -1;
	if (rte_eth_dev_configure(id, 1, 1, &conf) != 0 ||
		rte_eth_rx_queue_setup(id, 0, 64, env->socket, NULL, env->pool) != 0 ||
		rte_eth_tx_queue_setup(id, 0, 64, env->socket, NULL) != 0 ||
		rte_eth_dev_start(id) != 0)
		return -1;
	env->port = id;
	env->ctx.n_ports = (uint16_t)(id + 1);
	rte_eth_macaddr_get(id, &env->ctx.port_mac[id]);
	return 0;
}

/* The highest CPU we may run on: the main lcore, away from CPU 0's chores. */
static int
last_cpu(void)
{
	cpu_set_t set;
	int c, last = 0;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			last = c;
	return last;
}

int
bench_micro(const struct bench_opts *o, const char *argv0)
{
	const struct scenario *suite = o->smoke ? smoke_suite : full_suite;
	size_t n = o->smoke ? RTE_DIM(smoke_suite) : RTE_DIM(full_suite);
	char lcore[16], prefix[64], rundir[PATH_MAX], twin_name[32];
	char *eargv[16];
	struct bench_env env;
	struct scenario twin;
	struct result r[2];
	double lo[2], hi[2];
	size_t qsz;
	int eargc = 0, rc = 0, ran = 0, cpu = last_cpu();
	size_t i;

	memset(&env, 0, sizeof(env));
	/* The swap scenarios' control thread: any CPU but the bench lcore's, if there is one. */
	if (sched_getaffinity(0, sizeof(env.ctl_cpus), &env.ctl_cpus) != 0) {
		CPU_ZERO(&env.ctl_cpus);
		CPU_SET(cpu, &env.ctl_cpus);
	}
	if (CPU_COUNT(&env.ctl_cpus) > 1)
		CPU_CLR(cpu, &env.ctl_cpus);
	snprintf(lcore, sizeof(lcore), "%d", cpu);
	snprintf(prefix, sizeof(prefix), "--file-prefix=sluice-bench-%d", (int)getpid());
	eargv[eargc++] = (char *)argv0;
	eargv[eargc++] = (char *)"-l";
	eargv[eargc++] = lcore;
	eargv[eargc++] = (char *)"--no-pci";
	eargv[eargc++] = prefix;
	eargv[eargc++] = (char *)"--vdev=net_null0";
	eargv[eargc++] = (char *)"--log-level=lib.eal:warning";
	if (!o->hugepages)
		eargv[eargc++] = (char *)"--no-huge";
	else
		eargv[eargc++] = (char *)"--huge-unlink"; /* leave no map files behind */
	eargv[eargc++] = (char *)"-m";
	eargv[eargc++] = (char *)(o->smoke ? "256" : o->hugepages ? "1024" : "2048");
	eargv[eargc] = NULL;
	if (rte_eal_init(eargc, eargv) < 0) {
		fprintf(stderr, "sluice-bench: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	env.socket = (int)rte_socket_id();
	env.hz = rte_get_tsc_hz();
	env.pool = rte_pktmbuf_pool_create("bench_pool", 2 * BENCH_BATCH_PKTS + 1024, 256, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, env.socket);
	env.ctx.tunnel_addr = lb_cpu_to_be32(0x0aff0001); /* 10.255.0.1 */
	memcpy(&env.ctx.next_hop, "\x02\x00\x00\x00\x00\xfe", 6);
	env.ctx.has_tunnel6 = true;
	bench_addr6(env.ctx.tunnel_addr6, BENCH_NET6_HOST, 0xffff0001); /* 2001:2:0:2::ffff:1 */
	memcpy(&env.ctx.next_hop6, "\x02\x00\x00\x00\x00\xfe", 6);
	env.ctx.mtu = 1500;
	env.ctx.tunnel_ttl = 64;
	env.ctx.busy_poll = true;
	env.ctx.tsc_hz = env.hz;
	env.ctx.tsc0 = rte_rdtsc();
	if (env.pool == NULL || port_init(&env) != 0) {
		fprintf(stderr, "sluice-bench: mbuf pool or net_null port: %s\n",
			rte_strerror(rte_errno));
		rc = 1;
		goto done;
	}
	/* RCU as mux/main.c sets it up, with the bench lcore as worker 0. */
	qsz = rte_rcu_qsbr_get_memsize(1);
	env.ctx.qsv = rte_zmalloc("bench_qsbr", qsz, RTE_CACHE_LINE_SIZE);
	if (env.ctx.qsv == NULL || rte_rcu_qsbr_init(env.ctx.qsv, 1) != 0 ||
		rte_rcu_qsbr_thread_register(env.ctx.qsv, 0) != 0) {
		fprintf(stderr, "sluice-bench: RCU: %s\n", rte_strerror(rte_errno));
		rc = 1;
		goto done;
	}

	printf("sluice-bench micro: lcore %u, TSC %.3f GHz, %s, batches of %d bursts of %d\n",
		rte_lcore_id(), (double)env.hz / 1e9, o->hugepages ? "hugepages" : "no hugepages",
		BENCH_BATCH, MUX_BURST);
	report_header(stdout);
	for (i = 0; i < n; i++) {
		if (o->only != NULL && strcmp(o->only, suite[i].name) != 0)
			continue;
		ran++;
		/* A swap scenario's twin: the same loop and table, no control thread. */
		twin = suite[i];
		twin.swap_us = 0;
		snprintf(twin_name, sizeof(twin_name), "swap-off-%s",
			strncmp(suite[i].name, "swap-1ms-", 9) == 0 ? suite[i].name + 9
								    : suite[i].name);
		twin.name = twin_name;
		if (run_repeated(&env, &suite[i], suite[i].swap_us != 0 && !o->smoke ? &twin : NULL,
			    o, r, lo, hi) != 0) {
			rc = 1;
			continue;
		}
		if (suite[i].swap_us != 0 && !o->smoke) {
			report_line(stdout, &twin, &r[1], env.hz, lo[1], hi[1]);
			if (o->csv != NULL)
				report_csv(o->csv, &twin, &r[1], env.hz, lo[1], hi[1]);
		}
		report_line(stdout, &suite[i], &r[0], env.hz, lo[0], hi[0]);
		fflush(stdout);
		if (o->csv != NULL && !o->smoke)
			report_csv(o->csv, &suite[i], &r[0], env.hz, lo[0], hi[0]);
		if (o->smoke && smoke_verdict(&suite[i], &r[0]) != 0)
			rc = 1;
	}
	if (ran == 0) {
		fprintf(stderr, "sluice-bench: no scenario named %s\n", o->only);
		rc = 2;
	}
	if (!o->smoke && o->only == NULL)
		report_conn_memory(&env, stdout);
	if (o->smoke)
		printf("smoke: %s\n", rc == 0 ? "ok" : "FAILED");
done:
	rte_free(env.ctx.qsv);
	rte_eal_cleanup();
	lb_remove_runtime_dir(rundir);
	return rc;
}
