/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawpeer's pieces (see rawpeer.c for what it is): the connection, the
 * receive loop and the message helpers in rawpeer_conn.c, the operator
 * socket's steps in rawpeer_ctl.c, the member and manager steps and the
 * script in rawpeer.c.
 */
#ifndef SLUICE_RAWPEER_H
#define SLUICE_RAWPEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_codec.h"
#include "lb_ftable.h"

#define RP_TYPES (LB_MSG_SHARES + 1)
#define RP_TICK_MS 50
#define RP_CTL_TIMEOUT_MS 10000

struct rp_opts {
	const char *url;
	const char *ca, *cert, *key;
	const char *server_name;
	const char *id;
	bool listen;
	bool ctl;
	bool quiet_status; /* do not print every STATUS heartbeat */
	/* hello as an agent with these PAs and DIPs ("10.99.0.3,2001:db8::3") */
	const char *agent_pas, *agent_dips;
};

struct rp {
	struct rp_opts o;
	nng_socket sock;
	nng_tls_config *tls;
	int closed; /* atomic: connections the other side dropped */
	uint64_t received[RP_TYPES];
	uint64_t consumed[RP_TYPES]; /* what `expect` steps have matched */
	uint64_t malformed;
	int failures;
	bool autovote; /* answer every PREPARE with a yes vote */
	/* A member over TLS proves its id when challenged: the last HELLO is
	 * sent again with a proof by --cert and --key (lb_proof.h). */
	struct lb_proof_signer *signer;
	struct lb_msg *hello;
	/* Playing the manager: the table the member was sent, and the next. */
	struct lb_ftable table;
	uint64_t version;
	uint8_t digest[LB_DIGEST_LEN];
	uint8_t prep_digest[LB_DIGEST_LEN];
};

/* Milliseconds on the monotonic clock. */
uint64_t rp_now_ms(void);
/* d[0..n) as hex into out (2n + 1 bytes). */
void rp_hex(const uint8_t *d, size_t n, char *out);
/* A digest from hex (NULL or "-": zeros). Returns 0 or -1. */
int rp_unhex(const char *s, uint8_t out[LB_DIGEST_LEN]);
/* A message type's name ("?" if none), and back (-1 if none). */
const char *rp_type_name(enum lb_msg_type t);
int rp_type_of(const char *name);
/* A zeroed message of that type and version; exits when out of memory. */
struct lb_msg *rp_msg_new(enum lb_msg_type type, uint64_t version);

/* The encoding's protocol number overwritten (a one-byte varint), as a patch for rp_send_msg. */
void rp_patch_protocol(uint8_t *buf, size_t len, long proto);

/* Open the socket, dial or listen (--listen). Returns 0, 2 (setup) or 3 (connection). */
int rp_open(struct rp *rp);
int rp_send_raw(struct rp *rp, const void *buf, size_t len);
/* Encode and send; `patch` may break the encoding first. */
int rp_send_msg(struct rp *rp, struct lb_msg *m, void (*patch)(uint8_t *, size_t, long), long arg);
/* Receive and print until `until_ms`, or until a message of `stop_type` arrives. */
void rp_receive(struct rp *rp, uint64_t until_ms, int stop_type);

/* The operator socket's steps (--ctl). rp_ctl_as returns 0 or -1. */
void rp_ctl_status(struct rp *rp, long n);
void rp_ctl_malformed(struct rp *rp, long n);
void rp_ctl_parallel(struct rp *rp, long n, long threads);
void rp_ctl_noread(struct rp *rp, long n);
int rp_ctl_as(struct rp *rp, const char *name);

#endif /* SLUICE_RAWPEER_H */
