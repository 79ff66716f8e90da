/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capacity credits, the agent's arithmetic (docs/architecture.md,
 * "Capacity credits"): how many new connections each mux may send to each
 * capped backend of this host, without I/O, so that tests feed it events
 * and read its grants. ha_credit.c does the talking.
 *
 * The invariant it keeps, per backend:
 *
 *   active + sum over muxes of outstanding(mux) <= max_connections
 *
 * where active is what the tracker counts now (ha_track.h) and
 * outstanding(mux) is an upper bound of the credits that mux may still
 * spend: while the mux answers (a report within 2 x ttl), its own word
 * in its last report ("live": what its grants hold, less what was spent,
 * expired or taken back) plus what we sent since, which counts a grant
 * that reached it late; once it is silent, every grant to it not yet
 * expired by our clock (a grant lives 2 x ttl from its sending here, ttl
 * from its receipt there).
 * A credit spent becomes a connection the tracker counts when its SYN
 * arrives; until the mux's next report it is counted twice (in live and
 * active), which errs on the safe side. The one way past the cap: a
 * report that says a credit is spent reaching us before that SYN reaches
 * the tracker (the bound, measured in performance.md: the SYNs in flight
 * between a mux and this host at that moment).
 *
 * Shares: the capacity not in use is split between the muxes heard from
 * lately, in proportion to their demand (credits used plus new
 * connections they had to turn away, over the last exchange) plus one,
 * so an idle mux keeps a credit and a busy one gets the rest. A mux that
 * holds more than its share while the pool has none left and another mux
 * turns connections away is hoarding: its grants for that backend are
 * taken back (revoke_below), and it says how many it lost. So are every
 * mux's when active plus outstanding stays over the cap for two rounds
 * of requests (connections the tracker found after our start: they were
 * open before it, ha_track.h).
 *
 * Leases: a grant lives ttl from its receipt, and every request renews
 * what the mux still holds of a backend while the mux answers (a report
 * within 2 x ttl) and holds no more than its share, so that an idle
 * backend's credits do not lapse every ttl and leave the mux without any
 * until the next round. The records our clock counts for a silent mux are
 * then 2 x ttl from the last renewal, and only the newest grants that
 * cover what the mux last said it holds (it spends oldest first). A mux
 * over its share is not renewed: its surplus expires (or is taken back as
 * hoarded) and the shares are made again. Nor is one that turned
 * connections away over the last exchange: a worker of it may hold
 * credits where no SYN comes, and expired they are split again.
 *
 * Restarts: an agent's incarnation is random per start; a mux voids the
 * grants of any other incarnation when it hears a new one. Grants an old
 * incarnation left at a mux we have not reached yet are unknown, so a new
 * agent grants nothing until it has heard every mux or 2 x ttl has passed.
 * A mux that restarts has nothing (its report's new incarnation says so).
 * A backend whose book starts again (its cap removed, then set again) has
 * every older grant of it taken back by its first request.
 *
 * Only a mux heard from within 2 x ttl is granted anything: a silent one
 * is asked (a poll), and granted once it answers. A request that could
 * not be sent is taken back from the books at once (ha_grant_unsend()).
 */
#ifndef HA_GRANT_H
#define HA_GRANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_credit_msg.h"

#define HA_GRANT_MUXES 16		/* muxes an agent grants to */
#define HA_GRANT_BACKENDS LB_CREDIT_MAX /* capped backends on one host */
#define HA_GRANT_LIVE 32		/* unexpired grants remembered per (backend, mux) */

struct ha_grant_rec {
	uint64_t name;
	uint32_t count;
	uint64_t expires_ms; /* ours: sent + 2 x ttl */
};

/* One backend's books with one mux. */
struct ha_grant_book {
	struct ha_grant_rec g[HA_GRANT_LIVE];
	uint32_t n;
	uint64_t granted;	   /* credits granted, this incarnation (monotonic) */
	bool reported;		   /* live below is the mux's word */
	uint64_t report_ms;	   /* ... as of then */
	uint64_t live;		   /* the mux's last report */
	uint64_t sent_since;	   /* credits granted since that report */
	uint64_t demand;	   /* used + denied over the last exchange */
	uint64_t denied_step;	   /* denied over the last exchange */
	uint64_t revoke_below;	   /* to send: grants below are taken back (0: none) */
	struct lb_credit_use last; /* the last counters accepted */
};

struct ha_grant_be {
	uint32_t id;
	uint32_t max;
	uint64_t active;
	uint32_t over_n; /* requests in a row that found active + outstanding over max */
	struct ha_grant_book m[HA_GRANT_MUXES];
};

struct ha_grant_stats {
	uint64_t granted;	   /* credits granted, all backends and muxes */
	uint64_t grants;	   /* grants (messages' entries with credits) */
	uint64_t reclaims;	   /* grants taken back from a hoarding mux */
	uint64_t reports;	   /* reports accepted */
	uint64_t reports_rejected; /* reports refused: counters back, another start ... */
};

struct ha_grant {
	uint64_t incarnation;
	uint32_t ttl_ms;
	uint32_t n_muxes;
	uint64_t start_ms;
	uint64_t next_name;
	uint64_t mux_inc[HA_GRANT_MUXES]; /* the mux's incarnation (0: unheard) */
	/*
	 * Credits granted to each mux, every backend together: the counter
	 * the requests carry, monotonic for the incarnation even when a
	 * backend's book starts again (its cap removed, then set again).
	 */
	uint64_t granted_mux[HA_GRANT_MUXES];
	uint64_t heard_ms[HA_GRANT_MUXES]; /* its last accepted report */
	uint32_t n_be;
	struct ha_grant_be be[HA_GRANT_BACKENDS];
	struct ha_grant_stats st;
};

/* A capped backend of this host, from the flow table. */
struct ha_grant_cap {
	uint32_t id;
	uint32_t max;
};

/* Start the books: n_muxes (<= HA_GRANT_MUXES), a grant's ttl, our incarnation. */
void ha_grant_init(struct ha_grant *g, uint32_t n_muxes, uint32_t ttl_ms, uint64_t incarnation,
	uint64_t now_ms);

/*
 * The capped backends now (a new table): kept ones keep their books, gone
 * ones are forgotten, new ones start empty. -1: more than
 * HA_GRANT_BACKENDS (the first ones are kept).
 */
int ha_grant_caps(struct ha_grant *g, const struct ha_grant_cap *caps, uint32_t n);

/* The tracker's active connections of backend id. */
void ha_grant_active(struct ha_grant *g, uint32_t id, uint64_t active);

/* Credits mux may still spend on backend index b, as this side bounds them. */
uint64_t ha_grant_outstanding(const struct ha_grant *g, uint32_t b, uint32_t mux, uint64_t now_ms);

/* The next request to mux: new grants, take-backs, our counters. */
void ha_grant_make(struct ha_grant *g, uint32_t mux, uint64_t now_ms, struct lb_credit_grant *out);

/* The request out could not be sent: its grants never left, undo them. */
void ha_grant_unsend(struct ha_grant *g, uint32_t mux, const struct lb_credit_grant *out);

/*
 * The mux's answer. 0: taken; -1: refused whole (another agent start, or
 * the mux refused our grant), or in part: a backend whose counters went
 * back, or that claims more than was granted, is left as it was, the
 * others are taken; why says which, and it is counted.
 */
int ha_grant_report(struct ha_grant *g, uint32_t mux, const struct lb_credit_report *r,
	uint64_t now_ms, char *why, size_t len);

#endif /* HA_GRANT_H */
