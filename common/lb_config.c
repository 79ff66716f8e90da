/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <arpa/inet.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb_addr.h"
#include "lb_config.h"
#include "lb_err.h"
#include "lb_hdr.h"
#include "lb_maglev.h"

/* Path of a setting from the root: "flow_table.services[2].backends[0]". */
static void
setting_path(const config_setting_t *s, char *buf, size_t len)
{
	const config_setting_t *chain[32];
	int n = 0;
	size_t off = 0;

	buf[0] = '\0';
	for (; s != NULL && !config_setting_is_root(s) && n < 32; s = config_setting_parent(s))
		chain[n++] = s;
	while (n-- > 0 && off < len) {
		const config_setting_t *c = chain[n];
		const char *name = config_setting_name(c);

		if (name != NULL)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "." : "", name);
		else
			off += (size_t)snprintf(
				buf + off, len - off, "[%d]", config_setting_index(c));
	}
}

int
lb_cfg_error(
	struct lb_cfg_err *err, const config_setting_t *s, const char *field, const char *fmt, ...)
{
	char path[256], what[200]; /* fits msg with the path: no -Wformat-truncation */
	const char *file = s ? config_setting_source_file(s) : NULL;
	unsigned line = s ? config_setting_source_line(s) : 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	setting_path(s, path, sizeof(path));
	if (field != NULL && field[0] != '\0') {
		size_t l = strlen(path);

		snprintf(path + l, sizeof(path) - l, "%s%s", l ? "." : "", field);
	}
	snprintf(err->msg, sizeof(err->msg), "%s:%u: %s: %s", file ? file : "<config>", line,
		path[0] ? path : "<top>", what);
	return -LB_ECONFIG;
}

int
lb_cfg_read_file(config_t *cfg, const char *path, struct lb_cfg_err *err)
{
	config_init(cfg);
	if (config_read_file(cfg, path) == CONFIG_TRUE)
		return 0;
	if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
		snprintf(err->msg, sizeof(err->msg), "%s: cannot read file", path);
	else
		snprintf(err->msg, sizeof(err->msg), "%s:%d: %s",
			config_error_file(cfg) ? config_error_file(cfg) : path,
			config_error_line(cfg), config_error_text(cfg));
	config_destroy(cfg);
	return -LB_ECONFIG;
}

int
lb_cfg_check_fields(
	const config_setting_t *group, const char *const *allowed, struct lb_cfg_err *err)
{
	int i, n = config_setting_length(group);

	for (i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(group, (unsigned)i);
		const char *name = config_setting_name(m);
		const char *const *a;

		if (name == NULL)
			continue;
		for (a = allowed; *a != NULL; a++)
			if (strcmp(*a, name) == 0)
				break;
		if (*a == NULL)
			return lb_cfg_error(err, m, NULL, "unknown field");
	}
	return 0;
}

int
lb_cfg_group(const config_setting_t *g, const char *const *allowed, const char *shape,
	struct lb_cfg_err *err)
{
	if (!config_setting_is_group(g))
		return lb_cfg_error(err, g, NULL, "%s", shape);
	return lb_cfg_check_fields(g, allowed, err);
}

/* A member of group; none of a group that is not there (NULL). */
static config_setting_t *
member(const config_setting_t *group, const char *name)
{
	return group != NULL ? config_setting_get_member(group, name) : NULL;
}

int
lb_cfg_get_int(const config_setting_t *group, const char *name, bool required, long long min,
	long long max, long long def, long long *out, struct lb_cfg_err *err)
{
	config_setting_t *m = member(group, name);
	long long v;

	if (m == NULL) {
		if (required)
			return lb_cfg_error(err, group, name, "missing required field");
		*out = def;
		return 0;
	}
	switch (config_setting_type(m)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		v = config_setting_get_int64(m);
		break;
	default:
		return lb_cfg_error(err, m, NULL, "expected an integer");
	}
	if (v < min || v > max)
		return lb_cfg_error(err, m, NULL, "%lld is out of range %lld..%lld", v, min, max);
	*out = v;
	return 0;
}

