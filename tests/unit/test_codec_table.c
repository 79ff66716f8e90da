/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control-protocol codec carrying flow tables: drains and withdrawn
 * VIPs, how a backend is chosen, IPv6 and mixed families (and a DIP of the
 * other family refused, naming the field), connection caps and withdrawn
 * zones; each in a snapshot or a delta, digest and all.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_addr.h"
#include "lb_codec.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "test_codec_util.h"
#include "test_table.h"
/* Only to craft what our encoder never writes (a DIP of the other family). */
#include "sluice.pb-c.h"

Test(codec, drained_muxes_and_withdrawn_services_roundtrip)
{
	struct lb_msg in, out;
	struct lb_ftable ft;

	test_make_table(&ft, 2, 2, 0);
	ft.services[1].withdrawn = 1;
	cr_assert_eq(lb_ftable_set_drained(&ft, "mux2", true), 1);
	cr_assert_eq(lb_ftable_set_drained(&ft, "mux1", true), 1);
	/* In a snapshot's chunk 0, with the options. */
	msg_init(&in, LB_MSG_SNAPSHOT_CHUNK);
	in.version = 7;
	in.count = 1;
	in.table = ft; /* borrowed */
	lb_ftable_digest(&ft, in.digest);
	roundtrip(&in, &out);
	cr_assert_eq(out.table.n_drained, 2);
	cr_assert_str_eq(out.table.drained[0], "mux1");
	cr_assert_str_eq(out.table.drained[1], "mux2");
	cr_assert_eq(out.table.services[0].withdrawn, 0);
	cr_assert_eq(out.table.services[1].withdrawn, 1);
	lb_msg_free(&out);
	/* In a delta's options. */
	msg_init(&in, LB_MSG_PREPARE);
	in.version = 8;
	in.base_version = 7;
	cr_assert_eq(lb_ftable_delta_options(&in.delta, &ft), 0);
	roundtrip(&in, &out);
	cr_assert(out.delta.has_options);
	cr_assert_eq(out.delta.n_drained, 2);
	cr_assert_str_eq(out.delta.drained[1], "mux2");
	lb_msg_free(&out);
	lb_ftable_delta_free(&in.delta);
	lb_ftable_free(&ft);
}

/*
 * ft, test_make_table()'s table of its size (first id 0) with one change
 * (what), is valid, digests apart from the table unchanged and travels in a
 * snapshot chunk to *out.
 */
static void
changed_roundtrip(const struct lb_ftable *ft, const char *what, struct lb_msg *out)
{
	struct lb_ftable unchanged;
	struct lb_msg in;
	uint8_t before[LB_DIGEST_LEN], after[LB_DIGEST_LEN];
	char err[256];

	test_make_table(&unchanged, ft->n_services, ft->services[0].n_backends, 0);
	lb_ftable_digest(&unchanged, before);
	lb_ftable_free(&unchanged);
	cr_assert_eq(lb_ftable_validate(ft, err, sizeof(err)), 0, "%s", err);
	lb_ftable_digest(ft, after);
	cr_assert(memcmp(before, after, LB_DIGEST_LEN) != 0, "%s is in the digest", what);
	msg_init(&in, LB_MSG_SNAPSHOT_CHUNK);
	in.version = 3;
	in.count = 1;
	in.table = *ft; /* borrowed */
	memcpy(in.digest, after, LB_DIGEST_LEN);
	roundtrip(&in, out);
}

/* ft is not a valid table, and lb_ftable_validate() says why: want. */
static void
expect_invalid(const struct lb_ftable *ft, const char *want)
{
	char err[256];

	cr_assert_neq(lb_ftable_validate(ft, err, sizeof(err)), 0);
	cr_assert(strstr(err, want) != NULL, "%s", err);
}

