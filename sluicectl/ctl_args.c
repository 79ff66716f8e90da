/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl's command line: global options (from the environment first),
 * the command's words and options, and the request they make. Everything
 * is checked here, before anything is sent: a typo is a usage error that
 * names the argument (exit 2), never a round trip.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "lb_addr.h"
#include "lb_config.h"
#include "lb_err.h"
#include "lb_file.h"
#include "lb_flow.h"
#include "lb_hdr.h"

/* The short options: -h, -f FILE (getopt's string, after its "-:"). */
#define SHORT_OPTS "hf:"

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
	{"withdraw-below", CTL_O_WITHDRAW_BELOW, 0, 0},
};

#define CTL_N_POOL_OPTS (sizeof(ctl_pool_opts) / sizeof(ctl_pool_opts[0]))

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

/*
 * A number of seconds, as strtod() reads it and nothing after it, in
 * [lo, hi]: lo DBL_TRUE_MIN (the least double above 0) asks for more than 0.
 */
static bool
ctl_parse_seconds(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= lo) || v > hi)
		return false;
	*out = v;
	return true;
}

/*
 * "A.B.C.D:PORT" or "[IPV6]:PORT" (as ipvsadm and HAProxy write it), port
 * 1..65535; what names the address in errors ("vip", "dip"). The address
 * follows lb_addr_parse()'s rules: no prefix, no zone, unicast.
 */
