/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's bgp group (mux/mux_bgp_cfg.c): a good group loads with its
 * defaults, and each mistake is refused with "FILE:LINE: bgp.FIELD: why",
 * the line being the mistake's. A refused group leaves nothing behind that
 * could start a speaker.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lb_err.h"
#include "mux_bgp_cfg.h"

static char dir[64];

/* A folder with an executable "bird", alone on PATH: the default resolves there. */
static void
setup(void)
{
	char path[128];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/sluice-bgp-cfg-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bird", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	chmod(path, 0755);
	setenv("PATH", dir, 1);
}

static void
teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/bird", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/mux.cfg", dir);
	unlink(path);
	cr_assert_eq(rmdir(dir), 0);
}

/*
 * Load text (a whole file) as FILE for a mux of tunnel address tunnel (0:
 * none, an IPv6 tunnel only); returns mux_bgp_cfg_load()'s result.
 */
static int
load_for(const char *text, uint32_t tunnel, struct mux_bgp_cfg *c, struct lb_cfg_err *err,
	char *file, size_t flen)
{
	config_t cfg;
	FILE *f;
	int rc;

	snprintf(file, flen, "%s/mux.cfg", dir);
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(lb_cfg_read_file(&cfg, file, err), 0, "%s", err->msg);
	rc = mux_bgp_cfg_load(config_root_setting(&cfg), tunnel, c, err);
	config_destroy(&cfg);
	return rc;
}

static int
load(const char *text, struct mux_bgp_cfg *c, struct lb_cfg_err *err, char *file, size_t flen)
{
	return load_for(text, inet_addr("10.255.0.1"), c, err, file, flen);
}

#define GOOD_HEAD                                                                                  \
	"bgp = {\n"                                                                                \
	"	local_as = 65001;\n"                                                                     \
	"	local_address = \"10.255.0.101\";\n"

#define GOOD_NEIGHBORS "	neighbors = ( { address = \"10.255.0.254\"; as = 65000; } );\n"

Test(bgp_cfg, defaults, .init = setup, .fini = teardown)
{
	struct mux_bgp_cfg c;
	struct lb_cfg_err err;
	char file[128], bird[128];

	cr_assert_eq(load(GOOD_HEAD GOOD_NEIGHBORS "};\n", &c, &err, file, sizeof(file)), 1, "%s",
		err.msg);
	snprintf(bird, sizeof(bird), "%s/bird", dir);
	cr_assert_str_eq(c.bird, bird, "\"bird\" looked up on PATH");
	cr_assert_eq(c.local_as, 65001);
	cr_assert_eq(c.local_address, inet_addr("10.255.0.101"));
	cr_assert_eq(c.router_id, c.local_address, "router_id defaults to local_address");
	cr_assert_eq(c.next_hop, inet_addr("10.255.0.1"), "next_hop defaults to tunnel_address");
	cr_assert_eq(c.n_neighbors, 1);
	cr_assert_eq(c.neighbors[0].addr, inet_addr("10.255.0.254"));
	cr_assert_eq(c.neighbors[0].as, 65000);
	cr_assert_eq(c.hold_time, 3);
	cr_assert_eq(c.keepalive, 1);
	cr_assert_eq(c.drain_time, 5);
	cr_assert_str_eq(c.run_dir, "");
	cr_assert_not_null(c.local_address_setting);
}

