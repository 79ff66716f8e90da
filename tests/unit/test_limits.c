/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admission rules (common/lb_limits.h) and their place in the flow table:
 * the token bucket and the shares against exact arithmetic; rules loaded
 * from a file, refused naming the field, written back, carried by the
 * codec, covered by the digest and the deltas.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_addr.h"
#include "lb_codec.h"
#include "lb_config.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "lb_limits.h"
#include "test_util.h"

/* ---- the token bucket ---- */

/*
 * Exact model: at tick t a bucket that started full at 0 has received
 * t * rate / hz tokens (as a fraction), capped at burst; the model keeps
 * credit in 1/hz of a token, the unit in which no arithmetic rounds.
 */
Test(tbucket, admits_burst_then_rate)
{
	struct lb_tb_rate r;
	struct lb_tbucket b;
	uint64_t t;
	int n = 0, i;

	lb_tb_rate_set(&r, 10, 5, 1000); /* 10/s, burst 5, 1000 ticks/s */
	lb_tb_init(&b, &r, 0);
	for (i = 0; i < 8; i++)
		n += lb_tb_take(&b, &r, 0);
	cr_assert_eq(n, 5, "a full bucket gives its burst at once: %d", n);
	cr_assert(!lb_tb_take(&b, &r, 99), "99 ms refill 0.99 of a token");
	cr_assert(lb_tb_take(&b, &r, 100), "100 ms refill one token");
	cr_assert(!lb_tb_take(&b, &r, 100));
	/* One second later: 10 tokens, capped at 5. */
	for (n = 0, i = 0; i < 20; i++)
		n += lb_tb_take(&b, &r, 1100);
	cr_assert_eq(n, 5);
	/* Hours of idle must not overflow the multiplication. */
	for (n = 0, i = 0; i < 20; i++)
		n += lb_tb_take(&b, &r, 1100 + 3600ull * 1000 * 1000);
	cr_assert_eq(n, 5);
	/* Over 100 s of asking every tick: burst + rate * seconds, exactly. */
	lb_tb_init(&b, &r, 0);
	for (n = 0, t = 0; t <= 100000; t++)
		while (lb_tb_take(&b, &r, t))
			n++;
	cr_assert_eq(n, 5 + 10 * 100, "admitted %d", n);
}

/*
 * burst 1 shared by 8 (2 muxes x 4 workers) leaves seven shares of 0: a
 * bucket with a rate still holds one token, or seven workers would refuse
 * everything at any rate.
 */
Test(tbucket, a_share_of_no_burst_still_admits_at_its_rate)
{
	struct lb_tb_rate r;
	struct lb_tbucket b;
	int n = 0, t;

	lb_tb_rate_set(&r, 125, 0, 1000); /* 125/s, a burst share of 0 */
	lb_tb_init(&b, &r, 0);
	cr_assert(lb_tb_take(&b, &r, 0), "one token at once");
	cr_assert(!lb_tb_take(&b, &r, 0), "and only one");
	for (t = 1; t <= 1000; t++)
		n += lb_tb_take(&b, &r, (uint64_t)t);
	cr_assert_eq(n, 125, "its rate over a second: %d", n);
	lb_tb_rate_set(&r, 0, 0, 1000);
	lb_tb_init(&b, &r, 0);
	cr_assert(!lb_tb_take(&b, &r, 5000), "a share of no rate admits nothing");
}