static int
ctl_parse_endpoint(const struct ctl_cmd *cmd, const char *what, const char *s, struct lb_addr *ip,
	uint8_t *af, uint16_t *port)
{
	char addr[LB_ADDR_STRLEN + 64], why[160];
	const char *colon, *a = s;
	unsigned long p;
	size_t alen;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':')
			return ctl_usage_error(cmd, "%s %s: not [IPv6 address]:port", what, s);
		a = s + 1;
		colon = close + 1;
		alen = (size_t)(close - a);
	} else {
		colon = strrchr(s, ':');
		if (colon != NULL && memchr(s, ':', (size_t)(colon - s)) != NULL)
			return ctl_usage_error(cmd,
				"%s %s: an IPv6 address and port are written in brackets, as "
				"[2001:db8::10]:80",
				what, s);
		alen = colon != NULL ? (size_t)(colon - s) : strlen(s);
	}
	if (colon == NULL || colon[1] == '\0' ||
		strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return ctl_usage_error(
			cmd, "%s %s: not address:port (IPv6: [address]:port)", what, s);
	if (alen >= sizeof(addr))
		return ctl_usage_error(cmd, "%s %s: not an IPv4 or IPv6 address", what, s);
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (lb_addr_parse(addr, LB_ADDR_ANY, ip, af, why, sizeof(why)) != 0)
		return ctl_usage_error(cmd, "%s \"%s\" %s", what, addr, why);
	if (s[0] != '[' && *af == LB_AF_INET6)
		return ctl_usage_error(cmd, "%s %s: write an IPv6 address in brackets", what, s);
	if (s[0] == '[' && *af != LB_AF_INET6)
		return ctl_usage_error(cmd, "%s %s: brackets are for IPv6 addresses", what, s);
	if (!ctl_parse_uint(colon + 1, 65535, &p) || p == 0)
		return ctl_usage_error(cmd, "%s %s: port is out of range 1..65535", what, s);
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

/* --opt v, one of names[0..n-1]: its index into *out, or the usage error. */
static int
name_opt(const struct ctl_cmd *cmd, const char *opt, const char *v, const char *const *names, int n,
	uint8_t *out)
{
	int k = lb_limit_name_find(names, n, v);
	char list[128];

	if (k < 0) {
		lb_limit_name_list(names, n, list, sizeof(list));
		return ctl_usage_error(cmd, "--%s %s: must be %s", opt, v, list);
	}
	*out = (uint8_t)k;
	return 0;
}

/* The service key from "VIP:PORT" and --proto. */
static int
ctl_parse_svc(
	const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *arg, struct lb_ctl *ctl)
{
	struct lb_addr vip;
	uint16_t port;
	uint8_t proto = 0, af;
	int rc;

	rc = ctl_parse_endpoint(cmd, "vip", arg, &vip, &af, &port);
	if (rc == 0)
		rc = ctl_parse_proto(cmd, o->proto, &proto);
	if (rc != 0)
		return rc;
	lb_svc_key_make(&ctl->svc, af, &vip, lb_cpu_to_be16(port), proto);
	ctl->has_svc = true;
	return 0;
}

/*
 * top's argument: VIP:PORT (one service), or VIP alone, IPv6 in brackets
 * or not (every service of the VIP: the key's port 0).
 */
static int
ctl_parse_top(
	const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *arg, struct lb_ctl *ctl)
{
	char addr[LB_ADDR_STRLEN + 64], why[160];
	size_t n = strlen(arg);
	struct lb_addr vip;
	bool bracketed;
	uint8_t af;

	if (arg[0] == '[' ? arg[n - 1] != ']'
			  : strchr(arg, ':') == strrchr(arg, ':') && strchr(arg, ':') != NULL)
		return ctl_parse_svc(cmd, o, arg, ctl);
	if (o->proto != NULL)
		return ctl_usage_error(cmd, "--proto: a VIP alone is every service of it");
	bracketed = arg[0] == '[';
	if (bracketed) {
		arg++;
		n -= 2;
	}
	if (n >= sizeof(addr))
		return ctl_usage_error(cmd, "vip %s: not an IPv4 or IPv6 address", arg);
	memcpy(addr, arg, n);
	addr[n] = '\0';
	if (lb_addr_parse(addr, LB_ADDR_ANY, &vip, &af, why, sizeof(why)) != 0)
		return ctl_usage_error(cmd, "vip \"%s\" %s", addr, why);
	/* As everywhere else ([192.0.2.20]:80 is refused by ctl_parse_svc()). */
	if (bracketed && af == LB_AF_INET)
		return ctl_usage_error(cmd, "vip [%s]: brackets are for IPv6 addresses", addr);
	lb_svc_key_make(&ctl->svc, af, &vip, 0, LB_IPPROTO_TCP);
	ctl->has_svc = true;
	return 0;
}

/* The backend from "DIP:PORT" and --host/--weight/--state (as given). */
static int
ctl_parse_backend(
	const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *arg, struct lb_ctl *ctl)
{
	struct lb_backend_cfg *be = &ctl->be;
	char why[160];
	unsigned long w;
	uint8_t af;
	int rc;

	rc = ctl_parse_endpoint(cmd, "dip", arg, &be->dip, &ctl->be_af, &be->port);
	if (rc != 0)
		return rc;
	/* The manager refuses it too; say it before asking. */
	if (ctl->has_svc && ctl->be_af != ctl->svc.af)
		return ctl_usage_error(cmd,
			"dip %s: an IPv%u backend in an IPv%u service (a service is one family; "
			"--host may be either)",
			arg, ctl->be_af, ctl->svc.af);
	ctl->has_be = true;
	be->weight = 1;
	be->state = LB_BACKEND_ACTIVE;
	if (o->host != NULL) {
		/* A host is a plain address of either family, never in brackets. */
		if (lb_addr_parse(o->host, LB_ADDR_ANY, &be->host, &af, why, sizeof(why)) != 0)
			return ctl_usage_error(cmd, "--host \"%s\" %s", o->host, why);
		be->host6 = af == LB_AF_INET6;
		ctl->set_host = true;
	}
	if (o->weight != NULL) {
		if (!ctl_parse_uint(o->weight, 65535, &w))
			return ctl_usage_error(cmd, "--weight %s: must be 0..65535", o->weight);
		be->weight = (uint32_t)w;
		ctl->set_weight = true;
	}
	if (o->state != NULL) {
		rc = name_opt(cmd, "state", o->state, lb_backend_state_names, 3, &be->state);
		if (rc != 0)
			return rc;
		ctl->set_state = true;
	}
	if (o->max_conns != NULL) {
		if (!ctl_parse_uint(o->max_conns, LB_MAX_CONNS_CAP, &w))
			return ctl_usage_error(cmd,
				"--max-connections %s: must be 0..%u (0: no cap)", o->max_conns,
				LB_MAX_CONNS_CAP);
		be->max_conns = (uint32_t)w;
		ctl->set_max_conns = true;
	}
	return 0;
}

/*
 * --min-healthy or --withdraw-below (po) N, N% or N,M%: a count, a
 * percent, or both, into that option's count and percent in p, with their
 * given bits.
 */
static int
ctl_parse_count_pct(const struct ctl_cmd *cmd, const struct ctl_pool_opt *po, const char *s,
	struct lb_pool_opts *p)
{
	bool mh = po->bit == CTL_O_MIN_HEALTHY;
	uint32_t *count = mh ? &p->min_healthy : &p->withdraw_below;
	uint32_t *pct_out = mh ? &p->min_healthy_pct : &p->withdraw_below_pct;
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
		*count = (uint32_t)v;
		p->given |= mh ? LB_POOL_MIN_HEALTHY : LB_POOL_WITHDRAW_BELOW;
	}
	if (pct != NULL) {
		size_t n = strlen(pct);

		if (n < 2 || pct[n - 1] != '%')
			goto bad;
		pct[n - 1] = '\0';
		if (!ctl_parse_uint(pct, 100, &v))
			goto bad;
		*pct_out = (uint32_t)v;
		p->given |= mh ? LB_POOL_MIN_HEALTHY_PCT : LB_POOL_WITHDRAW_BELOW_PCT;
	}
	return 0;
bad:
	return ctl_usage_error(cmd,
		"--%s %s: expected a count (0..%d), a percent (0%%..100%%) or both "
		"(2,50%%)",
		po->name, s, LB_POOL_MIN_HEALTHY_MAX);
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
		case CTL_O_WITHDRAW_BELOW:
			if (ctl_parse_count_pct(cmd, po, a, p) != 0)
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

const struct ctl_cmd *
ctl_find_cmd(const struct ctl_opts *o, int *n_used)
{
	const char *w0 = o->words[0], *w1 = o->n_words > 1 ? o->words[1] : NULL;

	for (size_t i = 0; i < ctl_n_cmds; i++) {
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

int
ctl_group_error(const char *group, const char *sub)
{
	char names[64] = "";
	bool known = false;

	for (size_t i = 0; i < ctl_n_cmds; i++) {
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

void
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

/*
 * The options that take a string and keep it as given: where it goes, the
 * CTL_O_* bit a command must accept to take it (0: a global option), and
 * whether it names a TLS file (--ca, --cert, --key) on the command line.
 */
static const struct ctl_str_opt {
	const char *name;
	size_t off; /* of its const char * in struct ctl_opts */
	unsigned bit;
	bool tls;
} ctl_str_opts[] = {
	{"manager", offsetof(struct ctl_opts, url), 0, false},
	{"ca", offsetof(struct ctl_opts, ca), 0, true},
	{"cert", offsetof(struct ctl_opts, cert), 0, true},
	{"key", offsetof(struct ctl_opts, key), 0, true},
	{"server-name", offsetof(struct ctl_opts, server_name), 0, false},
	{"proto", offsetof(struct ctl_opts, proto), CTL_O_PROTO, false},
	{"host", offsetof(struct ctl_opts, host), CTL_O_HOST, false},
	{"weight", offsetof(struct ctl_opts, weight), CTL_O_WEIGHT, false},
	{"state", offsetof(struct ctl_opts, state), CTL_O_STATE, false},
	{"limit", offsetof(struct ctl_opts, limit), CTL_O_LIMIT, false},
	{"refresh", offsetof(struct ctl_opts, refresh), CTL_O_REFRESH, false},
	{"burst", offsetof(struct ctl_opts, burst), CTL_O_BURST, false},
	{"mode", offsetof(struct ctl_opts, mode), CTL_O_MODE, false},
	{"prefix", offsetof(struct ctl_opts, prefix), CTL_O_PREFIX, false},
	{"refuse", offsetof(struct ctl_opts, refuse), CTL_O_REFUSE, false},
	{"max-connections", offsetof(struct ctl_opts, max_conns), CTL_O_MAX_CONNS, false},
};

#define CTL_N_STR_OPTS (sizeof(ctl_str_opts) / sizeof(ctl_str_opts[0]))

/* getopt_long's values of the long-only options. */
enum {
	CTL_OPT_JSON = 256,
	CTL_OPT_TIMEOUT,
	CTL_OPT_NO_WAIT,
	CTL_OPT_ONCE,
	CTL_OPT_STR,			 /* + index in ctl_str_opts */
	CTL_OPT_POOL = CTL_OPT_STR + 64, /* + index in ctl_pool_opts */
};

/* getopt_long's table, from the tables above. */
static const struct option *
ctl_longopts(void)
{
	static struct option v[5 + CTL_N_STR_OPTS + CTL_N_POOL_OPTS + 1];
	size_t n = 0, i;

	if (v[0].name != NULL)
		return v;
	v[n++] = (struct option){"help", no_argument, NULL, 'h'};
	v[n++] = (struct option){"json", no_argument, NULL, CTL_OPT_JSON};
	v[n++] = (struct option){"timeout", required_argument, NULL, CTL_OPT_TIMEOUT};
	v[n++] = (struct option){"no-wait", no_argument, NULL, CTL_OPT_NO_WAIT};
	v[n++] = (struct option){"once", no_argument, NULL, CTL_OPT_ONCE};
	for (i = 0; i < CTL_N_STR_OPTS; i++)
		v[n++] = (struct option){
			ctl_str_opts[i].name, required_argument, NULL, CTL_OPT_STR + (int)i};
	for (i = 0; i < CTL_N_POOL_OPTS; i++)
		v[n++] = (struct option){
			ctl_pool_opts[i].name, required_argument, NULL, CTL_OPT_POOL + (int)i};
	return v;
}

int
ctl_parse_args(int argc, char **argv, struct ctl_opts *o)
{
	const struct option *longopts = ctl_longopts();
	int c;

	memset(o, 0, sizeof(*o));
	o->url = ctl_env("SLUICE_MANAGER");
	o->ca = ctl_env("SLUICE_CA");
	o->cert = ctl_env("SLUICE_CERT");
	o->key = ctl_env("SLUICE_KEY");
	o->server_name = CTL_DEFAULT_SERVER_NAME;
	o->timeout = CTL_DEFAULT_TIMEOUT;
	o->refresh_s = CTL_DEFAULT_REFRESH;
	if (o->url == NULL)
		o->url = CTL_DEFAULT_URL;

	/*
	 * Leading '-': words come back in order as option 1, so options may
	 * follow the command whatever POSIXLY_CORRECT says; ':' reports a
	 * missing argument apart from an unknown option.
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:" SHORT_OPTS, longopts, NULL)) != -1) {
		if (c >= CTL_OPT_STR && c < CTL_OPT_STR + (int)CTL_N_STR_OPTS) {
			const struct ctl_str_opt *so = &ctl_str_opts[c - CTL_OPT_STR];

			*(const char **)((char *)o + so->off) = optarg;
			o->given |= so->bit;
			o->tls_on_cmdline |= so->tls;
			continue;
		}
		if (c >= CTL_OPT_POOL && c < CTL_OPT_POOL + (int)CTL_N_POOL_OPTS) {
			o->pool[c - CTL_OPT_POOL] = optarg;
			o->given |= ctl_pool_opts[c - CTL_OPT_POOL].bit;
			continue;
		}
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
		case CTL_OPT_TIMEOUT:
			if (!ctl_parse_seconds(optarg, DBL_TRUE_MIN, 86400, &o->timeout))
				return ctl_usage_error(NULL,
					"--timeout %s: must be a number of seconds in (0, 86400]",
					optarg);
			break;
		case CTL_OPT_NO_WAIT:
			o->no_wait = true;
			break;
		case CTL_OPT_ONCE:
			o->once = true;
			o->given |= CTL_O_ONCE;
			break;
		case ':':
			return ctl_usage_error(NULL, "%s: needs an argument", argv[optind - 1]);
		default:
			/*
			 * getopt_long() sets optopt to a known long option's value
			 * when it is given one (--json=1, --help=x): then, and for an
			 * unknown long option (optopt 0), argv[optind - 1] is it. An
			 * unknown short one may sit in a cluster (-Zq): its letter.
			 */
			if (optopt > 255 || (optopt != 0 && strchr(SHORT_OPTS, optopt) != NULL))
				return ctl_usage_error(
					NULL, "%s: this option takes no value", argv[optind - 1]);
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

/* limit set|del: the service or "mux", the rule, its limit and options. */
static int
ctl_parse_limit(const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *const *args,
	int n_args, struct lb_ctl *ctl)
{
	struct lb_limit_change *l = &ctl->lim;
	unsigned long v;
	char list[128];
	int rc, k;

	if (strcmp(args[0], "mux") == 0)
		l->mux = true;
	else if ((rc = ctl_parse_svc(cmd, o, args[0], ctl)) != 0)
		return rc;
	l->rule = -1;
	if (n_args >= 2) {
		k = lb_limit_name_find(lb_limit_kind_names, LB_LIM_N, args[1]);
		if (k < 0) {
			lb_limit_name_list(lb_limit_kind_names, LB_LIM_N, list, sizeof(list));
			return ctl_usage_error(cmd, "%s: not a rule (%s)", args[1], list);
		}
		l->rule = (int8_t)k;
	} else if (l->mux) {
		l->rule = LB_LIM_RATE;
	}
	if (cmd->op == LB_CTL_LIMIT_DEL)
		return 0;
	if (n_args == 3) {
		if (!ctl_parse_uint(args[2], LB_LIMIT_MAX, &v) || v == 0)
			return ctl_usage_error(
				cmd, "%s: the limit must be 1..%u", args[2], LB_LIMIT_MAX);
		l->value.limit = (uint32_t)v;
		l->given |= LB_LIMIT_G_LIMIT;
	}
	if (o->burst != NULL) {
		if (!ctl_parse_uint(o->burst, LB_LIMIT_MAX, &v))
			return ctl_usage_error(
				cmd, "--burst %s: must be 0..%u", o->burst, LB_LIMIT_MAX);
		l->value.burst = (uint32_t)v;
		l->given |= LB_LIMIT_G_BURST;
	}
	if (o->mode != NULL) {
		rc = name_opt(cmd, "mode", o->mode, lb_limit_mode_names, 2, &l->value.mode);
		if (rc != 0)
			return rc;
		l->given |= LB_LIMIT_G_MODE;
	}
	if (o->prefix != NULL) {
		/* 1..32 for an IPv4 service, ..128 for IPv6: the manager knows which */
		if (!ctl_parse_uint(o->prefix, 128, &v) || v == 0)
			return ctl_usage_error(cmd, "--prefix %s: must be 1..128", o->prefix);
		l->prefix = (uint8_t)v;
		l->given |= LB_LIMIT_G_PREFIX;
	}
	if (o->refuse != NULL) {
		if ((rc = name_opt(cmd, "refuse", o->refuse, lb_refuse_names, 3, &l->refuse)) != 0)
			return rc;
		l->given |= LB_LIMIT_G_REFUSE;
	}
	if (l->given == 0)
		return ctl_usage_error(cmd, "nothing to change: give the LIMIT or an option");
	return 0;
}

int
ctl_build_request(const struct ctl_cmd *cmd, struct ctl_opts *o, const char *const *args,
	int n_args, struct lb_msg *req)
{
	struct lb_ctl *ctl = &req->ctl;
	unsigned long limit;
	int rc;

	for (size_t i = 0; i < CTL_N_STR_OPTS; i++)
		if ((o->given & ctl_str_opts[i].bit) && !(cmd->opts & ctl_str_opts[i].bit))
			return ctl_usage_error(
				cmd, "--%s does not apply to this command", ctl_str_opts[i].name);
	for (size_t i = 0; i < CTL_N_POOL_OPTS; i++)
		if ((o->given & ctl_pool_opts[i].bit) && !(cmd->opts & ctl_pool_opts[i].bit))
			return ctl_usage_error(
				cmd, "--%s does not apply to this command", ctl_pool_opts[i].name);
	if ((o->given & CTL_O_ONCE) && !(cmd->opts & CTL_O_ONCE))
		return ctl_usage_error(cmd, "--once does not apply to this command");
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
	case LB_CTL_TOP:
		return ctl_parse_top(cmd, o, args[0], ctl);
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
			!ctl->set_host && !ctl->set_max_conns)
			return ctl_usage_error(cmd, "nothing to change: give --weight, --state, "
						    "--host or --max-connections");
		if (cmd->op != LB_CTL_BACKEND_SET)
			ctl->set_weight = ctl->set_state = ctl->set_host = ctl->set_max_conns =
				false;
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
	case LB_CTL_STATS:
		if (o->refresh != NULL && !ctl_parse_seconds(o->refresh, 0.1, 3600, &o->refresh_s))
			return ctl_usage_error(cmd,
				"--refresh %s: must be a number of seconds in 0.1..3600",
				o->refresh);
		return 0;
	case LB_CTL_MUX_DRAIN:
	case LB_CTL_MUX_UNDRAIN:
		/* A member id, as the mux's manager group names it. */
		if (args[0][0] == '\0' || strlen(args[0]) >= sizeof(ctl->mux))
			return ctl_usage_error(cmd, "%s: a mux id of 1 to %zu characters", args[0],
				sizeof(ctl->mux) - 1);
		snprintf(ctl->mux, sizeof(ctl->mux), "%s", args[0]);
		return 0;
	case LB_CTL_LIMIT_SET:
	case LB_CTL_LIMIT_DEL:
		return ctl_parse_limit(cmd, o, args, n_args, ctl);
	default:
		return 0;
	}
}
