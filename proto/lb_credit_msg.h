/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capacity-credit channel's messages as plain C (sluice.proto:
 * CreditGrant, CreditReport). A host agent grants each mux credits for new
 * connections to its capped backends; the mux answers every grant with
 * what it holds and did (docs/architecture.md, "Capacity credits"). The
 * channel is its own: these messages never travel in the manager's
 * envelope, and carry their own protocol number.
 */
#ifndef LB_CREDIT_MSG_H
#define LB_CREDIT_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_codec.h"

#define LB_CREDIT_PROTOCOL 1
#define LB_CREDIT_MAX 64     /* capped backends in one message (one agent's) */
#define LB_CREDIT_TTL_MIN 50 /* a grant's life, ms */
#define LB_CREDIT_TTL_MAX 60000

struct lb_credit {
	uint32_t backend;
	uint64_t grant; /* 0: no new grant, only the counters */
	uint32_t count;
	uint64_t revoke_below;
	uint64_t granted;
	bool renew; /* the mux's usable grants of it live ttl_ms again from this request */
};

struct lb_credit_grant {
	char agent[LB_MSG_ID];
	uint64_t incarnation;
	uint32_t ttl_ms;
	uint32_t n;
	struct lb_credit c[LB_CREDIT_MAX];
};

struct lb_credit_use {
	uint32_t backend;
	uint64_t received;
	uint64_t used;
	uint64_t expired;
	uint64_t revoked;
	uint64_t denied;
	uint64_t live;
	uint64_t granted;
};

struct lb_credit_report {
	char mux[LB_MSG_ID];
	uint64_t incarnation;
	uint64_t agent_incarnation;
	uint32_t n;
	struct lb_credit_use u[LB_CREDIT_MAX];
	char refused[LB_MSG_TEXT];
};

/* Pack into *buf (malloc'd, the caller frees). 0 or -LB_ENOMEM. */
int lb_credit_grant_encode(const struct lb_credit_grant *g, uint8_t **buf, size_t *len);
int lb_credit_report_encode(const struct lb_credit_report *r, uint8_t **buf, size_t *len);

/*
 * Unpack and check: the protocol, an id, the TTL's range, at most
 * LB_CREDIT_MAX entries, each backend once. 0, or -LB_EPARSE /
 * -LB_EPROTOCOL with why in err (out is then zeroed).
 */
int lb_credit_grant_decode(
	const uint8_t *buf, size_t len, struct lb_credit_grant *g, char *err, size_t elen);
int lb_credit_report_decode(
	const uint8_t *buf, size_t len, struct lb_credit_report *r, char *err, size_t elen);

#endif /* LB_CREDIT_MSG_H */
