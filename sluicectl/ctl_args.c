/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the operator's command line for sluice-manager.
 *
 * One nng req0 request per command, one lb_msg each way (CTL_REQUEST,
 * CTL_REPLY), so the CLI knows nothing of the wire format beyond the
 * codec. Every argument is checked here before anything is sent, so a typo
 * is a usage error naming the argument, never a round trip.
 *
 * A change (vip add/del, backend add/del/set, config apply) is accepted by
 * the manager as "will commit as version N"; by default the CLI then polls
 * WAIT N until every member has voted and the version is committed or
 * aborted, so a script that runs sluicectl knows the data plane has it.
 *
 * The dial is synchronous so that an unreachable manager is one immediate,
 * clear error (exit 3); an interval timer bounds it for peers that never
 * answer a SYN or a TLS hello.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_codec.h"
#include "lb_config.h"
#include "lb_err.h"
#include "lb_file.h"
#include "lb_flow.h"
#include "lb_hdr.h"
#include "lb_proof.h"

#define CTL_DEFAULT_URL "ipc:///run/sluice/manager.sock"
#define CTL_DEFAULT_SERVER_NAME "sluice-manager"
#define CTL_DEFAULT_TIMEOUT 10.0
/* A commit takes milliseconds: poll from 2 ms, doubling to 50 ms. */
#define CTL_POLL_FIRST_MS 2
#define CTL_POLL_MS 50
#define CTL_MAX_PEM (1u << 20)
/* An applied file travels in one message: leave room for the envelope. */
#define CTL_MAX_FILE (LB_MSG_MAX_BYTES - 4096)

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_REFUSED = 1, /* the manager said no, or a change aborted */
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_UNREACHABLE = 3,
};

/* Command-specific options; each command lists the ones it takes. */
enum {
	CTL_O_PROTO = 1u << 0,
	CTL_O_HOST = 1u << 1,
	CTL_O_WEIGHT = 1u << 2,
	CTL_O_STATE = 1u << 3,
	CTL_O_LIMIT = 1u << 4,
	/* pool options (vip add, vip set) */
	CTL_O_PROBE = 1u << 5,
	CTL_O_PROBE_PORT = 1u << 6,
	CTL_O_PATH = 1u << 7,
	CTL_O_CODES = 1u << 8,
	CTL_O_INTERVAL = 1u << 9,
	CTL_O_PROBE_TIMEOUT = 1u << 10,
	CTL_O_HEALTHY = 1u << 11,
	CTL_O_UNHEALTHY = 1u << 12,
	CTL_O_DRAIN_DELAY = 1u << 13,
	CTL_O_SLOW_START = 1u << 14,
	CTL_O_MIN_HEALTHY = 1u << 15,
};

#define CTL_O_POOL                                                                                 \
	(CTL_O_PROBE | CTL_O_PROBE_PORT | CTL_O_PATH | CTL_O_CODES | CTL_O_INTERVAL |              \
		CTL_O_PROBE_TIMEOUT | CTL_O_HEALTHY | CTL_O_UNHEALTHY | CTL_O_DRAIN_DELAY |        \
		CTL_O_SLOW_START | CTL_O_MIN_HEALTHY)

/* getopt_long values of the long-only options. */
enum {
	CTL_OPT_JSON = 256,
	CTL_OPT_MANAGER,
	CTL_OPT_CA,
	CTL_OPT_CERT,
	CTL_OPT_KEY,
	CTL_OPT_SERVER_NAME,
	CTL_OPT_TIMEOUT,
	CTL_OPT_NO_WAIT,
	CTL_OPT_PROTO,
	CTL_OPT_HOST,
	CTL_OPT_WEIGHT,
	CTL_OPT_STATE,
	CTL_OPT_LIMIT,
	CTL_OPT_POOL, /* the pool options: CTL_OPT_POOL + index in ctl_pool_opts */
};

#define CTL_MAX_WORDS 8

struct ctl_opts {
	bool json;
	bool no_wait;
	bool help;
	const char *url;
	const char *ca, *cert, *key;
	bool tls_on_cmdline; /* --ca/--cert/--key given (not just the environment) */
	const char *server_name;
	double timeout;
	unsigned given; /* CTL_O_* seen */
	const char *proto, *host, *weight, *state, *limit;
	const char *pool[11]; /* the pool options' values, as ctl_pool_opts lists them */
	int n_words;
	const char *words[CTL_MAX_WORDS];
};

struct ctl_cmd {
	const char *group; /* "vip", "backend", "config" or NULL */
	const char *name;
	enum lb_ctl_op op;
	int min_args, max_args; /* positionals after the command's name */
	unsigned opts;		/* CTL_O_* it accepts */
	bool change;		/* commits a new version: wait for it */
	const char *synopsis;
};

static const struct ctl_cmd ctl_cmds[] = {
	{NULL, "status", LB_CTL_STATUS, 0, 0, 0, false, "status"},
	{"vip", "list", LB_CTL_VIP_LIST, 0, 0, 0, false, "vip list"},
	{"vip", "show", LB_CTL_VIP_LIST, 1, 1, CTL_O_PROTO, false,
		"vip show VIP:PORT [--proto tcp|udp]"},
	{"vip", "add", LB_CTL_VIP_ADD, 1, 1, CTL_O_PROTO | CTL_O_POOL, true,
		"vip add VIP:PORT [--proto tcp|udp] [POOL OPTIONS]"},
	{"vip", "set", LB_CTL_VIP_SET, 1, 1, CTL_O_PROTO | CTL_O_POOL, true,
		"vip set VIP:PORT [--proto tcp|udp] [--probe none|tcp|http] [--probe-port N] "
		"[--path P] [--codes 200-399] [--interval S] [--probe-timeout S] [--healthy N] "
		"[--unhealthy N] [--drain-delay S] [--slow-start S] [--min-healthy N|N%|N,M%]"},
	{"vip", "del", LB_CTL_VIP_DEL, 1, 1, CTL_O_PROTO, true,
		"vip del VIP:PORT [--proto tcp|udp]"},
	{"backend", "add", LB_CTL_BACKEND_ADD, 2, 2,
		CTL_O_PROTO | CTL_O_HOST | CTL_O_WEIGHT | CTL_O_STATE, true,
		"backend add VIP:PORT DIP:PORT --host PA [--weight N] "
		"[--state active|drain|maint] [--proto tcp|udp]"},
	{"backend", "del", LB_CTL_BACKEND_DEL, 2, 2, CTL_O_PROTO, true,
		"backend del VIP:PORT DIP:PORT [--proto tcp|udp]"},
	{"backend", "set", LB_CTL_BACKEND_SET, 2, 2,
		CTL_O_PROTO | CTL_O_HOST | CTL_O_WEIGHT | CTL_O_STATE, true,
		"backend set VIP:PORT DIP:PORT [--weight N] [--state active|drain|maint] "
		"[--host PA] [--proto tcp|udp]"},
	{NULL, "history", LB_CTL_HISTORY, 0, 0, CTL_O_LIMIT, false, "history [--limit N]"},
	{"config", "export", LB_CTL_EXPORT, 0, 1, 0, false, "config export [FILE]"},
	{"config", "apply", LB_CTL_APPLY, 1, 1, 0, true, "config apply [-f] FILE"},
};

