/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/icmp.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lb_addr.h"
#include "lb_csum.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "lb_log.h"
#include "mgr_text.h"
#include "mgr_vip_probe.h"
#include "mgr_vip_probe_int.h"

#define VP_MAX_TARGETS 65535 /* the ICMP sequence number names the target */
#define VP_SEND_BATCH 64     /* probes sent between two reads of the answers */
#define VP_PKT_LEN                                                                                 \
	(sizeof(struct lb_ipv4_hdr) + sizeof(struct lb_icmp_hdr) + sizeof(struct lb_vprobe))
#define VP_PKT6_LEN                                                                                \
	(sizeof(struct lb_ipv6_hdr) + sizeof(struct lb_icmp_hdr) + sizeof(struct lb_vprobe))

static uint64_t
vp_rand(struct mgr_vip_probe *v)
{
	/* xorshift64*: nonces need to be unguessable to a stranger only loosely */
	v->vp_rand ^= v->vp_rand >> 12;
	v->vp_rand ^= v->vp_rand << 25;
	v->vp_rand ^= v->vp_rand >> 27;
	return v->vp_rand * 0x2545f4914f6cdd1dULL;
}

static const char *
ha_str(const struct lb_host_addr *a, char *buf, size_t len)
{
	return lb_addr_ntop(a->af, &a->a, buf, len);
}

/* The member's tunnel address for a VIP of family af ("?" when none). */
static const char *
via_str(const struct vp_member *vm, uint8_t af, char *buf, size_t len)
{
	return af == LB_AF_INET6 ? lb_addr_ntop(LB_AF_INET6, &vm->vm_addr6, buf, len)
				 : ip_str(vm->vm_addr, buf, len);
}

/*
 * The IPv6 sockets, apart: a host without IPv6 keeps probing IPv4 VIPs
 * (vp_off6 says why IPv6 ones are not).
 */
static void
open6(struct mgr_vip_probe *v, const struct sock_fprog *drop)
{
	struct icmp6_filter f;
	const char *what = "socket(AF_INET6, IPPROTO_IPV6)";

	v->vp_tx6 = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_IPV6);
	if (v->vp_tx6 >= 0) {
		what = "socket(IPPROTO_ICMPV6)";
		v->vp_rx6 =
			socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMPV6);
	}
	if (v->vp_tx6 < 0 || v->vp_rx6 < 0) {
		snprintf(v->vp_off6, sizeof(v->vp_off6), "IPv6 off: %s: %s", what, strerror(errno));
		LB_WARN("VIP probes: %s", v->vp_off6);
		if (v->vp_tx6 >= 0)
			close(v->vp_tx6);
		v->vp_tx6 = v->vp_rx6 = -1;
		return;
	}
	if (setsockopt(v->vp_tx6, SOL_SOCKET, SO_ATTACH_FILTER, drop, sizeof(*drop)) != 0)
		LB_WARN("VIP probes: SO_ATTACH_FILTER: %s (IPv6-in-IPv6 to this host queues "
			"unread)",
			strerror(errno));
	ICMP6_FILTER_SETBLOCKALL(&f);
	ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
	if (setsockopt(v->vp_rx6, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f)) != 0)
		LB_WARN("VIP probes: ICMP6_FILTER: %s", strerror(errno));
}

/* Close every socket open (and mark them all closed). */
static void
vp_close(struct mgr_vip_probe *v)
{
	if (v->vp_tx >= 0)
		close(v->vp_tx);
	if (v->vp_rx >= 0)
		close(v->vp_rx);
	if (v->vp_tx6 >= 0)
		close(v->vp_tx6);
	if (v->vp_rx6 >= 0)
		close(v->vp_rx6);
	v->vp_tx = v->vp_rx = v->vp_tx6 = v->vp_rx6 = -1;
}

static void
vp_off(struct mgr_vip_probe *v, const char *what)
{
	snprintf(v->vp_off, sizeof(v->vp_off), "off: %s: %s%s", what, strerror(errno),
		errno == EPERM ? " (raw sockets need root or CAP_NET_RAW)" : "");
	LB_WARN("VIP probes %s", v->vp_off);
	vp_close(v);
}

