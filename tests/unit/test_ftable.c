/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow-table operations between versions: a delta computed by the manager
 * and applied by a member rebuilds exactly the manager's table (same
 * digest) over long random edit sequences; validation refuses what a
 * member must never build; a table written as a file reads back the same;
 * operator requests survive the codec.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_addr.h"
#include "lb_codec.h"
#include "lb_config.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_hdr.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void
empty_table(struct lb_ftable *ft)
{
	memset(ft, 0, sizeof(*ft));
	ft->seed.k0 = 1;
	ft->seed.k1 = 2;
	ft->maglev_size = 251;
	ft->services = calloc(1, sizeof(*ft->services));
}

static uint32_t next_id;

/* 2001:db8:<net>::<n>, as a service's IPv6 VIP or DIP, or an IPv6 PA. */
static void
addr6(struct lb_addr *a, uint16_t net, uint32_t n)
{
	memset(a, 0, sizeof(*a));
	a->a8[0] = 0x20;
	a->a8[1] = 0x01;
	a->a8[2] = 0x0d;
	a->a8[3] = 0xb8;
	a->a8[4] = (uint8_t)(net >> 8);
	a->a8[5] = (uint8_t)net;
	a->a32[3] = htonl(n);
}

/* One random operator edit: add/remove a service, add/remove/change a backend. */
static void
edit(struct lb_ftable *ft)
{
	uint32_t op = rnd(6), i;
	struct lb_service_cfg *s;

	if (ft->n_services == 0 || op == 0) {
		struct lb_svc_key k;

		ft->services = realloc(ft->services, sizeof(*s) * (ft->n_services + 1));
		s = &ft->services[ft->n_services];
		memset(s, 0, sizeof(*s));
		/* A third of the services IPv6: a service is one family. */
		s->af = rnd(3) == 0 ? LB_AF_INET6 : LB_AF_INET;
		if (s->af == LB_AF_INET6)
			addr6(&s->vip, 0, 0x10 + rnd(8));
		else
			lb_addr_v4(&s->vip, htonl(0xc0000200u + rnd(8)));
		s->port = (uint16_t)(80 + rnd(4));
		s->proto = rnd(2) ? LB_IPPROTO_TCP : LB_IPPROTO_UDP;
		s->backends = calloc(1, sizeof(*s->backends));
		lb_ftable_key(s, &k);
		if (lb_ftable_find(ft, &k) >= 0) {
			free(s->backends);
			return;
		}
		ft->n_services++;
		return;
	}
	s = &ft->services[rnd(ft->n_services)];
	switch (op) {
	case 1: /* remove the service */
		free(s->backends);
		*s = ft->services[--ft->n_services];
		break;
	case 2:
	case 3: { /* add a backend */
		struct lb_backend_cfg b = {0};

		if (s->af == LB_AF_INET6)
			addr6(&b.dip, 1, rnd(64));
		else
			lb_addr_v4(&b.dip, htonl(0x0a000000u + rnd(64)));
		/* The PA of either family, whatever the service's. */
		b.host6 = rnd(2) == 0;
		if (b.host6)
			addr6(&b.host, 0xff, 1 + rnd(4));
		else
			lb_addr_v4(&b.host, htonl(0xac100000u + rnd(4)));
		b.port = 8080;
		b.weight = 1 + rnd(100);
		b.id = next_id++;
		for (i = 0; i < s->n_backends; i++)
			if (lb_addr_eq(&s->backends[i].dip, &b.dip))
				return;
		s->backends = realloc(s->backends, sizeof(b) * (s->n_backends + 1));
		s->backends[s->n_backends++] = b;
		break;
	}
	case 4: /* remove a backend */
		if (s->n_backends > 0) {
			i = rnd(s->n_backends);
			s->backends[i] = s->backends[s->n_backends - 1];
			s->n_backends--;
		}
		break;
	default: /* change weight or state */
		if (s->n_backends > 0) {
			struct lb_backend_cfg *b = &s->backends[rnd(s->n_backends)];

			b->weight = rnd(50);
			b->state = (uint8_t)rnd(3);
		}
		break;
	}
}

