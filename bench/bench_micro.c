/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Micro mode's driver: the scenario suites (full and smoke), the runs
 * repeated to a median, the verdicts on the smoke and RCU runs, the report
 * (table and CSV), and the EAL and net_null port it all runs on. The timed
 * loop itself is in bench_micro_run.c.
 */
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "bench_micro.h"
#include "lb_dpdk.h"
#include "mux_conn.h"

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
	/* Ten million connections on one mux (docs/performance.md), and with the busy sweep. */
	{"est-10m-uniform", "established, 10M connections, uniform", 10, 100, 65537, 10000000,
		BENCH_UNIFORM, false, false, 1u << 24, 0},
	{"est-10m-sweep", "est-10m-uniform, the busy sweep after every burst", 10, 100, 65537,
		10000000, BENCH_UNIFORM, false, false, 1u << 24, 0, 0, false, BENCH_FLOOR_NONE,
		false, false, true},
	{"est-1m-sweep", "est-1m-uniform, the busy sweep after every burst", 10, 100, 65537,
		1000000, BENCH_UNIFORM, false, false, 1310720, 0, 0, false, BENCH_FLOOR_NONE, false,
		false, true},
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

static double
cycles_per_pkt(const struct result *r)
{
	return (double)r->mux_cyc / (double)r->pkts;
}

/*
 * Sanity of a run: every packet forwarded, none dropped, established flows
 * all connection-table hits (new ones all inserted), and a swap scenario's
 * generations swapped in. The smoke run (smoke) also wants the queued burst
 * transmitted and at least BENCH_SMOKE_SWAPS swaps. A timed RCU run (swap
 * scenarios and their twins) must pass too; its sampled batches were checked
 * frame by frame in bench_run_scenario() (backend of the flow's service, and
 * the same backend as at warm-up).
 */
static int
verdict(const struct scenario *sc, const struct result *r, bool smoke)
{
	const char *bad = NULL;

	if (r->fwd != r->pkts)
		bad = "not every packet was forwarded";
	else if (r->drops != 0)
		bad = "packets were dropped";
	else if (smoke && r->tx != MUX_BURST)
		bad = "mux_flush did not transmit the queued burst";
	else if (!sc->syn && (r->live != sc->conns || r->hit != r->pkts))
		bad = "established flows missed the connection table";
	else if (sc->syn && (r->new_conns != r->pkts || r->full != 0))
		bad = "new connections were not all inserted";
	else if (sc->swap_us != 0 && r->swaps < (smoke ? BENCH_SMOKE_SWAPS : 1))
		bad = smoke ? "too few generation swaps" : "no generation was swapped in";
	if (bad == NULL)
		return 0;
	fprintf(stderr,
		"%s: %s: %s (pkts %" PRIu64 " fwd %" PRIu64 " drops %" PRIu64 " tx %" PRIu64
		" hit %" PRIu64 " new %" PRIu64 " full %" PRIu64 " live %" PRIu64 " swaps %" PRIu64
		")\n",
		smoke ? "smoke" : "sluice-bench", sc->name, bad, r->pkts, r->fwd, r->drops, r->tx,
		r->hit, r->new_conns, r->full, r->live, r->swaps);
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
		if (twin != NULL &&
			bench_run_scenario(env, twin, o->seconds, o->smoke, &rt[i]) != 0)
			return -1;
		if (bench_run_scenario(env, sc, o->seconds, o->smoke, &rs[i]) != 0)
			return -1;
		/* Every timed RCU run must pass, not only the median. */
		if (!o->smoke && sc->rcu &&
			(verdict(sc, &rs[i], false) != 0 ||
				(twin != NULL && verdict(twin, &rt[i], false) != 0)))
			return -1;
	}
	pick_median(rs, n, &med[0], &lo[0], &hi[0]);
	if (twin != NULL)
		pick_median(rt, n, &med[1], &lo[1], &hi[1]);
	return 0;
}

/* The second worker's run, on its own lcore. */
struct pair_run {
	struct bench_env env;
	const struct scenario *sc;
	double seconds;
	struct result r;
	int rc;
};

