/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection for the HA tests (mgr_crash.h). */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb_log.h"
#include "mgr_crash.h"

bool
mgr_fault_at(const char *step)
{
	const char *at = getenv("SLUICE_TEST_CRASH_AT"), *once;
	int fd;

	if (at == NULL || strcmp(at, step) != 0)
		return false;
	once = getenv("SLUICE_TEST_CRASH_ONCE");
	if (once != NULL) {
		fd = open(once, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			return false; /* another manager met it already */
		close(fd);
	}
	LB_WARN("SLUICE_TEST_CRASH_AT=%s: the fault is here", step);
	return true;
}

void
mgr_crash_at(const char *step)
{
	if (!mgr_fault_at(step))
		return;
	LB_WARN("SLUICE_TEST_CRASH_AT=%s: killing this manager here", step);
	raise(SIGKILL);
}
