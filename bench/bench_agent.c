/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-bench --agent: the host agent's two per-packet functions, timed
 * as the micro mode times the mux's (docs/performance.md, "The host
 * agent's cost per packet").
 *
 *   agent-decap   ha_uplink_burst(): a 4in4 tunnel from a mux to our PA,
 *                 checked, decapsulated, tracked, delivered to a VM's port
 *   agent-dsr     ha_vm_burst(): a VM's reply from DIP:8080, tracked and
 *                 rewritten to come from VIP:80 (direct server return)
 *   ...6          the same over IPv6 (6in6, and DSR of IPv6 replies)
 *
 * Each scenario's connections are set up first as a real one would be
 * (SYN in, SYN-ACK out, ACK in), so the timed packets, bare ACKs, find
 * them established in the agent's connection tracker. The agent is
 * configured as host_agent/main.c does it, with its tracker, on no ports:
 * what a burst leaves in the TX buffers is taken back after it, as the
 * mux's micro mode does. Frames are rebuilt from the flow number before
 * every batch, untimed. --smoke checks every frame that comes out instead
 * of timing.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bench.h"
#include "ha_agent.h"
#include "ha_track.h"
#include "lb_csum.h"
#include "lb_dpdk.h"
#include "lb_hdr.h"
#include "lb_parse.h"

#define AG_BURST HA_BURST
#define AG_BATCH 64 /* bursts per timed batch */
#define AG_BATCH_PKTS (AG_BATCH * AG_BURST)
#define AG_NOW_MS 1000000u
#define AG_VMS 2
#define AG_MUX 0x0aff0001u /* 10.255.0.1 */
#define AG_PORT_UPLINK 0

static const uint8_t router_mac[6] = {0x02, 0, 0, 0, 0, 0xfe};
static const uint8_t uplink_mac[6] = {0x02, 0, 0, 0, 1, 0};

struct ag_scenario {
	const char *name;
	const char *what;
	bool v6;
	bool dsr; /* the VM's path; else the uplink's */
	uint32_t conns;
};

static const struct ag_scenario suite[] = {
	{"agent-decap-1k", "uplink: 4in4 ACK to a VM, 1k connections", false, false, 1000},
	{"agent-dsr-1k", "VM: ACK from DIP:8080 sent as VIP:80, 1k connections", false, true, 1000},
	{"agent-decap-60k", "agent-decap-1k, 60k connections", false, false, 60000},
	{"agent-dsr-60k", "agent-dsr-1k, 60k connections", false, true, 60000},
	{"agent-decap6-1k", "uplink: 6in6 ACK to a VM, 1k connections", true, false, 1000},
	{"agent-dsr6-1k", "VM: IPv6 ACK from DIP:8080 sent as VIP:80, 1k connections", true, true,
		1000},
};

struct ag_env {
	struct rte_mempool *pool;
	struct ha_worker *w;
	struct ha_config cfg;
	struct ha_map map;
	struct lb_backend_cfg be[2][AG_VMS];
	struct lb_service_cfg svc[2];
	uint64_t hz;
};

struct ag_result {
	uint64_t pkts, cyc, out;
	uint64_t bad; /* smoke: frames that came out wrong */
};

static lb_be32_t
vip4(void)
{
	return lb_cpu_to_be32(BENCH_VIP_BASE + 1);
}

static lb_be32_t
dip4(uint32_t vm)
{
	return lb_cpu_to_be32(BENCH_DIP_BASE + 1 + vm);
}

static lb_be32_t
pa4(void)
{
	return lb_cpu_to_be32(BENCH_HOST_BASE + 1);
}