Test(tbucket, random_schedule_matches_exact_model)
{
	uint64_t seed = 14, t = 0;
	int round;

	for (round = 0; round < 50; round++) {
		uint32_t rate = 1 + rnd(&seed, 5000), burst = 1 + rnd(&seed, 300);
		uint64_t hz = 1000 + rnd(&seed, 3000000), credit = (uint64_t)burst * hz, last = 0;
		struct lb_tb_rate r;
		struct lb_tbucket b;
		int i;

		t = 0;
		lb_tb_rate_set(&r, rate, burst, hz);
		lb_tb_init(&b, &r, 0);
		for (i = 0; i < 5000; i++) {
			bool want, got;

			/* mostly about one token's worth of ticks, sometimes up to a second */
			t += rnd(&seed, 8) == 0 ? rnd(&seed, (uint32_t)hz)
						: rnd(&seed, (uint32_t)(3 * hz / rate + 1));
			/* the model: unbounded arithmetic in __int128 */
			{
				unsigned __int128 c = (unsigned __int128)(t - last) * rate + credit;

				credit = c > (unsigned __int128)burst * hz ? (uint64_t)burst * hz
									   : (uint64_t)c;
				last = t;
			}
			want = credit >= hz;
			if (want)
				credit -= hz;
			got = lb_tb_take(&b, &r, t);
			cr_assert_eq(got, want, "round %d step %d: rate %u burst %u hz %lu", round,
				i, rate, burst, (unsigned long)hz);
		}
	}
}

Test(tbucket, shares_add_up_exactly)
{
	uint64_t seed = 1;
	int i;

	for (i = 0; i < 10000; i++) {
		uint32_t total = rnd(&seed, LB_LIMIT_MAX), n = 1 + rnd(&seed, 64), k;
		uint64_t sum = 0;
		uint32_t lo = UINT32_MAX, hi = 0;

		for (k = 0; k < n; k++) {
			uint32_t s = lb_share(total, n, k);

			sum += s;
			lo = s < lo ? s : lo;
			hi = s > hi ? s : hi;
		}
		cr_assert_eq(sum, total);
		cr_assert_leq(hi - lo, 1, "shares differ by at most one");
	}
	cr_assert_eq(lb_share(7, 3, 0), 3);
	cr_assert_eq(lb_share(7, 3, 1), 2);
	cr_assert_eq(lb_share(7, 3, 2), 2);
}

/* ---- rules in the flow table ---- */

#define SEED "hash_seed = \"000102030405060708090a0b0c0d0e0f\";\n"
#define BACKENDS "backends = ( { dip = \"10.1.0.1\"; port = 80; host = \"10.0.0.1\"; } );"

static int
load_text(const char *text, struct lb_ftable *ft, struct lb_cfg_err *err)
{
	config_t cfg;
	int rc;

	config_init(&cfg);
	memset(err, 0, sizeof(*err));
	if (config_read_string(&cfg, text) != CONFIG_TRUE) {
		snprintf(err->msg, sizeof(err->msg), "line %d: %s", config_error_line(&cfg),
			config_error_text(&cfg));
		config_destroy(&cfg);
		return -LB_ECONFIG;
	}
	rc = lb_ftable_load(config_lookup(&cfg, "flow_table"), ft, err);
	config_destroy(&cfg);
	return rc;
}

static const char good[] =
	"flow_table = {\n" SEED "mux_new_per_second = { limit = 50000; burst = 60000; mode = "
	"\"intercept\"; };\n"
	"services = ( {\n"
	"  vip = \"10.0.0.10\"; port = 80;\n"
	"  limits = {\n"
	"    max_connections = { limit = 1000; mode = \"intercept\"; };\n"
	"    new_per_second = { limit = 200; burst = 400; };\n"
	"    per_source = { limit = 10; burst = 20; prefix = 24; mode = "
	"\"intercept\"; };\n"
	"    refuse = \"rst\";\n"
	"  };\n  " BACKENDS "\n"
	"}, { vip = \"10.0.0.11\"; port = 80; " BACKENDS " } );\n};\n";

