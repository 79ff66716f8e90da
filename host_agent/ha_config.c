/* SPDX-License-Identifier: BSD-3-Clause */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "ha_config.h"
#include "lb_err.h"

static_assert(HA_MAX_MUXES <= LB_CFG_ADDRS_MAX && HA_MAX_PROBERS <= LB_CFG_ADDRS_MAX,
	"lb_cfg_get_addr_split() takes the muxes and the probers");

/*
 * The PAs (pa, pa6: at least one) and the muxes, whose tunnels come to the
 * PA of their family: a mux of a family the agent has no PA of could never
 * reach it.
 */
static int
load_pas(struct ha_config *cfg, const config_setting_t *a, struct lb_cfg_err *err)
{
	const config_setting_t *m;
	uint8_t af;
	int rc;

	if ((rc = lb_cfg_get_ipv4(a, "pa", false, &cfg->pa, err)) != 0 ||
		(rc = lb_cfg_get_addr(a, "pa6", false, LB_ADDR_V6, &cfg->pa6, &af, err)) != 0)
		return rc;
	cfg->has_pa6 = af == LB_AF_INET6;
	if (cfg->pa == 0 && !cfg->has_pa6)
		return lb_cfg_error(err, a, "pa",
			"missing required field (or pa6 for an agent reached over IPv6 only)");
	if ((rc = lb_cfg_get_addr_split(a, "muxes", 1, HA_MAX_MUXES, cfg->muxes, &cfg->n_muxes,
		     cfg->muxes6, &cfg->n_muxes6, err)) != 0)
		return rc;
	m = config_setting_get_member(a, "muxes");
	if (cfg->n_muxes != 0 && cfg->pa == 0)
		return lb_cfg_error(err, m, NULL,
			"an IPv4 mux address, but no pa: its tunnels could not reach this agent");
	if (cfg->n_muxes6 != 0 && !cfg->has_pa6)
		return lb_cfg_error(err, m, NULL,
			"an IPv6 mux address, but no pa6: its tunnels could not reach this agent");
	return 0;
}

static int
load_agent(struct ha_config *cfg, const config_setting_t *root, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"pa", "pa6", "muxes", "next_hop_mac", "mss_clamp",
		"mss_clamp6", "gateway6", "busy_poll", "idle_sleep_us", "probers", NULL};
	const config_setting_t *a = config_setting_get_member(root, "agent");
	long long clamp, clamp6;
	uint8_t af;
	int rc;

	if (a == NULL)
		return lb_cfg_error(err, root, "agent", "missing required group");
	if ((rc = lb_cfg_group(a, fields, "expected a group { ... }", err)) != 0 ||
		(rc = load_pas(cfg, a, err)) != 0 ||
		(rc = lb_cfg_get_mac(a, "next_hop_mac", true, cfg->next_hop_mac, err)) != 0 ||
		(rc = lb_cfg_get_int(a, "mss_clamp", false, 0, 9000, 0, &clamp, err)) != 0 ||
		(rc = lb_cfg_get_addr(a, "gateway6", false, LB_ADDR_V6 | LB_ADDR_LINK_LOCAL,
			 &cfg->gateway6, &af, err)) != 0 ||
		(rc = lb_cfg_get_poll(a, &cfg->busy_poll, &cfg->idle_sleep_us, err)) != 0)
		return rc;
	cfg->has_gateway6 = af == LB_AF_INET6;
	if (clamp != 0 && clamp < 536)
		return lb_cfg_error(err, config_setting_get_member(a, "mss_clamp"), NULL,
			"%lld is below the IPv4 minimum MSS of 536 (0 turns clamping off)", clamp);
	/*
	 * By default the IPv6 clamp follows the IPv4 one: the same path MTU,
	 * less the 20 bytes the IPv6 header adds, less 20 more when tunnels
	 * can come to an IPv6 PA (a 40-byte outer header instead of 20).
	 */
	clamp6 = clamp == 0 ? 0 : clamp - 20 - (cfg->has_pa6 ? 20 : 0);
	if (clamp6 != 0 && clamp6 < 1220)
		clamp6 = 1220;
	if ((rc = lb_cfg_get_int(a, "mss_clamp6", false, 0, 9000, clamp6, &clamp6, err)) != 0)
		return rc;
	if (clamp6 != 0 && clamp6 < 1220)
		return lb_cfg_error(err, config_setting_get_member(a, "mss_clamp6"), NULL,
			"%lld is below the IPv6 minimum MSS of 1220 (1280 - 40 - 20; 0 turns "
			"clamping off)",
			clamp6);
	cfg->mss_clamp = (uint16_t)clamp;
	cfg->mss_clamp6 = (uint16_t)clamp6;
	return lb_cfg_get_addr_split(a, "probers", 0, HA_MAX_PROBERS, cfg->probers, &cfg->n_probers,
		cfg->probers6, &cfg->n_probers6, err);
}