struct mgr_vip_probe *
mgr_vip_probe_new(uint32_t interval_ms, uint32_t failures, uint32_t vote_timeout_ms,
	mgr_vip_fence_fn fence, void *ctx, uint64_t now)
{
	/* The send socket never reads: a filter that keeps nothing. */
	struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = {.len = 1, .filter = &drop};
	struct icmp_filter f = {.data = ~(1u << ICMP_ECHOREPLY)};
	struct mgr_vip_probe *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return NULL;
	v->vp_interval_ms = interval_ms;
	v->vp_failures = failures;
	v->vp_vote_timeout_ms = vote_timeout_ms;
	v->vp_fence = fence;
	v->vp_fence_ctx = ctx;
	v->vp_tx = v->vp_rx = v->vp_tx6 = v->vp_rx6 = -1;
	if (interval_ms == 0) {
		snprintf(v->vp_off, sizeof(v->vp_off), "off (vip_probe_interval_ms = 0)");
		return v;
	}
	if (getrandom(&v->vp_rand, sizeof(v->vp_rand), 0) != sizeof(v->vp_rand) || v->vp_rand == 0)
		v->vp_rand = now * 0x9e3779b97f4a7c15ULL | 1;
	v->vp_id = (uint16_t)vp_rand(v);
	v->vp_tx = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_IPIP);
	if (v->vp_tx < 0) {
		vp_off(v, "socket(IPPROTO_IPIP)");
		return v;
	}
	if (setsockopt(v->vp_tx, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0)
		LB_WARN("VIP probes: SO_ATTACH_FILTER: %s (IP-in-IP to this host queues unread)",
			strerror(errno));
	v->vp_rx = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (v->vp_rx < 0) {
		vp_off(v, "socket(IPPROTO_ICMP)");
		return v;
	}
	if (setsockopt(v->vp_rx, SOL_RAW, ICMP_FILTER, &f, sizeof(f)) != 0)
		LB_WARN("VIP probes: ICMP_FILTER: %s", strerror(errno));
	open6(v, &prog);
	v->vp_next_ms = now + interval_ms;
	LB_INFO("VIP probes every %u ms through every mux; %u unanswered in a row fence it",
		interval_ms, failures);
	return v;
}

void
mgr_vip_probe_free(struct mgr_vip_probe *v)
{
	if (v == NULL)
		return;
	vp_close(v);
	free(v->vp_tg);
	free(v);
}

int
mgr_vip_probe_fd(const struct mgr_vip_probe *v)
{
	return v != NULL ? v->vp_rx : -1;
}

int
mgr_vip_probe_fd6(const struct mgr_vip_probe *v)
{
	return v != NULL && v->vp_rx >= 0 ? v->vp_rx6 : -1;
}

uint64_t
mgr_vip_probe_next_deadline(const struct mgr_vip_probe *v)
{
	uint64_t t;

	if (v == NULL || v->vp_rx < 0)
		return UINT64_MAX;
	t = v->vp_next_ms;
	if (v->vp_judge_ms != 0 && v->vp_judge_ms < t)
		t = v->vp_judge_ms;
	if (v->vp_batch_ms != 0 && v->vp_batch_ms < t)
		t = v->vp_batch_ms;
	return t;
}

/*
 * The source address the kernel picks toward sa (a connected UDP socket's
 * name), into sa itself; false when it has no route.
 */
static bool
source_of(struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = connect(fd, sa, len) == 0 && getsockname(fd, sa, &len) == 0;
	close(fd);
	return ok;
}

/* The source address the kernel picks toward addr (0 if it has no route). */
static lb_be32_t
source_toward(lb_be32_t addr)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = addr};

	return source_of((struct sockaddr *)&sa, sizeof(sa)) ? sa.sin_addr.s_addr : 0;
}

/* The source address the kernel picks toward an IPv6 addr (zero if no route). */
static struct lb_addr
source_toward6(const struct lb_addr *addr)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons(9)};
	struct lb_addr src = {0};

	memcpy(&sa.sin6_addr, addr->a8, 16);
	if (source_of((struct sockaddr *)&sa, sizeof(sa)))
		memcpy(src.a8, &sa.sin6_addr, 16);
	return src;
}

/* Is VIP probed through member vm: has it a probe address of the VIP's family? */
static bool
probed_through(const struct mgr_vip_probe *v, const struct vp_member *vm, uint8_t af)
{
	if (af == LB_AF_INET6)
		return !lb_addr_is_zero(&vm->vm_addr6) && v->vp_tx6 >= 0;
	return vm->vm_addr != 0;
}

