/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "lb_log.h"

static const char *lb_log_prog = "sluice";
static enum lb_log_level lb_log_max = LB_LOG_INFO;
static bool lb_log_journal_on;
static bool lb_log_time_on; /* SLUICE_LOG_TIME set: each line begins with the time */

static const char *const lb_log_names[] = {
	[LB_LOG_ERR] = "error",
	[LB_LOG_WARN] = "warning",
	[LB_LOG_INFO] = "info",
	[LB_LOG_DEBUG] = "debug",
};

static const int lb_log_prio[] = {
	[LB_LOG_ERR] = LOG_ERR,
	[LB_LOG_WARN] = LOG_WARNING,
	[LB_LOG_INFO] = LOG_INFO,
	[LB_LOG_DEBUG] = LOG_DEBUG,
};

bool
lb_log_is_journal_stream(const char *env, int fd)
{
	uintmax_t dev, ino;
	struct stat st;
	char end;

	/* systemd writes "%lu:%lu" (st_dev, st_ino) of the stream it connected. */
	if (env == NULL || sscanf(env, "%ju:%ju%c", &dev, &ino, &end) != 2)
		return false;
	if (fstat(fd, &st) != 0)
		return false;
	return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

void
lb_log_init(const char *prog, enum lb_log_level max)
{
	lb_log_prog = prog;
	lb_log_max = max;
	lb_log_journal_on = lb_log_is_journal_stream(getenv("JOURNAL_STREAM"), STDERR_FILENO);
	lb_log_time_on = getenv("SLUICE_LOG_TIME") != NULL;
}

void
lb_log_set_journal(bool on)
{
	lb_log_journal_on = on;
}

bool
lb_log_journal(void)
{
	return lb_log_journal_on;
}

int
lb_log_priority(enum lb_log_level lvl)
{
	return lb_log_prio[lvl];
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
	if (lb_log_journal_on) {
		char *c;

		/* A line without its own prefix would be logged as info. */
		for (c = line; *c != '\0'; c++)
			if (*c == '\n')
				*c = ' ';
		fprintf(stderr, "<%d>%s\n", lb_log_prio[lvl], line);
	} else if (lb_log_time_on) {
		struct timeval tv;
		struct tm tm;

		gettimeofday(&tv, NULL);
		localtime_r(&tv.tv_sec, &tm);
		fprintf(stderr, "%02d:%02d:%02d.%03ld %s: %s: %s\n", tm.tm_hour, tm.tm_min,
			tm.tm_sec, (long)tv.tv_usec / 1000, lb_log_prog, lb_log_names[lvl], line);
	} else {
		fprintf(stderr, "%s: %s: %s\n", lb_log_prog, lb_log_names[lvl], line);
	}
}