#define CTL_N_CMDS (sizeof(ctl_cmds) / sizeof(ctl_cmds[0]))

/* The pool options: their names, bits, and the ranges sluicectl checks itself. */
static const struct ctl_pool_opt {
	const char *name;
	unsigned bit;
	unsigned long min, max;
} ctl_pool_opts[] = {
	{"probe", CTL_O_PROBE, 0, 0},
	{"probe-port", CTL_O_PROBE_PORT, 0, 65535},
	{"path", CTL_O_PATH, 0, 0},
	{"codes", CTL_O_CODES, 0, 0},
	{"interval", CTL_O_INTERVAL, LB_POOL_INTERVAL_MIN, LB_POOL_INTERVAL_MAX},
	{"probe-timeout", CTL_O_PROBE_TIMEOUT, LB_POOL_TIMEOUT_MIN, LB_POOL_TIMEOUT_MAX},
	{"healthy", CTL_O_HEALTHY, LB_POOL_THRESHOLD_MIN, LB_POOL_THRESHOLD_MAX},
	{"unhealthy", CTL_O_UNHEALTHY, LB_POOL_THRESHOLD_MIN, LB_POOL_THRESHOLD_MAX},
	{"drain-delay", CTL_O_DRAIN_DELAY, 0, LB_POOL_DRAIN_DELAY_MAX},
	{"slow-start", CTL_O_SLOW_START, 0, LB_POOL_SLOW_START_MAX},
	{"min-healthy", CTL_O_MIN_HEALTHY, 0, 0},
};

#define CTL_N_POOL_OPTS (sizeof(ctl_pool_opts) / sizeof(ctl_pool_opts[0]))

static const char ctl_usage_text[] =
	"usage: sluicectl [OPTIONS] COMMAND [ARGS]\n"
	"\n"
	"Commands:\n"
	"  status                        members, versions and pending changes\n"
	"  vip list                      the committed services and their backends\n"
	"  vip add VIP:PORT              add a service (no backends yet)\n"
	"  vip set VIP:PORT POOL OPTIONS change the service's pool (health probes,\n"
	"                                draining, slow start, minimum healthy)\n"
	"  vip del VIP:PORT              remove a service and its backends\n"
	"  backend add VIP:PORT DIP:PORT --host PA [--weight N] [--state S]\n"
	"                                add a backend; PA is the address of the host\n"
	"                                whose agent owns DIP\n"
	"  backend del VIP:PORT DIP:PORT remove a backend\n"
	"  backend set VIP:PORT DIP:PORT [--weight N] [--state S] [--host PA]\n"
	"                                change a backend (at least one option)\n"
	"  history [--limit N]           committed and aborted versions, newest first\n"
	"  config export [FILE]          the committed table as a services file\n"
	"  config apply FILE             make FILE's services the desired table\n"
	"  help                          this text\n"
	"\n"
	"Command options:\n"
	"  --proto tcp|udp               the service's protocol (default tcp)\n"
	"  --host PA                     the backend's host (physical) address\n"
	"  --weight N                    0..65535 (default 1; 0 takes no new flows)\n"
	"  --state active|drain|maint    (default active)\n"
	"  --limit N                     the newest N versions (default 0: all)\n"
	"\n"
	"Pool options (vip add, vip set; docs/manager.md has the defaults):\n"
	"  --probe none|tcp|http         how backends are probed (default tcp)\n"
	"  --probe-port N                probe this port, not the backend's (0: its own)\n"
	"  --path P                      http: the path to GET (default /)\n"
	"  --codes C                     http: the codes that pass (default 200-399)\n"
	"  --interval S                  seconds between probes, 1..300 (default 30)\n"
	"  --probe-timeout S             seconds a probe may take, 1..120, below the\n"
	"                                interval (default 5)\n"
	"  --healthy N                   successes to become healthy, 1..10 (default 5)\n"
	"  --unhealthy N                 failures to become unhealthy, 1..10 (default 2)\n"
	"  --drain-delay S               deregistration delay, 0..3600 (default 300)\n"
	"  --slow-start S                ramp a backend up over S s, 30..900; 0 off\n"
	"  --min-healthy N|N%|N,M%       below it the pool fails open (default 1; 0 off)\n"
	"\n"
	"Global options:\n"
	"  --manager URL                 the manager's control socket (env SLUICE_MANAGER;\n"
	"                                default " CTL_DEFAULT_URL ")\n"
	"  --ca FILE                     tls+tcp: the CA that signed the manager (SLUICE_CA)\n"
	"  --cert FILE                   tls+tcp: our certificate (SLUICE_CERT)\n"
	"  --key FILE                    tls+tcp: our private key (SLUICE_KEY)\n"
	"  --server-name NAME            tls+tcp: the name in the manager's certificate\n"
	"                                (default " CTL_DEFAULT_SERVER_NAME ")\n"
	"  --timeout SEC                 for each request and for a change to commit\n"
	"                                (default 10)\n"
	"  --no-wait                     return once a change is accepted\n"
	"  --json                        print the reply as JSON, for programs\n"
	"  -h, --help                    this text\n"
	"\n"
	"Exit status: 0 done; 1 the manager refused, or a change aborted or did not\n"
	"commit in time; 2 usage error; 3 the manager cannot be reached.\n";

static void
ctl_usage_short(const struct ctl_cmd *cmd)
{
	if (cmd != NULL)
		fprintf(stderr, "usage: sluicectl %s\n", cmd->synopsis);
	else
		fprintf(stderr, "usage: sluicectl [OPTIONS] COMMAND [ARGS]\n");
	fprintf(stderr, "(sluicectl --help lists every command and option)\n");
}