Test(ftable, delta_rebuilds_the_managers_table)
{
	struct lb_ftable mgr, member;
	char err[256];
	int v;

	empty_table(&mgr);
	empty_table(&member);
	for (v = 1; v <= 2000; v++) {
		struct lb_ftable next, built;
		struct lb_ftable_delta d;
		uint8_t want[LB_DIGEST_LEN], got[LB_DIGEST_LEN];
		int e, n = 1 + (int)rnd(4);

		cr_assert_eq(lb_ftable_copy(&next, &mgr), 0);
		for (e = 0; e < n; e++)
			edit(&next);
		if (v % 500 == 0)
			next.seed.k0++; /* options change now and then */
		lb_ftable_sort(&next);
		cr_assert_eq(lb_ftable_validate(&next, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(lb_ftable_diff(&mgr, &next, &d), 0);
		cr_assert_eq(d.has_options, v % 500 == 0);
		cr_assert_eq(lb_ftable_apply(&member, &d, &built, err, sizeof(err)), 0,
			"version %d: %s", v, err);
		lb_ftable_digest(&next, want);
		lb_ftable_digest(&built, got);
		cr_assert_arr_eq(want, got, LB_DIGEST_LEN, "version %d: digests differ", v);
		/* The delta is minimal: nothing unchanged is sent. */
		for (e = 0; e < (int)d.n_upsert; e++) {
			struct lb_svc_key k;
			int i;

			lb_ftable_key(&d.upsert[e], &k);
			i = lb_ftable_find(&mgr, &k);
			cr_assert(i < 0 || mgr.services[i].n_backends != d.upsert[e].n_backends ||
					  memcmp(mgr.services[i].backends, d.upsert[e].backends,
						  sizeof(struct lb_backend_cfg) *
							  d.upsert[e].n_backends) != 0,
				"version %d: an unchanged service in the delta", v);
		}
		lb_ftable_delta_free(&d);
		lb_ftable_free(&mgr);
		lb_ftable_free(&member);
		mgr = next;
		member = built;
	}
	lb_ftable_free(&mgr);
	lb_ftable_free(&member);
}

Test(ftable, apply_refuses_what_a_member_must_not_build)
{
	struct lb_ftable base, out;
	struct lb_ftable_delta d = {0};
	struct lb_service_cfg svc = {0};
	struct lb_backend_cfg be[2] = {0};
	struct lb_svc_key gone;
	char err[256];

	empty_table(&base);
	lb_addr_v4(&svc.vip, htonl(0xc0000201u));
	svc.port = 80;
	svc.proto = LB_IPPROTO_TCP;
	svc.af = LB_AF_INET;
	svc.backends = be;
	svc.n_backends = 2;
	lb_addr_v4(&be[0].dip, htonl(0x0a000001u));
	be[0].port = 8080;
	be[0].id = 1;
	be[1] = be[0];
	be[1].id = 2;
	d.upsert = &svc;
	d.n_upsert = 1;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "listed twice") != NULL, "%s", err);
	cr_assert_eq(out.n_services, 0);

	be[1].port = 8081;
	be[1].id = 1;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "id 1 used twice") != NULL, "%s", err);

	be[1].id = 2;
	be[1].weight = 70000;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "weight") != NULL, "%s", err);

	be[1].weight = 1;
	d.has_options = true;
	d.seed = base.seed;
	d.maglev_size = 1000;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "not a prime") != NULL, "%s", err);

	d.has_options = false;
	lb_svc_key_v4(&gone, htonl(0xc0000209u), htons(443), LB_IPPROTO_TCP);
	d.remove = &gone;
	d.n_remove = 1;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "tcp 192.0.2.9:443") != NULL, "%s", err);

	d.n_remove = 0;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.n_services, 1);
	cr_assert_eq(out.services[0].n_backends, 2);
	lb_ftable_free(&out);

	/* A service is one family: an IPv6 DIP (bytes past the four) in an IPv4 service. */
	addr6(&be[1].dip, 1, 5);
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "backend 10.0.0.1:8080") == NULL && strstr(err, "one family"), "%s",
		err);
	/*
	 * The same service made IPv6. In the struct a DIP has no family of its
	 * own: an IPv6 service's DIPs are IPv6 (10.0.0.1's bytes make a:1::),
	 * so the text and the codec are where an IPv4 one is refused.
	 */
	svc.af = LB_AF_INET6;
	addr6(&svc.vip, 0, 0x10);
	addr6(&be[0].dip, 1, 4);
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.services[0].af, LB_AF_INET6);
	lb_ftable_free(&out);
	/* A PA of no family, or a multicast one. */
	be[0].host6 = 2;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "host is of no family") != NULL, "%s", err);
	be[0].host6 = 1;
	be[0].host.a8[0] = 0xff;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "host is a multicast address") != NULL, "%s", err);
	be[0].host.a8[0] = 0x20;
	svc.vip.a8[0] = 0xff;
	cr_assert_eq(lb_ftable_apply(&base, &d, &out, err, sizeof(err)), -LB_EINVAL);
	cr_assert(strstr(err, "the VIP is a multicast address") != NULL, "%s", err);
	lb_ftable_free(&base);
}

/*
 * 16 bytes do not say their family: 1.2.3.4 and 102:304:: hold the same
 * ones. The family is part of a service's identity (order, lookups, the
 * digest) and of a host's.
 */
