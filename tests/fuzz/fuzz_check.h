/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the harnesses share: an assertion that stays on in release builds
 * (NDEBUG must not turn a fuzzer's invariant into nothing) and, for the
 * harnesses that need DPDK, a one-time EAL start whose runtime folder is
 * removed when the process exits.
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#ifdef FUZZ_WITH_EAL
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "lb_dpdk.h"

static char fuzz_rundir[PATH_MAX];

static void
fuzz_eal_atexit(void)
{
	lb_remove_runtime_dir(fuzz_rundir);
}

/* Start EAL once, without hugepages or PCI, under file prefix <name>-<pid>. */
static inline void
fuzz_eal_init(const char *name)
{
	static char prefix[96];
	char *argv[] = {(char *)name, (char *)"--no-huge", (char *)"-m", (char *)"256",
		(char *)"--no-pci", (char *)"--no-telemetry", prefix, (char *)"--log-level=0",
		NULL};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s-%d", name, (int)getpid());
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "%s: EAL init failed: %s\n", name, rte_strerror(rte_errno));
		exit(1);
	}
	snprintf(fuzz_rundir, sizeof(fuzz_rundir), "%s", rte_eal_get_runtime_dir());
	atexit(fuzz_eal_atexit);
}
#endif

#endif /* FUZZ_CHECK_H */
