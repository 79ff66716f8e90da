/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admission rules: names, equality, checks and writing them back as a
 * file (lb_limits.h). Loading them is lb_config.c's, with the table.
 */
#include <stdio.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "lb_flow.h"
#include "lb_hdr.h"
#include "lb_limits.h"

const char *const lb_limit_kind_names[LB_LIM_N] = {
	"per_source", "new_per_second", "max_connections"};
const char *const lb_limit_mode_names[2] = {"monitor", "intercept"};
const char *const lb_refuse_names[3] = {"drop", "rst", "icmp"};

const char *const lb_limit_counter_names[4] = {"checked", "passed", "would_deny", "denied"};

void
lb_limit_counter_name(char *buf, size_t len, const struct lb_addr *vip, uint8_t af, uint16_t port,
	uint8_t proto, int kind, int counter)
{
	static const char *const kinds[LB_LIM_N] = {"src", "rate", "conns"};
	static const char *const cnts[4] = {"chk", "pass", "wdeny", "deny"};
	static const struct lb_hash_seed name_seed; /* every mux and manager alike */
	char addr[LB_ADDR_STRLEN + 2];
	int n;

	if (kind >= LB_LIM_N || vip == NULL) {
		snprintf(buf, len, "limit.mux.%s", cnts[counter & 3]);
		return;
	}
	if (af == LB_AF_INET6) {
		addr[0] = '[';
		lb_addr_ntop(af, vip, addr + 1, sizeof(addr) - 2);
		strcat(addr, "]");
	} else
		lb_addr_ntop(af, vip, addr, sizeof(addr));
	n = snprintf(buf, len, "limit.%s:%u/%s.%s.%s", addr, port,
		proto == LB_IPPROTO_UDP ? "udp" : "tcp", kinds[kind], cnts[counter & 3]);
	if (n >= 0 && (size_t)n < len && (size_t)n < LB_LIMIT_COUNTER_LEN)
		return;
	/* Too long for STATUS: the address's bytes hashed (an IPv4 name always fits). */
	snprintf(buf, len, "limit.6h%016llx:%u/%s.%s.%s",
		(unsigned long long)lb_siphash13(&name_seed, vip->a8, sizeof(vip->a8)), port,
		proto == LB_IPPROTO_UDP ? "udp" : "tcp", kinds[kind], cnts[counter & 3]);
}

void
lb_top_counter_name(
	char *buf, size_t len, uint32_t vip, uint16_t port, uint8_t proto, int rank, int field)
{
	static const char *const fields[3] = {"src", "n", "err"};
	const uint8_t *a = (const uint8_t *)&vip;

	snprintf(buf, len, "top.%u.%u.%u.%u:%u/%s.%d.%s", a[0], a[1], a[2], a[3], port,
		proto == LB_IPPROTO_UDP ? "udp" : "tcp", rank, fields[field % 3]);
}

int
lb_limit_name_find(const char *const *names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

void
lb_limit_name_list(const char *const *names, int n, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";

		used += (size_t)snprintf(buf + used, len - used, "%s%s", sep, names[i]);
	}
}

bool
lb_limits_any(const struct lb_svc_limits *l)
{
	int k;

	for (k = 0; k < LB_LIM_N; k++)
		if (l->rule[k].limit != 0)
			return true;
	return l->refuse != LB_REFUSE_DROP;
}

static uint8_t
prefix_of(const struct lb_svc_limits *l)
{
	return l->source_prefix == 0 ? 32 : l->source_prefix;
}

bool
lb_limits_equal(const struct lb_svc_limits *a, const struct lb_svc_limits *b)
{
	int k;

	for (k = 0; k < LB_LIM_N; k++)
		if (!lb_limit_rule_equal(&a->rule[k], &b->rule[k]))
			return false;
	return prefix_of(a) == prefix_of(b) && a->refuse == b->refuse;
}

/* The reason into err; the value of it all is -LB_EINVAL. */
#define fail(err, len, ...) (snprintf(err, len, __VA_ARGS__), -LB_EINVAL)

int
lb_limit_rule_check(const struct lb_limit_rule *r, const char *name, char *err, size_t len)
{
	if (r->limit > LB_LIMIT_MAX)
		return fail(err, len, "%s.limit: %u is out of range 0..%u", name, r->limit,
			LB_LIMIT_MAX);
	if (r->burst > LB_LIMIT_MAX)
		return fail(err, len, "%s.burst: %u is out of range 0..%u", name, r->burst,
			LB_LIMIT_MAX);
	if (r->mode > LB_LIMIT_INTERCEPT)
		return fail(err, len, "%s.mode: %u is not a mode (monitor or intercept)", name,
			r->mode);
	return 0;
}

