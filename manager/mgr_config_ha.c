/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager group's high-availability fields (mgr_config.h):
 *
 *   id = "mgr1";                        this manager among its peers
 *   store = "etcd";                     or "sqlite" (the default: one manager)
 *   etcd = { endpoints = [ "http://10.0.0.1:2379", ... ];
 *            prefix = "/sluice/prod";    every key of this cluster under it
 *            lease_ttl = 5;              s: a dead leader is replaced after this
 *            timeout_ms = 1000;          one request to etcd, at most
 *            keep_versions = 1000;       committed versions kept (history)
 *            ca = "..."; cert = "..."; key = "..."; };   https:// only
 *   advertise = { members = "tls+tcp://10.0.0.1:7400";  what members dial
 *                 ctl = "tls+tcp://10.0.0.1:7401"; };   what sluicectl dials
 *
 * advertise defaults to listen and ctl_tls (else ctl) unless they bind a
 * wildcard address, which no peer can dial: then it is required.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lb_err.h"
#include "mgr_config.h"

/* etcd's TLS files, beside the configuration file. */
static const struct lb_cfg_file_rules files = {.empty = "empty or too long",
	.too_long = "empty or too long",
	.unreadable = "cannot read "};

static int
load_endpoints(const config_setting_t *e, struct mgr_config *cfg, struct lb_cfg_err *err)
{
	const config_setting_t *l;
	int i, n, rc;

	if ((rc = lb_cfg_get_list(e, "endpoints", true,
		     "missing: the etcd members' client URLs, [ \"http://HOST:2379\", ... ]",
		     "expected a list of URLs [ \"http://...\", ... ]", &l, &n, err)) != 0)
		return rc;
	if (n < 1 || n > MGR_ETCD_ENDPOINTS)
		return lb_cfg_error(
			err, l, NULL, "1 to %d endpoints, not %d", MGR_ETCD_ENDPOINTS, n);
	for (i = 0; i < n; i++) {
		const config_setting_t *u = config_setting_get_elem(l, (unsigned)i);
		const char *url = config_setting_get_string(u);

		if (url == NULL)
			return lb_cfg_error(err, u, NULL, "expected a URL string");
		if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
			return lb_cfg_error(err, u, NULL,
				"\"%s\": expected http://HOST:PORT or https://HOST:PORT (etcd's "
				"client URL)",
				url);
		if (strlen(url) >= MGR_URL_MAX)
			return lb_cfg_error(err, u, NULL, "too long");
		snprintf(cfg->mc_endpoints[i], MGR_URL_MAX, "%s", url);
	}
	cfg->mc_n_endpoints = (uint32_t)n;
	return 0;
}

static int
load_prefix(const config_setting_t *e, struct mgr_config *cfg, struct lb_cfg_err *err)
{
	const config_setting_t *s = config_setting_get_member(e, "prefix");
	const char *p = NULL, *c;
	size_t n;
	int rc = lb_cfg_get_string(e, "prefix", true, NULL, &p, err);

	if (rc != 0)
		return rc;
	n = strlen(p);
	if (n < 2 || p[0] != '/' || p[n - 1] == '/' || n >= MGR_ETCD_PREFIX_MAX)
		return lb_cfg_error(err, s, NULL,
			"\"%s\": expected /NAME/..., without a final '/' (\"/sluice/<cluster>\")",
			p);
	for (c = p; *c != '\0'; c++)
		if (*c <= ' ' || *c > '~')
			return lb_cfg_error(err, s, NULL, "\"%s\": printable ASCII only", p);
	snprintf(cfg->mc_etcd_prefix, sizeof(cfg->mc_etcd_prefix), "%s", p);
	return 0;
}

static int
load_etcd(const config_setting_t *m, struct mgr_config *cfg, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"endpoints", "prefix", "lease_ttl", "timeout_ms",
		"keep_versions", "ca", "cert", "key", NULL};
	const struct lb_cfg_u32 nums[] = {
		/* etcd refuses a lease below 2 s with its default election timeout. */
		{"lease_ttl", 2, 300, MGR_DEFAULT_LEASE_TTL_S, false, &cfg->mc_lease_ttl_s},
		{"timeout_ms", 100, 10000, MGR_DEFAULT_ETCD_TIMEOUT_MS, false,
			&cfg->mc_etcd_timeout_ms},
		{"keep_versions", 100, 1000000, MGR_DEFAULT_KEEP_VERSIONS, false,
			&cfg->mc_keep_versions},
	};
	const config_setting_t *e = config_setting_get_member(m, "etcd");
	int rc;

	if (e == NULL)
		return lb_cfg_error(err, m, "etcd",
			"missing: store = \"etcd\" needs etcd = { endpoints = [...]; prefix = "
			"\"/sluice/<cluster>\"; }");
	if (!config_setting_is_group(e))
		return lb_cfg_error(err, e, NULL, "expected a group { endpoints = [...]; ... }");
	if ((rc = lb_cfg_check_fields(e, fields, err)) != 0 ||
		(rc = load_endpoints(e, cfg, err)) != 0 || (rc = load_prefix(e, cfg, err)) != 0)
		return rc;
	if ((rc = lb_cfg_get_u32s(e, nums, sizeof(nums) / sizeof(nums[0]), err)) != 0)
		return rc;
	if ((rc = lb_cfg_get_file(e, "ca", false, true, cfg->mc_path, &files, cfg->mc_etcd_ca,
		     sizeof(cfg->mc_etcd_ca), err)) != 0 ||
		(rc = lb_cfg_get_file(e, "cert", false, true, cfg->mc_path, &files,
			 cfg->mc_etcd_cert, sizeof(cfg->mc_etcd_cert), err)) != 0 ||
		(rc = lb_cfg_get_file(e, "key", false, true, cfg->mc_path, &files, cfg->mc_etcd_key,
			 sizeof(cfg->mc_etcd_key), err)) != 0)
		return rc;
	if ((cfg->mc_etcd_cert[0] == '\0') != (cfg->mc_etcd_key[0] == '\0'))
		return lb_cfg_error(err, e, cfg->mc_etcd_cert[0] ? "key" : "cert",
			"missing: cert and key go together");
	return 0;
}

