/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two-phase commit state machine of the manager, as pure logic.
 *
 * It owns no sockets, clock or disk: callers feed it events (a version to
 * commit, a vote, a member's hello, the time) and it answers with actions
 * (send PREPARE / COMMIT / ABORT / a snapshot, fence a member, the round's
 * outcome). That is what lets the unit tests inject every fault: a silent
 * member, a "no" vote, duplicated and reordered messages, a crash between
 * PREPARE and COMMIT.
 *
 * Rules:
 *  - One version in flight at a time. PREPARE(N) goes to every in-sync
 *    member; COMMIT(N) only once all of them voted yes for N with N's
 *    digest before the deadline; otherwise ABORT(N) to all, and the reason
 *    names the member.
 *  - The decision to commit is made durable by the caller (the action
 *    MGR_ACT_RECORD_COMMIT comes first) before any COMMIT is sent, so a
 *    manager that crashes after it re-sends COMMIT(N) and one that crashes
 *    before it sends ABORT(N): no member is ever left on a version the
 *    manager does not know.
 *  - A member that misses a deadline, votes for the wrong base, or says
 *    hello with another version is fenced (out of sync) and sent a
 *    snapshot; it rejoins the rounds once it reports the committed version
 *    with the committed digest.
 *  - Messages are keyed by (version, digest): duplicates and stale ones
 *    change nothing.
 */
#ifndef MGR_COMMIT_H
#define MGR_COMMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_codec.h"

#define MGR_MAX_MEMBERS 256
#define MGR_MAX_ACTIONS (2 * MGR_MAX_MEMBERS + 8)

enum mgr_member_state {
	MGR_MEMBER_IN_SYNC = 1, /* takes part in rounds */
	MGR_MEMBER_FENCED,	/* out of sync: being resynced from a snapshot */
};

enum mgr_vote { MGR_VOTE_NONE, MGR_VOTE_YES, MGR_VOTE_NO };

struct mgr_member {
	char id[LB_MSG_ID];
	enum lb_role role;
	enum mgr_member_state state;
	uint64_t applied;
	bool has_reported;
	uint64_t reported;  /* what it last said it runs (hello, STATUS) */
	uint64_t behind_ms; /* in sync, between rounds, reporting an older version since; 0: not */
	uint64_t last_contact_ms;
	enum mgr_vote vote;
	bool in_round;	       /* was sent this round's PREPARE */
	bool gone;	       /* its connection closed in its round: fenced at the round's end */
	char why[LB_MSG_TEXT]; /* why it was fenced */
};

enum mgr_action_type {
	MGR_ACT_SEND_PREPARE = 1, /* to member */
	MGR_ACT_RECORD_COMMIT,	  /* make "version committed" durable, then go on */
	MGR_ACT_SEND_COMMIT,	  /* to member */
	MGR_ACT_SEND_ABORT,	  /* to member */
	MGR_ACT_SEND_SNAPSHOT,	  /* to member, at the committed version */
	MGR_ACT_FENCE,		  /* member is now out of sync (reason) */
	MGR_ACT_COMMITTED,	  /* the round ended: version committed */
	MGR_ACT_ABORTED,	  /* the round ended: version aborted (reason) */
};

/* Why a round aborted: what the driver does next depends on it. */
enum mgr_abort_cause {
	MGR_CAUSE_NONE = 0,
	MGR_CAUSE_VOTE_NO,  /* a member judged the change: it is rejected */
	MGR_CAUSE_BEHIND,   /* a member said no because it runs an older version: it is fenced */
	MGR_CAUSE_TIMEOUT,  /* members were silent (now fenced) */
	MGR_CAUSE_RECOVERY, /* the round a restart found undecided */
};

struct mgr_action {
	enum mgr_action_type type;
	int member; /* index into members, -1 for none; ABORTED: who voted no, if one did */
	uint64_t version;
	enum mgr_abort_cause cause; /* SEND_ABORT, ABORTED */
	char reason[LB_MSG_TEXT];
};

struct mgr_commit {
	uint64_t committed;
	uint8_t committed_digest[LB_DIGEST_LEN];
	uint64_t inflight; /* 0: no round */
	uint8_t inflight_digest[LB_DIGEST_LEN];
	uint64_t deadline_ms;
	uint64_t vote_timeout_ms;
	uint32_t n_members;
	struct mgr_member members[MGR_MAX_MEMBERS];
	uint32_t n_actions;
	struct mgr_action actions[MGR_MAX_ACTIONS];
};

/* Start at the durable committed version (0 for a new manager). */
void mgr_commit_init(struct mgr_commit *c, uint64_t committed, const uint8_t digest[LB_DIGEST_LEN],
	uint64_t vote_timeout_ms);

/*
 * After a restart: a round for `version` was prepared and maybe decided.
 * decided: its commit record is durable -> COMMIT is re-sent to every member;
 * otherwise ABORT is sent. Members are those known again by their hellos.
 */
void mgr_commit_recover(
	struct mgr_commit *c, uint64_t version, const uint8_t digest[LB_DIGEST_LEN], bool decided);

/* Start the round for committed + 1. Returns -LB_EEXIST if one is in flight. */
int mgr_commit_begin(struct mgr_commit *c, const uint8_t digest[LB_DIGEST_LEN], uint64_t now_ms);

/*
 * A member's vote. A "no" aborts the round (MGR_CAUSE_VOTE_NO), unless the
 * member last reported a version other than the committed one (it missed
 * a COMMIT): then the member is the problem, not the change; the round
 * aborts with MGR_CAUSE_BEHIND and the member is fenced and sent a
 * snapshot, so that the retry goes on without it.
 */
void mgr_commit_vote(struct mgr_commit *c, const char *member, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], bool yes, const char *reason, uint64_t now_ms);

