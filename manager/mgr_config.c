/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "lb_err.h"
#include "lb_maglev.h"
#include "mgr_config.h"

static bool
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * A URL member with the schemes it may use. Plain tcp:// gets its own
 * message: it is the likely mistake, and the answer is mutual TLS.
 */
static int
get_url(const config_setting_t *g, const char *name, bool required, const char *def, bool allow_ipc,
	bool allow_tls, char *out, struct lb_cfg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	const char *url = NULL;
	int rc;

	rc = lb_cfg_get_string(g, name, required, def, &url, err);
	if (rc != 0)
		return rc;
	if (url == NULL) {
		out[0] = '\0';
		return 0;
	}
	if (strlen(url) >= MGR_URL_MAX)
		return lb_cfg_error(err, s, NULL, "longer than %d characters", MGR_URL_MAX - 1);
	if (has_prefix(url, "tcp://") && allow_tls)
		return lb_cfg_error(err, s, NULL,
			"\"%s\": plain tcp:// is refused (mutual TLS is mandatory on TCP); use "
			"tls+tcp://%s",
			url, url + 6);
	if (allow_ipc && has_prefix(url, "ipc://") && url[6] != '\0') {
		snprintf(out, MGR_URL_MAX, "%s", url);
		return 0;
	}
	if (allow_tls && has_prefix(url, "tls+tcp://") && strchr(url + 10, ':') != NULL) {
		snprintf(out, MGR_URL_MAX, "%s", url);
		return 0;
	}
	return lb_cfg_error(err, s, NULL, "\"%s\": expected %s", url,
		allow_ipc && allow_tls ? "tls+tcp://HOST:PORT or ipc:///PATH"
		: allow_ipc	       ? "ipc:///PATH"
				       : "tls+tcp://HOST:PORT");
}

/* TLS files, database and services file: beside the configuration file. */
static const struct lb_cfg_file_rules files = {
	.empty = "empty file name", .too_long = "file name too long", .unreadable = "cannot read "};

static int
load_tls(const config_setting_t *m, struct mgr_config *cfg, bool needed, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"ca", "cert", "key", NULL};
	const config_setting_t *t = config_setting_get_member(m, "tls");
	int rc;

	if (t == NULL) {
		if (needed)
			return lb_cfg_error(err, m, "tls",
				"missing: a tls+tcp:// URL needs { ca = ...; cert = ...; key = "
				"...; }");
		return 0;
	}
	if (!config_setting_is_group(t))
		return lb_cfg_error(
			err, t, NULL, "expected a group { ca = ...; cert = ...; key = ...; }");
	if ((rc = lb_cfg_check_fields(t, fields, err)) != 0 ||
		(rc = lb_cfg_get_file(t, "ca", true, true, cfg->mc_path, &files, cfg->mc_ca,
			 sizeof(cfg->mc_ca), err)) != 0 ||
		(rc = lb_cfg_get_file(t, "cert", true, true, cfg->mc_path, &files, cfg->mc_cert,
			 sizeof(cfg->mc_cert), err)) != 0 ||
		(rc = lb_cfg_get_file(t, "key", true, true, cfg->mc_path, &files, cfg->mc_key,
			 sizeof(cfg->mc_key), err)) != 0)
		return rc;
	cfg->mc_has_tls = true;
	return 0;
}

