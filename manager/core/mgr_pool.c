/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "mgr_pool.h"

static const struct mgr_pool pool_defaults = {
	.pl_probe = LB_PROBE_TCP,
	.pl_probe_port = 0,
	.pl_path = "/",
	.pl_codes = "200-399",
	.pl_n_ranges = 1,
	.pl_lo = {200},
	.pl_hi = {399},
	.pl_interval_s = MGR_POOL_DEFAULT_INTERVAL,
	.pl_timeout_s = MGR_POOL_DEFAULT_TIMEOUT,
	.pl_healthy = MGR_POOL_DEFAULT_HEALTHY,
	.pl_unhealthy = MGR_POOL_DEFAULT_UNHEALTHY,
	.pl_drain_delay_s = MGR_POOL_DEFAULT_DRAIN_DELAY,
	.pl_slow_start_s = 0,
	.pl_min_healthy = MGR_POOL_DEFAULT_MIN_HEALTHY,
	.pl_min_healthy_pct = 0,
};

const char *const mgr_pool_cfg_fields[] = {"probe", "probe_port", "path", "codes", "interval",
	"timeout", "healthy", "unhealthy", "drain_delay", "slow_start", "min_healthy",
	"min_healthy_percent", "withdraw_below", "withdraw_below_percent", NULL};

const struct mgr_pool *
mgr_pool_defaults(void)
{
	return &pool_defaults;
}

const char *
mgr_probe_name(uint8_t probe)
{
	switch (probe) {
	case LB_PROBE_NONE:
		return "none";
	case LB_PROBE_TCP:
		return "tcp";
	case LB_PROBE_HTTP:
		return "http";
	default:
		return "unset";
	}
}

/* "200-399,404": up to MGR_POOL_RANGES codes or ranges, 100..599. */
static int
parse_codes(const char *s, struct mgr_pool *p, char *err, size_t len)
{
	const char *c = s;
	uint8_t n = 0;

	if (*s == '\0') {
		snprintf(err, len, "codes: empty (e.g. \"200-399\" or \"200,302\")");
		return -LB_EINVAL;
	}
	while (*c != '\0') {
		unsigned long lo, hi;
		char *end;

		if (*c < '0' || *c > '9')
			goto bad;
		lo = strtoul(c, &end, 10);
		hi = lo;
		c = end;
		if (*c == '-') {
			c++;
			if (*c < '0' || *c > '9')
				goto bad;
			hi = strtoul(c, &end, 10);
			c = end;
		}
		if (*c != ',' && *c != '\0')
			goto bad;
		if (lo < 100 || hi > 599 || lo > hi) {
			snprintf(err, len,
				"codes: \"%s\": %lu-%lu is not within 100..599 (low-high)", s, lo,
				hi);
			return -LB_EINVAL;
		}
		if (n == MGR_POOL_RANGES) {
			snprintf(err, len, "codes: \"%s\": more than %d codes or ranges", s,
				MGR_POOL_RANGES);
			return -LB_EINVAL;
		}
		p->pl_lo[n] = (uint16_t)lo;
		p->pl_hi[n] = (uint16_t)hi;
		n++;
		if (*c == ',') {
			c++;
			if (*c == '\0')
				goto bad;
		}
	}
	p->pl_n_ranges = n;
	return 0;
bad:
	snprintf(err, len,
		"codes: \"%s\": expected codes or ranges like \"200-399\" or \"200,302\"", s);
	return -LB_EINVAL;
}

static int
range(const char *field, uint32_t v, uint32_t lo, uint32_t hi, char *err, size_t len)
{
	if (v >= lo && v <= hi)
		return 0;
	snprintf(err, len, "%s: %" PRIu32 " is out of range %" PRIu32 "..%" PRIu32, field, v, lo,
		hi);
	return -LB_EINVAL;
}