/* One service per family, VIP:80 -> the two VMs' DIP:8080, on this host's PA of that family. */
static int
ag_configure(struct ag_env *e)
{
	struct ha_config *c = &e->cfg;
	char err[256];
	uint32_t v, f;

	memset(c, 0, sizeof(*c));
	c->pa = pa4();
	c->n_muxes = 1;
	c->muxes[0] = lb_cpu_to_be32(AG_MUX);
	c->has_pa6 = true;
	bench_addr6(c->pa6.a8, BENCH_NET6_HOST, 1);
	c->n_muxes6 = 1;
	bench_addr6(c->muxes6[0].a8, BENCH_NET6_HOST, 0xffff0001);
	memcpy(c->next_hop_mac, router_mac, 6);
	c->n_vms = AG_VMS;
	for (v = 0; v < AG_VMS; v++) {
		snprintf(c->vms[v].name, sizeof(c->vms[v].name), "vm%u", v);
		c->vms[v].dip = dip4(v);
		c->vms[v].has_dip6 = true;
		bench_addr6(c->vms[v].dip6.a8, BENCH_NET6_DIP, v + 1);
		memcpy(c->vms[v].mac, "\x02\x00\x00\x00\x02\x00", 6);
		c->vms[v].mac[5] = (uint8_t)v;
	}
	for (f = 0; f < 2; f++) {
		for (v = 0; v < AG_VMS; v++) {
			struct lb_backend_cfg *b = &e->be[f][v];

			b->id = f * AG_VMS + v;
			b->port = BENCH_BE_PORT;
			b->weight = 1;
			if (f == 0) {
				lb_addr_v4(&b->dip, dip4(v));
				lb_addr_v4(&b->host, pa4());
			} else {
				b->dip = c->vms[v].dip6;
				b->host = c->pa6;
				b->host6 = 1;
			}
		}
		e->svc[f].id = f;
		e->svc[f].port = BENCH_SVC_PORT;
		e->svc[f].proto = LB_IPPROTO_TCP;
		e->svc[f].n_backends = AG_VMS;
		e->svc[f].backends = e->be[f];
		if (f == 0) {
			e->svc[f].af = LB_AF_INET;
			lb_addr_v4(&e->svc[f].vip, vip4());
		} else {
			e->svc[f].af = LB_AF_INET6;
			bench_addr6(e->svc[f].vip.a8, BENCH_NET6_VIP, 1);
		}
	}
	c->ftable.seed.k0 = 1;
	c->ftable.seed.k1 = 2;
	c->ftable.maglev_size = 251;
	c->ftable.n_services = 2;
	c->ftable.services = e->svc;
	if (ha_map_build(&e->map, c, err, sizeof(err)) != 0) {
		fprintf(stderr, "sluice-bench: agent map: %s\n", err);
		return -1;
	}
	e->map.version = 1;
	return 0;
}

/* The worker as host_agent/main.c sets it up: uplink port 0, VM v on port v + 1, tracked. */
static int
ag_worker(struct ag_env *e)
{
	struct ha_worker *w = rte_zmalloc("bench_agent", sizeof(*w), RTE_CACHE_LINE_SIZE);
	uint16_t v;

	if (w == NULL)
		return -1;
	memset(w->vm_of_port, -1, sizeof(w->vm_of_port));
	w->map = &e->map;
	w->uplink = AG_PORT_UPLINK;
	memcpy(&w->uplink_mac, uplink_mac, 6);
	memcpy(&w->next_hop, router_mac, 6);
	w->pa = e->cfg.pa;
	w->n_muxes = e->cfg.n_muxes;
	memcpy(w->muxes, e->cfg.muxes, sizeof(e->cfg.muxes));
	w->has_pa6 = true;
	memcpy(w->pa6, e->cfg.pa6.a8, 16);
	w->n_muxes6 = e->cfg.n_muxes6;
	memcpy(w->muxes6[0], e->cfg.muxes6[0].a8, 16);
	w->n_vms = e->cfg.n_vms;
	for (v = 0; v < e->cfg.n_vms; v++) {
		w->vms[v].port = (uint16_t)(v + 1);
		w->vms[v].dip = e->cfg.vms[v].dip;
		w->vms[v].has_dip6 = true;
		memcpy(w->vms[v].dip6, e->cfg.vms[v].dip6.a8, 16);
		memcpy(&w->vms[v].mac, e->cfg.vms[v].mac, 6);
		memcpy(&w->vms[v].port_mac, uplink_mac, 6);
		w->vms[v].port_mac.addr_bytes[5] = (uint8_t)(v + 1);
		w->vm_of_port[v + 1] = (int8_t)v;
	}
	w->busy_poll = true;
	w->now_ms = AG_NOW_MS;
	w->track = ha_track_create(HA_TRACK_BACKENDS);
	e->w = w;
	return w->track == NULL ? -1 : 0;
}