/* Services of table ft whose VIP is probed through vm (0: nothing to hold it for). */
static uint32_t
probed_vips(const struct mgr_vip_probe *v, const struct vp_member *vm, const struct lb_ftable *ft)
{
	uint32_t s, n = 0;

	for (s = 0; ft != NULL && s < ft->n_services; s++) {
		uint8_t af = ft->services[s].af;

		n += (af == LB_AF_INET6 ? v->vp_rx6 >= 0 : v->vp_rx >= 0) &&
		     probed_through(v, vm, af);
	}
	return n;
}

void
mgr_vip_probe_hello(struct mgr_vip_probe *v, const struct mgr_vip_env *env, int i, const char *id,
	const struct lb_addr *addr, const struct lb_addr *addr6)
{
	struct vp_member *vm;
	char a[LB_ADDR_STRLEN], s[LB_ADDR_STRLEN];

	if (v == NULL || i < 0 || i >= MGR_MAX_MEMBERS)
		return;
	vm = &v->vp_mb[i];
	if (vm->vm_addr != addr->a32[0] || (vm->vm_addr != 0 && vm->vm_src == 0)) {
		vm->vm_addr = addr->a32[0];
		vm->vm_src = vm->vm_addr != 0 ? source_toward(vm->vm_addr) : 0;
		if (vm->vm_addr != 0 && v->vp_rx >= 0)
			LB_INFO("member %s: VIP probes through %s (from %s)", id,
				ip_str(vm->vm_addr, a, sizeof(a)),
				ip_str(vm->vm_src, s, sizeof(s)));
	}
	if (!lb_addr_eq(&vm->vm_addr6, addr6) ||
		(!lb_addr_is_zero(addr6) && lb_addr_is_zero(&vm->vm_src6))) {
		vm->vm_addr6 = *addr6;
		memset(&vm->vm_src6, 0, sizeof(vm->vm_src6));
		if (!lb_addr_is_zero(addr6))
			vm->vm_src6 = source_toward6(addr6);
		if (!lb_addr_is_zero(addr6) && v->vp_rx6 >= 0)
			LB_INFO("member %s: IPv6 VIP probes through %s (from %s)", id,
				lb_addr_ntop(LB_AF_INET6, addr6, a, sizeof(a)),
				lb_addr_ntop(LB_AF_INET6, &vm->vm_src6, s, sizeof(s)));
	}
	/*
	 * A hello out of sync (a restarted mux says version 0, one that fell
	 * behind an older one) waits for a probe answer before the manager
	 * says in sync; the hello it says again once its snapshot is applied
	 * keeps the wait. A hello in sync leaves it as it was: a mux that kept
	 * running through a manager's restart (or a reconnect) keeps its
	 * routes, where waiting would withdraw every mux at once. With no VIP
	 * there is nothing to wait for (the VIPs a commit adds later are
	 * announced as on any running mux), and the committed table decides,
	 * not the last interval's targets: a hello within an interval of the
	 * first VIP's commit waits too.
	 */
	if (env->commit->members[i].state != MGR_MEMBER_IN_SYNC)
		vm->vm_await = probed_vips(v, vm, env->committed) != 0;
}

/* The probe payload after an echo header: the magic and a fresh nonce. */
static void
fill_probe(struct mgr_vip_probe *v, struct vp_target *t, struct lb_icmp_hdr *icmp, uint8_t type,
	uint16_t seq)
{
	struct lb_vprobe *vp = (struct lb_vprobe *)(icmp + 1);

	t->tg_nonce = vp_rand(v);
	icmp->type = type;
	icmp->echo.id = htons(v->vp_id);
	icmp->echo.seq = htons(seq);
	memcpy(vp->magic, LB_VPROBE_MAGIC, sizeof(vp->magic));
	memcpy(vp->nonce, &t->tg_nonce, sizeof(vp->nonce));
}

/*
 * An ICMPv6 echo request from the manager's address toward the mux to the
 * VIP, inside IPv6-in-IPv6 to the mux's IPv6 tunnel address (the kernel
 * writes the outer header, next header 41, from that same source).
 */
