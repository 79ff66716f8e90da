/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agent's connection tracker (host_agent/ha_track.c) over the
 * backends it counts: a tracker with room for 8 backends counts any number
 * over its life, forgetting a backend once the agent's table has dropped it
 * and its last connection has ended, and only then.
 *
 * The tracker runs on DPDK's hash and allocator: EAL starts without
 * hugepages once per test process, and its run-time folder goes at the end.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "ha_agent.h"
#include "ha_track.h"
#include "lb_dpdk.h"
#include "lb_hdr.h"

#define SLOTS 8
#define MAX_BE 24

static struct ha_config cfg;
static struct ha_worker *w;
static char rundir[PATH_MAX];

static void
setup(void)
{
	char prefix[64];
	char *argv[] = {"test_track", "--no-huge", "-m", "64", "--no-pci", "--no-telemetry",
		"--log-level=1", prefix, NULL};

	snprintf(prefix, sizeof(prefix), "--file-prefix=test_track-%d", (int)getpid());
	cr_assert_geq(rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv), 0, "EAL: %s",
		rte_strerror(rte_errno));
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	memset(&cfg, 0, sizeof(cfg));
	cfg.pa = lb_cpu_to_be32(0xc0000201); /* 192.0.2.1 */
	cfg.n_vms = 1;
	cfg.vms[0].dip = lb_cpu_to_be32(0x0a010001); /* 10.1.0.1: every backend's DIP */
	w = rte_zmalloc("test_worker", sizeof(*w), 0);
	cr_assert_not_null(w);
	w->track = ha_track_create(SLOTS);
	cr_assert_not_null(w->track);
	w->now_ms = 1000;
}

static void
teardown(void)
{
	ha_track_free(w->track);
	rte_free(w);
	rte_eal_cleanup();
	lb_remove_runtime_dir(rundir);
}

TestSuite(track, .init = setup, .fini = teardown);

/*
 * A map of backends ids[0 .. n) on 10.1.0.1 port 8000 + id, each the one
 * backend of TCP service 10.0.0.1 port 1000 + id.
 */
static void
map_of(struct ha_map *m, const uint32_t *ids, uint32_t n)
{
	struct lb_backend_cfg be[MAX_BE];
	struct lb_service_cfg sc[MAX_BE];
	struct lb_ftable ft;
	char err[256];
	uint32_t i;

	memset(be, 0, sizeof(be));
	memset(sc, 0, sizeof(sc));
	memset(&ft, 0, sizeof(ft));
	for (i = 0; i < n; i++) {
		be[i].dip.a32[0] = cfg.vms[0].dip;
		be[i].host.a32[0] = cfg.pa;
		be[i].port = (uint16_t)(8000 + ids[i]);
		be[i].weight = 1;
		be[i].id = ids[i];
		sc[i].vip.a32[0] = lb_cpu_to_be32(0x0a000001);
		sc[i].port = (uint16_t)(1000 + ids[i]);
		sc[i].proto = LB_IPPROTO_TCP;
		sc[i].af = LB_AF_INET;
		sc[i].id = ids[i];
		sc[i].n_backends = 1;
		sc[i].backends = &be[i];
	}
	ft.n_services = n;
	ft.services = sc;
	cr_assert_eq(ha_map_compile(m, &cfg, &ft, err, sizeof(err)), 0, "map: %s", err);
}

/* A TCP segment with flags from client port cport to backend id's DIP:port. */
static void
segment(uint32_t id, uint16_t cport, uint8_t flags)
{
	struct lb_pkt pi;

	memset(&pi, 0, sizeof(pi));
	pi.kind = LB_PKT_L4;
	pi.proto = LB_IPPROTO_TCP;
	pi.tcp_flags = flags;
	pi.src = lb_cpu_to_be32(0xc6336401); /* 198.51.100.1 */
	pi.dst = cfg.vms[0].dip;
	pi.sport = lb_cpu_to_be16(cport);
	pi.dport = lb_cpu_to_be16((uint16_t)(8000 + id));
	ha_track_in(w, NULL, &pi);
}

