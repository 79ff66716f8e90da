/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A member's "manager" group (lb_member.h): one manager (`url`) or several
 * (`urls`, the leader followed), the TLS files, the heartbeat, and the last
 * known good table (`state_file`, `lkg_wait_ms`, `lkg_max_age_s`).
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lb_err.h"
#include "lb_member.h"

/* The folder of the configuration file at path: the base of its relative paths. */
static const char *
cfg_dir(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s", path);
	return dirname(buf);
}

/* The TLS files, beside the configuration file ("./ca.pem" beside "mux.cfg"). */
static const struct lb_cfg_file_rules files = {
	.dot_dir = true, .too_long = "path too long", .unreadable = ""};

int
lb_cfg_tls_files(const config_setting_t *g, bool required, const char *path,
	char ca[LB_CFG_FILE_LEN], char cert[LB_CFG_FILE_LEN], char key[LB_CFG_FILE_LEN],
	struct lb_cfg_err *err)
{
	int rc;

	if ((rc = lb_cfg_get_file(
		     g, "ca", required, true, path, &files, ca, LB_CFG_FILE_LEN, err)) != 0 ||
		(rc = lb_cfg_get_file(
			 g, "cert", required, true, path, &files, cert, LB_CFG_FILE_LEN, err)) != 0)
		return rc;
	return lb_cfg_get_file(g, "key", required, true, path, &files, key, LB_CFG_FILE_LEN, err);
}

/* One manager URL: tls+tcp:// or ipc://, all of one kind. */
static int
check_url(const config_setting_t *s, const char *url, bool *tls, bool first, char *out, size_t len,
	struct lb_cfg_err *err)
{
	bool t = strncmp(url, "tls+tcp://", 10) == 0;

	if (!t && strncmp(url, "ipc://", 6) != 0)
		return lb_cfg_error(err, s, NULL,
			"\"%s\": the manager is reached by tls+tcp:// (mutual TLS) or ipc://", url);
	if (!first && t != *tls)
		return lb_cfg_error(err, s, NULL,
			"\"%s\": every manager is reached the same way (all tls+tcp:// or all "
			"ipc://)",
			url);
	if (strlen(url) >= len)
		return lb_cfg_error(err, s, NULL, "too long");
	*tls = t;
	snprintf(out, len, "%s", url);
	return 0;
}

/* url = "..." or urls = [ "...", ... ]: exactly one of them. */
static int
load_urls(const config_setting_t *g, struct lb_member_cfg *cfg, bool *tls, struct lb_cfg_err *err)
{
	const config_setting_t *one = config_setting_get_member(g, "url");
	const config_setting_t *many = config_setting_get_member(g, "urls");
	const char *url = NULL;
	int i, n, rc;

	if (one != NULL && many != NULL)
		return lb_cfg_error(err, many, NULL, "give url or urls, not both");
	if (many == NULL) {
		if ((rc = lb_cfg_get_string(g, "url", true, NULL, &url, err)) != 0)
			return rc;
		cfg->n_urls = 1;
		return check_url(one, url, tls, true, cfg->urls[0], sizeof(cfg->urls[0]), err);
	}
	if ((rc = lb_cfg_get_list(g, "urls", true, NULL, "expected a list of URLs [ \"...\", ... ]",
		     &many, &n, err)) != 0)
		return rc;
	if (n < 1 || n > LB_MEMBER_URLS)
		return lb_cfg_error(err, many, NULL, "1 to %d managers, not %d", LB_MEMBER_URLS, n);
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(many, (unsigned)i);

		url = config_setting_get_string(e);
		if (url == NULL)
			return lb_cfg_error(err, e, NULL, "expected a URL string");
		rc = check_url(e, url, tls, i == 0, cfg->urls[i], sizeof(cfg->urls[i]), err);
		if (rc != 0)
			return rc;
	}
	cfg->n_urls = (uint32_t)n;
	return 0;
}

/* state_file: a path (relative to the configuration's folder); "" turns it off. */
static int
load_state_file(const config_setting_t *g, const char *path, struct lb_member_cfg *cfg,
	struct lb_cfg_err *err)
{
	char buf[PATH_MAX];
	const char *v = NULL;
	int rc = lb_cfg_get_string(g, "state_file", false, NULL, &v, err);
	size_t n;

	if (rc != 0)
		return rc;
	if (v == NULL && strchr(cfg->id, '/') != NULL)
		return lb_cfg_error(err, config_setting_get_member(g, "id"), NULL,
			"\"%s\" names no file: set state_file", cfg->id);
	if (v == NULL)
		n = (size_t)snprintf(cfg->state_file, sizeof(cfg->state_file), "%s/%s.lkg",
			LB_MEMBER_STATE_DIR, cfg->id);
	else if (v[0] == '\0' || v[0] == '/')
		n = (size_t)snprintf(cfg->state_file, sizeof(cfg->state_file), "%s", v);
	else
		n = (size_t)snprintf(cfg->state_file, sizeof(cfg->state_file), "%s/%s",
			cfg_dir(path, buf, sizeof(buf)), v);
	if (n >= sizeof(cfg->state_file))
		return lb_cfg_error(
			err, config_setting_get_member(g, "state_file"), NULL, "path too long");
	return 0;
}

int
lb_member_cfg_load(const config_setting_t *root, const char *path, struct lb_member_cfg *cfg,
	struct lb_cfg_err *err)
{
	static const char *const fields[] = {"url", "urls", "id", "ca", "cert", "key",
		"server_name", "heartbeat_ms", "state_file", "lkg_wait_ms", "lkg_max_age_s", NULL};
	const struct lb_cfg_u32 nums[] = {
		{"heartbeat_ms", 100, 60000, 1000, false, &cfg->heartbeat_ms},
		{"lkg_wait_ms", 0, 60000, LB_MEMBER_LKG_WAIT_MS, false, &cfg->lkg_wait_ms},
		{"lkg_max_age_s", 0, 366LL * 86400, 0, false, &cfg->lkg_max_age_s},
	};
	const config_setting_t *g = config_setting_get_member(root, "manager");
	const char *id = NULL, *sn = NULL;
	bool tls = false;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (g == NULL)
		return 0;
	if ((rc = lb_cfg_group(g, fields, "expected a group { url = ...; id = ...; }", err)) != 0 ||
		(rc = load_urls(g, cfg, &tls, err)) != 0 ||
		(rc = lb_cfg_get_string(g, "id", true, NULL, &id, err)) != 0 ||
		(rc = lb_cfg_get_string(g, "server_name", false, "sluice-manager", &sn, err)) !=
			0 ||
		(rc = lb_cfg_get_u32s(g, nums, sizeof(nums) / sizeof(nums[0]), err)) != 0)
		return rc;
	if (id[0] == '\0' || strlen(id) >= sizeof(cfg->id))
		return lb_cfg_error(err, config_setting_get_member(g, "id"), NULL,
			"1 to %zu characters", sizeof(cfg->id) - 1);
	snprintf(cfg->id, sizeof(cfg->id), "%s", id);
	if ((rc = lb_cfg_tls_files(g, tls, path, cfg->ca, cfg->cert, cfg->key, err)) != 0 ||
		(rc = load_state_file(g, path, cfg, err)) != 0)
		return rc;
	snprintf(cfg->url, sizeof(cfg->url), "%s", cfg->urls[0]);
	snprintf(cfg->server_name, sizeof(cfg->server_name), "%s", sn);
	return 1;
}
