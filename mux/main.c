/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-mux: wires the modules together. Load the configuration, start
 * EAL, the ports and the first generation, launch the workers (and, when
 * managed, the member of the manager's commit on a control thread), wait
 * for a signal (or for pcap input to run out), then print what happened.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
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
#include <rte_pdump.h>
#include <rte_rcu_qsbr.h>

#include "lb_dpdk.h"
#include "lb_err.h"
#include "lb_log.h"
#include "lb_member.h"
#include "mux_app.h"
#include "mux_bgp_cfg.h"
#include "mux_conn.h"
#include "mux_gen.h"
#include "mux_route.h"

struct mux_opts {
	const char *config;
	const char *pcap_in;
	const char *pcap_out;
	const char *stats_json;
	int exit_on_eof;
	int busy_poll;
	int workers;
	int quiet;
};

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: sluice-mux -c FILE [options]\n"
		"  -c, --config FILE      mux configuration (libconfig; docs/configuration.md)\n"
		"  --pcap IN:OUT          read IN, write OUT through one net_pcap port, exit at\n"
		"                         the end of IN (implies --exit-on-eof, one worker)\n"
		"  --exit-on-eof          exit once every rx_pcap input has been processed\n"
		"  --stats-json FILE      write the final summary as JSON to FILE\n"
		"  --workers N            override mux.workers\n"
		"  --busy-poll            never nap when idle (benchmarks)\n"
		"  -q, --quiet            no summary on stdout\n"
		"  -h, --help             this text\n");
}

