/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The start and stop of a data-plane daemon, the same for sluice-mux and
 * sluice-agent; each main.c only wires its own modules between them:
 *
 *   dp_opts_parse()      the options every data plane takes, and its own
 *   dp_member_cfg_load() the configuration's optional "manager" group
 *   dp_metrics_cfg_load() ... and "metrics" group
 *   dp_check_done()      --check: the file is good or not, and exit
 *   dp_eal_start()       EAL (lcore map, file prefix: lb_dpdk.h), pdump
 *   dp_pool_create()     the mbuf pool
 *     ... ports, tables, workers: the daemon's ...
 *   dp_member_create()   managed mode: the member on the running table
 *   dp_member_start()    its control thread, after the workers run
 *   dp_metrics_start()   the /metrics endpoint (nng's HTTP thread)
 *   dp_run()             the main thread until quit: end of input
 *                        (--exit-on-eof), SIGHUP reloads, a per-pass hook,
 *                        systemd's readiness (lb_notify.h)
 *   dp_member_destroy()  stop, join and free the member
 *   dp_report()          the summary and the JSON summary, by sections
 *   dp_metrics_stop()    the endpoint stopped (before what it reads is freed)
 *   dp_teardown()        the endpoint stopped, every port stopped and
 *                        closed, EAL cleaned up, the runtime folder removed
 *
 * Only the executables link this (with the member library and nng); the
 * daemons' libraries, the benchmark and the fuzzers use dp_tx.h,
 * dp_counters.h and dp_member.h alone.
 */
#ifndef DP_DAEMON_H
#define DP_DAEMON_H

#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

#include "dp_counters.h"
#include "dp_member.h"
#include "lb_config.h"
#include "lb_dpdk.h"
#include "lb_member.h"
#include "lb_metrics.h"

struct rte_mempool;

struct dp_daemon {
	const char *prog; /* "sluice-mux": messages, argv[0] and file prefix for EAL */
	bool check;	  /* --check: errors as FILE:LINE: field: message alone */
	struct lb_eal_argv ea;
	char rundir[PATH_MAX]; /* EAL's runtime folder, removed by dp_teardown() */
	struct rte_mempool *pool;
	struct lb_metrics *metrics; /* the /metrics endpoint, or NULL */
	/* what it renders, and the lock of the tables the render reads */
	lb_metrics_render_fn render;
	void *render_arg;
	pthread_mutex_t *render_lock;
};

/* The options every data plane takes. */
struct dp_opts {
	const char *config;	/* -c, --config FILE */
	const char *stats_json; /* --stats-json FILE */
	bool exit_on_eof;	/* --exit-on-eof */
	bool quiet;		/* -q, --quiet */
	bool check;		/* --check: validate the configuration, start nothing */
	bool syslog_prefix;	/* --syslog-prefix: journald's log format (lb_log.h) */
};

/* The common options' usage lines, for a daemon's usage text. */
#define DP_USAGE_COMMON                                                                            \
	"  --check                validate the configuration (and the files it names),\n"          \
	"                         print FILE: ok or FILE:LINE: field: message, exit 0 or 1\n"      \
	"  --syslog-prefix        log lines as <priority>message (journald; automatic\n"           \
	"                         when stderr is the journal)\n"

/*
 * A daemon's own long options ({NULL} ends them; their values must not
 * be 'c', 'j', 'e', 'q', 'h' or 256 and above). opt() takes each, with
 * its value and optarg, and returns 0, or -1 when it refuses it (after
 * saying why).
 */
struct dp_opt_ext {
	const struct option *longopts;
	int (*opt)(void *arg, int c, char *optarg);
	void *arg;
};

/*
 * Parse argv into o (zeroed by the caller) and ext. -h prints usage on
 * stdout and exits 0. Returns 0, or -1: an option refused, or (usage on
 * stderr) one unknown, an operand, no -c.
 */
int dp_opts_parse(
	struct dp_opts *o, const struct dp_opt_ext *ext, int argc, char **argv, const char *usage);

/*
 * A configuration error: "prog: msg" on stderr, or msg alone with
 * --check (FILE:LINE: field: message). Returns 1, the exit status.
 */
int dp_config_error(const struct dp_daemon *d, const char *msg);

/*
 * The "manager" group of the loaded configuration file (path) into mc,
 * for a member of role. Returns 0 (mc->url empty: no group), or -1 after
 * dp_config_error().
 */
int dp_member_cfg_load(const struct dp_daemon *d, config_t *file, const char *path,
	enum lb_role role, struct lb_member_cfg *mc);

/*
 * The "metrics" group into mc (lb_metrics.h; port: the daemon's default).
 * Returns 0 (mc->enabled false: no group), or -1 after dp_config_error().
 */
int dp_metrics_cfg_load(
	const struct dp_daemon *d, config_t *file, uint16_t port, struct lb_metrics_cfg *mc);

/*
 * --check, what loading the file does not see: the manager group's CA,
 * certificate and key parse (and the key is the certificate's), and each
 * port's rx_pcap= inputs can be read (ports: the settings holding a
 * "devargs", n of them). Nothing is bound or dialled and EAL is not
 * started. Prints "path: ok" on stdout, or the first error as
 * FILE:LINE: field: message on stderr. Returns the exit status, 0 or 1.
 */
int dp_check_done(const struct dp_daemon *d, const char *path, config_t *file,
	const struct lb_member_cfg *mc, const config_setting_t *const *ports, unsigned n);

/*
 * rte_eal_init() with the configuration's EAL arguments, the main lcore
 * and workers worker lcores; pdump, so dpdk-dumpcap can attach. Returns 0,
 * or -1 after printing "prog: EAL init failed: reason" (nothing to undo).
 */
int dp_eal_start(struct dp_daemon *d, const char *const *args, int n, unsigned workers);

/* d->pool: n mbufs of the default size. Returns 0, or -1 with errbuf. */
int dp_pool_create(struct dp_daemon *d, const char *name, unsigned n, char *errbuf, size_t len);

/*
 * Managed mode: create the member on the running table (initial, at
 * version), with the daemon's ops and arg; it dials the manager in the
 * background. dm is set under lock, the lock telemetry takes to read it.
 * Returns 0, or -1 with errbuf.
 */
int dp_member_create(struct dp_member *dm, pthread_mutex_t *lock, const struct lb_member_cfg *cfg,
	const struct lb_member_ops *ops, void *arg, const struct lb_ftable *initial,
	uint64_t version, char *errbuf, size_t len);

/*
 * Start the member's thread: a control thread, not a worker lcore (it
 * blocks on the network). Nothing to do when standalone. Returns 0, or -1
 * with errbuf.
 */
int dp_member_start(struct dp_member *dm, char *errbuf, size_t len);

/*
 * Stop the member's thread (if it runs) and free the member; telemetry
 * forgets it first. A thread stuck past 3 s is left alone, member and all.
 */
void dp_member_destroy(struct dp_member *dm);

/*
 * Serve GET /metrics with render(arg) if mc is enabled, holding lock (the
 * daemon's lock on the tables the render reads: it runs on nng's thread);
 * the URL is logged. Returns 0, or -1 with errbuf (the address is taken ...).
 */
int dp_metrics_start(struct dp_daemon *d, const struct lb_metrics_cfg *mc,
	lb_metrics_render_fn render, void *arg, pthread_mutex_t *lock, char *errbuf, size_t len);

/* What the main thread watches while the workers run. */
struct dp_loop {
	volatile bool *quit; /* the workers' flag: the loop ends once it is set */
	bool exit_on_eof;    /* set quit once eof_pkts are accounted for ... */
	uint64_t eof_pkts;   /* ... the packets of every rx_pcap input */
	unsigned nap_ms;     /* between passes */
	/* Packets the workers took in (exit_on_eof only). */
	uint64_t (*rx_seen)(void *arg);
	/* SIGHUP: re-read the configuration file. */
	int (*reload)(void *arg);
	/* Optional: once per pass, after the checks above. */
	void (*tick)(void *arg);
	/*
	 * Optional: whether the daemon does its job yet (a managed one: in
	 * sync with the manager), with a status line for systemd in buf.
	 * NULL: ready from the start.
	 */
	bool (*ready)(void *arg, char *buf, size_t len);
	void *arg;
};

/*
 * Run the main thread's loop until *l->quit. With exit_on_eof it sets
 * quit once rx_seen(), plus what the ports refused before the workers saw
 * it (errors, misses, no mbuf), reaches eof_pkts. Tells systemd READY=1
 * once ready() says so, RELOADING=1 and READY=1 around each reload after
 * that, STOPPING=1 at the end (lb_notify.h).
 */
void dp_run(const struct dp_loop *l);

#define DP_SECTIONS 8

/* What the daemon prints and writes when it stops (dp_section). */
struct dp_report {
	unsigned n;
	struct dp_section s[DP_SECTIONS];
};

/* Append a section (the daemon's counters first). */
void dp_report_add(struct dp_report *r, struct dp_section s);

/*
 * Every section's summary on stdout (unless quiet), and the JSON summary,
 * one object, into json_path (if set; a file that cannot be written is
 * logged).
 */
void dp_report(const struct dp_report *r, bool quiet, const char *json_path);

/*
 * Stop the metrics endpoint: once it returns, no render runs or will. A
 * daemon calls it before it frees what its render reads (the mux's route
 * and credits, the agent's tracker); dp_teardown() does it in any case.
 */
void dp_metrics_stop(struct dp_daemon *d);

/*
 * Stop the metrics endpoint, stop and close every port, clean EAL up,
 * remove the runtime folder.
 */
void dp_teardown(struct dp_daemon *d);

#endif /* DP_DAEMON_H */