/* A URL a peer can dial: not a wildcard address. */
static bool
dialable(const char *url)
{
	return strstr(url, "://0.0.0.0:") == NULL && strstr(url, "://[::]:") == NULL &&
	       strstr(url, "://*:") == NULL;
}

static int
get_adv(const config_setting_t *a, const char *name, const char *dflt, const char *from, char *out,
	const config_setting_t *m, struct lb_cfg_err *err)
{
	const char *v = NULL;
	int rc = a != NULL ? lb_cfg_get_string(a, name, false, NULL, &v, err) : 0;

	if (rc != 0)
		return rc;
	if (v == NULL && !dialable(dflt))
		return lb_cfg_error(err, a != NULL ? a : m, a != NULL ? name : "advertise",
			"missing: %s \"%s\" binds a wildcard address; give the URL peers dial "
			"(advertise = { %s = \"...\"; })",
			from, dflt, name);
	if (v != NULL && (strncmp(v, "tls+tcp://", 10) != 0 && strncmp(v, "ipc://", 6) != 0))
		return lb_cfg_error(err, config_setting_get_member(a, name), NULL,
			"\"%s\": expected tls+tcp://HOST:PORT or ipc:///PATH", v);
	if (v != NULL && strlen(v) >= MGR_URL_MAX)
		return lb_cfg_error(err, config_setting_get_member(a, name), NULL, "too long");
	snprintf(out, MGR_URL_MAX, "%s", v != NULL ? v : dflt);
	return 0;
}

int
mgr_config_ha_load(const config_setting_t *m, struct mgr_config *cfg, struct lb_cfg_err *err)
{
	static const char *const adv_fields[] = {"members", "ctl", NULL};
	const config_setting_t *a = config_setting_get_member(m, "advertise");
	const char *store = NULL, *id = NULL;
	char host[MGR_ID_MAX] = "manager";
	int rc;

	if ((rc = lb_cfg_get_string(m, "store", false, "sqlite", &store, err)) != 0)
		return rc;
	if (strcmp(store, "etcd") == 0)
		cfg->mc_store = MGR_STORE_ETCD;
	else if (strcmp(store, "sqlite") == 0)
		cfg->mc_store = MGR_STORE_SQLITE;
	else
		return lb_cfg_error(err, config_setting_get_member(m, "store"), NULL,
			"\"%s\": expected \"sqlite\" (one manager) or \"etcd\" (several)", store);
	gethostname(host, sizeof(host) - 1);
	if ((rc = lb_cfg_get_string(m, "id", false, host, &id, err)) != 0)
		return rc;
	if (id[0] == '\0' || strlen(id) >= sizeof(cfg->mc_id) || strchr(id, '/') != NULL)
		return lb_cfg_error(err, config_setting_get_member(m, "id"), NULL,
			"1 to %zu characters, no '/'", sizeof(cfg->mc_id) - 1);
	snprintf(cfg->mc_id, sizeof(cfg->mc_id), "%s", id);
	if (cfg->mc_store == MGR_STORE_SQLITE) {
		if (config_setting_get_member(m, "etcd") != NULL)
			return lb_cfg_error(err, config_setting_get_member(m, "etcd"), NULL,
				"set store = \"etcd\" to use it");
	} else if ((rc = load_etcd(m, cfg, err)) != 0) {
		return rc;
	}
	if (a != NULL && (!config_setting_is_group(a) ||
				 (rc = lb_cfg_check_fields(a, adv_fields, err)) != 0))
		return rc != 0 ? rc
			       : lb_cfg_error(err, a, NULL,
					 "expected a group { members = ...; ctl = ...; }");
	/* Only a standby redirects: a single manager needs nothing dialable. */
	if (cfg->mc_store != MGR_STORE_ETCD && a == NULL)
		return 0;
	if ((rc = get_adv(a, "members", cfg->mc_listen, "listen", cfg->mc_adv_members, m, err)) !=
		0)
		return rc;
	return get_adv(a, "ctl", cfg->mc_ctl_tls[0] ? cfg->mc_ctl_tls : cfg->mc_ctl,
		cfg->mc_ctl_tls[0] ? "ctl_tls" : "ctl", cfg->mc_adv_ctl, m, err);
}