/* Report a usage error about cmd (NULL: about the command line) and return 2. */
static int __attribute__((format(printf, 2, 3)))
ctl_usage_error(const struct ctl_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sluicectl: ");
	if (cmd != NULL && cmd->group != NULL)
		fprintf(stderr, "%s %s: ", cmd->group, cmd->name);
	else if (cmd != NULL)
		fprintf(stderr, "%s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ctl_usage_short(cmd);
	return CTL_EXIT_USAGE;
}

/* ---- argument parsing ---------------------------------------------------- */

/* Decimal digits only (no sign, no space, no hex) in [0, max]. */
static bool
ctl_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > max)
			return false;
	}
	*out = v;
	return true;
}

static bool
ctl_parse_ipv4(const char *s, lb_be32_t *out)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return false;
	*out = a.s_addr;
	return true;
}

/* "A.B.C.D:PORT", port 1..65535. */
static int
ctl_parse_endpoint(const struct ctl_cmd *cmd, const char *s, lb_be32_t *ip, uint16_t *port)
{
	char addr[INET_ADDRSTRLEN];
	const char *colon = strrchr(s, ':');
	unsigned long p;
	size_t alen;

	alen = colon != NULL ? (size_t)(colon - s) : sizeof(addr);
	if (alen < sizeof(addr)) {
		memcpy(addr, s, alen);
		addr[alen] = '\0';
	}
	if (alen >= sizeof(addr) || !ctl_parse_ipv4(addr, ip) || colon[1] == '\0' ||
		strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return ctl_usage_error(cmd, "%s: not an IPv4 address:port", s);
	if (!ctl_parse_uint(colon + 1, 65535, &p) || p == 0)
		return ctl_usage_error(cmd, "%s: port is out of range 1..65535", s);
	*port = (uint16_t)p;
	return 0;
}

static int
ctl_parse_proto(const struct ctl_cmd *cmd, const char *s, uint8_t *out)
{
	if (s == NULL || strcmp(s, "tcp") == 0)
		*out = LB_IPPROTO_TCP;
	else if (strcmp(s, "udp") == 0)
		*out = LB_IPPROTO_UDP;
	else
		return ctl_usage_error(cmd, "--proto %s: must be tcp or udp", s);
	return 0;
}

static int
ctl_parse_state(const struct ctl_cmd *cmd, const char *s, uint8_t *out)
{
	if (strcmp(s, "active") == 0)
		*out = LB_BACKEND_ACTIVE;
	else if (strcmp(s, "drain") == 0)
		*out = LB_BACKEND_DRAIN;
	else if (strcmp(s, "maint") == 0)
		*out = LB_BACKEND_MAINT;
	else
		return ctl_usage_error(cmd, "--state %s: must be active, drain or maint", s);
	return 0;
}

/* The service key from "VIP:PORT" and --proto. */
static int
ctl_parse_svc(
	const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *arg, struct lb_ctl *ctl)
{
	lb_be32_t vip;
	uint16_t port;
	uint8_t proto = 0;
	int rc;

	rc = ctl_parse_endpoint(cmd, arg, &vip, &port);
	if (rc == 0)
		rc = ctl_parse_proto(cmd, o->proto, &proto);
	if (rc != 0)
		return rc;
	lb_svc_key_v4(&ctl->svc, vip, lb_cpu_to_be16(port), proto);
	ctl->has_svc = true;
	return 0;
}

/* The backend from "DIP:PORT" and --host/--weight/--state (as given). */
static int
ctl_parse_backend(
	const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *arg, struct lb_ctl *ctl)
{
	struct lb_backend_cfg *be = &ctl->be;
	unsigned long w;
	lb_be32_t ip;
	int rc;

	rc = ctl_parse_endpoint(cmd, arg, &ip, &be->port);
	if (rc != 0)
		return rc;
	lb_addr_v4(&be->dip, ip);
	ctl->has_be = true;
	be->weight = 1;
	be->state = LB_BACKEND_ACTIVE;
	if (o->host != NULL) {
		if (!ctl_parse_ipv4(o->host, &ip))
			return ctl_usage_error(cmd, "--host %s: not an IPv4 address", o->host);
		lb_addr_v4(&be->host, ip);
		ctl->set_host = true;
	}
	if (o->weight != NULL) {
		if (!ctl_parse_uint(o->weight, 65535, &w))
			return ctl_usage_error(cmd, "--weight %s: must be 0..65535", o->weight);
		be->weight = (uint32_t)w;
		ctl->set_weight = true;
	}
	if (o->state != NULL) {
		rc = ctl_parse_state(cmd, o->state, &be->state);
		if (rc != 0)
			return rc;
		ctl->set_state = true;
	}
	return 0;
}

/* --min-healthy N, N% or N,M%: a count, a percent, or both. */
static int
ctl_parse_min_healthy(const struct ctl_cmd *cmd, const char *s, struct lb_pool_opts *p)
{
	char buf[32], *pct, *comma;
	unsigned long v;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", s);
	comma = strchr(buf, ',');
	pct = comma != NULL ? comma + 1 : strchr(buf, '%') != NULL ? buf : NULL;
	if (comma != NULL)
		*comma = '\0';
	if (pct != buf) {
		if (!ctl_parse_uint(buf, LB_POOL_MIN_HEALTHY_MAX, &v))
			goto bad;
		p->min_healthy = (uint32_t)v;
		p->given |= LB_POOL_MIN_HEALTHY;
	}
	if (pct != NULL) {
		size_t n = strlen(pct);

		if (n < 2 || pct[n - 1] != '%')
			goto bad;
		pct[n - 1] = '\0';
		if (!ctl_parse_uint(pct, 100, &v))
			goto bad;
		p->min_healthy_pct = (uint32_t)v;
		p->given |= LB_POOL_MIN_HEALTHY_PCT;
	}
	return 0;
bad:
	return ctl_usage_error(cmd,
		"--min-healthy %s: expected a count (0..%d), a percent (0%%..100%%) or both "
		"(2,50%%)",
		s, LB_POOL_MIN_HEALTHY_MAX);
}

/* The pool options given, into p (the manager checks how they fit together). */
static int
ctl_parse_pool(const struct ctl_cmd *cmd, const struct ctl_opts *o, struct lb_pool_opts *p)
{
	static const unsigned field[] = {LB_POOL_PROBE, LB_POOL_PROBE_PORT, LB_POOL_PATH,
		LB_POOL_CODES, LB_POOL_INTERVAL, LB_POOL_TIMEOUT, LB_POOL_HEALTHY,
		LB_POOL_UNHEALTHY, LB_POOL_DRAIN_DELAY, LB_POOL_SLOW_START, 0};
	uint32_t *num[] = {NULL, NULL, NULL, NULL, &p->interval_s, &p->timeout_s, &p->healthy,
		&p->unhealthy, &p->drain_delay_s, &p->slow_start_s};
	unsigned long v;
	size_t i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < CTL_N_POOL_OPTS; i++) {
		const struct ctl_pool_opt *po = &ctl_pool_opts[i];
		const char *a = o->pool[i];

		if (a == NULL)
			continue;
		switch (po->bit) {
		case CTL_O_PROBE:
			if (strcmp(a, "none") == 0)
				p->probe = LB_PROBE_NONE;
			else if (strcmp(a, "tcp") == 0)
				p->probe = LB_PROBE_TCP;
			else if (strcmp(a, "http") == 0)
				p->probe = LB_PROBE_HTTP;
			else
				return ctl_usage_error(
					cmd, "--probe %s: must be none, tcp or http", a);
			break;
		case CTL_O_PROBE_PORT:
			if (!ctl_parse_uint(a, 65535, &v))
				return ctl_usage_error(cmd,
					"--probe-port %s: must be 0..65535 (0: the backend's port)",
					a);
			p->probe_port = (uint16_t)v;
			break;
		case CTL_O_PATH:
			if (a[0] != '/' || strlen(a) >= LB_POOL_PATH_LEN || strpbrk(a, " \t\r\n"))
				return ctl_usage_error(cmd,
					"--path %s: must begin with /, hold no spaces and be "
					"shorter "
					"than %d characters",
					a, LB_POOL_PATH_LEN);
			snprintf(p->path, sizeof(p->path), "%s", a);
			break;
		case CTL_O_CODES:
			if (a[0] == '\0' || strlen(a) >= LB_POOL_CODES_LEN ||
				strspn(a, "0123456789,-") != strlen(a))
				return ctl_usage_error(cmd,
					"--codes %s: expected codes or ranges like 200-399 or "
					"200,302",
					a);
			snprintf(p->codes, sizeof(p->codes), "%s", a);
			break;
		case CTL_O_MIN_HEALTHY:
			if (ctl_parse_min_healthy(cmd, a, p) != 0)
				return CTL_EXIT_USAGE;
			continue;
		default:
			if (!ctl_parse_uint(a, po->max, &v) || v < po->min ||
				(po->bit == CTL_O_SLOW_START && v != 0 &&
					v < LB_POOL_SLOW_START_MIN))
				return ctl_usage_error(cmd, "--%s %s: must be %lu..%lu%s", po->name,
					a,
					po->bit == CTL_O_SLOW_START ? LB_POOL_SLOW_START_MIN
								    : po->min,
					po->max, po->bit == CTL_O_SLOW_START ? " (or 0: off)" : "");
			*num[i] = (uint32_t)v;
			break;
		}
		p->given |= field[i];
	}
	return 0;
}

