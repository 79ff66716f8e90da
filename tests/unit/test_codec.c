/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control-protocol codec: every message survives a round trip, a peer
 * of another protocol version is refused and named, and bytes that are not
 * a valid message are refused without leaving anything half-decoded. The
 * flow table's own fields (routing, choice, families, limits) are in
 * test_codec_table.c.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_addr.h"
#include "lb_codec.h"
#include "lb_credit_msg.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "test_codec_util.h"
#include "test_table.h"

Test(codec, simple_messages_roundtrip)
{
	static const enum lb_msg_type types[] = {LB_MSG_HELLO, LB_MSG_WELCOME, LB_MSG_VOTE,
		LB_MSG_COMMIT, LB_MSG_ABORT, LB_MSG_SNAPSHOT_REQUEST, LB_MSG_STATUS,
		LB_MSG_REFUSED};
	unsigned t, i;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		struct lb_msg in, out;

		msg_init(&in, types[t]);
		snprintf(in.sender, sizeof(in.sender), "mux-%u", t);
		snprintf(in.id, sizeof(in.id), "mux-%u", t);
		in.role = LB_ROLE_MUX;
		in.version = 1000 + t;
		in.flag = t & 1;
		for (i = 0; i < LB_DIGEST_LEN; i++)
			in.digest[i] = (uint8_t)(i * 7 + t);
		snprintf(in.text, sizeof(in.text), "reason %u", t);
		in.n_counters = 3;
		for (i = 0; i < 3; i++) {
			snprintf(in.counters[i].name, sizeof(in.counters[i].name), "c%u", i);
			in.counters[i].value = 1ULL << (40 + i);
		}
		roundtrip(&in, &out);
		switch (in.type) {
		case LB_MSG_HELLO:
			cr_assert_str_eq(out.id, in.id);
			cr_assert_eq(out.role, LB_ROLE_MUX);
			cr_assert_eq(out.version, in.version);
			cr_assert_eq(memcmp(out.digest, in.digest, LB_DIGEST_LEN), 0);
			break;
		case LB_MSG_WELCOME:
			cr_assert_eq(out.version, in.version);
			cr_assert_eq(out.flag, in.flag);
			break;
		case LB_MSG_VOTE:
			cr_assert_eq(out.flag, in.flag);
			cr_assert_str_eq(out.text, in.text);
			/* fall through */
		case LB_MSG_COMMIT:
			cr_assert_eq(out.version, in.version);
			cr_assert_eq(memcmp(out.digest, in.digest, LB_DIGEST_LEN), 0);
			break;
		case LB_MSG_ABORT:
		case LB_MSG_REFUSED:
			cr_assert_str_eq(out.text, in.text);
			break;
		case LB_MSG_STATUS:
			cr_assert_eq(out.n_counters, 3);
			for (i = 0; i < 3; i++)
				cr_assert_eq(out.counters[i].value, in.counters[i].value);
			break;
		default:
			cr_assert_eq(out.version, in.version);
		}
		lb_msg_free(&out);
	}
}

