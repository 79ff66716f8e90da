/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lb_err.h"

/* Each table ends in the entry for a code out of range, at LB_E_MAX. */
static const char *const lb_err_msgs[LB_E_MAX + 1] = {
#define LB_ERR_MSG(name, msg) [LB_E##name] = msg,
	LB_ERR_MAP(LB_ERR_MSG)
#undef LB_ERR_MSG
		[LB_E_MAX] = "unknown error",
};

static const char *const lb_err_names[LB_E_MAX + 1] = {
#define LB_ERR_NAME(name, msg) [LB_E##name] = #name,
	LB_ERR_MAP(LB_ERR_NAME)
#undef LB_ERR_NAME
		[LB_E_MAX] = "UNKNOWN",
};

/* An error code of either sign as its place in the tables. */
static int
err_slot(int err)
{
	/* Not abs(): abs(INT_MIN) is undefined. */
	if (err < 0)
		return err > -LB_E_MAX ? -err : LB_E_MAX;
	return err < LB_E_MAX ? err : LB_E_MAX;
}

const char *
lb_strerror(int err)
{
	return lb_err_msgs[err_slot(err)];
}

const char *
lb_errname(int err)
{
	return lb_err_names[err_slot(err)];
}

int
lb_fail(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}

void *
lb_zalloc(size_t size, const char *what, char *err, size_t len)
{
	void *p = calloc(1, size);

	if (p == NULL)
		snprintf(err, len, "%s%sout of memory", what ? what : "", what ? ": " : "");
	return p;
}
