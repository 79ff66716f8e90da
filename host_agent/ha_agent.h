/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-agent: the host agent, Ananta's TAP role on each server.
 *
 * Two paths, one lcore:
 *   uplink -> VM  (ha_decap.c): accept a tunnel addressed to our PA of its
 *       outer family from a known mux of that family (4in4, 6in4 to pa;
 *       4in6, 6in6 to pa6), strip the outer header, hand the inner packet
 *       to the VM port that owns its DIP; translate quoted headers of ICMP
 *       and ICMPv6 errors; clamp the MSS of SYNs; put outer fragments of
 *       either family back together first.
 *   VM -> uplink  (ha_return.c): direct server return. A packet from a
 *       load-balanced DIP:port leaves with source VIP:port, straight to the
 *       router; everything else a VM sends passes through untouched. The
 *       agent is the VMs' gateway: ARP, and neighbor discovery for
 *       gateway6, are answered.
 * The VIP <-> DIP mapping comes from the flow table (the configuration
 * file, or the manager in managed mode), never from traffic. Same rules as
 * the mux: no locks, atomics or logging on the packet path; every drop
 * counted by reason.
 */
#ifndef HA_AGENT_H
#define HA_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip_frag.h>
#include <rte_mbuf.h>

#include "dp_tx.h"
#include "ha_config.h"
#include "ha_counters.h"

#define HA_BURST 32
#define HA_MAX_PORTS (HA_MAX_VMS + 1)

/*
 * Reassembly of outer fragments (ha_decap.c): at most HA_FRAG_MAX datagrams
 * in progress (HA_FRAG_BUCKETS buckets of HA_FRAG_BUCKET_ENTRIES), each
 * given HA_FRAG_TIMEOUT_MS from its first fragment to its last. The limit
 * bounds the mbufs fragments can pin: HA_FRAG_MAX x 8 at most.
 */
#define HA_FRAG_BUCKETS 64
#define HA_FRAG_BUCKET_ENTRIES 4
#define HA_FRAG_MAX 128
#define HA_FRAG_TIMEOUT_MS 2000

struct rte_hash;
struct rte_rcu_qsbr;
struct ha_track;

struct ha_vm {
	uint16_t port;
	lb_be32_t dip; /* 0: no IPv4 DIP */
	bool has_dip6;
	uint8_t dip6[16];
	struct rte_ether_addr mac;	/* the VM's own interface */
	struct rte_ether_addr port_mac; /* our side of it */
};

/*
 * A load-balanced endpoint on this host: DIP:port serves VIP:vport, both
 * of the service's family (af); an IPv4 address sits in the first four
 * bytes of its lb_addr.
 */
struct ha_lb {
	struct lb_addr vip;
	struct lb_addr dip;
	lb_be16_t vport;
	lb_be16_t dport;
	uint8_t af;	    /* LB_AF_INET or LB_AF_INET6 */
	uint8_t proto;	    /* the service's */
	uint32_t be_id;	    /* the backend's stable id (its load's index, ha_track.h) */
	uint32_t max_conns; /* its max_connections: credits granted for it (ha_credit.h); 0 none */
};

/* Compiled mapping; immutable once workers run. */
struct ha_map {
	uint64_t version;	      /* 1 at start, +1 per reload; managed: the manager's */
	struct rte_hash *by_dip_port; /* (dip, dport, proto) -> ha_lb index (return path) */
	struct rte_hash *by_vip_dip;  /* (vip, vport, proto, dip) -> ha_lb index (ICMP quotes) */
	uint32_t n_lb;
	struct ha_lb *lb;
	uint32_t n_ids;
	uint32_t *ids; /* the backends' stable ids, ascending, each once (ha_map_has_id()) */
};

struct ha_worker {
	/* read-only settings, but the map: swapped by the control side under RCU */
	const struct ha_map *map;
	struct rte_rcu_qsbr *qsv;
	uint16_t uplink;
	struct rte_ether_addr uplink_mac;
	struct rte_ether_addr next_hop;
	lb_be32_t pa; /* 0: none */
	bool has_pa6;
	uint8_t pa6[16];
	uint16_t n_muxes;
	lb_be32_t muxes[HA_MAX_MUXES];
	uint16_t n_muxes6;
	uint8_t muxes6[HA_MAX_MUXES][16];
	uint16_t n_probers;
	lb_be32_t probers[HA_MAX_PROBERS];
	uint16_t n_probers6;
	uint8_t probers6[HA_MAX_PROBERS][16];
	bool has_gateway6;
	uint8_t gateway6[16];
	uint16_t mss_clamp;  /* IPv4 */
	uint16_t mss_clamp6; /* IPv6 */
	uint16_t n_vms;
	struct ha_vm vms[HA_MAX_VMS];
	int8_t vm_of_port[RTE_MAX_ETHPORTS]; /* port id -> VM index, -1 */
	bool busy_poll;
	uint32_t idle_sleep_us;
	volatile bool quit;
	/* owned by the lcore */
	struct rte_ip_frag_tbl *frag_tbl; /* NULL: outer fragments are dropped */
	struct rte_ip_frag_death_row frag_dr;
	struct ha_track *track; /* NULL: connections are not tracked */
	uint32_t now_ms;	/* this loop's, for the tracker: ms since the loop began */
	struct dp_txbuf tx[HA_MAX_PORTS];
	uint64_t vm_rx[HA_MAX_VMS];
	uint64_t vm_tx[HA_MAX_VMS];
	uint64_t loops; /* +1 per loop: a reader sees the lcore progress */
	struct ha_counters cnt;
} __rte_cache_aligned;

