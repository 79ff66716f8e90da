/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow-table configuration: a good file loads field for field, and every bad
 * file is rejected with a message that leads the operator to the spot:
 * "file:line: field.path: reason". Each bad file in data/ holds one mistake;
 * its line number is asserted exactly, so moving the mistake means updating
 * the table below.
 *
 * A failed load must leave the table empty, so a caller that ignores the
 * error cannot act on half a table.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_config.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "lb_maglev.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#ifndef SLUICE_TEST_DATA
#error "SLUICE_TEST_DATA must name the directory of the test configuration files"
#endif

static void
data_path(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "%s/%s", SLUICE_TEST_DATA, file);
}

/*
 * Failure paths free half-built tables. LeakSanitizer would only report at
 * exit, after Criterion has counted the test as passed; ask it now.
 */
static void
expect_no_leaks(const char *test)
{
#ifdef __SANITIZE_ADDRESS__
	cr_expect_eq(
		__lsan_do_recoverable_leak_check(), 0, "%s leaked memory (report above)", test);
#else
	(void)test;
#endif
}

/*
 * Read file and load its flow_table group. The config is destroyed before
 * returning: a loaded table must not point into it.
 */
static int
load(const char *file, struct lb_ftable *ft, struct lb_cfg_err *err)
{
	char path[512];
	config_t cfg;
	const config_setting_t *group;
	int rc;

	data_path(path, sizeof(path), file);
	memset(err, 0, sizeof(*err));
	/* Stale contents, as a caller reusing a struct would have. */
	memset(ft, 0xa5, sizeof(*ft));
	rc = lb_cfg_read_file(&cfg, path, err);
	if (rc != 0)
		return rc;
	group = config_lookup(&cfg, "flow_table");
	cr_assert(group != NULL, "%s has no flow_table", file);
	rc = lb_ftable_load(group, ft, err);
	config_destroy(&cfg);
	return rc;
}

static void
expect_addr(const struct lb_addr *a, const char *dotted, const char *what)
{
	struct in_addr want;
	char buf[16];

	cr_assert_eq(inet_pton(AF_INET, dotted, &want), 1, "bad test address %s", dotted);
	cr_expect_eq(
		a->a32[0], want.s_addr, "%s: %s, want %s", what, lb_addr_str(a, buf, 16), dotted);
	cr_expect(a->a32[1] == 0 && a->a32[2] == 0 && a->a32[3] == 0,
		"%s: IPv4 address not zero-padded", what);
}

static void
expect_addr6(const struct lb_addr *a, const char *text, const char *what)
{
	struct lb_addr want;
	char buf[LB_ADDR_STRLEN];

	cr_assert_eq(inet_pton(AF_INET6, text, want.a8), 1, "bad test address %s", text);
	cr_expect(lb_addr_eq(a, &want), "%s: %s, want %s", what,
		lb_addr_ntop(LB_AF_INET6, a, buf, sizeof(buf)), text);
}

static void
expect_backend(const struct lb_backend_cfg *b, const char *dip, uint16_t port, uint32_t weight,
	const char *host, const char *what)
{
	char w[64];

	snprintf(w, sizeof(w), "%s dip", what);
	expect_addr(&b->dip, dip, w);
	snprintf(w, sizeof(w), "%s host", what);
	expect_addr(&b->host, host, w);
	cr_expect_eq(b->port, port, "%s: port %u, want %u", what, b->port, port);
	cr_expect_eq(b->weight, weight, "%s: weight %u, want %u", what, b->weight, weight);
}

static void
expect_service(const struct lb_service_cfg *s, const char *vip, uint8_t proto, uint16_t port,
	uint32_t n_backends, const char *what)
{
	char w[64];

	snprintf(w, sizeof(w), "%s vip", what);
	expect_addr(&s->vip, vip, w);
	cr_expect_eq(s->proto, proto, "%s: proto %u, want %u", what, s->proto, proto);
	cr_expect_eq(s->port, port, "%s: port %u, want %u", what, s->port, port);
	cr_expect_eq(s->af, LB_AF_INET, "%s: af %u", what, s->af);
	cr_assert_eq(s->n_backends, n_backends, "%s: %u backends, want %u", what, s->n_backends,
		n_backends);
}