/* A member's hello (or status): registers it or updates what it runs. */
void mgr_commit_hello(struct mgr_commit *c, const char *member, enum lb_role role, uint64_t applied,
	const uint8_t digest[LB_DIGEST_LEN], uint64_t now_ms);

/*
 * A member's STATUS: the version it runs now. Not a hello: a hello
 * mid-round would fence it. A member in sync that reports a version older
 * than the committed one, between rounds, for a vote timeout or more (its
 * COMMIT was lost: one report may just have crossed the COMMIT) is fenced
 * with a snapshot.
 */
void mgr_commit_status(struct mgr_commit *c, const char *member, uint64_t applied, uint64_t now_ms);

/*
 * A member's connection closed. A member that is gone cannot vote: one in
 * sync between rounds is fenced now (MGR_ACT_FENCE, no snapshot: it gets
 * one when it says hello again) rather than let the next round wait out
 * its deadline; one in the round in flight is left to the deadline.
 */
void mgr_commit_gone(struct mgr_commit *c, const char *member);

/*
 * The commit record of `version`, just decided, could not be made durable:
 * take the decision back. The committed version returns to version - 1
 * with `digest`, and so do the members that were counted at `version`. No
 * action: the caller tells the members to drop what they prepared.
 */
void mgr_commit_undo(struct mgr_commit *c, uint64_t version, const uint8_t digest[LB_DIGEST_LEN]);

/*
 * Fence an in-sync member for a reason found outside the protocol (its VIP
 * probes fail): it leaves the round in flight, if any (which may then
 * commit without it), and is sent a snapshot; its next hello at the
 * committed version takes it back. A fenced or unknown member: nothing.
 */
void mgr_commit_fence(struct mgr_commit *c, const char *member, const char *why);

/* Time passes: a round past its deadline aborts and fences the silent. */
void mgr_commit_tick(struct mgr_commit *c, uint64_t now_ms);

/* Take the pending actions (valid until the next call); resets the list. */
const struct mgr_action *mgr_commit_actions(struct mgr_commit *c, uint32_t *n);

int mgr_commit_find(const struct mgr_commit *c, const char *member);

#endif /* MGR_COMMIT_H */
