/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control protocol as plain C. proto/sluice.proto is the only
 * definition of the wire format; this codec (lb_codec*.c, lb_codec_int.h)
 * is the only code that sees the generated protobuf-c types, so nothing
 * else depends on them.
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
#include <stdio.h>

#include "lb_ftable.h"
#include "lb_proof.h"

#define LB_PROTOCOL 1
#define LB_MSG_TEXT 256
#define LB_MSG_ID 64
#define LB_MSG_MAX_COUNTERS 256 /* a mux sends 4 per admission rule */
#define LB_MSG_URL 256		/* a manager's URL, with the NUL */
/* A STATUS carries at most this many flow counts (struct lb_flow_count). */
#define LB_MSG_MAX_FLOWS 512
#define LB_MSG_MAX_PAS 4   /* an agent's PAs in HELLO (one per family) */
#define LB_MSG_MAX_DIPS 64 /* an agent's DIPs in HELLO (HA_MAX_VMS of each family) */
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
	LB_MSG_CHALLENGE,
	LB_MSG_SYNC,
	LB_MSG_SHARES,
};

/* What sluicectl asks of the manager (CtlOp in the .proto). */
enum lb_ctl_op {
	LB_CTL_STATUS = 1,   /* members, versions, pending changes */
	LB_CTL_VIP_LIST,     /* services and backends of the committed table */
	LB_CTL_VIP_ADD,	     /* svc */
	LB_CTL_VIP_DEL,	     /* svc */
	LB_CTL_BACKEND_ADD,  /* svc, be (dip, port, weight, host, state) */
	LB_CTL_BACKEND_DEL,  /* svc, be (dip, port) */
	LB_CTL_BACKEND_SET,  /* svc, be (dip, port), set_* say which fields */
	LB_CTL_HISTORY,	     /* limit: the newest versions, or all when 0 */
	LB_CTL_EXPORT,	     /* the committed table as a libconfig services file */
	LB_CTL_APPLY,	     /* body: a services file replacing the desired table */
	LB_CTL_WAIT,	     /* version: committed, aborted or pending? */
	LB_CTL_VIP_SET,	     /* svc, pool: the pool options pool.given names */
	LB_CTL_STATS,	     /* per service and backend rates, summed over the muxes */
	LB_CTL_MUX_DRAIN,    /* mux: withdraw its routes (a versioned change) */
	LB_CTL_MUX_UNDRAIN,  /* mux: announce again */
	LB_CTL_LIMIT_SET,    /* svc or lim.mux, lim: the fields lim.given names */
	LB_CTL_LIMIT_DEL,    /* svc or lim.mux, lim.rule (-1: every rule of svc) */
	LB_CTL_LIMIT_LIST,   /* the rules, their counters summed over the muxes */
	LB_CTL_TOP,	     /* svc: its top talkers over the muxes, with their rates */
	LB_CTL_BACKEND_LIST, /* every backend with the load its agent reports */
};

#define LB_CTL_OP_MAX LB_CTL_BACKEND_LIST

/* A change to one admission rule (LimitChange in the .proto). */
enum lb_limit_given {
	LB_LIMIT_G_LIMIT = 1u << 0,
	LB_LIMIT_G_BURST = 1u << 1,
	LB_LIMIT_G_MODE = 1u << 2,
	LB_LIMIT_G_PREFIX = 1u << 3,
	LB_LIMIT_G_REFUSE = 1u << 4,
};

struct lb_limit_change {
	uint32_t given; /* enum lb_limit_given */
	bool mux;	/* the mux-wide cap */
	int8_t rule;	/* enum lb_limit_kind; -1: every rule (del) */
	struct lb_limit_rule value;
	uint8_t prefix;
	uint8_t refuse;
};

/*
 * A service's pool (target group) options as an operator request carries
 * them: `given` names the fields set, the others keep their value. The
 * manager alone holds pools and judges values (docs/manager.md); the codec
 * checks only what it must to copy them (lengths, the probe type). The
 * ranges are here so that sluicectl can refuse a typo before sending.
 */
enum lb_probe_type { LB_PROBE_UNSET = 0, LB_PROBE_NONE, LB_PROBE_TCP, LB_PROBE_HTTP };