/* file loads, with this seed and Maglev size. */
static void
load_good(const char *file, struct lb_ftable *ft, uint64_t k0, uint64_t k1, uint32_t maglev_size)
{
	struct lb_cfg_err err;
	int rc = load(file, ft, &err);

	cr_assert_eq(rc, 0, "%s: %d (%s)", file, rc, err.msg);
	cr_expect_eq(ft->seed.k0, k0, "%s: seed k0 %#llx", file, (unsigned long long)ft->seed.k0);
	cr_expect_eq(ft->seed.k1, k1, "%s: seed k1 %#llx", file, (unsigned long long)ft->seed.k1);
	cr_expect_eq(ft->maglev_size, maglev_size, "%s: maglev_size %u", file, ft->maglev_size);
}

Test(config, good_file)
{
	struct lb_ftable ft;
	const struct lb_service_cfg *s;

	load_good("good.cfg", &ft, 0x0011223344556677ULL, 0x8899aabbccddeeffULL, 65537);
	cr_assert_eq(ft.n_services, 4, "%u services", ft.n_services);

	s = &ft.services[0];
	expect_service(s, "192.0.2.10", LB_IPPROTO_TCP, 80, 2, "services[0]");
	expect_backend(
		&s->backends[0], "10.1.0.11", 8080, 2, "172.16.0.2", "services[0].backends[0]");
	expect_backend(
		&s->backends[1], "10.1.0.12", 8081, 0, "172.16.0.3", "services[0].backends[1]");

	s = &ft.services[1];
	expect_service(s, "192.0.2.10", LB_IPPROTO_UDP, 80, 1, "services[1]");
	expect_backend(&s->backends[0], "10.1.0.21", 65535, 65535, "172.16.0.4",
		"services[1].backends[0]");

	s = &ft.services[2];
	expect_service(s, "198.51.100.1", LB_IPPROTO_TCP, 443, 1, "services[2] (defaults)");
	expect_backend(&s->backends[0], "10.2.0.1", 1, 1, "172.16.1.2",
		"services[2].backends[0] (default weight)");

	s = &ft.services[3];
	expect_service(s, "198.51.100.2", LB_IPPROTO_TCP, 65535, 0, "services[3] (no backends)");

	cr_expect_eq(
		lb_ftable_backend_count(&ft), 4, "backend count %u", lb_ftable_backend_count(&ft));
	lb_ftable_free(&ft);
	cr_expect(ft.n_services == 0 && ft.services == NULL, "lb_ftable_free leaves it empty");
	expect_no_leaks("good_file");
}

/* IPv6 services and PAs: families recorded, addresses in canonical bytes. */
Test(config, dual_stack_file)
{
	struct lb_ftable ft;
	const struct lb_service_cfg *s;
	char buf[LB_ADDR_STRLEN];

	load_good("good6.cfg", &ft, 0x0011223344556677ULL, 0x8899aabbccddeeffULL,
		LB_MAGLEV_DEFAULT_SIZE);
	cr_assert_eq(ft.n_services, 2, "%u services", ft.n_services);
	s = &ft.services[0];
	cr_expect_eq(s->af, LB_AF_INET6, "services[0]: af %u", s->af);
	expect_addr6(&s->vip, "2001:db8::10", "services[0] vip");
	cr_expect_eq(s->port, 80);
	cr_assert_eq(s->n_backends, 2);
	expect_addr6(&s->backends[0].dip, "2001:db8:1::11", "backends[0] dip");
	cr_expect_eq(s->backends[0].host6, 0, "an IPv4 PA behind an IPv6 DIP (6in4)");
	expect_addr(&s->backends[0].host, "172.16.0.2", "backends[0] host");
	cr_expect_eq(s->backends[0].weight, 2);
	/* Written in upper case with every zero: the same address. */
	expect_addr6(&s->backends[1].dip, "2001:db8:1::12", "backends[1] dip");
	cr_expect_eq(s->backends[1].host6, 1, "an IPv6 PA (6in6)");
	expect_addr6(&s->backends[1].host, "2001:db8:ff::3", "backends[1] host");
	cr_expect_str_eq(lb_addr_ntop(LB_AF_INET6, &s->backends[1].dip, buf, sizeof(buf)),
		"2001:db8:1::12", "canonical text");
	s = &ft.services[1];
	cr_expect_eq(s->af, LB_AF_INET, "services[1]: af %u", s->af);
	cr_assert_eq(s->n_backends, 1);
	expect_addr(&s->backends[0].dip, "10.1.0.21", "services[1] dip");
	cr_expect_eq(s->backends[0].host6, 1, "an IPv6 PA behind an IPv4 DIP (4in6)");
	expect_addr6(&s->backends[0].host, "fd00:ff::4", "services[1] host");
	lb_ftable_free(&ft);
	expect_no_leaks("dual_stack_file");
}

