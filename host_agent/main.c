/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-agent: load the configuration, start EAL, the uplink and one port
 * per VM, compile the mapping, run the lcore (and, when managed, the member
 * of the manager's commit on a control thread) until SIGINT/SIGTERM, then
 * print what happened.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_malloc.h>
#include <rte_pdump.h>
#include <rte_rcu_qsbr.h>

#include "ha_agent.h"
#include "ha_update.h"
#include "ha_stats.h"
#include "lb_dpdk.h"
#include "lb_log.h"
#include "lb_member.h"

#define RD(x) (*(const volatile uint64_t *)&(x))

static void
usage(FILE *out)
{
	fprintf(out, "usage: sluice-agent -c FILE [--stats-json FILE] [-q]\n"
		     "  -c, --config FILE    agent configuration (docs/configuration.md)\n"
		     "  --stats-json FILE    write the final counters as JSON to FILE\n"
		     "  --exit-on-eof        exit once every rx_pcap input is consumed (tests)\n"
		     "  -q, --quiet          no summary on stdout\n");
}

/*
 * Managed mode: create the member on the running mapping's table (empty,
 * version 0). It dials the manager in the background; its thread starts
 * after the lcore. Returns 0, or -1 with a message in errbuf.
 */
static int
member_create(struct ha_update *u, const struct lb_member_cfg *mc, char *errbuf, size_t len)
{
	struct lb_member *m;

	m = lb_member_create(
		mc, &ha_member_ops, u, &u->cfg->ftable, u->w->map->version, errbuf, len);
	if (m == NULL)
		return -1;
	pthread_mutex_lock(&u->map_lock);
	u->member_connected = lb_member_connected;
	u->member = m;
	pthread_mutex_unlock(&u->map_lock);
	return 0;
}

/* Stop the member's thread and free the member (telemetry forgets it first). */
static void
member_destroy(struct ha_update *u, pthread_t *thread)
{
	struct lb_member *m = u->member;

	if (m == NULL)
		return;
	if (thread != NULL && !lb_member_join(m, *thread, 3000))
		return;
	pthread_mutex_lock(&u->map_lock);
	u->member = NULL;
	pthread_mutex_unlock(&u->map_lock);
	lb_member_destroy(m);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"config", required_argument, NULL, 'c'},
		{"stats-json", required_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},
		{"exit-on-eof", no_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static struct ha_config cfg;
	static struct ha_update upd;
	struct lb_member_cfg mcfg;
	pthread_t member_thread;
	struct ha_map *map;
	size_t qsz;
	static struct ha_worker w;
	const char *config = NULL, *json = NULL;
	struct lb_eal_argv ea;
	struct lb_cfg_err cerr;
	struct rte_mempool *pool;
	char errbuf[512], rundir[PATH_MAX];
	struct timespec nap = {0, 1000 * 1000};
	unsigned lcore;
	int rc = 0, c, quiet = 0, eof = 0, others = 0, ret = 1, id;
	uint64_t expected = 0;
	unsigned files = 0;
	uint16_t v, i;
	FILE *jf;

	lb_log_init("sluice-agent", LB_LOG_INFO);
	while ((c = getopt_long(argc, argv, "c:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'e':
			eof = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (config == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (ha_config_load(&cfg, config, &cerr) != 0) {
		fprintf(stderr, "sluice-agent: %s\n", cerr.msg);
		return 1;
	}
	if (lb_member_cfg_load(config_root_setting(&cfg.file), config, &mcfg, &cerr) < 0) {
		fprintf(stderr, "sluice-agent: %s\n", cerr.msg);
		return 1;
	}
	mcfg.role = LB_ROLE_AGENT;
	if (eof) {
		unsigned f;
		int o;

		rc = lb_devargs_pcaps(
			cfg.uplink_devargs, &f, &o, &expected, errbuf, sizeof(errbuf));
		files += f;
		others += o;
		for (v = 0; rc == 0 && v < cfg.n_vms; v++) {
			rc = lb_devargs_pcaps(
				cfg.vms[v].devargs, &f, &o, &expected, errbuf, sizeof(errbuf));
			files += f;
			others += o;
		}
		if (rc != 0 || files != (unsigned)cfg.n_vms + 1 || others != 0) {
			fprintf(stderr,
				"sluice-agent: --exit-on-eof needs one rx_pcap file on "
				"every port%s%s\n",
				rc ? ": " : "", rc ? errbuf : "");
			return 1;
		}
	}
	lb_eal_argv_build(&ea, "sluice-agent", cfg.eal_args, cfg.n_eal_args, 1);
	if (rte_eal_init(ea.argc, ea.argv) < 0) {
		fprintf(stderr, "sluice-agent: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	if (rte_pdump_init() != 0)
		LB_WARN("pdump unavailable: dpdk-dumpcap cannot attach");
	pool = rte_pktmbuf_pool_create("ha_pool", 4096 + 2048 * (cfg.n_vms + 1), 256, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (pool == NULL) {
		snprintf(errbuf, sizeof(errbuf), "mbuf pool: %s", rte_strerror(rte_errno));
		goto fail;
	}
	memset(w.vm_of_port, -1, sizeof(w.vm_of_port));
	id = lb_port_start(
		cfg.uplink_devargs, 1, 1, 512, pool, &w.uplink_mac, errbuf, sizeof(errbuf));
	if (id < 0 || id >= HA_MAX_PORTS) {
		if (id >= 0)
			snprintf(errbuf, sizeof(errbuf), "uplink: port id %d too large", id);
		goto fail;
	}
	w.uplink = (uint16_t)id;
	for (v = 0; v < cfg.n_vms; v++) {
		id = lb_port_start(cfg.vms[v].devargs, 1, 1, 512, pool, &w.vms[v].port_mac, errbuf,
			sizeof(errbuf));
		if (id < 0 || id >= HA_MAX_PORTS) {
			if (id >= 0)
				snprintf(errbuf, sizeof(errbuf), "vm %s: port id %d too large",
					cfg.vms[v].name, id);
			goto fail;
		}
		w.vms[v].port = (uint16_t)id;
		w.vms[v].dip = cfg.vms[v].dip;
		memcpy(&w.vms[v].mac, cfg.vms[v].mac, 6);
		w.vm_of_port[id] = (int8_t)v;
	}
	w.n_vms = cfg.n_vms;
	w.frag_tbl = rte_ip_frag_table_create(HA_FRAG_BUCKETS, HA_FRAG_BUCKET_ENTRIES, HA_FRAG_MAX,
		rte_get_tsc_hz() / 1000 * HA_FRAG_TIMEOUT_MS, (int)rte_socket_id());
	if (w.frag_tbl == NULL) {
		snprintf(errbuf, sizeof(errbuf), "reassembly table: %s", rte_strerror(rte_errno));
		goto fail;
	}
	/*
	 * A managed agent starts empty at version 0: the file's table, if any,
	 * was dropped, and nothing is mapped until the manager's arrives.
	 */
	if (cfg.managed)
		LB_INFO("managed by %s as \"%s\": starting empty at version 0; the mapping "
			"comes with the manager's flow table%s",
			mcfg.url, mcfg.id,
			cfg.ftable_ignored ? " (the file's flow_table is ignored)" : "");
	map = calloc(1, sizeof(*map));
	if (map == NULL || ha_map_build(map, &cfg, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	map->version = cfg.managed ? 0 : 1;
	w.map = map;
	qsz = rte_rcu_qsbr_get_memsize(1);
	w.qsv = rte_zmalloc("ha_qsbr", qsz, RTE_CACHE_LINE_SIZE);
	if (w.qsv == NULL || rte_rcu_qsbr_init(w.qsv, 1) != 0) {
		snprintf(errbuf, sizeof(errbuf), "RCU state: out of memory");
		goto fail;
	}
	w.pa = cfg.pa;
	w.n_muxes = cfg.n_muxes;
	for (i = 0; i < cfg.n_muxes; i++)
		w.muxes[i] = cfg.muxes[i];
	w.n_probers = cfg.n_probers;
	for (i = 0; i < cfg.n_probers; i++)
		w.probers[i] = cfg.probers[i];
	memcpy(&w.next_hop, cfg.next_hop_mac, 6);
	w.mss_clamp = cfg.mss_clamp;
	w.busy_poll = cfg.busy_poll;
	w.idle_sleep_us = cfg.idle_sleep_us;
	upd.w = &w;
	upd.cfg = &cfg;
	upd.path = config;
	pthread_mutex_init(&upd.map_lock, NULL);
	if (ha_telemetry_register(&w) != 0 || ha_update_telemetry_register(&upd) != 0)
		LB_WARN("telemetry commands not registered");

	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE) {
		snprintf(errbuf, sizeof(errbuf), "no worker lcore");
		goto fail;
	}
	if (cfg.managed && member_create(&upd, &mcfg, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	lb_signals_install(&w.quit);
	LB_INFO("%u VMs, %u load-balanced endpoints, %u muxes", cfg.n_vms, map->n_lb, cfg.n_muxes);
	rte_eal_remote_launch(ha_worker_main, &w, lcore);
	/* A control thread, not the worker lcore: it blocks on the network. */
	if (upd.member != NULL) {
		rc = rte_ctrl_thread_create(
			&member_thread, "sluice-member", NULL, lb_member_run, upd.member);
		if (rc != 0) {
			snprintf(errbuf, sizeof(errbuf), "member thread: %s", strerror(-rc));
			w.quit = true;
			rte_eal_mp_wait_lcore();
			goto fail;
		}
	}
	while (!w.quit) {
		if (eof) {
			uint64_t seen = RD(w.cnt.uplink_rx);

			uint16_t pid;

			for (v = 0; v < w.n_vms; v++)
				seen += RD(w.vm_rx[v]);
			/* What a port dropped before the lcore saw it counts as read. */
			RTE_ETH_FOREACH_DEV(pid)
			{
				struct rte_eth_stats st;

				if (rte_eth_stats_get(pid, &st) == 0)
					seen += st.ierrors + st.imissed + st.rx_nombuf;
			}
			if (seen >= expected)
				w.quit = true;
		}
		if (lb_reload_requested()) {
			ha_reload(&upd);
		}
		nanosleep(&nap, NULL);
	}
	/* No map changes while the lcore drains and the summary reads it. */
	member_destroy(&upd, &member_thread);
	rte_eal_mp_wait_lcore();
	if (!quiet)
		ha_stats_print(&w, &cfg, stdout);
	if (json != NULL) {
		jf = fopen(json, "w");
		if (jf == NULL) {
			LB_ERR("cannot write %s", json);
		} else {
			ha_stats_json(&w, &cfg, jf);
			fclose(jf);
		}
	}
	ret = 0;
	goto out;
fail:
	LB_ERR("%s", errbuf);
	member_destroy(&upd, NULL); /* its thread was never started */
out : {
	uint16_t pid;

	/* Frees the fragments still waiting for the rest of their datagram. */
	if (w.frag_tbl != NULL)
		rte_ip_frag_table_destroy(w.frag_tbl);

	RTE_ETH_FOREACH_DEV(pid)
	{
		rte_eth_dev_stop(pid);
		rte_eth_dev_close(pid);
	}
}
	rte_eal_cleanup();
	lb_remove_runtime_dir(rundir);
	return ret;
}