/* How a backend is chosen (lb_choice.h) travels in a snapshot, digest and all. */
Test(codec, choice_and_zones_roundtrip)
{
	struct lb_msg out;
	struct lb_ftable ft;

	test_make_table(&ft, 2, 2, 0);
	ft.services[0].choice = (struct lb_svc_choice){
		LB_AFF_CLIENT, LB_UNUSABLE_REJECT, 1, LB_BALANCE_LEAST_CONNECTIONS, 1};
	snprintf(ft.services[0].backends[0].zone, LB_ZONE_LEN, "az-1");
	snprintf(ft.services[0].backends[1].zone, LB_ZONE_LEN, "az.2");
	changed_roundtrip(&ft, "the choice", &out);
	assert_tables_equal(&ft, &out.table);
	cr_assert_eq(out.table.services[0].choice.affinity, LB_AFF_CLIENT);
	cr_assert_eq(out.table.services[0].choice.on_unusable, LB_UNUSABLE_REJECT);
	cr_assert_eq(out.table.services[0].choice.zonal, 1);
	cr_assert_eq(out.table.services[0].choice.balance, LB_BALANCE_LEAST_CONNECTIONS);
	cr_assert_eq(out.table.services[0].choice.mitigate, 1);
	cr_assert_str_eq(out.table.services[0].backends[1].zone, "az.2");
	cr_assert(!lb_choice_any(&out.table.services[1].choice));
	lb_msg_free(&out);
	/* Each value of each field makes its own digest. */
	{
		static const struct lb_svc_choice v[] = {
			{0}, {1}, {2}, {0, 1}, {0, 0, 0, 0, 1}, {0, 0, 0, 1}};
		uint8_t d[6][LB_DIGEST_LEN];
		uint32_t i, k;

		for (i = 0; i < 6; i++) {
			ft.services[1].choice = v[i];
			lb_ftable_digest(&ft, d[i]);
			for (k = 0; k < i; k++)
				cr_assert(memcmp(d[i], d[k], LB_DIGEST_LEN) != 0,
					"choices %u and %u share a digest", k, i);
		}
		ft.services[1].choice = v[0];
	}
	/* A zonal service's backend without a zone is refused. */
	ft.services[0].backends[1].zone[0] = 0;
	expect_invalid(&ft, "cross_zone is off");
	lb_ftable_free(&ft);
}

static struct lb_backend_cfg
backend(struct lb_addr dip, struct lb_addr host, uint8_t host6, uint16_t port, uint32_t weight,
	uint8_t state, uint32_t id)
{
	struct lb_backend_cfg b = {.dip = dip, .host = host, .host6 = host6, .port = port};

	b.weight = weight;
	b.state = state;
	b.id = id;
	return b;
}

/* A service of n backends, all zero. */
static struct lb_service_cfg
service(uint8_t af, struct lb_addr vip, uint16_t port, uint8_t proto, uint32_t id, uint32_t n)
{
	struct lb_service_cfg sc = {.af = af, .vip = vip, .port = port, .proto = proto, .id = id};

	sc.n_backends = n;
	sc.backends = calloc(n, sizeof(*sc.backends));
	return sc;
}

/*
 * A dual-stack table: an IPv6 service whose backends sit behind an IPv6 PA
 * (6in6) and an IPv4 one (6in4), and an IPv4 service behind an IPv6 PA
 * (4in6). Each address keeps its family through the wire.
 */
static void
make_table6(struct lb_ftable *ft)
{
	struct lb_service_cfg *sc;

	memset(ft, 0, sizeof(*ft));
	ft->seed.k0 = 0x0102030405060708ULL;
	ft->seed.k1 = 0x1112131415161718ULL;
	ft->maglev_size = 65537;
	ft->n_services = 2;
	ft->services = calloc(2, sizeof(*ft->services));
	ft->services[0] = service(LB_AF_INET, v4("192.0.2.10"), 80, LB_IPPROTO_TCP, 1, 1);
	ft->services[1] = service(LB_AF_INET6, v6("2001:db8::10"), 443, LB_IPPROTO_UDP, 2, 2);
	ft->services[0].backends[0] =
		backend(v4("10.1.1.11"), v6("2001:db8:99::3"), 1, 8080, 2, 0, 1);
	sc = &ft->services[1];
	sc->backends[0] = backend(
		v6("2001:db8:1::11"), v6("2001:db8:99::3"), 1, 8443, 3, LB_BACKEND_DRAIN, 2);
	sc->backends[1] = backend(v6("2001:db8:1::12"), v4("10.99.0.4"), 0, 8443, 1, 0, 3);
}

