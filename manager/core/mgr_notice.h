/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the manager tells each mux about announcing its routes (SyncState
 * in the protocol), as pure logic: the two-phase commit's word on the
 * member (in sync, or fenced and why) and the VIP probes' (failing, and
 * why) in; the notice to send out, and whether it differs from the last
 * one sent on this connection.
 *
 * A mux may announce only while the manager says it is in sync. The VIP
 * probes weigh in beyond the fence itself: a mux fenced by its probes is
 * resynced by a snapshot and, by the commit's rules, back in sync at its
 * next hello; if its probes still fail it would announce, be fenced again
 * an interval later, and flap. So the notice stays "not in sync" until its
 * probes are answered again, whatever the commit says. The same holds
 * after every hello (a restarted mux, whose failures the prober forgot
 * while it was away, or a resynced one): "not in sync" until it has
 * answered a probe on that connection (mgr_vip_probe_failing()), so a mux
 * is announced only once the manager saw it forward a VIP's packets.
 *
 * The notice goes to a mux after every WELCOME (mgr_notice_reset() forgets
 * the last one sent on the old connection) and whenever it changes. Its
 * committed version changes nothing by itself: a mux compares it with what
 * it runs, and a mux in sync follows every commit anyway.
 */
#ifndef MGR_NOTICE_H
#define MGR_NOTICE_H

#include <stdbool.h>

#include "lb_codec.h"
#include "mgr_commit.h"

struct mgr_notice {
	bool nt_valid; /* something was sent on this connection */
	bool nt_in_sync;
	char nt_why[LB_MSG_TEXT]; /* why not */
};

/*
 * The notice for member m: in sync unless the commit fenced it, or its VIP
 * probes fail (probe_failing, with probe_why).
 */
void mgr_notice_of(const struct mgr_member *m, bool probe_failing, const char *probe_why,
	struct mgr_notice *out);

/* A new connection: the next notice goes out whatever it says. */
void mgr_notice_reset(struct mgr_notice *sent);

/* Does `next` need sending? If so it becomes *sent. */
bool mgr_notice_update(struct mgr_notice *sent, const struct mgr_notice *next);

#endif /* MGR_NOTICE_H */