Test(bgp_cfg, everything_given, .init = setup, .fini = teardown)
{
	struct mux_bgp_cfg c;
	struct lb_cfg_err err;
	char file[128];

	cr_assert_eq(
		load("bgp = {\n"
		     "	bird = \"/bin/sh\";\n"
		     "	router_id = \"1.2.3.4\";\n"
		     "	local_as = 4294967295L;\n"
		     "	local_address = \"10.255.0.101\";\n"
		     "	neighbors = ( { address = \"10.255.0.254\"; as = 65000; },\n"
		     "		      { address = \"10.255.0.253\"; as = \"4200000000\"; },\n"
		     "		      { address = \"10.255.0.252\"; as = \"64086.59904\"; } );\n"
		     "	next_hop = \"10.255.0.7\";\n"
		     "	hold_time = 9; keepalive = 3; drain_time = 0;\n"
		     "	run_dir = \"/run/sluice/x\";\n"
		     "};\n",
			&c, &err, file, sizeof(file)),
		1, "%s", err.msg);
	cr_assert_str_eq(c.bird, "/bin/sh");
	cr_assert_eq(c.router_id, inet_addr("1.2.3.4"));
	cr_assert_eq(c.local_as, 4294967295u, "a 4-byte AS (libconfig takes it as 64-bit)");
	cr_assert_eq(c.n_neighbors, 3);
	cr_assert_eq(c.neighbors[1].as, 4200000000u, "a 4-byte AS as a string");
	cr_assert_eq(c.neighbors[2].as, 64086u * 65536 + 59904, "asdot");
	cr_assert_eq(c.next_hop, inet_addr("10.255.0.7"));
	cr_assert_eq(c.hold_time, 9);
	cr_assert_eq(c.keepalive, 3);
	cr_assert_eq(c.drain_time, 0, "no drain is allowed");
	cr_assert_str_eq(c.run_dir, "/run/sluice/x");
}

Test(bgp_cfg, absent_is_zero, .init = setup, .fini = teardown)
{
	struct mux_bgp_cfg c;
	struct lb_cfg_err err;
	char file[128];

	cr_assert_eq(load("mux = {};\n", &c, &err, file, sizeof(file)), 0);
}

struct bad {
	const char *text; /* the bgp group's body after GOOD_HEAD-like lines */
	unsigned line;
	const char *msg; /* after "FILE:LINE: " */
};

static const struct bad bads[] = {
	{GOOD_HEAD GOOD_NEIGHBORS "	bird = \"/nonexistent/bird\";\n};\n", 5,
		"bgp.bird: /nonexistent/bird is not an executable file"},
	{GOOD_HEAD GOOD_NEIGHBORS "	bird = \"no-such-bird\";\n};\n", 5,
		"bgp.bird: \"no-such-bird\" not found on PATH"},
	{"bgp = {\n	local_as = 23456;\n	local_address = \"10.255.0.101\";\n" GOOD_NEIGHBORS
	 "};\n",
		2, "bgp.local_as: 23456 is AS_TRANS"},
	{"bgp = {\n	local_as = 0;\n	local_address = \"10.255.0.101\";\n" GOOD_NEIGHBORS "};\n",
		2, "bgp.local_as: 0 is not an AS number"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.254\"; as = 4294967296; } );\n};\n", 4,
		"bgp.neighbors[0].as: 0 is not an AS number (1..4294967295; libconfig wraps"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.254\"; as = 4200000000; } );\n};\n", 4,
		"bgp.neighbors[0].as: -94967296 is not an AS number"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.254\"; as = 4294967296L; } );\n};\n",
		4, "bgp.neighbors[0].as: 4294967296 is out of range 1..4294967295"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.254\"; as = \"65536.1\"; } );\n};\n",
		4, "bgp.neighbors[0].as: \"65536.1\": asdot halves are 0..65535"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.254\"; as = \"AS65000\"; } );\n};\n",
		4, "bgp.neighbors[0].as: \"AS65000\" is not an AS number"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.254\"; as = 23456; } );\n};\n", 4,
		"bgp.neighbors[0].as: 23456 is AS_TRANS"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.300\"; as = 65000; } );\n};\n", 4,
		"bgp.neighbors[0].address: \"10.255.0.300\" is not an IPv4 address"},
	{GOOD_HEAD "	neighbors = ( { address = \"224.0.0.5\"; as = 65000; } );\n};\n", 4,
		"bgp.neighbors[0].address: \"224.0.0.5\" is a multicast or reserved address"},
	/* loopback: the shared address rules let it pass (lb_addr.c); a router cannot use it */
	{GOOD_HEAD "	neighbors = ( { address = \"127.0.0.1\"; as = 65000; } );\n};\n", 4,
		"bgp.neighbors[0].address: 127.0.0.1 is not a unicast address"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.101\"; as = 65000; } );\n};\n", 4,
		"bgp.neighbors[0].address: the neighbor is local_address itself"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.254\"; as = 65000; },\n"
		   "		{ address = \"10.255.0.254\"; as = 65002; } );\n};\n",
		5, "bgp.neighbors[1].address: the same address as neighbors[0]"},
	{GOOD_HEAD "	neighbors = ( { address = \"10.255.0.254\"; asn = 65000; } );\n};\n", 4,
		"bgp.neighbors[0].asn: unknown field"},
	{GOOD_HEAD "	neighbors = ();\n};\n", 4, "bgp.neighbors: between 1 and 8 neighbors"},
	{GOOD_HEAD "};\n", 1, "bgp.neighbors: missing required field"},
	{"bgp = {\n	local_as = 65001;\n" GOOD_NEIGHBORS "};\n", 1,
		"bgp.local_address: missing required field"},
	{GOOD_HEAD GOOD_NEIGHBORS "	keepalive = 2;\n};\n", 5,
		"bgp.keepalive: 2 is more than a third of hold_time 3"},
	{GOOD_HEAD GOOD_NEIGHBORS "	hold_time = 2;\n};\n", 5,
		"bgp.hold_time: 2 is out of range 3..65535"},
	{GOOD_HEAD GOOD_NEIGHBORS "	next_hop = \"0.0.0.0\";\n};\n", 5,
		"bgp.next_hop: \"0.0.0.0\" is the unspecified address"},
	{GOOD_HEAD GOOD_NEIGHBORS "	run_dir = \"run/here\";\n};\n", 5,
		"bgp.run_dir: an absolute path"},
	/* It goes into bird.conf between quotes: no way out of them. */
	{GOOD_HEAD GOOD_NEIGHBORS "	run_dir = \"/run/x\\\"; include \\\"/etc/y\";\n};\n", 5,
		"bgp.run_dir: a path without double quotes"},
	{GOOD_HEAD GOOD_NEIGHBORS "	run_dir = \"/run/x\\ny\";\n};\n", 5,
		"bgp.run_dir: a path without double quotes"},
	{GOOD_HEAD GOOD_NEIGHBORS "	colour = \"blue\";\n};\n", 5, "bgp.colour: unknown field"},
	{"bgp = ( 1 );\n", 1, "bgp: expected a group"},
};