/* Connection c's VM: the two take turns. */
static uint32_t
vm_of(uint64_t c)
{
	return (uint32_t)(c % AG_VMS);
}

/*
 * Connection c's packet into m: from the client through a mux (tunneled
 * to our PA) unless dsr, else from its VM back to the client. Returns the
 * frame's length.
 */
static uint16_t
ag_frame(const struct ag_env *e, bool v6, bool dsr, uint64_t c, uint8_t flags, uint8_t *p)
{
	uint32_t vm = vm_of(c);
	uint16_t len;

	if (!v6) {
		struct bench_flow cl, fl;
		struct lb_ipv4_hdr *outer = (struct lb_ipv4_hdr *)(p + sizeof(struct lb_eth_hdr));

		bench_flow_of(c, 1, &cl);
		fl.src = dsr ? dip4(vm) : cl.src;
		fl.dst = dsr ? cl.src : dip4(vm);
		fl.sport = dsr ? lb_cpu_to_be16(BENCH_BE_PORT) : cl.sport;
		fl.dport = dsr ? cl.sport : lb_cpu_to_be16(BENCH_BE_PORT);
		if (dsr) {
			bench_frame(p, &fl, flags, BENCH_FRAME_LEN);
			bench_put_eth(p, uplink_mac, e->cfg.vms[vm].mac, LB_ETHERTYPE_IPV4);
			return BENCH_FRAME_LEN;
		}
		/* The inner packet after an outer IPv4 header; its own Ethernet header goes. */
		bench_frame(p + sizeof(*outer), &fl, flags, BENCH_FRAME_LEN);
		len = (uint16_t)(sizeof(struct lb_ipv4_hdr) + sizeof(struct lb_tcp_hdr));
		lb_ipv4_hdr_init(outer, LB_IPPROTO_IPIP, lb_cpu_to_be32(AG_MUX), pa4(),
			(uint16_t)(sizeof(*outer) + len), 64);
		outer->csum = lb_ipv4_hdr_csum(outer, sizeof(*outer));
		bench_put_eth(p, uplink_mac, router_mac, LB_ETHERTYPE_IPV4);
		return (uint16_t)(sizeof(struct lb_eth_hdr) + sizeof(*outer) + len);
	}
	{
		struct bench_flow6 cl, fl;
		struct lb_ipv6_hdr *outer = (struct lb_ipv6_hdr *)(p + sizeof(struct lb_eth_hdr));

		bench_flow6_of(c, 1, &cl);
		memcpy(fl.src, dsr ? e->cfg.vms[vm].dip6.a8 : cl.src, 16);
		memcpy(fl.dst, dsr ? cl.src : e->cfg.vms[vm].dip6.a8, 16);
		fl.sport = dsr ? lb_cpu_to_be16(BENCH_BE_PORT) : cl.sport;
		fl.dport = dsr ? cl.sport : lb_cpu_to_be16(BENCH_BE_PORT);
		if (dsr) {
			bench_frame6(p, &fl, flags);
			bench_put_eth(p, uplink_mac, e->cfg.vms[vm].mac, LB_ETHERTYPE_IPV6);
			return BENCH_FRAME6_LEN;
		}
		bench_frame6(p + sizeof(*outer), &fl, flags);
		len = BENCH_FRAME6_LEN - sizeof(struct lb_eth_hdr);
		lb_ipv6_hdr_init(
			outer, LB_IPPROTO_IPV6, e->cfg.muxes6[0].a8, e->cfg.pa6.a8, len, 64);
		bench_put_eth(p, uplink_mac, router_mac, LB_ETHERTYPE_IPV6);
		return (uint16_t)(sizeof(struct lb_eth_hdr) + sizeof(*outer) + len);
	}
}

/*
 * Which connections a batch carries: each burst is of one VM (a VM's port
 * hands the agent that VM's frames; its DIP is checked), vm, or the VMs in
 * turn burst by burst (vm < 0); within a VM its connections in order, from
 * where the last batch stopped (cur).
 */
