/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Each daemon's Prometheus endpoint: GET /metrics over HTTP, answered in
 * the text format (lb_prom.h) by the daemon's render function.
 *
 * Every daemon serves its own (a standalone mux, a PoP whose manager is
 * down and per-node alerting all work, as per-node exporters do for
 * Katran and GLB); the manager's adds the control plane's view. The
 * server is nng's (libnng's HTTP server: the daemons link nng already):
 * its callbacks run on nng's threads, never on a worker lcore, and one
 * render runs at a time.
 *
 * Configuration, the top-level group of each daemon's file:
 *
 *     metrics = { listen = "127.0.0.1:9540"; };
 *
 * listen is ADDRESS:PORT, the address an IPv4 or a bracketed IPv6 one
 * (no host names: nothing to resolve at start), port 0 for any free one
 * (tests: the log names it). An empty group listens on loopback at the
 * daemon's default port (mux 9540, agent 9541, manager 9542); no group,
 * no endpoint.
 */
#ifndef LB_METRICS_H
#define LB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libconfig.h>

#include "lb_config.h"

#define LB_METRICS_PORT_MUX 9540
#define LB_METRICS_PORT_AGENT 9541
#define LB_METRICS_PORT_MANAGER 9542

struct lb_metrics_cfg {
	bool enabled;
	char listen[64]; /* "127.0.0.1:9540", "[::1]:9540" */
};

/*
 * The "metrics" group of a daemon's file (root) into cfg (disabled when
 * absent). Returns 0, or -LB_ECONFIG with err naming file, line and field.
 */
int lb_metrics_cfg_load(const config_setting_t *root, uint16_t default_port,
	struct lb_metrics_cfg *cfg, struct lb_cfg_err *err);

struct lb_metrics;

/* Write every metric family to out (lb_prom.h); called on nng's thread. */
/*
 * Write the text into out. A render that writes nothing is answered 503
 * (Service Unavailable), one whose writes failed 500: Prometheus then
 * records a failed scrape (up 0), never an empty or cut one.
 */
typedef void (*lb_metrics_render_fn)(void *arg, FILE *out);

/*
 * Listen on cfg->listen and answer GET /metrics with render(arg, ...).
 * Returns the server, or NULL with the reason in err (the address is
 * taken, ...).
 */
struct lb_metrics *lb_metrics_start(const struct lb_metrics_cfg *cfg, lb_metrics_render_fn render,
	void *arg, char *err, size_t len);

/* The URL it serves, the port resolved: "http://127.0.0.1:9540/metrics". */
const char *lb_metrics_url(const struct lb_metrics *m);

/* Stop serving (no render runs once this returns) and free m. NULL is fine. */
void lb_metrics_stop(struct lb_metrics *m);

#endif /* LB_METRICS_H */