enum lb_pool_field {
	LB_POOL_PROBE = 1u << 0,
	LB_POOL_PROBE_PORT = 1u << 1,
	LB_POOL_PATH = 1u << 2,
	LB_POOL_CODES = 1u << 3,
	LB_POOL_INTERVAL = 1u << 4,
	LB_POOL_TIMEOUT = 1u << 5,
	LB_POOL_HEALTHY = 1u << 6,
	LB_POOL_UNHEALTHY = 1u << 7,
	LB_POOL_DRAIN_DELAY = 1u << 8,
	LB_POOL_SLOW_START = 1u << 9,
	LB_POOL_MIN_HEALTHY = 1u << 10,
	LB_POOL_MIN_HEALTHY_PCT = 1u << 11,
	LB_POOL_WITHDRAW_BELOW = 1u << 12,
	LB_POOL_WITHDRAW_BELOW_PCT = 1u << 13,
};

#define LB_POOL_ALL 0x3fffu
#define LB_POOL_PATH_LEN 128 /* with the NUL */
#define LB_POOL_CODES_LEN 64
#define LB_POOL_INTERVAL_MIN 1 /* seconds; ALB allows 5, labs want 1 */
#define LB_POOL_INTERVAL_MAX 300
#define LB_POOL_TIMEOUT_MIN 1
#define LB_POOL_TIMEOUT_MAX 120
#define LB_POOL_THRESHOLD_MIN 1
#define LB_POOL_THRESHOLD_MAX 10
#define LB_POOL_DRAIN_DELAY_MAX 3600
#define LB_POOL_SLOW_START_MIN 30 /* or 0: off */
#define LB_POOL_SLOW_START_MAX 900
#define LB_POOL_MIN_HEALTHY_MAX 65534

/*
 * The pool's numeric options, in one list for every copy of them (the
 * codec, the manager's pools and store, the history's diff): the field of
 * struct lb_pool_opts (and pl_ + it of the manager's struct mgr_pool), its
 * LB_POOL_* bit, its PoolOptions field, and its name in a services file.
 */
#define LB_POOL_NUMBERS(X)                                                                         \
	X(interval_s, LB_POOL_INTERVAL, interval_s, "interval")                                    \
	X(timeout_s, LB_POOL_TIMEOUT, timeout_s, "timeout")                                        \
	X(healthy, LB_POOL_HEALTHY, healthy, "healthy")                                            \
	X(unhealthy, LB_POOL_UNHEALTHY, unhealthy, "unhealthy")                                    \
	X(drain_delay_s, LB_POOL_DRAIN_DELAY, drain_delay_s, "drain_delay")                        \
	X(slow_start_s, LB_POOL_SLOW_START, slow_start_s, "slow_start")                            \
	X(min_healthy, LB_POOL_MIN_HEALTHY, min_healthy, "min_healthy")                            \
	X(min_healthy_pct, LB_POOL_MIN_HEALTHY_PCT, min_healthy_percent, "min_healthy_percent")    \
	X(withdraw_below, LB_POOL_WITHDRAW_BELOW, withdraw_below, "withdraw_below")                \
	X(withdraw_below_pct, LB_POOL_WITHDRAW_BELOW_PCT, withdraw_below_percent,                  \
		"withdraw_below_percent")

struct lb_pool_opts {
	uint32_t given; /* enum lb_pool_field bits */
	uint8_t probe;	/* enum lb_probe_type */
	uint16_t probe_port;
	char path[LB_POOL_PATH_LEN];
	char codes[LB_POOL_CODES_LEN];
	uint32_t interval_s;
	uint32_t timeout_s;
	uint32_t healthy;
	uint32_t unhealthy;
	uint32_t drain_delay_s;
	uint32_t slow_start_s;
	uint32_t min_healthy;
	uint32_t min_healthy_pct;
	uint32_t withdraw_below;
	uint32_t withdraw_below_pct;
};

/* An address with its family (HELLO's lists). */
struct lb_host_addr {
	uint8_t af; /* LB_AF_INET or LB_AF_INET6 */
	struct lb_addr a;
};