int
lb_cfg_get_u32s(
	const config_setting_t *g, const struct lb_cfg_u32 *f, size_t n, struct lb_cfg_err *err)
{
	long long v;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = lb_cfg_get_int(g, f[i].name, false, f[i].zero_off ? 0 : f[i].min, f[i].max,
			f[i].def, &v, err);
		if (rc != 0)
			return rc;
		if (f[i].zero_off && v != 0 && v < f[i].min)
			return lb_cfg_error(err, member(g, f[i].name), NULL,
				"%lld is out of range %lld..%lld (or 0: off)", v, f[i].min,
				f[i].max);
		*f[i].out = (uint32_t)v;
	}
	return 0;
}

int
lb_cfg_get_bool(const config_setting_t *group, const char *name, bool def, bool *out,
	struct lb_cfg_err *err)
{
	config_setting_t *m = member(group, name);

	if (m == NULL) {
		*out = def;
		return 0;
	}
	if (config_setting_type(m) != CONFIG_TYPE_BOOL)
		return lb_cfg_error(err, m, NULL, "expected true or false");
	*out = config_setting_get_bool(m) != 0;
	return 0;
}

int
lb_cfg_get_name(const config_setting_t *group, const char *name, const char *const *names, int n,
	int def, const char *what, uint8_t *out, struct lb_cfg_err *err)
{
	const char *v = NULL;
	char list[256];
	int rc, i;

	if ((rc = lb_cfg_get_string(group, name, false, NULL, &v, err)) != 0)
		return rc;
	if (v == NULL) {
		*out = (uint8_t)def;
		return 0;
	}
	if ((i = lb_limit_name_find(names, n, v)) >= 0) {
		*out = (uint8_t)i;
		return 0;
	}
	lb_limit_name_list(names, n, list, sizeof(list));
	return lb_cfg_error(err, member(group, name), NULL, "\"%s\" is not %s (%s)", v, what, list);
}

int
lb_cfg_get_poll(const config_setting_t *group, bool *busy_poll, uint32_t *idle_sleep_us,
	struct lb_cfg_err *err)
{
	long long idle;
	int rc;

	if ((rc = lb_cfg_get_bool(group, "busy_poll", false, busy_poll, err)) != 0 ||
		(rc = lb_cfg_get_int(group, "idle_sleep_us", false, 1, 100000, 200, &idle, err)) !=
			0)
		return rc;
	*idle_sleep_us = (uint32_t)idle;
	return 0;
}

int
lb_cfg_get_zone(const config_setting_t *group, const char *name, char *out, struct lb_cfg_err *err)
{
	const char *v = NULL, *why;
	int rc;

	memset(out, 0, LB_ZONE_LEN);
	if ((rc = lb_cfg_get_string(group, name, false, NULL, &v, err)) != 0 || v == NULL)
		return rc;
	if ((why = lb_zone_problem(v, false)) != NULL)
		return lb_cfg_error(
			err, member(group, name), NULL, "\"%s\" is not a zone: %s", v, why);
	memcpy(out, v, strlen(v));
	return 0;
}

int
lb_cfg_get_string(const config_setting_t *group, const char *name, bool required, const char *def,
	const char **out, struct lb_cfg_err *err)
{
	config_setting_t *m = member(group, name);

	if (m == NULL) {
		if (required)
			return lb_cfg_error(err, group, name, "missing required field");
		*out = def;
		return 0;
	}
	if (config_setting_type(m) != CONFIG_TYPE_STRING)
		return lb_cfg_error(err, m, NULL, "expected a string");
	*out = config_setting_get_string(m);
	return 0;
}

/* name beside the configuration file cfg_path, as r says. 0 or -LB_ERANGE. */
static int
file_path(const char *cfg_path, const char *name, const struct lb_cfg_file_rules *r, char *out,
	size_t len)
{
	const char *slash = strrchr(cfg_path, '/');
	char dir[PATH_MAX];
	int n;

	if (name[0] == '/' || (slash == NULL && !r->dot_dir))
		n = snprintf(out, len, "%s", name);
	else if (r->dot_dir) {
		snprintf(dir, sizeof(dir), "%s", cfg_path);
		n = snprintf(out, len, "%s/%s", dirname(dir), name);
	} else
		n = snprintf(out, len, "%.*s/%s", (int)(slash - cfg_path), cfg_path, name);
	return n < 0 || (size_t)n >= len ? -LB_ERANGE : 0;
}

