/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's transport (nng): its sockets, TLS, the proofs of names over
 * TLS, and paced sends. It knows nothing of members or commits: what
 * arrives goes up through the callbacks its creator registers (struct
 * mgr_transport_ops), and which member a connection is, is the caller's.
 *
 * Members: one pair1 polyamorous socket listening on `listen`; a member's
 * connection (nng pipe, named here by its id) is learnt from its HELLO by
 * the member protocol, and every message to it is addressed to that pipe.
 * TLS is mutual: the handshake refuses a peer whose certificate the CA did
 * not sign; over TLS a member must also prove that its certificate names
 * its id (lb_proof.h): mgr_transport_prove().
 *
 * Pacing: a polyamorous socket queues at most two messages per connection
 * and silently drops the next one when that queue is full (nng does so to
 * keep one slow member from blocking the rest). So every member has its own
 * queue (struct mgr_sendq, kept by its owner), and a message is handed to
 * nng only while fewer than two are estimated to be still on their way, at
 * MGR_SEND_BYTES_PER_MS. A snapshot of 100,000 backends in five chunks thus
 * leaves in a few hundred ms instead of losing three chunks. Whatever is
 * lost anyway (a member that stops reading) is repaired by the protocol: a
 * missed PREPARE fences the member, and a fenced member gets its snapshot
 * again until it is back.
 *
 * sluicectl: an nng rep0 socket on `ctl` (ipc, owner-only) and, if set,
 * `ctl_tls` (mutual TLS, and a proof of the operator's name). One request
 * in, one reply out: the ctl_request callback answers it.
 *
 * Threads: nng's threads only move bytes; the one callback they run (a
 * connection closing) writes its id into a pipe whose descriptor the loop
 * polls (mgr_transport_fd_pipes). Everything else runs on the loop thread.
 */
#ifndef MGR_TRANSPORT_H
#define MGR_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_codec.h"
#include "mgr_config.h"

#define MGR_CTL_BATCH 64   /* operator requests handled per pass of the loop */
#define MGR_CTL_SEND_MS 50 /* a client that leaves a reply unread this long is dropped */
#define MGR_CLOSE_WAIT_S 3 /* nng's closing of the sockets at exit, at most */

struct mgr_guard;
struct mgr_transport;

/* What arrives, passed up; ctx is the ops' own. */
struct mgr_transport_ops {
	void *ctx;
	/* A decoded message on member connection `pipe`. */
	void (*member_msg)(void *ctx, uint32_t pipe, const struct lb_msg *msg, uint64_t now);
	/*
	 * Bytes on member connection `pipe` that do not decode (why), counted
	 * as malformed; first: the first bad message of that connection.
	 */
	void (*member_malformed)(void *ctx, uint32_t pipe, const char *why, bool first);
	/* A member connection closed. */
	void (*member_gone)(void *ctx, uint32_t pipe, uint64_t now);
	/*
	 * An operator's request, its name proven over TLS; asker is who asks,
	 * as history names it. Fill rep (its body and json malloc'd).
	 */
	void (*ctl_request)(void *ctx, const struct lb_msg *req, const char *asker,
		struct lb_msg *rep, uint64_t now);
};

/* What the transport counted, for status. */
struct mgr_transport_stats {
	uint64_t malformed;   /* messages that did not decode */
	uint64_t refused;     /* REFUSED sent: another protocol, a bad hello */
	uint64_t ctl;	      /* operator requests served */
	uint64_t ctl_dropped; /* clients dropped for not reading their reply */
	uint64_t challenges;  /* CHALLENGEs sent */
	uint64_t unproven;    /* proofs of names refused */
};

/*
 * The sockets (members, ctl), TLS and proofs from cfg; not listening yet.
 * Returns NULL with the reason in err.
 */
struct mgr_transport *mgr_transport_open(
	const struct mgr_config *cfg, const struct mgr_transport_ops *ops, char *err, size_t len);

/* The TLS server configuration of the listeners (NULL without TLS). */
nng_tls_config *mgr_transport_tls(const struct mgr_transport *t);