int
lb_limits_check(const struct lb_svc_limits *l, uint8_t af, uint8_t proto, char *err, size_t len)
{
	char name[48];
	int k, rc;

	for (k = 0; k < LB_LIM_N; k++) {
		snprintf(name, sizeof(name), "limits.%s", lb_limit_kind_names[k]);
		rc = lb_limit_rule_check(&l->rule[k], name, err, len);
		if (rc != 0)
			return rc;
	}
	if (l->rule[LB_LIM_CONNS].burst != 0)
		return fail(err, len, "limits.max_connections.burst: a connection limit has none");
	if (l->source_prefix > lb_limit_prefix_max(af))
		return fail(err, len, "limits.per_source.prefix: /%u is out of range 1..%u",
			l->source_prefix, lb_limit_prefix_max(af));
	if (l->refuse > LB_REFUSE_ICMP)
		return fail(err, len, "limits.refuse: %u is not drop, rst or icmp", l->refuse);
	if (l->refuse == LB_REFUSE_RST && proto != LB_IPPROTO_TCP)
		return fail(err, len, "limits.refuse: rst needs a TCP service");
	return 0;
}

static void
tabs(FILE *f, int n)
{
	while (n-- > 0)
		fputc('\t', f);
}

void
lb_limit_rule_write(const struct lb_limit_rule *r, const char *name, FILE *f, int indent)
{
	if (r->limit == 0)
		return;
	tabs(f, indent);
	fprintf(f, "%s = { limit = %u; ", name, r->limit);
	if (r->burst != 0)
		fprintf(f, "burst = %u; ", r->burst);
	fprintf(f, "mode = \"%s\"; };\n", lb_limit_mode_names[r->mode & 1]);
}

void
lb_limits_write(const struct lb_svc_limits *l, FILE *f, int indent)
{
	int k;

	if (!lb_limits_any(l))
		return;
	tabs(f, indent);
	fprintf(f, "limits = {\n");
	for (k = 0; k < LB_LIM_N; k++) {
		const struct lb_limit_rule *r = &l->rule[k];

		if (r->limit == 0)
			continue;
		tabs(f, indent + 1);
		fprintf(f, "%s = { limit = %u; ", lb_limit_kind_names[k], r->limit);
		if (r->burst != 0)
			fprintf(f, "burst = %u; ", r->burst);
		if (k == LB_LIM_SOURCE)
			fprintf(f, "prefix = %u; ", prefix_of(l));
		fprintf(f, "mode = \"%s\"; };\n", lb_limit_mode_names[r->mode & 1]);
	}
	tabs(f, indent + 1);
	fprintf(f, "refuse = \"%s\";\n", lb_refuse_names[l->refuse <= 2 ? l->refuse : 0]);
	tabs(f, indent);
	fprintf(f, "};\n");
}

void
lb_limit_rule_str(
	const struct lb_limit_rule *r, const char *name, uint8_t prefix, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "%s=%u", name, r->limit);
	n = strlen(buf);
	if (r->burst != 0)
		snprintf(buf + n, len - n, " burst=%u", r->burst);
	n = strlen(buf);
	if (prefix != 0)
		snprintf(buf + n, len - n, " prefix=/%u", prefix);
	n = strlen(buf);
	snprintf(buf + n, len - n, " %s", lb_limit_mode_names[r->mode & 1]);
}

void
lb_limits_str(const struct lb_svc_limits *l, char *buf, size_t len)
{
	char one[96];
	size_t n = 0;
	int k;

	buf[0] = '\0';
	for (k = 0; k < LB_LIM_N; k++) {
		if (l->rule[k].limit == 0)
			continue;
		lb_limit_rule_str(&l->rule[k], lb_limit_kind_names[k],
			k == LB_LIM_SOURCE ? prefix_of(l) : 0, one, sizeof(one));
		snprintf(buf + n, len - n, "%s%s", n ? ", " : "", one);
		n = strlen(buf);
	}
	if (l->refuse != LB_REFUSE_DROP)
		snprintf(buf + n, len - n, "%srefuse=%s", n ? "; " : "",
			lb_refuse_names[l->refuse % 3]);
	if (buf[0] == '\0')
		snprintf(buf, len, "none");
}
