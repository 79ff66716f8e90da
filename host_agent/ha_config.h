/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host agent's configuration: its physical address, the muxes it
 * accepts tunnels from, the uplink, one port per local VM, and the flow
 * table (the same group a mux reads), of which it keeps the backends whose
 * host is its own PA.
 *
 * With a top-level "manager" group the agent is managed: the flow table
 * comes from the manager only, so the file's flow_table is optional and,
 * when present, checked and then dropped. This loader only finds the
 * group; main.c parses it with lb_member_cfg_load(), so this library does
 * not link the member library.
 */
#ifndef HA_CONFIG_H
#define HA_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

#include "lb_config.h"

#define HA_MAX_VMS 16
#define HA_MAX_MUXES 64
#define HA_MAX_PROBERS 8
#define HA_MAX_EAL_ARGS 64

/* A VM: an IPv4 DIP, an IPv6 DIP, or both (a dual-stack backend). */
struct ha_vm_cfg {
	char name[32];
	char devargs[512];
	lb_be32_t dip; /* 0: none */
	bool has_dip6;
	struct lb_addr dip6;
	uint8_t mac[6];
};

struct ha_config {
	config_t file;
	int n_eal_args;
	const char *eal_args[HA_MAX_EAL_ARGS];

	/* The PAs, at least one: tunnels come to the one of their family. */
	lb_be32_t pa; /* 0: none */
	bool has_pa6;
	struct lb_addr pa6;
	/* Muxes whose tunnels are taken, each family apart. */
	uint16_t n_muxes;
	lb_be32_t muxes[HA_MAX_MUXES];
	uint16_t n_muxes6;
	struct lb_addr muxes6[HA_MAX_MUXES];
	/* Health probers (the manager's addresses): plain IP from one of them
	 * to a local DIP is delivered, and the VM's answers go back untouched. */
	uint16_t n_probers;
	lb_be32_t probers[HA_MAX_PROBERS];
	uint16_t n_probers6;
	struct lb_addr probers6[HA_MAX_PROBERS];
	/* The VMs' IPv6 gateway, answered for neighbor discovery (may be fe80::/10). */
	bool has_gateway6;
	struct lb_addr gateway6;
	uint8_t next_hop_mac[6];
	uint16_t mss_clamp;  /* IPv4 SYNs; 0 = off */
	uint16_t mss_clamp6; /* IPv6 SYNs; 0 = off */
	bool busy_poll;
	uint32_t idle_sleep_us;

	char uplink_devargs[512];
	uint16_t n_vms;
	struct ha_vm_cfg vms[HA_MAX_VMS];

	struct lb_ftable ftable; /* empty when managed */

	/* The "manager" group (lives as long as file), or NULL: standalone. */
	const config_setting_t *manager;
	bool managed;
	bool ftable_ignored; /* managed, and the file had a flow_table anyway */
};

/* Load path; on error err says file, line and field, and *cfg is freed. */
int ha_config_load(struct ha_config *cfg, const char *path, struct lb_cfg_err *err);

void ha_config_free(struct ha_config *cfg);

#endif /* HA_CONFIG_H */
