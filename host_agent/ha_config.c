/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "ha_config.h"
#include "lb_err.h"

static int
load_agent(struct ha_config *cfg, const config_setting_t *root, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"pa", "muxes", "next_hop_mac", "mss_clamp",
		"busy_poll", "idle_sleep_us", "probers", NULL};
	const config_setting_t *a = config_setting_get_member(root, "agent");
	long long clamp, idle;
	int rc;

	if (a == NULL)
		return lb_cfg_error(err, root, "agent", "missing required group");
	if (!config_setting_is_group(a))
		return lb_cfg_error(err, a, NULL, "expected a group { ... }");
	if ((rc = lb_cfg_check_fields(a, fields, err)) != 0 ||
		(rc = lb_cfg_get_ipv4(a, "pa", true, &cfg->pa, err)) != 0 ||
		(rc = lb_cfg_get_mac(a, "next_hop_mac", true, cfg->next_hop_mac, err)) != 0 ||
		(rc = lb_cfg_get_int(a, "mss_clamp", false, 0, 9000, 0, &clamp, err)) != 0 ||
		(rc = lb_cfg_get_bool(a, "busy_poll", false, &cfg->busy_poll, err)) != 0 ||
		(rc = lb_cfg_get_int(a, "idle_sleep_us", false, 1, 100000, 200, &idle, err)) != 0)
		return rc;
	if (clamp != 0 && clamp < 536)
		return lb_cfg_error(err, config_setting_get_member(a, "mss_clamp"), NULL,
			"%lld is below the IPv4 minimum MSS of 536 (0 turns clamping off)", clamp);
	cfg->mss_clamp = (uint16_t)clamp;
	cfg->idle_sleep_us = (uint32_t)idle;
	if ((rc = lb_cfg_get_ipv4_list(
		     a, "muxes", 1, HA_MAX_MUXES, cfg->muxes, &cfg->n_muxes, err)) != 0)
		return rc;
	return lb_cfg_get_ipv4_list(
		a, "probers", 0, HA_MAX_PROBERS, cfg->probers, &cfg->n_probers, err);
}

static int
load_ports(struct ha_config *cfg, const config_setting_t *root, struct lb_cfg_err *err)
{
	static const char *const ufields[] = {"devargs", NULL};
	static const char *const vfields[] = {"name", "devargs", "dip", "mac", NULL};
	const config_setting_t *up = config_setting_get_member(root, "uplink");
	const config_setting_t *vms = config_setting_get_member(root, "vms");
	const char *s, *name;
	int rc, i, j, n;

	if (up == NULL)
		return lb_cfg_error(err, root, "uplink", "missing required group");
	if (!config_setting_is_group(up))
		return lb_cfg_error(err, up, NULL, "expected a group { devargs = ...; }");
	if ((rc = lb_cfg_check_fields(up, ufields, err)) != 0 ||
		(rc = lb_cfg_get_string(up, "devargs", true, NULL, &s, err)) != 0)
		return rc;
	if (strlen(s) >= sizeof(cfg->uplink_devargs) || s[0] == '\0')
		return lb_cfg_error(err, up, "devargs", "empty or too long");
	strcpy(cfg->uplink_devargs, s);

	if (vms == NULL)
		return lb_cfg_error(err, root, "vms", "missing required list");
	if (!config_setting_is_list(vms))
		return lb_cfg_error(err, vms, NULL, "expected a list ( { ... }, ... )");
	n = config_setting_length(vms);
	if (n < 1 || n > HA_MAX_VMS)
		return lb_cfg_error(err, vms, NULL, "between 1 and %d VMs", HA_MAX_VMS);
	for (i = 0; i < n; i++) {
		const config_setting_t *v = config_setting_get_elem(vms, (unsigned)i);
		struct ha_vm_cfg *vc = &cfg->vms[i];
		char def[16];

		if (!config_setting_is_group(v))
			return lb_cfg_error(err, v, NULL, "a VM is a group { devargs = ...; }");
		snprintf(def, sizeof(def), "vm%d", i);
		if ((rc = lb_cfg_check_fields(v, vfields, err)) != 0 ||
			(rc = lb_cfg_get_string(v, "name", false, def, &name, err)) != 0 ||
			(rc = lb_cfg_get_string(v, "devargs", true, NULL, &s, err)) != 0 ||
			(rc = lb_cfg_get_ipv4(v, "dip", true, &vc->dip, err)) != 0 ||
			(rc = lb_cfg_get_mac(v, "mac", true, vc->mac, err)) != 0)
			return rc;
		if (strlen(s) >= sizeof(vc->devargs) || strlen(name) >= sizeof(vc->name))
			return lb_cfg_error(err, v, NULL, "name or devargs too long");
		strcpy(vc->devargs, s);
		strcpy(vc->name, name);
		for (j = 0; j < i; j++)
			if (cfg->vms[j].dip == vc->dip)
				return lb_cfg_error(err, v, "dip", "same DIP as vms[%d]", j);
		cfg->n_vms++;
	}
	return 0;
}

int
ha_config_load(struct ha_config *cfg, const char *path, struct lb_cfg_err *err)
{
	static const char *const fields[] = {
		"eal", "agent", "uplink", "vms", "flow_table", "manager", NULL};
	const config_setting_t *root;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = lb_cfg_read_file(&cfg->file, path, err);
	if (rc != 0)
		return rc;
	root = config_root_setting(&cfg->file);
	if ((rc = lb_cfg_check_fields(root, fields, err)) != 0 ||
		(rc = lb_cfg_get_eal(
			 root, cfg->eal_args, HA_MAX_EAL_ARGS - 8, &cfg->n_eal_args, err)) != 0 ||
		(rc = load_agent(cfg, root, err)) != 0 || (rc = load_ports(cfg, root, err)) != 0)
		goto fail;
	rc = lb_ftable_load_unless_managed(
		root, &cfg->ftable, &cfg->manager, &cfg->ftable_ignored, err);
	if (rc != 0)
		goto fail;
	cfg->managed = cfg->manager != NULL;
	return 0;
fail:
	config_destroy(&cfg->file);
	memset(cfg, 0, sizeof(*cfg));
	return rc;
}

void
ha_config_free(struct ha_config *cfg)
{
	lb_ftable_free(&cfg->ftable);
	config_destroy(&cfg->file);
}
