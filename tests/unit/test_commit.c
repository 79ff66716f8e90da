/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's two-phase commit with injected faults: silent members, a
 * "no" vote, duplicated and reordered messages, a restart between PREPARE
 * and COMMIT. Each test drives mgr_commit like the manager would and checks
 * the actions it asks for.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "lb_err.h"
#include "mgr_commit.h"

static uint8_t d0[LB_DIGEST_LEN], d1[LB_DIGEST_LEN], d2[LB_DIGEST_LEN];

static void
digests(void)
{
	memset(d0, 0, sizeof(d0));
	memset(d1, 0x11, sizeof(d1));
	memset(d2, 0x22, sizeof(d2));
}

/* Count actions of a type (to a member, or any when member == -2). */
static unsigned
count(const struct mgr_action *a, uint32_t n, enum mgr_action_type t, int member)
{
	unsigned k = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].type == t && (member == -2 || a[i].member == member))
			k++;
	return k;
}

static int
index_of(const struct mgr_action *a, uint32_t n, enum mgr_action_type t)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].type == t)
			return (int)i;
	return -1;
}

static const struct mgr_action *
find(const struct mgr_action *a, uint32_t n, enum mgr_action_type t)
{
	int i = index_of(a, n, t);

	return i < 0 ? NULL : &a[i];
}

/* A manager at version 0 with members m0..m{n-1}, all in sync. */
static void
setup(struct mgr_commit *c, unsigned n)
{
	char id[16];
	uint32_t k;
	unsigned i;

	digests();
	mgr_commit_init(c, 0, d0, 1000);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "m%u", i);
		mgr_commit_hello(c, id, LB_ROLE_MUX, 0, d0, 0);
	}
	mgr_commit_actions(c, &k);
	cr_assert_eq(k, 0, "members at the committed version need nothing");
}

Test(commit, all_yes_commits_after_recording)
{
	struct mgr_commit c;
	const struct mgr_action *a;
	uint32_t n;
	int rec, first_commit;

	setup(&c, 3);
	cr_assert_eq(mgr_commit_begin(&c, d1, 0), 0);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_PREPARE, -2), 3);
	cr_assert_eq(mgr_commit_begin(&c, d2, 0), -LB_EEXIST, "one round at a time");
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 10);
	mgr_commit_vote(&c, "m1", 1, d1, true, "", 10);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(n, 0, "no decision before the last vote");
	mgr_commit_vote(&c, "m2", 1, d1, true, "", 10);
	a = mgr_commit_actions(&c, &n);
	rec = index_of(a, n, MGR_ACT_RECORD_COMMIT);
	first_commit = index_of(a, n, MGR_ACT_SEND_COMMIT);
	cr_assert(rec >= 0 && first_commit > rec, "the decision is durable before any COMMIT");
	cr_assert_eq(count(a, n, MGR_ACT_SEND_COMMIT, -2), 3);
	cr_assert_not_null(find(a, n, MGR_ACT_COMMITTED));
	cr_assert_eq(c.committed, 1);
	cr_assert_eq(memcmp(c.committed_digest, d1, LB_DIGEST_LEN), 0);
}

Test(commit, silent_member_aborts_and_is_fenced_then_resynced)
{
	struct mgr_commit c;
	const struct mgr_action *a, *ab;
	uint32_t n;

	setup(&c, 3);
	mgr_commit_begin(&c, d1, 0);
	mgr_commit_actions(&c, &n);
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 10);
	mgr_commit_vote(&c, "m1", 1, d1, true, "", 10);
	mgr_commit_tick(&c, 999);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(n, 0, "before the deadline nothing happens");
	mgr_commit_tick(&c, 1000);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_ABORT, -2), 3, "ABORT goes to every member");
	ab = find(a, n, MGR_ACT_ABORTED);
	cr_assert_not_null(ab);
	cr_assert_not_null(
		strstr(ab->reason, "m2"), "the reason names the silent member: %s", ab->reason);
	cr_assert_eq(count(a, n, MGR_ACT_FENCE, 2), 1);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_SNAPSHOT, 2), 1);
	cr_assert_eq(c.committed, 0);
	cr_assert_eq(c.members[2].state, MGR_MEMBER_FENCED);

	/* The retry goes on without the fenced member. */
	mgr_commit_begin(&c, d1, 2000);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_PREPARE, -2), 2);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_PREPARE, 2), 0);
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 2010);
	mgr_commit_vote(&c, "m1", 1, d1, true, "", 2010);
	a = mgr_commit_actions(&c, &n);
	cr_assert_not_null(find(a, n, MGR_ACT_COMMITTED));
	cr_assert_eq(c.committed, 1);

	/* It comes back behind: still fenced, sent a snapshot again. */
	mgr_commit_hello(&c, "m2", LB_ROLE_MUX, 0, d0, 3000);
	cr_assert_eq(c.members[2].state, MGR_MEMBER_FENCED);
	/* Once it reports the committed version and digest, it rejoins. */
	mgr_commit_hello(&c, "m2", LB_ROLE_MUX, 1, d1, 3100);
	cr_assert_eq(c.members[2].state, MGR_MEMBER_IN_SYNC);
	mgr_commit_actions(&c, &n);
	mgr_commit_begin(&c, d2, 4000);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_PREPARE, 2), 1);
}