struct lb_ctl {
	enum lb_ctl_op op;
	bool has_svc;
	struct lb_svc_key svc; /* svc.af: the VIP's family */
	bool has_be;
	struct lb_backend_cfg be; /* be.host6: the host's family */
	uint8_t be_af;		  /* the DIP's family (LB_AF_NONE: no DIP) */
	bool set_weight, set_state, set_host, set_max_conns;
	uint32_t limit;
	struct lb_pool_opts pool; /* pool.given == 0: none */
	char mux[LB_MSG_ID];	  /* MUX_DRAIN, MUX_UNDRAIN */
	struct lb_limit_change lim;
};

/*
 * WAIT's answer, typed (WaitState in the .proto), so that sluicectl reads
 * no JSON to decide: what became of the change(s) told they commit as the
 * version asked.
 */
enum lb_wait_state {
	LB_WAIT_NONE = 0, /* not an answer to WAIT */
	LB_WAIT_PENDING,
	LB_WAIT_COMMITTED,
	LB_WAIT_ABORTED,
};

struct lb_wait {
	enum lb_wait_state state;
	uint64_t committed_as;	  /* COMMITTED: the version that carries the change */
	char reason[LB_MSG_TEXT]; /* ABORTED: why; PENDING: the store's error, or "" */
};

enum lb_role { LB_ROLE_NONE = 0, LB_ROLE_MUX, LB_ROLE_AGENT, LB_ROLE_CTL };

struct lb_counter {
	char name[48];
	uint64_t value;
};

/* Append one counter to out[*n], if there is room (max). */
static inline void
lb_counter_put(struct lb_counter *out, uint32_t *n, uint32_t max, const char *name, uint64_t value)
{
	if (*n >= max)
		return;
	snprintf(out[*n].name, sizeof(out[*n].name), "%s", name);
	out[(*n)++].value = value;
}

/*
 * A mux's counters of a service (dip_port 0) or of one of its backends,
 * since the id was given to it (STATUS): sluicectl stats sums them over
 * the muxes, the manager's metrics divide them into shares.
 */
struct lb_flow_count {
	struct lb_addr vip; /* of family af (IPv4 in a32[0]) */
	uint16_t port;
	uint8_t proto;
	uint8_t af;	    /* the service's: LB_AF_INET or LB_AF_INET6 */
	struct lb_addr dip; /* the backend's (of family af); zero for the service */
	uint16_t dip_port;  /* 0: the service itself */
	uint64_t pkts, bytes, new_conns;
};

/*
 * A mux's routes in its STATUS (RouteState in the .proto): its one-line
 * status, the mux-wide reason (its name, "NONE" when it announces) and
 * since when, its BGP sessions, and its VIPs (the first LB_ROUTE_MAX_VIPS
 * by address; n_vips_total counts them all).
 */
#define LB_ROUTE_MAX_VIPS 64
#define LB_ROUTE_REASON 24

struct lb_route_vip {
	lb_be32_t vip;
	bool announced;
	char reason[LB_ROUTE_REASON]; /* not announced: why, by name */
	uint64_t since_unix_ms;
};

struct lb_route_state {
	char status[LB_MSG_TEXT];
	char reason[LB_ROUTE_REASON];
	uint64_t since_unix_ms;
	uint32_t sessions, sessions_up;
	uint32_t n_vips_total;
	uint32_t n_vips;
	struct lb_route_vip vips[LB_ROUTE_MAX_VIPS];
};

