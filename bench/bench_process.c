/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process mode: the whole sluice-mux next to dpdk-testpmd, same devices,
 * same cores, same traffic, in one run.
 *
 * Device: one net_pcap port whose RX replays a pre-generated pcap of valid
 * TCP traffic forever (infinite_rx=1: the file is preloaded into mbufs and
 * each received packet is a copy of one of them) and whose TX frees what it
 * is given (no tx_pcap: the PMD's drop path, the same work net_null's TX
 * does). One port because sluice-mux sends a packet back out of the port it
 * came in on; testpmd runs the same single port in loop topology.
 *
 * Each process gets the main lcore on the first CPU and its one forwarding
 * lcore (sluice's worker, testpmd's fwd core) alone on the last CPU. The rate
 * is read from the port counters over the DPDK telemetry socket, twice, a
 * fixed interval apart, after a warm-up; start-up and the pcap preload are
 * therefore not in the figure. Rounds alternate testpmd io, testpmd macswap
 * and sluice, so drift on a shared machine hits all three alike.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "lb_dpdk.h"
#include "lb_hdr.h"

#define PROC_PCAP_PKTS 4096 /* distinct flows in the replayed file */
#define PROC_SERVICES 10
#define PROC_BACKENDS 100
#define PROC_MBUFS 12416 /* sluice-mux's pool with rx_desc = tx_desc = 4096 */
#define PROC_WARMUP_S 1.0
#define PROC_START_TIMEOUT_S 30.0
#define PROC_MAX_ROUNDS 16

enum proc_kind { PROC_TESTPMD_IO, PROC_TESTPMD_MACSWAP, PROC_SLUICE, PROC_KINDS };

static const char *const kind_name[PROC_KINDS] = {"testpmd io", "testpmd macswap", "sluice-mux"};

struct proc_sample {
	uint64_t ipackets;
	uint64_t opackets;
	uint64_t imissed;
	uint64_t rx_nombuf;
	double t;
};

struct proc_result {
	double rx_mpps;
	double tx_mpps;
	int ok;
};

static void
sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	nanosleep(&ts, NULL);
}

static uint64_t
json_u64(const char *js, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(js, pat);
	return p == NULL ? 0 : strtoull(p + strlen(pat), NULL, 10);
}

/* One telemetry query; reply into buf. Returns 0 or -1. */
static int
telemetry(const char *sock_path, const char *cmd, char *buf, size_t len)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	ssize_t n;
	int fd;

	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return -1;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
		goto fail;
	/* The server greets with its version and limits first. */
	if (read(fd, buf, len - 1) <= 0)
		goto fail;
	if (write(fd, cmd, strlen(cmd)) < 0)
		goto fail;
	n = read(fd, buf, len - 1);
	if (n <= 0)
		goto fail;
	buf[n] = '\0';
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

static int
sample(const char *sock, struct proc_sample *s)
{
	char buf[16384];

	if (telemetry(sock, "/ethdev/stats,0", buf, sizeof(buf)) != 0 ||
		strstr(buf, "ipackets") == NULL)
		return -1;
	s->t = bench_now_s();
	s->ipackets = json_u64(buf, "ipackets");
	s->opackets = json_u64(buf, "opackets");
	s->imissed = json_u64(buf, "imissed");
	s->rx_nombuf = json_u64(buf, "rx_nombuf");
	return 0;
}

static void
cpus(int *first, int *last)
{
	cpu_set_t set;
	int c;

	*first = -1;
	*last = 0;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (*first < 0)
			*first = c;
		*last = c;
	}
	if (*first < 0)
		*first = 0;
}

