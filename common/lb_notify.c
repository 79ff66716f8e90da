/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sd_notify(3) when built with libsystemd (LB_HAVE_SYSTEMD), nothing
 * otherwise (lb_notify.h). sd_notify() itself does nothing when the
 * process was not started by a Type=notify unit (no NOTIFY_SOCKET).
 */
#include <stdarg.h>
#include <stdio.h>

#ifdef LB_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "lb_notify.h"

static void
notify(const char *state)
{
#ifdef LB_HAVE_SYSTEMD
	/* unset_environment 0: threads started later may still notify */
	sd_notify(0, state);
#else
	(void)state;
#endif
}

void
lb_notify_ready(const char *status)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "READY=1%s%s", status != NULL ? "\nSTATUS=" : "",
		status != NULL ? status : "");
	notify(msg);
}

void
lb_notify_reloading(void)
{
	notify("RELOADING=1");
}

void
lb_notify_stopping(void)
{
	notify("STOPPING=1");
}

void
lb_notify_extend(unsigned long long ms, const char *status)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "EXTEND_TIMEOUT_USEC=%llu\nSTATUS=%s", ms * 1000ull,
		status != NULL ? status : "");
	notify(msg);
}

void
lb_notify_status(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "STATUS=");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	notify(msg);
}

bool
lb_notify_supported(void)
{
#ifdef LB_HAVE_SYSTEMD
	return true;
#else
	return false;
#endif
}
