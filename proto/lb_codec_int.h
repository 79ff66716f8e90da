/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the codec: what its three files share. Not for other modules; the
 * generated protobuf-c types stop here.
 *
 *   lb_codec.c        the envelope: every message type in and out, the
 *                     small messages themselves
 *   lb_codec_table.c  flow tables: keys, services, backends, options,
 *                     deltas (PREPARE) and snapshot chunks
 *   lb_codec_ctl.c    the operator API: CTL_REQUEST (pools, proofs) and
 *                     CTL_REPLY
 *
 * Encoding fills an lb_enc: the generated structs of one message and the
 * heap parts they point at, all freed after packing. Decoding validates and
 * copies into plain C; a failure leaves the caller to clear the message.
 * The helpers all three use are inline here, so that the files call one
 * way: lb_codec.c -> lb_codec_ctl.c -> lb_codec_table.c.
 */
#ifndef LB_CODEC_INT_H
#define LB_CODEC_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_codec.h"
#include "lb_err.h"
#include "sluice.pb-c.h"

struct lb_enc {
	int err; /* the first allocation that failed: -LB_ENOMEM */
	Sluice__Envelope env;
	/* the bodies the envelope may point at */
	Sluice__Hello hello;
	Sluice__Challenge chal;
	Sluice__Shares shares;
	Sluice__Welcome welcome;
	Sluice__Prepare prepare;
	Sluice__Delta delta;
	Sluice__Vote vote;
	Sluice__Commit commit;
	Sluice__Abort abort_;
	Sluice__SnapshotRequest sreq;
	Sluice__SnapshotChunk chunk;
	Sluice__Status status;
	Sluice__Refused refused;
	Sluice__CtlRequest creq;
	Sluice__CtlReply crep;
	Sluice__Backend cbe;
	Sluice__PoolOptions cpool;
	Sluice__SyncState sync;
	Sluice__RouteState route;
	Sluice__LimitChange clim;
	/* heap parts, freed by lb_enc_free() */
	Sluice__Service **svcs;
	size_t n_svcs;
	Sluice__ServiceKey **keys;
	size_t n_keys;
	Sluice__ServiceKey *ckey;
	Sluice__FlowTableOptions *opts;
	char **drained; /* opts->drained_muxes */
	Sluice__Status__CountersEntry *ce, **cep;
	Sluice__RouteVip *rv, **rvp;
	Sluice__FlowCount *fc, **fcp;
	Sluice__ServiceKey *fck;
	uint8_t seed_raw[16];
	ProtobufCBinaryData pas[LB_MSG_MAX_PAS], dips[LB_MSG_MAX_DIPS]; /* HELLO's lists */
};

/* calloc, recording a failure in e->err. */
static inline void *
lb_enc_alloc(struct lb_enc *e, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p == NULL)
		e->err = -LB_ENOMEM;
	return p;
}

/* Bytes the generated struct borrows (never freed through it). */
static inline ProtobufCBinaryData
lb_enc_bin(const void *p, size_t len)
{
	ProtobufCBinaryData b = {len, (uint8_t *)(uintptr_t)p};

	return b;
}

/* A string field into a fixed buffer ("" for NULL). */
static inline void
lb_dec_text(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* A message's proof (none: nothing): the nonce, the proof, the certificate text with its NUL. */
static inline void
lb_enc_proof(const struct lb_msg *m, const char *cert, ProtobufCBinaryData *nonce,
	ProtobufCBinaryData *proof, ProtobufCBinaryData *crt)
{
	if (m->proof_len == 0)
		return;
	*nonce = lb_enc_bin(m->nonce, LB_NONCE_LEN);
	*proof = lb_enc_bin(m->proof, m->proof_len);
	if (cert != NULL)
		*crt = lb_enc_bin(cert, strlen(cert) + 1);
}

/* An address as 4 (IPv4, from a32[0]) or 16 bytes by its family af. */
static inline ProtobufCBinaryData
lb_enc_addr(uint8_t af, const struct lb_addr *a)
{
	return af == LB_AF_INET6 ? lb_enc_bin(a->a8, 16) : lb_enc_bin(&a->a32[0], 4);
}

/*
 * An address of 4 or 16 bytes, its family into *af (the length is the
 * family on the wire). Any unicast address passes here; which family a
 * field takes is the caller's rule (a DIP of its service's), and the
 * unicast rules are lb_ftable_validate()'s and the manager's.
 */
static inline int
lb_dec_addr(const ProtobufCBinaryData *b, struct lb_addr *a, uint8_t *af, const char *what,
	char *errbuf, size_t len)
{
	memset(a, 0, sizeof(*a));
	*af = LB_AF_NONE;
	if (b->len == 16) {
		memcpy(a->a8, b->data, 16);
		*af = LB_AF_INET6;
		return 0;
	}
	if (b->len != 4)
		return lb_fail(errbuf, len, -LB_EPARSE, "%s: %zu address bytes", what, b->len);
	memcpy(&a->a32[0], b->data, 4);
	*af = LB_AF_INET;
	return 0;
}

static inline int
lb_dec_digest(const ProtobufCBinaryData *b, uint8_t *out, char *errbuf, size_t len)
{
	if (b->len != LB_DIGEST_LEN)
		return lb_fail(errbuf, len, -LB_EPARSE, "digest of %zu bytes", b->len);
	memcpy(out, b->data, LB_DIGEST_LEN);
	return 0;
}

/*
 * A message packed into a new buffer, *buf (the caller frees it) of *len
 * bytes: every encoder's last step. 0 or -LB_ENOMEM.
 */
int lb_enc_pack(const ProtobufCMessage *m, uint8_t **buf, size_t *len);

/* ---- lb_codec_table.c ---- */

/* A service key, the VIP as 4 or 16 bytes by af (borrowed: it must outlive the packing). */
Sluice__ServiceKey *lb_enc_key(
	struct lb_enc *e, uint8_t af, const struct lb_addr *vip, uint8_t proto, uint16_t port);

/* A service key: the VIP of either family, protocol, port. */
int lb_dec_key(const Sluice__ServiceKey *k, struct lb_svc_key *out, char *errbuf, size_t len);

void lb_enc_prepare(struct lb_enc *e, const struct lb_msg *m);
void lb_enc_chunk(struct lb_enc *e, const struct lb_msg *m);
int lb_dec_prepare(const Sluice__Prepare *p, struct lb_msg *m, char *errbuf, size_t len);
int lb_dec_chunk(const Sluice__SnapshotChunk *c, struct lb_msg *m, char *errbuf, size_t len);

/* Free what lb_enc_prepare / lb_enc_chunk allocated. */
void lb_enc_table_free(struct lb_enc *e);

/* ---- lb_codec_ctl.c ---- */

/* 0, or -LB_EINVAL for an unknown operation. */
int lb_enc_ctl_request(struct lb_enc *e, const struct lb_msg *m);
void lb_enc_ctl_reply(struct lb_enc *e, const struct lb_msg *m);
int lb_dec_ctl_request(const Sluice__CtlRequest *r, struct lb_msg *m, char *errbuf, size_t len);
int lb_dec_ctl_reply(const Sluice__CtlReply *r, struct lb_msg *m, char *errbuf, size_t len);

/*
 * A proof (of a hello or a ctl request, named what): all three fields or
 * none; the certificate is text ending in its NUL, copied to *cert.
 */
int lb_dec_proof(const char *what, const ProtobufCBinaryData *nonce,
	const ProtobufCBinaryData *proof, const ProtobufCBinaryData *crt, struct lb_msg *m,
	char **cert, char *errbuf, size_t len);

#endif /* LB_CODEC_INT_H */
