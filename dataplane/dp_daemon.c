/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A data-plane daemon's start and stop (dp_daemon.h). Everything here runs
 * on the main thread, before the workers start or after they stopped, but
 * dp_run(), which only reads their counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>

#include "dp_daemon.h"
#include "dp_idle.h"
#include "lb_log.h"
#include "lb_notify.h"

/* Room for the common options, a daemon's own and the end marker. */
#define DP_MAX_LONGOPTS 32

/* Long-only options: values no short option takes. */
enum { DP_OPT_CHECK = 256, DP_OPT_SYSLOG_PREFIX };

int
dp_opts_parse(
	struct dp_opts *o, const struct dp_opt_ext *ext, int argc, char **argv, const char *usage)
{
	static const struct option common[] = {
		{"config", required_argument, NULL, 'c'},
		{"stats-json", required_argument, NULL, 'j'},
		{"exit-on-eof", no_argument, NULL, 'e'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"check", no_argument, NULL, DP_OPT_CHECK},
		{"syslog-prefix", no_argument, NULL, DP_OPT_SYSLOG_PREFIX},
	};
	struct option lo[DP_MAX_LONGOPTS];
	size_t n = 0, i;
	int c;

	for (i = 0; i < RTE_DIM(common); i++)
		lo[n++] = common[i];
	for (i = 0; ext != NULL && ext->longopts[i].name != NULL && n < DP_MAX_LONGOPTS - 1; i++)
		lo[n++] = ext->longopts[i];
	memset(&lo[n], 0, sizeof(lo[n]));
	while ((c = getopt_long(argc, argv, "c:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'j':
			o->stats_json = optarg;
			break;
		case 'e':
			o->exit_on_eof = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case DP_OPT_CHECK:
			o->check = true;
			break;
		case DP_OPT_SYSLOG_PREFIX:
			o->syslog_prefix = true;
			lb_log_set_journal(true);
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case '?':
			fputs(usage, stderr);
			return -1;
		default:
			if (ext == NULL || ext->opt(ext->arg, c, optarg) != 0)
				return -1;
		}
	}
	if (o->config == NULL || optind != argc) {
		fputs(usage, stderr);
		return -1;
	}
	return 0;
}

int
dp_config_error(const struct dp_daemon *d, const char *msg)
{
	if (d->check)
		fprintf(stderr, "%s\n", msg);
	else
		fprintf(stderr, "%s: %s\n", d->prog, msg);
	return 1;
}

int
dp_member_cfg_load(const struct dp_daemon *d, config_t *file, const char *path, enum lb_role role,
	struct lb_member_cfg *mc)
{
	struct lb_cfg_err err;

