/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "lb_dpdk.h"
#include "lb_err.h"
#include "lb_log.h"
#include "mux_port.h"

/* Symmetric Toeplitz: a repeated 0x6d5a makes hash(a,b) == hash(b,a). */
static uint8_t mux_rss_key[52];

static int
port_start(const struct mux_port_cfg *pc, struct rte_mempool *mp, uint16_t workers,
	const struct mux_config *cfg, struct mux_port *port, char *errbuf, size_t errlen)
{
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	char name[64];
	uint16_t id, q;
	unsigned files;
	int others, rc;

	rc = lb_devargs_pcaps(pc->devargs, &files, &others, &port->eof_pkts, errbuf, errlen);
	if (rc != 0)
		return rc;
	if (rte_dev_probe(pc->devargs) != 0) {
		snprintf(errbuf, errlen, "port %s: cannot probe \"%s\"", pc->name, pc->devargs);
		return -LB_EDPDK;
	}
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(pc->devargs, ","), pc->devargs);
	if (rte_eth_dev_get_port_by_name(name, &id) != 0 || id >= MUX_MAX_PORTS) {
		snprintf(errbuf, errlen, "port %s: no ethdev \"%s\" (or port id past %d)", pc->name,
			name, MUX_MAX_PORTS - 1);
		return -LB_EDPDK;
	}
	port->id = id;
	rte_eth_dev_info_get(id, &info);
	if (info.max_tx_queues < workers) {
		snprintf(errbuf, errlen,
			"port %s: offers %u TX queues, %u workers need one each "
			"(net_pcap: give tx_pcap once per worker)",
			pc->name, info.max_tx_queues, workers);
		return -LB_ECONFIG;
	}
	port->nb_rxq = RTE_MIN(info.max_rx_queues, workers);
	if (files > port->nb_rxq) {
		snprintf(errbuf, errlen,
			"port %s: %u rx_pcap files but only %u workers to read them", pc->name,
			files, port->nb_rxq);
		return -LB_ECONFIG;
	}
	port->eof_capable = files > 0 && others == 0;
	if (port->nb_rxq > 1 && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		memset(mux_rss_key, 0, sizeof(mux_rss_key));
		for (q = 0; q < sizeof(mux_rss_key); q += 2) {
			mux_rss_key[q] = 0x6d;
			mux_rss_key[q + 1] = 0x5a;
		}
		conf.rx_adv_conf.rss_conf.rss_key = mux_rss_key;
		conf.rx_adv_conf.rss_conf.rss_key_len =
			info.hash_key_size ? info.hash_key_size : 40;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
	}
	rc = rte_eth_dev_configure(id, port->nb_rxq, workers, &conf);
	if (rc != 0) {
		snprintf(errbuf, errlen, "port %s: configure: %s", pc->name, strerror(-rc));
		return -LB_EDPDK;
	}
	/*
	 * The port carries mux.mtu-sized IP packets. A device that cannot be
	 * told (most virtual ones) keeps its own; a real NIC that refuses is
	 * a configuration error.
	 */
	rc = rte_eth_dev_set_mtu(id, cfg->mtu);
	if (rc == -ENOTSUP)
		LB_INFO("port %s: device keeps its own MTU; mux.mtu %u is assumed", pc->name,
			cfg->mtu);
	else if (rc != 0) {
		snprintf(errbuf, errlen, "port %s: MTU %u: %s", pc->name, cfg->mtu, strerror(-rc));
		return -LB_ECONFIG;
	}
	for (q = 0; q < port->nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(
			id, q, cfg->rx_desc, rte_eth_dev_socket_id(id), NULL, mp);
		if (rc != 0) {
			snprintf(errbuf, errlen, "port %s: RX queue %u: %s", pc->name, q,
				strerror(-rc));
			return -LB_EDPDK;
		}
	}
	for (q = 0; q < workers; q++) {
		rc = rte_eth_tx_queue_setup(id, q, cfg->tx_desc, rte_eth_dev_socket_id(id), NULL);
		if (rc != 0) {
			snprintf(errbuf, errlen, "port %s: TX queue %u: %s", pc->name, q,
				strerror(-rc));
			return -LB_EDPDK;
		}
	}
	rc = rte_eth_dev_start(id);
	if (rc != 0) {
		snprintf(errbuf, errlen, "port %s: start: %s", pc->name, strerror(-rc));
		return -LB_EDPDK;
	}
	/* Frames for VIPs arrive with the router's idea of our MAC; accept all,
	 * and all multicast (some NICs filter it even when promiscuous; IPv6
	 * neighbor solicitations go to solicited-node groups). */
	rte_eth_promiscuous_enable(id);
	rte_eth_allmulticast_enable(id);
	rte_eth_macaddr_get(id, &port->mac);
	return 0;
}

int
mux_ports_start(const struct mux_config *cfg, struct rte_mempool *mp, uint16_t workers,
	struct mux_port *ports, char *errbuf, size_t errlen)
{
	uint16_t i;
	int rc;

	for (i = 0; i < cfg->n_ports; i++) {
		rc = port_start(&cfg->ports[i], mp, workers, cfg, &ports[i], errbuf, errlen);
		if (rc != 0)
			return rc;
	}
	return 0;
}