/*
 * lb_addr_parse(), which every address field goes through: what each field
 * kind takes and the reason it gives for what it refuses.
 */
Test(config, address_text)
{
	static const struct {
		const char *text;
		unsigned allow;
		uint8_t af; /* LB_AF_NONE: refused */
		const char *out_or_why;
	} cases[] = {
		{"192.0.2.1", LB_ADDR_ANY, LB_AF_INET, "192.0.2.1"},
		{"2001:DB8:0:0:1:0:0:1", LB_ADDR_ANY, LB_AF_INET6, "2001:db8::1:0:0:1"},
		{"2001:db8:0:1:0:0:0:0", LB_ADDR_ANY, LB_AF_INET6, "2001:db8:0:1::"},
		/* RFC 5952 4.2.2: "::" never shortens a single zero word. */
		{"2001:db8:0:1:1:1:1:1", LB_ADDR_ANY, LB_AF_INET6, "2001:db8:0:1:1:1:1:1"},
		{"fd00::1", LB_ADDR_V6, LB_AF_INET6, "fd00::1"},
		{"fe80::1", LB_ADDR_V6 | LB_ADDR_LINK_LOCAL, LB_AF_INET6, "fe80::1"},
		{"fe80::1", LB_ADDR_V6, LB_AF_NONE, "is link-local"},
		{"fe80::1%eth0", LB_ADDR_V6 | LB_ADDR_LINK_LOCAL, LB_AF_NONE,
			"is a scoped address"},
		{"2001:db8::/32", LB_ADDR_ANY, LB_AF_NONE, "is a prefix"},
		{"10.0.0.1/32", LB_ADDR_ANY, LB_AF_NONE, "is a prefix"},
		{"2001:db8::1", LB_ADDR_V4, LB_AF_NONE,
			"is an IPv6 address: this field takes IPv4"},
		{"10.0.0.1", LB_ADDR_V6, LB_AF_NONE, "is an IPv4 address: this field takes IPv6"},
		{"::", LB_ADDR_ANY, LB_AF_NONE, "is the unspecified address"},
		{"0.0.0.0", LB_ADDR_ANY, LB_AF_NONE, "is the unspecified address"},
		/* Loopback passes: tests run backends there. */
		{"::1", LB_ADDR_ANY, LB_AF_INET6, "::1"},
		{"127.0.77.1", LB_ADDR_ANY, LB_AF_INET, "127.0.77.1"},
		{"ff02::1:ff00:1", LB_ADDR_ANY, LB_AF_NONE, "is a multicast address"},
		{"224.0.0.5", LB_ADDR_ANY, LB_AF_NONE, "multicast"},
		{"::ffff:10.0.0.1", LB_ADDR_ANY, LB_AF_NONE, "IPv4-mapped"},
		{"2001:db8::1::2", LB_ADDR_ANY, LB_AF_NONE, "is not an IPv4 or IPv6 address"},
		{"2001:db8:0:0:0:0:0:0:1", LB_ADDR_ANY, LB_AF_NONE, "is not an IPv4 or IPv6"},
		{"1.2.3", LB_ADDR_V4, LB_AF_NONE, "is not an IPv4 address"},
		{"[2001:db8::1]", LB_ADDR_ANY, LB_AF_NONE, "is not an IPv4 or IPv6 address"},
		{"", LB_ADDR_ANY, LB_AF_NONE, "is empty"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lb_addr a;
		char why[160], buf[LB_ADDR_STRLEN];
		uint8_t af = 99;
		int rc = lb_addr_parse(cases[i].text, cases[i].allow, &a, &af, why, sizeof(why));

		if (cases[i].af == LB_AF_NONE) {
			cr_expect_eq(rc, -LB_EPARSE, "\"%s\": accepted", cases[i].text);
			cr_expect_eq(af, LB_AF_NONE, "\"%s\": af %u", cases[i].text, af);
			cr_expect(strstr(why, cases[i].out_or_why) != NULL,
				"\"%s\": reason \"%s\" lacks \"%s\"", cases[i].text, why,
				cases[i].out_or_why);
			continue;
		}
		cr_expect_eq(rc, 0, "\"%s\": refused: %s", cases[i].text, why);
		cr_expect_eq(af, cases[i].af, "\"%s\": af %u", cases[i].text, af);
		cr_expect_str_eq(lb_addr_ntop(af, &a, buf, sizeof(buf)), cases[i].out_or_why,
			"\"%s\": canonical text", cases[i].text);
	}
}

Test(config, minimal_file)
{
	struct lb_ftable ft;

	/* Upper-case hex is a seed too; the default Maglev size. */
	load_good("minimal.cfg", &ft, 0xffeeddccbbaa9988ULL, 0x7766554433221100ULL,
		LB_MAGLEV_DEFAULT_SIZE);
	cr_expect_eq(ft.n_services, 0, "%u services", ft.n_services);
	cr_expect_eq(lb_ftable_backend_count(&ft), 0, "backends");
	lb_ftable_free(&ft);
}

/* A file that must not load, and the message that must say where and why. */
struct bad_case {
	const char *file;
	unsigned line;
	const char *field;  /* path from the root; NULL: libconfig's own error, no path */
	const char *reason; /* a substring of what follows the path */
};

/*
 * Loads c's file into *ft and checks that it fails with -LB_ECONFIG and a
 * message "<file's path>:<line>: <field>: " followed by the reason. Returns
 * what the load returned.
 */
static int
expect_bad_file(const struct bad_case *c, struct lb_ftable *ft)
{
	char path[512], prefix[1024];
	struct lb_cfg_err err;
	const char *rest;
	int rc;

	rc = load(c->file, ft, &err);
	cr_expect_eq(rc, -LB_ECONFIG, "%s: returned %d (%s), want -LB_ECONFIG", c->file, rc,
		lb_errname(rc));
	data_path(path, sizeof(path), c->file);
	if (c->field != NULL)
		snprintf(prefix, sizeof(prefix), "%s:%u: %s: ", path, c->line, c->field);
	else
		snprintf(prefix, sizeof(prefix), "%s:%u: ", path, c->line);
	cr_expect(strncmp(err.msg, prefix, strlen(prefix)) == 0,
		"%s: message\n    \"%s\"\ndoes not start with\n    \"%s\"", c->file, err.msg,
		prefix);
	rest = strlen(err.msg) >= strlen(prefix) ? err.msg + strlen(prefix) : err.msg;
	cr_expect(strstr(rest, c->reason) != NULL, "%s: message \"%s\" lacks \"%s\"", c->file,
		err.msg, c->reason);
	return rc;
}

static const struct bad_case bad_cases[] = {
	{"bad_weight.cfg", 7, "flow_table.services[0].backends[1].weight",
		"70000 is out of range 0..65535"},
	{"weight_type.cfg", 6, "flow_table.services[0].backends[0].weight", "expected an integer"},
	{"bad_dip.cfg", 7, "flow_table.services[0].backends[1].dip",
		"\"10.1.0.300\" is not an IPv4 or IPv6 address"},
	/* A missing field is reported at the group that lacks it. */
	{"missing_host.cfg", 6, "flow_table.services[0].backends[0].host",
		"missing required field"},
	{"unknown_field.cfg", 7, "flow_table.services[0].backends[0].wieght", "unknown field"},
	{"dup_backend.cfg", 8, "flow_table.services[0].backends[2]",
		"duplicate backend (same dip and port as backends[0])"},
	{"dup_service.cfg", 6, "flow_table.services[2]", "duplicate service"},
	{"maglev_not_prime.cfg", 3, "flow_table.maglev_size", "65535 is not prime"},
	{"maglev_small.cfg", 3, "flow_table.maglev_size", "7 is out of range 251..16777213"},
	{"bad_seed.cfg", 4, "flow_table.hash_seed", "32 hexadecimal digits"},
	{"seed_not_hex.cfg", 2, "flow_table.hash_seed", "32 hexadecimal digits"},
	{"missing_seed.cfg", 1, "flow_table.hash_seed", "missing required field"},
	{"bad_proto.cfg", 6, "flow_table.services[0].protocol", "\"sctp\" is not a protocol"},
	{"port_zero.cfg", 5, "flow_table.services[0].port", "0 is out of range 1..65535"},
	{"backend_port_zero.cfg", 6, "flow_table.services[1].backends[0].port",
		"0 is out of range 1..65535"},
	{"missing_backends.cfg", 3, "flow_table.services[0].backends", "missing required field"},
	{"services_group.cfg", 3, "flow_table.services", "expected a list"},
	{"not_group.cfg", 1, "flow_table", "expected a group"},
	/* Addresses of both families: a service is one family; unicast, bare addresses. */
	{"v6_dip_in_v4.cfg", 7, "flow_table.services[0].backends[1].dip",
		"\"2001:db8:1::12\" is an IPv6 address in an IPv4 service (VIP 192.0.2.10): a "
		"service is one family"},
	{"v4_dip_in_v6.cfg", 7, "flow_table.services[0].backends[1].dip",
		"\"10.1.0.12\" is an IPv4 address in an IPv6 service (VIP 2001:db8::10)"},
	{"scoped_dip.cfg", 7, "flow_table.services[0].backends[1].dip",
		"\"fe80::1%eth0\" is a scoped address (zone \"eth0\")"},
	{"prefix_vip.cfg", 4, "flow_table.services[0].vip",
		"\"2001:db8::/64\" is a prefix (\"/64\"): an address is wanted"},
	{"prefix_host.cfg", 7, "flow_table.services[0].backends[1].host",
		"\"172.16.0.0/24\" is a prefix"},
	{"multicast_vip.cfg", 4, "flow_table.services[0].vip", "is a multicast address"},
	{"link_local_dip.cfg", 7, "flow_table.services[0].backends[1].dip",
		"\"fe80::12\" is link-local"},
	{"bad_ipv6.cfg", 7, "flow_table.services[0].backends[1].dip",
		"\"2001:db8:1::g\" is not an IPv4 or IPv6 address"},
	{"mapped_host.cfg", 7, "flow_table.services[0].backends[1].host",
		"is an IPv4-mapped IPv6 address"},
	{"unspecified_dip.cfg", 7, "flow_table.services[0].backends[1].dip",
		"\"::\" is the unspecified address"},
};

Test(config, bad_files)
{
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct lb_ftable ft;
		int rc = expect_bad_file(c, &ft);

		/* No services to act on. (Seed and size may survive an early error.) */
		cr_expect(ft.n_services == 0 && ft.services == NULL,
			"%s: failed load left %u services at %p", c->file, ft.n_services,
			(void *)ft.services);
		if (rc == 0)
			lb_ftable_free(&ft);
	}
	expect_no_leaks("bad_files");
}