int
lb_cfg_get_file(const config_setting_t *group, const char *name, bool required, bool must_exist,
	const char *cfg_path, const struct lb_cfg_file_rules *r, char *out, size_t len,
	struct lb_cfg_err *err)
{
	const char *v = NULL;
	int rc;

	out[0] = '\0';
	rc = lb_cfg_get_string(group, name, required, NULL, &v, err);
	if (rc != 0 || v == NULL)
		return rc;
	if (v[0] == '\0' && r->empty != NULL)
		return lb_cfg_error(err, member(group, name), NULL, "%s", r->empty);
	if (file_path(cfg_path, v, r, out, len) != 0)
		return lb_cfg_error(err, member(group, name), NULL, "%s", r->too_long);
	if (must_exist && access(out, R_OK) != 0)
		return lb_cfg_error(err, member(group, name), NULL, "%s%s: %s", r->unreadable, out,
			strerror(errno));
	return 0;
}

int
lb_cfg_get_addr(const config_setting_t *group, const char *name, bool required, unsigned allow,
	struct lb_addr *out, uint8_t *af, struct lb_cfg_err *err)
{
	const char *s = NULL;
	char why[160];
	int rc;

	memset(out, 0, sizeof(*out));
	*af = LB_AF_NONE;
	rc = lb_cfg_get_string(group, name, required, NULL, &s, err);
	if (rc != 0 || s == NULL)
		return rc;
	if (lb_addr_parse(s, allow, out, af, why, sizeof(why)) != 0)
		return lb_cfg_error(err, member(group, name), NULL, "\"%s\" %s", s, why);
	return 0;
}

int
lb_cfg_get_ipv4(const config_setting_t *group, const char *name, bool required, lb_be32_t *out,
	struct lb_cfg_err *err)
{
	struct lb_addr a;
	uint8_t af;
	int rc = lb_cfg_get_addr(group, name, required, LB_ADDR_V4, &a, &af, err);

	*out = a.a32[0];
	return rc;
}

int
lb_cfg_get_list(const config_setting_t *group, const char *name, bool arrays, const char *missing,
	const char *shape, const config_setting_t **l, int *n, struct lb_cfg_err *err)
{
	*l = member(group, name);
	*n = 0;
	if (*l == NULL)
		return missing != NULL ? lb_cfg_error(err, group, name, "%s", missing) : 0;
	if (!config_setting_is_list(*l) && !(arrays && config_setting_is_array(*l)))
		return lb_cfg_error(err, *l, NULL, "%s", shape);
	*n = config_setting_length(*l);
	return 0;
}

int
lb_cfg_get_addr_list(const config_setting_t *a, const char *name, int min, int max, unsigned allow,
	struct lb_cfg_addr *out, uint16_t *n_out, struct lb_cfg_err *err)
{
	const char *fam = (allow & LB_ADDR_ANY) == LB_ADDR_ANY ? "IPv4 or IPv6"
			  : allow & LB_ADDR_V6		       ? "IPv6"
							       : "IPv4";
	const config_setting_t *m;
	char shape[48];
	int i, n, rc;

	*n_out = 0;
	snprintf(shape, sizeof(shape), "expected a list of %s addresses", fam);
	if ((rc = lb_cfg_get_list(a, name, true,
		     min == 0 ? NULL : "missing required field (a list of addresses)", shape, &m,
		     &n, err)) != 0 ||
		m == NULL)
		return rc;
	if (n < min || n > max)
		return lb_cfg_error(err, m, NULL, "between %d and %d addresses", min, max);
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(m, (unsigned)i);
		const char *s;
		char why[160];

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return lb_cfg_error(err, e, NULL, "expected a string (an %s address)", fam);
		s = config_setting_get_string(e);
		if (lb_addr_parse(s, allow, &out[*n_out].a, &out[*n_out].af, why, sizeof(why)) != 0)
			return lb_cfg_error(err, e, NULL, "\"%s\" %s", s, why);
		(*n_out)++;
	}
	return 0;
}

