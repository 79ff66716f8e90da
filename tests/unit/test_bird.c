/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BIRD from the outside (mux/mux_bird.c): the control protocol's lines,
 * "show protocols" rows, the generated configuration (checked by BIRD
 * itself with "bird -p" when BIRD is installed), and the client against a
 * scripted fake BIRD on a UNIX socket: replies, errors, a BIRD that never
 * answers.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "mux_bird.h"

Test(bird, control_lines)
{
	static const struct {
		const char *line;
		int code;
		bool last;
		const char *text;
	} rows[] = {
		{"0001 BIRD 2.0.12 ready.", 1, true, "BIRD 2.0.12 ready."},
		{"1002-n0         BGP", 1002, false, "n0         BGP"},
		{" vips       Static", 2002, false, "vips       Static"}, /* continues 2002 */
		{"0000 ", 0, true, ""},
		{"0000", 0, true, ""},
		{"8002 /x/vips.conf:1:21 syntax error", 8002, true,
			"/x/vips.conf:1:21 syntax error"},
	};
	static const char *const bad[] = {"abc", "12-x", "0001x", ""};
	const char *text;
	bool last;
	int code;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cr_assert_eq(mux_bird_parse_line(rows[i].line, 2002, &code, &last, &text), 0, "%s",
			rows[i].line);
		cr_expect_eq(code, rows[i].code, "%s", rows[i].line);
		cr_expect_eq(last, rows[i].last, "%s", rows[i].line);
		cr_expect_str_eq(text, rows[i].text, "%s", rows[i].line);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(
			mux_bird_parse_line(bad[i], 0, &code, &last, &text), -1, "\"%s\"", bad[i]);
}

/* A "show protocols" reply as mux_bird_cmd() hands it over. */
static const char protocols[] =
	"2002 Name       Proto      Table      State  Since         Info\n"
	"1002 device1    Device     ---        up     1796150000    \n"
	"1002 vips       Static     master4    up     1796150000    \n"
	"1002 n0         BGP        ---        up     1796150123  Established   \n"
	"1002 n1         BGP        ---        start  1796150100  Active        "
	"Socket: Connection refused\n"
	"0000 \n";

Test(bird, show_protocols_rows)
{
	struct mux_bird_proto p[8];
	int n = mux_bird_parse_protocols(protocols, p, 8);

	cr_assert_eq(n, 4);
	cr_expect_str_eq(p[1].name, "vips");
	cr_expect_str_eq(p[1].proto, "Static");
	cr_expect_str_eq(p[2].name, "n0");
	cr_expect_str_eq(p[2].state, "up");
	cr_expect_eq(p[2].since_unix, 1796150123ull);
	cr_expect_str_eq(p[2].info, "Established");
	cr_expect_str_eq(p[2].error, "");
	cr_expect_str_eq(p[3].info, "Active");
	cr_expect_str_eq(p[3].error, "Socket: Connection refused");
	cr_expect_eq(mux_bird_parse_protocols(protocols, p, 2), 2, "at most max rows");
}

static void
test_cfg(struct mux_bgp_cfg *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->bird, sizeof(c->bird), "bird");
	c->router_id = inet_addr("10.255.0.101");
	c->local_as = 65001;
	c->local_address = inet_addr("10.255.0.101");
	c->next_hop = inet_addr("10.255.0.1");
	c->n_neighbors = 2;
	c->neighbors[0].addr = inet_addr("10.255.0.254");
	c->neighbors[0].as = 65000;
	c->neighbors[1].addr = inet_addr("10.255.0.253");
	c->neighbors[1].as = 4200000000u;
	c->hold_time = 3;
	c->keepalive = 1;
}

