/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logging for the slow path only: start-up, control thread, shutdown.
 * Nothing on the packet path logs; it counts instead (see lb_drop.h).
 *
 * Two line formats on stderr:
 *   plain    "<program>: <level>: message", for a terminal or a file
 *   journal  "<N>message", N the syslog priority (3 err, 4 warning,
 *            6 info, 7 debug), for journald (systemd.exec(5), "SyslogLevelPrefix",
 *            sd-daemon(3)): it takes the priority from the prefix and
 *            stamps the time and the program itself, so neither is
 *            written twice.
 * lb_log_init() picks the journal format when stderr is the journal's
 * stream (JOURNAL_STREAM names stderr's device and inode: systemd sets it
 * for a unit's StandardError=journal); lb_log_set_journal() forces either
 * (--syslog-prefix).
 */
#ifndef LB_LOG_H
#define LB_LOG_H

#include <stdbool.h>

enum lb_log_level { LB_LOG_ERR, LB_LOG_WARN, LB_LOG_INFO, LB_LOG_DEBUG };

/*
 * Set the program name shown on every line and the most verbose level;
 * the journal format if stderr is the journal (JOURNAL_STREAM).
 */
void lb_log_init(const char *prog, enum lb_log_level max);

/* Force the journal format on or off. */
void lb_log_set_journal(bool on);

/* The journal format is in use. */
bool lb_log_journal(void);

/* The syslog priority (LOG_ERR ... LOG_DEBUG) of a level. */
int lb_log_priority(enum lb_log_level lvl);

/*
 * Whether the JOURNAL_STREAM value env ("DEVICE:INODE", or NULL) names the
 * file open on fd (a test seam for lb_log_init()).
 */
bool lb_log_is_journal_stream(const char *env, int fd);

void lb_log(enum lb_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LB_ERR(...) lb_log(LB_LOG_ERR, __VA_ARGS__)
#define LB_WARN(...) lb_log(LB_LOG_WARN, __VA_ARGS__)
#define LB_INFO(...) lb_log(LB_LOG_INFO, __VA_ARGS__)
#define LB_DEBUG(...) lb_log(LB_LOG_DEBUG, __VA_ARGS__)

#endif /* LB_LOG_H */