int
mgr_pool_check(const struct mgr_pool *p, char *err, size_t len)
{
	struct mgr_pool tmp = *p;
	const char *c;
	int rc;

	if (p->pl_probe < LB_PROBE_NONE || p->pl_probe > LB_PROBE_HTTP) {
		snprintf(err, len, "probe: must be none, tcp or http");
		return -LB_EINVAL;
	}
	/* The path goes into a request line: one token of visible ASCII. */
	if (p->pl_path[0] != '/') {
		snprintf(err, len, "path: \"%s\" must begin with /", p->pl_path);
		return -LB_EINVAL;
	}
	for (c = p->pl_path; *c != '\0'; c++) {
		if (*c <= ' ' || *c > '~') {
			snprintf(err, len,
				"path: \"%s\": spaces and control characters are not allowed "
				"(escape "
				"them as %%20)",
				p->pl_path);
			return -LB_EINVAL;
		}
	}
	if ((rc = parse_codes(p->pl_codes, &tmp, err, len)) != 0 ||
		(rc = range("interval", p->pl_interval_s, LB_POOL_INTERVAL_MIN,
			 LB_POOL_INTERVAL_MAX, err, len)) != 0 ||
		(rc = range("timeout", p->pl_timeout_s, LB_POOL_TIMEOUT_MIN, LB_POOL_TIMEOUT_MAX,
			 err, len)) != 0 ||
		(rc = range("healthy", p->pl_healthy, LB_POOL_THRESHOLD_MIN, LB_POOL_THRESHOLD_MAX,
			 err, len)) != 0 ||
		(rc = range("unhealthy", p->pl_unhealthy, LB_POOL_THRESHOLD_MIN,
			 LB_POOL_THRESHOLD_MAX, err, len)) != 0 ||
		(rc = range("drain_delay", p->pl_drain_delay_s, 0, LB_POOL_DRAIN_DELAY_MAX, err,
			 len)) != 0 ||
		(rc = range("min_healthy", p->pl_min_healthy, 0, LB_POOL_MIN_HEALTHY_MAX, err,
			 len)) != 0 ||
		(rc = range("min_healthy_percent", p->pl_min_healthy_pct, 0, 100, err, len)) != 0 ||
		(rc = range("withdraw_below", p->pl_withdraw_below, 0, LB_POOL_MIN_HEALTHY_MAX, err,
			 len)) != 0 ||
		(rc = range("withdraw_below_percent", p->pl_withdraw_below_pct, 0, 100, err,
			 len)) != 0 ||
		(rc = mgr_pool_check_withdraw(p, err, len)) != 0)
		return rc;
	/* A probe must end before the next one starts (at 1 s, as it does). */
	if (p->pl_timeout_s > p->pl_interval_s) {
		snprintf(err, len, "timeout: %" PRIu32 " must not exceed interval (%" PRIu32 ")",
			p->pl_timeout_s, p->pl_interval_s);
		return -LB_EINVAL;
	}
	if (p->pl_slow_start_s != 0 && (p->pl_slow_start_s < LB_POOL_SLOW_START_MIN ||
					       p->pl_slow_start_s > LB_POOL_SLOW_START_MAX)) {
		snprintf(err, len, "slow_start: %" PRIu32 " is out of range %d..%d (or 0: off)",
			p->pl_slow_start_s, LB_POOL_SLOW_START_MIN, LB_POOL_SLOW_START_MAX);
		return -LB_EINVAL;
	}
	return 0;
}

bool
mgr_pool_withdraws(const struct mgr_pool *p)
{
	return p->pl_withdraw_below != 0 || p->pl_withdraw_below_pct != 0;
}

int
mgr_pool_check_withdraw(const struct mgr_pool *p, char *err, size_t len)
{
	if (!mgr_pool_withdraws(p))
		return 0;
	if (p->pl_min_healthy > 1 && p->pl_withdraw_below < p->pl_min_healthy) {
		snprintf(err, len,
			"withdraw_below: %" PRIu32 "%s is below min_healthy (%" PRIu32
			"): the VIP would stay announced while its pool fails open; set "
			"withdraw_below to %" PRIu32 " or more, or lower min_healthy",
			p->pl_withdraw_below, p->pl_withdraw_below == 0 ? " (off)" : "",
			p->pl_min_healthy, p->pl_min_healthy);
		return -LB_EINVAL;
	}
	if (p->pl_min_healthy_pct != 0 && p->pl_withdraw_below_pct < p->pl_min_healthy_pct) {
		snprintf(err, len,
			"withdraw_below_percent: %" PRIu32
			"%s is below min_healthy_percent (%" PRIu32
			"): the VIP would stay announced while its pool fails open; set "
			"withdraw_below_percent to %" PRIu32 " or more, or lower "
			"min_healthy_percent",
			p->pl_withdraw_below_pct, p->pl_withdraw_below_pct == 0 ? " (off)" : "",
			p->pl_min_healthy_pct, p->pl_min_healthy_pct);
		return -LB_EINVAL;
	}
	return 0;
}