static int
pair_main(void *arg)
{
	struct pair_run *p = arg;

	p->rc = bench_run_scenario(&p->env, p->sc, p->seconds, false, &p->r);
	return 0;
}

/*
 * Two workers side by side (--workers 2): o->repeat rounds of the scenario
 * on the main lcore alone, then on it and on a second lcore at once, each
 * worker with its own tables and mbufs, nothing written by both. Prints
 * the median cycles per packet alone and of each worker beside the other.
 */
static int
run_pair(struct bench_env *env, struct rte_mempool *pool2, const struct scenario *sc,
	const struct bench_opts *o)
{
	struct result alone[16], w0[16], w1[16], med[3];
	struct pair_run p;
	unsigned lc = rte_get_next_lcore(-1, 1, 0);
	int n = RTE_MIN(RTE_MAX(o->repeat, 1), 16), i;
	double lo, hi;

	if (lc >= RTE_MAX_LCORE) {
		fprintf(stderr, "sluice-bench: --workers 2: no second lcore (one CPU?)\n");
		return -1;
	}
	for (i = 0; i < n; i++) {
		memset(&p, 0, sizeof(p));
		p.env = *env;
		p.env.pool = pool2;
		p.env.idx = 1;
		p.sc = sc;
		p.seconds = o->seconds;
		if (bench_run_scenario(env, sc, o->seconds, false, &alone[i]) != 0 ||
			rte_eal_remote_launch(pair_main, &p, lc) != 0)
			return -1;
		if (bench_run_scenario(env, sc, o->seconds, false, &w0[i]) != 0)
			p.rc = -1;
		rte_eal_wait_lcore(lc);
		if (p.rc != 0 || verdict(sc, &alone[i], false) != 0 ||
			verdict(sc, &w0[i], false) != 0 || verdict(sc, &p.r, false) != 0)
			return -1;
		w1[i] = p.r;
	}
	pick_median(alone, n, &med[0], &lo, &hi);
	pick_median(w0, n, &med[1], &lo, &hi);
	pick_median(w1, n, &med[2], &lo, &hi);
	printf("%-17s   cyc/pkt alone %.1f; two workers at once: %.1f (lcore %u) and %.1f "
	       "(lcore %u): %.2f and %.2f of alone\n",
		"", cycles_per_pkt(&med[0]), cycles_per_pkt(&med[1]), rte_lcore_id(),
		cycles_per_pkt(&med[2]), lc, cycles_per_pkt(&med[1]) / cycles_per_pkt(&med[0]),
		cycles_per_pkt(&med[2]) / cycles_per_pkt(&med[0]));
	return 0;
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
	if (sc->conns >= 1000000)
		fprintf(out,
			"%-17s   table: %" PRIu64
			" MiB, %.0f bytes per entry, %.1f per connection; "
			"warm-up inserts %.2f M/s\n",
			"", r->table_bytes >> 20, (double)r->table_bytes / (double)r->table_entries,
			(double)r->table_bytes / (double)sc->conns,
			(double)sc->conns / r->warm_s / 1e6);
	if (r->n_lat != 0)
		fprintf(out,
			"%-17s   a burst (its last packet's wait): p50 %.2f us, p99 %.2f, "
			"p99.9 %.2f, max %.1f (%" PRIu64 " bursts)\n",
			"", r->lat_us[0], r->lat_us[1], r->lat_us[2], r->lat_us[3], r->n_lat);
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

/*
 * The lowest and the highest CPU we may run on (0 when the mask cannot be
 * read): the highest is the main lcore, away from CPU 0's chores; the
 * lowest the second worker's with --workers 2.
 */
static void
cpu_bounds(int *first, int *last)
{
	cpu_set_t set;
	int c;

	*first = *last = -1;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		CPU_ZERO(&set);
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (*first < 0)
			*first = c;
		*last = c;
	}
	if (*first < 0)
		*first = *last = 0;
}

