/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the VIP prober: its state, shared by mgr_vip_probe.c (probes,
 * answers, verdicts) and mgr_vip_probe_view.c (status and metrics). Nothing
 * else includes it.
 */
#ifndef MGR_VIP_PROBE_INT_H
#define MGR_VIP_PROBE_INT_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>

#include "lb_addr.h"
#include "mgr_vip_probe.h"

/*
 * One (mux, VIP address) pair, probed once per interval: an IPv4 VIP
 * through the mux's IPv4 tunnel address (4in4), an IPv6 one through its
 * IPv6 tunnel address (6in6). A VIP of a family the mux gave no probe
 * address of is not probed through it.
 */
struct vp_target {
	int tg_member;
	struct lb_host_addr tg_vip;
	uint64_t tg_nonce;
	uint64_t tg_sent_ms;
	bool tg_out;	  /* sent, not answered yet */
	uint32_t tg_fail; /* intervals in a row without an answer */
};

/* What member i's probes say. */
struct vp_member {
	lb_be32_t vm_addr;	 /* its tunnel address, 0: not probed */
	lb_be32_t vm_src;	 /* the manager's address toward it */
	struct lb_addr vm_addr6; /* its IPv6 tunnel address, zero: none */
	struct lb_addr vm_src6;	 /* the manager's IPv6 address toward it */
	uint64_t vm_answer_ms;	 /* last answer, 0: none yet */
	uint64_t vm_version;	 /* the version it answered with */
	uint32_t vm_fail;	 /* the worst of its targets */
	struct lb_host_addr vm_fail_vip;
	uint32_t vm_vips; /* VIP addresses probed through it */
	uint64_t vm_sent, vm_answered;
	/*
	 * Said hello out of sync (restarted), or fenced by its probes, and
	 * not answered since. A mux's failures are forgotten while it is
	 * disconnected (it is no target), so a restarted one would look
	 * healthy until it failed `failures` probes again: it stays
	 * "failing" until it answers one.
	 */
	bool vm_await;
};

struct mgr_vip_probe {
	uint32_t vp_interval_ms;
	uint32_t vp_failures;	     /* intervals in a row that fence */
	uint32_t vp_vote_timeout_ms; /* how long a new version may take to reach a mux */
	mgr_vip_fence_fn vp_fence;
	void *vp_fence_ctx;
	int vp_tx;	   /* raw IPPROTO_IPIP: we write the inner packet */
	int vp_rx;	   /* raw ICMP: echo replies only */
	int vp_tx6;	   /* raw IPv6 next header 41: we write the inner IPv6 packet */
	int vp_rx6;	   /* raw ICMPv6: echo replies only */
	char vp_off[160];  /* "" when on */
	char vp_off6[160]; /* IPv6 alone: "" when on */
	uint16_t vp_id;
	uint64_t vp_next_ms;  /* the next probes go out */
	uint64_t vp_judge_ms; /* what is still out fails (half an interval), 0: none out */
	uint64_t vp_batch_ms; /* the interval's next batch goes out, 0: all are out */
	uint32_t vp_batch_gap_ms;
	uint32_t vp_sent_k; /* the interval's targets sent so far */
	uint64_t vp_rand;
	uint64_t vp_seen_version; /* committed version, and since when */
	uint64_t vp_seen_ms;
	uint32_t vp_n;
	struct vp_target *vp_tg;
	struct vp_member vp_mb[MGR_MAX_MEMBERS];
	uint64_t vp_sent, vp_answered, vp_send_errors, vp_fences;
	bool vp_full_logged;
};

static inline const char *
ip_str(lb_be32_t a, char *buf, size_t len)
{
	struct in_addr ia = {.s_addr = a};

	return inet_ntop(AF_INET, &ia, buf, (socklen_t)len) != NULL ? buf : "?";
}

#endif /* MGR_VIP_PROBE_INT_H */