struct ag_cursor {
	uint64_t next[AG_VMS];
};

static uint64_t
ag_conn(const struct ag_scenario *sc, struct ag_cursor *cur, uint32_t i, int vm)
{
	uint32_t v = vm >= 0 ? (uint32_t)vm : (i / AG_BURST) % AG_VMS;

	return (cur->next[v]++ % (sc->conns / AG_VMS)) * AG_VMS + v;
}

static void
ag_prep(const struct ag_env *e, const struct ag_scenario *sc, struct rte_mbuf **m, uint64_t *conn,
	uint32_t n, struct ag_cursor *cur, int vm, bool dsr, uint8_t flags)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint16_t len;

		conn[i] = ag_conn(sc, cur, i, vm);
		rte_pktmbuf_reset(m[i]);
		len = ag_frame(e, sc->v6, dsr, conn[i], flags, rte_pktmbuf_mtod(m[i], uint8_t *));
		m[i]->data_len = len;
		m[i]->pkt_len = len;
	}
}

/*
 * A frame the agent sent for connection c (smoke): to the VM's port with
 * the VM's MAC and its DIP as destination, or (dsr) to the uplink by the
 * router's MAC from VIP:80 with both checksums right. NULL or what is wrong.
 */
static const char *
ag_check(const struct ag_env *e, const struct ag_scenario *sc, uint64_t c, uint16_t port,
	const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct lb_eth_hdr *eth = (const struct lb_eth_hdr *)p;
	uint32_t vm = vm_of(c), l4_len;
	struct lb_pkt pi;

	if (lb_parse(p, m->data_len, &pi) != 0 || pi.kind != LB_PKT_L4 || pi.v6 != sc->v6)
		return "not a sound TCP packet of the scenario's family";
	l4_len = pi.l2_len + pi.l3_len - pi.l4_off;
	if (!sc->dsr) {
		if (port != e->w->vms[vm].port || memcmp(eth->dst, e->cfg.vms[vm].mac, 6) != 0)
			return "not to the connection's VM";
		if (sc->v6 ? memcmp(lb_pkt_ip_dst6(p, &pi), e->cfg.vms[vm].dip6.a8, 16) != 0
			   : pi.ip_dst != dip4(vm))
			return "not to the VM's DIP";
		return pi.dport == lb_cpu_to_be16(BENCH_BE_PORT) ? NULL : "not to port 8080";
	}
	if (port != AG_PORT_UPLINK || memcmp(eth->dst, router_mac, 6) != 0)
		return "not to the uplink's next hop";
	if (pi.sport != lb_cpu_to_be16(BENCH_SVC_PORT))
		return "source port not the VIP's";
	if (sc->v6) {
		uint8_t vip[16];

		bench_addr6(vip, BENCH_NET6_VIP, 1);
		if (memcmp(lb_pkt_src6(p, &pi), vip, 16) != 0)
			return "source not the VIP";
		return lb_ipv6_l4_csum(lb_pkt_src6(p, &pi), lb_pkt_ip_dst6(p, &pi), LB_IPPROTO_TCP,
			       p + pi.l4_off, l4_len) == 0
			       ? NULL
			       : "TCP checksum wrong";
	}
	if (pi.src != vip4())
		return "source not the VIP";
	if (lb_ipv4_hdr_csum(p + pi.l2_len, pi.l4_off - pi.l2_len) !=
		((const struct lb_ipv4_hdr *)(p + pi.l2_len))->csum)
		return "IPv4 header checksum wrong";
	return lb_ipv4_l4_csum(pi.src, pi.ip_dst, LB_IPPROTO_TCP, p + pi.l4_off, l4_len) == 0
		       ? NULL
		       : "TCP checksum wrong";
}

/*
 * Run m[0..n) through the path in bursts (vm as ag_prep() chose them), the
 * bursts' cycles added to *cyc; what the agent sent is taken back from its
 * TX buffers into out, in order, with its port. Returns how many.
 */