int
lb_cfg_get_addr_split(const config_setting_t *group, const char *name, int min, int max,
	lb_be32_t *v4, uint16_t *n4, struct lb_addr *v6, uint16_t *n6, struct lb_cfg_err *err)
{
	struct lb_cfg_addr l[LB_CFG_ADDRS_MAX];
	uint16_t i, n;
	int rc;

	*n4 = *n6 = 0;
	if (max > LB_CFG_ADDRS_MAX)
		return -LB_EINVAL;
	rc = lb_cfg_get_addr_list(group, name, min, max, LB_ADDR_ANY, l, &n, err);
	for (i = 0; rc == 0 && i < n; i++) {
		if (l[i].af == LB_AF_INET6)
			v6[(*n6)++] = l[i].a;
		else
			v4[(*n4)++] = l[i].a.a32[0];
	}
	return rc;
}

int
lb_cfg_get_mac(const config_setting_t *group, const char *name, bool required, uint8_t out[6],
	struct lb_cfg_err *err)
{
	const char *s = NULL;
	int rc, i;

	rc = lb_cfg_get_string(group, name, required, NULL, &s, err);
	if (rc != 0)
		return rc;
	if (s == NULL)
		return 0;
	/* Two hex digits a byte, colons between, nothing else (scanf takes signs and spaces). */
	for (i = 0; i < 17; i++)
		if (i % 3 == 2 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			break;
	if (i != 17 || s[17] != '\0')
		return lb_cfg_error(err, member(group, name), NULL,
			"\"%s\" is not a MAC address (aa:bb:cc:dd:ee:ff)", s);
	for (i = 0; i < 6; i++)
		out[i] = (uint8_t)strtoul((char[3]){s[3 * i], s[3 * i + 1], '\0'}, NULL, 16);
	return 0;
}

int
lb_cfg_get_eal(
	const config_setting_t *root, const char **out, int max, int *n, struct lb_cfg_err *err)
{
	/* A lab default: no hugepages, no PCI scan. Real NICs set their own. */
	static const char *const def[] = {"--no-huge", "-m", "256", "--no-pci"};
	const config_setting_t *eal;
	int i, len, rc;

	*n = 0;
	if ((rc = lb_cfg_get_list(root, "eal", true, NULL,
		     "expected a list of strings [\"--no-huge\", ...]", &eal, &len, err)) != 0)
		return rc;
	if (eal == NULL) {
		for (i = 0; i < 4; i++)
			out[(*n)++] = def[i];
		return 0;
	}
	if (len > max)
		return lb_cfg_error(err, eal, NULL, "at most %d EAL arguments", max);
	for (i = 0; i < len; i++) {
		const config_setting_t *e = config_setting_get_elem(eal, (unsigned)i);

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return lb_cfg_error(err, e, NULL, "expected a string");
		out[(*n)++] = config_setting_get_string(e);
	}
	return 0;
}

/*
 * A backend of svc, whose family (svc->af) its DIP must have: a service is
 * one family. Its host, the PA of the agent that owns the DIP, may be
 * either: the mux's outer header follows it.
 */
static int
load_backend(const config_setting_t *s, const struct lb_service_cfg *svc, struct lb_backend_cfg *b,
	struct lb_cfg_err *err)
{
	static const char *const fields[] = {
		"dip", "port", "weight", "host", "state", "zone", "max_connections", NULL};
	long long port, weight, max_conns;
	uint8_t dip_af, host_af;
	int rc;

