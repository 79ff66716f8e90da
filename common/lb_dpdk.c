/* SPDX-License-Identifier: BSD-3-Clause */
#include <assert.h>
#include <dirent.h>
#include <pcap/pcap.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "lb_dpdk.h"
#include "lb_types.h"

/* lb_types.h reads the byte order from the compiler; DPDK must see the same one. */
static_assert(LB_LITTLE_ENDIAN == (RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN),
	"lb_types.h and DPDK disagree on the byte order");
static_assert(sizeof(lb_be16_t) == sizeof(rte_be16_t) && sizeof(lb_be32_t) == sizeof(rte_be32_t) &&
		      sizeof(lb_be64_t) == sizeof(rte_be64_t),
	"lb_be*_t and rte_be*_t differ in size");

static int
has_arg(const char *const *args, int n, const char *prefix)
{
	int i;

	for (i = 0; i < n; i++)
		if (strncmp(args[i], prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

void
lb_eal_argv_build(
	struct lb_eal_argv *ea, const char *prog, const char *const *args, int n, unsigned workers)
{
	char cpus[256] = "";
	cpu_set_t set;
	size_t off = 0;
	int c;

	ea->argc = 0;
	ea->argv[ea->argc++] = (char *)prog;
	for (c = 0; c < n && ea->argc < 92; c++)
		ea->argv[ea->argc++] = (char *)args[c];
	if (!has_arg(args, n, "-l") && !has_arg(args, n, "--lcores") && !has_arg(args, n, "-c")) {
		CPU_ZERO(&set);
		sched_getaffinity(0, sizeof(set), &set);
		for (c = 0; c < CPU_SETSIZE && off < sizeof(cpus) - 8; c++)
			if (CPU_ISSET(c, &set))
				off += (size_t)snprintf(
					cpus + off, sizeof(cpus) - off, "%s%d", off ? "," : "", c);
		/* One group: every lcore may run on every CPU we may use. */
		snprintf(ea->lcores, sizeof(ea->lcores), "--lcores=(0-%u)@(%s)", workers, cpus);
		ea->argv[ea->argc++] = ea->lcores;
	}
	if (!has_arg(args, n, "--file-prefix")) {
		snprintf(
			ea->prefix, sizeof(ea->prefix), "--file-prefix=%s-%d", prog, (int)getpid());
		ea->argv[ea->argc++] = ea->prefix;
	}
	ea->argv[ea->argc] = NULL;
}

int
lb_port_start(const char *devargs, uint16_t nb_rxq, uint16_t nb_txq, uint16_t nb_desc,
	struct rte_mempool *mp, struct rte_ether_addr *mac, char *errbuf, size_t len)
{
	struct rte_eth_conf conf = {0};
	char name[64];
	uint16_t id, q;
	int rc;

	if (rte_dev_probe(devargs) != 0) {
		snprintf(errbuf, len, "cannot probe \"%s\"", devargs);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(devargs, ","), devargs);
	if (rte_eth_dev_get_port_by_name(name, &id) != 0) {
		snprintf(errbuf, len, "no ethdev named \"%s\"", name);
		return -1;
	}
	rc = rte_eth_dev_configure(id, nb_rxq, nb_txq, &conf);
	for (q = 0; rc == 0 && q < nb_rxq; q++)
		rc = rte_eth_rx_queue_setup(id, q, nb_desc, rte_eth_dev_socket_id(id), NULL, mp);
	for (q = 0; rc == 0 && q < nb_txq; q++)
		rc = rte_eth_tx_queue_setup(id, q, nb_desc, rte_eth_dev_socket_id(id), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(id);
	if (rc != 0) {
		snprintf(errbuf, len, "\"%s\": %s", devargs, strerror(-rc));
		return -1;
	}
	/* Promiscuous for frames to other MACs; all-multicast too, since some
	 * NICs filter multicast even when promiscuous, and IPv6 neighbor
	 * solicitations go to solicited-node groups. Either may be unsupported
	 * (virtual devices); that is not an error. */
	rte_eth_promiscuous_enable(id);
	rte_eth_allmulticast_enable(id);
	rte_eth_macaddr_get(id, mac);
	return id;
}

static volatile bool *lb_quit;
static volatile sig_atomic_t lb_reload;

static void
lb_on_signal(int sig)
{
	if (sig == SIGHUP)
		lb_reload = 1;
	else if (lb_quit != NULL)
		*lb_quit = true;
}

void
lb_signals_install(volatile bool *quit)
{
	lb_quit = quit;
	signal(SIGINT, lb_on_signal);
	signal(SIGTERM, lb_on_signal);
	signal(SIGHUP, lb_on_signal);
}

bool
lb_reload_requested(void)
{
	if (!lb_reload)
		return false;
	lb_reload = 0;
	return true;
}

void
lb_remove_runtime_dir(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	rmdir(dir);
}

/* Packets in a pcap file, or -1 if it cannot be read. */
static int64_t
pcap_count(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *pc;
	int64_t n = 0;

	pc = pcap_open_offline(path, err);
	if (pc == NULL)
		return -1;
	while (pcap_next_ex(pc, &h, &d) == 1)
		n++;
	pcap_close(pc);
	return n;
}

int
lb_devargs_pcaps(const char *devargs, unsigned *files, int *others, uint64_t *pkts, char *errbuf,
	size_t errlen)
{
	char buf[512], *save = NULL, *tok;

	*files = 0;
	*others = 0;
	snprintf(buf, sizeof(buf), "%s", devargs);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "rx_pcap=", 8) == 0) {
			int64_t n = pcap_count(tok + 8);

			if (n < 0) {
				snprintf(errbuf, errlen, "cannot read pcap file %s", tok + 8);
				return -1;
			}
			*pkts += (uint64_t)n;
			(*files)++;
		} else if (strncmp(tok, "rx_iface", 8) == 0 || strncmp(tok, "iface=", 6) == 0) {
			(*others)++;
		}
	}
	return 0;
}

/*
 * rte_log() formats a message into its stream and flushes it: each write
 * here is one message, or the rest of one. A line that starts gets the
 * priority of the message being written (RTE_LOG_EMERG is 1, LOG_EMERG 0).
 */
static ssize_t
journal_write(void *cookie, const char *buf, size_t size)
{
	static bool at_line_start = true;
	int prio = (int)rte_log_cur_msg_loglevel() - 1;
	size_t i, from = 0;

	(void)cookie;
	if (prio < 0 || prio > 7)
		prio = 6;
	for (i = 0; i < size; i++) {
		if (at_line_start)
			fprintf(stderr, "<%d>", prio);
		at_line_start = buf[i] == '\n';
		if (at_line_start || i + 1 == size) {
			fwrite(buf + from, 1, i + 1 - from, stderr);
			from = i + 1;
		}
	}
	return (ssize_t)size;
}

void
lb_eal_log_journal(void)
{
	static const cookie_io_functions_t io = {.write = journal_write};
	FILE *f = fopencookie(NULL, "w", io);

	if (f != NULL)
		rte_openlog_stream(f);
}
