/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-mux: wires the modules together. Load the configuration, start
 * EAL, the ports and the first generation, launch the workers (and, when
 * managed, the member of the manager's commit on a control thread), wait
 * for a signal (or for pcap input to run out), then print what happened.
 * With a "bgp" group the route side (mux_route.h) forks its speaker before
 * EAL, announces once the workers run, and turns a signal into withdraw,
 * drain, then quit.
 * The start and stop every data plane shares are dp_daemon.h's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "dp_daemon.h"
#include "lb_log.h"
#include "mux_app.h"
#include "mux_bgp_cfg.h"
#include "mux_credit.h"
#include "mux_credit_chan.h"
#include "mux_gen.h"
#include "mux_route.h"
#include "mux_update.h"

static const char usage[] =
	"usage: sluice-mux -c FILE [options]\n"
	"  -c, --config FILE      mux configuration (libconfig; docs/configuration.md)\n"
	"  --pcap IN:OUT          read IN, write OUT through one net_pcap port, exit at\n"
	"                         the end of IN (implies --exit-on-eof, one worker)\n"
	"  --exit-on-eof          exit once every rx_pcap input has been processed\n"
	"  --stats-json FILE      write the final summary as JSON to FILE\n"
	"  --workers N            override mux.workers\n"
	"  --busy-poll            never nap when idle (benchmarks)\n"
	"  -q, --quiet            no summary on stdout\n" DP_USAGE_COMMON
	"  -h, --help             this text\n";

struct mux_opts {
	struct dp_opts dp;
	const char *pcap_in;
	const char *pcap_out;
	int busy_poll;
	int workers;
};

/* The mux's own options (dp_opt_ext). */
static int
mux_opt(void *arg, int c, char *optarg)
{
	struct mux_opts *o = arg;
	char *colon, *end;

	switch (c) {
	case 'p':
		colon = strrchr(optarg, ':');
		if (colon == NULL || colon == optarg || colon[1] == '\0') {
			fprintf(stderr, "sluice-mux: --pcap wants IN:OUT, got \"%s\"\n", optarg);
			return -1;
		}
		*colon = '\0';
		o->pcap_in = optarg;
		o->pcap_out = colon + 1;
		o->dp.exit_on_eof = true;
		return 0;
	case 'w':
		o->workers = (int)strtol(optarg, &end, 10);
		if (*end != '\0' || o->workers < 1 || o->workers > MUX_MAX_WORKERS) {
			fprintf(stderr, "sluice-mux: --workers wants 1..%d, got \"%s\"\n",
				MUX_MAX_WORKERS, optarg);
			return -1;
		}
		return 0;
	case 'b':
		o->busy_poll = 1;
		return 0;
	}
	return -1;
}

static const struct option mux_longopts[] = {
	{"pcap", required_argument, NULL, 'p'},
	{"workers", required_argument, NULL, 'w'},
	{"busy-poll", no_argument, NULL, 'b'},
	{NULL, 0, NULL, 0},
};

/* Command-line overrides of the file. Returns 0, or -1 after saying why. */
static int
apply_opts(const struct dp_daemon *d, struct mux_app *app, const struct mux_opts *o)
{
	char msg[600];

	if (o->workers)
		app->cfg.workers = (uint16_t)o->workers;
	if (o->busy_poll)
		app->cfg.busy_poll = true;
	if (o->pcap_in != NULL) {
		snprintf(app->cfg.ports[0].name, sizeof(app->cfg.ports[0].name), "pcap");
		snprintf(app->cfg.ports[0].devargs, sizeof(app->cfg.ports[0].devargs),
			"net_pcap_sluice0,rx_pcap=%s,tx_pcap=%s", o->pcap_in, o->pcap_out);
		app->cfg.n_ports = 1;
		if (app->cfg.workers != 1)
			LB_INFO("--pcap uses one worker (one input file, one output file)");
		app->cfg.workers = 1;
	}
	if (app->cfg.n_ports == 0) {
		snprintf(msg, sizeof(msg),
			"%s: ports: no ports configured (add ports = (...) or use --pcap IN:OUT)",
			o->dp.config);
		dp_config_error(d, msg);
		return -1;
	}
	app->n_workers = app->cfg.workers;
	return 0;
}

static uint64_t
rx_seen(void *app)
{
	struct mux_counters t;

	mux_stats_total(app, &t);
	return t.rx_pkts;
}

static int
reload(void *app)
{
	return mux_reload(app);
}

static volatile bool late_quit; /* the signals' flag while the mux tears down */

/*
 * Ready (systemd): forwarding the file's table, in sync with the manager,
 * or, with no manager, forwarding the last known good table (a version a
 * manager committed; not ready, systemd would stop it after its start
 * timeout, again and again for the whole outage).
 */
static bool
ready(void *arg, char *buf, size_t len)
{
	struct mux_app *app = arg;
	bool ok;

	pthread_mutex_lock(&app->gen_lock);
	ok = !app->cfg.managed || dp_member_synced(&app->member) || app->ctx.gen->version != 0;
	if (ok)
		snprintf(buf, len, "forwarding version %" PRIu64 ": %u services, %u backends",
			app->ctx.gen->version, app->ctx.gen->n_services, app->ctx.gen->n_backends);
	pthread_mutex_unlock(&app->gen_lock);
	return ok;
}

/* --check: the files the configuration names (dp_check_done()). */
static int
check(const struct dp_daemon *d, struct mux_app *app, const struct mux_opts *o,
	const struct lb_member_cfg *mcfg)
{
	const config_setting_t *ports[MUX_MAX_PORTS];
	const config_setting_t *list = config_lookup(&app->cfg.file, "ports");
	unsigned n = 0;

	/* --pcap replaces the file's ports */
	if (o->pcap_in == NULL && list != NULL)
		for (; n < app->cfg.n_ports; n++)
			ports[n] = config_setting_get_elem(list, n);
	return dp_check_done(d, o->dp.config, &app->cfg.file, mcfg, ports, n);
}

int
main(int argc, char **argv)
{
	static struct mux_app app;
	static struct dp_daemon d = {.prog = "sluice-mux"};
	struct mux_opts o = {0};
	const struct dp_opt_ext ext = {mux_longopts, mux_opt, &o};
	struct dp_loop loop = {
		.quit = &app.ctx.quit, .rx_seen = rx_seen, .reload = reload, .ready = ready};
	struct dp_report report = {0};
	struct lb_cfg_err cerr;
	struct lb_member_cfg mcfg;
	struct mux_bgp_cfg bcfg;
	struct lb_metrics_cfg metrics;
	struct lb_credit_cfg ccfg;
	struct mux_credit_chan *chan = NULL;
	char errbuf[512];
	uint16_t p;
	int ret = 1, have_bgp, have_credits;

	lb_log_init("sluice-mux", LB_LOG_INFO);
	if (dp_opts_parse(&o.dp, &ext, argc, argv, usage) != 0)
		return 2;
	d.check = o.dp.check;
	if (mux_config_load(&app.cfg, o.dp.config, &cerr) != 0)
		return dp_config_error(&d, cerr.msg);
	if (dp_member_cfg_load(&d, &app.cfg.file, o.dp.config, LB_ROLE_MUX, &mcfg) != 0 ||
		dp_metrics_cfg_load(&d, &app.cfg.file, LB_METRICS_PORT_MUX, &metrics) != 0)
		return 1;
	have_bgp = mux_bgp_cfg_load(
		config_root_setting(&app.cfg.file), app.cfg.tunnel_addr, &bcfg, &cerr);
	if (have_bgp < 0)
		return dp_config_error(&d, cerr.msg);
	have_credits = lb_credit_cfg_load(
		config_root_setting(&app.cfg.file), o.dp.config, false, NULL, &ccfg, &cerr);
	if (have_credits < 0)
		return dp_config_error(&d, cerr.msg);
	/* Without probers nothing answers VIP probes: do not ask to be probed. */
	if (app.cfg.n_probers != 0)
		mcfg.probe_addr = app.cfg.tunnel_addr;
	if (app.cfg.n_probers6 != 0 && app.cfg.has_tunnel6)
		mcfg.probe_addr6 = app.cfg.tunnel_addr6;
	if (apply_opts(&d, &app, &o) != 0)
		return 1;
	if (o.dp.check)
		return check(&d, &app, &o, &mcfg);
	/* Before EAL: the speaker is forked while this process has one thread. */
	if (have_bgp) {
		app.route = mux_route_create(&bcfg, app.cfg.managed, app.cfg.eal_args,
			app.cfg.n_eal_args, errbuf, sizeof(errbuf));
		if (app.route == NULL) {
			fprintf(stderr, "sluice-mux: %s\n", errbuf);
			return 1;
		}
	}

	if (dp_eal_start(&d, app.cfg.eal_args, app.cfg.n_eal_args, app.n_workers) != 0) {
		mux_route_destroy(app.route);
		return 1;
	}
	if (rte_lcore_count() < (unsigned)app.n_workers + 1) {
		snprintf(errbuf, sizeof(errbuf), "%u workers need %u lcores, EAL has %u",
			app.n_workers, app.n_workers + 1, rte_lcore_count());
		goto fail;
	}
	if (dp_pool_create(&d, "mux_pool",
		    (unsigned)(app.cfg.n_ports * app.n_workers *
				       (app.cfg.rx_desc + app.cfg.tx_desc + 2 * DP_TXBUF) +
			       4096),
		    errbuf, sizeof(errbuf)) != 0 ||
		mux_ports_start(
			&app.cfg, d.pool, app.n_workers, app.ports, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	if (app.cfg.managed)
		LB_INFO("managed by %s as \"%s\": starting empty at version 0; forwarding "
			"starts with the manager's flow table%s",
			mcfg.url, mcfg.id,
			app.cfg.ftable_ignored ? " (the file's flow_table is ignored)" : "");
	if (mux_app_start(&app, d.pool, o.dp.exit_on_eof, &loop.eof_pkts, errbuf, sizeof(errbuf)) !=
		0)
		goto fail;
	snprintf(app.member_id, sizeof(app.member_id), "%s", mcfg.id[0] ? mcfg.id : "sluice-mux");
	/* Capacity credits: the lanes before the workers run, the channel before the manager. */
	if (have_credits) {
		app.ctx.credit =
			mux_credit_create(app.n_workers, app.ctx.tsc_hz, (int)rte_socket_id());
		if (app.ctx.credit == NULL) {
			snprintf(errbuf, sizeof(errbuf), "credits: out of memory");
			goto fail;
		}
		if (mux_credit_bind(app.ctx.credit, app.ctx.gen, &app.cfg.ftable, NULL, errbuf,
			    sizeof(errbuf)) != 0 ||
			(chan = mux_credit_chan_start(app.ctx.credit, &ccfg, app.member_id, errbuf,
				 sizeof(errbuf))) == NULL)
			goto fail;
	}
	if (app.cfg.managed &&
		dp_member_create(&app.member, &app.gen_lock, &mcfg, &mux_member_ops, &app,
			&app.cfg.ftable, app.ctx.gen->version, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	/* With BGP, a signal withdraws and drains first (mux_route.h). */
	if (app.route != NULL && mux_route_start(app.route, &app, errbuf, sizeof(errbuf)) != 0)
		goto fail;
	lb_signals_install(app.route != NULL ? mux_route_quit_flag(app.route) : &app.ctx.quit);
	LB_INFO("%u services, %u backends, %u workers, %u ports%s", app.ctx.gen->n_services,
		app.ctx.gen->n_backends, app.n_workers, app.cfg.n_ports,
		o.dp.exit_on_eof ? ", exiting at end of input" : "");
	for (p = 0; p < app.n_workers; p++)
		rte_eal_remote_launch(mux_worker_main, &app.workers[p], app.workers[p].lcore);
	if (dp_member_start(&app.member, errbuf, sizeof(errbuf)) != 0 ||
		dp_metrics_start(&d, &metrics, mux_metrics_render, &app, &app.gen_lock, errbuf,
			sizeof(errbuf)) != 0) {
		app.ctx.quit = true;
		dp_member_destroy(&app.member);
		rte_eal_mp_wait_lcore();
		goto fail;
	}

	loop.exit_on_eof = o.dp.exit_on_eof;
	loop.nap_ms = o.dp.exit_on_eof ? 1 : 100;
	loop.arg = &app;
	dp_run(&loop);
	mux_route_stop(app.route);
	mux_credit_chan_stop(chan);
	chan = NULL;
	/* No generation changes while the workers drain and the summary reads it. */
	dp_member_destroy(&app.member);
	rte_eal_mp_wait_lcore();

	dp_report_add(&report, mux_stats_section(&app));
	if (app.route != NULL)
		dp_report_add(&report, mux_route_section(app.route));
	dp_report(&report, o.dp.quiet, o.dp.stats_json);
	ret = 0;
	goto out;
fail:
	LB_ERR("%s", errbuf);
	mux_credit_chan_stop(chan);
	dp_member_destroy(&app.member); /* its thread was never started */
out:
	/*
	 * The handlers' flag lives in the route: a late SIGTERM (an impatient
	 * supervisor's second one) must not write into it once it is freed.
	 */
	lb_signals_install(&late_quit);
	/* A scrape renders the route and the credits: no more of them first. */
	dp_metrics_stop(&d);
	mux_route_destroy(app.route);
	mux_credit_free(app.ctx.credit); /* the workers and the channel are done with it */
	dp_teardown(&d);
	return ret;
}