	if ((rc = lb_cfg_group(
		     s, fields, "a backend is a group { dip = ...; port = ...; }", err)) != 0 ||
		(rc = lb_cfg_get_addr(s, "dip", true, LB_ADDR_ANY, &b->dip, &dip_af, err)) != 0)
		return rc;
	if (dip_af != svc->af) {
		char v[LB_ADDR_STRLEN];

		return lb_cfg_error(err, member(s, "dip"), NULL,
			"\"%s\" is an %s address in an %s service (VIP %s): a service is one "
			"family",
			config_setting_get_string(member(s, "dip")),
			dip_af == LB_AF_INET6 ? "IPv6" : "IPv4",
			svc->af == LB_AF_INET6 ? "IPv6" : "IPv4",
			lb_addr_ntop(svc->af, &svc->vip, v, sizeof(v)));
	}
	if ((rc = lb_cfg_get_int(s, "port", true, 1, 65535, 0, &port, err)) != 0 ||
		(rc = lb_cfg_get_int(
			 s, "weight", false, 0, LB_MAGLEV_MAX_WEIGHT, 1, &weight, err)) != 0 ||
		(rc = lb_cfg_get_addr(s, "host", true, LB_ADDR_ANY, &b->host, &host_af, err)) !=
			0 ||
		(rc = lb_cfg_get_name(s, "state", lb_backend_state_names, 3, LB_BACKEND_ACTIVE,
			 "a state", &b->state, err)) != 0 ||
		(rc = lb_cfg_get_zone(s, "zone", b->zone, err)) != 0 ||
		(rc = lb_cfg_get_int(s, "max_connections", false, 0, LB_MAX_CONNS_CAP, 0,
			 &max_conns, err)) != 0)
		return rc;
	if (max_conns != 0 && svc->proto != LB_IPPROTO_TCP)
		return lb_cfg_error(err, member(s, "max_connections"), NULL,
			"a cap on connections needs a TCP service: the host agent counts TCP "
			"connections only");
	b->max_conns = (uint32_t)max_conns;
	b->host6 = host_af == LB_AF_INET6;
	b->port = (uint16_t)port;
	b->weight = (uint32_t)weight;
	return 0;
}

/*
 * One rule: a group { limit = N; burst = N; prefix = N; mode = "..."; },
 * burst for rates (rate) and prefix for the per-source rule (pfx != NULL).
 */
static int
load_rule(const config_setting_t *g, bool rate, uint8_t *pfx, unsigned max_pfx,
	struct lb_limit_rule *r, struct lb_cfg_err *err)
{
	static const char *const f_conns[] = {"limit", "mode", NULL};
	static const char *const f_rate[] = {"limit", "burst", "mode", NULL};
	static const char *const f_source[] = {"limit", "burst", "prefix", "mode", NULL};
	long long limit, burst = 0, prefix = 0;
	int rc;

	if ((rc = lb_cfg_group(g,
		     pfx    ? f_source
		     : rate ? f_rate
			    : f_conns,
		     "a rule is a group { limit = ...; mode = ...; }", err)) != 0 ||
		(rc = lb_cfg_get_int(g, "limit", true, 1, LB_LIMIT_MAX, 0, &limit, err)) != 0 ||
		(rate && (rc = lb_cfg_get_int(
				  g, "burst", false, 0, LB_LIMIT_MAX, 0, &burst, err)) != 0) ||
		(pfx && (rc = lb_cfg_get_int(g, "prefix", false, 1, max_pfx, 0, &prefix, err)) !=
				0) ||
		(rc = lb_cfg_get_name(g, "mode", lb_limit_mode_names, 2, LB_LIMIT_MONITOR, "a mode",
			 &r->mode, err)) != 0)
		return rc;
	r->limit = (uint32_t)limit;
	r->burst = (uint32_t)burst;
	if (pfx)
		*pfx = (uint8_t)prefix;
	return 0;
}

/* A service's limits group (lb_limits.h), for a service of family af. */
static int
load_limits(const config_setting_t *g, uint8_t af, uint8_t proto, struct lb_svc_limits *l,
	struct lb_cfg_err *err)
{
	static const char *const fields[] = {
		"per_source", "new_per_second", "max_connections", "refuse", NULL};
	int rc, k;

	if ((rc = lb_cfg_group(g, fields, "expected a group { new_per_second = ...; }", err)) !=
			0 ||
		(rc = lb_cfg_get_name(g, "refuse", lb_refuse_names, 3, LB_REFUSE_DROP, "a refusal",
			 &l->refuse, err)) != 0)
		return rc;
	for (k = 0; k < LB_LIM_N; k++) {
		const config_setting_t *r = member(g, lb_limit_kind_names[k]);

		if (r != NULL && (rc = load_rule(r, k != LB_LIM_CONNS,
					  k == LB_LIM_SOURCE ? &l->source_prefix : NULL,
					  lb_limit_prefix_max(af), &l->rule[k], err)) != 0)
			return rc;
	}
	if (l->refuse == LB_REFUSE_RST && proto != LB_IPPROTO_TCP)
		return lb_cfg_error(err, member(g, "refuse"), NULL, "rst needs a TCP service");
	lb_limit_prefix_fill(l, af);
	return 0;
}

static int
load_service(const config_setting_t *s, struct lb_service_cfg *svc, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"vip", "protocol", "port", "backends", "limits",
		"affinity", "on_unusable", "cross_zone", "balance", "mitigate", NULL};
	static const char *const protos[] = {"tcp", "udp"};
	const config_setting_t *list;
	bool cross_zone, mitigate;
	uint8_t udp;
	long long port;
	uint32_t i, j, n;
	int rc, len;