Test(codec, ipv6_table_roundtrips)
{
	struct lb_msg in, out;
	struct lb_ftable ft;
	uint8_t d1[LB_DIGEST_LEN], d2[LB_DIGEST_LEN];

	make_table6(&ft);
	msg_init(&in, LB_MSG_SNAPSHOT_CHUNK);
	in.count = 1;
	in.table = ft;
	lb_ftable_digest(&ft, in.digest);
	roundtrip(&in, &out);
	assert_tables_equal(&ft, &out.table);
	cr_assert_eq(out.table.services[1].backends[0].host6, 1);
	cr_assert_eq(out.table.services[1].backends[1].host6, 0);
	cr_assert_eq(out.table.services[0].backends[0].host6, 1);
	lb_ftable_digest(&ft, d1);
	lb_ftable_digest(&out.table, d2);
	cr_assert_eq(memcmp(d1, d2, LB_DIGEST_LEN), 0);
	lb_msg_free(&out);

	/* A delta removing an IPv6 service by its key. */
	msg_init(&in, LB_MSG_PREPARE);
	in.version = 2;
	in.base_version = 1;
	in.delta.n_upsert = 1;
	in.delta.upsert = &ft.services[1];
	in.delta.n_remove = 1;
	in.delta.remove = calloc(1, sizeof(*in.delta.remove));
	lb_svc_key_make(
		in.delta.remove, LB_AF_INET6, &ft.services[1].vip, htons(53), LB_IPPROTO_UDP);
	roundtrip(&in, &out);
	cr_assert_eq(out.delta.n_remove, 1);
	cr_assert_eq(memcmp(&out.delta.remove[0], in.delta.remove, sizeof(struct lb_svc_key)), 0);
	cr_assert_eq(out.delta.remove[0].af, LB_AF_INET6);
	cr_assert_eq(out.delta.upsert[0].af, LB_AF_INET6);
	cr_assert_eq(memcmp(out.delta.upsert[0].backends, ft.services[1].backends,
			     2 * sizeof(*ft.services[1].backends)),
		0);
	lb_msg_free(&out);
	free(in.delta.remove);
	lb_ftable_free(&ft);
}

/* One snapshot chunk of one service (VIP of vlen bytes) and one backend (DIP of dlen). */
static void
craft_chunk(size_t vlen, size_t dlen, size_t hlen, uint8_t **buf, size_t *len)
{
	static uint8_t addr[17] = {
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 1};
	static uint8_t digest[LB_DIGEST_LEN], seed[16];
	Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
	Sluice__SnapshotChunk c = SLUICE__SNAPSHOT_CHUNK__INIT;
	Sluice__FlowTableOptions o = SLUICE__FLOW_TABLE_OPTIONS__INIT;
	Sluice__Service s = SLUICE__SERVICE__INIT, *sp = &s;
	Sluice__ServiceKey k = SLUICE__SERVICE_KEY__INIT;
	Sluice__Backend b = SLUICE__BACKEND__INIT, *bp = &b;

	/* An IPv4 address is the first 4 bytes: 32.1.13.184. */
	k.vip = (ProtobufCBinaryData){vlen, addr};
	k.protocol = LB_IPPROTO_TCP;
	k.port = 80;
	b.dip = (ProtobufCBinaryData){dlen, addr};
	b.host = (ProtobufCBinaryData){hlen, addr};
	b.port = 8080;
	b.weight = 1;
	s.key = &k;
	s.n_backends = 1;
	s.backends = &bp;
	o.hash_seed = (ProtobufCBinaryData){16, seed};
	o.maglev_size = 65537;
	c.digest = (ProtobufCBinaryData){LB_DIGEST_LEN, digest};
	c.count = 1;
	c.options = &o;
	c.n_services = 1;
	c.services = &sp;
	env.protocol = LB_PROTOCOL;
	env.sender = "manager";
	env.body_case = SLUICE__ENVELOPE__BODY_SNAPSHOT_CHUNK;
	env.snapshot_chunk = &c;
	*len = sluice__envelope__get_packed_size(&env);
	*buf = malloc(*len);
	sluice__envelope__pack(&env, *buf);
}