/* A mux's flow counts in STATUS: services and backends, bounded, checked. */
Test(codec, status_flows)
{
	struct lb_flow_count *f = calloc(600, sizeof(*f));
	struct lb_msg in, out;
	char err[256];
	uint8_t *buf;
	size_t len;
	uint32_t i;

	cr_assert_not_null(f);
	for (i = 0; i < 600; i++) {
		f[i].vip = v4("192.0.2.10");
		f[i].af = LB_AF_INET;
		f[i].port = 80;
		f[i].proto = LB_IPPROTO_TCP;
		if (i % 3 != 0) { /* backends; every third a service */
			lb_addr_v4(&f[i].dip, htonl(0x0a010100u + i));
			f[i].dip_port = 8080;
		}
		f[i].pkts = 1000 + i;
		f[i].bytes = 1ULL << 40 | i;
		f[i].new_conns = i;
	}
	msg_init(&in, LB_MSG_STATUS);
	in.version = 9;
	in.flows = f;
	in.n_flows = 3;
	in.flows_first = 597;
	in.flows_total = 600;
	roundtrip(&in, &out);
	cr_assert_eq(out.n_flows, 3);
	cr_assert_eq(out.flows_first, 597);
	cr_assert_eq(out.flows_total, 600);
	for (i = 0; i < 3; i++)
		cr_assert_eq(memcmp(&out.flows[i], &f[i], sizeof(f[i])), 0, "flow %u differs", i);
	lb_msg_free(&out);

	/* At most LB_MSG_MAX_FLOWS go: a mux sends the rest next time. */
	in.n_flows = 600;
	roundtrip(&in, &out);
	cr_assert_eq(out.n_flows, LB_MSG_MAX_FLOWS);
	cr_assert_eq(out.flows[LB_MSG_MAX_FLOWS - 1].pkts, 1000 + LB_MSG_MAX_FLOWS - 1);
	lb_msg_free(&out);

	/* An IPv6 service and backend: 16-byte addresses both ways. */
	f[0].af = f[1].af = LB_AF_INET6;
	f[0].vip = f[1].vip = v6("2001:db8::10");
	f[1].dip = v6("2001:db8:1::11");
	in.n_flows = 2;
	roundtrip(&in, &out);
	cr_assert_eq(out.n_flows, 2);
	for (i = 0; i < 2; i++)
		cr_assert_eq(
			memcmp(&out.flows[i], &f[i], sizeof(f[i])), 0, "IPv6 flow %u differs", i);
	lb_msg_free(&out);

	/* A service key that is none: the whole STATUS is refused. */
	f[0].af = f[1].af = LB_AF_INET;
	f[0].vip = f[1].vip = v4("192.0.2.10");
	lb_addr_v4(&f[1].dip, htonl(0x0a010101u));
	in.n_flows = 2;
	f[1].proto = 1;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), -LB_EPARSE);
	cr_assert_not_null(strstr(err, "neither TCP nor UDP"), "%s", err);
	cr_assert_null(out.flows);
	lb_msg_free(&out);
	free(buf);
	free(f);
}

/*
 * A mux's hello carries its probe addresses (IPv4 and IPv6); an agent's
 * carries none, but its PAs and DIPs of both families.
 */
Test(codec, hello_probe_address)
{
	struct lb_msg in, out;

	msg_init(&in, LB_MSG_HELLO);
	snprintf(in.id, sizeof(in.id), "mux1");
	in.role = LB_ROLE_MUX;
	in.probe_addr.a32[0] = htonl(0x0aff0001);
	in.probe_addr6 = v6("2001:db8:ff::1");
	roundtrip(&in, &out);
	cr_assert_eq(out.probe_addr.a32[0], htonl(0x0aff0001));
	cr_assert_eq(out.probe_addr.a32[1], 0);
	cr_assert_eq(memcmp(&out.probe_addr6, &in.probe_addr6, 16), 0);
	cr_assert_eq(out.n_pas + out.n_dips, 0);
	lb_msg_free(&out);
	msg_init(&in, LB_MSG_HELLO);
	snprintf(in.id, sizeof(in.id), "host1");
	in.role = LB_ROLE_AGENT;
	in.n_pas = 2;
	in.pas[0] = (struct lb_host_addr){LB_AF_INET, v4("10.99.0.3")};
	in.pas[1] = (struct lb_host_addr){LB_AF_INET6, v6("2001:db8:99::3")};
	in.n_dips = 3;
	in.dips[0] = (struct lb_host_addr){LB_AF_INET, v4("10.1.1.11")};
	in.dips[1] = (struct lb_host_addr){LB_AF_INET6, v6("2001:db8:1::11")};
	in.dips[2] = (struct lb_host_addr){LB_AF_INET6, v6("2001:db8:1::12")};
	roundtrip(&in, &out);
	cr_assert_eq(out.probe_addr.a32[0], 0, "none sent, none decoded");
	cr_assert(lb_addr_is_zero(&out.probe_addr6));
	cr_assert_eq(out.n_pas, 2);
	cr_assert_eq(out.n_dips, 3);
	cr_assert_eq(memcmp(out.pas, in.pas, sizeof(in.pas[0]) * 2), 0);
	cr_assert_eq(memcmp(out.dips, in.dips, sizeof(in.dips[0]) * 3), 0);
	lb_msg_free(&out);
}