/* Read FILE whole into a NUL-terminated malloc'd string. */
static int
ctl_read_file(const struct ctl_cmd *cmd, const char *path, char **out)
{
	size_t n;
	int rc = lb_read_file(path, CTL_MAX_FILE, out, &n);

	if (rc == -EFBIG)
		return ctl_usage_error(cmd, "%s: larger than %u bytes", path, CTL_MAX_FILE);
	if (rc != 0)
		return ctl_usage_error(cmd, "%s: %s", path, strerror(-rc));
	/* The body is a protobuf string: a NUL would cut it short unseen. */
	if (strlen(*out) != n) {
		free(*out);
		*out = NULL;
		return ctl_usage_error(cmd, "%s: contains a NUL byte: not a services file", path);
	}
	return 0;
}

static const struct ctl_cmd *
ctl_find_cmd(const struct ctl_opts *o, int *n_used)
{
	const char *w0 = o->words[0], *w1 = o->n_words > 1 ? o->words[1] : NULL;

	for (size_t i = 0; i < CTL_N_CMDS; i++) {
		const struct ctl_cmd *c = &ctl_cmds[i];

		if (c->group == NULL && strcmp(c->name, w0) == 0) {
			*n_used = 1;
			return c;
		}
		if (c->group != NULL && strcmp(c->group, w0) == 0 && w1 != NULL &&
			strcmp(c->name, w1) == 0) {
			*n_used = 2;
			return c;
		}
	}
	return NULL;
}

/* "vip" alone, or "vip frob": name the subcommands the group has. */
static int
ctl_group_error(const char *group, const char *sub)
{
	char names[64] = "";
	bool known = false;

	for (size_t i = 0; i < CTL_N_CMDS; i++) {
		if (ctl_cmds[i].group == NULL || strcmp(ctl_cmds[i].group, group) != 0)
			continue;
		known = true;
		if (names[0] != '\0')
			strncat(names, ", ", sizeof(names) - strlen(names) - 1);
		strncat(names, ctl_cmds[i].name, sizeof(names) - strlen(names) - 1);
	}
	if (!known)
		return ctl_usage_error(NULL, "%s: unknown command", group);
	if (sub == NULL)
		return ctl_usage_error(NULL, "%s: missing subcommand (%s)", group, names);
	return ctl_usage_error(NULL, "%s %s: unknown subcommand (%s)", group, sub, names);
}

static const char *
ctl_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* "ctl:user@host": who asks, as the manager's history shows it. */
static void
ctl_sender(char *out, size_t len)
{
	const char *user = getenv("SUDO_USER") ? getenv("SUDO_USER") : getenv("USER");
	struct passwd *pw = user == NULL ? getpwuid(getuid()) : NULL;
	char host[64] = "";

	if (user == NULL)
		user = pw != NULL ? pw->pw_name : "unknown";
	gethostname(host, sizeof(host) - 1);
	snprintf(out, len, "ctl:%.24s@%.32s", user, host);
}