Test(ftable, family_is_part_of_the_identity)
{
	struct lb_backend_cfg b4 = {.port = 80, .weight = 1, .id = 1}, b6;
	struct lb_service_cfg s4 = {.port = 80,
				      .proto = LB_IPPROTO_TCP,
				      .af = LB_AF_INET,
				      .n_backends = 1,
				      .backends = &b4},
			      s6;
	struct lb_ftable t4 = {{1, 2}, 251, 1, &s4}, t6 = {{1, 2}, 251, 1, &s6};
	struct lb_ftable both = {{1, 2}, 251, 2, NULL};
	struct lb_service_cfg two[2];
	uint8_t d4[LB_DIGEST_LEN], d6[LB_DIGEST_LEN];
	struct lb_svc_key k;
	char err[256];

	lb_addr_v4(&s4.vip, htonl(0x01020304u));
	lb_addr_v4(&b4.dip, htonl(0x0a000001u));
	lb_addr_v4(&b4.host, htonl(0xac100001u));
	s6 = s4;
	s6.af = LB_AF_INET6;
	b6 = b4;
	/* 10.0.0.1 in IPv6 clothes would be a:1::, a global address. */
	s6.backends = &b6;
	lb_ftable_digest(&t4, d4);
	lb_ftable_digest(&t6, d6);
	cr_expect_neq(memcmp(d4, d6, LB_DIGEST_LEN), 0, "a service's family is in the digest");
	b6.host6 = 1;
	s6.af = LB_AF_INET;
	lb_ftable_digest(&t6, d6);
	cr_expect_neq(memcmp(d4, d6, LB_DIGEST_LEN), 0, "a host's family is in the digest");
	s6.af = LB_AF_INET6;
	cr_expect_neq(lb_service_cmp(&s4, &s6), 0, "same bytes, two families: two services");
	cr_expect_lt(lb_service_cmp(&s4, &s6), 0, "IPv4 services first");
	b6.host6 = 0;
	b6.id = 2; /* ids are unique over the table */
	two[0] = s6;
	two[1] = s4;
	both.services = two;
	cr_expect_eq(lb_ftable_validate(&both, err, sizeof(err)), 0, "%s", err);
	lb_ftable_key(&s6, &k);
	cr_expect_eq(lb_ftable_find(&both, &k), 0, "the IPv6 one is found as IPv6");
	lb_ftable_key(&s4, &k);
	cr_expect_eq(lb_ftable_find(&both, &k), 1, "the IPv4 one as IPv4");
}

Test(ftable, written_file_reads_back_the_same_table)
{
	struct lb_ftable ft, back;
	uint8_t a[LB_DIGEST_LEN], b[LB_DIGEST_LEN];
	struct lb_cfg_err cerr;
	config_t cfg;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	empty_table(&ft);
	ft.maglev_size = 65537;
	ft.seed.k0 = 0x0011223344556677ULL;
	ft.seed.k1 = 0x8899aabbccddeeffULL;
	for (i = 0; i < 200; i++)
		edit(&ft);
	lb_ftable_sort(&ft);
	f = open_memstream(&text, &len);
	cr_assert_eq(lb_ftable_write(&ft, f), 0);
	fclose(f);
	config_init(&cfg);
	cr_assert_eq(config_read_string(&cfg, text), CONFIG_TRUE, "%s at line %d\n%s",
		config_error_text(&cfg), config_error_line(&cfg), text);
	cr_assert_eq(
		lb_ftable_load(config_lookup(&cfg, "flow_table"), &back, &cerr), 0, "%s", cerr.msg);
	/* Ids are the manager's business, not the file's. */
	for (i = 0; i < (int)back.n_services; i++)
		for (uint32_t j = 0; j < back.services[i].n_backends; j++)
			back.services[i].backends[j].id = ft.services[i].backends[j].id;
	lb_ftable_sort(&back);
	lb_ftable_digest(&ft, a);
	lb_ftable_digest(&back, b);
	cr_assert_arr_eq(a, b, LB_DIGEST_LEN, "the file reads back another table:\n%s", text);
	config_destroy(&cfg);
	free(text);
	lb_ftable_free(&ft);
	lb_ftable_free(&back);
}