/* WAIT's answer travels typed beside the text and the JSON; an unknown state is refused. */
Test(codec, ctl_reply_wait_fields)
{
	struct lb_msg in, out;
	char err[256];
	uint8_t *buf;
	size_t len;

	msg_init(&in, LB_MSG_CTL_REPLY);
	snprintf(in.sender, sizeof(in.sender), "manager");
	in.flag = true;
	in.version = 7;
	in.body = "version 7 committed\n";
	in.json = "{\"version\":7,\"state\":\"committed\"}";
	in.wait.state = LB_WAIT_COMMITTED;
	in.wait.committed_as = 7;
	roundtrip(&in, &out);
	cr_assert_eq(out.wait.state, LB_WAIT_COMMITTED);
	cr_assert_eq(out.wait.committed_as, 7);
	cr_assert_str_eq(out.wait.reason, "");
	cr_assert_str_eq(out.body, in.body);
	cr_assert_str_eq(out.json, in.json);
	lb_msg_free(&out);

	in.wait.state = LB_WAIT_ABORTED;
	in.wait.committed_as = 0;
	snprintf(in.wait.reason, sizeof(in.wait.reason), "mux2 voted no: \"quoted\"\n");
	roundtrip(&in, &out);
	cr_assert_eq(out.wait.state, LB_WAIT_ABORTED);
	cr_assert_str_eq(out.wait.reason, in.wait.reason);
	lb_msg_free(&out);

	/* Any other reply says nothing of WAIT. */
	memset(&in.wait, 0, sizeof(in.wait));
	roundtrip(&in, &out);
	cr_assert_eq(out.wait.state, LB_WAIT_NONE);
	lb_msg_free(&out);

	/* A state this build does not know is refused, not guessed at. */
	in.wait.state = (enum lb_wait_state)(LB_WAIT_ABORTED + 1);
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), -LB_EPARSE);
	cr_assert_not_null(strstr(err, "wait state"), "%s", err);
	lb_msg_free(&out);
	free(buf);
}

Test(codec, prepare_with_delta_roundtrips)
{
	struct lb_msg in, out;
	struct lb_ftable ft;

	test_make_table(&ft, 3, 5, 0);
	msg_init(&in, LB_MSG_PREPARE);
	snprintf(in.sender, sizeof(in.sender), "manager");
	in.version = 42;
	in.base_version = 41;
	in.delta.n_upsert = ft.n_services;
	in.delta.upsert = ft.services;
	in.delta.n_remove = 1;
	in.delta.remove = calloc(1, sizeof(*in.delta.remove));
	lb_svc_key_v4(in.delta.remove, htonl(0xc6336401), htons(443), LB_IPPROTO_UDP);
	in.delta.has_options = true;
	in.delta.seed = ft.seed;
	in.delta.maglev_size = 251;
	lb_ftable_digest(&ft, in.digest);
	roundtrip(&in, &out);
	cr_assert_eq(out.version, 42);
	cr_assert_eq(out.base_version, 41);
	cr_assert_eq(memcmp(out.digest, in.digest, LB_DIGEST_LEN), 0);
	cr_assert_eq(out.delta.n_remove, 1);
	cr_assert_eq(
		memcmp(&out.delta.remove[0], &in.delta.remove[0], sizeof(struct lb_svc_key)), 0);
	cr_assert(out.delta.has_options);
	cr_assert_eq(out.delta.seed.k0, ft.seed.k0);
	cr_assert_eq(out.delta.seed.k1, ft.seed.k1);
	cr_assert_eq(out.delta.maglev_size, 251);
	{
		struct lb_ftable got = {
			.n_services = out.delta.n_upsert, .services = out.delta.upsert};

		assert_tables_equal(&ft, &got);
	}
	lb_msg_free(&out);
	free(in.delta.remove);
	lb_ftable_free(&ft);
}

