/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's configuration file: one "manager" group (libconfig), and
 * an optional "metrics" group, the data planes' (lb_metrics.h).
 *
 * Every error reads "file:line: field: message" (lb_cfg_* helpers) and
 * unknown fields are refused. Members reach the manager only over mutual
 * TLS (tls+tcp://) or a local socket (ipc://): plain tcp:// is refused, so
 * nobody can forge a member or an operator on the network. Relative file
 * names (TLS files, database, services file) are taken from the folder of
 * the configuration file, so a lab can keep everything side by side.
 */
#ifndef MGR_CONFIG_H
#define MGR_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "lb_config.h"
#include "lb_metrics.h"

#define MGR_URL_MAX 256

#define MGR_DEFAULT_CTL "ipc:///run/sluice/manager.sock"
#define MGR_DEFAULT_DATABASE "/var/lib/sluice/manager.db"
#define MGR_DEFAULT_VOTE_TIMEOUT_MS 2000
#define MGR_DEFAULT_BATCH_MS 50
#define MGR_DEFAULT_HEALTH_BATCH_MS 1000
#define MGR_DEFAULT_VIP_PROBE_INTERVAL_MS 2000
#define MGR_DEFAULT_VIP_PROBE_FAILURES 3

struct mgr_config {
	char mc_path[PATH_MAX];	      /* the file itself */
	char mc_listen[MGR_URL_MAX];  /* members: tls+tcp:// or ipc:// */
	char mc_ctl[MGR_URL_MAX];     /* sluicectl: ipc:// */
	char mc_ctl_tls[MGR_URL_MAX]; /* remote sluicectl: tls+tcp://, or "" */
	bool mc_has_tls;
	char mc_ca[PATH_MAX];
	char mc_cert[PATH_MAX];
	char mc_key[PATH_MAX];
	char mc_database[PATH_MAX];
	uint32_t mc_vote_timeout_ms;
	uint32_t mc_batch_ms;
	uint32_t mc_health_batch_ms;	   /* health and timer changes wait this long for others */
	uint32_t mc_vip_probe_interval_ms; /* VIP probes through every mux; 0: off */
	uint32_t mc_vip_probe_failures;	   /* unanswered intervals in a row that fence */
	bool mc_has_seed;
	struct lb_hash_seed mc_seed;
	bool mc_has_maglev_size;
	uint32_t mc_maglev_size;
	char mc_services_file[PATH_MAX];  /* "" when absent */
	struct lb_metrics_cfg mc_metrics; /* the top-level "metrics" group (lb_metrics.h) */
};

/*
 * Load and check `path`. Returns 0, or -LB_ECONFIG with the message in err
 * ("file:line: manager.field: message").
 */
int mgr_config_load(const char *path, struct mgr_config *cfg, struct lb_cfg_err *err);

/*
 * Resolve `name` against the folder of the configuration file `cfg_path`
 * (absolute names are kept). Returns 0 or -LB_ERANGE when it does not fit.
 */
int mgr_config_path(const char *cfg_path, const char *name, char *out, size_t len);

#endif /* MGR_CONFIG_H */