Test(commit, wrong_digest_at_the_committed_version_is_fenced)
{
	struct mgr_commit c;
	uint32_t n;

	setup(&c, 1);
	mgr_commit_begin(&c, d1, 0);
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 1);
	mgr_commit_actions(&c, &n);
	mgr_commit_hello(&c, "m0", LB_ROLE_MUX, 1, d2, 5);
	cr_assert_eq(c.members[0].state, MGR_MEMBER_FENCED, "same number, other table");
}

Test(commit, a_no_vote_aborts_and_names_the_member)
{
	struct mgr_commit c;
	const struct mgr_action *a, *ab;
	uint32_t n;

	setup(&c, 3);
	mgr_commit_begin(&c, d1, 0);
	mgr_commit_actions(&c, &n);
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 1);
	mgr_commit_vote(&c, "m1", 1, d1, false, "maglev table: out of memory", 1);
	a = mgr_commit_actions(&c, &n);
	ab = find(a, n, MGR_ACT_ABORTED);
	cr_assert_not_null(ab);
	cr_assert_not_null(strstr(ab->reason, "m1"));
	cr_assert_not_null(strstr(ab->reason, "out of memory"));
	cr_assert_eq(count(a, n, MGR_ACT_SEND_ABORT, -2), 3);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_COMMIT, -2), 0);
	cr_assert_eq(c.committed, 0);
	/* The late yes of the third member changes nothing. */
	mgr_commit_vote(&c, "m2", 1, d1, true, "", 2);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(n, 0);
	cr_assert_eq(c.committed, 0);
}

Test(commit, duplicated_and_reordered_messages_are_harmless)
{
	struct mgr_commit c;
	const struct mgr_action *a;
	uint32_t n;

	setup(&c, 2);
	mgr_commit_begin(&c, d1, 0);
	mgr_commit_actions(&c, &n);
	/* m0's yes arrives three times; m1 is still thinking. */
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 1);
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 2);
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 3);
	/* Votes about other versions or another digest (reordered, forged). */
	mgr_commit_vote(&c, "m1", 0, d1, true, "", 4);
	mgr_commit_vote(&c, "m1", 2, d1, true, "", 4);
	mgr_commit_vote(&c, "m1", 1, d2, true, "", 4);
	mgr_commit_vote(&c, "nobody", 1, d1, true, "", 4);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(n, 0, "no decision from duplicates or strays");
	mgr_commit_vote(&c, "m1", 1, d1, true, "", 5);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_COMMITTED, -2), 1);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_COMMIT, -2), 2);
	/* A duplicate after the decision commits nothing twice. */
	mgr_commit_vote(&c, "m1", 1, d1, true, "", 6);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(n, 0);
	cr_assert_eq(c.committed, 1);
}