bool
mgr_pool_below_withdraw(const struct mgr_pool *p, uint32_t healthy, uint32_t registered)
{
	if (!mgr_pool_withdraws(p))
		return false;
	if (registered == 0)
		return true; /* nothing at all to serve it */
	return (p->pl_withdraw_below != 0 && healthy < p->pl_withdraw_below) ||
	       (p->pl_withdraw_below_pct != 0 &&
		       (uint64_t)healthy * 100 < (uint64_t)p->pl_withdraw_below_pct * registered);
}

int
mgr_pool_apply(struct mgr_pool *p, const struct lb_pool_opts *o, char *err, size_t len)
{
	struct mgr_pool n = *p;
	int rc;

	if (o->given & LB_POOL_PROBE)
		n.pl_probe = o->probe;
	if (o->given & LB_POOL_PROBE_PORT)
		n.pl_probe_port = o->probe_port;
	if (o->given & LB_POOL_PATH)
		snprintf(n.pl_path, sizeof(n.pl_path), "%s", o->path);
	if (o->given & LB_POOL_CODES)
		snprintf(n.pl_codes, sizeof(n.pl_codes), "%s", o->codes);
#define X(c, bit, pb, name)                                                                        \
	if (o->given & bit)                                                                        \
		n.pl_##c = o->c;
	LB_POOL_NUMBERS(X)
#undef X
	rc = mgr_pool_check(&n, err, len);
	if (rc != 0)
		return rc;
	rc = parse_codes(n.pl_codes, &n, err, len);
	if (rc == 0)
		*p = n;
	return rc;
}

bool
mgr_pool_code_ok(const struct mgr_pool *p, unsigned code)
{
	uint8_t i;

	for (i = 0; i < p->pl_n_ranges; i++)
		if (code >= p->pl_lo[i] && code <= p->pl_hi[i])
			return true;
	return false;
}

bool
mgr_pool_equal(const struct mgr_pool *a, const struct mgr_pool *b)
{
	return a->pl_probe == b->pl_probe && a->pl_probe_port == b->pl_probe_port &&
	       strcmp(a->pl_path, b->pl_path) == 0 && strcmp(a->pl_codes, b->pl_codes) == 0 &&
	       a->pl_interval_s == b->pl_interval_s && a->pl_timeout_s == b->pl_timeout_s &&
	       a->pl_healthy == b->pl_healthy && a->pl_unhealthy == b->pl_unhealthy &&
	       a->pl_drain_delay_s == b->pl_drain_delay_s &&
	       a->pl_slow_start_s == b->pl_slow_start_s && a->pl_min_healthy == b->pl_min_healthy &&
	       a->pl_min_healthy_pct == b->pl_min_healthy_pct &&
	       a->pl_withdraw_below == b->pl_withdraw_below &&
	       a->pl_withdraw_below_pct == b->pl_withdraw_below_pct;
}

static const char *
count_pct_str(uint32_t n, uint32_t pct, char *buf, size_t len)
{
	if (n != 0 && pct != 0)
		snprintf(buf, len, "%" PRIu32 " or %" PRIu32 "%%", n, pct);
	else if (n != 0)
		snprintf(buf, len, "%" PRIu32, n);
	else if (pct != 0)
		snprintf(buf, len, "%" PRIu32 "%%", pct);
	else
		snprintf(buf, len, "off");
	return buf;
}

const char *
mgr_pool_min_str(const struct mgr_pool *p, char *buf, size_t len)
{
	return count_pct_str(p->pl_min_healthy, p->pl_min_healthy_pct, buf, len);
}

const char *
mgr_pool_withdraw_str(const struct mgr_pool *p, char *buf, size_t len)
{
	return count_pct_str(p->pl_withdraw_below, p->pl_withdraw_below_pct, buf, len);
}

void
mgr_pool_write(const struct mgr_pool *p, FILE *f)
{
	fprintf(f,
		"probe = \"%s\"; probe_port = %u; path = \"%s\"; codes = \"%s\";\n"
		"\t\t  interval = %" PRIu32 "; timeout = %" PRIu32 "; healthy = %" PRIu32
		"; unhealthy = %" PRIu32 ";\n"
		"\t\t  drain_delay = %" PRIu32 "; slow_start = %" PRIu32 "; min_healthy = %" PRIu32
		"; min_healthy_percent = %" PRIu32 ";\n"
		"\t\t  withdraw_below = %" PRIu32 "; withdraw_below_percent = %" PRIu32 ";",
		mgr_probe_name(p->pl_probe), p->pl_probe_port, p->pl_path, p->pl_codes,
		p->pl_interval_s, p->pl_timeout_s, p->pl_healthy, p->pl_unhealthy,
		p->pl_drain_delay_s, p->pl_slow_start_s, p->pl_min_healthy, p->pl_min_healthy_pct,
		p->pl_withdraw_below, p->pl_withdraw_below_pct);
}

