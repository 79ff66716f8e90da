/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lb_err.h"

static const char *const lb_err_msgs[] = {
#define LB_ERR_MSG(name, msg) [LB_E##name] = msg,
	LB_ERR_MAP(LB_ERR_MSG)
#undef LB_ERR_MSG
};

static const char *const lb_err_names[] = {
#define LB_ERR_NAME(name, msg) [LB_E##name] = #name,
	LB_ERR_MAP(LB_ERR_NAME)
#undef LB_ERR_NAME
};

const char *
lb_strerror(int err)
{
	err = abs(err);
	if (err >= LB_E_MAX)
		return "unknown error";
	return lb_err_msgs[err];
}

const char *
lb_errname(int err)
{
	err = abs(err);
	if (err >= LB_E_MAX)
		return "UNKNOWN";
	return lb_err_names[err];
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