static int
load_ports(struct ha_config *cfg, const config_setting_t *root, struct lb_cfg_err *err)
{
	static const char *const ufields[] = {"devargs", NULL};
	static const char *const vfields[] = {"name", "devargs", "dip", "dip6", "mac", NULL};
	const config_setting_t *up = config_setting_get_member(root, "uplink");
	const config_setting_t *vms;
	const char *s, *name;
	int rc, i, j, n;

	if (up == NULL)
		return lb_cfg_error(err, root, "uplink", "missing required group");
	if ((rc = lb_cfg_group(up, ufields, "expected a group { devargs = ...; }", err)) != 0 ||
		(rc = lb_cfg_get_string(up, "devargs", true, NULL, &s, err)) != 0)
		return rc;
	if (strlen(s) >= sizeof(cfg->uplink_devargs) || s[0] == '\0')
		return lb_cfg_error(err, up, "devargs", "empty or too long");
	strcpy(cfg->uplink_devargs, s);

	if ((rc = lb_cfg_get_list(root, "vms", false, "missing required list",
		     "expected a list ( { ... }, ... )", &vms, &n, err)) != 0)
		return rc;
	if (n < 1 || n > HA_MAX_VMS)
		return lb_cfg_error(err, vms, NULL, "between 1 and %d VMs", HA_MAX_VMS);
	for (i = 0; i < n; i++) {
		const config_setting_t *v = config_setting_get_elem(vms, (unsigned)i);
		struct ha_vm_cfg *vc = &cfg->vms[i];
		char def[16];
		uint8_t af;

		snprintf(def, sizeof(def), "vm%d", i);
		if ((rc = lb_cfg_group(v, vfields, "a VM is a group { devargs = ...; }", err)) !=
				0 ||
			(rc = lb_cfg_get_string(v, "name", false, def, &name, err)) != 0 ||
			(rc = lb_cfg_get_string(v, "devargs", true, NULL, &s, err)) != 0 ||
			(rc = lb_cfg_get_ipv4(v, "dip", false, &vc->dip, err)) != 0 ||
			(rc = lb_cfg_get_addr(v, "dip6", false, LB_ADDR_V6, &vc->dip6, &af, err)) !=
				0 ||
			(rc = lb_cfg_get_mac(v, "mac", true, vc->mac, err)) != 0)
			return rc;
		vc->has_dip6 = af == LB_AF_INET6;
		if (vc->dip == 0 && !vc->has_dip6)
			return lb_cfg_error(err, v, "dip", "missing required field (or dip6)");
		if (strlen(s) >= sizeof(vc->devargs) || strlen(name) >= sizeof(vc->name))
			return lb_cfg_error(err, v, NULL, "name or devargs too long");
		strcpy(vc->devargs, s);
		strcpy(vc->name, name);
		for (j = 0; j < i; j++) {
			/* The name labels the VM's series: two alike would be one. */
			if (strcmp(cfg->vms[j].name, vc->name) == 0)
				return lb_cfg_error(err, v, "name", "same name as vms[%d]", j);
			if (vc->dip != 0 && cfg->vms[j].dip == vc->dip)
				return lb_cfg_error(err, v, "dip", "same DIP as vms[%d]", j);
			if (vc->has_dip6 && cfg->vms[j].has_dip6 &&
				lb_addr_eq(&cfg->vms[j].dip6, &vc->dip6))
				return lb_cfg_error(err, v, "dip6", "same DIP as vms[%d]", j);
		}
		cfg->n_vms++;
	}
	return 0;
}

/* The agent's own groups, for lb_cfg_load_daemon(). */
static int
load_groups(void *arg, const config_setting_t *root, struct lb_cfg_err *err)
{
	struct ha_config *cfg = arg;
	int rc = load_agent(cfg, root, err);

	return rc != 0 ? rc : load_ports(cfg, root, err);
}

int
ha_config_load(struct ha_config *cfg, const char *path, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"eal", "agent", "uplink", "vms", "flow_table",
		"manager", "metrics", "credits", NULL};
	const struct lb_cfg_daemon d = LB_CFG_DAEMON(cfg, fields, HA_MAX_EAL_ARGS - 8, load_groups);

	return lb_cfg_load_daemon(&d, cfg, path, err);
}

void
ha_config_free(struct ha_config *cfg)
{
	lb_ftable_free(&cfg->ftable);
	config_destroy(&cfg->file);
}
