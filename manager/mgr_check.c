/* SPDX-License-Identifier: BSD-3-Clause */
/* --check (mgr_check.h has what and why). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lb_err.h"
#include "lb_maglev.h"
#include "lb_proof.h"
#include "mgr_check.h"
#include "mgr_config.h"
#include "mgr_services.h"

/* err at setting `path` of the file (its parent group when it is absent: a default). */
static int
at(struct lb_cfg_err *err, config_t *c, const char *path, const char *field, const char *what)
{
	const config_setting_t *s = config_lookup(c, path);

	if (s != NULL)
		return lb_cfg_error(err, s, NULL, "%s", what);
	return lb_cfg_error(err, config_lookup(c, "manager"), field, "%s", what);
}

static int
check_tls(const struct mgr_config *cfg, config_t *c, struct lb_cfg_err *err)
{
	struct lb_proof_signer *signer;
	struct lb_proof_ca *ca;
	char why[300];

	if (!cfg->mc_has_tls)
		return 0;
	ca = lb_proof_ca_load(cfg->mc_ca, why, sizeof(why));
	if (ca == NULL)
		return at(err, c, "manager.tls.ca", "tls.ca", why);
	lb_proof_ca_free(ca);
	signer = lb_proof_signer_load(cfg->mc_cert, cfg->mc_key, why, sizeof(why));
	if (signer == NULL)
		return at(err, c,
			strstr(why, "key") != NULL ? "manager.tls.key" : "manager.tls.cert",
			"tls.cert", why);
	lb_proof_signer_free(signer);
	return 0;
}

/* An existing database readable and writable, or the first existing folder on its way. */
static int
check_database(const struct mgr_config *cfg, config_t *c, struct lb_cfg_err *err)
{
	char dir[PATH_MAX], why[640];
	struct stat st;

	if (stat(cfg->mc_database, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			snprintf(why, sizeof(why), "%.400s is not a file", cfg->mc_database);
		else if (access(cfg->mc_database, R_OK | W_OK) != 0)
			snprintf(why, sizeof(why), "%.400s: %s", cfg->mc_database, strerror(errno));
		else
			return 0;
		return at(err, c, "manager.database", "database", why);
	}
	snprintf(dir, sizeof(dir), "%s", cfg->mc_database);
	do {
		char up[PATH_MAX];

		/* dirname() works in place: copy out of its buffer */
		snprintf(up, sizeof(up), "%s", dirname(dir));
		snprintf(dir, sizeof(dir), "%s", up);
	} while (stat(dir, &st) != 0 && strcmp(dir, "/") != 0 && strcmp(dir, ".") != 0);
	if (!S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
		snprintf(why, sizeof(why), "cannot create %.250s: %.250s is %s", cfg->mc_database,
			dir, S_ISDIR(st.st_mode) ? "not writable" : "not a folder");
		return at(err, c, "manager.database", "database", why);
	}
	return 0;
}

/* The services file as the start would load it (mgr_driver_load.c). */
static int
check_services(const struct mgr_config *cfg, struct lb_cfg_err *err)
{
	struct lb_ftable empty = {0}, ft;
	struct mgr_meta meta = {.mm_next_backend_id = 1, .mm_next_service_id = 1};
	struct mgr_pools pools;
	config_t c;
	int rc;

	if (cfg->mc_services_file[0] == '\0')
		return 0;
	if ((rc = lb_cfg_read_file(&c, cfg->mc_services_file, err)) != 0)
		return rc;
	empty.seed = cfg->mc_seed;
	empty.maglev_size = cfg->mc_has_maglev_size ? cfg->mc_maglev_size : LB_MAGLEV_DEFAULT_SIZE;
	rc = mgr_services_load(
		&empty, &c, cfg->mc_services_file, &meta, &ft, &pools, err->msg, sizeof(err->msg));
	config_destroy(&c);
	if (rc != 0)
		return -LB_ECONFIG;
	if (cfg->mc_has_seed && (ft.seed.k0 != cfg->mc_seed.k0 || ft.seed.k1 != cfg->mc_seed.k1)) {
		snprintf(err->msg, sizeof(err->msg),
			"%.200s: flow_table.hash_seed: differs from manager.hash_seed in %.200s: "
			"set one",
			cfg->mc_services_file, cfg->mc_path);
		rc = -LB_ECONFIG;
	}
	lb_ftable_free(&ft);
	mgr_pools_free(&pools);
	return rc;
}

int
mgr_check(const struct mgr_config *cfg, struct lb_cfg_err *err)
{
	config_t c;
	int rc;

	if ((rc = lb_cfg_read_file(&c, cfg->mc_path, err)) != 0)
		return rc;
	rc = check_tls(cfg, &c, err);
	if (rc == 0)
		rc = check_database(cfg, &c, err);
	config_destroy(&c);
	if (rc == 0)
		rc = check_services(cfg, err);
	return rc;
}
