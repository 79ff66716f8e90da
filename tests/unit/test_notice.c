/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's word to a mux on announcing (manager/core/mgr_notice.c):
 * in sync unless fenced or failing its VIP probes; sent once per change
 * and again on every new connection.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "mgr_notice.h"

static struct mgr_member
member(enum mgr_member_state st, const char *why)
{
	struct mgr_member m;

	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "mux1");
	m.role = LB_ROLE_MUX;
	m.state = st;
	snprintf(m.why, sizeof(m.why), "%s", why);
	return m;
}

Test(notice, in_sync_fenced_or_failing_probes)
{
	struct mgr_member in = member(MGR_MEMBER_IN_SYNC, "");
	struct mgr_member out = member(MGR_MEMBER_FENCED, "runs version 3, current is 5");
	struct mgr_notice n;

	mgr_notice_of(&in, false, NULL, &n);
	cr_assert(n.nt_valid && n.nt_in_sync);
	cr_assert_str_eq(n.nt_why, "");
	mgr_notice_of(&out, false, NULL, &n);
	cr_assert_not(n.nt_in_sync);
	cr_assert_str_eq(n.nt_why, "fenced: runs version 3, current is 5");
	/* Back in sync by the commit's rules, but its probes still fail: withdrawn. */
	mgr_notice_of(&in, true, "no answer for 192.0.2.10 through 10.255.0.1 (3 in a row)", &n);
	cr_assert_not(n.nt_in_sync);
	cr_assert_str_eq(n.nt_why,
		"VIP probes fail: no answer for 192.0.2.10 through 10.255.0.1 (3 in a row)");
	/* Fenced wins: it says why the commit put it out. */
	mgr_notice_of(&out, true, "x", &n);
	cr_assert(strncmp(n.nt_why, "fenced: ", 8) == 0, "%s", n.nt_why);
}

Test(notice, sent_once_per_change_and_on_every_connection)
{
	struct mgr_member in = member(MGR_MEMBER_IN_SYNC, "");
	struct mgr_member out = member(MGR_MEMBER_FENCED, "disconnected");
	struct mgr_notice sent, n;

	mgr_notice_reset(&sent);
	mgr_notice_of(&in, false, NULL, &n);
	cr_assert(mgr_notice_update(&sent, &n), "the first on a connection goes out");
	cr_assert_not(mgr_notice_update(&sent, &n), "the same again does not");
	mgr_notice_of(&out, false, NULL, &n);
	cr_assert(mgr_notice_update(&sent, &n), "fenced: a change");
	cr_assert_not(sent.nt_in_sync);
	out = member(MGR_MEMBER_FENCED, "no vote for version 9 in time");
	mgr_notice_of(&out, false, NULL, &n);
	cr_assert(mgr_notice_update(&sent, &n), "another reason is news too");
	mgr_notice_of(&in, false, NULL, &n);
	cr_assert(mgr_notice_update(&sent, &n));
	mgr_notice_reset(&sent); /* a new connection's WELCOME */
	cr_assert(mgr_notice_update(&sent, &n), "said again after a reconnection");
}
