/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's Prometheus endpoint (GET /metrics, lb_metrics.h): the
 * control plane's view, which no data plane has. Per member its applied
 * version, connected, in sync, fenced, and the flow-table sync delay (the
 * time from the manager recording a commit to the member's STATUS
 * reporting that version: a histogram, Ananta's first indicator); per
 * backend its health (up or down); how long DIP probes take; VIP probes
 * per mux; and each mux's share of each VIP's new connections against
 * its expected share (Ananta's hash deviation: the second), from the flow
 * counters the muxes' STATUS carry (mgr_stats.h).
 *
 * The manager's subsystems belong to its loop thread, and nng serves
 * HTTP on its own threads: the loop renders the text into a buffer and a
 * scrape copies that buffer under a mutex. A scrape that finds the text
 * older than MGR_METRICS_FRESH_MS wakes the loop (an eventfd it polls:
 * mgr_metrics_fd()) and waits, at most MGR_METRICS_WAIT_MS, for the next
 * render, so what it gets is the state of a few milliseconds ago; several
 * scrapers at once share one render. A loop that renders nothing in that
 * time is stuck (a store call, say): the scrape fails with 503 rather than
 * serve a text from before. It reads the subsystems like the operator API
 * and changes nothing.
 */
#ifndef MGR_METRICS_H
#define MGR_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "lb_metrics.h"

#define MGR_METRICS_FRESH_MS 100
#define MGR_METRICS_WAIT_MS 2000
#define MGR_METRICS_COMMITS 1024 /* commit times kept for the sync delay */

struct mgr_config;
struct mgr_dip_prober;
struct mgr_driver;
struct mgr_health;
struct mgr_members;
struct mgr_metrics;
struct mgr_stats;
struct mgr_vip_probe;

/* What the metrics read. */
struct mgr_metrics_deps {
	const struct mgr_driver *driver;
	const struct mgr_health *health;
	const struct mgr_dip_prober *dip;
	const struct mgr_members *members;
	const struct mgr_vip_probe *vip;
	const struct mgr_stats *stats;
};

/*
 * Serve cfg's endpoint (nothing when it is not enabled; the URL is
 * logged). NULL with err: out of memory, or the address is taken.
 */
struct mgr_metrics *mgr_metrics_new(const struct mgr_metrics_deps *deps,
	const struct lb_metrics_cfg *cfg, uint64_t now, char *err, size_t len);

/* Stop serving and free it (NULL is fine). */
void mgr_metrics_free(struct mgr_metrics *mt);

/* Version `version` was recorded committed at now. */
void mgr_metrics_committed(struct mgr_metrics *mt, uint64_t version, uint64_t now);

/* Member i's STATUS says it runs `version`, at now. */
void mgr_metrics_status(struct mgr_metrics *mt, int member, uint64_t version, uint64_t now);

/* Member i's connection closed: its next STATUS starts its count afresh. */
void mgr_metrics_gone(struct mgr_metrics *mt, int member);

/* The descriptor the loop polls: readable when a scrape waits for a render; -1: none. */
int mgr_metrics_fd(const struct mgr_metrics *mt);

/* Render the text for the scrapes waiting, if any. */
void mgr_metrics_tick(struct mgr_metrics *mt, uint64_t now);

/* The text as rendered now, whatever was due (tests; malloc'd). */
char *mgr_metrics_text(struct mgr_metrics *mt, uint64_t now);

#endif /* MGR_METRICS_H */