/* libconfig's own errors, before lb_ftable_load() sees anything. */
Test(config, syntax_errors)
{
	static const struct bad_case cases[] = {
		/* Semicolons are optional in libconfig; a missing comma is not. */
		{.file = "syntax.cfg", .line = 8, .reason = "syntax error"},
		{.file = "syntax_no_equals.cfg", .line = 3, .reason = "syntax error"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lb_ftable ft;

		expect_bad_file(&cases[i], &ft);
	}
}

Test(config, missing_file)
{
	char path[512], want[600];
	struct lb_cfg_err err = {{0}};
	config_t cfg;
	int rc;

	data_path(path, sizeof(path), "no_such_file.cfg");
	rc = lb_cfg_read_file(&cfg, path, &err);
	cr_assert_eq(rc, -LB_ECONFIG, "returned %d", rc);
	snprintf(want, sizeof(want), "%s: cannot read file", path);
	cr_expect_str_eq(err.msg, want);
}

/* lb_cfg_get_poll() on the group "g" of text. */
static int
get_poll(const char *text, bool *busy, uint32_t *idle, struct lb_cfg_err *err)
{
	config_t cfg;
	int rc;

	config_init(&cfg);
	cr_assert_eq(config_read_string(&cfg, text), CONFIG_TRUE, "%s", config_error_text(&cfg));
	rc = lb_cfg_get_poll(config_lookup(&cfg, "g"), busy, idle, err);
	config_destroy(&cfg);
	return rc;
}

/* The mux's and the agent's workers nap alike: one range, one default. */
Test(config, worker_polling)
{
	struct lb_cfg_err err = {{0}};
	uint32_t idle = 0;
	bool busy = true;

	cr_assert_eq(get_poll("g = { };", &busy, &idle, &err), 0, "%s", err.msg);
	cr_expect(!busy);
	cr_expect_eq(idle, 200);
	cr_assert_eq(
		get_poll("g = { busy_poll = true; idle_sleep_us = 100000; };", &busy, &idle, &err),
		0, "%s", err.msg);
	cr_expect(busy);
	cr_expect_eq(idle, 100000);
	cr_expect_eq(get_poll("g = { idle_sleep_us = 0; };", &busy, &idle, &err), -LB_ECONFIG);
	cr_expect(strstr(err.msg, "idle_sleep_us: 0 is out of range 1..100000") != NULL, "%s",
		err.msg);
	cr_expect_eq(get_poll("g = { idle_sleep_us = 100001; };", &busy, &idle, &err), -LB_ECONFIG);
}

/* lb_cfg_get_mac() on the string m of the group "g" = text. */
static int
get_mac(const char *text, uint8_t mac[6], struct lb_cfg_err *err)
{
	config_t cfg;
	int rc;

	config_init(&cfg);
	cr_assert_eq(config_read_string(&cfg, text), CONFIG_TRUE, "%s", config_error_text(&cfg));
	rc = lb_cfg_get_mac(config_lookup(&cfg, "g"), "m", true, mac, err);
	config_destroy(&cfg);
	return rc;
}

/* Six pairs of hex digits and colons, nothing else: scanf alone took signs and spaces. */
Test(config, mac_text)
{
	static const char *const bad[] = {"-1:00:00:00:00:fe", "+2:00:00:00:00:fe",
		" 2:00:00:00:00:fe", "02:00:00:00:00:f", "02:00:00:00:00:fe:", "02-00-00-00-00-fe",
		"02:00:00:00:0x:fe", "0200:00:00:00:fe", ""};
	struct lb_cfg_err err = {{0}};
	uint8_t mac[6] = {0};
	char text[80];
	size_t i;

	cr_assert_eq(get_mac("g = { m = \"02:aB:00:10:Ff:09\"; };", mac, &err), 0, "%s", err.msg);
	cr_expect(mac[0] == 0x02 && mac[1] == 0xab && mac[2] == 0 && mac[3] == 0x10 &&
			  mac[4] == 0xff && mac[5] == 0x09,
		"parsed %02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		mac[5]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "g = { m = \"%s\"; };", bad[i]);
		cr_expect_eq(get_mac(text, mac, &err), -LB_ECONFIG, "\"%s\" accepted", bad[i]);
		cr_expect(strstr(err.msg, "is not a MAC address") != NULL, "\"%s\": %s", bad[i],
			err.msg);
	}
}
