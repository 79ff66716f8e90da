/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host agent's two packet paths on frames made from the fuzz input:
 * ha_uplink_burst() (ARP, neighbor discovery and ping for the PAs, the
 * four tunnel forms from a mux: outer checks, reassembly of outer IPv4 and
 * IPv6 fragments, decapsulation, ICMP and ICMPv6 quote translation, MSS
 * clamping) and ha_vm_burst() (direct server return in both families, ICMP
 * and ICMPv6 errors from VMs, ARP proxy, neighbor discovery for gateway6,
 * link-scope IPv6, anti-spoofing).
 *
 * Input: byte 0 steers the run, the rest is the frame.
 *   bit 0     0: the uplink path, 1: a VM's path
 *   bit 1     which VM (of two)
 *   bit 2     MSS clamping on (1400) or off
 *   bits 3-4  copies of the frame in the burst (1..4)
 *   bit 5     the last copy in two segments
 *   bit 6     track connections (ha_track.h, the backends' load): one
 *             tracker for every such input, so its table carries state
 *             from one to the next; each moves its clock by 250 ms and
 *             sweeps 4 slices after the burst
 *   bit 7     with bit 6: the clock jumps 2^31 ms and the adoption window
 *             (24.86 days) first
 * The mapping is built by the real ha_map_build() from an ha_config filled
 * in here (no file): PA 172.16.0.2 and PA6 2001:db8:ff::2, muxes
 * 10.255.0.1, 10.255.0.2 and 2001:db8:ff::1, gateway6 fe80::1, VMs
 * 10.1.0.1 / 2001:db8:1::1 and 10.1.0.2 / 2001:db8:1::2; see
 * build_config(). After each burst every mbuf must be back in the pool or
 * well-formed in a TX buffer, and every backend's load adds up: no more
 * connections active than opened or adopted, no more refused or
 * unanswered than opened; and no connection is adopted once the window
 * for that (HA_TRACK_IDLE_MS from the tracker's first sweep) has passed,
 * however far the clock has gone.
 */
#define FUZZ_WITH_EAL
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_packet.h"
#include "ha_agent.h"
#include "ha_track.h"
#include "lb_hdr.h"
#include "lb_parse.h"

#define FUZZ_POOL 127

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rte_mempool *pool;
static struct ha_worker *w;
static struct ha_map map;
static struct ha_config cfg;
static struct ha_track *track;
static uint64_t track_ms, adopt_end_ms; /* the tracker's clock, unwrapped; 0: not yet */

/*
 * 10.0.0.1:80/TCP -> 10.1.0.1:8080 and 10.1.0.2:8080 on this host,
 * 10.1.0.9:8080 on another; 10.0.0.2:53/UDP -> 10.1.0.2:5353 here;
 * [2001:db8::1]:80/TCP -> [2001:db8:1::1]:8080 (on PA6) and
 * [2001:db8:1::2]:8080 (on PA) here.
 */
static void
build_config(void)
{
	static struct lb_backend_cfg web[3], dns[1], web6[2];
	static struct lb_service_cfg svc[3];
	static const uint8_t dips[3] = {1, 2, 9};
	uint32_t i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.pa = fuzz_ip(172, 16, 0, 2);
	cfg.n_muxes = 2;
	cfg.muxes[0] = fuzz_ip(10, 255, 0, 1);
	cfg.muxes[1] = fuzz_ip(10, 255, 0, 2);
	memcpy(cfg.next_hop_mac, "\x02\x00\x00\x00\x00\xfe", 6);
	cfg.has_pa6 = true;
	fuzz_ip6(cfg.pa6.a8, 0xff, 2);
	cfg.n_muxes6 = 1;
	fuzz_ip6(cfg.muxes6[0].a8, 0xff, 1);
	cfg.has_gateway6 = true;
	cfg.gateway6.a8[0] = 0xfe;
	cfg.gateway6.a8[1] = 0x80;
	cfg.gateway6.a8[15] = 1;
	cfg.n_probers6 = 1;
	fuzz_ip6(cfg.probers6[0].a8, 0xff, 0x254);
	cfg.n_vms = 2;
	for (i = 0; i < 2; i++) {
		snprintf(cfg.vms[i].name, sizeof(cfg.vms[i].name), "vm%u", i);
		cfg.vms[i].dip = fuzz_ip(10, 1, 0, (uint8_t)(i + 1));
		cfg.vms[i].has_dip6 = true;
		fuzz_ip6(cfg.vms[i].dip6.a8, 1, (uint16_t)(i + 1));
		memcpy(cfg.vms[i].mac, "\x02\x00\x00\x00\x02\x00", 6);
		cfg.vms[i].mac[5] = (uint8_t)i;
	}
	for (i = 0; i < 3; i++)
		fuzz_backend(&web[i], i, fuzz_ip(10, 1, 0, dips[i]), 8080,
			i == 2 ? fuzz_ip(172, 16, 0, 9) : cfg.pa, 1);
	fuzz_backend(&dns[0], 3, fuzz_ip(10, 1, 0, 2), 5353, cfg.pa, 1);
	fuzz_service(&svc[0], 0, fuzz_ip(10, 0, 0, 1), 80, LB_IPPROTO_TCP, web, 3);
	fuzz_service(&svc[1], 1, fuzz_ip(10, 0, 0, 2), 53, LB_IPPROTO_UDP, dns, 1);
	for (i = 0; i < 2; i++)
		fuzz_backend6(&web6[i], 4 + i, (uint16_t)(i + 1), 8080, 1);
	fuzz_host6(&web6[0], 2);
	lb_addr_v4(&web6[1].host, cfg.pa);
	fuzz_service6(&svc[2], 2, 1, 80, LB_IPPROTO_TCP, web6, 2);
	cfg.ftable.seed.k0 = 1;
	cfg.ftable.seed.k1 = 2;
	cfg.ftable.maglev_size = 251;
	cfg.ftable.n_services = 3;
	cfg.ftable.services = svc;
}

static void
cleanup(void)
{
	ha_map_free(&map);
	ha_track_free(track);
	rte_ip_frag_table_destroy(w->frag_tbl);
	rte_free(w);
	rte_mempool_free(pool);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char errbuf[256];
	uint16_t v;

	(void)argc;
	(void)argv;
	fuzz_eal_init("fuzz-agent");
	pool = rte_pktmbuf_pool_create(
		"fuzz_pool", FUZZ_POOL, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	w = rte_zmalloc("fuzz_worker", sizeof(*w), RTE_CACHE_LINE_SIZE);
	if (pool == NULL || w == NULL) {
		fprintf(stderr, "fuzz_agent: out of memory\n");
		exit(1);
	}
	build_config();
	if (ha_map_build(&map, &cfg, errbuf, sizeof(errbuf)) != 0) {
		fprintf(stderr, "fuzz_agent: map: %s\n", errbuf);
		exit(1);
	}
	map.version = 1;
	/* As host_agent/main.c: uplink on port 0, VM v on port v + 1. */
	memset(w->vm_of_port, -1, sizeof(w->vm_of_port));
	w->map = &map;
	w->uplink = 0;
	memcpy(&w->uplink_mac, "\x02\x00\x00\x00\x01\x00", 6);
	memcpy(&w->next_hop, cfg.next_hop_mac, 6);
	w->pa = cfg.pa;
	w->n_muxes = cfg.n_muxes;
	memcpy(w->muxes, cfg.muxes, sizeof(cfg.muxes));
	w->has_pa6 = true;
	memcpy(w->pa6, cfg.pa6.a8, 16);
	w->n_muxes6 = cfg.n_muxes6;
	memcpy(w->muxes6[0], cfg.muxes6[0].a8, 16);
	w->has_gateway6 = true;
	memcpy(w->gateway6, cfg.gateway6.a8, 16);
	w->n_probers6 = cfg.n_probers6;
	memcpy(w->probers6[0], cfg.probers6[0].a8, 16);
	w->n_vms = cfg.n_vms;
	for (v = 0; v < cfg.n_vms; v++) {
		w->vms[v].port = (uint16_t)(v + 1);
		w->vms[v].dip = cfg.vms[v].dip;
		w->vms[v].has_dip6 = true;
		memcpy(w->vms[v].dip6, cfg.vms[v].dip6.a8, 16);
		memcpy(&w->vms[v].mac, cfg.vms[v].mac, 6);
		memcpy(&w->vms[v].port_mac, "\x02\x00\x00\x00\x01\x01", 6);
		w->vms[v].port_mac.addr_bytes[5] = (uint8_t)(v + 1);
		w->vm_of_port[v + 1] = (int8_t)v;
	}
	w->busy_poll = true;
	/* As main.c; each input's held fragments are expired after it (below). */
	w->frag_tbl = rte_ip_frag_table_create(HA_FRAG_BUCKETS, HA_FRAG_BUCKET_ENTRIES, HA_FRAG_MAX,
		rte_get_tsc_hz() / 1000 * HA_FRAG_TIMEOUT_MS, (int)rte_socket_id());
	if (w->frag_tbl == NULL) {
		fprintf(stderr, "fuzz_agent: reassembly table: %s\n", rte_strerror(rte_errno));
		exit(1);
	}
	track = ha_track_create(HA_TRACK_BACKENDS);
	if (track == NULL) {
		fprintf(stderr, "fuzz_agent: tracker: out of memory\n");
		exit(1);
	}
	atexit(cleanup);
	return 0;
}

/* The tracker's counts for the backends of build_config() (ids 0..5). */
static void
check_load(void)
{
	uint64_t adopted = ha_track_adopted(track);
	uint32_t id;

	for (id = 0; id < 6; id++) {
		const struct ha_be_load *l = ha_track_load(track, id);

		FUZZ_CHECK(l != NULL);
		FUZZ_CHECK(l->active <= l->opened + adopted);
		FUZZ_CHECK(l->refused <= l->opened && l->unanswered <= l->opened);
	}
}

/*
 * What leaves the agent must be well-formed. To a VM: a plain Ethernet
 * frame (no tag) to the VM's MAC, carrying one sound IPv4 or IPv6 packet
 * for the VM's DIP of that family with no bytes after it, or a neighbor
 * advertisement for gateway6 (a reply: built in the request's frame, it
 * keeps the request's 802.1Q tag, as the ARP replies and the mux's replies
 * do). To the uplink: an ARP reply, or IP with a sound header (DSR
 * replies, passed-through traffic, echo replies, advertisements for PA6).
 */
static void
check_out(uint16_t port, const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	struct lb_pkt o;
	int rc;

	rc = fuzz_sent(p, m->data_len, &o);
	if (rc < 0)
		return;
	if (port == w->uplink)
		return;
	FUZZ_CHECK(port >= 1 && port <= w->n_vms);
	FUZZ_CHECK(rc == 0);
	if (o.kind == LB_PKT_ND) {
		FUZZ_CHECK(o.nd_type == LB_ICMP6_ND_NA &&
			   memcmp(p + o.quote_off, w->gateway6, 16) == 0);
		return;
	}
	FUZZ_CHECK(!o.has_vlan);
	FUZZ_CHECK(o.kind == LB_PKT_L4 || o.kind == LB_PKT_ICMP_ERR || o.kind == LB_PKT_ICMP_ECHO);
	FUZZ_CHECK(o.v6 ? memcmp(lb_pkt_ip_dst6(p, &o), w->vms[port - 1].dip6, 16) == 0
			: o.ip_dst == w->vms[port - 1].dip);
	FUZZ_CHECK(memcmp(p, &w->vms[port - 1].mac, 6) == 0);
	FUZZ_CHECK(m->data_len == (uint32_t)o.l2_len + o.l3_len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf *m[HA_BURST];
	const char *why;
	unsigned i, copies;
	uint64_t adopted = 0;
	uint16_t len, p;
	uint8_t ctl;

	if (size < 1)
		return 0;
	ctl = data[0];
	data++;
	size--;
	len = (uint16_t)RTE_MIN(size, (size_t)RTE_MBUF_DEFAULT_DATAROOM);
	copies = 1 + ((ctl >> 3) & 3);
	w->mss_clamp = (ctl & 4) ? 1400 : 0;
	w->mss_clamp6 = (ctl & 4) ? 1360 : 0;
	w->track = (ctl & 0x40) ? track : NULL;
	if (w->track != NULL) {
		track_ms += 250 + ((ctl & 0x80) ? ((uint64_t)1 << 31) + HA_TRACK_IDLE_MS : 0);
		w->now_ms = (uint32_t)track_ms;
		adopted = ha_track_adopted(track);
	}
	if (rte_pktmbuf_alloc_bulk(pool, m, copies) != 0)
		return 0;
	for (i = 0; i < copies; i++) {
		bool split = (ctl & 0x20) && i == copies - 1;
		uint16_t first = split ? len / 2 : len;
		struct rte_mbuf *tail;
		char *d = rte_pktmbuf_append(m[i], first);

		FUZZ_CHECK(d != NULL || first == 0);
		if (first != 0)
			memcpy(d, data, first);
		if (!split)
			continue;
		tail = rte_pktmbuf_alloc(pool);
		if (tail == NULL) {
			rte_pktmbuf_free_bulk(m, copies);
			return 0;
		}
		d = rte_pktmbuf_append(tail, (uint16_t)(len - first));
		FUZZ_CHECK(d != NULL || len == first);
		if (len != first)
			memcpy(d, data + first, len - first);
		FUZZ_CHECK(rte_pktmbuf_chain(m[i], tail) == 0);
	}
	if (ctl & 1)
		ha_vm_burst(w, (ctl >> 1) & 1, m, (uint16_t)copies);
	else
		ha_uplink_burst(w, m, (uint16_t)copies);
	for (p = 0; p < HA_MAX_PORTS; p++) {
		struct dp_txbuf *t = &w->tx[p];

		FUZZ_CHECK(t->n == 0 || p <= w->n_vms);
		for (i = 0; i < t->n; i++) {
			FUZZ_CHECK(rte_mbuf_check(t->pkts[i], 1, &why) == 0);
			FUZZ_CHECK(t->pkts[i]->data_len >= sizeof(struct lb_eth_hdr));
			FUZZ_CHECK(t->pkts[i]->pkt_len == t->pkts[i]->data_len);
			check_out(p, t->pkts[i]);
			rte_pktmbuf_free(t->pkts[i]);
		}
		t->n = 0;
	}
	/* Fragments still held: give them up as their timeout would. */
	ha_frag_expire(w, UINT64_MAX);
	FUZZ_CHECK(rte_mempool_avail_count(pool) == FUZZ_POOL);
	if (w->track != NULL) {
		FUZZ_CHECK(adopt_end_ms == 0 || track_ms < adopt_end_ms ||
			   ha_track_adopted(track) == adopted);
		for (i = 0; i < 4; i++)
			ha_track_sweep(w);
		if (adopt_end_ms == 0)
			adopt_end_ms = track_ms + HA_TRACK_IDLE_MS;
		check_load();
	}
	return 0;
}
