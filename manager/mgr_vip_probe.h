/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VIP probes: every vip_probe_interval_ms the manager sends, through every
 * connected mux that gave a probe address in its hello, one ICMP echo
 * request per VIP address of the committed table. The request is wrapped
 * in IP-in-IP to that mux's tunnel address (a raw IPPROTO_IPIP socket: the
 * kernel writes the outer header), so only that mux sees it; the mux
 * answers itself, from the VIP, with the version it runs in the payload
 * (struct lb_vprobe). Replies come back on a raw ICMP socket and are
 * matched by ICMP id, sequence (the target's index) and a fresh nonce.
 * IPv6 VIPs the same way in IPv6: an ICMPv6 echo request inside
 * IPv6-in-IPv6 (a raw socket of next header 41) to the mux's IPv6 tunnel
 * address (probe_address6 in its hello), the reply on a raw ICMPv6
 * socket. A VIP is probed only through a mux that gave an address of its
 * family (an IPv6 VIP through an IPv4-only mux is not probed); IPv6
 * failures fence as IPv4 ones do. Without IPv6 sockets IPv4 probing goes
 * on, and status says why IPv6 is off.
 *
 * A probe still unanswered half an interval after it left is a failure (a
 * mux answers in microseconds). A mux whose probes for some VIP fail
 * vip_probe_failures intervals in a row, or that
 * answers with a version older than the committed one more than a vote
 * timeout after that version committed, is fenced through the commit state
 * machine (mgr_commit_fence: it gets a snapshot, and its hello at the
 * committed version takes it back); while its probes keep failing it is
 * fenced again after every rejoin.
 *
 * Raw sockets need CAP_NET_RAW: without it probing is off, said once in
 * the log and in status. All of it runs on the manager's loop thread. It
 * keeps its own state only: what it reads of the manager (the members, the
 * committed table, who is connected) it is given at every call, and it
 * fences through the callback it was created with.
 */
#ifndef MGR_VIP_PROBE_H
#define MGR_VIP_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_ftable.h"
#include "mgr_commit.h"

struct mgr_buf;
struct mgr_vip_probe;

/* What the VIP prober reads of the manager, given at every call. */
struct mgr_vip_env {
	const struct mgr_commit *commit;   /* the members: ids, roles, states */
	const struct lb_ftable *committed; /* the committed table: its VIPs */
	uint64_t version;		   /* the committed table's version */
	bool started;			   /* the start's grace period is over */
	bool (*connected)(const void *ctx, int member);
	const void *ctx; /* connected()'s */
};

/* Fence member i, in sync, for `why` (through the commit state machine). */
typedef void (*mgr_vip_fence_fn)(void *ctx, int member, const char *why, uint64_t now);

/*
 * Probes every interval_ms (0: off), fencing a mux after `failures`
 * intervals in a row, or when it answers with an older version than one
 * committed vote_timeout_ms ago. Opens the sockets; never fails the start:
 * without raw sockets probing is off and says why. NULL when out of memory.
 */
struct mgr_vip_probe *mgr_vip_probe_new(uint32_t interval_ms, uint32_t failures,
	uint32_t vote_timeout_ms, mgr_vip_fence_fn fence, void *ctx, uint64_t now);

void mgr_vip_probe_free(struct mgr_vip_probe *v);

/* Descriptor the loop polls for replies, or -1 when probing is off. */
int mgr_vip_probe_fd(const struct mgr_vip_probe *v);
/* The IPv6 replies' socket, -1 when off. */
int mgr_vip_probe_fd6(const struct mgr_vip_probe *v);

/*
 * Member i (id) said hello: its probe addresses (a mux's tunnel addresses,
 * IPv4 in a32[0] and IPv6; zero: none). Out of sync at its hello (a
 * restarted mux), with a VIP of env's committed table probed through it,
 * it fails (mgr_vip_probe_failing) until it answers a probe; in sync (it
 * kept running through a manager's restart), it keeps what it had.
 */
void mgr_vip_probe_hello(struct mgr_vip_probe *v, const struct mgr_vip_env *env, int i,
	const char *id, const struct lb_addr *addr, const struct lb_addr *addr6);

/* Interval due: judge the last round of probes (fencing) and send the next. */
void mgr_vip_probe_tick(struct mgr_vip_probe *v, const struct mgr_vip_env *env, uint64_t now);

/* Read the replies waiting on the socket. */
void mgr_vip_probe_io(struct mgr_vip_probe *v, const struct mgr_vip_env *env, uint64_t now);

/* When mgr_vip_probe_tick has something to do (UINT64_MAX: never). */
uint64_t mgr_vip_probe_next_deadline(const struct mgr_vip_probe *v);

/*
 * Do member i's probes fail (some VIP unanswered `failures` intervals in a
 * row, or none answered since its last hello)? why: which VIP through
 * which address. False when probing is off, the committed table (env) has
 * no VIP probed through the member or the member is not probed. A mux stays withdrawn while true
 * (core/mgr_notice.h): a restarted or resynced one announces only once it
 * has answered a probe.
 */
bool mgr_vip_probe_failing(
	const struct mgr_vip_probe *v, const struct mgr_vip_env *env, int i, char *why, size_t len);

/* status: the "vip probes" line and JSON "vip_probes":{...}. */
void mgr_vip_probe_view(const struct mgr_vip_probe *v, const struct mgr_vip_env *env,
	struct mgr_buf *b, struct mgr_buf *j, uint64_t now);

/*
 * status, member i: a line under the member's row and the JSON field
 * ,"vip_probe":null|{...} (appended inside the member's object).
 */
void mgr_vip_probe_view_member(const struct mgr_vip_probe *v, const struct mgr_vip_env *env, int i,
	struct mgr_buf *b, struct mgr_buf *j, uint64_t now);

/*
 * Member i's probes since it said hello: sent, answered, and the
 * intervals in a row its worst VIP went unanswered. false when it is not
 * probed (no probe address, or probing off). For the metrics.
 */
bool mgr_vip_probe_member(const struct mgr_vip_probe *v, int i, uint64_t *sent, uint64_t *answered,
	uint32_t *failing);

#endif /* MGR_VIP_PROBE_H */
