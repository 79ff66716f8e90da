/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leader election on an etcd lease, as pure logic: the shape of
 * mgr_commit.h. It owns no socket and no clock: the election's I/O
 * (mgr_leader.c) feeds it events (a lease granted, a campaign won or lost,
 * a keepalive's answer, what the watch saw of the leader key, the time)
 * and does the actions it answers with (grant a lease, campaign, keep the
 * lease alive, read the leader key, revoke; and tell the manager it was
 * elected or deposed). The unit tests (tests/unit/test_elect.c) walk it
 * through every failure by feeding events.
 *
 * The protocol (docs/manager.md, "High availability"):
 *  - Every manager holds a lease of ttl seconds, kept alive every ttl/3.
 *  - A campaign is one transaction: create <prefix>/leader on our lease if
 *    it does not exist (create_revision == 0), else read it. Won: the key's
 *    create_revision is our term, the fencing token every write and every
 *    message of ours carries. Lost: we stand by and watch the key.
 *    A campaign may be repeated (a retry while the first one's answer was
 *    slow, a win not taken on a lease about to lapse): a key that exists
 *    on this manager's own lease is reported as WON, not LOST.
 *  - The key goes (its holder's lease expired or was revoked): campaign.
 *  - A leader is deposed when its lease is gone (a keepalive says so), when
 *    the key belongs to another term (it reads the key every ttl, as a
 *    standby does), or when it cannot have been renewed
 *    in time: the last keepalive that succeeded was sent at t with a ttl,
 *    so the lease surely holds until t + ttl; without a newer one, the
 *    leader steps down at t + ttl - max(ttl/4, 500 ms), before etcd can let another in
 *    (no two managers ever believe they lead, by the clock; the term guard
 *    makes it safe even if clocks lie).
 *  - A leader whose event loop has stopped turning (loop_alive false) lets
 *    its lease lapse: a manager that cannot serve must not hold the lead.
 */
#ifndef MGR_ELECT_H
#define MGR_ELECT_H

#include <stdbool.h>
#include <stdint.h>

#define MGR_ELECT_INFO 512     /* the leader key's value: {"id","members","ctl"} */
#define MGR_ELECT_RETRY_MS 500 /* a failed grant or campaign is tried again */
#define MGR_ELECT_MAX_ACTIONS 8

enum mgr_elect_state {
	MGR_EL_IDLE = 0, /* no lease: one is to be granted */
	MGR_EL_CAMPAIGN, /* a lease: the campaign is to be made */
	MGR_EL_STANDBY,	 /* another manager leads, or the key is taken: watching */
	MGR_EL_LEADER,	 /* this manager leads, at term */
	MGR_EL_STOPPED,	 /* shut down */
};

enum mgr_elect_ev {
	MGR_EV_TICK = 1,	/* now, loop_alive */
	MGR_EV_GRANTED,		/* lease, ttl_s */
	MGR_EV_GRANT_FAILED,	/* why */
	MGR_EV_WON,		/* term */
	MGR_EV_LOST,		/* term, info: the key's holder */
	MGR_EV_CAMPAIGN_FAILED, /* why */
	MGR_EV_KEPT,		/* ttl_s, sent_ms: a keepalive sent then was answered */
	MGR_EV_LEASE_GONE,	/* a keepalive found no lease */
	MGR_EV_KEEP_FAILED,	/* why: etcd did not answer */
	MGR_EV_KEY_GONE,	/* the leader key was deleted (watch, read) */
	MGR_EV_KEY_IS,		/* term, info: the leader key's holder (watch, read) */
	MGR_EV_STOP,		/* shutting down */
};

struct mgr_elect_event {
	enum mgr_elect_ev type;
	uint64_t now_ms;
	bool loop_alive;
	int64_t lease;
	uint32_t ttl_s;
	uint64_t sent_ms;
	uint64_t term;
	const char *info;
	const char *why;
};

enum mgr_elect_act {
	MGR_EA_GRANT = 1, /* grant a lease of cfg.ttl_s */
	MGR_EA_CAMPAIGN,  /* the campaign transaction, on lease */
	MGR_EA_KEEPALIVE, /* keep lease alive (feed KEPT, LEASE_GONE or KEEP_FAILED) */
	MGR_EA_READ,	  /* read the leader key (feed KEY_IS or KEY_GONE) */
	MGR_EA_REVOKE,	  /* revoke lease (at stop: the standbys take over at once) */
	MGR_EA_ELECTED,	  /* tell the manager: it leads, at term */
	MGR_EA_DEPOSED,	  /* tell the manager: it leads no more (why) */
	MGR_EA_LEADER,	  /* the leader changed: term, info (standbys redirect to it) */
};

struct mgr_elect_action {
	enum mgr_elect_act type;
	int64_t lease;
	uint64_t term;
	char why[160];
};

struct mgr_elect {
	uint32_t ttl_s;
	enum mgr_elect_state state;
	int64_t lease;		 /* 0: none */
	uint64_t lease_until_ms; /* the lease surely holds until then (our clock) */
	uint64_t next_keep_ms;	 /* the next keepalive */
	uint64_t retry_ms;	 /* IDLE, CAMPAIGN: the next grant or campaign */
	uint64_t next_read_ms;	 /* STANDBY: read the key (the watch's backstop) */
	bool keep_out;		 /* a keepalive is being made */
	uint64_t term;		 /* LEADER: ours */
	/* The leader as last seen (any state). */
	uint64_t leader_term;
	char leader_info[MGR_ELECT_INFO];
	char why[160]; /* why the last step down, or "" */
	uint32_t n_actions;
	struct mgr_elect_action actions[MGR_ELECT_MAX_ACTIONS];
};

void mgr_elect_init(struct mgr_elect *e, uint32_t ttl_s);

/* Feed one event; its actions are then mgr_elect_actions(). */
void mgr_elect_feed(struct mgr_elect *e, const struct mgr_elect_event *ev);

/* Take the pending actions (valid until the next feed); resets the list. */
const struct mgr_elect_action *mgr_elect_actions(struct mgr_elect *e, uint32_t *n);

/* When a TICK has something to do (UINT64_MAX: nothing). */
uint64_t mgr_elect_next_ms(const struct mgr_elect *e);

const char *mgr_elect_state_name(enum mgr_elect_state s);

#endif /* MGR_ELECT_H */