Test(limits, loaded_field_for_field)
{
	struct lb_cfg_err err;
	struct lb_ftable ft;
	const struct lb_svc_limits *l;

	cr_assert_eq(load_text(good, &ft, &err), 0, "%s", err.msg);
	l = &ft.services[0].limits;
	cr_assert_eq(ft.mux_rate.limit, 50000);
	cr_assert_eq(ft.mux_rate.burst, 60000);
	cr_assert_eq(ft.mux_rate.mode, LB_LIMIT_INTERCEPT);
	cr_assert_eq(l->rule[LB_LIM_CONNS].limit, 1000);
	cr_assert_eq(l->rule[LB_LIM_CONNS].mode, LB_LIMIT_INTERCEPT);
	cr_assert_eq(l->rule[LB_LIM_RATE].limit, 200);
	cr_assert_eq(l->rule[LB_LIM_RATE].burst, 400);
	cr_assert_eq(l->rule[LB_LIM_RATE].mode, LB_LIMIT_MONITOR, "monitor is the default");
	cr_assert_eq(l->rule[LB_LIM_SOURCE].limit, 10);
	cr_assert_eq(l->source_prefix, 24);
	cr_assert_eq(l->refuse, LB_REFUSE_RST);
	cr_assert(!lb_limits_any(&ft.services[1].limits), "no limits group: no rules");
	lb_ftable_free(&ft);
}

/* Each bad rule names the field and its line; nothing of the table survives. */
Test(limits, bad_rules_name_the_field)
{
	static const struct {
		const char *limits;
		const char *expect;
	} bad[] = {
		{"new_per_second = { limit = 0; };",
			"limits.new_per_second.limit: 0 is out of range"},
		{"new_per_second = { limit = 200000000; };", "limits.new_per_second.limit: 2000"},
		{"new_per_second = { limit = 5; mode = \"enforce\"; };",
			"limits.new_per_second.mode: \"enforce\" is not a mode"},
		{"max_connections = { limit = 5; burst = 5; };",
			"limits.max_connections.burst: unknown field"},
		{"per_source = { limit = 5; prefix = 33; };",
			"limits.per_source.prefix: 33 is out"},
		{"refuse = \"reset\";", "limits.refuse: \"reset\" is not a refusal"},
		{"max_per_second = { limit = 5; };", "limits.max_per_second: unknown field"},
		{"new_per_second = 5;", "limits.new_per_second: a rule is a group"},
	};
	char text[1024];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lb_cfg_err err;
		struct lb_ftable ft;

		snprintf(text, sizeof(text),
			"flow_table = {\n" SEED "services = ( {\nvip = \"10.0.0.10\"; port = 80;\n"
			"limits = {\n%s\n};\n" BACKENDS "\n} );\n};\n",
			bad[i].limits);
		cr_assert_neq(load_text(text, &ft, &err), 0, "accepted: %s", bad[i].limits);
		cr_expect(
			strstr(err.msg, bad[i].expect) != NULL, "%s -> %s", bad[i].limits, err.msg);
		cr_expect(strncmp(err.msg, "<config>:6: flow_table.services[0].limits.", 42) == 0,
			"the rule's line and path: %s", err.msg);
		cr_assert_eq(ft.n_services, 0);
		cr_assert_null(ft.services);
	}
	/* RST needs TCP. */
	{
		struct lb_cfg_err err;
		struct lb_ftable ft;

		snprintf(text, sizeof(text),
			"flow_table = {\n" SEED "services = ( {\nvip = \"10.0.0.10\"; port = 53;\n"
			"protocol = \"udp\"; limits = { refuse = \"rst\"; };\n" BACKENDS
			"\n} );\n};\n");
		cr_assert_neq(load_text(text, &ft, &err), 0);
		cr_expect(strstr(err.msg, "limits.refuse: rst needs a TCP service") != NULL, "%s",
			err.msg);
	}
}

/*
 * Rules on an IPv6 service: they load, per_source's prefix goes up to /128
 * and defaults to /64 (written back as such), and a prefix out of the
 * family's range is refused naming the line and field; the check the
 * manager and the decoder run says the same.
 */