	if (lb_member_cfg_load(config_root_setting(file), path, mc, &err) < 0) {
		dp_config_error(d, err.msg);
		return -1;
	}
	mc->role = role;
	return 0;
}

int
dp_metrics_cfg_load(
	const struct dp_daemon *d, config_t *file, uint16_t port, struct lb_metrics_cfg *mc)
{
	struct lb_cfg_err err;

	if (lb_metrics_cfg_load(config_root_setting(file), port, mc, &err) != 0) {
		dp_config_error(d, err.msg);
		return -1;
	}
	return 0;
}

static void
render_locked(void *arg, FILE *out)
{
	struct dp_daemon *d = arg;

	pthread_mutex_lock(d->render_lock);
	d->render(d->render_arg, out);
	pthread_mutex_unlock(d->render_lock);
}

int
dp_metrics_start(struct dp_daemon *d, const struct lb_metrics_cfg *mc, lb_metrics_render_fn render,
	void *arg, pthread_mutex_t *lock, char *errbuf, size_t len)
{
	if (!mc->enabled)
		return 0;
	d->render = render;
	d->render_arg = arg;
	d->render_lock = lock;
	d->metrics = lb_metrics_start(mc, render_locked, d, errbuf, len);
	if (d->metrics == NULL)
		return -1;
	LB_INFO("metrics: serving %s", lb_metrics_url(d->metrics));
	return 0;
}

int
dp_eal_start(struct dp_daemon *d, const char *const *args, int n, unsigned workers)
{
	lb_eal_argv_build(&d->ea, d->prog, args, n, workers);
	/* Taps' per-frame signals for the workers only, not this thread (dp_idle.h). */
	dp_rt_signals_block();
	/* EAL's own lines in the journal's format too, and not twice (syslog). */
	if (lb_log_journal())
		lb_eal_log_journal();
	if (rte_eal_init(d->ea.argc, d->ea.argv) < 0) {
		fprintf(stderr, "%s: EAL init failed: %s\n", d->prog, rte_strerror(rte_errno));
		return -1;
	}
	snprintf(d->rundir, sizeof(d->rundir), "%s", rte_eal_get_runtime_dir());
	if (rte_pdump_init() != 0)
		LB_WARN("pdump unavailable: dpdk-dumpcap cannot attach");
	return 0;
}

int
dp_pool_create(struct dp_daemon *d, const char *name, unsigned n, char *errbuf, size_t len)
{
	d->pool = rte_pktmbuf_pool_create(
		name, n, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (d->pool == NULL) {
		snprintf(errbuf, len, "mbuf pool: %s", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

int
dp_member_create(struct dp_member *dm, pthread_mutex_t *lock, const struct lb_member_cfg *cfg,
	const struct lb_member_ops *ops, void *arg, const struct lb_ftable *initial,
	uint64_t version, char *errbuf, size_t len)
{
	struct lb_member *m;

	m = lb_member_create(cfg, ops, arg, initial, version, errbuf, len);
	if (m == NULL)
		return -1;
	pthread_mutex_lock(lock);
	dm->lock = lock;
	dm->connected = lb_member_connected;
	dm->lkg_verdict = lb_member_lkg_verdict;
	dm->synced = lb_member_synced;
	dm->m = m;
	pthread_mutex_unlock(lock);
	return 0;
}

int
dp_member_start(struct dp_member *dm, char *errbuf, size_t len)
{
	int rc;

	if (dm->m == NULL)
		return 0;
	rc = rte_ctrl_thread_create(&dm->thread, "sluice-member", NULL, lb_member_run, dm->m);
	if (rc != 0) {
		snprintf(errbuf, len, "member thread: %s", strerror(-rc));
		return -1;
	}
	dm->running = true;
	return 0;
}

void
dp_member_destroy(struct dp_member *dm)
{
	struct lb_member *m = dm->m;

	if (m == NULL)
		return;
	if (dm->running && !lb_member_join(m, dm->thread, 3000))
		return;
	dm->running = false;
	pthread_mutex_lock(dm->lock);
	dm->m = NULL;
	pthread_mutex_unlock(dm->lock);
	lb_member_destroy(m);
}

/* seen, plus what the ports dropped before a worker saw it, reaches expected. */
static bool
inputs_done(uint64_t seen, uint64_t expected)
{
	struct rte_eth_stats st;
	uint16_t pid;

	RTE_ETH_FOREACH_DEV(pid)
	{
		if (rte_eth_stats_get(pid, &st) == 0)
			seen += st.ierrors + st.imissed + st.rx_nombuf;
	}
	return seen >= expected;
}

static void
nap_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* READY=1 once the daemon says it is ready (at once without a ready()). */
static bool
check_ready(const struct dp_loop *l)
{
	char status[256] = "";

	if (l->ready != NULL && !l->ready(l->arg, status, sizeof(status)))
		return false;
	lb_notify_ready(status[0] != '\0' ? status : NULL);
	return true;
}

void
dp_run(const struct dp_loop *l)
{
	bool ready = false;

	while (!*l->quit) {
		if (l->exit_on_eof && inputs_done(l->rx_seen(l->arg), l->eof_pkts))
			*l->quit = true;
		if (!ready)
			ready = check_ready(l);
		if (lb_reload_requested()) {
			if (ready)
				lb_notify_reloading();
			l->reload(l->arg);
			if (ready)
				check_ready(l);
		}
		if (l->tick != NULL)
			l->tick(l->arg);
		nap_ms(l->nap_ms);
	}
	lb_notify_stopping();
}

void
dp_report_add(struct dp_report *r, struct dp_section s)
{
	if (r->n < DP_SECTIONS)
		r->s[r->n++] = s;
}

void
dp_report(const struct dp_report *r, bool quiet, const char *json_path)
{
	unsigned i;
	FILE *jf;

	for (i = 0; !quiet && i < r->n; i++)
		if (r->s[i].print != NULL)
			r->s[i].print(r->s[i].arg, stdout);
	/* Out now: EAL's cleanup, after this, can hang (docs/reliability.md, Found 9). */
	fflush(stdout);
	if (json_path == NULL)
		return;
	jf = fopen(json_path, "w");
	if (jf == NULL) {
		LB_ERR("cannot write %s", json_path);
		return;
	}
	fprintf(jf, "{");
	for (i = 0; i < r->n; i++)
		if (r->s[i].json != NULL)
			r->s[i].json(r->s[i].arg, jf);
	fprintf(jf, "}\n");
	fclose(jf);
}

void
dp_metrics_stop(struct dp_daemon *d)
{
	lb_metrics_stop(d->metrics);
	d->metrics = NULL;
}

void
dp_teardown(struct dp_daemon *d)
{
	uint16_t pid;

	/* First: no render may read the counters once the workers' memory goes. */
	dp_metrics_stop(d);
	RTE_ETH_FOREACH_DEV(pid)
	{
		rte_eth_dev_stop(pid);
		rte_eth_dev_close(pid);
	}
	rte_eal_cleanup();
	lb_remove_runtime_dir(d->rundir);
}
