/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Text the manager produces for people and programs: a growing buffer,
 * JSON string escaping, and the one way services, backends and digests are
 * spelt everywhere (logs, history summaries, sluicectl replies), so that an
 * operator can grep one form: "tcp 10.0.0.10:80", "10.1.1.13:8080".
 */
#ifndef MGR_TEXT_H
#define MGR_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_codec.h"
#include "lb_ftable.h"

struct mgr_buf {
	char *mb_p;
	size_t mb_len;
	size_t mb_cap;
	bool mb_oom; /* an append failed: the text is truncated */
};

void mgr_buf_printf(struct mgr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append s as a quoted JSON string. */
void mgr_buf_json_str(struct mgr_buf *b, const char *s);

/* The text (never NULL; "" when empty); stays owned by b. */
const char *mgr_buf_str(const struct mgr_buf *b);

/* Hand the malloc'd text over (NULL when empty or out of memory). */
char *mgr_buf_take(struct mgr_buf *b);

void mgr_buf_free(struct mgr_buf *b);

/* IPv6 in brackets, as ipvsadm and HAProxy write it: "tcp [2001:db8::10]:80". */
#define MGR_SVC_STR 64 /* "udp [" + LB_ADDR_STRLEN + "]:65535" */
#define MGR_BE_STR 56  /* "[" + LB_ADDR_STRLEN + "]:65535" */
#define MGR_HEX_DIGEST (2 * LB_DIGEST_LEN + 1)

const char *mgr_svc_str(const struct lb_service_cfg *s, char *buf, size_t len);
const char *mgr_key_str(const struct lb_svc_key *k, char *buf, size_t len);
/* A backend of a service of family af: "10.1.1.11:8080", "[2001:db8:1::11]:8080". */
const char *mgr_be_str(uint8_t af, const struct lb_backend_cfg *b, char *buf, size_t len);
/* A backend's host (PA), plain: "10.99.0.3", "2001:db8:99::3". */
const char *mgr_host_str(const struct lb_backend_cfg *b, char *buf, size_t len);
const char *mgr_digest_hex(const uint8_t d[LB_DIGEST_LEN], char out[MGR_HEX_DIGEST]);
const char *mgr_state_name(uint8_t state);
const char *mgr_role_name(enum lb_role role);

/* UTC "2024-05-01T12:00:00Z" of a Unix time in milliseconds. */
const char *mgr_time_str(int64_t unix_ms, char *buf, size_t len);

/*
 * One line saying what turns `from` into `to`, backend by backend, as
 * history and the log show it: "+backend 10.1.1.13:8080 on tcp
 * 10.0.0.10:80, -vip udp 10.0.0.11:53". Long lists end in "(and N more)".
 */
void mgr_summary(const struct lb_ftable *from, const struct lb_ftable *to, char *out, size_t len);

/*
 * Why backend `to` of service k runs as it does where it ran as `from`
 * (NULL: added / removed); NULL when there is nothing to add.
 */
typedef const char *(*mgr_why_fn)(void *ctx, const struct lb_svc_key *k,
	const struct lb_backend_cfg *from, const struct lb_backend_cfg *to, char *buf, size_t len);

/* mgr_summary, each backend's item followed by " (why)" when `why` says one. */
void mgr_summary_why(const struct lb_ftable *from, const struct lb_ftable *to, char *out,
	size_t len, mgr_why_fn why, void *ctx);

#endif /* MGR_TEXT_H */