Test(limits, ipv6_service_rules)
{
#define V6_SVC(lim)                                                                                \
	"flow_table = {\n" SEED "services = ( {\nvip = \"2001:db8::10\"; port = 80;\n"             \
	"limits = { " lim " };\n"                                                                  \
	"backends = ( { dip = \"2001:db8:1::1\"; port = 80; host = \"10.0.0.1\"; } );\n"           \
	"} );\n};\n"
	static const char v6[] = V6_SVC("per_source = { limit = 5; mode = \"intercept\"; }; "
					"new_per_second = { limit = 50; }; refuse = \"icmp\";");
	static const char v6_128[] = V6_SVC("per_source = { limit = 5; prefix = 128; };");
	static const char v6_129[] = V6_SVC("per_source = { limit = 5; prefix = 129; };");
#undef V6_SVC
	struct lb_svc_limits l;
	struct lb_cfg_err err;
	struct lb_ftable ft, back;
	char why[160], *buf = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_eq(load_text(v6, &ft, &err), 0, "%s", err.msg);
	cr_assert_eq(ft.services[0].limits.rule[LB_LIM_SOURCE].limit, 5);
	cr_assert_eq(ft.services[0].limits.source_prefix, 64, "an IPv6 source is a /64 by default");
	cr_assert_eq(ft.services[0].limits.refuse, LB_REFUSE_ICMP);
	f = open_memstream(&buf, &len);
	cr_assert_eq(lb_ftable_write(&ft, f), 0);
	fclose(f);
	cr_expect(strstr(buf, "prefix = 64;") != NULL, "%s", buf);
	cr_assert_eq(load_text(buf, &back, &err), 0, "%s", err.msg);
	cr_assert(lb_limits_equal(&ft.services[0].limits, &back.services[0].limits));
	free(buf);
	lb_ftable_free(&back);
	lb_ftable_free(&ft);

	cr_assert_eq(load_text(v6_128, &ft, &err), 0, "%s", err.msg);
	cr_assert_eq(ft.services[0].limits.source_prefix, 128);
	lb_ftable_free(&ft);
	cr_assert_neq(load_text(v6_129, &ft, &err), 0, "a /129 loaded");
	cr_expect(strstr(err.msg, "<config>:5: flow_table.services[0].limits.per_source.prefix") !=
			  NULL,
		"%s", err.msg);

	memset(&l, 0, sizeof(l));
	l.rule[LB_LIM_SOURCE].limit = 10;
	l.source_prefix = 128;
	cr_assert_eq(
		lb_limits_check(&l, LB_AF_INET6, LB_IPPROTO_TCP, why, sizeof(why)), 0, "%s", why);
	cr_assert_neq(lb_limits_check(&l, LB_AF_INET, LB_IPPROTO_TCP, why, sizeof(why)), 0);
	cr_expect(strstr(why, "limits.per_source.prefix: /128 is out of range 1..32") != NULL, "%s",
		why);
	l.source_prefix = 129;
	cr_assert_neq(lb_limits_check(&l, LB_AF_INET6, LB_IPPROTO_TCP, why, sizeof(why)), 0);
	cr_expect(strstr(why, "1..128") != NULL, "%s", why);
}

Test(limits, written_back_and_reloaded_alike)
{
	struct lb_cfg_err err;
	struct lb_ftable ft, back;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_eq(load_text(good, &ft, &err), 0, "%s", err.msg);
	f = open_memstream(&buf, &len);
	cr_assert_eq(lb_ftable_write(&ft, f), 0);
	fclose(f);
	cr_assert_eq(load_text(buf, &back, &err), 0, "%s\n%s", err.msg, buf);
	cr_assert_eq(back.n_services, 2);
	cr_assert(lb_limits_equal(&ft.services[0].limits, &back.services[0].limits), "%s", buf);
	cr_assert(lb_limit_rule_equal(&ft.mux_rate, &back.mux_rate));
	free(buf);
	lb_ftable_free(&ft);
	lb_ftable_free(&back);
}

