/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DIP prober: runs the probes DIP health (mgr_health.h) asks for, on
 * the manager's loop thread. Its sockets (mgr_dip_probe.h) sit in one
 * epoll set whose descriptor the loop polls; health keeps every record's
 * next event in its heap, and the prober takes the records that are due
 * (a probe to start, or one past its deadline), starts their probes, and
 * hands health the verdicts.
 *
 * Probes in flight take one descriptor each: the prober raises
 * RLIMIT_NOFILE to its hard limit and keeps its probes below it, with
 * room for nng, SQLite and the rest. When every socket it allows is busy,
 * the rest start late (and their lateness shows in status).
 */
#ifndef MGR_DIP_PROBER_H
#define MGR_DIP_PROBER_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_prom.h"
#include "mgr_health.h"

struct mgr_dip_prober;

/* The epoll set and the descriptor cap. NULL on failure (errno). */
struct mgr_dip_prober *mgr_dip_prober_new(void);

/*
 * At most n (>= 1) probes in flight: lower than the cap mgr_dip_prober_new()
 * takes from RLIMIT_NOFILE (a test's way to reach it).
 */
void mgr_dip_prober_set_cap(struct mgr_dip_prober *p, uint32_t n);

/* Free it after the mgr_health it probes for (whose records it releases). */
void mgr_dip_prober_free(struct mgr_dip_prober *p);

/* The descriptor for the loop's poll(): readable when a probe has news. */
int mgr_dip_prober_fd(const struct mgr_dip_prober *p);

/*
 * Start the probes of h that are due and end those past their deadline.
 * Returns true when some backend's health changed.
 */
bool mgr_dip_prober_tick(struct mgr_dip_prober *p, struct mgr_health *h, uint64_t now);

/* Handle the probe sockets that are ready. Returns true as mgr_dip_prober_tick. */
bool mgr_dip_prober_io(struct mgr_dip_prober *p, struct mgr_health *h, uint64_t now);

/* Probes in flight now, and the cap (ps_in_flight, ps_max_in_flight of s). */
void mgr_dip_prober_stats(const struct mgr_dip_prober *p, struct mgr_dip_probe_stats *s);

/*
 * How long probes took, from start to verdict, in seconds: those that
 * passed (up) or failed (a timeout counts its whole timeout). For the
 * metrics (sluice_dip_probe_duration_seconds).
 */
const struct lb_hist *mgr_dip_prober_latency(const struct mgr_dip_prober *p, bool up);

/*
 * mgr_health's release callback (ctx: the prober): r's probe, if any, is
 * closed without a verdict and its state freed.
 */
void mgr_dip_prober_release(void *ctx, struct mgr_hrec *r);

#endif /* MGR_DIP_PROBER_H */
