/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>

#include "lb_log.h"

static const char *lb_log_prog = "sluice";
static enum lb_log_level lb_log_max = LB_LOG_INFO;

static const char *const lb_log_names[] = {
	[LB_LOG_ERR] = "error",
	[LB_LOG_WARN] = "warning",
	[LB_LOG_INFO] = "info",
	[LB_LOG_DEBUG] = "debug",
};

void
lb_log_init(const char *prog, enum lb_log_level max)
{
	lb_log_prog = prog;
	lb_log_max = max;
}

void
lb_log(enum lb_log_level lvl, const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	if (lvl > lb_log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line so lines from threads do not interleave. */
	fprintf(stderr, "%s: %s: %s\n", lb_log_prog, lb_log_names[lvl], line);
}