/* Let ms pass, sweeping every 10 ms as an idle lcore does at most. */
static void
pass(uint32_t ms)
{
	uint32_t t;

	for (t = 0; t < ms; t += 10) {
		w->now_ms += 10;
		ha_track_sweep(w);
	}
}

static uint64_t
opened(uint32_t id)
{
	return ha_track_load(w->track, id)->opened;
}

static uint64_t
active(uint32_t id)
{
	return ha_track_load(w->track, id)->active;
}

Test(track, slots_of_backends_gone_serve_new_ones)
{
	uint32_t first[SLOTS], next[SLOTS], i;
	struct ha_map a, b;

	for (i = 0; i < SLOTS; i++) {
		first[i] = i + 1;
		next[i] = SLOTS + i + 1;
	}
	map_of(&a, first, SLOTS);
	map_of(&b, next, SLOTS);
	w->map = &a;
	for (i = 0; i < SLOTS; i++) {
		segment(first[i], 40000, LB_TCP_SYN);
		segment(first[i], 40000, LB_TCP_FIN | LB_TCP_ACK);
		cr_assert_eq(opened(first[i]), 1, "backend %u: opened", first[i]);
		cr_assert_eq(active(first[i]), 0, "backend %u: active", first[i]);
	}
	/* The table replaced: every slot still holds a backend of the old one. */
	w->map = &b;
	segment(next[0], 40001, LB_TCP_SYN);
	cr_assert_eq(opened(next[0]), 0, "no slot yet for a ninth backend");
	cr_assert_eq(ha_track_untracked(w->track), 1);
	/* Every old one forgotten at the next look; no slot given out within the grace. */
	pass(20);
	cr_assert_eq(ha_track_forgotten(w->track), SLOTS);
	segment(next[0], 40001, LB_TCP_SYN);
	cr_assert_eq(opened(next[0]), 0, "a forgotten slot is not given out within the grace");
	pass(HA_TRACK_GRACE_MS);
	for (i = 0; i < SLOTS; i++) {
		cr_assert_eq(opened(first[i]), 0, "backend %u forgotten", first[i]);
		segment(next[i], 40002, LB_TCP_SYN);
		cr_assert_eq(opened(next[i]), 1, "backend %u counted in a freed slot", next[i]);
		cr_assert_eq(active(next[i]), 1, "backend %u: active", next[i]);
	}
	cr_assert_eq(ha_track_untracked(w->track), 2);
	ha_map_free(&a);
	ha_map_free(&b);
}

Test(track, kept_while_in_the_table_or_connected)
{
	uint32_t ids[] = {1, 2, 3}, i;
	struct ha_map a, b;

	map_of(&a, ids, 3);
	map_of(&b, ids, 2); /* 3 is gone */
	w->map = &a;
	for (i = 0; i < 3; i++)
		segment(ids[i], 40000, LB_TCP_SYN);
	segment(1, 40000, LB_TCP_FIN | LB_TCP_ACK); /* 1 idle; 2 and 3 hold one each */
	w->map = &b;
	pass(20 * 10 + HA_TRACK_GRACE_MS);
	cr_assert_eq(ha_track_forgotten(w->track), 0, "in the table, or connected: kept");
	cr_assert_eq(opened(1), 1);
	cr_assert_eq(active(3), 1, "backend 3 out of the table keeps its open connection");
	/* Its connection ends: then it goes. */
	segment(3, 40000, LB_TCP_RST);
	cr_assert_eq(active(3), 0);
	pass(20 * 10 + HA_TRACK_GRACE_MS);
	cr_assert_eq(ha_track_forgotten(w->track), 1);
	cr_assert_eq(opened(3), 0, "backend 3 forgotten");
	cr_assert_eq(opened(1), 1, "backend 1, still in the table, kept");
	cr_assert_eq(opened(2), 1);
	/* Back in a later table, it counts from zero. */
	w->map = &a;
	segment(3, 40001, LB_TCP_SYN);
	cr_assert_eq(opened(3), 1);
	cr_assert_eq(active(3), 1);
	ha_map_free(&a);
	ha_map_free(&b);
}
