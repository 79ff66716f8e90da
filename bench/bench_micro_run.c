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
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "bench_micro.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "mux_conn.h"
#include "mux_gen.h"

/* Where the floor runs leave their results, so the compiler keeps the work. */
volatile uint64_t bench_sink;

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
/* The scenario's family gets the entries, the other a small table it never touches. */
static int
worker_init(struct mux_worker *w, struct bench_env *env, const struct mux_gen *g, uint32_t entries,
	bool v6)
{
	static const uint32_t timeout[3] = {300, 15, 30};

	return mux_worker_init(w, &env->ctx, g, env->idx, rte_lcore_id(), v6 ? 4096 : entries,
		v6 ? entries : 4096, timeout, env->socket);
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
/* Bursts whose time is kept, at most, per run (the latency percentiles). */
#define BENCH_LAT_MAX (1u << 22)

/* Each burst's cycles into lat (NULL: not timed) while *n_lat < BENCH_LAT_MAX. */
struct lat_rec {
	uint32_t *cyc;
	uint64_t n;
};

static inline uint32_t
run_batch(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf **m,
	uint32_t n, struct rte_mbuf **out, bool sweep, struct lat_rec *lat)
{
	struct dp_txbuf *t = &w->tx[port];
	uint32_t i, got = 0;
	uint64_t b0 = 0;

	for (i = 0; i < n; i += MUX_BURST) {
		uint16_t k = (uint16_t)RTE_MIN((uint32_t)MUX_BURST, n - i);

		if (lat != NULL)
			b0 = rte_rdtsc();
		mux_burst(w, g, port, m + i, k, BENCH_NOW);
		/* mux_worker_main() after a burst with traffic: nothing expires at BENCH_NOW */
		if (sweep)
			mux_conn_sweep(w->conn, BENCH_NOW, MUX_SWEEP_BUSY);
		if (lat != NULL && lat->n < BENCH_LAT_MAX)
			lat->cyc[lat->n++] =
				(uint32_t)RTE_MIN(rte_rdtsc() - b0, (uint64_t)UINT32_MAX);
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
	if (mux_gen_assign_sids(cur, &ft, NULL, NULL, err) == 0)
		g = mux_gen_build(&ft, version, cur->cap_backends, cur->cap_services, LB_ADDR_ANY,
			"", socket, err);
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
		got = run_batch(w, g, env->port, m, k, out, false, NULL);
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
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The recorded bursts' percentiles 50, 99, 99.9 and the longest, in microseconds. */
static void
lat_percentiles(struct lat_rec *lat, uint64_t hz, struct result *r)
{
	static const double q[3] = {0.5, 0.99, 0.999};
	int i;

	qsort(lat->cyc, lat->n, sizeof(*lat->cyc), cmp_u32);
	for (i = 0; i < 3; i++)
		r->lat_us[i] = (double)lat->cyc[(uint64_t)(q[i] * (double)(lat->n - 1))] * 1e6 /
			       (double)hz;
	r->lat_us[3] = (double)lat->cyc[lat->n - 1] * 1e6 / (double)hz;
	r->n_lat = lat->n;
}

int
bench_run_scenario(struct bench_env *env, const struct scenario *sc, double seconds, bool check,
	struct result *r)
{
	struct rte_mbuf *m[BENCH_BATCH_PKTS], *out[BENCH_BATCH_PKTS];
	uint64_t fl[BENCH_BATCH_PKTS];
	struct lb_ftable ft;
	struct lb_cfg_err err;
	struct mux_worker *w;
	struct mux_gen *g;
	struct swapper sw;
	struct lat_rec lat = {0};
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
	g = mux_gen_build(&ft, 1, lb_ftable_backend_count(&ft), ft.n_services, LB_ADDR_ANY, "",
		env->socket, &err);
	r->build_s = bench_now_s() - t;
	lb_ftable_free(&ft);
	if (g == NULL) {
		fprintf(stderr, "sluice-bench: %s: %s\n", sc->name, err.msg);
		rte_free(w);
		return -1;
	}
	env->ctx.gen = g;
	if (worker_init(w, env, g, sc->entries, sc->v6) != 0) {
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
	r->table_bytes = sc->v6 ? mux_conn6_bytes(w->conn6) : mux_conn_bytes(w->conn);
	r->table_entries = sc->v6 ? w->conn6->entries : w->conn->entries;
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

	if (!check && sc->conns >= 1000000 && !sc->syn && !sc->rcu &&
		sc->floor == BENCH_FLOOR_NONE) {
		lat.cyc = malloc(sizeof(*lat.cyc) * BENCH_LAT_MAX);
		if (lat.cyc == NULL)
			goto out;
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
			got = run_batch(w, g, env->port, m, BENCH_BATCH_PKTS, out, sc->sweep,
				lat.cyc != NULL ? &lat : NULL);
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
	if (lat.n != 0)
		lat_percentiles(&lat, env->hz, r);
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
	free(lat.cyc);
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
