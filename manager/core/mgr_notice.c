/* SPDX-License-Identifier: BSD-3-Clause */
/* The manager's word to a mux on announcing (mgr_notice.h has the design). */
#include <stdio.h>
#include <string.h>

#include "mgr_notice.h"

void
mgr_notice_of(const struct mgr_member *m, bool probe_failing, const char *probe_why,
	struct mgr_notice *out)
{
	memset(out, 0, sizeof(*out));
	out->nt_valid = true;
	if (m->state != MGR_MEMBER_IN_SYNC)
		snprintf(out->nt_why, sizeof(out->nt_why), "fenced: %.240s",
			m->why[0] ? m->why : "out of sync");
	else if (probe_failing)
		snprintf(out->nt_why, sizeof(out->nt_why), "VIP probes fail: %.230s",
			probe_why != NULL && probe_why[0] ? probe_why : "no answer");
	else
		out->nt_in_sync = true;
}

void
mgr_notice_reset(struct mgr_notice *sent)
{
	memset(sent, 0, sizeof(*sent));
}

bool
mgr_notice_update(struct mgr_notice *sent, const struct mgr_notice *next)
{
	if (sent->nt_valid && sent->nt_in_sync == next->nt_in_sync &&
		strcmp(sent->nt_why, next->nt_why) == 0)
		return false;
	*sent = *next;
	return true;
}
