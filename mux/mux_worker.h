/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker lcores: the run-to-completion loop and the per-burst function.
 *
 * Each worker owns its RX queues (one per port, where the port has one for
 * it), one TX queue on every port, a connection table and its counters. All
 * of it lives in one cache-aligned struct that only its lcore writes; other
 * threads read counters as plain words and sum them. Nothing on this path
 * locks, logs or uses an atomic read-modify-write.
 *
 * mux_burst() is the whole per-packet path for one received burst: parse,
 * service lookup, backend choice, rewrite, encapsulation, and queuing to the
 * worker's TX buffers. The benchmark drives it directly with pre-built mbufs.
 */
#ifndef MUX_WORKER_H
#define MUX_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>

#include "dp_tx.h"
#include "mux_config.h"
#include "mux_counters.h"
#include "mux_limit.h"

#define MUX_BURST 32
#define MUX_SWEEP_IDLE 256 /* slots examined per nap (busy_poll: per idle loop) */
#define MUX_SWEEP_BUSY 8   /* ... and per busy loop, so a loaded lcore ages too */

struct rte_mbuf;
struct rte_mempool;
struct rte_rcu_qsbr;
struct mux_gen;
struct mux_credit;
struct mux_conn_table;
struct mux_conn6_table;

/* Settings every worker reads and nobody writes once workers run. */
struct mux_ctx {
	struct mux_gen *gen; /* current generation; load with acquire */
	struct rte_rcu_qsbr *qsv;
	lb_be32_t tunnel_addr; /* 0: none */
	struct rte_ether_addr next_hop;
	struct rte_ether_addr port_mac[MUX_MAX_PORTS];
	uint16_t n_ports;
	uint16_t mtu;
	uint8_t tunnel_ttl;
	bool arp_for_vips;
	bool nd_for_vips;
	bool busy_poll;
	bool has_tunnel6;
	uint8_t tunnel_addr6[16];
	struct rte_ether_addr next_hop6; /* towards IPv6 PAs */
	uint16_t n_probers;		 /* VIP probes are answered from these outer sources */
	lb_be32_t probers[MUX_MAX_PROBERS];
	uint16_t n_probers6;
	uint8_t probers6[MUX_MAX_PROBERS][16];
	/*
	 * Outer fragmentation (mux_frag.c): header mbufs from frag_direct,
	 * payload references from frag_indirect. NULL: a packet that would
	 * need it is dropped too_big.
	 */
	struct rte_mempool *frag_direct;
	struct rte_mempool *frag_indirect;
	uint32_t idle_sleep_us;
	uint64_t tsc_hz;
	uint64_t tsc0;
	uint16_t n_workers; /* admission shares are divided among them */
	/*
	 * The muxes a VIP's limits are divided among, and this mux's place
	 * among them, in one word: written by the control thread alone (single
	 * writer), read by the workers at their next checked connection
	 * (mux_limit.h).
	 */
	uint64_t lim_share; /* divisor << 32 | index; 0: the whole limit */
	/* Capacity credits (mux_credit.h); NULL: no channel, capped backends get nothing new. */
	struct mux_credit *credit;
	volatile bool quit;
};

/* Per service and per backend: packets, inner bytes, new connections. */
struct mux_flow_counters {
	uint64_t pkts;
	uint64_t bytes;
	uint64_t new_conns;
};

struct mux_rxq {
	uint16_t port;
	uint16_t queue;
};

struct mux_worker {
	struct mux_ctx *ctx;
	unsigned lcore;
	uint16_t idx; /* worker number: TX queue and RCU thread id */
	/*
	 * Outer IPv4 ids for non-DF packets: the next one, and the step. The
	 * workers interleave theirs (worker i gives the ids equal to i modulo a
	 * power of two at least their number), so no two give one id.
	 */
	uint16_t ip_id;
	uint16_t ip_id_step;
	uint32_t frag6_id; /* outer IPv6 fragment ids: this worker's, interleaved */
	uint16_t n_rxq;
	struct mux_rxq rxq[MUX_MAX_PORTS];
	struct dp_txbuf tx[MUX_MAX_PORTS];
	struct mux_conn_table *conn;
	struct mux_conn6_table *conn6;
	struct mux_flow_counters *svc_cnt; /* [n_services] */
	struct mux_flow_counters *be_cnt;  /* [n_backends] */
	uint64_t loops;			   /* +1 per loop: a reader sees the worker progress */
	uint16_t credit_sweep;		   /* the credit lane its next loop looks at */
	struct mux_limits lim;		   /* admission control state */
	struct mux_counters cnt;
} __rte_cache_aligned;