static int
send_probe6(struct mgr_vip_probe *v, struct vp_target *t, uint16_t seq)
{
	const struct vp_member *vm = &v->vp_mb[t->tg_member];
	uint8_t pkt[VP_PKT6_LEN];
	struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)pkt;
	struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(ip + 1);
	struct sockaddr_in6 to = {.sin6_family = AF_INET6};
	size_t l4 = sizeof(*icmp) + sizeof(struct lb_vprobe);

	memset(pkt, 0, sizeof(pkt));
	ip->vtc_flow = htonl(6u << 28);
	ip->payload_len = htons((uint16_t)l4);
	ip->next_hdr = LB_IPPROTO_ICMPV6;
	ip->hop_limit = 64;
	memcpy(ip->src, vm->vm_src6.a8, 16);
	memcpy(ip->dst, t->tg_vip.a.a8, 16);
	fill_probe(v, t, icmp, LB_ICMP6_ECHO, seq);
	icmp->csum = lb_ipv6_l4_csum(ip->src, ip->dst, LB_IPPROTO_ICMPV6, icmp, l4);
	memcpy(&to.sin6_addr, vm->vm_addr6.a8, 16);
	return sendto(v->vp_tx6, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to)) < 0 ? -1
											      : 0;
}

static void
send_probe(struct mgr_vip_probe *v, struct vp_target *t, uint16_t seq, uint64_t now)
{
	struct vp_member *vm = &v->vp_mb[t->tg_member];
	uint8_t pkt[VP_PKT_LEN];
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)pkt;
	struct lb_icmp_hdr *icmp = (struct lb_icmp_hdr *)(ip + 1);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr.s_addr = vm->vm_addr};
	int rc;

	t->tg_sent_ms = now;
	t->tg_out = true;
	vm->vm_sent++;
	v->vp_sent++;
	if (t->tg_vip.af == LB_AF_INET6) {
		/* A failed send is a probe that will not be answered: it counts as one. */
		if (send_probe6(v, t, seq) != 0)
			v->vp_send_errors++;
		return;
	}
	memset(pkt, 0, sizeof(pkt));
	lb_ipv4_hdr_init(
		ip, LB_IPPROTO_ICMP, vm->vm_src, t->tg_vip.a.a32[0], (uint16_t)sizeof(pkt), 64);
	ip->id = htons(seq);
	ip->csum = lb_ipv4_hdr_csum(ip, sizeof(*ip));
	fill_probe(v, t, icmp, LB_ICMP_ECHO, seq);
	icmp->csum = lb_icmp_csum(icmp, sizeof(*icmp) + sizeof(struct lb_vprobe));
	rc = (int)sendto(v->vp_tx, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to));
	if (rc < 0)
		v->vp_send_errors++;
}

/* Through the commit state machine (the caller's callback): an in-sync member only. */
static void
fence(struct mgr_vip_probe *v, const struct mgr_vip_env *env, int i, const char *why, uint64_t now)
{
	if (env->commit->members[i].state != MGR_MEMBER_IN_SYNC)
		return;
	/* Until it answers again, even across a reconnect (which forgets its failures). */
	v->vp_mb[i].vm_await = true;
	v->vp_fences++;
	v->vp_fence(v->vp_fence_ctx, i, why, now);
}

/* VIP addresses in (family, bytes) order: IPv4 first, each in numeric order. */
static int
vip_cmp(const void *a, const void *b)
{
	const struct lb_host_addr *x = a, *y = b;

	if (x->af != y->af)
		return x->af < y->af ? -1 : 1;
	return memcmp(x->a.a8, y->a.a8, 16);
}

/* The committed table's distinct VIP addresses, sorted; *n of them (NULL if none). */
static struct lb_host_addr *
vip_list(const struct lb_ftable *ft, uint32_t *n)
{
	struct lb_host_addr *vips = ft->n_services ? malloc(ft->n_services * sizeof(*vips)) : NULL;
	uint32_t s, k = 0;

	*n = 0;
	if (vips == NULL)
		return NULL;
	for (s = 0; s < ft->n_services; s++) {
		vips[k].af = ft->services[s].af;
		vips[k++].a = ft->services[s].vip;
	}
	qsort(vips, k, sizeof(*vips), vip_cmp);
	for (s = 0; s < k; s++)
		if (*n == 0 || vip_cmp(&vips[*n - 1], &vips[s]) != 0)
			vips[(*n)++] = vips[s];
	return vips;
}

