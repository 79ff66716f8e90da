/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the member (lb_member.h): what its two files share. Not for
 * other modules.
 *
 *   lb_member.c     the connection and the commit: hello, status, votes,
 *                   PREPARE / COMMIT / ABORT, snapshots, the control loop
 *   lb_member_ha.c  several managers and the last known good table: terms
 *                   (lb_fence.h), redirects and moves to another manager,
 *                   the leader's silence, the file kept and loaded at start
 *                   (lb_lkg.h), what the member serves without a manager
 */
#ifndef LB_MEMBER_INT_H
#define LB_MEMBER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_clock.h"
#include "lb_fence.h"
#include "lb_member.h"
#include "lb_proof.h"

#define RECV_TICK_MS 100       /* how often the loop looks at the clock and stop (lb_nng.h) */
#define SNAPSHOT_RETRY_MS 1000 /* at most one snapshot request per this */
#define HELLO_RETRY_MS 1000    /* a hello not answered by a welcome is sent again */
#define REFUSED_HOLD_MS 30000  /* ... but only this long after a refusal */
#define REDIAL_MS 3000	       /* disconnected this long: a new dialer */
#define MOVE_MIN_MS 1000       /* between two moves to another manager, at least */
#define TOUCH_MS 10000	       /* the last-known-good file's time moves at most this often */
#define CLOSE_WAIT_MS 2000     /* a stopping daemon waits this long for nng_close() */

struct lb_member {
	struct lb_member_cfg cfg;
	const struct lb_member_ops *ops;
	void *arg;
	nng_socket sock;
	nng_dialer dialer;
	nng_tls_config *tls;
	/* Over TLS: the proof of our id asked for on this connection (lb_proof.h). */
	struct lb_proof_signer *signer;
	uint8_t nonce[LB_NONCE_LEN];
	uint8_t proof[LB_PROOF_MAX];
	size_t proof_len; /* 0: no challenge on this connection yet */

	/* What runs. */
	struct lb_ftable applied;
	uint64_t applied_version; /* atomic for readers on other threads */
	uint8_t applied_digest[LB_DIGEST_LEN];

	/* What PREPARE built, waiting for COMMIT or ABORT. */
	bool prepared;
	uint64_t prep_version;
	uint8_t prep_digest[LB_DIGEST_LEN];
	struct lb_ftable prep_table;
	void *prep_built;
	bool prep_yes;
	char prep_reason[LB_MSG_TEXT];

	/* A snapshot being assembled. */
	bool snap_open;
	uint64_t snap_version;
	uint8_t snap_digest[LB_DIGEST_LEN];
	uint32_t snap_next, snap_count, snap_cap;
	struct lb_ftable snap;
	uint64_t snap_asked_ms;

	uint64_t status_sent_ms;
	struct lb_flow_count *flows; /* ops->flows' room, LB_MSG_MAX_FLOWS */
	uint32_t flows_next;	     /* where the next STATUS's flows start */
	uint64_t hello_sent_ms;
	uint64_t hello_hold_ms; /* refused: no hello again before this */
	uint64_t down_since_ms; /* 0 while connected */
	bool redialing;		/* said so once for this outage */
	bool welcomed;		/* the manager answered this connection's hello */
	int stop;		/* atomic */
	int need_hello;		/* atomic: set by the pipe callback */
	int lost;		/* atomic: a connection closed (pipe callback) */
	int connected;		/* atomic: pipes open (pair1 has one, but events may cross) */

	/* Several managers: the one dialed, moves to another, the leader's silence. */
	uint32_t url_i;	     /* cfg.urls[url_i] is dialed */
	uint32_t sock_id;    /* atomic: the pipe callback ignores older sockets' pipes */
	int closing;	     /* atomic: older sockets whose nng_close() has not returned */
	uint64_t move_at_ms; /* 0: none planned; else dial urls[move_to] then */
	uint32_t move_to;
	uint64_t moved_ms;	  /* the last move */
	bool acked;		  /* this connection's leader answers STATUS (WELCOME) */
	uint64_t last_rx_ms;	  /* the last message on this connection */
	struct lb_fence fence;	  /* the highest term seen (lb_fence.h) */
	uint64_t known_committed; /* atomic: the newest committed version heard of */
	int leader_ok;		  /* atomic: a leader welcomed us on this connection */
	/* Last known good (lb_lkg.h). */
	uint64_t start_ms;
	bool ever_welcomed; /* a manager welcomed us since the start */
	int synced;    /* atomic: ... and holds us in sync (no resync asked; lb_member_synced) */
	bool lkg_done; /* the file was considered at the start */
	int64_t confirmed_ms; /* atomic, Unix ms: a manager last confirmed the table */
	uint64_t touched_ms;
	bool lkg_stale; /* the file does not hold the running table: its save failed */
};

static inline int64_t
lb_mbr_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- lb_member_send.c (calls neither lb_member.c nor lb_member_ha.c) ---- */

void lb_mbr_send_hello(struct lb_member *m);
void lb_mbr_send_status(struct lb_member *m);
void lb_mbr_send_vote(
	struct lb_member *m, uint64_t version, const uint8_t *digest, bool yes, const char *reason);
void lb_mbr_ask_snapshot(struct lb_member *m, const char *why);
/* The table `next` (taken over) at `version` is now the running one. */
void lb_mbr_became(
	struct lb_member *m, struct lb_ftable *next, uint64_t version, const uint8_t *digest);
/* A dialer for cfg.urls[url_i], started in the background. */
int lb_mbr_dial(struct lb_member *m, char *err, size_t len);
/* A pair1 socket for the member, its pipes counted into m. 0 or nng's error. */
int lb_mbr_open_sock(struct lb_member *m, nng_socket *s);
/*
 * A new socket for the next connection (lb_mbr_open_sock() says why), the
 * old one closed in the background; on failure the old one is dialed again.
 */
void lb_mbr_new_sock(struct lb_member *m);

/* ---- lb_member_ha.c ---- */

/* The newest committed version heard of moves up to version. */
void lb_mbr_heard(struct lb_member *m, uint64_t version);
/* The table now running came from a manager: written to state_file. */
void lb_mbr_lkg_save(struct lb_member *m);
/* A message of `term` (what: its kind, for the log): false when refused as stale. */
bool lb_mbr_term_ok(struct lb_member *m, uint64_t term, const char *what);
/* Dial urls[i] once MOVE_MIN_MS has passed since the last move. */
void lb_mbr_plan_move(struct lb_member *m, uint32_t i, const char *why);
uint32_t lb_mbr_next_url(const struct lb_member *m);
/* The planned move, now. */
void lb_mbr_move(struct lb_member *m);
void lb_mbr_on_welcome(struct lb_member *m, const struct lb_msg *msg);
void lb_mbr_on_not_leader(struct lb_member *m, const struct lb_msg *msg);
/* Each pass of the loop: last known good at the start, confirmation, the leader's silence. */
void lb_mbr_lkg_tick(struct lb_member *m);

#endif /* LB_MEMBER_INT_H */