static int
ctl_parse_args(int argc, char **argv, struct ctl_opts *o)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"json", no_argument, NULL, CTL_OPT_JSON},
		{"manager", required_argument, NULL, CTL_OPT_MANAGER},
		{"ca", required_argument, NULL, CTL_OPT_CA},
		{"cert", required_argument, NULL, CTL_OPT_CERT},
		{"key", required_argument, NULL, CTL_OPT_KEY},
		{"server-name", required_argument, NULL, CTL_OPT_SERVER_NAME},
		{"timeout", required_argument, NULL, CTL_OPT_TIMEOUT},
		{"no-wait", no_argument, NULL, CTL_OPT_NO_WAIT},
		{"proto", required_argument, NULL, CTL_OPT_PROTO},
		{"host", required_argument, NULL, CTL_OPT_HOST},
		{"weight", required_argument, NULL, CTL_OPT_WEIGHT},
		{"state", required_argument, NULL, CTL_OPT_STATE},
		{"limit", required_argument, NULL, CTL_OPT_LIMIT},
		{"probe", required_argument, NULL, CTL_OPT_POOL + 0},
		{"probe-port", required_argument, NULL, CTL_OPT_POOL + 1},
		{"path", required_argument, NULL, CTL_OPT_POOL + 2},
		{"codes", required_argument, NULL, CTL_OPT_POOL + 3},
		{"interval", required_argument, NULL, CTL_OPT_POOL + 4},
		{"probe-timeout", required_argument, NULL, CTL_OPT_POOL + 5},
		{"healthy", required_argument, NULL, CTL_OPT_POOL + 6},
		{"unhealthy", required_argument, NULL, CTL_OPT_POOL + 7},
		{"drain-delay", required_argument, NULL, CTL_OPT_POOL + 8},
		{"slow-start", required_argument, NULL, CTL_OPT_POOL + 9},
		{"min-healthy", required_argument, NULL, CTL_OPT_POOL + 10},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->url = ctl_env("SLUICE_MANAGER");
	o->ca = ctl_env("SLUICE_CA");
	o->cert = ctl_env("SLUICE_CERT");
	o->key = ctl_env("SLUICE_KEY");
	o->server_name = CTL_DEFAULT_SERVER_NAME;
	o->timeout = CTL_DEFAULT_TIMEOUT;
	if (o->url == NULL)
		o->url = CTL_DEFAULT_URL;

	/*
	 * Leading '-': words come back in order as option 1, so options may
	 * follow the command whatever POSIXLY_CORRECT says; ':' reports a
	 * missing argument apart from an unknown option.
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:hf:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': /* config apply -f FILE: the file, as ipvsadm and kubectl take it */
		case 1:
			if (o->n_words == CTL_MAX_WORDS)
				return ctl_usage_error(NULL, "%s: too many arguments", optarg);
			o->words[o->n_words++] = optarg;
			break;
		case 'h':
			o->help = true;
			break;
		case CTL_OPT_JSON:
			o->json = true;
			break;
		case CTL_OPT_MANAGER:
			o->url = optarg;
			break;
		case CTL_OPT_CA:
			o->ca = optarg;
			o->tls_on_cmdline = true;
			break;
		case CTL_OPT_CERT:
			o->cert = optarg;
			o->tls_on_cmdline = true;
			break;
		case CTL_OPT_KEY:
			o->key = optarg;
			o->tls_on_cmdline = true;
			break;
		case CTL_OPT_SERVER_NAME:
			o->server_name = optarg;
			break;
		case CTL_OPT_TIMEOUT:
			errno = 0;
			o->timeout = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' || !(o->timeout > 0) ||
				o->timeout > 86400)
				return ctl_usage_error(NULL,
					"--timeout %s: must be a number of seconds in (0, 86400]",
					optarg);
			break;
		case CTL_OPT_NO_WAIT:
			o->no_wait = true;
			break;
		case CTL_OPT_PROTO:
			o->proto = optarg;
			o->given |= CTL_O_PROTO;
			break;
		case CTL_OPT_HOST:
			o->host = optarg;
			o->given |= CTL_O_HOST;
			break;
		case CTL_OPT_WEIGHT:
			o->weight = optarg;
			o->given |= CTL_O_WEIGHT;
			break;
		case CTL_OPT_STATE:
			o->state = optarg;
			o->given |= CTL_O_STATE;
			break;
		case CTL_OPT_LIMIT:
			o->limit = optarg;
			o->given |= CTL_O_LIMIT;
			break;
		case ':':
			return ctl_usage_error(NULL, "%s: needs an argument", argv[optind - 1]);
		default:
			if (c >= CTL_OPT_POOL && c < CTL_OPT_POOL + (int)CTL_N_POOL_OPTS) {
				o->pool[c - CTL_OPT_POOL] = optarg;
				o->given |= ctl_pool_opts[c - CTL_OPT_POOL].bit;
				break;
			}
			if (optopt != 0)
				return ctl_usage_error(NULL, "-%c: unknown option", optopt);
			return ctl_usage_error(NULL, "%s: unknown option", argv[optind - 1]);
		}
	}
	/* Words after "--". */
	for (; optind < argc; optind++) {
		if (o->n_words == CTL_MAX_WORDS)
			return ctl_usage_error(NULL, "%s: too many arguments", argv[optind]);
		o->words[o->n_words++] = argv[optind];
	}
	return 0;
}

/* Check the words and options against cmd and fill the request. */
static int
ctl_build_request(const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *const *args,
	int n_args, struct lb_msg *req)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{CTL_O_PROTO, "--proto"},
		{CTL_O_HOST, "--host"},
		{CTL_O_WEIGHT, "--weight"},
		{CTL_O_STATE, "--state"},
		{CTL_O_LIMIT, "--limit"},
	};
	struct lb_ctl *ctl = &req->ctl;
	unsigned long limit;
	int rc;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((o->given & names[i].bit) && !(cmd->opts & names[i].bit))
			return ctl_usage_error(
				cmd, "%s does not apply to this command", names[i].name);
	for (size_t i = 0; i < CTL_N_POOL_OPTS; i++)
		if ((o->given & ctl_pool_opts[i].bit) && !(cmd->opts & ctl_pool_opts[i].bit))
			return ctl_usage_error(
				cmd, "--%s does not apply to this command", ctl_pool_opts[i].name);
	if (n_args < cmd->min_args)
		return ctl_usage_error(cmd, "missing argument");
	if (n_args > cmd->max_args)
		return ctl_usage_error(cmd, "%s: unexpected argument", args[cmd->max_args]);

	req->type = LB_MSG_CTL_REQUEST;
	ctl_sender(req->sender, sizeof(req->sender));
	req->role = LB_ROLE_CTL;
	ctl->op = cmd->op;

	switch (cmd->op) {
	case LB_CTL_VIP_ADD:
	case LB_CTL_VIP_SET:
		rc = ctl_parse_svc(cmd, o, args[0], ctl);
		if (rc == 0)
			rc = ctl_parse_pool(cmd, o, &ctl->pool);
		if (rc == 0 && cmd->op == LB_CTL_VIP_SET && ctl->pool.given == 0)
			return ctl_usage_error(cmd, "nothing to change: give a pool option "
						    "(--probe, --interval, --probe-timeout, ...)");
		return rc;
	case LB_CTL_VIP_DEL:
		return ctl_parse_svc(cmd, o, args[0], ctl);
	case LB_CTL_VIP_LIST:
		/* vip show: one service */
		return n_args == 1 ? ctl_parse_svc(cmd, o, args[0], ctl) : 0;
	case LB_CTL_BACKEND_ADD:
		if (o->host == NULL)
			return ctl_usage_error(cmd, "--host PA is required");
		/* fall through */
	case LB_CTL_BACKEND_DEL:
	case LB_CTL_BACKEND_SET:
		rc = ctl_parse_svc(cmd, o, args[0], ctl);
		if (rc == 0)
			rc = ctl_parse_backend(cmd, o, args[1], ctl);
		if (rc != 0)
			return rc;
		if (cmd->op == LB_CTL_BACKEND_SET && !ctl->set_weight && !ctl->set_state &&
			!ctl->set_host)
			return ctl_usage_error(
				cmd, "nothing to change: give --weight, --state or --host");
		if (cmd->op != LB_CTL_BACKEND_SET)
			ctl->set_weight = ctl->set_state = ctl->set_host = false;
		return 0;
	case LB_CTL_HISTORY:
		if (o->limit != NULL) {
			if (!ctl_parse_uint(o->limit, UINT32_MAX, &limit))
				return ctl_usage_error(cmd,
					"--limit %s: must be a number 0..%" PRIu32, o->limit,
					UINT32_MAX);
			ctl->limit = (uint32_t)limit;
		}
		return 0;
	case LB_CTL_APPLY:
		return ctl_read_file(cmd, args[0], &req->body);
	default:
		return 0;
	}
}

