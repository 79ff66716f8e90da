/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logging for the slow path only: start-up, control thread, shutdown.
 * Nothing on the packet path logs; it counts instead (see mux_drop.h).
 * Lines go to stderr as "<program>: <level>: message".
 */
#ifndef LB_LOG_H
#define LB_LOG_H

enum lb_log_level { LB_LOG_ERR, LB_LOG_WARN, LB_LOG_INFO, LB_LOG_DEBUG };

/* Set the program name shown on every line and the most verbose level. */
void lb_log_init(const char *prog, enum lb_log_level max);

void lb_log(enum lb_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LB_ERR(...) lb_log(LB_LOG_ERR, __VA_ARGS__)
#define LB_WARN(...) lb_log(LB_LOG_WARN, __VA_ARGS__)
#define LB_INFO(...) lb_log(LB_LOG_INFO, __VA_ARGS__)
#define LB_DEBUG(...) lb_log(LB_LOG_DEBUG, __VA_ARGS__)

#endif /* LB_LOG_H */
