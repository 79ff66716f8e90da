/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pool options: the operator's request survives the codec whole, the
 * manager's checks name the field that is wrong, HTTP status codes and
 * status lines are read as a probe must read them, the pool list keeps
 * only what differs from the defaults, history summaries carry the
 * reason a backend changed, and the withdraw thresholds (routing) are
 * judged as mgr_pool.h says, the rule against fail-open checked exactly.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_codec.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_hdr.h"
#include "mgr_pool.h"
#include "mgr_dip_probe.h"
#include "mgr_health.h"
#include "mgr_text.h"

static void
full_opts(struct lb_pool_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->given = LB_POOL_ALL;
	o->probe = LB_PROBE_HTTP;
	o->probe_port = 8081;
	snprintf(o->path, sizeof(o->path), "/healthz?x=1");
	snprintf(o->codes, sizeof(o->codes), "200-299,302");
	o->interval_s = 5;
	o->timeout_s = 2;
	o->healthy = 3;
	o->unhealthy = 4;
	o->drain_delay_s = 30;
	o->slow_start_s = 60;
	o->min_healthy = 2;
	o->min_healthy_pct = 50;
}

/* in through the codec: encoded (that must work), then decoded into out. */
static int
round_trip(const struct lb_msg *in, struct lb_msg *out, char *e, size_t elen)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	cr_assert_eq(lb_msg_encode(in, &buf, &len), 0);
	rc = lb_msg_decode(buf, len, out, e, elen);
	free(buf);
	return rc;
}

/*
 * in's pool options through the codec come back as they went: the fields
 * given, and the rest zero.
 */
static void
pool_round_trip(const struct lb_msg *in)
{
	struct lb_msg out;
	char e[128];

	cr_assert_eq(round_trip(in, &out, e, sizeof(e)), 0, "%s", e);
	cr_assert_eq(out.ctl.pool.given, in->ctl.pool.given);
	cr_assert_eq(memcmp(&out.ctl.pool, &in->ctl.pool, sizeof(in->ctl.pool)), 0);
	lb_msg_free(&out);
}

/* An operator's vip set for 192.0.2.1:80/TCP, no pool option given yet. */
static void
vip_set(struct lb_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = LB_MSG_CTL_REQUEST;
	m->ctl.op = LB_CTL_VIP_SET;
	m->ctl.has_svc = true;
	lb_svc_key_v4(&m->ctl.svc, htonl(0xc0000201u), htons(80), LB_IPPROTO_TCP);
}

Test(pool, vip_set_survives_the_codec)
{
	struct lb_msg in, out;
	char e[128];

	vip_set(&in);
	full_opts(&in.ctl.pool);
	cr_assert_eq(round_trip(&in, &out, e, sizeof(e)), 0, "%s", e);
	cr_assert_eq(out.ctl.op, LB_CTL_VIP_SET);
	cr_assert_eq(memcmp(&out.ctl.pool, &in.ctl.pool, sizeof(in.ctl.pool)), 0);
	lb_msg_free(&out);

	/* Only some fields given: the rest stay zero and unnamed. */
	memset(&in.ctl.pool, 0, sizeof(in.ctl.pool));
	in.ctl.pool.given = LB_POOL_INTERVAL | LB_POOL_MIN_HEALTHY_PCT;
	in.ctl.pool.interval_s = 7;
	in.ctl.pool.min_healthy_pct = 25;
	pool_round_trip(&in);

	/* A request without pool options decodes without any. */
	in.ctl.op = LB_CTL_VIP_ADD;
	memset(&in.ctl.pool, 0, sizeof(in.ctl.pool));
	cr_assert_eq(round_trip(&in, &out, e, sizeof(e)), 0, "%s", e);
	cr_assert_eq(out.ctl.pool.given, 0);
	lb_msg_free(&out);
}