static uint32_t
ag_run(struct ag_env *e, bool dsr, int vm, struct rte_mbuf **m, uint32_t n, struct rte_mbuf **out,
	uint16_t *out_port, uint64_t *cyc)
{
	struct ha_worker *w = e->w;
	uint32_t i, got = 0;
	uint16_t port, j;

	for (i = 0; i < n; i += AG_BURST) {
		uint16_t k = (uint16_t)RTE_MIN((uint32_t)AG_BURST, n - i);
		uint64_t t0 = rte_rdtsc();

		if (dsr)
			ha_vm_burst(w, vm >= 0 ? vm : (int)((i / AG_BURST) % AG_VMS), m + i, k);
		else
			ha_uplink_burst(w, m + i, k);
		*cyc += rte_rdtsc() - t0;
		for (port = 0; port <= AG_VMS; port++) {
			struct dp_txbuf *t = &w->tx[port];

			for (j = 0; j < t->n; j++) {
				out_port[got] = port;
				out[got++] = t->pkts[j];
			}
			t->n = 0;
		}
	}
	return got;
}

/* The batch's mbufs back into m after a run that returned got of n (the rest were dropped). */
static int
ag_reclaim(struct ag_env *e, struct rte_mbuf **m, struct rte_mbuf **out, uint32_t got, uint32_t n)
{
	memcpy(m, out, sizeof(*m) * got);
	return got == n ? 0 : rte_pktmbuf_alloc_bulk(e->pool, m + got, n - got);
}

static int
ag_scenario(struct ag_env *e, const struct ag_scenario *sc, double seconds, bool smoke,
	struct ag_result *r)
{
	static const uint8_t setup[3] = {LB_TCP_SYN, LB_TCP_SYN | LB_TCP_ACK, LB_TCP_ACK};
	static struct rte_mbuf *m[AG_BATCH_PKTS], *out[AG_BATCH_PKTS];
	static uint64_t conn[AG_BATCH_PKTS];
	static uint16_t out_port[AG_BATCH_PKTS];
	struct ag_cursor cur;
	uint64_t setup_cyc = 0, done, per_vm = sc->conns / AG_VMS;
	double until;
	uint32_t n, got, i, s;
	int v, rc = 0;

