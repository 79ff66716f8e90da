/* SPDX-License-Identifier: BSD-3-Clause */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "lb_err.h"
#include "lb_hdr.h"
#include "mux_config.h"

static_assert(MUX_MAX_PROBERS <= LB_CFG_ADDRS_MAX, "lb_cfg_get_addr_split() takes the probers");

static int
load_ports(struct mux_config *cfg, const config_setting_t *root, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"name", "devargs", NULL};
	const config_setting_t *list;
	int i, n, rc;

	/* Absent: --pcap may supply the port. */
	if ((rc = lb_cfg_get_list(root, "ports", false, NULL,
		     "expected a list ( { devargs = ...; } )", &list, &n, err)) != 0)
		return rc;
	if (n > MUX_MAX_PORTS)
		return lb_cfg_error(err, list, NULL, "at most %d ports", MUX_MAX_PORTS);
	for (i = 0; i < n; i++) {
		const config_setting_t *p = config_setting_get_elem(list, (unsigned)i);
		struct mux_port_cfg *pc = &cfg->ports[i];
		const char *name, *devargs;
		char def[16];

		snprintf(def, sizeof(def), "port%d", i);
		if ((rc = lb_cfg_group(p, fields, "a port is a group { devargs = ...; }", err)) !=
				0 ||
			(rc = lb_cfg_get_string(p, "name", false, def, &name, err)) != 0 ||
			(rc = lb_cfg_get_string(p, "devargs", true, NULL, &devargs, err)) != 0)
			return rc;
		if (strlen(name) >= sizeof(pc->name) || strlen(devargs) >= sizeof(pc->devargs))
			return lb_cfg_error(err, p, NULL, "name or devargs too long");
		if (devargs[0] == '\0')
			return lb_cfg_error(err, p, "devargs", "empty");
		strcpy(pc->name, name);
		strcpy(pc->devargs, devargs);
		cfg->n_ports++;
	}
	return 0;
}

static int
load_conn(struct mux_config *cfg, const config_setting_t *mux, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"entries", "entries6", "tcp_timeout",
		"tcp_fin_timeout", "udp_timeout", "service_share", NULL};
	const struct lb_cfg_u32 nums[] = {
		{"entries", 1024, 1 << 26, 65536, false, &cfg->conn_entries},
		{"entries6", 1024, 1 << 26, 16384, false, &cfg->conn_entries6},
		{"tcp_timeout", 1, 86400, 300, false, &cfg->tcp_timeout},
		{"tcp_fin_timeout", 1, 3600, 15, false, &cfg->tcp_fin_timeout},
		{"udp_timeout", 1, 86400, 30, false, &cfg->udp_timeout},
	};
	const config_setting_t *ct = config_setting_get_member(mux, "conn_table");
	long long share;
	int rc;

	/* No conn_table group: every field its default. */
	if (ct != NULL &&
		(rc = lb_cfg_group(ct, fields, "expected a group { entries = ...; }", err)) != 0)
		return rc;
	if ((rc = lb_cfg_get_u32s(ct, nums, sizeof(nums) / sizeof(nums[0]), err)) != 0 ||
		(rc = lb_cfg_get_int(ct, "service_share", false, 1, 100, 50, &share, err)) != 0)
		return rc;
	cfg->conn_service_share = (uint8_t)share;
	return 0;
}

/*
 * Room for services and backends, fixed at start (stable ids index arrays
 * of this size). 0 (the default): 8192 and 65,536, or twice the file's
 * table if larger. A managed mux starts empty, so this is all it has.
 */
static int
load_capacity(struct mux_config *cfg, const config_setting_t *mux, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"services", "backends", NULL};
	const struct lb_cfg_u32 nums[] = {
		{"services", 16, 1 << 20, 0, false, &cfg->cap_services},
		{"backends", 16, 1 << 24, 0, false, &cfg->cap_backends},
	};
	const config_setting_t *c = config_setting_get_member(mux, "capacity");
	int rc;

	/* No capacity group: both 0. */
	if (c != NULL &&
		(rc = lb_cfg_group(c, fields, "expected a group { backends = ...; }", err)) != 0)
		return rc;
	return lb_cfg_get_u32s(c, nums, sizeof(nums) / sizeof(nums[0]), err);
}

/*
 * The tunnel addresses, one of each family at most and at least one, and
 * the next hops towards the PAs.
 */
static int
load_tunnel(struct mux_config *cfg, const config_setting_t *mux, struct lb_cfg_err *err)
{
	uint8_t af;
	int rc;

	if ((rc = lb_cfg_get_ipv4(mux, "tunnel_address", false, &cfg->tunnel_addr, err)) != 0 ||
		(rc = lb_cfg_get_addr(mux, "tunnel_address6", false, LB_ADDR_V6, &cfg->tunnel_addr6,
			 &af, err)) != 0 ||
		(rc = lb_cfg_get_mac(mux, "next_hop_mac", true, cfg->next_hop_mac, err)) != 0)
		return rc;
	cfg->has_tunnel6 = af == LB_AF_INET6;
	if (cfg->tunnel_addr == 0 && !cfg->has_tunnel6)
		return lb_cfg_error(err, mux, "tunnel_address",
			"missing required field (or "
			"tunnel_address6 for a mux with IPv6 "
			"PAs only)");
	memcpy(cfg->next_hop_mac6, cfg->next_hop_mac, 6);
	return lb_cfg_get_mac(mux, "next_hop_mac6", false, cfg->next_hop_mac6, err);
}