static void
note_committed(struct mgr_vip_probe *v, const struct mgr_vip_env *env, uint64_t now)
{
	if (v->vp_seen_version != env->version) {
		v->vp_seen_version = env->version;
		v->vp_seen_ms = now;
	}
}

/* Half an interval after they went out: what is still unanswered failed. */
static void
judge(struct mgr_vip_probe *v, const struct mgr_vip_env *env, uint64_t now)
{
	const struct mgr_commit *c = env->commit;
	uint32_t i, k;

	for (i = 0; i < MGR_MAX_MEMBERS; i++)
		v->vp_mb[i].vm_fail = 0;
	for (k = 0; k < v->vp_n; k++) {
		struct vp_target *t = &v->vp_tg[k];
		struct vp_member *vm = &v->vp_mb[t->tg_member];

		if (t->tg_out) {
			t->tg_fail++;
			t->tg_out = false;
		}
		if (t->tg_fail > vm->vm_fail) {
			vm->vm_fail = t->tg_fail;
			vm->vm_fail_vip = t->tg_vip;
		}
	}
	for (i = 0; i < c->n_members; i++) {
		struct vp_member *vm = &v->vp_mb[i];
		char why[LB_MSG_TEXT], a[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN];

		if (vm->vm_fail < v->vp_failures || !env->connected(env->ctx, (int)i))
			continue;
		snprintf(why, sizeof(why), "VIP probe: no answer for %s through %s (%u in a row)",
			ha_str(&vm->vm_fail_vip, a, sizeof(a)),
			via_str(vm, vm->vm_fail_vip.af, b, sizeof(b)), vm->vm_fail);
		fence(v, env, (int)i, why, now);
	}
}

/*
 * The interval's probes go out in batches spread over its first quarter,
 * the answers read after each: a mux (its port's ring) and the manager's
 * raw sockets (a few hundred answers) each take a batch at a time, not
 * thousands at once.
 */
static void
send_batches(struct mgr_vip_probe *v, const struct mgr_vip_env *env, uint64_t now)
{
	uint32_t end;

	if (v->vp_batch_ms == 0 || now < v->vp_batch_ms)
		return;
	end = v->vp_sent_k + VP_SEND_BATCH < v->vp_n ? v->vp_sent_k + VP_SEND_BATCH : v->vp_n;
	for (; v->vp_sent_k < end; v->vp_sent_k++)
		send_probe(v, &v->vp_tg[v->vp_sent_k], (uint16_t)v->vp_sent_k, now);
	mgr_vip_probe_io(v, env, now);
	v->vp_batch_ms = v->vp_sent_k < v->vp_n ? now + v->vp_batch_gap_ms : 0;
}

