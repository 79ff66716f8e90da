/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process plumbing every Sluice DPDK daemon shares: the EAL argument list
 * (lcore map and a per-process file prefix added unless given), a simple
 * one-queue port bring-up, and removal of the runtime folder on exit.
 */
#ifndef LB_DPDK_H
#define LB_DPDK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mempool;
struct rte_ether_addr;

struct lb_eal_argv {
	char *argv[96];
	int argc;
	char lcores[1024];
	char prefix[96];
};

/*
 * Build the EAL argv: prog, args[0..n), then "--lcores=(0-W)@(cpus)" (main
 * lcore plus workers, each allowed on every CPU this process may use)
 * unless args set lcores, and "--file-prefix=<name>-<pid>" unless given.
 */
void lb_eal_argv_build(
	struct lb_eal_argv *ea, const char *prog, const char *const *args, int n, unsigned workers);

/*
 * Probe devargs and start it with nb_rxq RX and nb_txq TX queues, promiscuous.
 * Returns the port id, or -1 with a message in errbuf.
 */
int lb_port_start(const char *devargs, uint16_t nb_rxq, uint16_t nb_txq, uint16_t nb_desc,
	struct rte_mempool *mp, struct rte_ether_addr *mac, char *errbuf, size_t len);

/*
 * For --exit-on-eof: count the rx_pcap= inputs of devargs into *files and
 * their packets into *pkts (added), and other live inputs (iface=...) into
 * *others. Returns 0, or -1 with a message if a file cannot be read.
 */
int lb_devargs_pcaps(const char *devargs, unsigned *files, int *others, uint64_t *pkts,
	char *errbuf, size_t errlen);

/*
 * The daemons' signals: SIGINT and SIGTERM set *quit (checked by the
 * lcores' loops), SIGHUP asks for a reload that the main thread takes with
 * lb_reload_requested() (true once per SIGHUP).
 */
void lb_signals_install(volatile bool *quit);

bool lb_reload_requested(void);

/*
 * EAL's log lines (rte_log) as journald wants them, before rte_eal_init():
 * "<N>" (N = the line's level as a syslog priority) at the start of each,
 * on stderr only. Without it EAL writes to stdout and to syslog, so under
 * systemd every line would reach the journal twice.
 */
void lb_eal_log_journal(void);

/* Remove the files of a DPDK runtime folder and the folder. */
void lb_remove_runtime_dir(const char *dir);

#endif /* LB_DPDK_H */