Test(ftable, operator_requests_survive_the_codec)
{
	struct lb_msg in = {.type = LB_MSG_CTL_REQUEST}, out, rep = {.type = LB_MSG_CTL_REPLY};
	char err[256], body[] = "flow_table = { services = (); };";
	uint8_t *buf;
	size_t len;

	in.ctl.op = LB_CTL_BACKEND_SET;
	in.ctl.has_svc = true;
	lb_svc_key_v4(&in.ctl.svc, htonl(0xc0000201u), htons(80), LB_IPPROTO_UDP);
	in.ctl.has_be = true;
	lb_addr_v4(&in.ctl.be.dip, htonl(0x0a010203u));
	lb_addr_v4(&in.ctl.be.host, htonl(0xac100001u));
	in.ctl.be.port = 8080;
	in.ctl.be.weight = 7;
	in.ctl.be.state = LB_BACKEND_DRAIN;
	in.ctl.set_state = true;
	in.body = body;
	in.version = 42;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), 0, "%s", err);
	free(buf);
	cr_assert_eq(out.type, LB_MSG_CTL_REQUEST);
	cr_assert_eq(out.ctl.op, LB_CTL_BACKEND_SET);
	cr_assert(out.ctl.has_svc && out.ctl.has_be && out.ctl.set_state);
	cr_assert(!out.ctl.set_weight && !out.ctl.set_host);
	cr_assert_eq(memcmp(&out.ctl.svc, &in.ctl.svc, sizeof(in.ctl.svc)), 0);
	cr_assert_eq(out.ctl.be.dip.a32[0], in.ctl.be.dip.a32[0]);
	cr_assert_eq(out.ctl.be.state, LB_BACKEND_DRAIN);
	cr_assert_eq(out.ctl.be.weight, 7);
	cr_assert_eq(out.version, 42);
	cr_assert_str_eq(out.body, body);
	lb_msg_free(&out);

	/* A request for an operation this build does not know is refused. */
	in.ctl.op = (enum lb_ctl_op)99;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), -LB_EINVAL);

	rep.flag = false;
	snprintf(rep.text, sizeof(rep.text), "no service tcp 192.0.2.1:80");
	rep.body = (char *)"human";
	rep.json = (char *)"{\"ok\":false}";
	rep.version = 9;
	cr_assert_eq(lb_msg_encode(&rep, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), 0, "%s", err);
	free(buf);
	cr_assert_eq(out.type, LB_MSG_CTL_REPLY);
	cr_assert(!out.flag);
	cr_assert_str_eq(out.text, "no service tcp 192.0.2.1:80");
	cr_assert_str_eq(out.body, "human");
	cr_assert_str_eq(out.json, "{\"ok\":false}");
	cr_assert_eq(out.version, 9);
	lb_msg_free(&out);
}

/*
 * The digest is what the manager and every member compare: its value must
 * not change with a refactoring, or members of two builds would refuse
 * each other's tables. Pinned on a fixed table (listed out of order, so the
 * canonical sort runs) to the bytes the digest gave when it was written.
 */
Test(ftable, digest_is_pinned)
{
	static const uint8_t want[LB_DIGEST_LEN] = {0xcb, 0xa5, 0x54, 0xe9, 0xec, 0xd8, 0x7a, 0x42,
		0x7d, 0xb1, 0x5a, 0xff, 0xb2, 0xd7, 0x4f, 0x5a};
	struct lb_backend_cfg b1[3] = {
		{.port = 8080, .weight = 3, .state = LB_BACKEND_DRAIN, .id = 7},
		{.port = 80, .weight = 1, .state = LB_BACKEND_ACTIVE, .id = 2},
		{.port = 8080, .weight = 100, .state = LB_BACKEND_MAINT, .id = 9},
	};
	struct lb_backend_cfg b2[1] = {{.port = 53, .weight = 1, .id = 4}};
	struct lb_service_cfg s[3] = {
		{.port = 443,
			.proto = LB_IPPROTO_TCP,
			.af = LB_AF_INET,
			.id = 1,
			.n_backends = 3,
			.backends = b1},
		{.port = 53,
			.proto = LB_IPPROTO_UDP,
			.af = LB_AF_INET,
			.id = 0,
			.n_backends = 1,
			.backends = b2},
		{.port = 80, .proto = LB_IPPROTO_TCP, .af = LB_AF_INET, .id = 2},
	};
	struct lb_ftable ft = {{0x0123456789abcdefULL, 0xfedcba9876543210ULL}, 65537, 3, s};
	uint8_t got[LB_DIGEST_LEN];
	char hex[2 * LB_DIGEST_LEN + 1];
	uint32_t i;

	lb_addr_v4(&b1[0].dip, htonl(0x0a000002u));
	lb_addr_v4(&b1[1].dip, htonl(0x0a000002u));
	lb_addr_v4(&b1[2].dip, htonl(0x0a000001u));
	lb_addr_v4(&b2[0].dip, htonl(0x0a000101u));
	for (i = 0; i < 3; i++)
		lb_addr_v4(&b1[i].host, htonl(0xac100001u + i));
	lb_addr_v4(&b2[0].host, htonl(0xac100009u));
	lb_addr_v4(&s[0].vip, htonl(0xc0000201u));
	lb_addr_v4(&s[1].vip, htonl(0xc0000201u));
	lb_addr_v4(&s[2].vip, htonl(0xc0000200u));
	lb_ftable_digest(&ft, got);
	for (i = 0; i < LB_DIGEST_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", got[i]);
	cr_assert_eq(memcmp(got, want, LB_DIGEST_LEN), 0, "digest %s", hex);
}