Test(limits, digest_and_delta_cover_the_rules)
{
	struct lb_cfg_err err;
	struct lb_ftable a, b;
	struct lb_ftable_delta d;
	uint8_t da[LB_DIGEST_LEN], db[LB_DIGEST_LEN];
	char e[256];

	cr_assert_eq(load_text(good, &a, &err), 0, "%s", err.msg);
	cr_assert_eq(lb_ftable_copy(&b, &a), 0);
	b.services[0].limits.rule[LB_LIM_RATE].mode = LB_LIMIT_INTERCEPT;
	lb_ftable_digest(&a, da);
	lb_ftable_digest(&b, db);
	cr_assert_neq(memcmp(da, db, sizeof(da)), 0, "a mode change changes the digest");
	cr_assert_eq(lb_ftable_diff(&a, &b, &d), 0);
	cr_assert_eq(d.n_upsert, 1, "the service whose rule changed is sent again");
	cr_assert(!d.has_options);
	lb_ftable_delta_free(&d);

	/* The mux-wide rule travels with the options. */
	lb_ftable_free(&b);
	cr_assert_eq(lb_ftable_copy(&b, &a), 0);
	b.mux_rate.limit = 1;
	lb_ftable_digest(&b, db);
	cr_assert_neq(memcmp(da, db, sizeof(da)), 0);
	cr_assert_eq(lb_ftable_diff(&a, &b, &d), 0);
	cr_assert(d.has_options);
	cr_assert_eq(d.n_upsert, 0);
	{
		struct lb_ftable c;

		cr_assert_eq(lb_ftable_apply(&a, &d, &c, e, sizeof(e)), 0, "%s", e);
		cr_assert_eq(c.mux_rate.limit, 1);
		lb_ftable_free(&c);
	}
	lb_ftable_delta_free(&d);

	/* A prefix left unset and /32 are one rule with one digest. */
	lb_ftable_free(&b);
	cr_assert_eq(lb_ftable_copy(&b, &a), 0);
	a.services[0].limits.source_prefix = 0;
	b.services[0].limits.source_prefix = 32;
	lb_ftable_digest(&a, da);
	lb_ftable_digest(&b, db);
	cr_assert_eq(memcmp(da, db, sizeof(da)), 0);

	/* Validation refuses what the loader would, naming the field. */
	b.services[0].limits.refuse = 7;
	cr_assert_neq(lb_ftable_validate(&b, e, sizeof(e)), 0);
	cr_assert(strstr(e, "service tcp 10.0.0.10:80: limits.refuse") != NULL, "%s", e);
	lb_ftable_free(&a);
	lb_ftable_free(&b);
}

static void
roundtrip(const struct lb_msg *in, struct lb_msg *out, int want)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[256] = "";

	cr_assert_eq(lb_msg_encode(in, &buf, &len), 0);
	memset(out, 0, sizeof(*out));
	cr_assert_eq(lb_msg_decode(buf, len, out, err, sizeof(err)), want, "decode: %s", err);
	if (want != 0)
		cr_assert(strstr(err, "limits.") != NULL || strstr(err, "mux_new") != NULL, "%s",
			err);
	free(buf);
}

