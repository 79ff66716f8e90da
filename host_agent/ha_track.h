/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load a host agent sees on its backends (docs/architecture.md,
 * "Backends that report their load"): every TCP connection to a local
 * DIP:port is tracked from the client's SYN, which the agent decapsulates,
 * to its end, which it sees in either direction since the backend's
 * replies leave through it (DSR). It is established when the client
 * acknowledges the backend's SYN-ACK; answered but never acknowledged
 * (a spoofed SYN) it ends after HA_TRACK_SYN_MS. Per backend, by its
 * stable id:
 *
 *   active      connections open now: a SYN opened it, a FIN or RST in
 *               either direction, or idle expiry, closed it
 *   opened      connections opened (monotonic)
 *   refused     SYNs the backend answered with a RST (monotonic)
 *   unanswered  SYNs the backend did not answer within HA_TRACK_SYN_MS
 *
 * A segment of an established connection the table does not know (one
 * open before the agent started) adds it as active: an agent that
 * restarts counts its connections again as soon as they send.
 *
 * A backend's counters live while the agent's table holds it or any of
 * its connections is open. Once neither (deleted, its last connection
 * closed or expired), the lcore forgets it: its slot serves another
 * backend HA_TRACK_GRACE_MS later, and a backend of that id coming back
 * counts from zero. So the tracker holds HA_TRACK_BACKENDS backends at
 * once, however many come and go over the agent's life.
 *
 * refused + unanswered are the backend's connection failures. The lcore
 * alone writes; the control thread reads the words for STATUS and the
 * summaries (dp_counters.h's DP_RD). Only TCP: a UDP flow has no opening
 * or end an agent can see.
 */
#ifndef HA_TRACK_H
#define HA_TRACK_H

#include <stdint.h>

#include "lb_parse.h"

#define HA_TRACK_ENTRIES 65536	/* connections tracked at once; more are counted untracked */
#define HA_TRACK_BACKENDS 65536 /* backends counted at once (any ids) */
#define HA_TRACK_SYN_MS 3000	/* a SYN this old without a SYN-ACK failed */
#define HA_TRACK_IDLE_MS 300000 /* an established connection this idle ended */
#define HA_TRACK_FIN_MS 10000	/* a closed one's entry is kept this long (late segments) */
#define HA_TRACK_SWEEP 64	/* entries the lcore looks at per loop with traffic, or per nap */
#define HA_TRACK_FORGET_MS 10	/* the lcore looks at some backends' slots this often ... */
#define HA_TRACK_FORGET_SCAN 64 /* ... this many: 65,536 in 10.24 s */
#define HA_TRACK_GRACE_MS 2000	/* a forgotten backend's slot is reused this much later */

struct ha_be_load {
	uint64_t active;
	uint64_t opened;
	uint64_t refused;
	uint64_t unanswered;
};

struct ha_worker;

/*
 * The tracker, counting at most backends backends at once (HA_TRACK_BACKENDS
 * but in tests), or NULL (out of memory: the agent forwards untracked).
 */
struct ha_track *ha_track_create(uint32_t backends);
void ha_track_free(struct ha_track *t);

/*
 * A TCP segment from a client to a local DIP (decapsulated), parsed at p.
 * A SYN to a load-balanced DIP:port opens a connection of its backend.
 */
void ha_track_in(struct ha_worker *w, const uint8_t *p, const struct lb_pkt *pi);
/* A TCP segment a backend sends to its client (the reply path), parsed at p. */
void ha_track_out(struct ha_worker *w, const uint8_t *p, const struct lb_pkt *pi);
/*
 * Expire a slice of the table: unanswered SYNs, idle connections, closed
 * entries; and, every HA_TRACK_FORGET_MS, look at one backend's slot.
 */
void ha_track_sweep(struct ha_worker *w);

/* Backend id's load (all zero before its first SYN; NULL: no tracker). Any thread. */
const struct ha_be_load *ha_track_load(const struct ha_track *t, uint32_t id);
/* Segments of connections the table had no room for. */
uint64_t ha_track_untracked(const struct ha_track *t);
/* Connections counted from a later segment: open before the agent started (ha_track.c). */
uint64_t ha_track_adopted(const struct ha_track *t);
/* Backends forgotten: out of the agent's table, no connection open (their slots freed). */
uint64_t ha_track_forgotten(const struct ha_track *t);

#endif /* HA_TRACK_H */
