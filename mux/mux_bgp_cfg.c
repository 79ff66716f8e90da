/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lb_err.h"
#include "mux_bgp_cfg.h"

static int
executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* name with a slash: that file; without: the first executable on PATH. */
static int
resolve_bird(
	const config_setting_t *g, const char *name, char *out, size_t len, struct lb_cfg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, "bird");
	const char *path = getenv("PATH");
	const char *p, *end;

	if (name[0] == '\0')
		return lb_cfg_error(err, s, NULL, "empty");
	if (strchr(name, '/') != NULL) {
		if (!executable(name))
			return lb_cfg_error(err, s, NULL, "%s is not an executable file", name);
		if (strlen(name) >= len)
			return lb_cfg_error(err, s, NULL, "path too long");
		strcpy(out, name);
		return 0;
	}
	if (path == NULL)
		path = "/usr/bin:/bin";
	for (p = path; *p != '\0'; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		if (end == p)
			continue;
		if ((size_t)snprintf(out, len, "%.*s/%s", (int)(end - p), p, name) < len &&
			executable(out))
			return 0;
	}
	return lb_cfg_error(err, s != NULL ? s : g, s != NULL ? NULL : "bird",
		"\"%s\" not found on PATH (%.100s): install bird2 or give its path", name, path);
}

/* Does s hold a control character? */
static bool
has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/*
 * Unicast IPv4 a router can use: not 0/8, 127/8, multicast or broadcast
 * (lb_cfg_get_ipv4() already refuses 0.0.0.0 and 224/3, in its own words;
 * it lets loopback pass, which tests use for backends).
 */
static int
unicast(uint32_t be)
{
	uint32_t a = ntohl(be);

	return (a >> 24) != 0 && (a >> 24) != 127 && (a >> 28) != 0xe && a != 0xffffffffu;
}

static int
get_unicast(const config_setting_t *g, const char *name, bool required, uint32_t *out,
	struct lb_cfg_err *err)
{
	int rc = lb_cfg_get_ipv4(g, name, required, out, err);

	if (rc != 0)
		return rc;
	if (config_setting_get_member(g, name) != NULL && !unicast(*out)) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, out, a, sizeof(a));
		return lb_cfg_error(err, config_setting_get_member(g, name), NULL,
			"%s is not a unicast address", a);
	}
	return 0;
}

/*
 * An AS number: an integer, an integer with libconfig's L suffix, or a
 * string ("4200000000", or asdot "64086.59904"). Debian 12's libconfig
 * (1.5) reads a plain integer above 2147483647 as its 32-bit wrap
 * (4200000000 becomes -94967296): say so rather than take it.
 */
static int
get_as(const config_setting_t *g, const char *name, uint32_t *out, struct lb_cfg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	unsigned long long v;
	unsigned hi, lo;
	const char *str;
	char *end, tail;

	if (s == NULL)
		return lb_cfg_error(err, g, name, "missing required field");
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
		if (config_setting_get_int(s) <= 0)
			return lb_cfg_error(err, s, NULL,
				"%d is not an AS number (1..4294967295; libconfig wraps integers "
				"above 2147483647: write 4200000000L or \"4200000000\")",
				config_setting_get_int(s));
		v = (unsigned long long)config_setting_get_int(s);
		break;
	case CONFIG_TYPE_INT64:
		if (config_setting_get_int64(s) < 0)
			return lb_cfg_error(err, s, NULL, "%lld is out of range 1..4294967295",
				config_setting_get_int64(s));
		v = (unsigned long long)config_setting_get_int64(s);
		break;
	case CONFIG_TYPE_STRING:
		str = config_setting_get_string(s);
		if (sscanf(str, "%u.%u%c", &hi, &lo, &tail) == 2 && strchr(str, '-') == NULL) {
			if (hi > 65535 || lo > 65535)
				return lb_cfg_error(
					err, s, NULL, "\"%s\": asdot halves are 0..65535", str);
			v = (unsigned long long)hi << 16 | lo;
			break;
		}
		v = strtoull(str, &end, 10);
		if (str[0] < '0' || str[0] > '9' || *end != '\0')
			return lb_cfg_error(err, s, NULL,
				"\"%s\" is not an AS number (decimal, or asdot X.Y)", str);
		break;
	default:
		return lb_cfg_error(err, s, NULL, "expected an AS number");
	}
	if (v < 1 || v > 4294967295ULL)
		return lb_cfg_error(err, s, NULL, "%llu is out of range 1..4294967295", v);
	if (v == MUX_BGP_AS_TRANS)
		return lb_cfg_error(
			err, s, NULL, "23456 is AS_TRANS (RFC 6793), a placeholder, not an AS");
	*out = (uint32_t)v;
	return 0;
}

