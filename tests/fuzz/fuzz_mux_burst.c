/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's whole per-burst path, mux_burst(): parse, ARP, neighbor
 * discovery and ping replies, ICMP and ICMPv6 errors, service lookup,
 * connection tables, Maglev, DNAT, encapsulation in every form (4in4,
 * 4in6, 6in4, 6in6), "fragmentation needed" and "packet too big" replies,
 * outer fragmentation, VIP probes in tunnels of both families, on frames
 * made from the fuzz input.
 *
 * Input: bytes 0 and 1 steer the run, the rest is the frame.
 *   byte 0 bits 0-1  copies of the frame in the first burst (1..4), so
 *                    several packets of one new flow meet in a burst
 *          bit 2     answer ARP for VIPs too (mux.arp_for_vips)
 *          bit 3     arrive on port 1 instead of port 0
 *          bits 4-7  a second burst with one more copy, 5 s per step later,
 *                    so connection-table hits, closing states and expiry
 *                    are reached
 *   byte 1 bit 0     the last copy of the first burst in two segments
 *          bits 1-3  the MTU, one of mtus[] (mux.mtu's range is 596..2030)
 *          bits 4-5  the generation the bursts run with (enum variant):
 *                    plain; admission rules (docs/protection.md); the
 *                    choice beyond the five-tuple (affinity, the reject
 *                    policy, zones); capped backends (capacity credits)
 *          bit 6     rules: this mux's share of every service rule is
 *                    zero (the manager's divisor), so each is refused;
 *                    credits: a credit channel exists, with a grant
 *          bit 7     credits: the grant holds 3 credits, not 1; plain: the
 *                    pool of outer fragments' references is empty, so
 *                    fragmenting fails (no_mbuf)
 * The worker is set up as mux/main.c's workers_create() does it, with
 * generations of three services (two IPv4, one IPv6, with PAs of both
 * families) built by the real mux_gen_build(), tunnel addresses of both
 * families and pools for outer fragments. The connection tables, the
 * admission state and the credits are fresh for each input, so every run
 * is a pure function of its bytes (but for the rules' token buckets, which
 * refill by the TSC). After each burst every mbuf must be back in its pool
 * or sitting well-formed in a TX buffer of the port it came in by: nothing
 * leaks, nothing is freed twice. Every rule's check is counted exactly
 * once as passed, would deny or denied; a refused connection leaves no
 * entry; no worker spends a credit it was not granted; every frame is
 * counted once, as forwarded, answered or dropped.
 */
#define FUZZ_WITH_EAL
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_packet.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_parse.h"
#include "mux_choose.h"
#include "mux_conn.h"
#include "mux_credit.h"
#include "mux_gen.h"
#include "mux_worker.h"

#define FUZZ_NOW 1000
#define FUZZ_POOL 127
#define FUZZ_IND_POOL 63

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The generations an input chooses from (byte 1, bits 4-5). */
enum variant { VAR_PLAIN, VAR_LIMITS, VAR_CHOICE, VAR_CREDITS, VAR_N };

static struct rte_mempool *pool, *ind_pool;
static struct mux_ctx ctx;
static struct mux_worker *w;
static struct lb_ftable fts[VAR_N];
static struct mux_gen *gens[VAR_N];
static struct mux_gen *gen;		     /* the input's */
static enum variant var;		     /* ... and its variant */
static struct rte_mbuf *held[FUZZ_IND_POOL]; /* the fragment references taken away */
static unsigned n_held;
static uint16_t in_port;
static bool verbose;
static unsigned sent; /* FUZZ_VERBOSE=1: what happened to each input, on stderr */

/*
 * 10.0.0.1:80/TCP -> 10.1.0.1:8080 (weight 1), 10.1.0.2:8080 (weight 2,
 * its host 2001:db8:ff::2: 4in6), 10.1.0.3:8080 (weight 0, draining);
 * 10.0.0.2:53/UDP -> 10.1.0.4:53; [2001:db8::1]:80/TCP ->
 * [2001:db8:1::1]:8080 on 2001:db8:ff::5 (6in6) and [2001:db8:1::2]:8080
 * on 172.16.0.6 (6in4). Other hosts 172.16.0.1..4. make_seeds.py writes
 * frames for these. The variants add to the same pool:
 *   VAR_LIMITS   on every service a rule of each kind (per source /24 or
 *                /64, new per second, concurrent connections) and a
 *                mux-wide cap; the UDP service's rules only monitor; the
 *                TCP services refuse with an RST, the UDP one with ICMP
 *   VAR_CHOICE   affinity to the client with the reject policy (TCP: an
 *                RST; UDP, by client and protocol: ICMP port unreachable),
 *                10.1.0.2 in maintenance, so that the clients whose first
 *                choice it is are refused; the IPv6 service keeps to zone
 *                "a" of the mux, its backend [2001:db8:1::12] in zone "b"
 *                (which must then get nothing)
 *   VAR_CREDITS  10.1.0.1 and 10.1.0.2 capped (10.0.0.1 rejects what no
 *                credit takes), [2001:db8:1::1] capped (redistributes),
 *                the IPv6 service's rules as VAR_LIMITS's with a share of
 *                zero: what they refuse must give its credit back
 */
static void
rule(struct lb_limit_rule *r, uint32_t limit, uint8_t mode)
{
	r->limit = limit;
	r->burst = limit;
	r->mode = mode;
}

static void
limits(struct lb_service_cfg *sc, uint8_t mode, uint8_t refuse)
{
	struct lb_svc_limits *l = &sc->limits;

	rule(&l->rule[LB_LIM_SOURCE], 1, mode);
	rule(&l->rule[LB_LIM_RATE], 2, mode);
	rule(&l->rule[LB_LIM_CONNS], 1, mode);
	l->source_prefix = sc->af == LB_AF_INET6 ? 64 : 24;
	l->refuse = refuse;
}

static struct mux_gen *
build_gen(enum variant v)
{
	static struct lb_backend_cfg web[VAR_N][3], dns[VAR_N][1], web6[VAR_N][2];
	static struct lb_service_cfg svc[VAR_N][3];
	static const struct lb_hash_seed seed = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
	struct lb_ftable *ft = &fts[v];
	struct lb_service_cfg *sv = svc[v];
	struct lb_cfg_err err;
	struct mux_gen *g;
	uint32_t i;

	for (i = 0; i < 3; i++) {
		fuzz_backend(&web[v][i], i, fuzz_ip(10, 1, 0, (uint8_t)(1 + i)), 8080,
			fuzz_ip(172, 16, 0, (uint8_t)(1 + i)), i == 2 ? 0 : i + 1);
		web[v][i].state = i == 2 ? LB_BACKEND_DRAIN : LB_BACKEND_ACTIVE;
	}
	fuzz_host6(&web[v][1], 2);
	fuzz_backend(&dns[v][0], 3, fuzz_ip(10, 1, 0, 4), 53, fuzz_ip(172, 16, 0, 4), 1);
	fuzz_service(&sv[0], 0, fuzz_ip(10, 0, 0, 1), 80, LB_IPPROTO_TCP, web[v], 3);
	fuzz_service(&sv[1], 1, fuzz_ip(10, 0, 0, 2), 53, LB_IPPROTO_UDP, dns[v], 1);
	fuzz_backend6(&web6[v][0], 4, 0x11, 8080, 1);
	fuzz_host6(&web6[v][0], 5);
	fuzz_backend6(&web6[v][1], 5, 0x12, 8080, 1);
	lb_addr_v4(&web6[v][1].host, fuzz_ip(172, 16, 0, 6));
	fuzz_service6(&sv[2], 2, 0x01, 80, LB_IPPROTO_TCP, web6[v], 2);
	switch (v) {
	case VAR_LIMITS:
		limits(&sv[0], LB_LIMIT_INTERCEPT, LB_REFUSE_RST);
		limits(&sv[1], LB_LIMIT_MONITOR, LB_REFUSE_ICMP);
		limits(&sv[2], LB_LIMIT_INTERCEPT, LB_REFUSE_RST);
		rule(&ft->mux_rate, 1000, LB_LIMIT_INTERCEPT);
		break;
	case VAR_CHOICE:
		sv[0].choice.affinity = LB_AFF_CLIENT;
		sv[0].choice.on_unusable = LB_UNUSABLE_REJECT;
		web[v][1].state = LB_BACKEND_MAINT;
		sv[1].choice.affinity = LB_AFF_CLIENT_PROTO;
		sv[1].choice.on_unusable = LB_UNUSABLE_REJECT;
		sv[2].choice.affinity = LB_AFF_CLIENT;
		sv[2].choice.zonal = 1;
		memcpy(web6[v][0].zone, "a", 2);
		memcpy(web6[v][1].zone, "b", 2);
		break;
	case VAR_CREDITS:
		web[v][0].max_conns = 10;
		web[v][1].max_conns = 10;
		web6[v][0].max_conns = 5;
		sv[0].choice.on_unusable = LB_UNUSABLE_REJECT;
		limits(&sv[2], LB_LIMIT_INTERCEPT, LB_REFUSE_RST);
		break;
	default:
		break;
	}
	ft->seed = seed;
	ft->maglev_size = 251;
	ft->n_services = 3;
	ft->services = sv;
	g = mux_gen_build(ft, 1 + v, lb_ftable_backend_count(ft), ft->n_services, LB_ADDR_ANY,
		v == VAR_CHOICE ? "a" : "", (int)rte_socket_id(), &err);
	if (g == NULL) {
		fprintf(stderr, "fuzz_mux_burst: generation %d: %s\n", v, err.msg);
		exit(1);
	}
	return g;
}

/*
 * VAR_CREDITS with a channel: a fresh one, its slots bound to the
 * generation, and one grant of count credits for 10.1.0.1 and for
 * [2001:db8:1::1], as the agent's first message would give them.
 */
static void
credits_grant(uint32_t count)
{
	struct lb_credit_grant gr = {
		.agent = "fuzz-agent", .incarnation = 1, .ttl_ms = 10000, .n = 2};
	static struct lb_credit_report rep;
	char err[128];
	uint32_t k;

	ctx.credit = mux_credit_create(1, rte_get_tsc_hz(), (int)rte_socket_id());
	FUZZ_CHECK(ctx.credit != NULL);
	FUZZ_CHECK(mux_credit_bind(ctx.credit, gens[VAR_CREDITS], &fts[VAR_CREDITS], NULL, err,
			   sizeof(err)) == 0);
	gr.c[0].backend = fts[VAR_CREDITS].services[0].backends[0].id;
	gr.c[1].backend = fts[VAR_CREDITS].services[2].backends[0].id;
	for (k = 0; k < gr.n; k++) {
		gr.c[k].grant = 1;
		gr.c[k].count = count;
		gr.c[k].granted = count;
	}
	FUZZ_CHECK(mux_credit_take(ctx.credit, &gr, rte_rdtsc(), &rep) == 0);
}

static void
cleanup(void)
{
	unsigned v;

	mux_worker_fini(w);
	rte_free(w);
	for (v = 0; v < VAR_N; v++)
		mux_gen_free(gens[v]);
	mux_credit_free(ctx.credit);
	rte_mempool_free(pool);
	rte_mempool_free(ind_pool);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint32_t timeout[3] = {300, 15, 30};
	unsigned v;
	int socket;

	(void)argc;
	(void)argv;
	fuzz_eal_init("fuzz-mux");
	socket = (int)rte_socket_id();
	pool = rte_pktmbuf_pool_create(
		"fuzz_pool", FUZZ_POOL, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	ind_pool = rte_pktmbuf_pool_create("fuzz_ind_pool", FUZZ_IND_POOL, 0, 0, 0, socket);
	for (v = 0; v < VAR_N; v++)
		gens[v] = build_gen(v);
	gen = ctx.gen = gens[VAR_PLAIN];
	ctx.tunnel_addr = fuzz_ip(10, 255, 0, 1);
	memcpy(&ctx.next_hop, "\x02\x00\x00\x00\x00\xfe", 6);
	memcpy(&ctx.port_mac[0], "\x02\x00\x00\x00\x01\x00", 6);
	memcpy(&ctx.port_mac[1], "\x02\x00\x00\x00\x01\x01", 6);
	ctx.n_ports = 2;
	ctx.mtu = 1500;
	ctx.tunnel_ttl = 64;
	ctx.n_probers = 1; /* IP-in-IP from it may be a VIP probe (mux_reply_vip_probe) */
	ctx.probers[0] = fuzz_ip(10, 255, 0, 254);
	ctx.has_tunnel6 = true;
	fuzz_ip6(ctx.tunnel_addr6, 0xff, 0x100); /* 2001:db8:ff::100 */
	memcpy(&ctx.next_hop6, "\x02\x00\x00\x00\x00\xf6", 6);
	ctx.n_probers6 = 1;
	fuzz_ip6(ctx.probers6[0], 0xff, 0x254);
	ctx.frag_direct = pool;
	ctx.frag_indirect = ind_pool;
	ctx.busy_poll = true;
	ctx.tsc_hz = rte_get_tsc_hz(); /* the rules' token buckets */
	ctx.n_workers = 1;
	w = rte_zmalloc("fuzz_worker", sizeof(*w), RTE_CACHE_LINE_SIZE);
	if (pool == NULL || ind_pool == NULL || w == NULL) {
		fprintf(stderr, "fuzz_mux_burst: out of memory\n");
		exit(1);
	}
	if (mux_worker_init(w, &ctx, gen, 0, rte_lcore_id(), 1024, 1024, timeout, socket) != 0) {
		fprintf(stderr, "fuzz_mux_burst: worker: out of memory\n");
		exit(1);
	}
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	atexit(cleanup);
	return 0;
}

static void
report(void)
{
	unsigned i;

	fprintf(stderr,
		"rx %" PRIu64 " fwd %" PRIu64 " fwd6 %" PRIu64 " icmp_err %" PRIu64 " echo %" PRIu64
		" arp %" PRIu64 " nd %" PRIu64 " too_big %" PRIu64 " ptb %" PRIu64 " frag %" PRIu64
		" new %" PRIu64 " hit %" PRIu64 " limit %" PRIu64 "/%" PRIu64 "/%" PRIu64
		" credit moved %" PRIu64 " none %" PRIu64 " tx %u",
		w->cnt.rx_pkts, w->cnt.fwd_pkts, w->cnt.fwd6_pkts, w->cnt.icmp_err_fwd,
		w->cnt.echo_replies, w->cnt.arp_replies, w->cnt.nd_replies, w->cnt.too_big_sent,
		w->cnt.ptb_sent, w->cnt.frag_out, w->cnt.conn_new, w->cnt.conn_hit,
		w->cnt.limit_checked, w->cnt.limit_would_deny, w->cnt.limit_denied,
		w->cnt.credit_moved, w->cnt.credit_none, (unsigned)sent);
	for (i = 1; i < LB_DROP_MAX; i++)
		if (w->cnt.drops[i] != 0)
			fprintf(stderr, " %s %" PRIu64, lb_drop_name(i), w->cnt.drops[i]);
	fprintf(stderr, "\n");
	memset(&w->cnt, 0, sizeof(w->cnt));
	sent = 0;
}

/*
 * True if a (4 or 16 bytes, of family v6) is a backend's DIP (dip) or host
 * PA (!dip) in the generation.
 */
static bool
is_backend(const void *a, bool v6, bool dip)
{
	uint32_t i;

	for (i = 0; i < gen->n_backends; i++) {
		const struct mux_backend *b = &gen->backends[i];
		bool host6 = (b->flags & MUX_BE_HOST6) != 0;

		if (dip ? (v6 ? memcmp(gen->addr6[i].dip, a, 16) == 0 : memcmp(&b->dip, a, 4) == 0)
			: host6 == v6 && (v6 ? memcmp(gen->addr6[i].host, a, 16) == 0
					     : memcmp(&b->host, a, 4) == 0))
			return true;
	}
	return false;
}

/* The inner packet of a tunnel, at p with len bytes of outer payload: sound, to a backend. */
static void
check_inner(const uint8_t *p, uint32_t len, bool v6)
{
	if (v6) {
		const struct lb_ipv6_hdr *ip6 = (const struct lb_ipv6_hdr *)p;

		FUZZ_CHECK(len >= sizeof(*ip6) && (p[0] >> 4) == 6);
		FUZZ_CHECK(lb_be16_to_cpu(ip6->payload_len) + sizeof(*ip6) == len);
		FUZZ_CHECK(is_backend(ip6->dst, true, true));
		FUZZ_CHECK(ip6->hop_limit >= 1);
		if (var == VAR_CHOICE) {
			uint8_t zone_b[16];

			fuzz_ip6(zone_b, 1, 0x12);
			FUZZ_CHECK(memcmp(ip6->dst, zone_b, 16) != 0);
		}
	} else {
		const struct lb_ipv4_hdr *ip = (const struct lb_ipv4_hdr *)p;
		uint32_t ihl = (uint32_t)lb_ipv4_ihl(ip) * 4;

		FUZZ_CHECK(len >= sizeof(*ip) && lb_ipv4_version(ip) == 4 && ihl >= 20);
		FUZZ_CHECK(lb_be16_to_cpu(ip->total_len) == len);
		FUZZ_CHECK(lb_ipv4_hdr_csum(ip, ihl) == ip->csum);
		FUZZ_CHECK(is_backend(&ip->dst, false, true));
		FUZZ_CHECK(ip->ttl >= 1);
	}
}

/*
 * What leaves the mux must be well-formed: an ARP reply, a reply (echo,
 * neighbor advertisement, fragmentation needed, packet too big) with a
 * sound header, an outer fragment within the MTU from the tunnel address
 * of its family (a chain of a header and a reference to the payload), or a
 * tunnel packet of one of the four forms from the tunnel address to a
 * backend's PA of that family, exactly as long as its outer header says,
 * whose inner header is sound and addressed to a backend.
 */
static void
check_out(const struct rte_mbuf *m)
{
	static uint8_t flat[RTE_MBUF_DEFAULT_DATAROOM + 64];
	const uint8_t *p, *l3;
	struct lb_pkt o;
	int rc;

	/* A fragment is a header mbuf chained to a reference to the payload. */
	FUZZ_CHECK(m->pkt_len <= sizeof(flat));
	p = rte_pktmbuf_read(m, 0, m->pkt_len, flat);
	l3 = p + sizeof(struct lb_eth_hdr);
	rc = fuzz_sent(p, m->pkt_len, &o);
	FUZZ_CHECK(m->nb_segs == 1 || rc == LB_DROP_FRAGMENT || rc == LB_DROP_IPV6_FRAGMENT);
	if (rc < 0)
		return;
	if (rc == LB_DROP_FRAGMENT || rc == LB_DROP_IPV6_FRAGMENT) {
		FUZZ_CHECK(m->pkt_len - sizeof(struct lb_eth_hdr) <= ctx.mtu);
		FUZZ_CHECK(o.v6 ? memcmp(l3 + 8, ctx.tunnel_addr6, 16) == 0
				: ((const struct lb_ipv4_hdr *)l3)->src == ctx.tunnel_addr);
		return;
	}
	FUZZ_CHECK(m->pkt_len == m->data_len);
	if (rc != LB_DROP_TUNNEL)
		return;
	FUZZ_CHECK(o.l2_len == sizeof(struct lb_eth_hdr));
	FUZZ_CHECK(o.l3_len == m->data_len - sizeof(struct lb_eth_hdr));
	if (o.v6) {
		FUZZ_CHECK(memcmp(l3 + 8, ctx.tunnel_addr6, 16) == 0);
		FUZZ_CHECK(is_backend(l3 + 24, true, false));
	} else {
		const struct lb_ipv4_hdr *outer = (const struct lb_ipv4_hdr *)l3;

		FUZZ_CHECK(outer->src == ctx.tunnel_addr && is_backend(&outer->dst, false, false));
	}
	check_inner(p + o.l4_off, o.l2_len + o.l3_len - o.l4_off, o.proto == LB_IPPROTO_IPV6);
}

/* Take back and check what mux_burst queued; free it. */
static void
drain(void)
{
	const char *why;
	uint16_t p, i;

	for (p = 0; p < MUX_MAX_PORTS; p++) {
		struct dp_txbuf *t = &w->tx[p];

		/* One-armed: whatever the mux sends leaves by the port the frame came in by. */
		FUZZ_CHECK(t->n == 0 || p == in_port);
		for (i = 0; i < t->n; i++) {
			struct rte_mbuf *m = t->pkts[i];

			FUZZ_CHECK(rte_mbuf_check(m, 1, &why) == 0);
			FUZZ_CHECK(m->data_len >= sizeof(struct lb_eth_hdr));
			check_out(m);
			rte_pktmbuf_free(m);
		}
		sent += t->n;
		t->n = 0;
	}
}

/* Copy frame into m, or into m and a second segment chained to it. */
static int
fill(struct rte_mbuf *m, const uint8_t *frame, uint16_t len, bool split)
{
	uint16_t first = split ? len / 2 : len;
	struct rte_mbuf *tail;
	char *d;

	d = rte_pktmbuf_append(m, first);
	FUZZ_CHECK(d != NULL || first == 0);
	if (first != 0)
		memcpy(d, frame, first);
	if (!split)
		return 0;
	tail = rte_pktmbuf_alloc(pool);
	if (tail == NULL)
		return -1;
	d = rte_pktmbuf_append(tail, (uint16_t)(len - first));
	FUZZ_CHECK(d != NULL || len == first);
	if (len != first)
		memcpy(d, frame + first, len - first);
	FUZZ_CHECK(rte_pktmbuf_chain(m, tail) == 0);
	return 0;
}

/*
 * Every frame the worker took is counted once for what became of it:
 * forwarded (whole or as outer fragments), answered in its place, or
 * dropped under one reason (a frag-needed or packet too big sent is
 * counted as the drop too_big, docs/operations.md).
 */
static void
check_accounting(void)
{
	const struct mux_counters *c = &w->cnt;
	uint64_t drops = 0, replies;
	unsigned r;

	for (r = 0; r < LB_DROP_MAX; r++)
		drops += c->drops[r];
	/* Frag-needed and packet too big are counted under the drop too_big as well. */
	replies = c->echo_replies + c->arp_replies + c->nd_replies + c->vip_probes +
		  c->limit_rst_sent + c->limit_icmp_sent + c->unusable_rst_sent +
		  c->unusable_icmp_sent;
	FUZZ_CHECK(c->rx_pkts == c->fwd_pkts + drops + replies);
}

static int
burst(const uint8_t *frame, uint16_t len, unsigned copies, bool split, uint16_t port, uint32_t now)
{
	struct rte_mbuf *m[MUX_BURST];
	unsigned i;

	if (rte_pktmbuf_alloc_bulk(pool, m, copies) != 0)
		return -1;
	for (i = 0; i < copies; i++)
		if (fill(m[i], frame, len, split && i == copies - 1) != 0) {
			rte_pktmbuf_free_bulk(m, copies);
			return -1;
		}
	mux_burst(w, gen, port, m, (uint16_t)copies, now);
	drain();
	check_accounting();
	/* Every mbuf freed exactly once, or sent: none kept, none lost. */
	FUZZ_CHECK(rte_mempool_avail_count(pool) == FUZZ_POOL);
	FUZZ_CHECK(rte_mempool_avail_count(ind_pool) == FUZZ_IND_POOL - n_held);
	return 0;
}

/* Each check of a rule counted once: passed, would deny (monitor) or denied (intercept). */
static void
check_cnt(const struct mux_lim_cnt *c)
{
	FUZZ_CHECK(c->checked == c->passed + c->would_deny + c->denied);
}

/*
 * After an input's bursts: the rules' counters add up; when every copy
 * opened a connection (a SYN, UDP) and the share is zero, the
 * intercepting services hold no entry (each refused, none made; a
 * mid-flow packet is adopted unchecked); no credit lane spent more than
 * it received.
 */
static void
check_state(bool refused)
{
	uint32_t i, k;

	for (i = 0; i < gen->n_services; i++) {
		const struct mux_service *sv = &gen->services[i];

		for (k = 0; k < LB_LIM_N; k++)
			check_cnt(&w->lim.svc[sv->sid].cnt[k]);
		if (refused && gen->limits[i].rule[LB_LIM_CONNS].mode == LB_LIMIT_INTERCEPT &&
			gen->limits[i].rule[LB_LIM_CONNS].limit != 0)
			FUZZ_CHECK(w->conn->svc_held[sv->sid] == 0 &&
				   w->conn6->svc_held[sv->sid] == 0);
	}
	check_cnt(&w->lim.mux_cnt);
	FUZZ_CHECK(w->cnt.limit_checked >= w->cnt.limit_would_deny + w->cnt.limit_denied);
	if (ctx.credit == NULL)
		return;
	for (k = 0; k < MUX_CREDIT_SLOTS; k++) {
		const struct mux_credit_lane *l = mux_credit_lane(ctx.credit, 0, (uint16_t)k);

		FUZZ_CHECK(l->used + l->expired + l->revoked <= l->received);
	}
	/* A connection its rules refused used no credit of a capped backend. */
	for (i = 0; refused && i < gen->n_services; i++) {
		const struct mux_service *sv = &gen->services[i];

		if (gen->limits[i].rule[LB_LIM_CONNS].mode != LB_LIMIT_INTERCEPT)
			continue;
		for (k = sv->first_backend; k < sv->first_backend + sv->n_backends; k++)
			if (gen->credit_slot[k] != MUX_CREDIT_NONE)
				FUZZ_CHECK(
					mux_credit_lane(ctx.credit, 0, gen->credit_slot[k])->used ==
					0);
	}
}

/* The admission state as a new worker has it: every bucket full again at its first use. */
static void
limits_reset(void)
{
	struct mux_limits *l = &w->lim;

	memset(l->svc, 0, sizeof(*l->svc) * l->cap_services);
	memset(l->src, 0, sizeof(*l->src) * MUX_LIM_SOURCES);
	l->mux_built = 0;
	memset(&l->mux_cnt, 0, sizeof(l->mux_cnt));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t mtus[8] = {1500, 596, 597, 1000, 1280, 1480, 1999, 2030};
	enum variant v;
	uint8_t ctl, ctl2;
	bool zero_share, opens;
	struct lb_pkt pi;
	uint16_t len;
	int rc;

	if (size < 2)
		return 0;
	ctl = data[0];
	ctl2 = data[1];
	data += 2;
	size -= 2;
	ctx.mtu = mtus[(ctl2 >> 1) & 7];
	/* One segment of the default data room: what a port's RX gives. */
	len = (uint16_t)RTE_MIN(size, (size_t)RTE_MBUF_DEFAULT_DATAROOM);
	in_port = (ctl >> 3) & 1;
	ctx.arp_for_vips = (ctl >> 2) & 1;
	var = v = (enum variant)((ctl2 >> 4) & 3);
	gen = ctx.gen = gens[v];
	mux_conn_reset(w->conn);
	mux_conn6_reset(w->conn6);
	/* 1 of a divisor of 1000 at index 999: a share of 0 of every limit of 1 or 2. */
	zero_share = (v == VAR_LIMITS && (ctl2 & 0x40)) || v == VAR_CREDITS;
	ctx.lim_share = zero_share ? (uint64_t)1000 << 32 | 999 : 0;
	if (v == VAR_LIMITS || v == VAR_CREDITS)
		limits_reset();
	mux_credit_free(ctx.credit);
	ctx.credit = NULL;
	if (v == VAR_CREDITS && (ctl2 & 0x40))
		credits_grant(ctl2 & 0x80 ? 3 : 1);
	if (v == VAR_PLAIN && (ctl2 & 0x80))
		while (n_held < FUZZ_IND_POOL &&
			(held[n_held] = rte_pktmbuf_alloc(ind_pool)) != NULL)
			n_held++;
	rc = burst(data, len, 1 + (ctl & 3), ctl2 & 1, in_port, FUZZ_NOW);
	if (rc == 0 && (ctl >> 4))
		burst(data, len, 1, false, in_port, FUZZ_NOW + 5u * (ctl >> 4));
	rte_pktmbuf_free_bulk(held, n_held);
	n_held = 0;
	if (rc != 0)
		return 0;
	opens = lb_parse(data, len, &pi) == 0 && pi.kind == LB_PKT_L4 && mux_new_conn(&pi);
	check_state(zero_share && opens);
	if (verbose)
		report();
	return 0;
}