Test(limits, codec_carries_the_rules)
{
	struct lb_cfg_err err;
	struct lb_ftable ft;
	struct lb_msg in, out;

	cr_assert_eq(load_text(good, &ft, &err), 0, "%s", err.msg);
	memset(&in, 0, sizeof(in));
	in.type = LB_MSG_SNAPSHOT_CHUNK;
	snprintf(in.sender, sizeof(in.sender), "manager");
	in.version = 3;
	in.count = 1;
	in.table = ft;
	roundtrip(&in, &out, 0);
	cr_assert_eq(out.table.n_services, 2);
	cr_assert(lb_limits_equal(&out.table.services[0].limits, &ft.services[0].limits));
	cr_assert(!lb_limits_any(&out.table.services[1].limits));
	cr_assert(lb_limit_rule_equal(&out.table.mux_rate, &ft.mux_rate));
	lb_msg_free(&out);

	/* PREPARE: a delta's upsert and options. */
	memset(&in, 0, sizeof(in));
	in.type = LB_MSG_PREPARE;
	snprintf(in.sender, sizeof(in.sender), "manager");
	in.version = 4;
	in.base_version = 3;
	in.delta.n_upsert = 1;
	in.delta.upsert = &ft.services[0];
	in.delta.has_options = true;
	in.delta.seed = ft.seed;
	in.delta.maglev_size = ft.maglev_size;
	in.delta.mux_rate = ft.mux_rate;
	roundtrip(&in, &out, 0);
	cr_assert(lb_limits_equal(&out.delta.upsert[0].limits, &ft.services[0].limits));
	cr_assert(lb_limit_rule_equal(&out.delta.mux_rate, &ft.mux_rate));
	lb_msg_free(&out);

	/* What a peer could forge is refused on decode. */
	ft.services[0].limits.rule[LB_LIM_RATE].mode = 9;
	in.delta.upsert = &ft.services[0];
	roundtrip(&in, &out, -LB_EPARSE);
	lb_msg_free(&out);
	ft.services[0].limits.rule[LB_LIM_RATE].mode = 0;
	in.delta.mux_rate.burst = LB_LIMIT_MAX + 1;
	roundtrip(&in, &out, -LB_EPARSE);
	lb_msg_free(&out);
	lb_ftable_free(&ft);
}

/* ---- the counters' names in STATUS ---- */

static void
counter_name(char *buf, const char *vip, int kind, int counter)
{
	struct lb_addr a;
	uint8_t af;
	char why[64];

	cr_assert_eq(lb_addr_parse(vip, LB_ADDR_ANY, &a, &af, why, sizeof(why)), 0, "%s", vip);
	lb_limit_counter_name(buf, LB_LIMIT_COUNTER_LEN, &a, af, 80, LB_IPPROTO_TCP, kind, counter);
}

/*
 * The manager sums a rule's counters over the muxes by name: two services
 * never share one. IPv6 VIPs were once named by their first four bytes
 * (2001:db8::10 and 2001:db8::20 both "limit.32.1.13.184:80/...").
 */
Test(limits, counter_names_tell_services_apart)
{
	char a[LB_LIMIT_COUNTER_LEN], b[LB_LIMIT_COUNTER_LEN];

	counter_name(a, "192.0.2.10", LB_LIM_RATE, 3);
	cr_assert_str_eq(a, "limit.192.0.2.10:80/tcp.rate.deny");
	counter_name(a, "2001:db8::10", LB_LIM_CONNS, 0);
	cr_assert_str_eq(a, "limit.[2001:db8::10]:80/tcp.conns.chk");
	counter_name(b, "2001:db8::20", LB_LIM_CONNS, 0);
	cr_assert_str_neq(a, b);
	counter_name(a, "32.1.13.184", LB_LIM_CONNS, 0);
	cr_assert_str_neq(a, b);
	/* Too long for STATUS in brackets: hashed, still apart, still short. */
	counter_name(a, "2001:db8:1234:5678:9abc:def0:1234:5678", LB_LIM_SOURCE, 2);
	counter_name(b, "2001:db8:1234:5678:9abc:def0:1234:5679", LB_LIM_SOURCE, 2);
	cr_assert(strncmp(a, "limit.6h", 8) == 0, "%s", a);
	cr_assert(strlen(a) < LB_LIMIT_COUNTER_LEN && strlen(b) < LB_LIMIT_COUNTER_LEN);
	cr_assert_str_neq(a, b);
	cr_assert(strstr(a, ":80/tcp.src.wdeny") != NULL, "%s", a);
	lb_limit_counter_name(a, sizeof(a), NULL, 0, 0, 0, LB_LIM_N, 3);
	cr_assert_str_eq(a, "limit.mux.deny");
}
