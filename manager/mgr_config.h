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
#define MGR_ID_MAX 64
#define MGR_ETCD_ENDPOINTS 8
#define MGR_ETCD_PREFIX_MAX 128
#define MGR_DEFAULT_LEASE_TTL_S 5
#define MGR_DEFAULT_ETCD_TIMEOUT_MS 1000
#define MGR_DEFAULT_KEEP_VERSIONS 1000

/* Where the desired state, the versions and the rounds live. */
enum mgr_store_kind {
	MGR_STORE_SQLITE = 0, /* one manager, its database file (the default) */
	MGR_STORE_ETCD,	      /* several managers, one leader, the state in etcd */
};

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

	/* High availability (mgr_config_ha.c; docs/manager.md, "High availability"). */
	char mc_id[MGR_ID_MAX]; /* this manager's name among its peers */
	enum mgr_store_kind mc_store;
	uint32_t mc_n_endpoints; /* etcd: its client URLs */
	char mc_endpoints[MGR_ETCD_ENDPOINTS][MGR_URL_MAX];
	char mc_etcd_prefix[MGR_ETCD_PREFIX_MAX]; /* "/sluice/<cluster>", no final '/' */
	uint32_t mc_lease_ttl_s;		  /* the leader's lease */
	uint32_t mc_etcd_timeout_ms;		  /* one etcd request, at most */
	uint32_t mc_keep_versions;		  /* committed versions kept in etcd */
	char mc_etcd_ca[PATH_MAX];		  /* https:// endpoints: optional */
	char mc_etcd_cert[PATH_MAX];
	char mc_etcd_key[PATH_MAX];
	/* What peers are told to dial: members (the leader's) and sluicectl. */
	char mc_adv_members[MGR_URL_MAX];
	char mc_adv_ctl[MGR_URL_MAX];
};

/*
 * The HA fields of the manager group (id, store, etcd, advertise), after
 * the others are loaded (mgr_config_ha.c). 0 or -LB_ECONFIG with err.
 */
int mgr_config_ha_load(const config_setting_t *m, struct mgr_config *cfg, struct lb_cfg_err *err);

/*
 * Load and check `path`. Returns 0, or -LB_ECONFIG with the message in err
 * ("file:line: manager.field: message").
 */
int mgr_config_load(const char *path, struct mgr_config *cfg, struct lb_cfg_err *err);

#endif /* MGR_CONFIG_H */
