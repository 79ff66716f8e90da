/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What ends an idle worker's nap (dp_wake.h): the sockets of its
 * net_af_packet queues, found by the interface they are bound to.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#include <rte_ethdev.h>

#include "dp_wake.h"

/*
 * The packet sockets of this process bound to ifindex, in ascending
 * descriptor order (the order the PMD opened them: queue 0 first, since
 * each open takes the lowest free descriptor). Returns how many: max + 1
 * when there are more than max, which the caller cannot tell apart.
 */
static unsigned
packet_sockets(int ifindex, int *fds, unsigned max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0, i;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		struct sockaddr_ll sll;
		socklen_t len = sizeof(sll);
		int fd, dom;
		socklen_t dlen = sizeof(dom);
		char *end;

		fd = (int)strtol(e->d_name, &end, 10);
		if (*end != '\0' || e->d_name[0] == '\0' || fd == dirfd(d))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dlen) != 0 || dom != AF_PACKET)
			continue;
		memset(&sll, 0, sizeof(sll));
		if (getsockname(fd, (struct sockaddr *)&sll, &len) != 0 ||
			sll.sll_ifindex != ifindex)
			continue;
		if (n == max) {
			n = max + 1;
			break;
		}
		/* Insertion in order: a handful of queues. */
		for (i = n; i > 0 && fds[i - 1] > fd; i--)
			fds[i] = fds[i - 1];
		fds[i] = fd;
		n++;
	}
	closedir(d);
	return n;
}

/* The descriptor that tells of frames on queue of the port info describes, or -1. */
static int
queue_fd(const struct rte_eth_dev_info *info, uint16_t queue)
{
	int fds[DP_WAKE_MAX];
	unsigned n;

	if (strcmp(info->driver_name, "net_af_packet") != 0 || info->if_index == 0)
		return -1;
	n = packet_sockets((int)info->if_index, fds, DP_WAKE_MAX);
	/* The PMD opens one socket per queue pair (qpairs=): anything else is not its own. */
	if (n != info->max_rx_queues || queue >= n)
		return -1;
	return fds[queue];
}

void
dp_wake_init(struct dp_wake *wk, const uint16_t *ports, const uint16_t *queues, unsigned n,
	bool sole_worker)
{
	unsigned i;

	memset(wk, 0, sizeof(*wk));
	wk->by_traffic = n != 0;
	for (i = 0; i < n; i++) {
		struct rte_eth_dev_info info;
		int fd;

		if (rte_eth_dev_info_get(ports[i], &info) != 0 || info.driver_name == NULL) {
			wk->by_traffic = false;
			continue;
		}
		/*
		 * A tap's frame raises a signal, which ends the nap (dp_idle.h):
		 * this worker's, if it is the process's only one. The signal
		 * goes to the process, and any worker may take it.
		 */
		if (strcmp(info.driver_name, "net_tap") == 0) {
			if (!sole_worker)
				wk->by_traffic = false;
			continue;
		}
		fd = queue_fd(&info, queues[i]);
		if (fd < 0 || wk->n == DP_WAKE_MAX) {
			wk->by_traffic = false;
			continue;
		}
		wk->fds[wk->n].fd = fd;
		wk->fds[wk->n].events = POLLIN;
		wk->n++;
	}
	if (!wk->by_traffic)
		wk->n = 0;
}

bool
dp_wake_nap(struct dp_wake *wk, uint32_t us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};

	if (wk->n == 0 || us < DP_WAKE_MIN_US) {
		nanosleep(&ts, NULL);
		return false;
	}
	/* The realtime signals are let in (dp_worker_signals()): a tap's frame ends it too. */
	return ppoll(wk->fds, wk->n, &ts, NULL) > 0;
}