	memset(r, 0, sizeof(*r));
	/* A tracker of its own, as an agent that just started. */
	ha_track_free(e->w->track);
	e->w->track = ha_track_create(HA_TRACK_BACKENDS);
	if (e->w->track == NULL || rte_pktmbuf_alloc_bulk(e->pool, m, AG_BATCH_PKTS) != 0) {
		fprintf(stderr, "sluice-bench: %s: no mbufs\n", sc->name);
		return -1;
	}
	/* Every connection set up as a real one is: SYN in, SYN-ACK out, ACK in. */
	for (s = 0; s < 3 && rc == 0; s++) {
		memset(&cur, 0, sizeof(cur));
		for (v = 0; v < AG_VMS && rc == 0; v++)
			for (done = 0; done < per_vm && rc == 0; done += n) {
				n = (uint32_t)RTE_MIN((uint64_t)AG_BATCH_PKTS, per_vm - done);
				ag_prep(e, sc, m, conn, n, &cur, v, s == 1, setup[s]);
				got = ag_run(e, s == 1, v, m, n, out, out_port, &setup_cyc);
				if (got != n) {
					fprintf(stderr,
						"sluice-bench: %s: set-up step %u: %u of %u "
						"packets came out\n",
						sc->name, s, got, n);
					rc = -1;
				}
				if (ag_reclaim(e, m, out, got, n) != 0)
					rc = -1;
			}
	}
	/* The timed ACKs must find their connections established, or this times another path. */
	for (v = 0, done = 0; v < AG_VMS; v++)
		done += ha_track_load(e->w->track, (sc->v6 ? AG_VMS : 0) + (uint32_t)v)->active;
	if (rc == 0 && done != sc->conns) {
		fprintf(stderr, "sluice-bench: %s: %" PRIu64 " of %u connections established\n",
			sc->name, done, sc->conns);
		rc = -1;
	}
	memset(&cur, 0, sizeof(cur));
	until = bench_now_s() + (smoke ? 0 : seconds);
	do {
		if (rc != 0)
			break;
		ag_prep(e, sc, m, conn, AG_BATCH_PKTS, &cur, -1, sc->dsr, LB_TCP_ACK);
		got = ag_run(e, sc->dsr, -1, m, AG_BATCH_PKTS, out, out_port, &r->cyc);
		r->pkts += AG_BATCH_PKTS;
		r->out += got;
		for (i = 0; smoke && i < got; i++) {
			const char *why = got == AG_BATCH_PKTS
						  ? ag_check(e, sc, conn[i], out_port[i], out[i])
						  : "packets dropped";

			if (why != NULL && r->bad++ == 0)
				fprintf(stderr, "sluice-bench: %s: connection %" PRIu64 ": %s\n",
					sc->name, conn[i], why);
		}
		if (ag_reclaim(e, m, out, got, AG_BATCH_PKTS) != 0)
			rc = -1;
	} while (bench_now_s() < until);
	rte_pktmbuf_free_bulk(m, AG_BATCH_PKTS);
	return rc;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
bench_agent(const struct bench_opts *o, const char *argv0)
{
	char rundir[PATH_MAX];
	struct ag_env e;
	int rc = 0, ran = 0, k;
	size_t i;

	memset(&e, 0, sizeof(e));
	if (bench_eal_start(o, argv0, NULL, rundir, sizeof(rundir)) != 0)
		return 1;
	e.hz = rte_get_tsc_hz();
	e.pool = rte_pktmbuf_pool_create("bench_agent_pool", 2 * AG_BATCH_PKTS + 1024, 256, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (e.pool == NULL || ag_configure(&e) != 0 || ag_worker(&e) != 0) {
		fprintf(stderr, "sluice-bench: agent set-up: %s\n", rte_strerror(rte_errno));
		rc = 1;
		goto done;
	}
	printf("sluice-bench agent: lcore %u, TSC %.3f GHz, batches of %d bursts of %d%s\n",
		rte_lcore_id(), (double)e.hz / 1e9, AG_BATCH, AG_BURST,
		o->smoke ? ", smoke (every frame checked, nothing timed)" : "");
	printf("%-18s %10s %8s %8s  %s\n", "scenario", "cyc/pkt", "min", "max", "what");
	for (i = 0; i < RTE_DIM(suite); i++) {
		const struct ag_scenario *sc = &suite[i];
		uint64_t cpp[16];
		int reps = o->smoke ? 1 : o->repeat;

		if (o->only != NULL && strcmp(o->only, sc->name) != 0)
			continue;
		if (o->smoke && sc->conns > 1000)
			continue;
		ran++;
		for (k = 0; k < reps; k++) {
			struct ag_result r;

			if (ag_scenario(&e, sc, o->seconds, o->smoke, &r) != 0 || r.pkts == 0) {
				rc = 1;
				break;
			}
			if (o->smoke) {
				printf("%-18s %" PRIu64 " packets in, %" PRIu64 " out, %" PRIu64
				       " wrong\n",
					sc->name, r.pkts, r.out, r.bad);
				if (r.out != r.pkts || r.bad != 0)
					rc = 1;
				break;
			}
			cpp[k] = r.cyc / r.pkts;
		}
		if (o->smoke || k < reps)
			continue;
		qsort(cpp, (size_t)reps, sizeof(cpp[0]), cmp_u64);
		printf("%-18s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 "  %s\n", sc->name,
			cpp[reps / 2], cpp[0], cpp[reps - 1], sc->what);
		fflush(stdout);
	}
	if (ran == 0) {
		fprintf(stderr, "sluice-bench: no agent scenario named %s\n", o->only);
		rc = 2;
	}
	if (o->smoke)
		printf("agent smoke: %s\n", rc == 0 ? "ok" : "FAILED");
done:
	if (e.w != NULL) {
		ha_track_free(e.w->track);
		rte_free(e.w);
	}
	ha_map_free(&e.map);
	rte_mempool_free(e.pool);
	rte_eal_cleanup();
	lb_remove_runtime_dir(rundir);
	return rc;
}
