/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telling systemd how a daemon stands (sd_notify(3), Type=notify units in
 * deploy/systemd/): ready once it can do its job (a mux once it forwards:
 * its table loaded, or, managed, its first sync with the manager; the
 * manager after recovery), reloading for a SIGHUP, stopping at the end,
 * and a status line for `systemctl status`.
 *
 * libsystemd is optional (meson option "systemd", on when found); without
 * it, or outside a unit (no NOTIFY_SOCKET), every call does nothing.
 */
#ifndef LB_NOTIFY_H
#define LB_NOTIFY_H

#include <stdbool.h>

/* READY=1 with a STATUS= line (status may be NULL). */
void lb_notify_ready(const char *status);

/* RELOADING=1 (then lb_notify_ready() once the reload is done). */
void lb_notify_reloading(void);

/* STOPPING=1. */
void lb_notify_stopping(void);

/*
 * EXTEND_TIMEOUT_USEC: the unit's current timeout (a stop's TimeoutStopSec
 * while draining) runs at least ms more, with a STATUS= line.
 */
void lb_notify_extend(unsigned long long ms, const char *status);

/* STATUS= line alone. */
void lb_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Built with libsystemd (sd_notify does something under a unit). */
bool lb_notify_supported(void);

#endif /* LB_NOTIFY_H */
