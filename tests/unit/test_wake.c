/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What ends an idle worker's nap (dataplane/dp_wake.h), against DPDK's
 * real PMDs: a net_af_packet port on the loopback of a network namespace
 * of the test's own (so that nothing else sends on it), and a net_null
 * port, which nothing can wake.
 *
 * dp_wake_init() must find the af_packet queue's socket; a nap with
 * nothing on the wire runs to its timeout and says so; a frame on the
 * interface ends a long nap at once and says so, but not one shorter than
 * DP_WAKE_MIN_US (timed, so that frames gather); once the worker has read
 * the ring, a nap is quiet again (the wake tells of the ring, not of a
 * frame seen once). A worker with a net_null queue keeps its timed nap,
 * alone or beside the af_packet port.
 *
 * Needs root (a network namespace), as the namespace tests do.
 */
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dp_wake.h"
#include "lb_clock.h"
#include "lb_dpdk.h"

static char rundir[PATH_MAX];

static void
remove_rundir(void)
{
	lb_remove_runtime_dir(rundir);
}

static double
now_s(void)
{
	return (double)lb_now_us() / 1e6;
}

/* A network namespace of our own, its loopback up and nothing on it. */
static void
own_loopback(void)
{
	struct ifreq ifr;
	int s;

	cr_assert_eq(unshare(CLONE_NEWNET), 0, "unshare(CLONE_NEWNET): %s (needs root)",
		strerror(errno));
	s = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert_geq(s, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	cr_assert_eq(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	cr_assert_eq(ioctl(s, SIOCSIFFLAGS, &ifr), 0, "lo up: %s", strerror(errno));
	close(s);
}

/* EAL with an af_packet port on lo (port 0) and a null port (port 1), both started. */
static void
start_ports(void)
{
	char prefix[64];
	char *argv[] = {"test_wake", "--no-huge", "-m", "128", "--no-pci", "--no-telemetry",
		"--log-level=0", "--vdev", "net_af_packet0,iface=lo", "--vdev", "net_null0", prefix,
		NULL};
	struct rte_eth_conf conf;
	struct rte_mempool *mp;
	uint16_t p;

	snprintf(prefix, sizeof(prefix), "--file-prefix=test_wake-%d", (int)getpid());
	cr_assert_geq(rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv), 0,
		"EAL: %s", rte_strerror(rte_errno));
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	atexit(remove_rundir);
	cr_assert_eq(rte_eth_dev_count_avail(), 2);
	mp = rte_pktmbuf_pool_create("wake", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	memset(&conf, 0, sizeof(conf));
	for (p = 0; p < 2; p++) {
		cr_assert_eq(rte_eth_dev_configure(p, 1, 1, &conf), 0);
		cr_assert_eq(rte_eth_rx_queue_setup(p, 0, 256, SOCKET_ID_ANY, NULL, mp), 0);
		cr_assert_eq(rte_eth_tx_queue_setup(p, 0, 256, SOCKET_ID_ANY, NULL), 0);
		cr_assert_eq(rte_eth_dev_start(p), 0);
	}
}

/* A datagram to the loopback: frames on lo, which the af_packet port sees. */
static void
send_frame(void)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)};
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	cr_assert_geq(s, 0);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(sendto(s, "wake", 4, 0, (struct sockaddr *)&to, sizeof(to)), 4);
	close(s);
}

/* Read everything the port holds; how many frames. */
static unsigned
drain(uint16_t port)
{
	struct rte_mbuf *m[32];
	unsigned total = 0;
	uint16_t n, i;

	while ((n = rte_eth_rx_burst(port, 0, m, 32)) != 0) {
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(m[i]);
		total += n;
	}
	return total;
}

Test(wake, af_packet_frames_end_the_nap_null_ports_do_not)
{
	const uint16_t af = 0, null = 1, q0[2] = {0, 0};
	uint16_t both[2] = {af, null};
	struct dp_wake wk;
	double t0, took;

	own_loopback();
	start_ports();

	dp_wake_init(&wk, &af, q0, 1);
	cr_assert(wk.by_traffic, "the af_packet queue's socket was not found");
	cr_assert_eq(wk.n, 1);

	/* Nothing on the wire: the nap runs to its end, and says so. */
	t0 = now_s();
	cr_assert_not(dp_wake_nap(&wk, 20000));
	cr_assert_geq(now_s() - t0, 0.019);

	/* A frame ends a 5 s nap at once. */
	send_frame();
	t0 = now_s();
	cr_assert(dp_wake_nap(&wk, 5000000), "a frame on lo did not end the nap");
	took = now_s() - t0;
	cr_assert_lt(took, 2.0, "the nap ran %.3f s despite a frame", took);
	/* The frame still waits in the ring, but a nap that short stays timed. */
	cr_assert_not(dp_wake_nap(&wk, DP_WAKE_MIN_US - 1));

	/* Read, the ring is empty, and the next nap is quiet again. */
	usleep(20000); /* every frame of the datagram (and of its ICMP answer) in */
	cr_assert_geq(drain(af), 1);
	cr_assert_not(dp_wake_nap(&wk, 20000), "a read ring still woke the nap");

	/* A null port cannot wake a worker: timed naps, alone or beside af_packet. */
	dp_wake_init(&wk, &null, q0, 1);
	cr_assert_not(wk.by_traffic);
	cr_assert_eq(wk.n, 0);
	dp_wake_init(&wk, both, q0, 2);
	cr_assert_not(wk.by_traffic);
	cr_assert_eq(wk.n, 0);
	send_frame();
	t0 = now_s();
	cr_assert_not(dp_wake_nap(&wk, 20000));
	cr_assert_geq(now_s() - t0, 0.019);

	rte_eth_dev_stop(af);
	rte_eth_dev_stop(null);
	rte_eal_cleanup();
}