static int
load_neighbors(const config_setting_t *g, struct mux_bgp_cfg *cfg, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"address", "as", NULL};
	const config_setting_t *l;
	int i, j, n, rc;

	if ((rc = lb_cfg_get_list(g, "neighbors", false, "missing required field",
		     "expected a list ( { address = ...; as = ...; } )", &l, &n, err)) != 0)
		return rc;
	if (n < 1 || n > MUX_BGP_MAX_NEIGHBORS)
		return lb_cfg_error(
			err, l, NULL, "between 1 and %d neighbors", MUX_BGP_MAX_NEIGHBORS);
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
		struct mux_bgp_neighbor *nb = &cfg->neighbors[i];

		if ((rc = lb_cfg_group(
			     e, fields, "a neighbor is a group { address = ...; }", err)) != 0 ||
			(rc = get_unicast(e, "address", true, &nb->addr, err)) != 0 ||
			(rc = get_as(e, "as", &nb->as, err)) != 0)
			return rc;
		if (nb->addr == cfg->local_address)
			return lb_cfg_error(err, config_setting_get_member(e, "address"), NULL,
				"the neighbor is local_address itself");
		for (j = 0; j < i; j++)
			if (cfg->neighbors[j].addr == nb->addr)
				return lb_cfg_error(err, config_setting_get_member(e, "address"),
					NULL, "the same address as neighbors[%d]", j);
		cfg->n_neighbors++;
	}
	return 0;
}

int
mux_bgp_cfg_load(const config_setting_t *root, uint32_t tunnel_addr, struct mux_bgp_cfg *cfg,
	struct lb_cfg_err *err)
{
	static const char *const fields[] = {"bird", "router_id", "local_as", "local_address",
		"neighbors", "next_hop", "hold_time", "keepalive", "drain_time", "run_dir", NULL};
	const struct lb_cfg_u32 nums[] = {
		{"hold_time", 3, 65535, 3, false, &cfg->hold_time},
		{"keepalive", 1, 21845, 1, false, &cfg->keepalive},
		{"drain_time", 0, 3600, 5, false, &cfg->drain_time},
	};
	const config_setting_t *g = config_setting_get_member(root, "bgp");
	const char *bird, *run_dir;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (g == NULL)
		return 0;
	if ((rc = lb_cfg_group(g, fields, "expected a group { local_as = ...; ... }", err)) != 0 ||
		(rc = lb_cfg_get_string(g, "bird", false, "bird", &bird, err)) != 0 ||
		(rc = resolve_bird(g, bird, cfg->bird, sizeof(cfg->bird), err)) != 0 ||
		(rc = get_as(g, "local_as", &cfg->local_as, err)) != 0 ||
		(rc = get_unicast(g, "local_address", true, &cfg->local_address, err)) != 0 ||
		(rc = lb_cfg_get_ipv4(g, "router_id", false, &cfg->router_id, err)) != 0 ||
		(rc = get_unicast(g, "next_hop", false, &cfg->next_hop, err)) != 0 ||
		(rc = lb_cfg_get_u32s(g, nums, sizeof(nums) / sizeof(nums[0]), err)) != 0 ||
		(rc = lb_cfg_get_string(g, "run_dir", false, "", &run_dir, err)) != 0)
		goto fail;
	if (cfg->keepalive * 3 > cfg->hold_time) {
		rc = lb_cfg_error(err, config_setting_get_member(g, "keepalive"), NULL,
			"%u is more than a third of hold_time %u (RFC 4271: keepalive "
			"= hold_time / 3)",
			cfg->keepalive, cfg->hold_time);
		goto fail;
	}
	if (config_setting_get_member(g, "router_id") != NULL && cfg->router_id == 0) {
		rc = lb_cfg_error(err, config_setting_get_member(g, "router_id"), NULL,
			"0.0.0.0 is not a router id");
		goto fail;
	}
	if (run_dir[0] != '\0' && (run_dir[0] != '/' || strlen(run_dir) >= sizeof(cfg->run_dir))) {
		rc = lb_cfg_error(err, config_setting_get_member(g, "run_dir"), NULL,
			"an absolute path of at most %zu characters (the control socket's "
			"path must fit 108 bytes)",
			sizeof(cfg->run_dir) - 1);
		goto fail;
	}
	/* It is written into BIRD's configuration between double quotes. */
	if (strpbrk(run_dir, "\"\\") != NULL || has_control(run_dir)) {
		rc = lb_cfg_error(err, config_setting_get_member(g, "run_dir"), NULL,
			"a path without double quotes, backslashes or control characters (it "
			"goes into BIRD's configuration)");
		goto fail;
	}
	if ((rc = load_neighbors(g, cfg, err)) != 0)
		goto fail;
	if (cfg->router_id == 0)
		cfg->router_id = cfg->local_address;
	if (cfg->next_hop == 0)
		cfg->next_hop = tunnel_addr;
	/* BIRD would take 0.0.0.0 for the session's own address: the VIP sent to nothing. */
	if (cfg->next_hop == 0) {
		rc = lb_cfg_error(err, g, "next_hop",
			"required when the mux has no tunnel_address (the routes' next hop is "
			"where the VIPs' traffic must come: an IPv4 address of the mux)");
		goto fail;
	}
	strcpy(cfg->run_dir, run_dir);
	cfg->local_address_setting = config_setting_get_member(g, "local_address");
	return 1;
fail:
	memset(cfg, 0, sizeof(*cfg));
	return rc;
}
