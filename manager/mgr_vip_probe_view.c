/* SPDX-License-Identifier: BSD-3-Clause */
/* The VIP prober in status and metrics (mgr_vip_probe.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lb_addr.h"
#include "mgr_text.h"
#include "mgr_vip_probe.h"
#include "mgr_vip_probe_int.h"

static uint64_t
age(uint64_t now, uint64_t then)
{
	return then == 0 || now < then ? 0 : now - then;
}

void
mgr_vip_probe_view(const struct mgr_vip_probe *v, const struct mgr_vip_env *env, struct mgr_buf *b,
	struct mgr_buf *j, uint64_t now)
{
	uint32_t i, muxes = 0;

	(void)now;
	if (v == NULL)
		return;
	mgr_buf_printf(j, ",\"vip_probes\":{\"on\":%s,\"off_reason\":",
		v->vp_off[0] == '\0' ? "true" : "false");
	mgr_buf_json_str(j, v->vp_off);
	mgr_buf_printf(j, ",\"ipv6_on\":%s,\"ipv6_off_reason\":",
		v->vp_off[0] == '\0' && v->vp_off6[0] == '\0' ? "true" : "false");
	mgr_buf_json_str(j, v->vp_off6);
	mgr_buf_printf(j,
		",\"interval_ms\":%u,\"failures\":%u,\"targets\":%u,\"sent\":%" PRIu64
		",\"answered\":%" PRIu64 ",\"send_errors\":%" PRIu64 ",\"fences\":%" PRIu64 "}",
		v->vp_interval_ms, v->vp_failures, v->vp_n, v->vp_sent, v->vp_answered,
		v->vp_send_errors, v->vp_fences);
	if (v->vp_off[0] != '\0') {
		mgr_buf_printf(b, "vip probes  %s\n", v->vp_off);
		return;
	}
	if (v->vp_off6[0] != '\0')
		mgr_buf_printf(b, "vip probes  %s\n", v->vp_off6);
	for (i = 0; i < env->commit->n_members; i++)
		muxes += v->vp_mb[i].vm_vips != 0;
	mgr_buf_printf(b,
		"vip probes  every %u ms, %u in a row fence: %u (mux, VIP) pairs through %u muxes, "
		"%" PRIu64 " sent, %" PRIu64 " answered, %" PRIu64 " fences\n",
		v->vp_interval_ms, v->vp_failures, v->vp_n, muxes, v->vp_sent, v->vp_answered,
		v->vp_fences);
}

void
mgr_vip_probe_view_member(const struct mgr_vip_probe *v, const struct mgr_vip_env *env, int i,
	struct mgr_buf *b, struct mgr_buf *j, uint64_t now)
{
	const struct mgr_member *mb = &env->commit->members[i];
	const struct vp_member *vm;
	bool by_probe = mb->state != MGR_MEMBER_IN_SYNC && strncmp(mb->why, "VIP probe:", 10) == 0;
	uint64_t a;
	char addr[LB_ADDR_STRLEN], addr6[LB_ADDR_STRLEN];

	if (v == NULL || v->vp_off[0] != '\0' ||
		(v->vp_mb[i].vm_addr == 0 && lb_addr_is_zero(&v->vp_mb[i].vm_addr6))) {
		mgr_buf_printf(j, ",\"vip_probe\":null");
		return;
	}
	vm = &v->vp_mb[i];
	a = age(now, vm->vm_answer_ms);
	addr[0] = addr6[0] = '\0';
	if (vm->vm_addr != 0)
		ip_str(vm->vm_addr, addr, sizeof(addr));
	if (!lb_addr_is_zero(&vm->vm_addr6))
		lb_addr_ntop(LB_AF_INET6, &vm->vm_addr6, addr6, sizeof(addr6));
	mgr_buf_printf(b, "  %-16s vip probes through %s%s%s: ", "", addr,
		addr[0] && addr6[0] ? " and " : "", addr6);
	if (vm->vm_answer_ms != 0)
		mgr_buf_printf(b, "last answer %" PRIu64 ".%01" PRIu64 "s ago at version %" PRIu64,
			a / 1000, (a % 1000) / 100, vm->vm_version);
	else
		mgr_buf_printf(b, "no answer yet");
	mgr_buf_printf(b, ", %u failures in a row%s\n", vm->vm_fail,
		by_probe ? "  ** FENCED by VIP probe **" : "");
	mgr_buf_printf(j,
		",\"vip_probe\":{\"address\":\"%s\",\"address6\":\"%s\",\"vips\":%u,"
		"\"last_answer_ms\":",
		addr, addr6, vm->vm_vips);
	if (vm->vm_answer_ms != 0)
		mgr_buf_printf(j, "%" PRIu64 ",\"version\":%" PRIu64, a, vm->vm_version);
	else
		mgr_buf_printf(j, "null,\"version\":null");
	mgr_buf_printf(j,
		",\"failures\":%u,\"sent\":%" PRIu64 ",\"answered\":%" PRIu64
		",\"fenced_by_probe\":%s}",
		vm->vm_fail, vm->vm_sent, vm->vm_answered, by_probe ? "true" : "false");
}

bool
mgr_vip_probe_member(
	const struct mgr_vip_probe *v, int i, uint64_t *sent, uint64_t *answered, uint32_t *failing)
{
	const struct vp_member *vm;

	if (v == NULL || v->vp_off[0] != '\0' || i < 0 || i >= MGR_MAX_MEMBERS ||
		(v->vp_mb[i].vm_addr == 0 && lb_addr_is_zero(&v->vp_mb[i].vm_addr6)))
		return false;
	vm = &v->vp_mb[i];
	*sent = vm->vm_sent;
	*answered = vm->vm_answered;
	*failing = vm->vm_fail;
	return true;
}