/* A 100,000-backend table fits one chunk and survives intact. */
Test(codec, snapshot_of_100k_backends)
{
	struct lb_msg in, out;
	struct lb_ftable ft;
	uint8_t d1[LB_DIGEST_LEN], d2[LB_DIGEST_LEN];

	test_make_table(&ft, 1000, 100, 0);
	msg_init(&in, LB_MSG_SNAPSHOT_CHUNK);
	in.version = 7;
	in.index = 0;
	in.count = 1;
	in.table = ft;
	lb_ftable_digest(&ft, in.digest);
	roundtrip(&in, &out);
	cr_assert_eq(out.table.seed.k0, ft.seed.k0);
	cr_assert_eq(out.table.maglev_size, ft.maglev_size);
	assert_tables_equal(&ft, &out.table);
	lb_ftable_digest(&ft, d1);
	lb_ftable_digest(&out.table, d2);
	cr_assert_eq(memcmp(d1, d2, LB_DIGEST_LEN), 0);
	lb_msg_free(&out);
	lb_ftable_free(&ft);
}

Test(codec, other_protocol_version_is_refused)
{
	struct lb_msg in, out;
	char err[256] = "";
	uint8_t *buf;
	size_t len;

	msg_init(&in, LB_MSG_COMMIT);
	in.version = 9;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	/* Field 1 (protocol), varint 1, leads the envelope: make it 2. */
	cr_assert_eq(buf[0], 0x08);
	cr_assert_eq(buf[1], LB_PROTOCOL);
	buf[1] = LB_PROTOCOL + 1;
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), -LB_EPROTOCOL);
	cr_assert_eq(out.protocol, LB_PROTOCOL + 1);
	cr_assert_not_null(strstr(err, "protocol 2"), "error names the version: %s", err);
	lb_msg_free(&out);
	free(buf);
}

Test(codec, garbage_and_truncation_are_refused)
{
	struct lb_msg in, out;
	struct lb_ftable ft;
	char err[256];
	uint8_t *buf, junk[64];
	size_t len, cut, i;
	unsigned refused = 0;

	test_make_table(&ft, 2, 3, 0);
	msg_init(&in, LB_MSG_SNAPSHOT_CHUNK);
	in.count = 1;
	in.table = ft;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	/* Every prefix either decodes to a valid message or is refused cleanly. */
	for (cut = 0; cut < len; cut++) {
		int rc = lb_msg_decode(buf, cut, &out, err, sizeof(err));

		if (rc != 0) {
			refused++;
			cr_assert_eq(out.table.n_services, 0, "cut %zu: half-decoded", cut);
		}
		lb_msg_free(&out);
	}
	cr_assert_gt(refused, len / 2);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(0xff - i);
	cr_assert_lt(lb_msg_decode(junk, sizeof(junk), &out, err, sizeof(err)), 0);
	lb_msg_free(&out);
	free(buf);
	lb_ftable_free(&ft);
}

Test(codec, invalid_fields_are_refused)
{
	struct lb_msg in, out;
	struct lb_ftable ft;
	char err[256];
	uint8_t *buf;
	size_t len;

	/* A PREPARE that is not base + 1. */
	test_make_table(&ft, 1, 1, 0);
	msg_init(&in, LB_MSG_PREPARE);
	in.version = 5;
	in.base_version = 3;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), -LB_EPARSE);
	lb_msg_free(&out);
	free(buf);

	/* A weight past the maximum. */
	in.base_version = 4;
	ft.services[0].backends[0].weight = 70000;
	in.delta.n_upsert = 1;
	in.delta.upsert = ft.services;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), -LB_EPARSE);
	cr_assert_not_null(strstr(err, "out of range"), "%s", err);
	cr_assert_eq(out.delta.n_upsert, 0);
	lb_msg_free(&out);
	free(buf);

	/* A Maglev size that is not prime. */
	ft.services[0].backends[0].weight = 1;
	in.delta.has_options = true;
	in.delta.maglev_size = 65536;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), -LB_EPARSE);
	lb_msg_free(&out);
	free(buf);
	lb_ftable_free(&ft);
}