static int
write_mux_cfg(const char *path, const char *pcap, const char *prefix, int c0, int c1)
{
	FILE *f = fopen(path, "w");
	uint32_t s, b;

	if (f == NULL)
		return -1;
	fprintf(f,
		"# Written by sluice-bench --process.\n"
		"eal = [ \"--no-huge\", \"-m\", \"512\", \"--no-pci\", \"--lcores=0@%d,1@%d\",\n"
		"        \"--file-prefix=%s\", \"--log-level=lib.eal:warning\" ];\n"
		"mux = {\n"
		"\ttunnel_address = \"10.255.0.1\";\n"
		"\tnext_hop_mac = \"02:00:00:00:00:fe\";\n"
		"\tworkers = 1;\n"
		"\tbusy_poll = true;\n"
		"\trx_desc = 4096;\n"
		"\ttx_desc = 4096;\n"
		"\tconn_table = { entries = 65536; };\n"
		"};\n"
		"ports = ( { name = \"bench\"; devargs = \"net_pcap0,rx_pcap=%s,infinite_rx=1\"; } "
		");\n"
		"flow_table = {\n"
		"\thash_seed = \"5a1ce0f10e5eed5a1ce0f10e5eed0001\";\n"
		"\tmaglev_size = 65537;\n"
		"\tservices = (\n",
		c0, c1, prefix, pcap);
	for (s = 0; s < PROC_SERVICES; s++) {
		uint32_t vip = BENCH_VIP_BASE + s;

		fprintf(f,
			"\t\t{ vip = \"%u.%u.%u.%u\"; protocol = \"tcp\"; port = %u; backends = "
			"(\n",
			vip >> 24, (vip >> 16) & 255, (vip >> 8) & 255, vip & 255, BENCH_SVC_PORT);
		for (b = 0; b < PROC_BACKENDS; b++) {
			uint32_t id = s * PROC_BACKENDS + b;
			uint32_t dip = BENCH_DIP_BASE + id + 1, host = BENCH_HOST_BASE + id + 1;

			fprintf(f,
				"\t\t\t{ dip = \"%u.%u.%u.%u\"; port = %u; host = \"%u.%u.%u.%u\"; "
				"}%s\n",
				dip >> 24, (dip >> 16) & 255, (dip >> 8) & 255, dip & 255,
				BENCH_BE_PORT, host >> 24, (host >> 16) & 255, (host >> 8) & 255,
				host & 255, b + 1 < PROC_BACKENDS ? "," : "");
		}
		fprintf(f, "\t\t) }%s\n", s + 1 < PROC_SERVICES ? "," : "");
	}
	fprintf(f, "\t);\n};\n");
	return fclose(f) == 0 ? 0 : -1;
}

/*
 * Start one forwarder, measure it, stop it. Returns 0 with *res filled, or -1
 * (the log file says why).
 */