	if ((rc = lb_cfg_group(s, fields, "a service is a group { vip = ...; ... }", err)) != 0 ||
		(rc = lb_cfg_get_addr(s, "vip", true, LB_ADDR_ANY, &svc->vip, &svc->af, err)) !=
			0 ||
		(rc = lb_cfg_get_int(s, "port", true, 1, 65535, 0, &port, err)) != 0 ||
		(rc = lb_cfg_get_name(s, "protocol", protos, 2, 0, "a protocol", &udp, err)) != 0)
		return rc;
	svc->proto = udp ? LB_IPPROTO_UDP : LB_IPPROTO_TCP;
	svc->port = (uint16_t)port;
	if ((rc = lb_cfg_get_name(s, "affinity", lb_affinity_names, LB_AFF_N, LB_AFF_TUPLE,
		     "an affinity", &svc->choice.affinity, err)) != 0 ||
		(rc = lb_cfg_get_name(s, "on_unusable", lb_unusable_names, LB_UNUSABLE_N,
			 LB_UNUSABLE_REDISTRIBUTE, "a failure policy", &svc->choice.on_unusable,
			 err)) != 0 ||
		(rc = lb_cfg_get_bool(s, "cross_zone", true, &cross_zone, err)) != 0 ||
		(rc = lb_cfg_get_name(s, "balance", lb_balance_names, LB_BALANCE_N,
			 LB_BALANCE_WEIGHTED, "a balance", &svc->choice.balance, err)) != 0 ||
		(rc = lb_cfg_get_bool(s, "mitigate", false, &mitigate, err)) != 0)
		return rc;
	svc->choice.zonal = !cross_zone;
	svc->choice.mitigate = mitigate;
	if (member(s, "limits") != NULL && (rc = load_limits(member(s, "limits"), svc->af,
						    svc->proto, &svc->limits, err)) != 0)
		return rc;

	if ((rc = lb_cfg_get_list(s, "backends", false, "missing required field",
		     "expected a list ( {...}, {...} )", &list, &len, err)) != 0)
		return rc;
	n = (uint32_t)len;
	if (n > LB_MAGLEV_MAX_BACKENDS)
		return lb_cfg_error(err, list, NULL, "%u backends; at most %u per service", n,
			LB_MAGLEV_MAX_BACKENDS);
	svc->backends = calloc(n ? n : 1, sizeof(*svc->backends));
	if (svc->backends == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < n; i++) {
		const config_setting_t *bs = config_setting_get_elem(list, i);

		rc = load_backend(bs, svc, &svc->backends[i], err);
		if (rc != 0)
			return rc;
		for (j = 0; j < i; j++)
			if (lb_backend_cmp(&svc->backends[j], &svc->backends[i]) == 0)
				return lb_cfg_error(err, bs, NULL,
					"duplicate backend (same dip and port as backends[%u])", j);
		svc->n_backends = i + 1;
		if (svc->choice.zonal && svc->backends[i].zone[0] == 0)
			return lb_cfg_error(err, member(s, "cross_zone"), NULL,
				"false, and backends[%u] has no zone: with cross_zone = false, "
				"every backend has one",
				i);
	}
	return 0;
}