int
bench_eal_start(
	const struct bench_opts *o, const char *argv0, const char *vdev, char *rundir, size_t len)
{
	char lcore[16], main_lcore[8], prefix[64], vdev_arg[64];
	char *eargv[16];
	int eargc = 0, first, last;

	cpu_bounds(&first, &last);
	/* Two workers: the first CPU as well, the main lcore still the last. */
	if (o->workers == 2 && first != last)
		snprintf(lcore, sizeof(lcore), "%d,%d", first, last);
	else
		snprintf(lcore, sizeof(lcore), "%d", last);
	snprintf(prefix, sizeof(prefix), "--file-prefix=sluice-bench-%d", (int)getpid());
	eargv[eargc++] = (char *)argv0;
	eargv[eargc++] = (char *)"-l";
	eargv[eargc++] = lcore;
	eargv[eargc++] = (char *)"--no-pci";
	eargv[eargc++] = (char *)"--main-lcore";
	snprintf(main_lcore, sizeof(main_lcore), "%d", last);
	eargv[eargc++] = main_lcore;
	eargv[eargc++] = prefix;
	if (vdev != NULL) {
		snprintf(vdev_arg, sizeof(vdev_arg), "--vdev=%s", vdev);
		eargv[eargc++] = vdev_arg;
	}
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
		return -1;
	}
	snprintf(rundir, len, "%s", rte_eal_get_runtime_dir());
	return 0;
}

int
bench_micro(const struct bench_opts *o, const char *argv0)
{
	const struct scenario *suite = o->smoke ? smoke_suite : full_suite;
	size_t n = o->smoke ? RTE_DIM(smoke_suite) : RTE_DIM(full_suite);
	char rundir[PATH_MAX], twin_name[32];
	struct bench_env env;
	struct rte_mempool *pool2 = NULL;
	struct scenario twin;
	struct result r[2];
	double lo[2], hi[2];
	size_t qsz;
	int rc = 0, ran = 0, first, cpu;
	size_t i;

	cpu_bounds(&first, &cpu); /* the bench lcore: the last */
	memset(&env, 0, sizeof(env));
	/* The swap scenarios' control thread: any CPU but the bench lcore's, if there is one. */
	if (sched_getaffinity(0, sizeof(env.ctl_cpus), &env.ctl_cpus) != 0) {
		CPU_ZERO(&env.ctl_cpus);
		CPU_SET(cpu, &env.ctl_cpus);
	}
	if (CPU_COUNT(&env.ctl_cpus) > 1)
		CPU_CLR(cpu, &env.ctl_cpus);
	if (bench_eal_start(o, argv0, "net_null0", rundir, sizeof(rundir)) != 0)
		return 1;
	env.socket = (int)rte_socket_id();
	env.hz = rte_get_tsc_hz();
	env.pool = rte_pktmbuf_pool_create("bench_pool", 2 * BENCH_BATCH_PKTS + 1024, 256, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, env.socket);
	if (o->workers == 2 &&
		(pool2 = rte_pktmbuf_pool_create("bench_pool2", 2 * BENCH_BATCH_PKTS + 1024, 256, 0,
			 RTE_MBUF_DEFAULT_BUF_SIZE, env.socket)) == NULL) {
		fprintf(stderr, "sluice-bench: the second worker's mbufs: %s\n",
			rte_strerror(rte_errno));
		rc = 1;
		goto done;
	}
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
		if (o->workers == 2 && !o->smoke && !suite[i].rcu &&
			suite[i].floor == BENCH_FLOOR_NONE &&
			run_pair(&env, pool2, &suite[i], o) != 0)
			rc = 1;
		fflush(stdout);
		if (o->csv != NULL && !o->smoke)
			report_csv(o->csv, &suite[i], &r[0], env.hz, lo[0], hi[0]);
		if (o->smoke && verdict(&suite[i], &r[0], true) != 0)
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
	rte_mempool_free(pool2);
	rte_eal_cleanup();
	lb_remove_runtime_dir(rundir);
	return rc;
}
