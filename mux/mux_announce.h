/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What this mux should announce, as pure logic.
 *
 * No sockets, no clock, no DPDK: the route thread (mux_route.c) feeds it
 * what it sees (the running table's VIPs, whether every worker makes
 * progress, whether the ports are up, a shutdown) with the time, and asks
 * for the verdict: for each VIP of the running table, announce or not, why
 * not, and since when that has been so. That is what lets the unit tests
 * (tests/unit/test_announce.c) walk it through starting, stalls, a port
 * down, a shutdown, with no mux around it. Same shape as mgr_commit.c.
 *
 * A mux announces only what it can serve. Mux-wide conditions withhold
 * every VIP; the first that holds is the reason given, in this order:
 *
 *   shutdown     SIGTERM/SIGINT: withdrawn before the drain and the exit
 *   drained      an operator's drain (sluicectl mux drain: the table lists
 *                this mux)
 *   starting     not every worker has run its loop yet
 *   stalled      a worker's loop made no progress for stall_ms
 *   port down    a data port's link is down
 *   no table     standalone: the table has no service; managed: no
 *                version from the manager applied yet (version 0)
 *   not in sync  managed: the manager has not said it is in sync yet (a
 *                mux starts so), says it is not (fenced: out of sync,
 *                failing VIP probes), or said so of a version newer
 *                than the one the mux runs; and while no leader manages
 *                the mux (mux_announce_lkg), its last known good verdict:
 *                a table known to be behind or past lkg_max_age withholds
 *                all, and a mux that has heard no leader since it started
 *                announces the table it serves (docs/manager.md, "What a
 *                member serves without a manager"); one that has keeps
 *                that leader's last word
 *
 * then per VIP: a VIP the manager withdrew (its healthy backends fell
 * below its pool's withdraw_below: the table's withdrawn flag). Everything
 * else is announced. The manager's inputs arrive through
 * mux_announce_sync() (its SyncState notices), mux_announce_drain() and
 * mux_announce_vip_hold() (the running table's drained list and flags).
 */
#ifndef MUX_ANNOUNCE_H
#define MUX_ANNOUNCE_H

#include <stdbool.h>
#include <stdint.h>

#define MUX_ANN_MAX_VIPS 1024
#define MUX_ANN_TEXT 128

#define MUX_ANN_REASONS(X)                                                                         \
	X(NONE, "announced")                                                                       \
	X(SHUTDOWN, "shutting down")                                                               \
	X(DRAINED, "drained by the operator")                                                      \
	X(STARTING, "starting: workers not running yet")                                           \
	X(STALLED, "a worker makes no progress")                                                   \
	X(PORT_DOWN, "a data port is down")                                                        \
	X(NO_TABLE, "no flow table to serve")                                                      \
	X(NOT_IN_SYNC, "not in sync with the manager")                                             \
	X(VIP_HELD, "withheld for this VIP")

enum mux_ann_reason {
#define MUX_ANN_ENUM(name, text) MUX_ANN_##name,
	MUX_ANN_REASONS(MUX_ANN_ENUM)
#undef MUX_ANN_ENUM
		MUX_ANN_REASON_MAX
};

/* A short name ("stalled") and the sentence of a reason; never NULL. */
const char *mux_ann_reason_name(enum mux_ann_reason r);
const char *mux_ann_reason_text(enum mux_ann_reason r);

struct mux_ann_cfg {
	bool managed;	   /* a version > 0 from the manager is "a table" */
	uint64_t stall_ms; /* a worker without progress this long withholds all */
};

struct mux_ann_vip {
	uint32_t vip; /* network order */
	bool announce;
	enum mux_ann_reason reason; /* MUX_ANN_NONE when announced */
	char why[MUX_ANN_TEXT];	    /* the reason with its details */
	uint64_t since_ms;	    /* this verdict (announce, reason) holds since */
	/* The manager's per-VIP input (mux_announce_vip_hold: withdraw_below). */
	bool held;
	char held_why[MUX_ANN_TEXT];
};

struct mux_announce {
	struct mux_ann_cfg cfg;
	/* Inputs, as last fed. */
	uint64_t version;
	uint32_t n_services;
	bool workers_started;
	int slow_worker;	   /* the worker with the oldest progress, -1: none */
	uint64_t slow_progress_ms; /* ... its last progress */
	int down_port;		   /* -1: every port up */
	char down_port_name[32];
	bool shutdown;
	bool drained;	 /* the operator's drain */
	bool sync_known; /* the manager said in sync or not */
	bool in_sync;
	uint64_t sync_version; /* ... from this version on */
	char sync_why[MUX_ANN_TEXT];
	bool lkg_active; /* no leader manages the mux: its last known good verdict counts */
	bool lkg_ok;	 /* ... which says announce */
	char lkg_why[MUX_ANN_TEXT];
	uint64_t word_until_ms; /* a leader back: announced as before until its word, or then */
	/* Verdict. */
	enum mux_ann_reason reason; /* mux-wide; MUX_ANN_NONE: judged per VIP */
	char why[MUX_ANN_TEXT];
	uint64_t reason_since_ms;
	uint32_t n_vips; /* sorted by address */
	struct mux_ann_vip vips[MUX_ANN_MAX_VIPS];
	uint32_t n_dropped; /* VIPs past MUX_ANN_MAX_VIPS, never announced */
	uint64_t changes;   /* bumped whenever the set to announce changes */
	bool dirty;	    /* an announced VIP left the table since the last eval */
};

void mux_announce_init(struct mux_announce *a, const struct mux_ann_cfg *cfg, uint64_t now_ms);

/*
 * The running flow table: its version, how many services it has and its
 * distinct VIPs (network order, any order, duplicates allowed). A VIP that
 * stays keeps its verdict's since; a new one starts now.
 */
void mux_announce_table(struct mux_announce *a, uint64_t version, uint32_t n_services,
	const uint32_t *vips, uint32_t n_vips, uint64_t now_ms);

/*
 * The workers: started once each has run its loop; slow_worker is the one
 * whose loop counter moved longest ago (at slow_progress_ms), -1 if none.
 */
void mux_announce_workers(
	struct mux_announce *a, bool started, int slow_worker, uint64_t slow_progress_ms);

/* The data ports: down_port = index of a port whose link is down, or -1. */
void mux_announce_port(struct mux_announce *a, int down_port, const char *name);

/* SIGTERM/SIGINT: withdraw everything, for good. */
void mux_announce_shutdown(struct mux_announce *a);

/* An operator's drain (true) or undrain (false). */
void mux_announce_drain(struct mux_announce *a, bool drained);

/*
 * The manager's word on this member: in sync from `version` on (a mux
 * running an older version is not, until it applies it), or not and why.
 */
void mux_announce_sync(struct mux_announce *a, bool in_sync, uint64_t version, const char *why);

/*
 * The member's last known good verdict (dp_member_lkg_verdict): active
 * while no leader manages the mux, then whether to announce and why, at
 * now_ms. A leader's return ends it before the leader's word on sync
 * comes (a SYNC after the WELCOME): a mux that announced its last known
 * good table with no word yet keeps announcing until that word, for
 * MUX_ANN_WORD_MS at most, rather than withdraw for the moment between.
 */
void mux_announce_lkg(
	struct mux_announce *a, bool active, bool ok, const char *why, uint64_t now_ms);

#define MUX_ANN_WORD_MS 2000

/*
 * Withhold one VIP (held) or release it, with why (for example "withdrawn
 * by the manager: too few healthy backends"). Returns -1 if the VIP is not
 * in the running table (the caller feeds the table first).
 */
int mux_announce_vip_hold(struct mux_announce *a, uint32_t vip, bool held, const char *why);

/*
 * Judge again with everything fed so far. Returns true when the set of
 * VIPs to announce changed (a->changes is bumped too).
 */
bool mux_announce_eval(struct mux_announce *a, uint64_t now_ms);

/* The VIPs to announce (network order, sorted), at most max. Returns the count. */
uint32_t mux_announce_set(const struct mux_announce *a, uint32_t *out, uint32_t max);

#endif /* MUX_ANNOUNCE_H */