static int
parse_opts(int argc, char **argv, struct mux_opts *o)
{
	static const struct option lo[] = {
		{"config", required_argument, NULL, 'c'},
		{"pcap", required_argument, NULL, 'p'},
		{"exit-on-eof", no_argument, NULL, 'e'},
		{"stats-json", required_argument, NULL, 'j'},
		{"workers", required_argument, NULL, 'w'},
		{"busy-poll", no_argument, NULL, 'b'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *colon, *end;
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "c:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'p':
			colon = strrchr(optarg, ':');
			if (colon == NULL || colon == optarg || colon[1] == '\0') {
				fprintf(stderr, "sluice-mux: --pcap wants IN:OUT, got \"%s\"\n",
					optarg);
				return -1;
			}
			*colon = '\0';
			o->pcap_in = optarg;
			o->pcap_out = colon + 1;
			o->exit_on_eof = 1;
			break;
		case 'e':
			o->exit_on_eof = 1;
			break;
		case 'j':
			o->stats_json = optarg;
			break;
		case 'w':
			o->workers = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || o->workers < 1 || o->workers > MUX_MAX_WORKERS) {
				fprintf(stderr, "sluice-mux: --workers wants 1..%d, got \"%s\"\n",
					MUX_MAX_WORKERS, optarg);
				return -1;
			}
			break;
		case 'b':
			o->busy_poll = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (o->config == NULL || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

static int
workers_create(struct mux_app *app)
{
	const struct mux_gen *g = app->ctx.gen;
	const uint32_t timeout[3] = {
		app->cfg.tcp_timeout, app->cfg.tcp_fin_timeout, app->cfg.udp_timeout};
	unsigned lcore;
	uint16_t w = 0, p;
	char name[32];

	app->workers = rte_zmalloc(
		"mux_workers", sizeof(*app->workers) * app->n_workers, RTE_CACHE_LINE_SIZE);
	if (app->workers == NULL)
		return -LB_ENOMEM;
	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		struct mux_worker *wk = &app->workers[w];
		int socket = (int)rte_lcore_to_socket_id(lcore);

		if (w == app->n_workers)
			break;
		wk->ctx = &app->ctx;
		wk->lcore = lcore;
		wk->idx = w;
		wk->ip_id = (uint16_t)(w << 12);
		for (p = 0; p < app->cfg.n_ports; p++)
			if (w < app->ports[p].nb_rxq) {
				wk->rxq[wk->n_rxq].port = app->ports[p].id;
				wk->rxq[wk->n_rxq++].queue = w;
			}
		snprintf(name, sizeof(name), "conn_%u", w);
		wk->conn = mux_conn_create(name, app->cfg.conn_entries, socket, timeout, &g->seed);
		/* Indexed by stable id: room for every id a reload may hand out. */
		wk->svc_cnt = rte_zmalloc_socket("svc_cnt", sizeof(*wk->svc_cnt) * g->cap_services,
			RTE_CACHE_LINE_SIZE, socket);
		wk->be_cnt = rte_zmalloc_socket("be_cnt", sizeof(*wk->be_cnt) * g->cap_backends,
			RTE_CACHE_LINE_SIZE, socket);
		if (wk->conn == NULL || wk->svc_cnt == NULL || wk->be_cnt == NULL)
			return -LB_ENOMEM;
		w++;
	}
	return w == app->n_workers ? 0 : -LB_EINVAL;
}

/* Every rx_pcap input read to the end (or counted as a port error). */
static int
inputs_done(const struct mux_app *app, uint64_t expected)
{
	struct mux_counters t;
	struct rte_eth_stats st;
	uint64_t seen;
	uint16_t p;

	mux_stats_total(app, &t);
	seen = t.rx_pkts;
	for (p = 0; p < app->cfg.n_ports; p++)
		if (rte_eth_stats_get(app->ports[p].id, &st) == 0)
			seen += st.ierrors + st.imissed + st.rx_nombuf;
	return seen >= expected;
}

/*
 * Managed mode: create the member on the running table (empty, version 0).
 * It dials the manager in the background; its thread starts later, after
 * the workers. Returns 0, or -1 with a message in errbuf.
 */
static int
member_create(struct mux_app *app, const struct lb_member_cfg *mc, char *errbuf, size_t len)
{
	struct lb_member *m;

	m = lb_member_create(
		mc, &mux_member_ops, app, &app->cfg.ftable, app->ctx.gen->version, errbuf, len);
	if (m == NULL)
		return -1;
	pthread_mutex_lock(&app->gen_lock);
	app->member_connected = lb_member_connected;
	app->member = m;
	pthread_mutex_unlock(&app->gen_lock);
	return 0;
}

/* Stop the member's thread and free the member (telemetry forgets it first). */
static void
member_destroy(struct mux_app *app, pthread_t *thread)
{
	struct lb_member *m = app->member;

	if (m == NULL)
		return;
	if (thread != NULL && !lb_member_join(m, *thread, 3000))
		return;
	pthread_mutex_lock(&app->gen_lock);
	app->member = NULL;
	pthread_mutex_unlock(&app->gen_lock);
	lb_member_destroy(m);
}

static void
nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int
main(int argc, char **argv)
{
	static struct mux_app app;
	struct mux_opts o;
	struct lb_cfg_err cerr;
	struct lb_eal_argv ea;
	struct lb_member_cfg mcfg;
	struct mux_bgp_cfg bcfg;
	pthread_t member_thread;
	char errbuf[512], rundir[PATH_MAX];
	uint64_t expected = 0;
	size_t qsz;
	uint16_t p;
	int rc, ret = 1, have_bgp;
	FILE *jf;

	lb_log_init("sluice-mux", LB_LOG_INFO);
	if (parse_opts(argc, argv, &o) != 0)
		return 2;
	if (mux_config_load(&app.cfg, o.config, &cerr) != 0) {
		fprintf(stderr, "sluice-mux: %s\n", cerr.msg);
		return 1;
	}
	rc = lb_member_cfg_load(config_root_setting(&app.cfg.file), o.config, &mcfg, &cerr);
	if (rc < 0) {
		fprintf(stderr, "sluice-mux: %s\n", cerr.msg);
		return 1;
	}
	mcfg.role = LB_ROLE_MUX;
	have_bgp = mux_bgp_cfg_load(
		config_root_setting(&app.cfg.file), app.cfg.tunnel_addr, &bcfg, &cerr);
	if (have_bgp < 0) {
		fprintf(stderr, "sluice-mux: %s\n", cerr.msg);
		return 1;
	}
	/* Without probers nothing answers VIP probes: do not ask to be probed. */
	if (app.cfg.n_probers != 0)
		mcfg.probe_addr = app.cfg.tunnel_addr;
	if (o.workers)
		app.cfg.workers = (uint16_t)o.workers;
	if (o.busy_poll)
		app.cfg.busy_poll = true;
	if (o.pcap_in != NULL) {
		snprintf(app.cfg.ports[0].name, sizeof(app.cfg.ports[0].name), "pcap");
		snprintf(app.cfg.ports[0].devargs, sizeof(app.cfg.ports[0].devargs),
			"net_pcap_sluice0,rx_pcap=%s,tx_pcap=%s", o.pcap_in, o.pcap_out);
		app.cfg.n_ports = 1;
		if (app.cfg.workers != 1)
			LB_INFO("--pcap uses one worker (one input file, one output file)");
		app.cfg.workers = 1;
	}
	if (app.cfg.n_ports == 0) {
		fprintf(stderr,
			"sluice-mux: %s: no ports configured (add ports = (...) or use "
			"--pcap IN:OUT)\n",
			o.config);
		return 1;
	}
	app.n_workers = app.cfg.workers;
	/* Before EAL: the speaker is forked while this process has one thread. */
	if (have_bgp) {
		app.route = mux_route_create(&bcfg, app.cfg.managed, app.cfg.eal_args,
			app.cfg.n_eal_args, errbuf, sizeof(errbuf));
		if (app.route == NULL) {
			fprintf(stderr, "sluice-mux: %s\n", errbuf);
			return 1;
		}
	}

	lb_eal_argv_build(&ea, "sluice-mux", app.cfg.eal_args, app.cfg.n_eal_args, app.n_workers);
	if (rte_eal_init(ea.argc, ea.argv) < 0) {
		fprintf(stderr, "sluice-mux: EAL init failed: %s\n", rte_strerror(rte_errno));
		mux_route_destroy(app.route);
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	if (rte_lcore_count() < (unsigned)app.n_workers + 1) {
		snprintf(errbuf, sizeof(errbuf), "%u workers need %u lcores, EAL has %u",
			app.n_workers, app.n_workers + 1, rte_lcore_count());
		goto fail;
	}
	if (rte_pdump_init() != 0)
		LB_WARN("pdump unavailable: dpdk-dumpcap cannot attach");

	app.pool = rte_pktmbuf_pool_create("mux_pool",
		(unsigned)(app.cfg.n_ports * app.n_workers *
				   (app.cfg.rx_desc + app.cfg.tx_desc + 2 * MUX_TXBUF) +
			   4096),
		256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (app.pool == NULL) {
		snprintf(errbuf, sizeof(errbuf), "mbuf pool: %s", rte_strerror(rte_errno));
		goto fail;
	}
	rc = mux_ports_start(&app.cfg, app.pool, app.n_workers, app.ports, errbuf, sizeof(errbuf));
	if (rc != 0)
		goto fail;

	/*
	 * Reloads may grow the table to twice its size, or to 65,536 backends.
	 * A managed mux starts empty at version 0: the file's table, if any,
	 * was dropped, and nothing is forwarded until the manager's arrives.
	 */
	if (app.cfg.managed)
		LB_INFO("managed by %s as \"%s\": starting empty at version 0; forwarding "
			"starts with the manager's flow table%s",
			mcfg.url, mcfg.id,
			app.cfg.ftable_ignored ? " (the file's flow_table is ignored)" : "");
	app.seed_fixed = !app.cfg.managed;
	app.ctx.gen = mux_gen_build(&app.cfg.ftable, app.cfg.managed ? 0 : 1,
		app.cfg.cap_backends != 0
			? app.cfg.cap_backends
			: RTE_MAX(65536u, 2 * lb_ftable_backend_count(&app.cfg.ftable)),
		app.cfg.cap_services != 0 ? app.cfg.cap_services
					  : RTE_MAX(8192u, 2 * app.cfg.ftable.n_services),
		(int)rte_socket_id(), &cerr);
	if (app.ctx.gen == NULL) {
		snprintf(errbuf, sizeof(errbuf), "%s", cerr.msg);
		goto fail;
	}
	qsz = rte_rcu_qsbr_get_memsize(app.n_workers);
	app.ctx.qsv = rte_zmalloc("mux_qsbr", qsz, RTE_CACHE_LINE_SIZE);
	if (app.ctx.qsv == NULL || rte_rcu_qsbr_init(app.ctx.qsv, app.n_workers) != 0) {
		snprintf(errbuf, sizeof(errbuf), "RCU state: out of memory");
		goto fail;
	}
	app.ctx.tunnel_addr = app.cfg.tunnel_addr;
	memcpy(&app.ctx.next_hop, app.cfg.next_hop_mac, 6);
	for (p = 0; p < app.cfg.n_ports; p++) {
		app.ctx.port_mac[app.ports[p].id] = app.ports[p].mac;
		if (app.ports[p].id + 1 > app.ctx.n_ports)
			app.ctx.n_ports = (uint16_t)(app.ports[p].id + 1);
		if (o.exit_on_eof && !app.ports[p].eof_capable) {
			snprintf(errbuf, sizeof(errbuf),
				"--exit-on-eof: port %s does not read only rx_pcap files",
				app.cfg.ports[p].name);
			goto fail;
		}
		expected += app.ports[p].eof_pkts;
	}
	app.ctx.mtu = app.cfg.mtu;
	app.ctx.tunnel_ttl = app.cfg.tunnel_ttl;
	app.ctx.arp_for_vips = app.cfg.arp_for_vips;
	app.ctx.n_probers = app.cfg.n_probers;
	memcpy(app.ctx.probers, app.cfg.probers, sizeof(app.ctx.probers));
	app.ctx.busy_poll = app.cfg.busy_poll;
	app.ctx.idle_sleep_us = app.cfg.idle_sleep_us;
	app.ctx.tsc_hz = rte_get_tsc_hz();
	app.ctx.tsc0 = rte_rdtsc();
	if (workers_create(&app) != 0) {
		snprintf(errbuf, sizeof(errbuf),
			"workers: out of memory for connection tables "
			"(lower mux.conn_table.entries or raise EAL -m)");
		goto fail;
	}
	if (mux_telemetry_register(&app) != 0)
		LB_WARN("telemetry commands not registered");

	pthread_mutex_init(&app.gen_lock, NULL);
	app.be_freed_at = calloc(app.ctx.gen->cap_backends, sizeof(*app.be_freed_at));
	app.be_base = calloc(app.ctx.gen->cap_backends, sizeof(*app.be_base));
	app.svc_base = calloc(app.ctx.gen->cap_services, sizeof(*app.svc_base));
	if (app.cfg.managed && member_create(&app, &mcfg, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	/* With BGP, a signal withdraws and drains first (mux_route.h). */
	if (app.route != NULL && mux_route_start(app.route, &app, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	lb_signals_install(app.route != NULL ? mux_route_quit_flag(app.route) : &app.ctx.quit);
	LB_INFO("%u services, %u backends, %u workers, %u ports%s", app.ctx.gen->n_services,
		app.ctx.gen->n_backends, app.n_workers, app.cfg.n_ports,
		o.exit_on_eof ? ", exiting at end of input" : "");
	for (p = 0; p < app.n_workers; p++)
		rte_eal_remote_launch(mux_worker_main, &app.workers[p], app.workers[p].lcore);
	/* A control thread, not a worker lcore: it blocks on the network. */
	if (app.member != NULL) {
		rc = rte_ctrl_thread_create(
			&member_thread, "sluice-member", NULL, lb_member_run, app.member);
		if (rc != 0) {
			snprintf(errbuf, sizeof(errbuf), "member thread: %s", strerror(-rc));
			app.ctx.quit = true;
			rte_eal_mp_wait_lcore();
			goto fail;
		}
	}

	while (!app.ctx.quit) {
		if (o.exit_on_eof && inputs_done(&app, expected))
			app.ctx.quit = true;
		if (lb_reload_requested()) {
			mux_reload(&app);
		}
		nap_ms(o.exit_on_eof ? 1 : 100);
	}
	mux_route_stop(app.route);
	/* No generation changes while the workers drain and the summary reads it. */
	member_destroy(&app, &member_thread);
	rte_eal_mp_wait_lcore();

	if (!o.quiet)
		mux_stats_print(&app, stdout);
	if (o.stats_json != NULL) {
		jf = fopen(o.stats_json, "w");
		if (jf == NULL) {
			LB_ERR("cannot write %s", o.stats_json);
		} else {
			mux_stats_json(&app, jf);
			fclose(jf);
		}
	}
	ret = 0;
	goto out;
fail:
	LB_ERR("%s", errbuf);
	member_destroy(&app, NULL); /* its thread was never started */
out:
	mux_route_destroy(app.route);
	mux_ports_stop(app.ports, app.cfg.n_ports);
	rte_eal_cleanup();
	lb_remove_runtime_dir(rundir);
	return ret;
}