Test(pool, the_codec_refuses_what_it_cannot_copy)
{
	struct lb_msg in, out;
	char e[128];

	vip_set(&in);
	/* A field this build does not know: a newer sluicectl, refused not misread. */
	in.ctl.pool.given = LB_POOL_INTERVAL | (LB_POOL_ALL + 1);
	cr_assert_eq(round_trip(&in, &out, e, sizeof(e)), -LB_EPARSE);
	cr_assert(strstr(e, "pool") != NULL, "%s", e);
	lb_msg_free(&out);
	/* A probe type out of the enum. */
	in.ctl.pool.given = LB_POOL_PROBE;
	in.ctl.pool.probe = 9;
	cr_assert_eq(round_trip(&in, &out, e, sizeof(e)), -LB_EPARSE);
	lb_msg_free(&out);
}

Test(pool, defaults_are_an_alb_target_group)
{
	const struct mgr_pool *d = mgr_pool_defaults();
	char e[128];

	cr_assert_eq(d->pl_probe, LB_PROBE_TCP);
	cr_assert_eq(d->pl_interval_s, 30);
	cr_assert_eq(d->pl_timeout_s, 5);
	cr_assert_eq(d->pl_healthy, 5);
	cr_assert_eq(d->pl_unhealthy, 2);
	cr_assert_eq(d->pl_drain_delay_s, 300);
	cr_assert_eq(d->pl_slow_start_s, 0);
	cr_assert_eq(d->pl_min_healthy, 1);
	cr_assert_eq(mgr_pool_check(d, e, sizeof(e)), 0, "%s", e);
	cr_assert(mgr_pool_code_ok(d, 200) && mgr_pool_code_ok(d, 399));
	cr_assert(!mgr_pool_code_ok(d, 404) && !mgr_pool_code_ok(d, 199));
}

/* One option applied over the defaults: the error, or "" when accepted. */
static const char *
apply1(uint32_t field, uint32_t v, const char *str)
{
	static char e[256];
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_pool_opts o = {.given = field};

	o.interval_s = o.timeout_s = o.healthy = o.unhealthy = o.drain_delay_s = o.slow_start_s =
		o.min_healthy = o.min_healthy_pct = v;
	o.probe = (uint8_t)v;
	if (str != NULL) {
		snprintf(o.path, sizeof(o.path), "%s", str);
		snprintf(o.codes, sizeof(o.codes), "%s", str);
	}
	e[0] = '\0';
	if (mgr_pool_apply(&p, &o, e, sizeof(e)) == 0)
		return "";
	return e;
}