/* A mux with an IPv6 tunnel only: no address to default next_hop to, so it must be given. */
Test(bgp_cfg, next_hop_without_tunnel_address, .init = setup, .fini = teardown)
{
	struct mux_bgp_cfg c;
	struct lb_cfg_err err;
	char file[128], want[256];

	cr_assert_eq(load_for(GOOD_HEAD GOOD_NEIGHBORS "};\n", 0, &c, &err, file, sizeof(file)),
		-LB_ECONFIG, "a next hop of 0.0.0.0 taken");
	snprintf(want, sizeof(want),
		"%s:1: bgp.next_hop: required when the mux has no "
		"tunnel_address",
		file);
	cr_expect(strncmp(err.msg, want, strlen(want)) == 0, "got \"%s\"", err.msg);
	cr_expect_eq(c.n_neighbors, 0, "a refused group is left empty");
	cr_assert_eq(load_for(GOOD_HEAD GOOD_NEIGHBORS "	next_hop = \"10.255.0.7\";\n};\n",
			     0, &c, &err, file, sizeof(file)),
		1, "%s", err.msg);
	cr_assert_eq(c.next_hop, inet_addr("10.255.0.7"));
}

/* One table, one test (Criterion's parameters would point at this process's memory). */
Test(bgp_cfg, refused, .init = setup, .fini = teardown)
{
	struct mux_bgp_cfg c;
	struct lb_cfg_err err;
	char file[128], want[256];
	size_t i;

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];

		memset(&c, 0x55, sizeof(c));
		cr_assert_eq(load(b->text, &c, &err, file, sizeof(file)), -LB_ECONFIG,
			"accepted:\n%s", b->text);
		snprintf(want, sizeof(want), "%s:%u: %s", file, b->line, b->msg);
		cr_expect(strncmp(err.msg, want, strlen(want)) == 0, "got  \"%s\"\nwant \"%s...\"",
			err.msg, want);
		cr_expect_eq(c.n_neighbors, 0, "a refused group is left empty");
		cr_expect_eq(c.bird[0], '\0');
	}
}