/* A service is one family: a DIP of the other is refused, naming it; a PA may be either. */
Test(codec, address_families_refused_naming_the_field)
{
	static const struct {
		size_t v, d, h;
		const char *err; /* NULL: decodes */
	} cases[] = {
		{16, 16, 16, NULL},
		{16, 16, 4, NULL},
		{4, 4, 16, NULL},
		{4, 16, 4, "backend 0: dip is IPv6 in an IPv4 service"},
		{16, 4, 16, "backend 0: dip is IPv4 in an IPv6 service"},
		{17, 16, 16, "vip: 17 address bytes"},
		{16, 15, 16, "dip: 15 address bytes"},
		{4, 4, 0, "host: 0 address bytes"},
	};
	struct lb_msg out;
	char err[256];
	uint8_t *buf;
	size_t len, i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		craft_chunk(cases[i].v, cases[i].d, cases[i].h, &buf, &len);
		err[0] = '\0';
		rc = lb_msg_decode(buf, len, &out, err, sizeof(err));
		if (cases[i].err == NULL) {
			cr_assert_eq(rc, 0, "case %zu: %s", i, err);
			cr_assert_eq(out.table.services[0].af,
				cases[i].v == 16 ? LB_AF_INET6 : LB_AF_INET);
			cr_assert_eq(out.table.services[0].backends[0].host6, cases[i].h == 16);
		} else {
			cr_assert_eq(rc, -LB_EPARSE, "case %zu", i);
			cr_assert_not_null(strstr(err, cases[i].err), "case %zu: %s", i, err);
		}
		lb_msg_free(&out);
		free(buf);
	}
}

/* A backend's max_connections travels in a table, digest and all; TCP only. */
Test(codec, max_connections_roundtrip)
{
	struct lb_msg out;
	struct lb_ftable ft;

	test_make_table(&ft, 1, 2, 0);
	ft.services[0].backends[1].max_conns = 10;
	changed_roundtrip(&ft, "the cap", &out);
	cr_assert_eq(out.table.services[0].backends[1].max_conns, 10);
	cr_assert_eq(out.table.services[0].backends[0].max_conns, 0);
	lb_msg_free(&out);
	ft.services[0].proto = LB_IPPROTO_UDP;
	expect_invalid(&ft, "TCP");
	lb_ftable_free(&ft);
}

/* The zones a VIP is withdrawn in travel with the table, digest and all; sorted, valid names. */
Test(codec, withdrawn_zones_roundtrip)
{
	struct lb_msg out;
	struct lb_ftable ft;

	test_make_table(&ft, 1, 2, 0);
	ft.services[0].n_wzones = 2;
	snprintf(ft.services[0].wzones[0], LB_ZONE_LEN, "az-1");
	snprintf(ft.services[0].wzones[1], LB_ZONE_LEN, "az-2");
	changed_roundtrip(&ft, "the zones", &out);
	cr_assert_eq(out.table.services[0].n_wzones, 2);
	cr_assert_str_eq(out.table.services[0].wzones[1], "az-2");
	lb_msg_free(&out);
	/* Out of order, and a bad name, are refused. */
	snprintf(ft.services[0].wzones[1], LB_ZONE_LEN, "az-0");
	expect_invalid(&ft, "out of order");
	snprintf(ft.services[0].wzones[1], LB_ZONE_LEN, "a z");
	expect_invalid(&ft, "a withdrawn zone is");
	ft.services[0].n_wzones = 0;
	lb_ftable_free(&ft);
}