/* ---- talking to the manager ---------------------------------------------- */

struct ctl_conn {
	nng_socket sock;
	const char *url;
	double timeout;
	/* tls+tcp: we prove the name on our certificate (lb_proof.h) */
	struct lb_proof_signer *signer;
	bool have_nonce; /* the manager's challenge for this connection */
	uint8_t nonce[LB_NONCE_LEN];
};

static char ctl_dial_timeout_msg[512];

/* The dial outlived --timeout (a dropped SYN, a peer that never answers TLS). */
static void
ctl_dial_alarm(int sig)
{
	ssize_t n;

	(void)sig;
	n = write(STDERR_FILENO, ctl_dial_timeout_msg, strlen(ctl_dial_timeout_msg));
	(void)n;
	_exit(CTL_EXIT_UNREACHABLE);
}

static void
ctl_dial_timer(double seconds)
{
	struct itimerval it = {0};

	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
	/* A zero timer would be no timer: --timeout is at least a microsecond. */
	if (seconds > 0 && it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* A PEM file (a certificate or a key) as a string. */
static int
ctl_read_pem(const char *opt, const char *path, char **out)
{
	int rc = lb_read_file(path, CTL_MAX_PEM, out, NULL);

	if (rc != 0)
		return ctl_usage_error(NULL, "%s %s: %s", opt, path,
			rc == -EFBIG ? "too large for a PEM file" : strerror(-rc));
	return 0;
}

/* nng_tls_config_free() does not take NULL. */
static void
ctl_tls_config_free(nng_tls_config *cfg)
{
	if (cfg != NULL)
		nng_tls_config_free(cfg);
}

static int
ctl_tls_config(const struct ctl_opts *o, nng_tls_config **out)
{
	char *cert = NULL, *key = NULL;
	nng_tls_config *cfg;
	int rv, rc;

	if (o->ca == NULL || o->cert == NULL || o->key == NULL)
		return ctl_usage_error(NULL,
			"%s: tls+tcp needs --ca, --cert and --key (or SLUICE_CA, SLUICE_CERT, "
			"SLUICE_KEY)",
			o->url);
	rv = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_CLIENT);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: TLS: %s\n", nng_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	rv = nng_tls_config_ca_file(cfg, o->ca);
	if (rv != 0) {
		nng_tls_config_free(cfg);
		return ctl_usage_error(NULL, "--ca %s: %s", o->ca, nng_strerror(rv));
	}
	/*
	 * nng_tls_config_cert_key_file() wants both in one file; ours are
	 * two (as make-certs.sh writes them), so load them as PEM text.
	 */
	rc = ctl_read_pem("--cert", o->cert, &cert);
	if (rc == 0)
		rc = ctl_read_pem("--key", o->key, &key);
	if (rc == 0) {
		rv = nng_tls_config_own_cert(cfg, cert, key, NULL);
		if (rv != 0)
			rc = ctl_usage_error(
				NULL, "--cert %s, --key %s: %s", o->cert, o->key, nng_strerror(rv));
	}
	free(cert);
	if (key != NULL) {
		explicit_bzero(key, strlen(key));
		free(key);
	}
	if (rc != 0) {
		nng_tls_config_free(cfg);
		return rc;
	}
	rv = nng_tls_config_server_name(cfg, o->server_name);
	if (rv == 0)
		rv = nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_REQUIRED);
	if (rv != 0) {
		nng_tls_config_free(cfg);
		fprintf(stderr, "sluicectl: TLS: %s\n", nng_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	*out = cfg;
	return 0;
}

static int
ctl_connect(const struct ctl_opts *o, struct ctl_conn *c)
{
	nng_duration ms = (nng_duration)(o->timeout * 1000.0);
	bool tls = strncmp(o->url, "tls+", 4) == 0;
	nng_tls_config *tcfg = NULL;
	nng_dialer d;
	int rv, rc;

	memset(c, 0, sizeof(*c));
	c->url = o->url;
	c->timeout = o->timeout;
	if (!tls && o->tls_on_cmdline)
		return ctl_usage_error(
			NULL, "--ca, --cert and --key apply only to tls+tcp:// URLs");
	if (tls && (rc = ctl_tls_config(o, &tcfg)) != 0)
		return rc;
	if (tls) {
		char err[256];

		c->signer = lb_proof_signer_load(o->cert, o->key, err, sizeof(err));
		if (c->signer == NULL) {
			ctl_tls_config_free(tcfg);
			return ctl_usage_error(
				NULL, "--cert %s, --key %s: %s", o->cert, o->key, err);
		}
	}

	rc = CTL_EXIT_UNREACHABLE;
	rv = nng_req0_open(&c->sock);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: nng: %s\n", nng_strerror(rv));
		goto fail_tls;
	}
	/*
	 * A change must never be sent twice because a reply was slow: req0
	 * resends on a timer unless told not to. We wait instead, bounded
	 * by the receive timeout.
	 */
	if ((rv = nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE)) ||
		(rv = nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO, ms)) ||
		(rv = nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, ms)) ||
		(rv = nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES))) {
		fprintf(stderr, "sluicectl: nng: %s\n", nng_strerror(rv));
		goto fail_sock;
	}
	rv = nng_dialer_create(&d, c->sock, o->url);
	if (rv != 0) {
		rc = ctl_usage_error(NULL, "--manager %s: %s", o->url, nng_strerror(rv));
		goto fail_sock;
	}
	/* The dialer holds its own reference to the TLS configuration. */
	if (tcfg != NULL && (rv = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, tcfg)) != 0) {
		fprintf(stderr, "sluicectl: %s: TLS: %s\n", o->url, nng_strerror(rv));
		goto fail_sock;
	}

	snprintf(ctl_dial_timeout_msg, sizeof(ctl_dial_timeout_msg),
		"sluicectl: cannot connect to the manager at %s: no answer within %g s\n", o->url,
		o->timeout);
	signal(SIGALRM, ctl_dial_alarm);
	ctl_dial_timer(o->timeout);
	rv = nng_dialer_start(d, 0);
	ctl_dial_timer(0);
	signal(SIGALRM, SIG_DFL);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: cannot connect to the manager at %s: %s\n", o->url,
			nng_strerror(rv));
		if (rv == NNG_ECONNREFUSED)
			fprintf(stderr, "sluicectl: is sluice-manager running and listening there? "
					"(--manager, SLUICE_MANAGER)\n");
		/* nng says no more than "Cryptographic error": name the suspects. */
		if (tls && (rv == NNG_ECRYPTO || rv == NNG_EPEERAUTH || rv == NNG_ECONNSHUT))
			fprintf(stderr,
				"sluicectl: the TLS handshake failed: is the manager's certificate "
				"signed by --ca %s and named %s (--server-name), does the manager "
				"trust the CA of --cert %s, and is --key its key?\n",
				o->ca, o->server_name, o->cert);
		goto fail_sock;
	}
	ctl_tls_config_free(tcfg);
	return 0;