static int
load_mux(struct mux_config *cfg, const config_setting_t *root, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"tunnel_address", "tunnel_address6", "next_hop_mac",
		"next_hop_mac6", "mtu", "tunnel_ttl", "arp_for_vips", "nd_for_vips", "workers",
		"busy_poll", "idle_sleep_us", "rx_desc", "tx_desc", "conn_table", "capacity",
		"probers", "zone", NULL};
	const config_setting_t *mux = config_setting_get_member(root, "mux");
	long long mtu, ttl, workers, rxd, txd;
	int rc;

	if (mux == NULL)
		return lb_cfg_error(err, root, "mux", "missing required group");
	if ((rc = lb_cfg_group(mux, fields, "expected a group { ... }", err)) != 0 ||
		(rc = load_tunnel(cfg, mux, err)) != 0 ||
		(rc = lb_cfg_get_int(mux, "mtu", false, 596, 2030, 1500, &mtu, err)) != 0 ||
		(rc = lb_cfg_get_int(mux, "tunnel_ttl", false, 1, 255, 64, &ttl, err)) != 0 ||
		(rc = lb_cfg_get_bool(mux, "arp_for_vips", false, &cfg->arp_for_vips, err)) != 0 ||
		(rc = lb_cfg_get_bool(mux, "nd_for_vips", false, &cfg->nd_for_vips, err)) != 0 ||
		(rc = lb_cfg_get_int(
			 mux, "workers", false, 1, MUX_MAX_WORKERS, 1, &workers, err)) != 0 ||
		(rc = lb_cfg_get_poll(mux, &cfg->busy_poll, &cfg->idle_sleep_us, err)) != 0 ||
		(rc = lb_cfg_get_int(mux, "rx_desc", false, 64, 4096, 1024, &rxd, err)) != 0 ||
		(rc = lb_cfg_get_int(mux, "tx_desc", false, 64, 4096, 1024, &txd, err)) != 0 ||
		(rc = lb_cfg_get_zone(mux, "zone", cfg->zone, err)) != 0)
		return rc;
	/* Every IPv6 link carries 1280 bytes (RFC 8200 5): so must a mux's, with IPv6 PAs. */
	if (cfg->has_tunnel6 && mtu < LB_IPV6_MIN_MTU)
		return lb_cfg_error(err, config_setting_get_member(mux, "mtu"), NULL,
			"%lld is below IPv6's minimum link MTU of 1280, and this mux has a "
			"tunnel_address6",
			mtu);
	cfg->mtu = (uint16_t)mtu;
	cfg->tunnel_ttl = (uint8_t)ttl;
	cfg->workers = (uint16_t)workers;
	cfg->rx_desc = (uint16_t)rxd;
	cfg->tx_desc = (uint16_t)txd;
	/* The VIP probers, of either family, kept apart by family. */
	if ((rc = lb_cfg_get_addr_split(mux, "probers", 0, MUX_MAX_PROBERS, cfg->probers,
		     &cfg->n_probers, cfg->probers6, &cfg->n_probers6, err)) != 0 ||
		(rc = load_capacity(cfg, mux, err)) != 0)
		return rc;
	return load_conn(cfg, mux, err);
}

/*
 * The mux's own groups, for lb_cfg_load_daemon(), and what the file said
 * before command-line overrides (for reloads).
 */
static int
load_groups(void *arg, const config_setting_t *root, struct lb_cfg_err *err)
{
	struct mux_config *cfg = arg;
	int rc;

	if ((rc = load_ports(cfg, root, err)) != 0 || (rc = load_mux(cfg, root, err)) != 0)
		return rc;
	cfg->file_workers = cfg->workers;
	cfg->file_busy_poll = cfg->busy_poll;
	cfg->file_n_ports = cfg->n_ports;
	return 0;
}

int
mux_config_load(struct mux_config *cfg, const char *path, struct lb_cfg_err *err)
{
	/* "bgp" is mux_bgp_cfg.c's, "credits" lb_credit_net.c's (main.c loads them). */
	static const char *const fields[] = {
		"eal", "mux", "ports", "flow_table", "manager", "metrics", "bgp", "credits", NULL};
	const struct lb_cfg_daemon d =
		LB_CFG_DAEMON(cfg, fields, MUX_MAX_EAL_ARGS - 8, load_groups);
	int rc = lb_cfg_load_daemon(&d, cfg, path, err);

	if (rc == 0)
		cfg->path = path;
	return rc;
}

void
mux_config_free(struct mux_config *cfg)
{
	lb_ftable_free(&cfg->ftable);
	config_destroy(&cfg->file);
}