static int
load_manager(const config_setting_t *m, struct mgr_config *cfg, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"listen", "ctl", "ctl_tls", "tls", "database",
		"vote_timeout_ms", "batch_ms", "health_batch_ms", "hash_seed", "maglev_size",
		"services_file", "vip_probe_interval_ms", "vip_probe_failures", "id", "store",
		"etcd", "advertise", NULL};
	const struct lb_cfg_u32 nums[] = {
		{"vote_timeout_ms", 100, 60000, MGR_DEFAULT_VOTE_TIMEOUT_MS, false,
			&cfg->mc_vote_timeout_ms},
		{"batch_ms", 0, 10000, MGR_DEFAULT_BATCH_MS, false, &cfg->mc_batch_ms},
		{"health_batch_ms", 0, 60000, MGR_DEFAULT_HEALTH_BATCH_MS, false,
			&cfg->mc_health_batch_ms},
		{"vip_probe_interval_ms", 100, 60000, MGR_DEFAULT_VIP_PROBE_INTERVAL_MS, true,
			&cfg->mc_vip_probe_interval_ms},
		{"vip_probe_failures", 1, 100, MGR_DEFAULT_VIP_PROBE_FAILURES, false,
			&cfg->mc_vip_probe_failures},
	};
	const config_setting_t *s;
	const char *str = NULL;
	long long v;
	int rc;

	if (!config_setting_is_group(m))
		return lb_cfg_error(err, m, NULL, "expected a group { listen = ...; ... }");
	if ((rc = lb_cfg_check_fields(m, fields, err)) != 0 ||
		(rc = get_url(m, "listen", true, NULL, true, true, cfg->mc_listen, err)) != 0 ||
		(rc = get_url(m, "ctl", false, MGR_DEFAULT_CTL, true, false, cfg->mc_ctl, err)) !=
			0 ||
		(rc = get_url(m, "ctl_tls", false, NULL, false, true, cfg->mc_ctl_tls, err)) != 0)
		return rc;
	rc = load_tls(m, cfg,
		has_prefix(cfg->mc_listen, "tls+tcp://") || cfg->mc_ctl_tls[0] != '\0', err);
	if (rc != 0)
		return rc;

	if (config_setting_get_member(m, "database") == NULL)
		snprintf(cfg->mc_database, sizeof(cfg->mc_database), "%s", MGR_DEFAULT_DATABASE);
	else if ((rc = lb_cfg_get_file(m, "database", false, false, cfg->mc_path, &files,
			  cfg->mc_database, sizeof(cfg->mc_database), err)) != 0)
		return rc;

	if ((rc = lb_cfg_get_u32s(m, nums, sizeof(nums) / sizeof(nums[0]), err)) != 0)
		return rc;

	if ((rc = lb_cfg_get_string(m, "hash_seed", false, NULL, &str, err)) != 0)
		return rc;
	if (str != NULL) {
		if (lb_hash_seed_parse(&cfg->mc_seed, str) != 0)
			return lb_cfg_error(err, config_setting_get_member(m, "hash_seed"), NULL,
				"expected 32 hexadecimal digits (a 128-bit secret)");
		cfg->mc_has_seed = true;
	}
	s = config_setting_get_member(m, "maglev_size");
	if (s != NULL) {
		if ((rc = lb_cfg_get_int(m, "maglev_size", true, LB_MAGLEV_MIN_SIZE,
			     LB_MAGLEV_MAX_SIZE, 0, &v, err)) != 0)
			return rc;
		if (!lb_is_prime((uint32_t)v))
			return lb_cfg_error(
				err, s, NULL, "%lld is not prime (65537 is the default)", v);
		cfg->mc_has_maglev_size = true;
		cfg->mc_maglev_size = (uint32_t)v;
	}
	if ((rc = lb_cfg_get_file(m, "services_file", false, true, cfg->mc_path, &files,
		     cfg->mc_services_file, sizeof(cfg->mc_services_file), err)) != 0)
		return rc;
	return mgr_config_ha_load(m, cfg, err);
}

int
mgr_config_load(const char *path, struct mgr_config *cfg, struct lb_cfg_err *err)
{
	static const char *const top[] = {"manager", "metrics", NULL};
	const config_setting_t *root, *m;
	config_t c;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (strlen(path) >= sizeof(cfg->mc_path)) {
		snprintf(err->msg, sizeof(err->msg), "%.64s...: path too long", path);
		return -LB_ECONFIG;
	}
	snprintf(cfg->mc_path, sizeof(cfg->mc_path), "%s", path);
	rc = lb_cfg_read_file(&c, path, err);
	if (rc != 0)
		return rc;
	root = config_root_setting(&c);
	m = config_setting_get_member(root, "manager");
	if ((rc = lb_cfg_check_fields(root, top, err)) == 0) {
		if (m == NULL) {
			snprintf(err->msg, sizeof(err->msg),
				"%s: manager: missing required group manager = { ... }", path);
			rc = -LB_ECONFIG;
		} else
			rc = load_manager(m, cfg, err);
	}
	if (rc == 0)
		rc = lb_metrics_cfg_load(root, LB_METRICS_PORT_MANAGER, &cfg->mc_metrics, err);
	config_destroy(&c);
	return rc;
}