Test(bird, generated_config)
{
	struct mux_bgp_cfg c;
	struct mux_bird_paths p;
	char buf[8192];

	test_cfg(&c);
	mux_bird_paths(&p, "/run/sluice/t");
	cr_assert_str_eq(p.ctl, "/run/sluice/t/bird.ctl");
	cr_assert_gt(mux_bird_conf(&c, &p, buf, sizeof(buf)), 0);
	cr_expect(strstr(buf, "router id 10.255.0.101;\n") != NULL);
	cr_expect(strstr(buf, "\n\tinclude \"/run/sluice/t/vips.conf\";\n") != NULL,
		"include on its own line (BIRD 2.0.12 needs it)");
	cr_expect(strstr(buf, "protocol bgp n0 {\n") != NULL);
	cr_expect(strstr(buf, "\tlocal 10.255.0.101 as 65001;\n\tstrict bind on;\n"
			      "\tneighbor 10.255.0.254 as 65000;\n") != NULL,
		"BIRD listens on local alone: a second mux (or speaker) on the host keeps its "
		"port 179");
	cr_expect(strstr(buf, "\tneighbor 10.255.0.253 as 4200000000;\n") != NULL);
	cr_expect(strstr(buf, "\thold time 3;\n\tkeepalive time 1;\n") != NULL);
	cr_expect(strstr(buf, "\t\tnext hop address 10.255.0.1;\n") != NULL,
		"the next hop is the data plane, not the session's address");
	cr_expect(strstr(buf, "graceful restart off;") != NULL);
	cr_expect_eq(mux_bird_conf(&c, &p, buf, 100), -1, "too small a buffer says so");
}

