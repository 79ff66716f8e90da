/* SPDX-License-Identifier: BSD-3-Clause */
/* Inside the operator API: what its files share (mgr_api.h lists them). */
#ifndef MGR_API_INT_H
#define MGR_API_INT_H

#include "mgr_api.h"
#include "mgr_driver.h"
#include "mgr_text.h"

struct mgr_peer_view;

struct mgr_api {
	struct mgr_api_deps deps; /* what it reads, and the driver it changes through */
};

/* One request being answered. */
struct mgr_api_req {
	const struct lb_msg *req;
	const char *asker; /* who asks, for history */
	struct lb_msg *rep;
	uint64_t now;
	struct mgr_driver_view v; /* the driver as the request found it */
};

/* rep says no, and why. */
void mgr_api_refuse(struct lb_msg *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* rep says yes with this text and JSON (taken over). */
void mgr_api_reply(struct lb_msg *rep, struct mgr_buf *body, struct mgr_buf *json);

/* now - then, 0 for a time not set or to come. */
uint64_t mgr_api_age(uint64_t now, uint64_t then);

/*
 * Is member m of cm a `role` that reports: connected, with a STATUS come?
 * Its view in p when it is.
 */
bool mgr_api_reporting(const struct mgr_api *api, const struct mgr_commit *cm, uint32_t m,
	enum lb_role role, struct mgr_peer_view *p);

/* ---- the requests (mgr_api_change.c, mgr_api_status.c) ---- */

void mgr_api_status(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_vip_add(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_vip_set(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_vip_del(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_backend_add(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_backend_del(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_backend_set(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_apply(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_stats(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_mux_drain(struct mgr_api *api, const struct mgr_api_req *q); /* and undrain */

/* ---- admission rules (mgr_api_limit.c) ---- */

void mgr_api_limit_set(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_limit_del(struct mgr_api *api, const struct mgr_api_req *q);
void mgr_api_limit_list(struct mgr_api *api, const struct mgr_api_req *q);
/* mgr_api_load.c */
void mgr_api_backend_list(struct mgr_api *api, const struct mgr_api_req *q);

/* mgr_api_top.c */
void mgr_api_top(struct mgr_api *api, const struct mgr_api_req *q);

/* For the other request files: commit next (taken over; pools stay) as a change named what. */
void mgr_api_commit_change(
	struct mgr_api *api, const struct mgr_api_req *q, struct lb_ftable *next, const char *what);

/* Index in t of the service the request names, or -1 with rep refused. */
int mgr_api_find_svc(const struct lb_ftable *t, const struct lb_msg *req, struct lb_msg *rep);

/* ---- views (mgr_api_view.c) ---- */

/* vip list: the committed table with each backend's health, and what comes next. */
void mgr_api_vip_view(struct mgr_api *api, const struct mgr_driver_view *v,
	const struct lb_svc_key *only, struct mgr_buf *b, struct mgr_buf *j, uint64_t now);

/* status: the probes and the pools that fail open ("FAIL-OPEN ..."). */
void mgr_api_health_view(struct mgr_api *api, const struct mgr_driver_view *v, struct mgr_buf *b,
	struct mgr_buf *j, uint64_t now);

/* config export: the desired table and its pools as a services file. 0 or -1. */
int mgr_api_export_text(const struct mgr_driver_view *v, char **text);

#endif /* MGR_API_INT_H */
