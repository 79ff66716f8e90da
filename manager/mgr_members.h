/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The member protocol: the manager's side of its members (muxes and host
 * agents). It knows each member's connection, its last contact, the
 * counters its STATUS reports and the snapshots sent to it; it answers a
 * HELLO (proof of the id over TLS, WELCOME), passes votes and STATUS to
 * the commit driver, and delivers what the driver's actions send, paced by
 * the transport. A fenced member that does not come back in sync gets its
 * snapshot again, backing off; a connected member silent for MGR_SILENT_MS
 * is reported. Every mux is told whether it may announce its routes
 * (SyncState, core/mgr_notice.h) after its WELCOME and whenever that
 * changes; its STATUS's routes are kept for status.
 *
 * It sits between the transport (below: mgr_members_on_*() are its
 * events, registered by main) and the commit driver (above it in the
 * call graph: events go to mgr_driver_*(); the driver's sends come back
 * through the struct mgr_driver_out main builds from mgr_members_send*()).
 * Members are indexed as the commit state machine numbers them. Only the
 * loop thread uses it.
 */
#ifndef MGR_MEMBERS_H
#define MGR_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_codec.h"
#include "mgr_notice.h"

#define MGR_SILENT_MS 5000     /* a connected member quiet this long is reported */
#define MGR_SNAP_RETRY_MS 5000 /* a fenced member not back in sync gets another snapshot */
#define MGR_SNAP_RETRY_MAX_MS 60000

struct mgr_driver;
struct mgr_members;
struct mgr_transport;
struct mgr_vip_env;

/* What the member protocol tells others (main wires them). */
struct mgr_members_hooks {
	void *ctx;
	/* Member i (id) said hello with its probe addresses (a mux's tunnel addresses; zero: none).
	 */
	void (*hello)(void *ctx, int member, const char *id, const struct lb_addr *probe_addr,
		const struct lb_addr *probe_addr6);
	/* Optional: member i's STATUS (its version, counters, a mux's flows) arrived. */
	void (*status)(void *ctx, int member, const struct lb_msg *status, uint64_t now);
	/* Optional: member i's connection closed. */
	void (*gone)(void *ctx, int member);
	/* Optional: do member i's VIP probes fail (why)? Its notice says so. */
	bool (*probe_failing)(void *ctx, int member, char *why, size_t len);
};

/* NULL when out of memory. */
struct mgr_members *mgr_members_new(
	struct mgr_transport *t, struct mgr_driver *d, const struct mgr_members_hooks *hooks);

void mgr_members_free(struct mgr_members *mb);

/* Drop every queued message: at exit, before the transport closes. */
void mgr_members_flush(struct mgr_members *mb);

/* ---- the transport's events ---- */

void mgr_members_on_msg(
	struct mgr_members *mb, uint32_t pipe, const struct lb_msg *msg, uint64_t now);
void mgr_members_on_malformed(struct mgr_members *mb, uint32_t pipe, const char *why, bool first);
void mgr_members_on_gone(struct mgr_members *mb, uint32_t pipe, uint64_t now);

/* ---- what the driver sends ---- */

/* Queue one encoded message for member i (copied); dropped if it is not connected. */
void mgr_members_send(struct mgr_members *mb, int i, const uint8_t *buf, size_t len, uint64_t now);

/* One message for member i, encoded here (an encoding error is logged). */
void mgr_members_send_msg(struct mgr_members *mb, int i, const struct lb_msg *msg, uint64_t now);

/* The committed version's snapshot to member i (if connected: else at its next hello). */
void mgr_members_send_snapshot(struct mgr_members *mb, int i, uint64_t now);

/* A new version committed: the encoded snapshot of the last one goes. */
void mgr_members_committed(struct mgr_members *mb);

/* ---- time ---- */

/* Hand queued messages to nng as connections take them; resend lost snapshots; report the silent.
 */
void mgr_members_tick(struct mgr_members *mb, uint64_t now);

/* Send every connected mux whose notice changed its new one (mgr_members_tick does too). */
void mgr_members_notify(struct mgr_members *mb, uint64_t now);

/* When mgr_members_tick has something to do (at least now). */
uint64_t mgr_members_next_deadline(const struct mgr_members *mb, uint64_t now);

/* ---- reads ---- */

/* Is member i connected? (const void *: the VIP prober's callback.) */
bool mgr_members_connected(const void *mb, int i);

/* What status shows of member i beside the commit state machine's record. */
struct mgr_peer_view {
	bool connected;
	uint64_t last_contact_ms;
	uint32_t n_counters;
	const struct lb_counter *counters; /* its last STATUS's */
	uint64_t status_ms;		   /* when that came; 0: none yet */
	uint32_t n_prev;		   /* the STATUS before it, for rates */
	const struct lb_counter *prev;
	uint64_t prev_ms;   /* 0: none */
	uint64_t snapshots; /* sent to it */
	uint64_t bad_msgs;
	const struct lb_route_state *route; /* its last STATUS's routes, NULL: none */
	const struct mgr_notice *notice;    /* the last notice sent (nt_valid: one was) */
	uint64_t notice_ms;		    /* when it was sent */
};

void mgr_members_view(const struct mgr_members *mb, int i, struct mgr_peer_view *v);

/* Messages no member was due to send (before a hello, an unknown type). */
uint64_t mgr_members_unexpected(const struct mgr_members *mb);

/*
 * A backend's host against the agents' PAs: the agent whose hello listed
 * dip (of family daf) must have host (of family haf) among its PAs. 0 when
 * it has, or when no agent that said hello lists the DIP (the agent is not
 * known yet: the host is taken as given); -1 with the reason in err ("...
 * has no IPv6 PA (pa6)"). Agents are remembered from their last hello.
 */
int mgr_members_pa_check(const struct mgr_members *mb, uint8_t daf, const struct lb_addr *dip,
	uint8_t haf, const struct lb_addr *host, char *err, size_t len);

/* What the VIP prober reads: the members, who is connected, the committed table. */
void mgr_members_vip_env(const struct mgr_members *mb, struct mgr_vip_env *e);

#endif /* MGR_MEMBERS_H */