Test(pool, errors_name_the_field)
{
	static const struct {
		uint32_t field, v;
		const char *str, *want; /* "" = accepted */
	} cases[] = {
		{LB_POOL_INTERVAL, 5, NULL, ""},
		{LB_POOL_INTERVAL, 0, NULL, "interval: 0 is out of range 1..300"},
		{LB_POOL_INTERVAL, 301, NULL, "interval: 301 is out of range"},
		/* the default timeout (5) may not exceed a 3 s interval */
		{LB_POOL_INTERVAL, 3, NULL, "timeout: 5 must not exceed interval (3)"},
		{LB_POOL_TIMEOUT, 30, NULL, ""},
		{LB_POOL_TIMEOUT, 31, NULL, "timeout: 31 must not exceed interval (30)"},
		{LB_POOL_TIMEOUT, 0, NULL, "timeout: 0 is out of range 1..120"},
		{LB_POOL_HEALTHY, 11, NULL, "healthy: 11 is out of range 1..10"},
		{LB_POOL_UNHEALTHY, 0, NULL, "unhealthy: 0 is out of range 1..10"},
		{LB_POOL_DRAIN_DELAY, 0, NULL, ""},
		{LB_POOL_DRAIN_DELAY, 3600, NULL, ""},
		{LB_POOL_DRAIN_DELAY, 3601, NULL, "drain_delay: 3601 is out of range 0..3600"},
		{LB_POOL_SLOW_START, 0, NULL, ""},
		{LB_POOL_SLOW_START, 29, NULL, "slow_start: 29 is out of range 30..900"},
		{LB_POOL_SLOW_START, 900, NULL, ""},
		{LB_POOL_SLOW_START, 901, NULL, "slow_start: 901"},
		{LB_POOL_MIN_HEALTHY_PCT, 100, NULL, ""},
		{LB_POOL_MIN_HEALTHY_PCT, 101, NULL, "min_healthy_percent: 101"},
		{LB_POOL_PROBE, 4, NULL, "probe: must be none, tcp or http"},
		{LB_POOL_PATH, 0, "/health", ""},
		{LB_POOL_PATH, 0, "health", "path: \"health\" must begin with /"},
		{LB_POOL_PATH, 0, "/a b", "path: \"/a b\": spaces"},
		{LB_POOL_PATH, 0, "/a\r\nX: y", "path:"},
		{LB_POOL_CODES, 0, "200", ""},
		{LB_POOL_CODES, 0, "200-299,302,400-404", ""},
		{LB_POOL_CODES, 0, "", "codes: empty"},
		{LB_POOL_CODES, 0, "2xx", "codes: \"2xx\": expected"},
		{LB_POOL_CODES, 0, "200,", "codes: \"200,\": expected"},
		{LB_POOL_CODES, 0, "99", "not within 100..599"},
		{LB_POOL_CODES, 0, "300-200", "not within 100..599"},
		{LB_POOL_CODES, 0, "200-600", "not within 100..599"},
		{LB_POOL_CODES, 0, "200,201,202,203,204,205,206,207,208", "more than 8"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = apply1(cases[i].field, cases[i].v, cases[i].str);

		if (cases[i].want[0] == '\0')
			cr_expect_str_eq(got, "", "case %zu: refused: %s", i, got);
		else
			cr_expect(strstr(got, cases[i].want) != NULL,
				"case %zu: \"%s\", want \"%s\"", i, got, cases[i].want);
	}
}

Test(pool, a_refused_change_changes_nothing)
{
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_pool_opts o = {.given = LB_POOL_INTERVAL | LB_POOL_HEALTHY};
	char e[128];

	o.interval_s = 10;
	o.healthy = 0; /* bad: the whole request goes */
	cr_assert_neq(mgr_pool_apply(&p, &o, e, sizeof(e)), 0);
	cr_assert(mgr_pool_equal(&p, mgr_pool_defaults()));
}

Test(pool, codes_ranges)
{
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_pool_opts o = {.given = LB_POOL_CODES};
	char e[128];

	snprintf(o.codes, sizeof(o.codes), "200-204,301,418");
	cr_assert_eq(mgr_pool_apply(&p, &o, e, sizeof(e)), 0, "%s", e);
	cr_assert(mgr_pool_code_ok(&p, 200) && mgr_pool_code_ok(&p, 204));
	cr_assert(mgr_pool_code_ok(&p, 301) && mgr_pool_code_ok(&p, 418));
	cr_assert(!mgr_pool_code_ok(&p, 205) && !mgr_pool_code_ok(&p, 302));
}

Test(pool, status_lines)
{
	static const struct {
		const char *line;
		int code;
	} cases[] = {
		{"HTTP/1.0 200 OK", 200},
		{"HTTP/1.1 503 Service Unavailable\r", 503},
		{"HTTP/1.1 204", 204},
		{"HTTP/2.0 301 Moved", 301},
		{"HTTP/1.1 20 OK", -1},
		{"HTTP/1.1 2000 OK", -1},
		{"HTTP/1.1  200 OK", -1},
		{"SSH-2.0-OpenSSH", -1},
		{"", -1},
		{"HTTP/1.1 abc", -1},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(mgr_dip_probe_status_code(cases[i].line, strlen(cases[i].line)),
			cases[i].code, "%s", cases[i].line);
}

Test(pool, the_list_keeps_what_differs)
{
	struct mgr_pools ps = {0}, cp;
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_svc_key k1, k2;
	struct lb_ftable t = {0};

	lb_svc_key_v4(&k1, htonl(0xc0000201u), htons(80), LB_IPPROTO_TCP);
	lb_svc_key_v4(&k2, htonl(0xc0000202u), htons(53), LB_IPPROTO_UDP);
	cr_assert_eq(mgr_pools_set(&ps, &k1, &p), 0);
	cr_assert_eq(ps.ps_n, 0, "the defaults need no entry");
	p.pl_interval_s = 10;
	cr_assert_eq(mgr_pools_set(&ps, &k2, &p), 0);
	cr_assert_eq(mgr_pools_set(&ps, &k1, &p), 0);
	cr_assert_eq(ps.ps_n, 2);
	cr_assert_eq(mgr_pools_get(&ps, &k1)->pl_interval_s, 10);
	cr_assert_eq(mgr_pools_copy(&cp, &ps), 0);
	cr_assert(mgr_pools_equal(&cp, &ps));
	mgr_pools_del(&cp, &k2);
	cr_assert(!mgr_pools_equal(&cp, &ps));
	cr_assert_eq(mgr_pools_get(&cp, &k2), mgr_pool_defaults());
	/* A table with only service 1: service 2's entry goes. */
	t.services = calloc(1, sizeof(*t.services));
	t.n_services = 1;
	t.services[0].vip = k1.vip;
	t.services[0].port = 80;
	t.services[0].proto = LB_IPPROTO_TCP;
	t.services[0].af = LB_AF_INET;
	mgr_pools_prune(&ps, &t);
	cr_assert_eq(ps.ps_n, 1);
	cr_assert_eq(mgr_pools_get(&ps, &k1)->pl_interval_s, 10);
	p = *mgr_pool_defaults();
	cr_assert_eq(mgr_pools_set(&ps, &k1, &p), 0);
	cr_assert_eq(ps.ps_n, 0, "back to the defaults: no entry");
	lb_ftable_free(&t);
	mgr_pools_free(&ps);
	mgr_pools_free(&cp);
}

static const char *
fake_why(void *ctx, const struct lb_svc_key *k, const struct lb_backend_cfg *from,
	const struct lb_backend_cfg *to, char *buf, size_t len)
{
	(void)ctx;
	(void)k;
	if (to == NULL)
		return "deregistration delay over";
	if (from != NULL && to->state == LB_BACKEND_MAINT) {
		snprintf(buf, len, "unhealthy: connect: connection refused");
		return buf;
	}
	return NULL;
}

static void
one_service(struct lb_ftable *t, uint32_t n, uint8_t state_of_first)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->maglev_size = 251;
	t->services = calloc(1, sizeof(*t->services));
	t->n_services = 1;
	lb_addr_v4(&t->services[0].vip, htonl(0x0a00000au));
	t->services[0].port = 80;
	t->services[0].proto = LB_IPPROTO_TCP;
	t->services[0].af = LB_AF_INET;
	t->services[0].backends = calloc(n + 1, sizeof(struct lb_backend_cfg));
	t->services[0].n_backends = n;
	for (i = 0; i < n; i++) {
		struct lb_backend_cfg *b = &t->services[0].backends[i];

		lb_addr_v4(&b->dip, htonl(0x0a01010bu + i));
		lb_addr_v4(&b->host, htonl(0x0a000101u));
		b->port = 8080;
		b->weight = 1;
		b->state = i == 0 ? state_of_first : LB_BACKEND_ACTIVE;
		b->id = i;
	}
}

Test(pool, summaries_say_why)
{
	struct lb_ftable a, b, c;
	char out[512];

	one_service(&a, 3, LB_BACKEND_ACTIVE);
	one_service(&b, 3, LB_BACKEND_MAINT);
	one_service(&c, 2, LB_BACKEND_MAINT);
	mgr_summary_why(&a, &b, out, sizeof(out), fake_why, NULL);
	cr_assert_str_eq(out, "~backend 10.1.1.11:8080 on tcp 10.0.0.10:80: state active->maint "
			      "(unhealthy: connect: connection refused)");
	mgr_summary_why(&b, &c, out, sizeof(out), fake_why, NULL);
	cr_assert_str_eq(out, "-backend 10.1.1.13:8080 on tcp 10.0.0.10:80 "
			      "(deregistration delay over)");
	/* Without a callback: as before. */
	mgr_summary(&a, &b, out, sizeof(out));
	cr_assert_str_eq(out, "~backend 10.1.1.11:8080 on tcp 10.0.0.10:80: state active->maint");
	lb_ftable_free(&a);
	lb_ftable_free(&b);
	lb_ftable_free(&c);
}

/* ---- routing: withdraw_below (ALB's DNS failover) ---- */

static struct mgr_pool
thresholds(uint32_t min, uint32_t min_pct, uint32_t wb, uint32_t wb_pct)
{
	struct mgr_pool p = *mgr_pool_defaults();

	p.pl_min_healthy = min;
	p.pl_min_healthy_pct = min_pct;
	p.pl_withdraw_below = wb;
	p.pl_withdraw_below_pct = wb_pct;
	return p;
}

Test(pool, below_withdraw_by_count_and_percent)
{
	static const struct {
		uint32_t wb, wb_pct, healthy, registered;
		bool below;
	} cases[] = {
		{0, 0, 0, 4, false},  /* no threshold: never withdrawn */
		{0, 0, 0, 0, false},  /* ... not even with no backend */
		{1, 0, 0, 4, true},   /* nothing healthy */
		{1, 0, 1, 4, false},  /* one is enough */
		{3, 0, 2, 4, true},   /* 2 < 3 */
		{3, 0, 3, 4, false},  /* at the threshold: announced */
		{0, 50, 1, 4, true},  /* 25% < 50% */
		{0, 50, 2, 4, false}, /* 50%: announced */
		{0, 50, 2, 5, true},  /* 40% < 50% */
		{0, 100, 3, 4, true}, /* one down is too many */
		{2, 50, 2, 6, true},  /* either threshold withdraws: 33% < 50% */
		{2, 50, 1, 2, true},  /* 1 < 2, though 50% */
		{2, 50, 3, 6, false},
		{1, 0, 0, 0, true}, /* no registered backend: nothing serves it */
		{0, 10, 0, 0, true},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mgr_pool p = thresholds(0, 0, cases[i].wb, cases[i].wb_pct);

		cr_expect_eq(mgr_pool_below_withdraw(&p, cases[i].healthy, cases[i].registered),
			cases[i].below, "case %zu: withdraw_below %u/%u%%, %u of %u healthy", i,
			cases[i].wb, cases[i].wb_pct, cases[i].healthy, cases[i].registered);
	}
}

/* The fail-open rule as mgr_effective.c applies it. */
static bool
fails_open(const struct mgr_pool *p, uint32_t h, uint32_t n)
{
	return n > 0 && ((p->pl_min_healthy != 0 && h < p->pl_min_healthy) ||
				(p->pl_min_healthy_pct != 0 &&
					(uint64_t)h * 100 < (uint64_t)p->pl_min_healthy_pct * n));
}

/* A pool size and health where the pool fails open but the VIP stays announced, if any. */
static bool
announced_while_open(const struct mgr_pool *p, uint32_t *h_out, uint32_t *n_out)
{
	uint32_t n, h;

	for (n = 1; n <= 60; n++)
		for (h = 0; h <= n; h++)
			if (fails_open(p, h, n) && !mgr_pool_below_withdraw(p, h, n)) {
				*h_out = h;
				*n_out = n;
				return true;
			}
	return false;
}

Test(pool, withdraw_must_be_at_or_above_fail_open)
{
	static const struct {
		uint32_t min, min_pct, wb, wb_pct;
		const char *want; /* "" = accepted; else the error names both fields */
	} cases[] = {
		{1, 0, 0, 0, ""},  /* no withdraw threshold: no rule */
		{5, 50, 0, 0, ""}, /* ... whatever fails open */
		{1, 0, 1, 0, ""}, /* the defaults' fail-open (0 healthy) and the lowest threshold */
		{1, 0, 0, 25,
			""}, /* min_healthy 1 fails open at 0 healthy: any threshold covers it */
		{0, 0, 3, 0, ""}, /* fail-open off */
		{2, 0, 2, 0, ""}, /* equal */
		{2, 0, 3, 0, ""}, /* above */
		{3, 0, 2, 0, "withdraw_below: 2 is below min_healthy (3)"},
		{2, 0, 0, 60, "withdraw_below: 0 (off) is below min_healthy (2)"},
		{0, 50, 0, 50, ""},
		{0, 50, 0, 75, ""},
		{0, 50, 0, 40, "withdraw_below_percent: 40 is below min_healthy_percent (50)"},
		{0, 50, 10, 0, "withdraw_below_percent: 0 (off) is below min_healthy_percent (50)"},
		{2, 50, 2, 50, ""},
		{2, 50, 3, 40, "withdraw_below_percent: 40 is below min_healthy_percent (50)"},
		{0, 0, 0, 101, "withdraw_below_percent: 101 is out of range 0..100"},
		{0, 0, 65535, 0, "withdraw_below: 65535 is out of range"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mgr_pool p =
			thresholds(cases[i].min, cases[i].min_pct, cases[i].wb, cases[i].wb_pct);
		char e[256] = "";
		int rc = mgr_pool_check(&p, e, sizeof(e));
		uint32_t h = 0, n = 0;
		bool hole = announced_while_open(&p, &h, &n);

		if (cases[i].want[0] == '\0') {
			cr_expect_eq(rc, 0, "case %zu: refused: %s", i, e);
			/* Accepted with a threshold: never announced while the pool fails open. */
			cr_expect(!mgr_pool_withdraws(&p) || !hole,
				"case %zu: accepted, but %u of %u healthy fails open "
				"and stays announced",
				i, h, n);
			continue;
		}
		cr_expect_eq(rc, -LB_EINVAL, "case %zu: accepted", i);
		cr_expect(strstr(e, cases[i].want) != NULL, "case %zu: \"%s\", want \"%s\"", i, e,
			cases[i].want);
		/* A refusal for the rule is a real hole (not for a range error). */
		if (strstr(e, "out of range") == NULL)
			cr_expect(hole, "case %zu: refused, but no pool size shows a hole", i);
	}
}

Test(pool, a_refused_withdraw_threshold_leaves_the_pool_as_it_was)
{
	struct mgr_pool p = thresholds(2, 0, 0, 0);
	struct mgr_pool before = p;
	struct lb_pool_opts o = {.given = LB_POOL_WITHDRAW_BELOW, .withdraw_below = 1};
	char e[256];

	cr_assert_eq(mgr_pool_apply(&p, &o, e, sizeof(e)), -LB_EINVAL);
	cr_assert(strstr(e, "withdraw_below") != NULL && strstr(e, "min_healthy") != NULL, "%s", e);
	cr_assert(mgr_pool_equal(&p, &before));
	/* Raising both together is one change, checked whole. */
	o.given |= LB_POOL_MIN_HEALTHY;
	o.min_healthy = 1;
	cr_assert_eq(mgr_pool_apply(&p, &o, e, sizeof(e)), 0, "%s", e);
	cr_assert_eq(p.pl_withdraw_below, 1);
}

Test(pool, services_file_names_both_fields_and_the_line)
{
	const char *text = "p = {\n  min_healthy = 3;\n  withdraw_below = 2;\n};\n";
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_cfg_err err;
	config_t c;

	config_init(&c);
	cr_assert_eq(config_read_string(&c, text), CONFIG_TRUE);
	cr_assert_neq(mgr_pool_from_cfg(config_lookup(&c, "p"), &p, &err), 0);
	cr_assert(strstr(err.msg, ":3:") != NULL, "the line of withdraw_below: %s", err.msg);
	cr_assert(strstr(err.msg, "withdraw_below") != NULL, "%s", err.msg);
	cr_assert(strstr(err.msg, "min_healthy (3)") != NULL, "%s", err.msg);
	config_destroy(&c);
}

Test(pool, withdraw_thresholds_survive_the_codec)
{
	struct lb_msg in;

	vip_set(&in);
	in.ctl.pool.given = LB_POOL_WITHDRAW_BELOW | LB_POOL_WITHDRAW_BELOW_PCT;
	in.ctl.pool.withdraw_below = 2;
	in.ctl.pool.withdraw_below_pct = 40;
	pool_round_trip(&in);
}

/* The VIP rule: withdrawn only when every service that sets a threshold is below it. */
Test(pool, a_vip_with_several_services)
{
	static const struct {
		uint32_t n;
		bool withdraws[3], below[3], withdrawn;
	} cases[] = {
		{1, {false}, {false}, false},		    /* no threshold */
		{1, {true}, {false}, false},		    /* above it */
		{1, {true}, {true}, true},		    /* below it */
		{2, {true, true}, {true, false}, false},    /* :443 still serves */
		{2, {true, true}, {true, true}, true},	    /* both below */
		{2, {true, false}, {true, false}, true},    /* the other does not vote */
		{3, {false, false, false}, {false}, false}, /* nobody votes */
		{3, {true, false, true}, {true, false, false}, false},
		{3, {true, false, true}, {true, false, true}, true},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(mgr_withdraw_vip(cases[i].withdraws, cases[i].below, cases[i].n),
			cases[i].withdrawn, "case %zu", i);
}

/* one_service() in IPv6: VIP 2001:db8::10, DIPs 2001:db8:1::11.., host 10.0.1.1 (6in4). */
static void
one_service6(struct lb_ftable *t, uint32_t n)
{
	uint32_t i;

	one_service(t, n, LB_BACKEND_ACTIVE);
	t->services[0].af = LB_AF_INET6;
	inet_pton(AF_INET6, "2001:db8::10", t->services[0].vip.a8);
	for (i = 0; i < n; i++) {
		inet_pton(AF_INET6, "2001:db8:1::11", t->services[0].backends[i].dip.a8);
		t->services[0].backends[i].dip.a8[15] = (uint8_t)(0x11 + i);
	}
}

/* History's text in IPv6: [v6]:port for services and backends, plain hosts. */
Test(pool, summaries_in_ipv6)
{
	struct lb_ftable a, b, c;
	char out[512];

	one_service6(&a, 1);
	one_service6(&b, 3);
	mgr_summary(&a, &b, out, sizeof(out));
	cr_assert_str_eq(out, "+2 backends on tcp [2001:db8::10]:80 ([2001:db8:1::12]:8080 .. "
			      "[2001:db8:1::13]:8080)");
	one_service6(&c, 3);
	inet_pton(AF_INET6, "2001:db8:a1::1", c.services[0].backends[1].host.a8);
	c.services[0].backends[1].host6 = 1;
	mgr_summary(&b, &c, out, sizeof(out));
	cr_assert_str_eq(out, "~backend [2001:db8:1::12]:8080 on tcp [2001:db8::10]:80: host "
			      "10.0.1.1->2001:db8:a1::1");
	mgr_summary(&c, &a, out, sizeof(out));
	cr_assert_str_eq(out, "-2 backends on tcp [2001:db8::10]:80 ([2001:db8:1::12]:8080 .. "
			      "[2001:db8:1::13]:8080)");
	mgr_summary(&(struct lb_ftable){.maglev_size = 251}, &a, out, sizeof(out));
	cr_assert_str_eq(out, "+vip tcp [2001:db8::10]:80 with 1 backend");
	lb_ftable_free(&a);
	lb_ftable_free(&b);
	lb_ftable_free(&c);
}
