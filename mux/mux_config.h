/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mux's configuration: EAL options, ports, tunnel and timing settings,
 * the static flow table, and where the manager is. Loaded once at start from
 * a libconfig file (see docs/configuration.md); command-line options may
 * override a few fields. Nothing here changes after the workers start.
 *
 * With a top-level "manager" group the mux is managed: its flow table comes
 * from the manager only, so the file's flow_table is optional and, when
 * present, checked and then dropped (a stale file can never be served).
 * This loader only finds the group; main.c parses it with
 * lb_member_cfg_load(), so this library does not link the member library.
 * The "metrics" group (lb_metrics.h) is main.c's too (dp_metrics_cfg_load()).
 */
#ifndef MUX_CONFIG_H
#define MUX_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

#include "lb_config.h"

#define MUX_MAX_PORTS 8
#define MUX_MAX_WORKERS 32
#define MUX_MAX_EAL_ARGS 64
#define MUX_MAX_PROBERS 8

struct mux_port_cfg {
	char name[64];
	char devargs[512];
};

struct mux_config {
	config_t file; /* keeps the strings other fields point to */
	const char *path;

	int n_eal_args;
	const char *eal_args[MUX_MAX_EAL_ARGS];

	uint16_t n_ports;
	struct mux_port_cfg ports[MUX_MAX_PORTS];

	/*
	 * Outer source towards IPv4 PAs (answered for ARP and ping), and
	 * towards IPv6 PAs (answered for neighbor discovery and ping). At
	 * least one; a flow table with a PA of a family the mux has no
	 * tunnel address of is refused.
	 */
	lb_be32_t tunnel_addr; /* 0: none */
	bool has_tunnel6;
	struct lb_addr tunnel_addr6;
	char zone[LB_ZONE_LEN]; /* "" none: where cross_zone = false keeps new flows */
	uint8_t next_hop_mac[6];
	uint8_t next_hop_mac6[6]; /* towards IPv6 PAs; next_hop_mac unless given */
	uint16_t mtu;		  /* L3 MTU of the ports, outer header included */
	uint8_t tunnel_ttl;	  /* outer TTL, and the outer hop limit */
	bool arp_for_vips;	  /* answer ARP for VIPs, not only the tunnel address */
	bool nd_for_vips;	  /* answer neighbor solicitations for IPv6 VIPs too */
	/* VIP probers (the manager's addresses), of either family: mux_reply.c. */
	uint16_t n_probers;
	lb_be32_t probers[MUX_MAX_PROBERS];
	uint16_t n_probers6;
	struct lb_addr probers6[MUX_MAX_PROBERS];
	uint16_t workers;
	bool busy_poll;
	uint32_t idle_sleep_us; /* longest nap of an idle worker */
	uint16_t rx_desc;
	uint16_t tx_desc;

	uint32_t cap_services;	/* flow-table room the generations keep: a reload or */
	uint32_t cap_backends;	/* a manager's version may grow up to this */
	uint32_t conn_entries;	/* per worker */
	uint32_t conn_entries6; /* per worker, the IPv6 table */
	/* Percent of a worker's entries one service may hold (flood quota; 100: no bound). */
	uint8_t conn_service_share;
	uint32_t tcp_timeout;
	uint32_t tcp_fin_timeout;
	uint32_t udp_timeout;

	struct lb_ftable ftable; /* empty when managed */

	/* The "manager" group (lives as long as file), or NULL: standalone. */
	const config_setting_t *manager;
	bool managed;
	bool ftable_ignored; /* managed, and the file had a flow_table anyway */

	/* As the file said, before command-line overrides (for reloads). */
	uint16_t file_workers;
	bool file_busy_poll;
	uint16_t file_n_ports;
};

/* The families of PAs the mux can reach: LB_ADDR_V4 and/or LB_ADDR_V6 (lb_addr.h). */
static inline unsigned
mux_config_tunnels(const struct mux_config *cfg)
{
	return (cfg->tunnel_addr != 0 ? LB_ADDR_V4 : 0) | (cfg->has_tunnel6 ? LB_ADDR_V6 : 0);
}

/* Load path into *cfg. On error fills err and leaves *cfg freed. */
int mux_config_load(struct mux_config *cfg, const char *path, struct lb_cfg_err *err);

void mux_config_free(struct mux_config *cfg);

#endif /* MUX_CONFIG_H */