/*
 * Compile the mapping of ft (the file's table, or the manager's) for the
 * agent cfg describes: its PA and VMs. Returns 0, or -1 with the reason in
 * errbuf; either way m is the caller's to ha_map_free().
 */
int ha_map_compile(struct ha_map *m, const struct ha_config *cfg, const struct lb_ftable *ft,
	char *errbuf, size_t len);

/* ha_map_compile() of the configuration's own flow table. */
int ha_map_build(struct ha_map *m, const struct ha_config *cfg, char *errbuf, size_t len);

void ha_map_free(struct ha_map *m);

/*
 * The ha_lb for a VM's (dip, dport, proto) of family af, or NULL; dip is 4
 * or 16 bytes as they lie in a packet.
 */
const struct ha_lb *ha_map_by_dip(
	const struct ha_map *m, uint8_t af, const void *dip, lb_be16_t dport, uint8_t proto);

/* Does the map hold a backend of stable id id? */
bool ha_map_has_id(const struct ha_map *m, uint32_t id);

/* The ha_lb for (vip, vport, proto) served by dip, of family af, or NULL. */
const struct ha_lb *ha_map_by_vip(const struct ha_map *m, uint8_t af, const void *vip,
	lb_be16_t vport, uint8_t proto, const void *dip);

void ha_uplink_burst(struct ha_worker *w, struct rte_mbuf **pkts, uint16_t n);

/*
 * Discard the datagrams whose fragments stopped coming (tsc: now), and free
 * what reassembly has given up, counting it as reassembly_failed. The lcore
 * calls it once per loop; ha_uplink_burst() frees after every burst.
 */
void ha_frag_expire(struct ha_worker *w, uint64_t tsc);

void ha_vm_burst(struct ha_worker *w, int vm, struct rte_mbuf **pkts, uint16_t n);

int ha_worker_main(void *arg);

struct lb_pkt;
/* ARP on port: answer requests for addr, or (proxy) for anything but addr. */
void ha_arp(struct ha_worker *w, uint16_t port, const struct rte_ether_addr *mac,
	struct rte_mbuf *m, const struct lb_pkt *pi, int proxy, lb_be32_t addr);

/*
 * A neighbor solicitation on port for the 16 bytes at addr: answered with
 * an advertisement naming mac (router: the R flag, as the VMs' gateway);
 * anything else is dropped nd_ignored, a wrong checksum nd_malformed.
 */
void ha_nd(struct ha_worker *w, uint16_t port, const struct rte_ether_addr *mac, struct rte_mbuf *m,
	const struct lb_pkt *pi, const uint8_t *addr, int router);

/* An ICMP or ICMPv6 echo request (pi) answered from port, by mac. */
void ha_echo(struct ha_worker *w, uint16_t port, const struct rte_ether_addr *mac,
	struct rte_mbuf *m, const struct lb_pkt *pi);

void ha_flush(struct ha_worker *w);

/* ha_drop() and ha_enqueue(): dp_tx.h. */
DP_WORKER_TX(ha, struct ha_worker)

/*
 * Replace the frame's L2 header (l2_len bytes) with a plain Ethernet header
 * for an IPv4 or (v6) IPv6 packet.
 */
static inline uint8_t *
ha_set_eth(struct rte_mbuf *m, uint16_t l2_len, const struct rte_ether_addr *dst,
	const struct rte_ether_addr *src, int v6)
{
	struct rte_ether_hdr *eth;

	if (l2_len > sizeof(*eth))
		rte_pktmbuf_adj(m, (uint16_t)(l2_len - sizeof(*eth)));
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eth->dst_addr = *dst;
	eth->src_addr = *src;
	eth->ether_type = lb_cpu_to_be16(v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	return (uint8_t *)eth;
}

#endif /* HA_AGENT_H */
