/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-bench: command line. See docs/performance.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#ifndef SLUICE_MUX_PATH
#define SLUICE_MUX_PATH "sluice-mux"
#endif

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: sluice-bench [--micro | --agent] [--process] [options]\n"
		"  --micro            drive mux_burst() with pre-built mbufs (the default)\n"
		"  --agent            drive the host agent's decapsulation and DSR the same way\n"
		"  --workers 2        micro mode: each scenario also on two lcores at once, each\n"
		"                     worker with its own table (per-worker cycles, side by side)\n"
		"  --process          run sluice-mux and dpdk-testpmd io/macswap on net_pcap\n"
		"  --smoke            a short sanity run of the micro mode, or with --agent the\n"
		"                     agent's (every frame checked, no timing verdicts)\n"
		"  --only NAME        run one micro scenario (e.g. est-1m-zipf)\n"
		"  --seconds S        timed seconds per micro scenario or per process run (2)\n"
		"  --repeat N         runs per micro scenario (median kept), process rounds (3)\n"
		"  --hugepages        micro mode on hugepages (mount /dev/hugepages first)\n"
		"  --csv FILE         append micro results to FILE\n"
		"  --mux PATH         sluice-mux binary (%s)\n"
		"  --testpmd PATH     dpdk-testpmd binary (/usr/bin/dpdk-testpmd)\n"
		"  --workdir DIR      process mode scratch directory (/tmp/sluice-bench-PID)\n"
		"  --frame-size N     process mode: bytes per frame, 60..1494 (60)\n",
		SLUICE_MUX_PATH);
}

/* An integer option's value in lo..hi into *v; 0, or -1 having said why. */
static int
int_arg(const char *opt, const char *arg, long lo, long hi, long *v)
{
	char *end;

	*v = strtol(arg, &end, 10);
	if (*end == '\0' && end != arg && *v >= lo && *v <= hi)
		return 0;
	fprintf(stderr, "sluice-bench: %s wants %ld..%ld\n", opt, lo, hi);
	return -1;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"micro", no_argument, NULL, 'M'},
		{"agent", no_argument, NULL, 'A'},
		{"workers", required_argument, NULL, 'W'},
		{"process", no_argument, NULL, 'P'},
		{"smoke", no_argument, NULL, 'S'},
		{"only", required_argument, NULL, 'o'},
		{"seconds", required_argument, NULL, 's'},
		{"repeat", required_argument, NULL, 'r'},
		{"hugepages", no_argument, NULL, 'H'},
		{"csv", required_argument, NULL, 'c'},
		{"mux", required_argument, NULL, 'm'},
		{"testpmd", required_argument, NULL, 't'},
		{"workdir", required_argument, NULL, 'w'},
		{"frame-size", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct bench_opts o = {
		.seconds = 2.0,
		.repeat = 3,
		.workers = 1,
		.mux_path = SLUICE_MUX_PATH,
		.testpmd = "/usr/bin/dpdk-testpmd",
		.frame_len = BENCH_FRAME_LEN,
	};
	char workdir[64];
	char *end;
	long v;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'M':
			o.micro = true;
			break;
		case 'A':
			o.agent = true;
			break;
		case 'W':
			if (int_arg("--workers", optarg, 1, 2, &v) != 0)
				return 2;
			o.workers = (int)v;
			break;
		case 'P':
			o.process = true;
			break;
		case 'S':
			o.smoke = true; /* of the micro mode, or with --agent of the agent's */
			break;
		case 'o':
			o.only = optarg;
			break;
		case 's':
			o.seconds = strtod(optarg, &end);
			if (*end != '\0' || o.seconds <= 0 || o.seconds > 600) {
				fprintf(stderr, "sluice-bench: --seconds wants 0..600\n");
				return 2;
			}
			break;
		case 'r':
			if (int_arg("--repeat", optarg, 1, 16, &v) != 0)
				return 2;
			o.repeat = (int)v;
			break;
		case 'H':
			o.hugepages = true;
			break;
		case 'f':
			if (int_arg("--frame-size", optarg, BENCH_FRAME_LEN, BENCH_FRAME_MAX, &v) !=
				0)
				return 2;
			o.frame_len = (uint16_t)v;
			break;
		case 'c':
			o.csv = optarg;
			break;
		case 'm':
			o.mux_path = optarg;
			break;
		case 't':
			o.testpmd = optarg;
			break;
		case 'w':
			o.workdir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (o.agent && o.micro) {
		fprintf(stderr,
			"sluice-bench: --agent and --micro each start the EAL: one at a time\n");
		return 2;
	}
	if ((!o.micro && !o.process && !o.agent) || (o.smoke && !o.agent))
		o.micro = true;
	if (o.workdir == NULL) {
		snprintf(workdir, sizeof(workdir), "/tmp/sluice-bench-%d", (int)getpid());
		o.workdir = workdir;
	}
	/* Process mode first: it forks, and EAL must not be up in the parent yet. */
	if (o.process)
		rc |= bench_process(&o);
	if (o.micro)
		rc |= bench_micro(&o, argv[0]);
	if (o.agent)
		rc |= bench_agent(&o, argv[0]);
	return rc;
}
