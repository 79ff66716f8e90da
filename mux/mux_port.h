/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port setup. Ports are named by devargs, so any PMD works: a PCI address
 * for a real NIC, or net_pcap, net_ring, net_tap, net_af_packet, net_null.
 * Every worker gets one TX queue on every port and, where the port offers
 * enough, one RX queue; a port with several RX queues and RSS gets the
 * symmetric Toeplitz key so both directions of a flow meet on one lcore.
 */
#ifndef MUX_PORT_H
#define MUX_PORT_H

#include <stdint.h>

#include <rte_ether.h>

#include "mux_config.h"

struct rte_mempool;

struct mux_port {
	uint16_t id;
	uint16_t nb_rxq;
	struct rte_ether_addr mac;
	uint64_t eof_pkts; /* packets in its rx_pcap files, for --exit-on-eof */
	int eof_capable;   /* every RX queue reads a pcap file */
};

/*
 * Probe, configure and start cfg's ports. Returns 0, or a negative lb_err
 * with a message in errbuf naming the port.
 */
int mux_ports_start(const struct mux_config *cfg, struct rte_mempool *mp, uint16_t workers,
	struct mux_port *ports, char *errbuf, size_t errlen);

/* Stopping them is dp_teardown()'s: every port of the process. */

#endif /* MUX_PORT_H */
