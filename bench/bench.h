/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-bench: measures the mux's real per-burst function (micro mode) and
 * the whole sluice-mux process next to dpdk-testpmd (process mode).
 *
 * Traffic is synthetic and deterministic: a flow number picks the client
 * address and port and the service, so a packet can be rebuilt from its
 * number at any time. The micro mode rewrites pre-allocated mbufs from a
 * pristine template before every batch (timed apart from mux_burst), so the
 * timed region is exactly what a worker lcore runs between rx_burst and
 * tx_burst. See docs/performance.md for the method and the figures.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "lb_config.h"

#define BENCH_FRAME_LEN 60 /* minimum Ethernet frame without FCS */
/* The largest whose inner packet (1480 bytes) still fits mux.mtu 1500 once encapsulated. */
#define BENCH_FRAME_MAX 1494
#define BENCH_VIP_BASE 0xc6120000u  /* 198.18.0.0/15, RFC 2544 benchmarking */
#define BENCH_DIP_BASE 0x0a000000u  /* 10.0.0.0/8 */
#define BENCH_HOST_BASE 0x64400000u /* 100.64.0.0/10 */
#define BENCH_SVC_PORT 80
#define BENCH_BE_PORT 8080
/*
 * IPv6 traffic lives in 2001:2::/48 (RFC 5180, benchmarking): VIPs
 * 2001:2::<n>, DIPs 2001:2:0:1::<n>, hosts (IPv6 PAs: 6in6) 2001:2:0:2::<n>,
 * clients 2001:2:0:c::/64. A bare IPv6 TCP segment fills a 74-byte frame.
 */
#define BENCH_FRAME6_LEN 74
#define BENCH_NET6_VIP 0
#define BENCH_NET6_DIP 1
#define BENCH_NET6_HOST 2
#define BENCH_NET6_CLIENT 0xc

/* Seconds on the monotonic clock. */
static inline double
bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum bench_dist { BENCH_UNIFORM, BENCH_ZIPF, BENCH_SEQ };

/* One flow: the client side of the tuple and the service it talks to. */
struct bench_flow {
	lb_be32_t src;
	lb_be32_t dst;
	lb_be16_t sport;
	lb_be16_t dport;
};

/* Flow number f -> tuple; f may exceed n_flows (ever-new flows). */
void bench_flow_of(uint64_t f, uint32_t n_services, struct bench_flow *fl);

/* The same flows over IPv6. */
struct bench_flow6 {
	uint8_t src[16];
	uint8_t dst[16];
	lb_be16_t sport;
	lb_be16_t dport;
};

void bench_flow6_of(uint64_t f, uint32_t n_services, struct bench_flow6 *fl);

/* 2001:2:0:<net>::<n>: the benchmark's IPv6 addresses (16 bytes, network order). */
void bench_addr6(uint8_t *a, uint16_t net, uint32_t n);

/* bench_frame() over IPv6: Ethernet/IPv6/TCP, BENCH_FRAME6_LEN bytes, hop limit 64. */
void bench_frame6(uint8_t *buf, const struct bench_flow6 *fl, uint8_t tcp_flags);

/* An Ethernet header at p: dst and src (6 bytes each), EtherType type (host order). */
void bench_put_eth(uint8_t *p, const uint8_t *dst, const uint8_t *src, uint16_t type);

/*
 * The smoke run's check of one frame the mux forwarded for IPv6 flow fl:
 * 6in6 from tunnel6 to the backend's host, with a flow label, the inner
 * packet DNATed to a backend of the flow's own service (of the n_services
 * x n_backends), hop limit 63, TCP checksum valid. NULL, or what is wrong;
 * *be the backend's id.
 */
const char *bench_check6(const uint8_t *p, uint32_t len, const struct bench_flow6 *fl,
	uint64_t flow, const uint8_t *tunnel6, uint32_t n_services, uint32_t n_backends,
	uint32_t *be);

/*
 * Build the Ethernet/IPv4/TCP frame of fl into buf, len bytes: at
 * BENCH_FRAME_LEN a bare TCP segment and 6 bytes of Ethernet padding, above
 * it a TCP payload of zeros filling the frame. Valid IPv4 and TCP checksums,
 * DF set, TTL 64 and the given TCP flags.
 */
void bench_frame(uint8_t *buf, const struct bench_flow *fl, uint8_t tcp_flags, uint16_t len);

/*
 * A flow table of n_services TCP services (VIP 198.18.x.y:80, or with v6
 * [2001:2::x]:80 on IPv6 PAs), each with n_backends backends of weight 1.
 * Free with lb_ftable_free(). Returns 0 or -1.
 */
int bench_ftable(struct lb_ftable *ft, uint32_t n_services, uint32_t n_backends,
	uint32_t maglev_size, bool v6);

/*
 * A sequence of len flow numbers in [0, n_flows): uniform, Zipf with
 * exponent s, or sequential. Ranks are scattered over flow numbers so the
 * popular flows are not neighbours. malloc'd; NULL on failure.
 */
uint32_t *bench_sequence(
	enum bench_dist dist, double s, uint32_t n_flows, uint32_t len, uint64_t seed);

/* Write n frames of len bytes, flows 0..n-1 (tcp_flags), to a pcap file. Returns 0 or -1. */
int bench_write_pcap(
	const char *path, uint32_t n, uint32_t n_services, uint8_t tcp_flags, uint16_t len);

/* Options shared by the modes. */
struct bench_opts {
	bool smoke;
	bool hugepages;
	bool process;
	bool micro;
	bool agent;
	int workers;	      /* micro mode: 2 also times each scenario on two lcores at once */
	const char *only;     /* run only the scenario of this name */
	double seconds;	      /* per micro scenario, or per process run */
	int repeat;	      /* process mode: rounds of (testpmd io, macswap, sluice) */
	const char *mux_path; /* sluice-mux binary */
	const char *testpmd;  /* dpdk-testpmd binary */
	const char *csv;      /* append micro results as CSV */
	const char *workdir;  /* process mode scratch directory */
	uint16_t frame_len;   /* process mode: bytes per frame (BENCH_FRAME_LEN..BENCH_FRAME_MAX) */
};

int bench_micro(const struct bench_opts *o, const char *argv0);

/*
 * The EAL as the micro modes run it: one lcore (the highest CPU we may use),
 * no PCI, a file prefix of our own, vdev (NULL: none), no hugepages unless
 * o->hugepages. 0, or -1 with the reason on stderr; rundir: the run-time
 * folder, for lb_remove_runtime_dir() after rte_eal_cleanup().
 */
int bench_eal_start(
	const struct bench_opts *o, const char *argv0, const char *vdev, char *rundir, size_t len);

/* --agent: the host agent's decapsulation and direct server return, per packet (bench_agent.c). */
int bench_agent(const struct bench_opts *o, const char *argv0);

int bench_process(const struct bench_opts *o);

#endif /* BENCH_H */