Test(codec, digest_ignores_order_but_not_content)
{
	struct lb_ftable a, b;
	struct lb_service_cfg tmp;
	struct lb_backend_cfg tb;
	uint8_t da[LB_DIGEST_LEN], db[LB_DIGEST_LEN];

	test_make_table(&a, 4, 6, 0);
	test_make_table(&b, 4, 6, 0);
	tmp = b.services[0];
	b.services[0] = b.services[3];
	b.services[3] = tmp;
	tb = b.services[1].backends[0];
	b.services[1].backends[0] = b.services[1].backends[5];
	b.services[1].backends[5] = tb;
	lb_ftable_digest(&a, da);
	lb_ftable_digest(&b, db);
	cr_assert_eq(memcmp(da, db, LB_DIGEST_LEN), 0, "order changed the digest");
	b.services[2].backends[3].weight++;
	lb_ftable_digest(&b, db);
	cr_assert_neq(memcmp(da, db, LB_DIGEST_LEN), 0, "a weight change kept the digest");
	lb_ftable_free(&a);
	lb_ftable_free(&b);
}

/* ---- a mux's routes, requests, credits ---- */

Test(codec, sync_and_route_status_roundtrip)
{
	struct lb_msg in, out;
	struct lb_route_state r;

	msg_init(&in, LB_MSG_SYNC);
	in.version = 12;
	in.flag = false;
	snprintf(in.text, sizeof(in.text), "fenced: VIP probe: no answer");
	roundtrip(&in, &out);
	cr_assert_eq(out.version, 12);
	cr_assert_not(out.flag);
	cr_assert_str_eq(out.text, "fenced: VIP probe: no answer");
	lb_msg_free(&out);

	memset(&r, 0, sizeof(r));
	snprintf(r.status, sizeof(r.status), "announced: 1 VIP to 1 of 1 neighbor");
	snprintf(r.reason, sizeof(r.reason), "NONE");
	r.since_unix_ms = 1700000000123ULL;
	r.sessions = 1;
	r.sessions_up = 1;
	r.n_vips_total = 2;
	r.n_vips = 2;
	r.vips[0].vip = htonl(0xc000020a);
	r.vips[0].announced = true;
	r.vips[1].vip = htonl(0xc0000214);
	snprintf(r.vips[1].reason, sizeof(r.vips[1].reason), "VIP_HELD");
	r.vips[1].since_unix_ms = 5;
	msg_init(&in, LB_MSG_STATUS);
	in.version = 3;
	in.route = &r;
	roundtrip(&in, &out);
	cr_assert_not_null(out.route);
	cr_assert_str_eq(out.route->status, r.status);
	cr_assert_str_eq(out.route->reason, "NONE");
	cr_assert_eq(out.route->since_unix_ms, r.since_unix_ms);
	cr_assert_eq(out.route->n_vips, 2);
	cr_assert_eq(out.route->vips[0].vip, r.vips[0].vip);
	cr_assert(out.route->vips[0].announced);
	cr_assert_str_eq(out.route->vips[1].reason, "VIP_HELD");
	lb_msg_free(&out);
	/* A STATUS without routes (an agent) has none. */
	in.route = NULL;
	roundtrip(&in, &out);
	cr_assert_null(out.route);
	lb_msg_free(&out);
}

Test(codec, mux_drain_request_roundtrips)
{
	struct lb_msg in, out;

	msg_init(&in, LB_MSG_CTL_REQUEST);
	in.ctl.op = LB_CTL_MUX_DRAIN;
	snprintf(in.ctl.mux, sizeof(in.ctl.mux), "mux2");
	roundtrip(&in, &out);
	cr_assert_eq(out.ctl.op, LB_CTL_MUX_DRAIN);
	cr_assert_str_eq(out.ctl.mux, "mux2");
	lb_msg_free(&out);
}

/* An operator's request for an IPv6 backend behind an IPv4 PA. */
Test(codec, ctl_request_ipv6_backend)
{
	struct lb_msg in, out;

	msg_init(&in, LB_MSG_CTL_REQUEST);
	in.ctl.op = LB_CTL_BACKEND_ADD;
	in.ctl.has_svc = true;
	lb_svc_key_make(&in.ctl.svc, LB_AF_INET6, &(struct lb_addr){0}, htons(80), LB_IPPROTO_TCP);
	in.ctl.svc.vip = v6("2001:db8::10");
	in.ctl.has_be = true;
	in.ctl.be_af = LB_AF_INET6;
	in.ctl.be.dip = v6("2001:db8:1::11");
	in.ctl.be.host = v4("10.99.0.3");
	in.ctl.be.port = 8080;
	in.ctl.set_host = true;
	roundtrip(&in, &out);
	cr_assert_eq(memcmp(&out.ctl.svc, &in.ctl.svc, sizeof(in.ctl.svc)), 0);
	cr_assert_eq(out.ctl.be_af, LB_AF_INET6);
	cr_assert(lb_addr_eq(&out.ctl.be.dip, &in.ctl.be.dip));
	cr_assert(lb_addr_eq(&out.ctl.be.host, &in.ctl.be.host));
	cr_assert_eq(out.ctl.be.host6, 0);
	lb_msg_free(&out);

	/* The same with an IPv6 host: host6 says so. */
	in.ctl.be.host = v6("2001:db8:99::3");
	in.ctl.be.host6 = 1;
	roundtrip(&in, &out);
	cr_assert_eq(out.ctl.be.host6, 1);
	cr_assert(lb_addr_eq(&out.ctl.be.host, &in.ctl.be.host));
	lb_msg_free(&out);
}