fail_sock:
	nng_close(c->sock);
fail_tls:
	ctl_tls_config_free(tcfg);
	lb_proof_signer_free(c->signer);
	c->signer = NULL;
	return rc;
}

static void
ctl_close(struct ctl_conn *c)
{
	nng_close(c->sock);
	lb_proof_signer_free(c->signer);
	c->signer = NULL;
}

/*
 * req as sent: over TLS, once the manager has challenged this connection,
 * with the proof of our certificate's name. *out is req itself, or a copy
 * (free() it, not lb_msg_free(): it shares req's buffers).
 */
static int
ctl_signed(struct ctl_conn *c, const struct lb_msg *req, struct lb_msg **out)
{
	struct lb_msg *r;
	char err[256];
	size_t n;

	*out = (struct lb_msg *)req;
	if (c->signer == NULL || !c->have_nonce)
		return 0;
	if ((r = malloc(sizeof(*r))) == NULL) {
		fprintf(stderr, "sluicectl: out of memory\n");
		return CTL_EXIT_REFUSED;
	}
	*r = *req;
	snprintf(r->id, sizeof(r->id), "%s", lb_proof_signer_name(c->signer));
	memcpy(r->nonce, c->nonce, LB_NONCE_LEN);
	r->cert = (char *)lb_proof_signer_cert(c->signer, &n);
	if (lb_proof_sign(c->signer, c->nonce, r->id, r->proof, &n, err, sizeof(err)) != 0) {
		free(r);
		fprintf(stderr, "sluicectl: cannot sign the request: %s\n", err);
		return CTL_EXIT_REFUSED;
	}
	r->proof_len = (uint16_t)n;
	*out = r;
	return 0;
}