static int
run_one(const struct bench_opts *o, enum proc_kind kind, int round, const char *cfg,
	const char *pcap, const char *prefix, int c0, int c1, struct proc_result *res)
{
	char log[PATH_MAX], json[PATH_MAX], sock[PATH_MAX + 64], rundir[PATH_MAX];
	char lcores[32], vdev[PATH_MAX + 64], pfx[96], mbufs[48], buf[8192];
	/* The command lines: sluice-mux, or testpmd forwarding as kind says. */
	const char *mux_argv[] = {
		o->mux_path, "-c", cfg, "--busy-poll", "--quiet", "--stats-json", json, NULL};
	const char *pmd_argv[] = {o->testpmd, "-l", lcores, "--no-huge", "-m", "512", "--no-pci",
		pfx, vdev, "--log-level=lib.eal:warning", "--", "--no-flush-rx",
		kind == PROC_TESTPMD_IO ? "--forward-mode=io" : "--forward-mode=macswap",
		"--nb-cores=1", "--port-topology=loop", mbufs, "--rxd=4096", "--txd=4096",
		"--burst=32", NULL};
	const char *const *argv = kind == PROC_SLUICE ? mux_argv : pmd_argv;
	struct proc_sample a, b;
	int pipefd[2], fd, status = 0;
	double t0;
	pid_t pid;
	FILE *jf;

	memset(res, 0, sizeof(*res));
	snprintf(log, sizeof(log), "%s/%s-%d.log", o->workdir,
		kind == PROC_SLUICE	  ? "mux"
		: kind == PROC_TESTPMD_IO ? "testpmd-io"
					  : "testpmd-macswap",
		round);
	snprintf(json, sizeof(json), "%s/mux-%d.json", o->workdir, round);
	snprintf(rundir, sizeof(rundir), "/var/run/dpdk/%s", prefix);
	snprintf(sock, sizeof(sock), "/var/run/dpdk/%s/dpdk_telemetry.v2", prefix);
	if (kind != PROC_SLUICE) {
		snprintf(lcores, sizeof(lcores), "%d,%d", c0, c1);
		snprintf(vdev, sizeof(vdev), "--vdev=net_pcap0,rx_pcap=%s,infinite_rx=1", pcap);
		snprintf(pfx, sizeof(pfx), "--file-prefix=%s", prefix);
		snprintf(mbufs, sizeof(mbufs), "--total-num-mbufs=%d", PROC_MBUFS);
	}

	if (pipe(pipefd) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* testpmd without -i forwards until a line (or EOF) arrives on stdin. */
		dup2(pipefd[0], 0);
		close(pipefd[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pipefd[0]);

	/* Wait for the port to move packets, then warm up, then measure. */
	t0 = bench_now_s();
	while (sample(sock, &a) != 0 || a.ipackets == 0) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "sluice-bench: %s exited early, see %s\n", kind_name[kind],
				log);
			close(pipefd[1]);
			lb_remove_runtime_dir(rundir);
			return -1;
		}
		if (bench_now_s() - t0 > PROC_START_TIMEOUT_S)
			break;
		sleep_s(0.05);
	}
	sleep_s(PROC_WARMUP_S);
	if (sample(sock, &a) == 0) {
		sleep_s(o->seconds);
		if (sample(sock, &b) == 0) {
			res->rx_mpps = (double)(b.ipackets - a.ipackets) / (b.t - a.t) / 1e6;
			res->tx_mpps = (double)(b.opackets - a.opackets) / (b.t - a.t) / 1e6;
			res->ok = b.opackets > a.opackets;
		}
	}

	close(pipefd[1]); /* testpmd: EOF on stdin */
	if (kind == PROC_SLUICE)
		kill(pid, SIGINT);
	t0 = bench_now_s();
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (bench_now_s() - t0 > 10) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		sleep_s(0.05);
	}
	if (kind != PROC_SLUICE)
		lb_remove_runtime_dir(rundir);
	if (!res->ok) {
		fprintf(stderr, "sluice-bench: %s: no packets measured, see %s\n", kind_name[kind],
			log);
		return -1;
	}
	if (kind == PROC_SLUICE) {
		/* Sanity: everything the mux received was forwarded, bar nothing. */
		jf = fopen(json, "r");
		if (jf != NULL) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, jf);

			buf[n] = '\0';
			fclose(jf);
			if (json_u64(buf, "rx_pkts") != json_u64(buf, "fwd_pkts")) {
				fprintf(stderr,
					"sluice-bench: sluice-mux received %" PRIu64
					" but forwarded %" PRIu64 " (see %s)\n",
					json_u64(buf, "rx_pkts"), json_u64(buf, "fwd_pkts"), json);
				res->ok = 0;
			}
		}
	}
	return res->ok ? 0 : -1;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(const double *v, int n)
{
	double s[PROC_MAX_ROUNDS];

	memcpy(s, v, sizeof(*v) * (size_t)n);
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int
bench_process(const struct bench_opts *o)
{
	char pcap[PATH_MAX], cfg[PATH_MAX], prefix[64];
	double tx[PROC_KINDS][PROC_MAX_ROUNDS], rio[PROC_MAX_ROUNDS], rms[PROC_MAX_ROUNDS];
	struct proc_result r;
	int rounds = o->repeat < 1 ? 1 : o->repeat > PROC_MAX_ROUNDS ? PROC_MAX_ROUNDS : o->repeat;
	int c0, c1, i, k, rc = 0;

	if (mkdir(o->workdir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "sluice-bench: cannot create %s\n", o->workdir);
		return 1;
	}
	if (access(o->mux_path, X_OK) != 0 || access(o->testpmd, X_OK) != 0) {
		fprintf(stderr, "sluice-bench: need %s and %s\n", o->mux_path, o->testpmd);
		return 1;
	}
	cpus(&c0, &c1);
	snprintf(pcap, sizeof(pcap), "%s/in.pcap", o->workdir);
	snprintf(cfg, sizeof(cfg), "%s/mux.cfg", o->workdir);
	snprintf(prefix, sizeof(prefix), "sbm-%d", (int)getpid());
	if (bench_write_pcap(pcap, PROC_PCAP_PKTS, PROC_SERVICES, LB_TCP_ACK, o->frame_len) != 0 ||
		write_mux_cfg(cfg, pcap, prefix, c0, c1) != 0) {
		fprintf(stderr, "sluice-bench: cannot write %s or %s\n", pcap, cfg);
		return 1;
	}
	printf("sluice-bench process: net_pcap infinite_rx (%d flows, %d-byte frames) -> "
	       "same port TX drop;\n  main lcore on CPU %d, forwarding lcore on CPU %d; "
	       "%.1f s warm-up, %.1f s measured, %d rounds\n",
		PROC_PCAP_PKTS, o->frame_len, c0, c1, PROC_WARMUP_S, o->seconds, rounds);
	printf("%-6s %16s %16s %16s %9s %9s\n", "round", "testpmd io Mpps", "macswap Mpps",
		"sluice Mpps", "s/io", "s/macswap");
	for (i = 0; i < rounds; i++) {
		for (k = 0; k < PROC_KINDS; k++) {
			char pfx[80];

			snprintf(pfx, sizeof(pfx), "%s-%d-%d", prefix, i, k);
			if (k == PROC_SLUICE) {
				/* The config names its prefix; rewrite it per run. */
				write_mux_cfg(cfg, pcap, pfx, c0, c1);
			}
			if (run_one(o, (enum proc_kind)k, i, cfg, pcap, pfx, c0, c1, &r) != 0)
				rc = 1;
			tx[k][i] = r.tx_mpps;
		}
		rio[i] = tx[PROC_SLUICE][i] / tx[PROC_TESTPMD_IO][i];
		rms[i] = tx[PROC_SLUICE][i] / tx[PROC_TESTPMD_MACSWAP][i];
		printf("%-6d %16.3f %16.3f %16.3f %9.3f %9.3f\n", i, tx[0][i], tx[1][i], tx[2][i],
			rio[i], rms[i]);
		fflush(stdout);
	}
	printf("%-6s %16.3f %16.3f %16.3f %9.3f %9.3f\n", "median", median(tx[0], rounds),
		median(tx[1], rounds), median(tx[2], rounds), median(rio, rounds),
		median(rms, rounds));
	return rc;
}
