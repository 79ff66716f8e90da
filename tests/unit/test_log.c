/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log lines as journald wants them: with stderr connected to the journal
 * (JOURNAL_STREAM naming its device and inode) every line starts with its
 * syslog priority and carries neither the program nor a time stamp, which
 * the journal adds; anywhere else the plain "prog: level: message".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lb_log.h"

/* stderr into a fresh temporary file, its name in path. */
static void
stderr_to_file(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/sluice-test-log.XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	close(fd);
}

static void
read_back(const char *path, char *buf, size_t len)
{
	FILE *f;
	size_t n;

	fflush(stderr);
	f = fopen(path, "r");
	cr_assert(f != NULL);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
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
	char path[64], id[64], other[80];

	stderr_to_file(path, sizeof(path));
	stream_id(STDERR_FILENO, id, sizeof(id));
	cr_expect(lb_log_is_journal_stream(id, STDERR_FILENO));
	/* another inode, a malformed value, none */
	snprintf(other, sizeof(other), "%s1", id);
	cr_expect_not(lb_log_is_journal_stream(other, STDERR_FILENO));
	cr_expect_not(lb_log_is_journal_stream("12:", STDERR_FILENO));
	cr_expect_not(lb_log_is_journal_stream("12:34x", STDERR_FILENO));
	cr_expect_not(lb_log_is_journal_stream("", STDERR_FILENO));
	cr_expect_not(lb_log_is_journal_stream(NULL, STDERR_FILENO));
	unlink(path);
}

Test(log, journal_lines_carry_the_priority_only)
{
	char path[64], id[64], out[1024];

	stderr_to_file(path, sizeof(path));
	stream_id(STDERR_FILENO, id, sizeof(id));
	setenv("JOURNAL_STREAM", id, 1);
	lb_log_init("sluice-test", LB_LOG_DEBUG);
	cr_assert(lb_log_journal());
	LB_ERR("bad %d", 1);
	LB_WARN("careful");
	LB_INFO("fine\nand more");
	LB_DEBUG("detail");
	read_back(path, out, sizeof(out));
	cr_expect_str_eq(out, "<3>bad 1\n<4>careful\n<6>fine and more\n<7>detail\n");
}

Test(log, plain_lines_elsewhere)
{
	char path[64], out[1024];

	stderr_to_file(path, sizeof(path));
	/* the journal's stream was another file: not ours */
	setenv("JOURNAL_STREAM", "1:1", 1);
	lb_log_init("sluice-test", LB_LOG_INFO);
	cr_assert_not(lb_log_journal());
	LB_ERR("bad");
	LB_INFO("fine");
	LB_DEBUG("not shown");
	read_back(path, out, sizeof(out));
	cr_expect_str_eq(out, "sluice-test: error: bad\nsluice-test: info: fine\n");
}

Test(log, forced_either_way)
{
	char path[64], out[1024];

	stderr_to_file(path, sizeof(path));
	unsetenv("JOURNAL_STREAM");
	lb_log_init("sluice-test", LB_LOG_INFO);
	lb_log_set_journal(true); /* --syslog-prefix */
	LB_WARN("w");
	lb_log_set_journal(false);
	LB_WARN("w");
	read_back(path, out, sizeof(out));
	cr_expect_str_eq(out, "<4>w\nsluice-test: warning: w\n");
	cr_expect_eq(lb_log_priority(LB_LOG_ERR), 3);
	cr_expect_eq(lb_log_priority(LB_LOG_DEBUG), 7);
}
