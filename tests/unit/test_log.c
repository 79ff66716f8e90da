/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log lines as journald wants them: with stderr connected to the journal
 * (JOURNAL_STREAM naming its device and inode) every line starts with its
 * syslog priority and carries neither the program nor a time stamp, which
 * the journal adds; anywhere else the plain "prog: level: message".
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lb_err.h"
#include "lb_log.h"

/* The file stderr goes to while a test captures it (each test is a process of its own). */
static char capture_path[64];

/* stderr into a fresh temporary file. */
static void
capture_stderr(void)
{
	int fd;

	snprintf(capture_path, sizeof(capture_path), "/tmp/sluice-test-log.XXXXXX");
	fd = mkstemp(capture_path);
	cr_assert(fd >= 0);
	cr_assert(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	close(fd);
}

/* What was written to stderr since capture_stderr() must be want; the file goes. */
static void
expect_captured(const char *want)
{
	char out[1024];
	FILE *f;
	size_t n;

	fflush(stderr);
	f = fopen(capture_path, "r");
	cr_assert(f != NULL);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	unlink(capture_path);
	cr_expect_str_eq(out, want);
}

/* "DEV:INO" of what fd has open. */
static void
stream_id(int fd, char *buf, size_t len)
{
	struct stat st;

	cr_assert(fstat(fd, &st) == 0);
	snprintf(buf, len, "%lu:%lu", (unsigned long)st.st_dev, (unsigned long)st.st_ino);
}

Test(log, journal_stream_names_the_descriptor)
{
	char id[64], other[80];

	capture_stderr();
	stream_id(STDERR_FILENO, id, sizeof(id));
	cr_expect(lb_log_is_journal_stream(id, STDERR_FILENO));
	/* another inode, a malformed value, none */
	snprintf(other, sizeof(other), "%s1", id);
	cr_expect_not(lb_log_is_journal_stream(other, STDERR_FILENO));
	cr_expect_not(lb_log_is_journal_stream("12:", STDERR_FILENO));
	cr_expect_not(lb_log_is_journal_stream("12:34x", STDERR_FILENO));
	cr_expect_not(lb_log_is_journal_stream("", STDERR_FILENO));
	cr_expect_not(lb_log_is_journal_stream(NULL, STDERR_FILENO));
	unlink(capture_path);
}

Test(log, journal_lines_carry_the_priority_only)
{
	char id[64];

	capture_stderr();
	stream_id(STDERR_FILENO, id, sizeof(id));
	setenv("JOURNAL_STREAM", id, 1);
	lb_log_init("sluice-test", LB_LOG_DEBUG);
	cr_assert(lb_log_journal());
	LB_ERR("bad %d", 1);
	LB_WARN("careful");
	LB_INFO("fine\nand more");
	LB_DEBUG("detail");
	expect_captured("<3>bad 1\n<4>careful\n<6>fine and more\n<7>detail\n");
}

Test(log, plain_lines_elsewhere)
{
	capture_stderr();
	/* the journal's stream was another file: not ours */
	setenv("JOURNAL_STREAM", "1:1", 1);
	lb_log_init("sluice-test", LB_LOG_INFO);
	cr_assert_not(lb_log_journal());
	LB_ERR("bad");
	LB_INFO("fine");
	LB_DEBUG("not shown");
	expect_captured("sluice-test: error: bad\nsluice-test: info: fine\n");
}

Test(log, forced_either_way)
{
	capture_stderr();
	unsetenv("JOURNAL_STREAM");
	lb_log_init("sluice-test", LB_LOG_INFO);
	lb_log_set_journal(true); /* --syslog-prefix */
	LB_WARN("w");
	lb_log_set_journal(false);
	LB_WARN("w");
	expect_captured("<4>w\nsluice-test: warning: w\n");
	cr_expect_eq(lb_log_priority(LB_LOG_ERR), 3);
	cr_expect_eq(lb_log_priority(LB_LOG_DEBUG), 7);
}

/* Error codes of either sign name themselves; any other int is "unknown", INT_MIN too. */
Test(log, error_codes_either_sign_and_out_of_range)
{
	cr_expect_str_eq(lb_strerror(LB_EINVAL), "invalid argument");
	cr_expect_str_eq(lb_strerror(-LB_EINVAL), "invalid argument");
	cr_expect_str_eq(lb_errname(-LB_EINVAL), "INVAL");
	cr_expect_str_eq(lb_strerror(LB_E_MAX), "unknown error");
	cr_expect_str_eq(lb_strerror(-LB_E_MAX), "unknown error");
	cr_expect_str_eq(lb_strerror(INT_MAX), "unknown error");
	cr_expect_str_eq(lb_strerror(INT_MIN), "unknown error");
	cr_expect_str_eq(lb_errname(INT_MIN), "UNKNOWN");
}
