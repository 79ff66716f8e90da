/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operator API: the manager's side of sluicectl. One CTL_REQUEST in,
 * one CTL_REPLY out (the transport brings the request, with who asks).
 *
 * A change is checked against the desired table first, with an error that
 * names what is wrong ("backend 10.1.1.13:8080 already in tcp
 * 10.0.0.10:80"); a refused request changes nothing. An accepted change is
 * stored durably (by the commit driver) before the reply, whose version is
 * the one it will commit as; WAIT then tells whether that version
 * committed or aborted, as text, JSON and typed fields (lb_wait).
 *
 * Every reply carries the same answer twice: `body` for people (what
 * sluicectl prints) and `json` for programs (sluicectl --json).
 *
 *   mgr_api.c         dispatch; history, export, WAIT, vip list
 *   mgr_api_change.c  the changes: vip add/set/del, backend add/del/set, apply
 *   mgr_api_status.c  status
 *   mgr_api_stats.c   stats: per service and backend rates over the muxes
 *   mgr_api_view.c    the tables and their health as status and vip list show them
 *
 * It reads every subsystem and changes only through the commit driver.
 * Only the loop thread uses it.
 */
#ifndef MGR_API_H
#define MGR_API_H

#include <stdint.h>

#include "lb_codec.h"

struct mgr_api;
struct mgr_config;
struct mgr_dip_prober;
struct mgr_driver;
struct mgr_guard;
struct mgr_health;
struct mgr_members;
struct mgr_stats;
struct mgr_store;
struct mgr_transport;
struct mgr_vip_probe;

/* What the operator API reads (and, through the driver, changes). */
struct mgr_api_deps {
	const struct mgr_config *cfg;
	struct mgr_driver *driver;
	struct mgr_store *store;
	const struct mgr_health *health;
	const struct mgr_dip_prober *dip;
	const struct mgr_members *members;
	const struct mgr_vip_probe *vip;
	const struct mgr_transport *transport;
	const struct mgr_guard *guard;
	const struct mgr_stats *stats; /* the muxes' flow counters (stats) */
};

/* NULL when out of memory. */
struct mgr_api *mgr_api_new(const struct mgr_api_deps *deps);

void mgr_api_free(struct mgr_api *api);

/*
 * Answer one operator request into rep (its body and json malloc'd).
 * asker: who asks, for the history of the version a change makes.
 */
void mgr_api_handle(struct mgr_api *api, const struct lb_msg *req, const char *asker,
	struct lb_msg *rep, uint64_t now);

#endif /* MGR_API_H */