void
mgr_vip_probe_tick(struct mgr_vip_probe *v, const struct mgr_vip_env *env, uint64_t now)
{
	const struct mgr_commit *c = env->commit;
	struct vp_target *old, *tg;
	uint32_t i, k, n_old, n_vips, n = 0, o = 0;
	struct lb_host_addr *vips;

	if (v == NULL || v->vp_rx < 0)
		return;
	send_batches(v, env, now);
	if (v->vp_judge_ms != 0 && now >= v->vp_judge_ms) {
		/* What came in while the loop was busy is an answer, not a failure. */
		mgr_vip_probe_io(v, env, now);
		v->vp_judge_ms = 0;
		v->vp_batch_ms = 0; /* a loop too slow to send them all: the rest wait */
		note_committed(v, env, now);
		judge(v, env, now);
	}
	if (now < v->vp_next_ms)
		return;
	v->vp_next_ms = now + v->vp_interval_ms;
	if (!env->started)
		return;
	note_committed(v, env, now);
	for (i = 0; i < MGR_MAX_MEMBERS; i++)
		v->vp_mb[i].vm_vips = 0;

	/* This interval's targets: every connected mux with an address, every VIP. */
	vips = vip_list(env->committed, &n_vips);
	old = v->vp_tg;
	n_old = v->vp_n;
	tg = NULL;
	if (n_vips != 0)
		tg = calloc((size_t)c->n_members * n_vips, sizeof(*tg));
	for (i = 0; tg != NULL && i < c->n_members; i++) {
		const struct vp_member *vm = &v->vp_mb[i];

		if ((vm->vm_addr == 0 && lb_addr_is_zero(&vm->vm_addr6)) ||
			!env->connected(env->ctx, (int)i) || c->members[i].role != LB_ROLE_MUX)
			continue;
		for (k = 0; k < n_vips && n < VP_MAX_TARGETS; k++) {
			struct vp_target *t;

			if (!probed_through(v, vm, vips[k].af))
				continue;
			t = &tg[n++];
			t->tg_member = (int)i;
			t->tg_vip = vips[k];
			/* Both lists are in (member, VIP) order: carry the failures over. */
			while (o < n_old && (old[o].tg_member < (int)i ||
						    (old[o].tg_member == (int)i &&
							    vip_cmp(&old[o].tg_vip, &vips[k]) < 0)))
				o++;
			if (o < n_old && old[o].tg_member == (int)i &&
				vip_cmp(&old[o].tg_vip, &vips[k]) == 0)
				t->tg_fail = old[o].tg_fail;
			v->vp_mb[i].vm_vips++;
		}
	}
	if (n == VP_MAX_TARGETS && !v->vp_full_logged) {
		LB_WARN("VIP probes: more than %d (mux, VIP) pairs; the rest are not probed",
			VP_MAX_TARGETS);
		v->vp_full_logged = true;
	}
	free(vips);
	free(old);
	v->vp_tg = tg;
	v->vp_n = tg != NULL ? n : 0;
	/*
	 * The muxes answer within microseconds, and a raw socket's buffer
	 * holds a few hundred answers: sent at once, the last targets'
	 * answers were lost every interval. Batches, the answers read after
	 * each (send_batches()), the first now.
	 */
	k = (v->vp_n + VP_SEND_BATCH - 1) / VP_SEND_BATCH;
	v->vp_batch_gap_ms = k > 1 ? v->vp_interval_ms / 4 / (k - 1) : 0;
	if (v->vp_batch_gap_ms == 0)
		v->vp_batch_gap_ms = 1;
	v->vp_sent_k = 0;
	v->vp_batch_ms = v->vp_n != 0 ? now : 0;
	send_batches(v, env, now);
	if (v->vp_n != 0)
		v->vp_judge_ms = now + v->vp_interval_ms / 2;
}

/*
 * An echo reply of family af from src: the ICMP (or ICMPv6) header at p,
 * len bytes of it and what follows.
 */
static void
on_reply(struct mgr_vip_probe *v, const struct mgr_vip_env *env, const struct lb_host_addr *src,
	const uint8_t *p, size_t len, uint64_t now)
{
	const struct lb_icmp_hdr *icmp = (const struct lb_icmp_hdr *)p;
	const struct lb_vprobe *vp = (const struct lb_vprobe *)(icmp + 1);
	struct vp_target *t;
	struct vp_member *vm;
	uint64_t nonce, version;
	uint16_t seq;

	/* Not an echo reply with a whole probe payload. */
	if (len < sizeof(*icmp) + sizeof(*vp))
		return;
	if (icmp->type != (src->af == LB_AF_INET6 ? LB_ICMP6_ECHO_REPLY : LB_ICMP_ECHO_REPLY) ||
		ntohs(icmp->echo.id) != v->vp_id ||
		memcmp(vp->magic, LB_VPROBE_MAGIC, sizeof(vp->magic)) != 0)
		return;
	seq = ntohs(icmp->echo.seq);
	memcpy(&nonce, vp->nonce, sizeof(nonce));
	/* Another target's, a late answer to an earlier interval, or forged. */
	if (seq >= v->vp_n)
		return;
	t = &v->vp_tg[seq];
	if (!t->tg_out || t->tg_nonce != nonce || vip_cmp(src, &t->tg_vip) != 0)
		return;
	vm = &v->vp_mb[t->tg_member];
	version = lb_be64_to_cpu(vp->version);
	if (t->tg_fail >= v->vp_failures) {
		char a[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN];

		LB_INFO("member %s: VIP %s answers through %s again (version %" PRIu64
			") after %u failed probes",
			env->commit->members[t->tg_member].id, ha_str(&t->tg_vip, a, sizeof(a)),
			via_str(vm, t->tg_vip.af, b, sizeof(b)), version, t->tg_fail);
	}
	t->tg_out = false;
	t->tg_fail = 0;
	vm->vm_await = false;
	if (vm->vm_fail != 0) {
		uint32_t k;

		vm->vm_fail = 0;
		for (k = 0; k < v->vp_n; k++)
			if (v->vp_tg[k].tg_member == t->tg_member &&
				v->vp_tg[k].tg_fail > vm->vm_fail) {
				vm->vm_fail = v->vp_tg[k].tg_fail;
				vm->vm_fail_vip = v->vp_tg[k].tg_vip;
			}
	}
	vm->vm_answer_ms = now;
	vm->vm_version = version;
	vm->vm_answered++;
	v->vp_answered++;
	/* Stale: the committed version has had a vote timeout to reach it. */
	if (version < env->version && t->tg_sent_ms >= v->vp_seen_ms + v->vp_vote_timeout_ms) {
		char why[LB_MSG_TEXT];

		snprintf(why, sizeof(why),
			"VIP probe: answers with version %" PRIu64 ", committed is %" PRIu64,
			version, env->version);
		fence(v, env, t->tg_member, why, now);
	}
}