/* One request sent, one reply decoded (of any type); 0 or an exit code. */
static int
ctl_call_once(struct ctl_conn *c, const struct lb_msg *req, struct lb_msg *rep)
{
	struct lb_msg *sent;
	char err[256] = "";
	uint8_t *buf = NULL;
	size_t len = 0;
	int rv;

	if ((rv = ctl_signed(c, req, &sent)) != 0)
		return rv;
	rv = lb_msg_encode(sent, &buf, &len);
	if (sent != req)
		free(sent);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: cannot encode the request: %s\n", lb_strerror(rv));
		return CTL_EXIT_REFUSED;
	}
	rv = nng_send(c->sock, buf, len, 0);
	free(buf);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: cannot send to the manager at %s: %s\n", c->url,
			nng_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	buf = NULL;
	rv = nng_recv(c->sock, &buf, &len, NNG_FLAG_ALLOC);
	if (rv == NNG_ETIMEDOUT) {
		fprintf(stderr, "sluicectl: no reply from the manager at %s within %g s\n", c->url,
			c->timeout);
		return CTL_EXIT_UNREACHABLE;
	}
	if (rv != 0) {
		fprintf(stderr, "sluicectl: no reply from the manager at %s: %s\n", c->url,
			nng_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	rv = lb_msg_decode(buf, len, rep, err, sizeof(err));
	nng_free(buf, len);
	if (rv == -LB_EPROTOCOL) {
		fprintf(stderr,
			"sluicectl: the manager speaks protocol %" PRIu32
			", this sluicectl speaks %d: use the sluicectl of the same release\n",
			rep->protocol, LB_PROTOCOL);
		return CTL_EXIT_UNREACHABLE;
	}
	if (rv != 0) {
		fprintf(stderr, "sluicectl: bad reply from the manager: %s\n",
			err[0] != '\0' ? err : lb_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	if (rep->type == LB_MSG_REFUSED) {
		fprintf(stderr, "sluicectl: refused by the manager: %s\n", rep->text);
		return CTL_EXIT_REFUSED;
	}
	return 0;
}

/*
 * One request, one reply. Returns 0 with *rep a CTL_REPLY (ok or not), or
 * an exit code after saying what went wrong. Over TLS, the first request of
 * a connection is challenged (lb_proof.h) and sent again with the proof.
 */
static int
ctl_call(struct ctl_conn *c, const struct lb_msg *req, struct lb_msg *rep)
{
	int rc = ctl_call_once(c, req, rep);

	/* Challenged: first on a connection, or again after a reconnect. */
	if (rc == 0 && rep->type == LB_MSG_CHALLENGE && c->signer != NULL &&
		(!c->have_nonce || memcmp(c->nonce, rep->nonce, LB_NONCE_LEN) != 0)) {
		memcpy(c->nonce, rep->nonce, LB_NONCE_LEN);
		c->have_nonce = true;
		lb_msg_free(rep);
		rc = ctl_call_once(c, req, rep);
	}
	if (rc == 0 && rep->type != LB_MSG_CTL_REPLY) {
		fprintf(stderr, "sluicectl: unexpected reply from the manager (message type %d)\n",
			(int)rep->type);
		return CTL_EXIT_UNREACHABLE;
	}
	return rc;
}

/* ---- the commands ------------------------------------------------------- */

static void
ctl_print(const char *text)
{
	size_t n;

	if (text == NULL || *text == '\0')
		return;
	n = strlen(text);
	fputs(text, stdout);
	if (text[n - 1] != '\n')
		fputc('\n', stdout);
}

static double
ctl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Poll WAIT until `version` is committed or aborted, or --timeout passes. */
static int
ctl_wait(struct ctl_conn *c, const struct ctl_opts *o, uint64_t version)
{
	struct timespec nap = {0, CTL_POLL_FIRST_MS * 1000000L};
	double deadline = ctl_now() + o->timeout;
	struct lb_msg req, rep;
	uint64_t v;
	int rc;

	for (;;) {
		memset(&req, 0, sizeof(req));
		memset(&rep, 0, sizeof(rep));
		req.type = LB_MSG_CTL_REQUEST;
		ctl_sender(req.sender, sizeof(req.sender));
		req.role = LB_ROLE_CTL;
		req.ctl.op = LB_CTL_WAIT;
		req.version = version;
		rc = ctl_call(c, &req, &rep);
		if (rc != 0) {
			lb_msg_free(&rep);
			fprintf(stderr,
				"sluicectl: the change was accepted as version %" PRIu64
				": sluicectl history tells how it ended\n",
				version);
			return rc;
		}
		if (!rep.flag) {
			fprintf(stderr, "sluicectl: %s\n", rep.text);
			lb_msg_free(&rep);
			return CTL_EXIT_REFUSED;
		}
		/* The answer's typed fields: the JSON is for --json only. */
		v = rep.wait.state == LB_WAIT_COMMITTED ? rep.wait.committed_as : version;
		if (rep.wait.state == LB_WAIT_COMMITTED) {
			if (o->json)
				ctl_print(rep.json);
			else
				printf("committed as version %" PRIu64 "\n", v);
			lb_msg_free(&rep);
			return CTL_EXIT_OK;
		}
		if (rep.wait.state == LB_WAIT_ABORTED) {
			if (o->json)
				ctl_print(rep.json);
			fprintf(stderr, "sluicectl: version %" PRIu64 " aborted: %s\n", v,
				rep.wait.reason[0] != '\0' ? rep.wait.reason : "no reason given");
			lb_msg_free(&rep);
			return CTL_EXIT_REFUSED;
		}
		if (rep.wait.state != LB_WAIT_PENDING) {
			fprintf(stderr, "sluicectl: bad WAIT reply from the manager: %s\n",
				rep.json != NULL && rep.json[0] != '\0' ? rep.json : "(no wait state)");
			lb_msg_free(&rep);
			return CTL_EXIT_UNREACHABLE;
		}
		if (ctl_now() + CTL_POLL_MS / 1000.0 > deadline) {
			if (o->json)
				ctl_print(rep.json);
			fprintf(stderr,
				"sluicectl: not committed after %g s: still pending as version "
				"%" PRIu64 "\n",
				o->timeout, v);
			lb_msg_free(&rep);
			return CTL_EXIT_REFUSED;
		}
		lb_msg_free(&rep);
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < CTL_POLL_MS * 1000000L)
			nap.tv_nsec = nap.tv_nsec * 2 < CTL_POLL_MS * 1000000L
					      ? nap.tv_nsec * 2
					      : CTL_POLL_MS * 1000000L;
	}
}

static int
ctl_write_file(const char *path, const char *text)
{
	size_t n = text != NULL ? strlen(text) : 0;
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "sluicectl: config export: %s: %s\n", path, strerror(errno));
		return CTL_EXIT_REFUSED;
	}
	if (fwrite(text != NULL ? text : "", 1, n, f) != n ||
		(n > 0 && text[n - 1] != '\n' && fputc('\n', f) == EOF)) {
		fprintf(stderr, "sluicectl: config export: %s: %s\n", path, strerror(errno));
		fclose(f);
		return CTL_EXIT_REFUSED;
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "sluicectl: config export: %s: %s\n", path, strerror(errno));
		return CTL_EXIT_REFUSED;
	}
	return 0;
}

static int
ctl_run(const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *const *args, int n_args,
	struct lb_msg *req)
{
	struct ctl_conn conn;
	struct lb_msg rep;
	int rc;

	rc = ctl_connect(o, &conn);
	if (rc != 0)
		return rc;
	memset(&rep, 0, sizeof(rep));
	rc = ctl_call(&conn, req, &rep);
	if (rc != 0)
		goto out;
	if (!rep.flag) {
		fprintf(stderr, "sluicectl: %s\n", rep.text[0] != '\0' ? rep.text : "refused");
		rc = CTL_EXIT_REFUSED;
		goto out;
	}

	if (cmd->change) {
		if (!o->no_wait) {
			rc = ctl_wait(&conn, o, rep.version);
		} else if (o->json) {
			ctl_print(rep.json);
		} else {
			printf("accepted: will commit as version %" PRIu64 "\n", rep.version);
		}
	} else if (cmd->op == LB_CTL_EXPORT && n_args == 1) {
		rc = ctl_write_file(args[0], rep.body);
		if (rc == 0 && o->json)
			ctl_print(rep.json);
		else if (rc == 0)
			printf("exported version %" PRIu64 " to %s\n", rep.version, args[0]);
	} else {
		ctl_print(o->json ? rep.json : rep.body);
	}
out:
	lb_msg_free(&rep);
	ctl_close(&conn);
	return rc;
}

int
main(int argc, char **argv)
{
	const struct ctl_cmd *cmd;
	struct ctl_opts o;
	struct lb_msg req;
	int rc, used = 0;

	rc = ctl_parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	if (o.help || (o.n_words > 0 && strcmp(o.words[0], "help") == 0)) {
		fputs(ctl_usage_text, stdout);
		return CTL_EXIT_OK;
	}
	if (o.n_words == 0)
		return ctl_usage_error(NULL, "missing command");
	cmd = ctl_find_cmd(&o, &used);
	if (cmd == NULL)
		return ctl_group_error(o.words[0], o.n_words > 1 ? o.words[1] : NULL);

	memset(&req, 0, sizeof(req));
	rc = ctl_build_request(cmd, &o, o.words + used, o.n_words - used, &req);
	if (rc == 0)
		rc = ctl_run(cmd, &o, o.words + used, o.n_words - used, &req);
	lb_msg_free(&req);

	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "sluicectl: stdout: %s\n", strerror(errno));
		if (rc == 0)
			rc = CTL_EXIT_REFUSED;
	}
	return rc;
}
