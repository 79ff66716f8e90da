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
 * alone or beside the af_packet port. A net_tap port wakes a process's
 * sole worker (its per-frame signal ends the nap: a frame the kernel
 * sends out of the tap), and no worker of several (the signal is the
 * process's: another worker may take it).
 *
 * Needs root (a network namespace), as the namespace tests do.
 */
#include <net/if.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
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

#include "dp_idle.h"
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

/*
 * A network namespace of our own, its loopback up and nothing on it; no
 * IPv6 on the interfaces made in it (the tap would send router
 * solicitations and reports of its own).
 */
static void
own_loopback(void)
{
	struct ifreq ifr;
	FILE *f;
	int s;

	cr_assert_eq(unshare(CLONE_NEWNET), 0, "unshare(CLONE_NEWNET): %s (needs root)",
		strerror(errno));
	f = fopen("/proc/sys/net/ipv6/conf/default/disable_ipv6", "w");
	if (f != NULL) { /* absent: a kernel without IPv6 sends none */
		cr_assert_gt(fputs("1\n", f), 0);
		cr_assert_eq(fclose(f), 0);
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert_geq(s, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	cr_assert_eq(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	cr_assert_eq(ioctl(s, SIOCSIFFLAGS, &ifr), 0, "lo up: %s", strerror(errno));
	close(s);
}

/* EAL with an af_packet port on lo (port 0), a null port (1) and a tap (2), all started. */
static void
start_ports(void)
{
	char prefix[64];
	char *argv[] = {"test_wake", "--no-huge", "-m", "128", "--no-pci", "--no-telemetry",
		"--log-level=0", "--vdev", "net_af_packet0,iface=lo", "--vdev", "net_null0",
		"--vdev", "net_tap0,iface=wake0", prefix, NULL};
	struct rte_eth_conf conf;
	struct rte_mempool *mp;
	uint16_t p;

	snprintf(prefix, sizeof(prefix), "--file-prefix=test_wake-%d", (int)getpid());
	cr_assert_geq(rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv), 0, "EAL: %s",
		rte_strerror(rte_errno));
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	atexit(remove_rundir);
	cr_assert_eq(rte_eth_dev_count_avail(), 3);
	mp = rte_pktmbuf_pool_create("wake", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	memset(&conf, 0, sizeof(conf));
	for (p = 0; p < 3; p++) {
		cr_assert_eq(rte_eth_dev_configure(p, 1, 1, &conf), 0);
		cr_assert_eq(rte_eth_rx_queue_setup(p, 0, 256, SOCKET_ID_ANY, NULL, mp), 0);
		cr_assert_eq(rte_eth_tx_queue_setup(p, 0, 256, SOCKET_ID_ANY, NULL), 0);
		cr_assert_eq(rte_eth_dev_start(p), 0);
	}
}

/* A datagram to addr: frames on lo (the loopback), or out of the tap (its subnet). */
static void
send_to(uint32_t addr)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)};
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	cr_assert_geq(s, 0);
	to.sin_addr.s_addr = htonl(addr);
	cr_assert_eq(sendto(s, "wake", 4, 0, (struct sockaddr *)&to, sizeof(to)), 4);
	close(s);
}

static void
send_frame(void)
{
	send_to(INADDR_LOOPBACK);
}

/* 10.9.9.1/24 on the tap's interface: a datagram to 10.9.9.2 goes out of it. */
static void
tap_address(void)
{
	struct sockaddr_in *a;
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	cr_assert_geq(s, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "wake0");
	a = (struct sockaddr_in *)&ifr.ifr_addr;
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(0x0a090901);
	cr_assert_eq(ioctl(s, SIOCSIFADDR, &ifr), 0, "tap address: %s", strerror(errno));
	a->sin_addr.s_addr = htonl(0xffffff00);
	cr_assert_eq(ioctl(s, SIOCSIFNETMASK, &ifr), 0, "tap netmask: %s", strerror(errno));
	close(s);
}

/*
 * Every 100 ms until told to stop, a datagram to a new neighbor on the
 * tap's subnet (tap_address()): an ARP request out of the tap each time.
 */
static void *
send_later(void *arg)
{
	const bool *stop = arg;
	uint32_t host;

	for (host = 2; host < 255 && !__atomic_load_n(stop, __ATOMIC_ACQUIRE); host++) {
		usleep(100000);
		send_to(0x0a090900 + host);
	}
	return NULL;
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

Test(wake, af_packet_and_tap_frames_end_a_nap_null_ports_do_not)
{
	const uint16_t af = 0, null = 1, tap = 2, q0[2] = {0, 0};
	uint16_t both[2] = {af, null}, af_tap[2] = {af, tap};
	struct dp_wake wk;
	pthread_t sender;
	bool stop = false;
	double t0, took;

	own_loopback();
	/* The tap's signals wait until its part below (dp_idle.h). */
	dp_rt_signals_block();
	start_ports();

	dp_wake_init(&wk, &af, q0, 1, false);
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
	dp_wake_init(&wk, &null, q0, 1, true);
	cr_assert_not(wk.by_traffic);
	cr_assert_eq(wk.n, 0);
	dp_wake_init(&wk, both, q0, 2, true);
	cr_assert_not(wk.by_traffic);
	cr_assert_eq(wk.n, 0);
	send_frame();
	t0 = now_s();
	cr_assert_not(dp_wake_nap(&wk, 20000));
	cr_assert_geq(now_s() - t0, 0.019);

	/* A tap wakes the process's sole worker, by its signal, and no worker of several. */
	dp_wake_init(&wk, &tap, q0, 1, false);
	cr_assert_not(wk.by_traffic);
	dp_wake_init(&wk, af_tap, q0, 2, true);
	cr_assert(wk.by_traffic);
	cr_assert_eq(wk.n, 1); /* the af_packet socket; the tap has its signal */
	tap_address();
	/* Made while the signals are blocked, the sender keeps them so (dp_idle.h). */
	cr_assert_eq(pthread_create(&sender, NULL, send_later, &stop), 0);
	dp_worker_signals(); /* the tap's signals now end a nap, as in a worker */
	usleep(20000);	     /* any held back are taken now */
	drain(af);	     /* the datagram above, still in the ring */
	drain(tap);
	/* A signal is an edge: frames must come during the nap, from the sender. */
	t0 = now_s();
	cr_assert_not(dp_wake_nap(&wk, 5000000)); /* a signal, not a polled socket */
	took = now_s() - t0;
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	cr_assert_eq(pthread_join(sender, NULL), 0);
	cr_assert_lt(took, 2.0, "the nap ran %.3f s despite frames on the tap", took);

	rte_eth_dev_stop(af);
	rte_eth_dev_stop(null);
	rte_eth_dev_stop(tap);
	rte_eal_cleanup();
}
