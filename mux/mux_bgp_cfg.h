/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The optional "bgp" group of the mux's configuration: how the mux's
 * speaker (mux_speaker.c) runs BIRD and what BIRD's sessions look like.
 *
 *   bgp = {
 *       bird = "bird";                  # path, or a name looked up on PATH
 *       router_id = "10.255.0.101";     # default: local_address
 *       local_as = 65001;
 *       local_address = "10.255.0.101"; # the management address the sessions run from
 *       neighbors = ( { address = "10.255.0.254"; as = 65000; } );
 *       next_hop = "10.255.0.1";        # default: mux.tunnel_address
 *       hold_time = 3; keepalive = 1;   # seconds; hold_time also bounds a frozen data plane
 *       drain_time = 5;                 # SIGTERM: withdraw, keep forwarding this long, exit
 *       run_dir = "/run/sluice/mux1";   # generated BIRD config, control socket, BIRD's log
 *   };
 *
 * Errors name the file, the line and the field like every loader of the
 * tree ("mux.cfg:30: bgp.neighbors[0].as: 23456 is AS_TRANS ..."). The
 * loader is pure apart from one lookup: the BIRD binary is resolved here
 * (PATH, or the path given), so a missing one stops the mux before EAL
 * starts, with the field named.
 *
 * What is refused and why:
 *  - AS numbers outside 1..4294967295, and 23456 (AS_TRANS, RFC 6793: a
 *    placeholder for 4-byte ASes on 2-byte sessions, never a real AS).
 *  - Addresses that are not dotted-quad IPv4, or not unicast (0.0.0.0,
 *    127/8, multicast, broadcast) where a peer or next hop must be.
 *  - keepalive above a third of hold_time (RFC 4271 4.4 recommends a third;
 *    BIRD and FRR expect it), hold_time below 3 (RFC 4271: 0 or >= 3; 0,
 *    no hold timer, would leave a frozen mux announced forever).
 *  - A neighbor twice, a neighbor at the local address, more than
 *    MUX_BGP_MAX_NEIGHBORS neighbors.
 */
#ifndef MUX_BGP_CFG_H
#define MUX_BGP_CFG_H

#include <limits.h>
#include <stdint.h>

#include <libconfig.h>

#include "lb_config.h"

#define MUX_BGP_MAX_NEIGHBORS 8
#define MUX_BGP_AS_TRANS 23456u
#define MUX_BGP_RUN_DIR_MAX 80 /* run_dir + "/bird.ctl" must fit a sun_path (108) */

struct mux_bgp_neighbor {
	uint32_t addr; /* network order */
	uint32_t as;
};

struct mux_bgp_cfg {
	char bird[PATH_MAX]; /* the BIRD binary, resolved */
	uint32_t router_id;  /* network order, as are the addresses below */
	uint32_t local_as;
	uint32_t local_address;
	uint32_t next_hop;
	uint16_t n_neighbors;
	struct mux_bgp_neighbor neighbors[MUX_BGP_MAX_NEIGHBORS];
	uint32_t hold_time; /* seconds */
	uint32_t keepalive;
	uint32_t drain_time;
	char run_dir[MUX_BGP_RUN_DIR_MAX]; /* empty: the default (mux_route.c) */
	/* For errors found after loading (the address is not on this host). */
	const config_setting_t *local_address_setting;
};

/*
 * Load the top-level "bgp" group of root, if any. tunnel_addr (network
 * order) is the default next hop. Returns 1 when the group is there and
 * valid, 0 when there is none, -LB_ECONFIG with err set.
 */
int mux_bgp_cfg_load(const config_setting_t *root, uint32_t tunnel_addr, struct mux_bgp_cfg *cfg,
	struct lb_cfg_err *err);

#endif /* MUX_BGP_CFG_H */