/* g encodes, and its decoding is refused saying want. */
static void
grant_refused(const struct lb_credit_grant *g, const char *want)
{
	static struct lb_credit_grant back;
	char err[256] = "";
	uint8_t *buf;
	size_t len;

	cr_assert_eq(lb_credit_grant_encode(g, &buf, &len), 0);
	cr_assert_neq(lb_credit_grant_decode(buf, len, &back, err, sizeof(err)), 0);
	cr_assert(strstr(err, want) != NULL, "%s", err);
	free(buf);
}

/* The credit channel's two messages: round trips, and what is refused. */
Test(codec, credit_messages)
{
	struct lb_credit_grant g, g2;
	struct lb_credit_report r, r2;
	uint8_t *buf;
	size_t len;
	char err[256];

	memset(&g, 0, sizeof(g));
	snprintf(g.agent, sizeof(g.agent), "agent1");
	g.incarnation = 0x1234;
	g.ttl_ms = 1000;
	g.n = 2;
	g.c[0] = (struct lb_credit){7, 3, 5, 0, 12};
	g.c[1] = (struct lb_credit){9, 0, 0, 2, 4, true};
	cr_assert_eq(lb_credit_grant_encode(&g, &buf, &len), 0);
	cr_assert_eq(lb_credit_grant_decode(buf, len, &g2, err, sizeof(err)), 0, "%s", err);
	free(buf);
	cr_assert_str_eq(g2.agent, "agent1");
	cr_assert_eq(g2.incarnation, 0x1234);
	cr_assert_eq(g2.n, 2);
	cr_assert_eq(g2.c[0].count, 5);
	cr_assert_eq(g2.c[0].granted, 12);
	cr_assert_eq(g2.c[1].revoke_below, 2);
	cr_assert(!g2.c[0].renew && g2.c[1].renew);
	/* A backend twice would count its credits twice. */
	g.c[1].backend = 7;
	grant_refused(&g, "twice");
	g.c[1].backend = 9;
	g.ttl_ms = 1;
	grant_refused(&g, "ttl");

	memset(&r, 0, sizeof(r));
	snprintf(r.mux, sizeof(r.mux), "mux1");
	r.incarnation = 77;
	r.agent_incarnation = 0x1234;
	r.n = 1;
	r.u[0] = (struct lb_credit_use){7, 10, 4, 1, 2, 9, 3, 10};
	cr_assert_eq(lb_credit_report_encode(&r, &buf, &len), 0);
	cr_assert_eq(lb_credit_report_decode(buf, len, &r2, err, sizeof(err)), 0, "%s", err);
	free(buf);
	cr_assert_str_eq(r2.mux, "mux1");
	cr_assert_eq(r2.u[0].denied, 9);
	cr_assert_eq(r2.u[0].live, 3);
	/* More spent than received is a lie. */
	r.u[0].used = 9;
	cr_assert_eq(lb_credit_report_encode(&r, &buf, &len), 0);
	cr_assert_neq(lb_credit_report_decode(buf, len, &r2, err, sizeof(err)), 0);
	cr_assert(strstr(err, "received") != NULL, "%s", err);
	free(buf);
	/* Garbage is not a grant. */
	cr_assert_neq(
		lb_credit_grant_decode((const uint8_t *)"\xff\xff\xff", 3, &g2, err, sizeof(err)),
		0);
}
