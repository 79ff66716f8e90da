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
 */
#ifndef LB_CODEC_INT_H
#define LB_CODEC_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lb_codec.h"
#include "sluice.pb-c.h"

struct lb_enc {
	int err; /* the first allocation that failed: -LB_ENOMEM */
	Sluice__Envelope env;
	/* the bodies the envelope may point at */
	Sluice__Hello hello;
	Sluice__Challenge chal;
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
	/* heap parts, freed by lb_enc_free() */
	Sluice__Service **svcs;
	size_t n_svcs;
	Sluice__ServiceKey **keys;
	size_t n_keys;
	Sluice__ServiceKey *ckey;
	Sluice__FlowTableOptions *opts;
	Sluice__Status__CountersEntry *ce, **cep;
	uint8_t seed_raw[16];
};

/* calloc, recording a failure in e->err. */
void *lb_enc_alloc(struct lb_enc *e, size_t n, size_t size);

/* Bytes the generated struct borrows (never freed through it). */
ProtobufCBinaryData lb_enc_bin(const void *p, size_t len);

/* Write the error into errbuf and return rc. */
int lb_dec_fail(char *errbuf, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A string field into a fixed buffer ("" for NULL). */
void lb_dec_text(char *dst, size_t size, const char *src);

int lb_dec_addr(const ProtobufCBinaryData *b, struct lb_addr *a, const char *what, char *errbuf,
	size_t len);

int lb_dec_digest(const ProtobufCBinaryData *b, uint8_t *out, char *errbuf, size_t len);

/* ---- lb_codec_table.c ---- */

Sluice__ServiceKey *lb_enc_key(
	struct lb_enc *e, const struct lb_addr *vip, uint8_t proto, uint16_t port);

/* A service key in network order: VIP, protocol, port. */
int lb_dec_key(const Sluice__ServiceKey *k, struct lb_addr *vip, uint8_t *proto, uint16_t *port,
	char *errbuf, size_t len);

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