/* An IPv4 reply: raw ICMP sockets are handed the IP header, skipped here. */
static void
on_reply4(struct mgr_vip_probe *v, const struct mgr_vip_env *env, const uint8_t *p, size_t len,
	uint64_t now)
{
	const struct lb_ipv4_hdr *ip = (const struct lb_ipv4_hdr *)p;
	struct lb_host_addr src = {.af = LB_AF_INET};
	size_t ihl;

	if (len < sizeof(*ip))
		return;
	ihl = (size_t)(ip->ver_ihl & 0xf) * 4;
	if (ihl < sizeof(*ip) || len < ihl)
		return;
	src.a.a32[0] = ip->src;
	on_reply(v, env, &src, p + ihl, len - ihl, now);
}

void
mgr_vip_probe_io(struct mgr_vip_probe *v, const struct mgr_vip_env *env, uint64_t now)
{
	uint8_t buf[2048];
	ssize_t n;
	int k;

	if (v == NULL || v->vp_rx < 0)
		return;
	note_committed(v, env, now);
	/* Bounded: the loop has other work; what is left wakes poll again. */
	for (k = 0; k < 1024; k++) {
		n = recv(v->vp_rx, buf, sizeof(buf), 0);
		if (n < 0)
			break;
		on_reply4(v, env, buf, (size_t)n, now);
	}
	/* Raw ICMPv6 sockets get the message alone; the source comes with it. */
	for (k = 0; v->vp_rx6 >= 0 && k < 1024; k++) {
		struct sockaddr_in6 from;
		socklen_t fl = sizeof(from);
		struct lb_host_addr src = {.af = LB_AF_INET6};

		n = recvfrom(v->vp_rx6, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			break;
		memcpy(src.a.a8, &from.sin6_addr, 16);
		on_reply(v, env, &src, buf, (size_t)n, now);
	}
}

bool
mgr_vip_probe_failing(
	const struct mgr_vip_probe *v, const struct mgr_vip_env *env, int i, char *why, size_t len)
{
	const struct vp_member *vm;
	char a[LB_ADDR_STRLEN], b[LB_ADDR_STRLEN];

	if (v == NULL || i < 0 || i >= MGR_MAX_MEMBERS)
		return false;
	vm = &v->vp_mb[i];
	if (probed_vips(v, vm, env->committed) == 0)
		return false;
	if (vm->vm_fail < v->vp_failures && vm->vm_await) {
		bool via4 = v->vp_rx >= 0 && probed_through(v, vm, LB_AF_INET);

		snprintf(why, len, "no VIP probe answered through %s since its hello yet",
			via_str(vm, via4 ? LB_AF_INET : LB_AF_INET6, b, sizeof(b)));
		return true;
	}
	if (vm->vm_fail < v->vp_failures)
		return false;
	snprintf(why, len, "no answer for %s through %s (%u in a row)",
		ha_str(&vm->vm_fail_vip, a, sizeof(a)),
		via_str(vm, vm->vm_fail_vip.af, b, sizeof(b)), vm->vm_fail);
	return true;
}