Test(commit, restart_between_prepare_and_commit)
{
	struct mgr_commit c;
	const struct mgr_action *a;
	uint32_t n;

	/* Undecided: the restarted manager aborts the round everywhere. */
	setup(&c, 2);
	mgr_commit_recover(&c, 1, d1, false);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_ABORT, -2), 2);
	cr_assert_not_null(find(a, n, MGR_ACT_ABORTED));
	cr_assert_eq(c.committed, 0);
	cr_assert_eq(c.inflight, 0);

	/* Decided (its record was durable): COMMIT is sent again to all. */
	setup(&c, 2);
	mgr_commit_recover(&c, 1, d1, true);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_COMMIT, -2), 2);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_ABORT, -2), 0);
	cr_assert_eq(c.committed, 1);
	/* Members then report version 1 with its digest: all in sync. */
	mgr_commit_hello(&c, "m0", LB_ROLE_MUX, 1, d1, 10);
	mgr_commit_hello(&c, "m1", LB_ROLE_AGENT, 1, d1, 10);
	cr_assert_eq(c.members[0].state, MGR_MEMBER_IN_SYNC);
	cr_assert_eq(c.members[1].state, MGR_MEMBER_IN_SYNC);
}

Test(commit, member_falling_behind_mid_round_does_not_block)
{
	struct mgr_commit c;
	const struct mgr_action *a;
	uint32_t n;

	setup(&c, 3);
	mgr_commit_begin(&c, d1, 0);
	mgr_commit_actions(&c, &n);
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 1);
	mgr_commit_vote(&c, "m1", 1, d1, true, "", 1);
	/* m2 restarted and says hello from an empty table. */
	mgr_commit_hello(&c, "m2", LB_ROLE_MUX, 0, d2, 2);
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_FENCE, 2), 1);
	cr_assert_eq(count(a, n, MGR_ACT_COMMITTED, -2), 1, "the others decide the round");
	cr_assert_eq(count(a, n, MGR_ACT_SEND_COMMIT, 2), 0);
	cr_assert_eq(c.committed, 1);
}

Test(commit, no_members_commits_at_once)
{
	struct mgr_commit c;
	const struct mgr_action *a;
	uint32_t n;

	setup(&c, 0);
	mgr_commit_begin(&c, d1, 0);
	a = mgr_commit_actions(&c, &n);
	cr_assert_not_null(find(a, n, MGR_ACT_COMMITTED));
	cr_assert_eq(c.committed, 1);
}

/* A mux fenced by its VIP probes: between rounds, and as the last voter of one. */
Test(commit, fence_from_outside_the_protocol)
{
	struct mgr_commit c;
	const struct mgr_action *a;
	uint32_t n;

	setup(&c, 3);
	mgr_commit_fence(&c, "m1", "VIP probe: no answer for 192.0.2.10 through 10.255.0.1");
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_FENCE, 1), 1);
	cr_assert_eq(count(a, n, MGR_ACT_SEND_SNAPSHOT, 1), 1, "a fenced member gets a snapshot");
	cr_assert_eq(c.members[1].state, MGR_MEMBER_FENCED);
	cr_assert_str_eq(
		c.members[1].why, "VIP probe: no answer for 192.0.2.10 through 10.255.0.1");
	mgr_commit_fence(&c, "m1", "again");
	mgr_commit_fence(&c, "nobody", "unknown");
	mgr_commit_actions(&c, &n);
	cr_assert_eq(n, 0, "a fenced or unknown member: nothing");
	mgr_commit_hello(&c, "m1", LB_ROLE_MUX, 0, d0, 5);
	mgr_commit_actions(&c, &n);
	cr_assert_eq(c.members[1].state, MGR_MEMBER_IN_SYNC, "its hello at the committed version");

	/* In a round where the others voted yes: fencing it lets the round commit. */
	cr_assert_eq(mgr_commit_begin(&c, d1, 10), 0);
	mgr_commit_vote(&c, "m0", 1, d1, true, "", 11);
	mgr_commit_vote(&c, "m2", 1, d1, true, "", 11);
	mgr_commit_actions(&c, &n);
	mgr_commit_fence(&c, "m1", "VIP probe: answers with version 0, committed is 1");
	a = mgr_commit_actions(&c, &n);
	cr_assert_eq(count(a, n, MGR_ACT_FENCE, 1), 1);
	cr_assert_not_null(find(a, n, MGR_ACT_COMMITTED), "the round commits without it");
	cr_assert_eq(
		count(a, n, MGR_ACT_SEND_COMMIT, 1), 0, "and the fenced member gets no COMMIT");
	cr_assert_eq(c.committed, 1);
}