/* Process one received burst from port; queues results in w->tx. */
void mux_burst(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf **pkts,
	uint16_t n, uint32_t now);

/* Transmit everything queued in w->tx; what a port refuses is counted and freed. */
void mux_flush(struct mux_worker *w);

/* lcore entry point: loops until ctx->quit. */
int mux_worker_main(void *arg);

/*
 * Make w worker idx of ctx on lcore: its connection tables (entries for
 * IPv4 flows, entries6 for IPv6 ones; timeouts tcp/tcp-closing/udp in
 * seconds, keyed by g's seed) and its per-service and per-backend counters
 * (room for g's capacities), on NUMA socket. Its RX queues are the
 * caller's to add. Returns 0 or -LB_ENOMEM; either way mux_worker_fini()
 * frees what it made.
 */
int mux_worker_init(struct mux_worker *w, struct mux_ctx *ctx, const struct mux_gen *g,
	uint16_t idx, unsigned lcore, uint32_t entries, uint32_t entries6,
	const uint32_t timeout[3], int socket);

void mux_worker_fini(struct mux_worker *w);

/* Seconds since start, the connection table's clock. */
static inline uint32_t
mux_now(const struct mux_ctx *ctx, uint64_t tsc)
{
	return (uint32_t)((tsc - ctx->tsc0) / ctx->tsc_hz);
}

/* Queue m for transmission on port, flushing first if the buffer is full. */
static inline void mux_enqueue(struct mux_worker *w, uint16_t port, struct rte_mbuf *m);

static inline void mux_drop(struct mux_worker *w, struct rte_mbuf *m, int reason);

/* Replies the mux originates, built in place of the request (mux_reply.c, mux_reply6.c). */
struct lb_pkt;
void mux_reply_arp(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi);
/* An ICMP or ICMPv6 echo request to a VIP or a tunnel address. */
void mux_reply_echo(struct mux_worker *w, const struct mux_gen *g, uint16_t port,
	struct rte_mbuf *m, const struct lb_pkt *pi);
/* A tunnel to the mux, of either family: a VIP probe answered, or dropped tunnel_inbound. */
void mux_reply_vip_probe(struct mux_worker *w, const struct mux_gen *g, uint16_t port,
	struct rte_mbuf *m, const struct lb_pkt *pi);
/* ICMP fragmentation needed (IPv4) or ICMPv6 packet too big, reporting mtu. */
void mux_reply_too_big(struct mux_worker *w, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint16_t mtu);
/* A new connection an admission rule refused: dropped, or answered (enum lb_refuse). */
void mux_reply_refuse(
	struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi, int how);
/*
 * A new flow whose first choice is not usable, under the reject policy
 * (lb_choice.h): a TCP RST from the VIP, an ICMP port unreachable for
 * UDP; anything else (a RST, an ICMP error) is dropped backend_unusable.
 */
void mux_reply_unusable(
	struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi);
void mux_reply_nd(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi);

/* The IPv6 packet path (mux_pipeline6.c): what mux_burst() hands an IPv6 packet to. */
void mux_packet6(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	struct lb_pkt *pi, uint32_t now);

/*
 * Send m, an encapsulated frame too long for the MTU, as fragments of its
 * outer datagram (mux_frag.c): outer6 says the outer header's family.
 * false: none could be made, m is gone and counted as a drop.
 */
bool mux_send_fragments(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, bool outer6);

/* mux_drop() and mux_enqueue(): dp_tx.h. */
DP_WORKER_TX(mux, struct mux_worker)

/* The outer IPv4 id of a non-DF packet (one worker alone: 0, 1, 2, ...). */
static inline uint16_t
mux_worker_ip_id(struct mux_worker *w)
{
	uint16_t id = w->ip_id;

	w->ip_id = (uint16_t)(id + w->ip_id_step);
	return id;
}

#endif /* MUX_WORKER_H */
