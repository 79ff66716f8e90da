/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control protocol as plain C. proto/sluice.proto is the only
 * definition of the wire format; this codec is the only code that sees the
 * generated protobuf-c types, so nothing else depends on them.
 *
 * Decoding validates everything a peer could get wrong or forge: the
 * protocol version (a peer built from another version is refused, never
 * misread), address lengths, ports, protocols, weights, the seed and the
 * Maglev size, digest lengths. A message that fails is not half-decoded:
 * the caller gets an error and an empty struct.
 */
#ifndef LB_CODEC_H
#define LB_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_config.h"
#include "lb_ftable.h"

#define LB_PROTOCOL 1
#define LB_DIGEST_LEN 16
#define LB_MSG_TEXT 256
#define LB_MSG_ID 64
#define LB_MSG_MAX_COUNTERS 64
/* Larger messages are refused before unpacking (chunk snapshots below it). */
#define LB_MSG_MAX_BYTES (64u << 20)

enum lb_msg_type {
	LB_MSG_HELLO = 1,
	LB_MSG_WELCOME,
	LB_MSG_PREPARE,
	LB_MSG_VOTE,
	LB_MSG_COMMIT,
	LB_MSG_ABORT,
	LB_MSG_SNAPSHOT_REQUEST,
	LB_MSG_SNAPSHOT_CHUNK,
	LB_MSG_STATUS,
	LB_MSG_REFUSED,
	LB_MSG_CTL_REQUEST,
	LB_MSG_CTL_REPLY,
};

/* What sluicectl asks of the manager (CtlOp in the .proto). */
enum lb_ctl_op {
	LB_CTL_STATUS = 1,  /* members, versions, pending changes */
	LB_CTL_VIP_LIST,    /* services and backends of the committed table */
	LB_CTL_VIP_ADD,	    /* svc */
	LB_CTL_VIP_DEL,	    /* svc */
	LB_CTL_BACKEND_ADD, /* svc, be (dip, port, weight, host, state) */
	LB_CTL_BACKEND_DEL, /* svc, be (dip, port) */
	LB_CTL_BACKEND_SET, /* svc, be (dip, port), set_* say which fields */
	LB_CTL_HISTORY,	    /* limit: the newest versions, or all when 0 */
	LB_CTL_EXPORT,	    /* the committed table as a libconfig services file */
	LB_CTL_APPLY,	    /* body: a services file replacing the desired table */
	LB_CTL_WAIT,	    /* version: committed, aborted or pending? */
};

#define LB_CTL_OP_MAX LB_CTL_WAIT

struct lb_ctl {
	enum lb_ctl_op op;
	bool has_svc;
	struct lb_svc_key svc;
	bool has_be;
	struct lb_backend_cfg be;
	bool set_weight, set_state, set_host;
	uint32_t limit;
};

enum lb_role { LB_ROLE_NONE = 0, LB_ROLE_MUX, LB_ROLE_AGENT, LB_ROLE_CTL };

struct lb_counter {
	char name[48];
	uint64_t value;
};

/*
 * One message, flat: `type` says which fields mean something.
 *   HELLO            id, role, version (applied), digest
 *   WELCOME          version (current), flag (resync)
 *   PREPARE          version, base_version, delta, digest
 *   VOTE             version, digest, flag (yes), text (reason)
 *   COMMIT           version, digest
 *   ABORT            version, digest, text (reason)
 *   SNAPSHOT_REQUEST version (the one the member has)
 *   SNAPSHOT_CHUNK   version, digest, index, count, table (seed and
 *                    maglev_size meaningful in chunk 0)
 *   STATUS           version (applied), counters
 *   REFUSED          text (reason), protocol (the refuser's)
 *   CTL_REQUEST      ctl, version (WAIT), body (APPLY: the file's text)
 *   CTL_REPLY        flag (ok), text (the error when not ok), version (the
 *                    version a change will commit as, or the committed
 *                    one), body (for people), json (for programs)
 */
struct lb_msg {
	enum lb_msg_type type;
	uint32_t protocol;
	char sender[LB_MSG_ID];
	char id[LB_MSG_ID];
	enum lb_role role;
	uint64_t version;
	uint64_t base_version;
	uint8_t digest[LB_DIGEST_LEN];
	bool flag;
	char text[LB_MSG_TEXT];
	uint32_t index;
	uint32_t count;
	struct lb_ftable_delta delta;
	struct lb_ftable table;
	uint32_t n_counters;
	struct lb_counter counters[LB_MSG_MAX_COUNTERS];
	struct lb_ctl ctl;
	char *body; /* malloc'd or NULL; freed by lb_msg_free() */
	char *json; /* malloc'd or NULL; freed by lb_msg_free() */
};

/*
 * Encode m (its protocol field is ignored: LB_PROTOCOL is sent) into a
 * malloc'd buffer. Returns 0, -LB_EINVAL (unknown type, non-IPv4 address)
 * or -LB_ENOMEM.
 */
int lb_msg_encode(const struct lb_msg *m, uint8_t **buf, size_t *len);

/*
 * Decode buf into *m. Returns 0, or with a message in errbuf:
 *   -LB_EPARSE     not a message, or a field out of range
 *   -LB_EPROTOCOL  another protocol version (m->protocol says which)
 *   -LB_EUNSUPPORTED  an IPv6 address (not forwarded yet)
 *   -LB_ENOMEM
 * Free with lb_msg_free() whatever the result.
 */
int lb_msg_decode(const uint8_t *buf, size_t len, struct lb_msg *m, char *errbuf, size_t errlen);

void lb_msg_free(struct lb_msg *m);

/*
 * Digest of a flow table, independent of the order services and backends
 * are listed in: what PREPARE, COMMIT and snapshots carry so that a member
 * can prove it holds exactly the manager's table.
 */
void lb_ftable_digest(const struct lb_ftable *ft, uint8_t out[LB_DIGEST_LEN]);

#endif /* LB_CODEC_H */