/* An integer field, checked against its absolute range here (located error). */
static int
cfg_u32(const config_setting_t *g, const char *name, long long lo, long long hi, uint32_t *out,
	struct lb_cfg_err *err)
{
	long long v;
	int rc;

	if (config_setting_get_member(g, name) == NULL)
		return 0;
	rc = lb_cfg_get_int(g, name, true, lo, hi, 0, &v, err);
	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

static int
cfg_str(const config_setting_t *g, const char *name, char *out, size_t len, struct lb_cfg_err *err)
{
	const char *v = NULL;
	int rc;

	if (config_setting_get_member(g, name) == NULL)
		return 0;
	rc = lb_cfg_get_string(g, name, true, NULL, &v, err);
	if (rc != 0)
		return rc;
	if (strlen(v) >= len)
		return lb_cfg_error(err, config_setting_get_member(g, name), NULL,
			"longer than %zu characters", len - 1);
	snprintf(out, len, "%s", v);
	return 0;
}

int
mgr_pool_from_cfg(const config_setting_t *g, struct mgr_pool *p, struct lb_cfg_err *err)
{
	char probe[16] = "", e[LB_CFG_ERR_LEN];
	struct mgr_pool n = *p;
	int rc;

	if ((rc = cfg_str(g, "probe", probe, sizeof(probe), err)) != 0)
		return rc;
	if (probe[0] != '\0') {
		if (strcmp(probe, "none") == 0)
			n.pl_probe = LB_PROBE_NONE;
		else if (strcmp(probe, "tcp") == 0)
			n.pl_probe = LB_PROBE_TCP;
		else if (strcmp(probe, "http") == 0)
			n.pl_probe = LB_PROBE_HTTP;
		else
			return lb_cfg_error(err, config_setting_get_member(g, "probe"), NULL,
				"\"%s\": must be none, tcp or http", probe);
	}
	{
		uint32_t port = n.pl_probe_port;

		if ((rc = cfg_u32(g, "probe_port", 0, 65535, &port, err)) != 0)
			return rc;
		n.pl_probe_port = (uint16_t)port;
	}
	if ((rc = cfg_str(g, "path", n.pl_path, sizeof(n.pl_path), err)) != 0 ||
		(rc = cfg_str(g, "codes", n.pl_codes, sizeof(n.pl_codes), err)) != 0 ||
		(rc = cfg_u32(g, "interval", LB_POOL_INTERVAL_MIN, LB_POOL_INTERVAL_MAX,
			 &n.pl_interval_s, err)) != 0 ||
		(rc = cfg_u32(g, "timeout", LB_POOL_TIMEOUT_MIN, LB_POOL_TIMEOUT_MAX,
			 &n.pl_timeout_s, err)) != 0 ||
		(rc = cfg_u32(g, "healthy", LB_POOL_THRESHOLD_MIN, LB_POOL_THRESHOLD_MAX,
			 &n.pl_healthy, err)) != 0 ||
		(rc = cfg_u32(g, "unhealthy", LB_POOL_THRESHOLD_MIN, LB_POOL_THRESHOLD_MAX,
			 &n.pl_unhealthy, err)) != 0 ||
		(rc = cfg_u32(g, "drain_delay", 0, LB_POOL_DRAIN_DELAY_MAX, &n.pl_drain_delay_s,
			 err)) != 0 ||
		(rc = cfg_u32(g, "slow_start", 0, LB_POOL_SLOW_START_MAX, &n.pl_slow_start_s,
			 err)) != 0 ||
		(rc = cfg_u32(g, "min_healthy", 0, LB_POOL_MIN_HEALTHY_MAX, &n.pl_min_healthy,
			 err)) != 0 ||
		(rc = cfg_u32(g, "min_healthy_percent", 0, 100, &n.pl_min_healthy_pct, err)) != 0 ||
		(rc = cfg_u32(g, "withdraw_below", 0, LB_POOL_MIN_HEALTHY_MAX, &n.pl_withdraw_below,
			 err)) != 0 ||
		(rc = cfg_u32(
			 g, "withdraw_below_percent", 0, 100, &n.pl_withdraw_below_pct, err)) != 0)
		return rc;
	if (mgr_pool_check(&n, e, sizeof(e)) != 0) {
		/* "timeout: ..." -> located at that field when it is in the group. */
		char field[32];
		size_t k = strcspn(e, ":");
		const config_setting_t *at = g;

		if (k < sizeof(field)) {
			memcpy(field, e, k);
			field[k] = '\0';
			if (config_setting_get_member(g, field) != NULL)
				at = config_setting_get_member(g, field);
		}
		return lb_cfg_error(err, at, NULL, "%s", at == g ? e : e + k + 2);
	}
	parse_codes(n.pl_codes, &n, e, sizeof(e));
	*p = n;
	return 0;
}

/* ---- the pools of a table ---- */

static int
key_cmp(const void *a, const void *b)
{
	const struct mgr_pool_entry *x = a, *y = b;

	return memcmp(&x->pe_key, &y->pe_key, sizeof(x->pe_key));
}

static struct mgr_pool_entry *
find(const struct mgr_pools *ps, const struct lb_svc_key *k)
{
	struct mgr_pool_entry e;

	if (ps->ps_n == 0)
		return NULL;
	e.pe_key = *k;
	return bsearch(&e, ps->ps_v, ps->ps_n, sizeof(e), key_cmp);
}

const struct mgr_pool *
mgr_pools_get(const struct mgr_pools *ps, const struct lb_svc_key *k)
{
	const struct mgr_pool_entry *e = find(ps, k);

	return e != NULL ? &e->pe_pool : &pool_defaults;
}

void
mgr_pools_del(struct mgr_pools *ps, const struct lb_svc_key *k)
{
	struct mgr_pool_entry *e = find(ps, k);
	size_t i;

	if (e == NULL)
		return;
	i = (size_t)(e - ps->ps_v);
	memmove(e, e + 1, (ps->ps_n - i - 1) * sizeof(*e));
	ps->ps_n--;
}

int
mgr_pools_set(struct mgr_pools *ps, const struct lb_svc_key *k, const struct mgr_pool *p)
{
	struct mgr_pool_entry *e = find(ps, k), *v;

	if (mgr_pool_equal(p, &pool_defaults)) {
		mgr_pools_del(ps, k);
		return 0;
	}
	if (e != NULL) {
		e->pe_pool = *p;
		return 0;
	}
	v = realloc(ps->ps_v, (ps->ps_n + 1) * sizeof(*v));
	if (v == NULL)
		return -LB_ENOMEM;
	ps->ps_v = v;
	memset(&v[ps->ps_n], 0, sizeof(v[0]));
	v[ps->ps_n].pe_key = *k;
	v[ps->ps_n].pe_pool = *p;
	ps->ps_n++;
	qsort(ps->ps_v, ps->ps_n, sizeof(*v), key_cmp);
	return 0;
}

void
mgr_pools_prune(struct mgr_pools *ps, const struct lb_ftable *t)
{
	uint32_t i, n = 0;

	for (i = 0; i < ps->ps_n; i++) {
		struct lb_svc_key k = ps->ps_v[i].pe_key;

		if (lb_ftable_find(t, &k) >= 0)
			ps->ps_v[n++] = ps->ps_v[i];
	}
	ps->ps_n = n;
}

int
mgr_pools_copy(struct mgr_pools *dst, const struct mgr_pools *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->ps_n == 0)
		return 0;
	dst->ps_v = malloc(src->ps_n * sizeof(*dst->ps_v));
	if (dst->ps_v == NULL)
		return -LB_ENOMEM;
	memcpy(dst->ps_v, src->ps_v, src->ps_n * sizeof(*dst->ps_v));
	dst->ps_n = src->ps_n;
	return 0;
}

bool
mgr_pools_equal(const struct mgr_pools *a, const struct mgr_pools *b)
{
	uint32_t i;

	if (a->ps_n != b->ps_n)
		return false;
	for (i = 0; i < a->ps_n; i++)
		if (memcmp(&a->ps_v[i].pe_key, &b->ps_v[i].pe_key, sizeof(a->ps_v[i].pe_key)) !=
				0 ||
			!mgr_pool_equal(&a->ps_v[i].pe_pool, &b->ps_v[i].pe_pool))
			return false;
	return true;
}

void
mgr_pools_free(struct mgr_pools *ps)
{
	free(ps->ps_v);
	memset(ps, 0, sizeof(*ps));
}
