/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-agent: load the configuration, start EAL, the uplink and one port
 * per VM, compile the mapping, run the lcore (and, when managed, the member
 * of the manager's commit on a control thread) until SIGINT/SIGTERM, then
 * print what happened. The start and stop every data plane shares are
 * dp_daemon.h's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "dp_daemon.h"
#include "dp_rcu.h"
#include "ha_agent.h"
#include "ha_credit.h"
#include "ha_track.h"
#include "ha_stats.h"
#include "ha_update.h"
#include "lb_log.h"

static const char usage[] =
	"usage: sluice-agent -c FILE [options]\n"
	"  -c, --config FILE      agent configuration (docs/configuration.md)\n"
	"  --stats-json FILE      write the final counters as JSON to FILE\n"
	"  --exit-on-eof          exit once every rx_pcap input is consumed (tests)\n"
	"  -q, --quiet            no summary on stdout\n" DP_USAGE_COMMON
	"  -h, --help             this text\n";

/*
 * --exit-on-eof: every port must read one rx_pcap file; *pkts gets their
 * packets. Returns 0, or -1 after saying why.
 */
static int
eof_inputs(const struct ha_config *cfg, uint64_t *pkts)
{
	char errbuf[512];
	unsigned files, f;
	int others, o, rc;
	uint16_t v;

	rc = lb_devargs_pcaps(cfg->uplink_devargs, &files, &others, pkts, errbuf, sizeof(errbuf));
	for (v = 0; rc == 0 && v < cfg->n_vms; v++) {
		rc = lb_devargs_pcaps(cfg->vms[v].devargs, &f, &o, pkts, errbuf, sizeof(errbuf));
		files += f;
		others += o;
	}
	if (rc != 0 || files != (unsigned)cfg->n_vms + 1 || others != 0) {
		fprintf(stderr,
			"sluice-agent: --exit-on-eof needs one rx_pcap file on every port%s%s\n",
			rc ? ": " : "", rc ? errbuf : "");
		return -1;
	}
	return 0;
}

/* The uplink on one port, each VM on one of its own. Returns 0, or -1 with errbuf. */
static int
ports_start(struct ha_worker *w, const struct ha_config *cfg, struct rte_mempool *pool,
	char *errbuf, size_t len)
{
	uint16_t v;
	int id;

	memset(w->vm_of_port, -1, sizeof(w->vm_of_port));
	id = lb_port_start(cfg->uplink_devargs, 1, 1, 512, pool, &w->uplink_mac, errbuf, len);
	if (id < 0 || id >= HA_MAX_PORTS) {
		if (id >= 0)
			snprintf(errbuf, len, "uplink: port id %d too large", id);
		return -1;
	}
	w->uplink = (uint16_t)id;
	for (v = 0; v < cfg->n_vms; v++) {
		id = lb_port_start(
			cfg->vms[v].devargs, 1, 1, 512, pool, &w->vms[v].port_mac, errbuf, len);
		if (id < 0 || id >= HA_MAX_PORTS) {
			if (id >= 0)
				snprintf(errbuf, len, "vm %s: port id %d too large",
					cfg->vms[v].name, id);
			return -1;
		}
		w->vms[v].port = (uint16_t)id;
		w->vms[v].dip = cfg->vms[v].dip;
		w->vms[v].has_dip6 = cfg->vms[v].has_dip6;
		memcpy(w->vms[v].dip6, cfg->vms[v].dip6.a8, 16);
		memcpy(&w->vms[v].mac, cfg->vms[v].mac, 6);
		w->vm_of_port[id] = (int8_t)v;
	}
	w->n_vms = cfg->n_vms;
	return 0;
}

/* A list of the configuration's IPv6 addresses as the lcore keeps them (16 bytes each); n back. */
static uint16_t
copy_addrs6(uint8_t (*dst)[16], const struct lb_addr *src, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		memcpy(dst[i], src[i].a8, 16);
	return n;
}

/*
 * The lcore's state: reassembly table, the first mapping, RCU, settings.
 * A managed agent starts empty at version 0: the file's table, if any, was
 * dropped, and nothing is mapped until the manager's arrives. Returns 0,
 * or -1 with errbuf.
 */
static int
worker_setup(struct ha_worker *w, const struct ha_config *cfg, char *errbuf, size_t len)
{
	struct ha_map *map;

	w->frag_tbl = rte_ip_frag_table_create(HA_FRAG_BUCKETS, HA_FRAG_BUCKET_ENTRIES, HA_FRAG_MAX,
		rte_get_tsc_hz() / 1000 * HA_FRAG_TIMEOUT_MS, (int)rte_socket_id());
	if (w->frag_tbl == NULL) {
		snprintf(errbuf, len, "reassembly table: %s", rte_strerror(rte_errno));
		return -1;
	}
	/* Without room for the tracker the agent still forwards; its backends report no load. */
	w->track = ha_track_create(HA_TRACK_BACKENDS);
	if (w->track == NULL)
		LB_WARN("no memory for connection tracking: backends will report no load");
	map = calloc(1, sizeof(*map));
	if (map == NULL || ha_map_build(map, cfg, errbuf, len) != 0)
		return -1;
	map->version = cfg->managed ? 0 : 1;
	w->map = map;
	w->qsv = dp_rcu_create("ha_qsbr", 1, errbuf, len);
	if (w->qsv == NULL)
		return -1;
	w->pa = cfg->pa;
	w->has_pa6 = cfg->has_pa6;
	memcpy(w->pa6, cfg->pa6.a8, 16);
	w->n_muxes = cfg->n_muxes;
	memcpy(w->muxes, cfg->muxes, sizeof(w->muxes[0]) * cfg->n_muxes);
	w->n_muxes6 = copy_addrs6(w->muxes6, cfg->muxes6, cfg->n_muxes6);
	w->n_probers = cfg->n_probers;
	memcpy(w->probers, cfg->probers, sizeof(w->probers[0]) * cfg->n_probers);
	w->n_probers6 = copy_addrs6(w->probers6, cfg->probers6, cfg->n_probers6);
	w->has_gateway6 = cfg->has_gateway6;
	memcpy(w->gateway6, cfg->gateway6.a8, 16);
	memcpy(&w->next_hop, cfg->next_hop_mac, 6);
	w->mss_clamp = cfg->mss_clamp;
	w->mss_clamp6 = cfg->mss_clamp6;
	w->busy_poll = cfg->busy_poll;
	w->idle_sleep_us = cfg->idle_sleep_us;
	return 0;
}

static uint64_t
rx_seen(void *arg)
{
	const struct ha_worker *w = ((const struct ha_update *)arg)->w;
	uint64_t seen = DP_RD(w->cnt.uplink_rx);
	uint16_t v;

	for (v = 0; v < w->n_vms; v++)
		seen += DP_RD(w->vm_rx[v]);
	return seen;
}

static int
reload(void *upd)
{
	return ha_reload(upd);
}

/* Ready (systemd): the file's mapping compiled, or in sync with the manager. */
static bool
ready(void *arg, char *buf, size_t len)
{
	struct ha_update *u = arg;
	bool ok;

	pthread_mutex_lock(&u->map_lock);
	/* As the mux's: a last known good table, with no manager, is ready too. */
	ok = !u->cfg->managed || dp_member_synced(&u->member) || u->w->map->version != 0;
	if (ok)
		snprintf(buf, len, "serving version %llu: %u load-balanced endpoints",
			(unsigned long long)u->w->map->version, u->w->map->n_lb);
	pthread_mutex_unlock(&u->map_lock);
	return ok;
}

/* --check: the files the configuration names (dp_check_done()). */
static int
check(const struct dp_daemon *d, struct ha_config *cfg, const char *path,
	const struct lb_member_cfg *mcfg)
{
	const config_setting_t *ports[HA_MAX_PORTS];
	const config_setting_t *vms = config_lookup(&cfg->file, "vms");
	unsigned n = 0, v;

	ports[n++] = config_lookup(&cfg->file, "uplink");
	for (v = 0; vms != NULL && v < cfg->n_vms; v++)
		ports[n++] = config_setting_get_elem(vms, v);
	return dp_check_done(d, path, &cfg->file, mcfg, ports, n);
}

/* What the hello tells the manager: the PAs and the VMs' DIPs (backends' hosts are checked). */
static void
hello_addrs(const struct ha_config *cfg, struct lb_member_cfg *mc)
{
	uint16_t i;

	if (cfg->pa != 0) {
		mc->pas[mc->n_pas].af = LB_AF_INET;
		lb_addr_v4(&mc->pas[mc->n_pas++].a, cfg->pa);
	}
	if (cfg->has_pa6) {
		mc->pas[mc->n_pas].af = LB_AF_INET6;
		mc->pas[mc->n_pas++].a = cfg->pa6;
	}
	for (i = 0; i < cfg->n_vms && mc->n_dips + 2 <= LB_MSG_MAX_DIPS; i++) {
		if (cfg->vms[i].dip != 0) {
			mc->dips[mc->n_dips].af = LB_AF_INET;
			lb_addr_v4(&mc->dips[mc->n_dips++].a, cfg->vms[i].dip);
		}
		if (cfg->vms[i].has_dip6) {
			mc->dips[mc->n_dips].af = LB_AF_INET6;
			mc->dips[mc->n_dips++].a = cfg->vms[i].dip6;
		}
	}
}

int
main(int argc, char **argv)
{
	static struct dp_daemon d = {.prog = "sluice-agent"};
	static struct ha_config cfg;
	static struct ha_update upd;
	static struct ha_worker w;
	struct dp_opts o = {0};
	struct dp_loop loop = {
		.quit = &w.quit, .rx_seen = rx_seen, .reload = reload, .ready = ready, .arg = &upd};
	struct dp_report report = {0};
	struct lb_member_cfg mcfg;
	struct lb_metrics_cfg metrics;
	struct lb_credit_cfg ccfg;
	struct ha_credit *credit = NULL;
	struct lb_cfg_err cerr;
	char errbuf[512];
	unsigned lcore;
	int ret = 1, have_credits;

	lb_log_init("sluice-agent", LB_LOG_INFO);
	if (dp_opts_parse(&o, NULL, argc, argv, usage) != 0)
		return 2;
	d.check = o.check;
	if (ha_config_load(&cfg, o.config, &cerr) != 0)
		return dp_config_error(&d, cerr.msg);
	if (dp_member_cfg_load(&d, &cfg.file, o.config, LB_ROLE_AGENT, &mcfg) != 0 ||
		dp_metrics_cfg_load(&d, &cfg.file, LB_METRICS_PORT_AGENT, &metrics) != 0)
		return 1;
	have_credits = lb_credit_cfg_load(config_root_setting(&cfg.file), o.config, true,
		cfg.managed ? mcfg.id : NULL, &ccfg, &cerr);
	if (have_credits < 0)
		return dp_config_error(&d, cerr.msg);
	if (o.check)
		return check(&d, &cfg, o.config, &mcfg);
	hello_addrs(&cfg, &mcfg);
	if (o.exit_on_eof && eof_inputs(&cfg, &loop.eof_pkts) != 0)
		return 1;
	if (dp_eal_start(&d, cfg.eal_args, cfg.n_eal_args, 1) != 0)
		return 1;
	if (dp_pool_create(&d, "ha_pool", 4096 + 2048 * (cfg.n_vms + 1), errbuf, sizeof(errbuf)) !=
			0 ||
		ports_start(&w, &cfg, d.pool, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	if (cfg.managed)
		LB_INFO("managed by %s as \"%s\": starting empty at version 0; the mapping "
			"comes with the manager's flow table%s",
			mcfg.url, mcfg.id,
			cfg.ftable_ignored ? " (the file's flow_table is ignored)" : "");
	if (worker_setup(&w, &cfg, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	upd.w = &w;
	upd.cfg = &cfg;
	upd.path = o.config;
	pthread_mutex_init(&upd.map_lock, NULL);
	if (ha_telemetry_register(&w) != 0 || ha_update_telemetry_register(&upd) != 0)
		LB_WARN("telemetry commands not registered");

	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE) {
		snprintf(errbuf, sizeof(errbuf), "no worker lcore");
		goto fail;
	}
	if (cfg.managed && dp_member_create(&upd.member, &upd.map_lock, &mcfg, &ha_member_ops, &upd,
				   &cfg.ftable, w.map->version, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	lb_signals_install(&w.quit);
	LB_INFO("%u VMs, %u load-balanced endpoints, %u muxes", cfg.n_vms, w.map->n_lb,
		cfg.n_muxes + cfg.n_muxes6);
	rte_eal_remote_launch(ha_worker_main, &w, lcore);
	if (dp_member_start(&upd.member, errbuf, sizeof(errbuf)) != 0 ||
		dp_metrics_start(&d, &metrics, ha_metrics_render, &upd, &upd.map_lock, errbuf,
			sizeof(errbuf)) != 0) {
		w.quit = true;
		dp_member_destroy(&upd.member);
		rte_eal_mp_wait_lcore();
		goto fail;
	}
	/* Capacity credits: reads the running map and the tracker, asks every mux. */
	if (have_credits && (credit = ha_credit_start(&upd, &ccfg, errbuf, sizeof(errbuf))) == NULL)
		LB_ERR("%s: capped backends get no new connections", errbuf);

	loop.exit_on_eof = o.exit_on_eof;
	/*
	 * The control loop (reloads, readiness, the end of input): as the
	 * mux's, every 100 ms, and every 1 ms only while it waits for the end
	 * of its input. It was 1 ms always: a thousand wake-ups a second of an
	 * idle agent (docs/performance.md, "Where an idle lab's CPU goes").
	 */
	loop.nap_ms = o.exit_on_eof ? 1 : 100;
	dp_run(&loop);
	ha_credit_stop(credit);
	/* No map changes while the lcore drains and the summary reads it. */
	dp_member_destroy(&upd.member);
	rte_eal_mp_wait_lcore();

	dp_report_add(&report, ha_stats_section(&upd));
	dp_report(&report, o.quiet, o.stats_json);
	ret = 0;
	goto out;
fail:
	LB_ERR("%s", errbuf);
	dp_member_destroy(&upd.member); /* its thread was never started */
out:
	/* No scrape from here: it reads the workers' counters and the tracker. */
	dp_metrics_stop(&d);
	/* Frees the fragments still waiting for the rest of their datagram. */
	if (w.frag_tbl != NULL)
		rte_ip_frag_table_destroy(w.frag_tbl);
	ha_track_free(w.track);
	dp_teardown(&d);
	return ret;
}
