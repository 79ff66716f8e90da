/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sluice error codes.
 *
 * One X-macro list generates the enum, the short names and the messages, so
 * the three can never drift apart. Functions return 0 on success or a
 * negative enum lb_err value; lb_strerror() accepts either sign.
 */
#ifndef LB_ERR_H
#define LB_ERR_H

#include <stddef.h>

#define LB_ERR_MAP(X)                                                                              \
	X(OK, "success")                                                                           \
	X(NOMEM, "out of memory")                                                                  \
	X(INVAL, "invalid argument")                                                               \
	X(RANGE, "value out of range")                                                             \
	X(PARSE, "malformed value")                                                                \
	X(EXIST, "already exists")                                                                 \
	X(NOENT, "no such entry")                                                                  \
	X(FULL, "table full")                                                                      \
	X(IO, "input/output error")                                                                \
	X(CONFIG, "configuration error")                                                           \
	X(DPDK, "DPDK call failed")                                                                \
	X(UNSUPPORTED, "not supported")                                                            \
	X(PROTOCOL, "peer speaks another protocol version")

enum lb_err {
#define LB_ERR_ENUM(name, msg) LB_E##name,
	LB_ERR_MAP(LB_ERR_ENUM)
#undef LB_ERR_ENUM
		LB_E_MAX
};

/* Message for an error code; accepts LB_E* or -LB_E*. Never NULL. */
const char *lb_strerror(int err);

/* Short upper-case name ("NOMEM") for an error code; never NULL. */
const char *lb_errname(int err);

/*
 * The error paths' one line: the message into err (len bytes, truncated
 * as snprintf() does), and rc back, so "return lb_fail(err, len, -LB_EPARSE,
 * ...)" says what went wrong and returns its code.
 */
int lb_fail(char *err, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A constructor's first step: calloc(1, size), or NULL with "WHAT: out of
 * memory" in err ("out of memory" when what is NULL).
 */
void *lb_zalloc(size_t size, const char *what, char *err, size_t len);

#endif /* LB_ERR_H */