static int
ftable_load(const config_setting_t *group, struct lb_ftable *ft, struct lb_cfg_err *err)
{
	static const char *const fields[] = {
		"hash_seed", "maglev_size", "mux_new_per_second", "services", NULL};
	const config_setting_t *list;
	const char *seed = NULL;
	long long msize;
	uint32_t i, j, n, next_id = 0;
	int rc, len;

	memset(ft, 0, sizeof(*ft));
	if ((rc = lb_cfg_group(group, fields, "expected a group { ... }", err)) != 0 ||
		(rc = lb_cfg_get_string(group, "hash_seed", true, NULL, &seed, err)) != 0 ||
		(rc = lb_cfg_get_int(group, "maglev_size", false, LB_MAGLEV_MIN_SIZE,
			 LB_MAGLEV_MAX_SIZE, LB_MAGLEV_DEFAULT_SIZE, &msize, err)) != 0)
		return rc;
	if (lb_hash_seed_parse(&ft->seed, seed) != 0)
		return lb_cfg_error(err, member(group, "hash_seed"), NULL,
			"expected 32 hexadecimal digits (a 128-bit secret)");
	if (!lb_is_prime((uint32_t)msize))
		return lb_cfg_error(err, member(group, "maglev_size"), NULL,
			"%lld is not prime (65537 is the default)", msize);
	ft->maglev_size = (uint32_t)msize;
	if (member(group, "mux_new_per_second") != NULL &&
		(rc = load_rule(member(group, "mux_new_per_second"), true, NULL, 0, &ft->mux_rate,
			 err)) != 0)
		return rc;

	if ((rc = lb_cfg_get_list(group, "services", false, NULL,
		     "expected a list ( {...}, {...} )", &list, &len, err)) != 0 ||
		list == NULL)
		return rc;
	n = (uint32_t)len;
	ft->services = calloc(n ? n : 1, sizeof(*ft->services));
	if (ft->services == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < n; i++) {
		const config_setting_t *ss = config_setting_get_elem(list, i);
		struct lb_service_cfg *svc = &ft->services[i];

		ft->n_services = i + 1;
		rc = load_service(ss, svc, err);
		if (rc != 0)
			goto fail;
		svc->id = i;
		for (j = 0; j < svc->n_backends; j++)
			svc->backends[j].id = next_id++;
		for (j = 0; j < i; j++) {
			const struct lb_service_cfg *o = &ft->services[j];

			if (lb_service_cmp(o, svc) == 0) {
				rc = lb_cfg_error(err, ss, NULL,
					"duplicate service (same vip, protocol and port as "
					"services[%u])",
					j);
				goto fail;
			}
		}
	}
	return 0;
fail:
	return rc;
}

int
lb_ftable_load(const config_setting_t *group, struct lb_ftable *ft, struct lb_cfg_err *err)
{
	int rc = ftable_load(group, ft, err);

	/* Nothing of a rejected table survives, not even its seed. */
	if (rc != 0)
		lb_ftable_free(ft);
	return rc;
}

int
lb_ftable_load_unless_managed(const config_setting_t *root, struct lb_ftable *ft,
	const config_setting_t **manager, bool *ignored, struct lb_cfg_err *err)
{
	const config_setting_t *group = config_setting_get_member(root, "flow_table");
	int rc;

	*manager = config_setting_get_member(root, "manager");
	*ignored = false;
	memset(ft, 0, sizeof(*ft));
	if (group == NULL)
		return *manager != NULL
			       ? 0
			       : lb_cfg_error(err, root, "flow_table", "missing required group");
	rc = lb_ftable_load(group, ft, err);
	if (rc == 0 && *manager != NULL) {
		*ignored = true;
		lb_ftable_free(ft);
	}
	return rc;
}

int
lb_cfg_load_daemon(
	const struct lb_cfg_daemon *d, void *cfg, const char *path, struct lb_cfg_err *err)
{
	const config_setting_t *root;
	int rc;

	memset(cfg, 0, d->size);
	rc = lb_cfg_read_file(d->file, path, err);
	if (rc != 0)
		return rc;
	root = config_root_setting(d->file);
	if ((rc = lb_cfg_check_fields(root, d->fields, err)) != 0 ||
		(rc = lb_cfg_get_eal(root, d->eal_args, d->max_eal_args, d->n_eal_args, err)) !=
			0 ||
		(rc = d->load(cfg, root, err)) != 0 ||
		(rc = lb_ftable_load_unless_managed(
			 root, d->ftable, d->manager, d->ftable_ignored, err)) != 0) {
		config_destroy(d->file);
		memset(cfg, 0, d->size);
		return rc;
	}
	*d->managed = *d->manager != NULL;
	return 0;
}