/* Listen on listen, ctl and ctl_tls, guarded by g. 0, or -LB_EIO with err. */
int mgr_transport_listen(struct mgr_transport *t, struct mgr_guard *g, char *err, size_t len);

/*
 * Close both sockets, or give up after MGR_CLOSE_WAIT_S: nng 1.5.2's close
 * can wait forever for a connection it orphaned when a listener was closed
 * in the middle of a handshake (nng issue 1498; the guard closes
 * listeners). false: it gave up, nng may still use t (do not free it).
 */
bool mgr_transport_close(struct mgr_transport *t);

/* After mgr_transport_close() and the guard's stop, both successful. */
void mgr_transport_free(struct mgr_transport *t);

/* Descriptors for the loop's poll(): member messages, ctl requests, closed connections. */
int mgr_transport_fd_members(const struct mgr_transport *t);
int mgr_transport_fd_ctl(const struct mgr_transport *t);
int mgr_transport_fd_pipes(const struct mgr_transport *t);

/* Drain the member socket (member_msg, member_malformed). */
void mgr_transport_recv_members(struct mgr_transport *t, uint64_t now);

/* Serve a bounded batch of operator requests (ctl_request). */
void mgr_transport_recv_ctl(struct mgr_transport *t, uint64_t now);

/* Report the connections nng closed (member_gone). */
void mgr_transport_recv_pipes(struct mgr_transport *t, uint64_t now);

/* ---- paced sends ---- */

struct mgr_out;

/* A connection's queue of messages not yet handed to nng (its owner's). */
struct mgr_sendq {
	struct mgr_out *q_head, *q_tail;
	uint32_t q_queued;
	uint64_t q_done_ms[2]; /* when the last two handed to nng should be on the wire */
};

/* Drop every queued message and forget the pacing. */
void mgr_sendq_flush(struct mgr_sendq *q);

/* When the head of q may go (UINT64_MAX: q is empty). */
uint64_t mgr_sendq_due(const struct mgr_sendq *q);

/*
 * Queue buf (copied) for connection `pipe` and hand nng what may go now
 * (who: the member, for logs). Returns 0 or -LB_ENOMEM (logged).
 */
int mgr_transport_send(struct mgr_transport *t, struct mgr_sendq *q, uint32_t pipe,
	const uint8_t *buf, size_t len, const char *who, uint64_t now);

/* Hand nng what of q may go now. */
void mgr_transport_pump(
	struct mgr_transport *t, struct mgr_sendq *q, const char *who, uint64_t now);

/* At once, unpaced, on a connection no member owns yet. */
void mgr_transport_send_pipe(struct mgr_transport *t, uint32_t pipe, const struct lb_msg *msg);

/* REFUSED with the reason, at once (counted). */
void mgr_transport_refuse(struct mgr_transport *t, uint32_t pipe, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void mgr_transport_close_pipe(struct mgr_transport *t, uint32_t pipe);

/* Log a connection's bad messages once: true the first time for `pipe`. */
bool mgr_transport_first_bad(struct mgr_transport *t, uint32_t pipe);

/* ---- proofs of names (lb_proof.h) ---- */

/* Members and operators over TLS must prove their names (TLS is on). */
bool mgr_transport_proofs(const struct mgr_transport *t);

/*
 * Does `pipe` need no proof? Without TLS, or over ipc (local, owner-only:
 * the kernel names the uid). A connection nng has forgotten (a message can
 * outlive it in the socket's queue) is not ipc: fail closed.
 */
bool mgr_transport_trusted(const struct mgr_transport *t, uint32_t pipe);

/*
 * Over TLS a hello counts only once its id is proven on this connection:
 * the first is answered with a CHALLENGE, the next must carry a proof by
 * the key of a certificate of our CA that names the id (a failure is
 * logged and answered with REFUSED). true: proven now.
 */
bool mgr_transport_prove(struct mgr_transport *t, uint32_t pipe, const struct lb_msg *hello);

void mgr_transport_stats(const struct mgr_transport *t, struct mgr_transport_stats *s);

#endif /* MGR_TRANSPORT_H */