/*
 * One message, flat: `type` says which fields mean something.
 *   HELLO            id, role, version (applied), digest, probe_addr and
 *                    probe_addr6 (a mux's tunnel addresses for VIP
 *                    probes; zero: none), pas and dips (an agent's);
 *                    over TLS after a CHALLENGE: nonce, proof, body (the
 *                    certificate, PEM)
 *   CHALLENGE        nonce
 *   WELCOME          version (current), flag (resync), term
 *   PREPARE          version, base_version, delta, digest, term
 *   VOTE             version, digest, flag (yes), text (reason), term (the
 *                    highest the member has seen)
 *   COMMIT           version, digest, term
 *   ABORT            version, digest, text (reason), term
 *   SNAPSHOT_REQUEST version (the one the member has)
 *   SNAPSHOT_CHUNK   version, digest, index, count, table (seed and
 *                    maglev_size meaningful in chunk 0), term
 *   STATUS           version (applied), counters; a mux's flows (n_flows
 *                    of them, from flows_first of its flows_total), route (a
 *                    mux with BGP; NULL: none)
 *   SYNC             version (committed), flag (in sync), text (why not)
 *   REFUSED          text (reason), protocol (the refuser's); a standby's:
 *                    not_leader, leader_url (the leader's member URL or "")
 *   SHARES           count (the muxes sharing admission limits), index
 *                    (this mux's place among them)
 *   CTL_REQUEST      ctl, version (WAIT), body (APPLY: the file's text),
 *                    ctl.pool (VIP_SET, VIP_ADD), ctl.mux (MUX_DRAIN,
 *                    MUX_UNDRAIN)
 *   CTL_REPLY        flag (ok), text (the error when not ok), version (the
 *                    version a change will commit as, or the committed
 *                    one), body (for people), json (for programs); wait
 *                    (the answer to WAIT); a standby's: not_leader,
 *                    leader_url (the leader's ctl URL or "")
 *
 * term: the leader's fencing token with several managers (the create
 * revision of its etcd leader key); 0 from a single manager.
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
	struct lb_addr probe_addr;  /* HELLO: IPv4 in a32[0], or all zero */
	struct lb_addr probe_addr6; /* HELLO: IPv6, or all zero */
	uint32_t n_pas, n_dips;	    /* HELLO: an agent's PAs and DIPs */
	struct lb_host_addr pas[LB_MSG_MAX_PAS];
	struct lb_host_addr dips[LB_MSG_MAX_DIPS];
	/* CHALLENGE: the nonce. HELLO, CTL_REQUEST: the proof (proof_len 0:
	 * none); the certificate, PEM with its NUL, is in body for HELLO and in
	 * cert for CTL_REQUEST (whose body is its config); the name proven is
	 * id. */
	uint8_t nonce[LB_NONCE_LEN];
	uint8_t proof[LB_PROOF_MAX];
	uint16_t proof_len;
	bool flag;
	char text[LB_MSG_TEXT];
	uint32_t index;
	uint32_t count;
	struct lb_ftable_delta delta;
	struct lb_ftable table;
	uint32_t n_counters;
	struct lb_counter counters[LB_MSG_MAX_COUNTERS];
	uint32_t n_flows, flows_first, flows_total;
	struct lb_flow_count *flows; /* STATUS: malloc'd or NULL; freed by lb_msg_free() */
	struct lb_ctl ctl;
	struct lb_wait wait;
	uint64_t term;
	bool not_leader;
	char leader_url[LB_MSG_URL];
	char *body;		      /* malloc'd or NULL; freed by lb_msg_free() */
	char *json;		      /* malloc'd or NULL; freed by lb_msg_free() */
	char *cert;		      /* CTL_REQUEST: malloc'd or NULL; freed by lb_msg_free() */
	struct lb_route_state *route; /* STATUS: malloc'd or NULL; freed by lb_msg_free() */
};

/*
 * Encode m (its protocol field is ignored: LB_PROTOCOL is sent) into a
 * malloc'd buffer. Returns 0, -LB_EINVAL (unknown type) or -LB_ENOMEM.
 * Addresses go as 4 or 16 bytes by their family (a service's af, a
 * backend's host6, the ctl's be_af).
 */
int lb_msg_encode(const struct lb_msg *m, uint8_t **buf, size_t *len);

/*
 * Decode buf into *m. Returns 0, or with a message in errbuf:
 *   -LB_EPARSE     not a message, or a field out of range
 *   -LB_EPROTOCOL  another protocol version (m->protocol says which)
 *                  (an address neither 4 nor 16 bytes, a DIP not of
 *                  its service's family)
 *   -LB_ENOMEM
 * Free with lb_msg_free() whatever the result.
 */
int lb_msg_decode(const uint8_t *buf, size_t len, struct lb_msg *m, char *errbuf, size_t errlen);

void lb_msg_free(struct lb_msg *m);

#endif /* LB_CODEC_H */