Test(bird, vips_file)
{
	uint32_t v[] = {inet_addr("192.0.2.10"), inet_addr("192.0.2.11")};
	char buf[128];

	cr_assert_eq(mux_bird_vips(v, 2, buf, sizeof(buf)), 62);
	cr_expect_str_eq(buf, "route 192.0.2.10/32 blackhole;\nroute 192.0.2.11/32 blackhole;\n");
	cr_assert_eq(mux_bird_vips(v, 0, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "");
	cr_expect_eq(mux_bird_vips(v, 2, buf, 20), -1);
}

static const char *
bird_binary(void)
{
	static const char *const where[] = {"/usr/sbin/bird", "/usr/local/sbin/bird"};
	size_t i;

	for (i = 0; i < 2; i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

/* BIRD itself parses what we generate, with and without routes. */
Test(bird, bird_accepts_the_generated_config)
{
	const char *bird = bird_binary();
	char dir[] = "/tmp/sluice-bird-XXXXXX", cmd[512], buf[8192];
	struct mux_bgp_cfg c;
	struct mux_bird_paths p;
	uint32_t v = inet_addr("192.0.2.10");
	int n;

	if (bird == NULL)
		cr_skip_test("BIRD is not installed (bird2)");
	cr_assert_not_null(mkdtemp(dir));
	test_cfg(&c);
	mux_bird_paths(&p, dir);
	n = mux_bird_conf(&c, &p, buf, sizeof(buf));
	cr_assert_eq(mux_bird_write_file(p.conf, buf, (size_t)n), 0);
	cr_assert_eq(mux_bird_write_file(p.vips, "", 0), 0);
	snprintf(cmd, sizeof(cmd), "%s -p -c %s", bird, p.conf);
	cr_expect_eq(system(cmd), 0, "%s", cmd);
	n = mux_bird_vips(&v, 1, buf, sizeof(buf));
	cr_assert_eq(mux_bird_write_file(p.vips, buf, (size_t)n), 0);
	cr_expect_eq(system(cmd), 0, "with a route: %s", cmd);
	cr_assert_eq(mux_bird_write_file(p.vips, "route 192.0.2.10/32 blackhol;\n", 30), 0);
	cr_expect_neq(system(cmd), 0, "BIRD refuses a broken routes file");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* ---- the client against a scripted fake BIRD ---- */

struct step {
	const char *cmd;   /* what the client must send */
	const char *reply; /* what the fake answers; NULL: never answers */
};

static pid_t
fake_bird(const char *path, const struct step *steps, int n)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int ls = socket(AF_UNIX, SOCK_STREAM, 0), c, i;
	char line[256];
	pid_t pid;

	strcpy(sa.sun_path, path);
	unlink(path);
	cr_assert_eq(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(ls, 1), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid > 0) {
		close(ls);
		return pid;
	}
	c = accept(ls, NULL, NULL);
	if (write(c, "0001 BIRD 2.0.12 ready.\n", 24) != 24)
		_exit(2);
	for (i = 0; i < n; i++) {
		size_t got = 0;

		while (got < sizeof(line) - 1 && read(c, line + got, 1) == 1 && line[got] != '\n')
			got++;
		line[got] = '\0';
		if (strcmp(line, steps[i].cmd) != 0)
			_exit(3);
		if (steps[i].reply == NULL) {
			pause();
			_exit(0);
		}
		if (write(c, steps[i].reply, strlen(steps[i].reply)) < 0)
			_exit(4);
	}
	_exit(0);
}

static int
reap(pid_t pid)
{
	int st;

	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A fake BIRD on a socket in a folder of its own. */
struct fake {
	char dir[32], sock[64];
	pid_t pid;
};

/* A fake that expects the n steps, and b a client connected to it. */
static void
fake_start(struct fake *f, const struct step *steps, int n, struct mux_bird *b)
{
	char err[128];

	snprintf(f->dir, sizeof(f->dir), "/tmp/sluice-bird-ctl-XXXXXX");
	cr_assert_not_null(mkdtemp(f->dir));
	snprintf(f->sock, sizeof(f->sock), "%s/bird.ctl", f->dir);
	f->pid = fake_bird(f->sock, steps, n);
	cr_assert_eq(mux_bird_connect(b, f->sock, 2000, err, sizeof(err)), 0, "%s", err);
}

/* The fake's socket and folder go (the fake itself is reaped by the test). */
static void
fake_remove(const struct fake *f)
{
	unlink(f->sock);
	rmdir(f->dir);
}

Test(bird, client_dialogue)
{
	static const struct step steps[] = {
		{"configure", "0002-Reading configuration from /x/bird.conf\n0003 Reconfigured\n"},
		{"configure", "0002-Reading configuration from /x/bird.conf\n"
			      "8002 /x/vips.conf:1:21 syntax error, unexpected CF_SYM_UNDEFINED\n"},
		{"show protocols",
			"2002-Name       Proto      Table      State  Since         Info\n"
			"1002-device1    Device     ---        up     1796150000    \n"
			" n0         BGP        ---        up     1796150123  Established   \n"
			"0000 \n"},
		{"bogus", "9001 syntax error, unexpected CF_SYM_UNDEFINED\n"},
	};
	char reply[1024], err[128];
	struct mux_bird_proto p[4];
	struct mux_bird b;
	struct fake f;

	fake_start(&f, steps, 4, &b);
	cr_expect_eq(
		mux_bird_cmd(&b, "configure", 2000, reply, sizeof(reply), err, sizeof(err)), 3);
	cr_expect_str_eq(
		reply, "0002 Reading configuration from /x/bird.conf\n0003 Reconfigured\n");
	cr_expect_eq(
		mux_bird_cmd(&b, "configure", 2000, reply, sizeof(reply), err, sizeof(err)), 8002);
	cr_expect(strstr(reply, "8002 /x/vips.conf:1:21 syntax error") != NULL, "%s", reply);
	cr_expect_eq(
		mux_bird_cmd(&b, "show protocols", 2000, reply, sizeof(reply), err, sizeof(err)),
		0);
	cr_assert_eq(mux_bird_parse_protocols(reply, p, 4), 2, "%s", reply);
	cr_expect_str_eq(p[1].name, "n0", "a continuation line is a row of its own");
	cr_expect_str_eq(p[1].info, "Established");
	cr_expect_eq(mux_bird_cmd(&b, "bogus", 2000, NULL, 0, err, sizeof(err)), 9001);
	mux_bird_close(&b);
	cr_expect_eq(reap(f.pid), 0, "the fake saw exactly the commands expected");
	fake_remove(&f);
}

Test(bird, client_gives_up_on_a_silent_bird)
{
	static const struct step steps[] = {{"show protocols", NULL}};
	char err[128];
	struct mux_bird b;
	struct fake f;

	fake_start(&f, steps, 1, &b);
	cr_expect_eq(mux_bird_cmd(&b, "show protocols", 200, NULL, 0, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "control socket: no answer in time");
	cr_expect_eq(b.fd, -1, "a failed connection is closed");
	cr_expect_eq(mux_bird_cmd(&b, "show protocols", 200, NULL, 0, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "control socket: not connected");
	kill(f.pid, SIGKILL);
	reap(f.pid);
	fake_remove(&f);
}

Test(bird, client_without_a_bird)
{
	struct mux_bird b;
	char err[128];

	cr_expect_eq(
		mux_bird_connect(&b, "/tmp/sluice-no-such-bird.ctl", 200, err, sizeof(err)), -1);
	cr_expect(strstr(err, "No such file") != NULL, "%s", err);
}
