/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Choosing a packet's backend, the same for both families (mux_pipeline.c
 * and mux_pipeline6.c): a connection-table entry wins while it is live,
 * names a backend its service still has and has not put in maintenance,
 * and is not a closed TCP connection's tuple reused by a new SYN;
 * otherwise Maglev on the flow hash. Then the entry's record: the
 * backend's stable id (it outlives generations), the expiry, the closing
 * state. Only the table differs between the families, so this header
 * takes the entry (or NULL) and leaves finding and adding it to the
 * caller. Inline: it is the middle of the forwarding loop.
 */
#ifndef MUX_CHOOSE_H
#define MUX_CHOOSE_H

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

#include "lb_choice.h"
#include "lb_hdr.h"
#include "lb_maglev.h"
#include "lb_parse.h"
#include "mux_conn.h"
#include "mux_credit.h"
#include "mux_gen.h"
#include "mux_limit.h"
#include "mux_worker.h"

/*
 * The record for a packet of a connection. A FIN or RST puts the entry in
 * the closing state, and it stays there (the client's last ACKs do not
 * stretch it back to the established timeout) until a new SYN reuses the
 * five-tuple; closing entries use the short timeout.
 */
static inline uint32_t
mux_conn_record(const uint32_t timeout[3], const struct lb_pkt *pi, uint32_t id, bool was_closing,
	uint32_t now, uint32_t *exp)
{
	bool closing;

	if (pi->proto == LB_IPPROTO_UDP) {
		*exp = now + timeout[MUX_CONN_UDP];
		return id;
	}
	closing = (pi->tcp_flags & (LB_TCP_FIN | LB_TCP_RST)) ||
		  (was_closing && (pi->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) != LB_TCP_SYN);
	*exp = now + timeout[closing ? MUX_CONN_TCP_FIN : MUX_CONN_TCP];
	return closing ? id | MUX_CONN_CLOSING : id;
}

/*
 * The backend (index in g) entry ce pins this packet of service svc to, or
 * UINT32_MAX: expired, pinned to a backend this service no longer has or
 * has put in maintenance, or a new SYN reusing the tuple of a closing
 * connection, all of which make a new flow. A draining backend keeps its
 * hits. *was_closing: the entry was closing (false when it does not count).
 */
static inline uint32_t
mux_conn_hit(const struct mux_gen *g, uint32_t svc, const struct mux_conn *ce,
	const struct lb_pkt *pi, uint32_t now, bool *was_closing)
{
	uint32_t raw = ce->backend & ~MUX_CONN_CLOSING, idx;

	*was_closing = (ce->backend & MUX_CONN_CLOSING) != 0;
	if ((int32_t)(ce->expires - now) > 0 && raw < g->cap_backends &&
		(idx = g->by_sid[raw]) != MUX_GEN_NONE && g->backends[idx].svc == svc &&
		g->backends[idx].state != LB_BACKEND_MAINT &&
		!(*was_closing && pi->proto == LB_IPPROTO_TCP &&
			(pi->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) == LB_TCP_SYN))
		return idx;
	*was_closing = false;
	return UINT32_MAX;
}

/* A packet that opens a connection: a TCP SYN (no ACK, no RST), or any UDP packet. */
static inline bool
mux_new_conn(const struct lb_pkt *pi)
{
	return pi->proto == LB_IPPROTO_UDP ||
	       (pi->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK | LB_TCP_RST)) == LB_TCP_SYN;
}

/*
 * The owner word of a connection of service sid with record rec: live
 * unless closing (the admission rules' concurrent connections, mux_conn.h).
 */
static inline uint32_t
mux_conn_owner_word(uint32_t sid, const struct mux_conn *rec)
{
	return sid | (rec->backend & MUX_CONN_CLOSING ? 0 : MUX_CONN_LIVE);
}

/* Maglev's backend (index in g) for flow hash fh in service s, or UINT32_MAX: none usable. */
static inline uint32_t
mux_maglev_pick(const struct mux_gen *g, const struct mux_service *s, uint64_t fh)
{
	uint16_t slot = lb_maglev_lookup(s->maglev, g->maglev_size, fh);

	return slot == LB_MAGLEV_EMPTY ? UINT32_MAX : s->first_backend + slot;
}

/* mux_choose()'s choice for a new flow a reject policy refuses (lb_choice.h). */
#define MUX_CHOICE_REJECT (UINT32_MAX - 1)
/* ... and for one no backend has a credit for, under redistribute (dropped no_credit). */
#define MUX_CHOICE_NO_CREDIT (UINT32_MAX - 2)

/*
 * The hash a new flow of service s is looked up by: the flow hash fh for
 * the five-tuple, else SipHash of the client's address (and protocol)
 * under the same seed, so every mux and worker makes the same choice.
 * Only new flows pay for it. An ICMP error's tuple is its flow's, client
 * first, so it follows its flow.
 */
static inline uint64_t
mux_affinity_hash(const struct mux_gen *g, const struct mux_service *s, const struct lb_pkt *pi,
	const uint8_t *p, uint64_t fh)
{
	struct {
		uint8_t addr[16];
		uint8_t proto;
		uint8_t v6;
	} k;

	if (s->affinity == LB_AFF_TUPLE)
		return fh;
	memset(&k, 0, sizeof(k));
	if (pi->v6)
		memcpy(k.addr, lb_pkt_src6(p, pi), 16);
	else
		memcpy(k.addr, &pi->src, 4);
	k.v6 = pi->v6;
	k.proto = s->affinity == LB_AFF_CLIENT_PROTO ? pi->proto : 0;
	return lb_siphash13(&g->seed, &k, sizeof(k));
}

/*
 * A new flow's backend: Maglev over the usable backends, or, for a
 * service with a first-choice table, that table's backend when it is
 * usable (active: the table holds only backends of non-zero weight in
 * the mux's zone), else the failure policy: the usable table by the same
 * key (redistribute), or MUX_CHOICE_REJECT. UINT32_MAX: none usable.
 */
static inline uint32_t
mux_pick(const struct mux_gen *g, const struct mux_service *s, const struct lb_pkt *pi,
	const uint8_t *p, uint64_t fh)
{
	uint64_t h;
	uint16_t slot;

	if (likely(s->first == NULL))
		return mux_maglev_pick(g, s, fh);
	h = mux_affinity_hash(g, s, pi, p, fh);
	slot = lb_maglev_lookup(s->first, g->maglev_size, h);
	if (slot != LB_MAGLEV_EMPTY &&
		g->backends[s->first_backend + slot].state == LB_BACKEND_ACTIVE)
		return s->first_backend + slot;
	if (s->on_unusable == LB_UNUSABLE_REJECT)
		return MUX_CHOICE_REJECT;
	return mux_maglev_pick(g, s, h);
}

/* Preference-order steps a capped flow tries before a scan of its pool (mux_capped()). */
#define MUX_CREDIT_TRIES 16

/*
 * Backend idx of g is capped: spend a credit of it (false: none; counted
 * denied in its lane when it was the flow's first choice, so that a SYN
 * counts once). No slot (no credit channel, or none bound) is no credit.
 */
static inline bool
mux_credit_ok(struct mux_worker *w, const struct mux_gen *g, uint32_t idx, uint64_t tsc, bool first)
{
	struct mux_credit_lane *l;
	uint16_t slot;

	if (!(g->backends[idx].flags & MUX_BE_CAPPED))
		return true;
	slot = g->credit_slot[idx];
	if (slot == MUX_CREDIT_NONE || w->ctx->credit == NULL)
		return false;
	l = mux_credit_lane(w->ctx->credit, w->idx, slot);
	if (mux_credit_spend(l, tsc))
		return true;
	l->denied += first;
	return false;
}

/*
 * A new connection whose backend idx is capped and has no credit goes to
 * the next backend in its preference order that is not capped or has a
 * credit: the usable Maglev table stepped from the flow's own slot by a
 * stride the flow's hash gives (the same order on every mux and worker),
 * MUX_CREDIT_TRIES steps, then the pool in order from the hash (active,
 * weighted, in the mux's zone when the service keeps to it). UINT32_MAX:
 * none; the caller applies the failure policy.
 */
static inline uint32_t
mux_capped(struct mux_worker *w, const struct mux_gen *g, const struct mux_service *s, uint32_t idx,
	uint64_t h)
{
	uint64_t tsc = rte_rdtsc();
	uint32_t k, pos, step, cand;

	if (mux_credit_ok(w, g, idx, tsc, true))
		return idx;
	pos = lb_flow_slot(h, g->maglev_size);
	step = (uint32_t)(h % (g->maglev_size - 1)) + 1; /* the size is prime: every step cycles */
	for (k = 0; k < MUX_CREDIT_TRIES; k++) {
		pos = (uint32_t)(((uint64_t)pos + step) % g->maglev_size);
		if (s->maglev[pos] == LB_MAGLEV_EMPTY)
			break;
		cand = s->first_backend + s->maglev[pos];
		if (cand != idx && mux_credit_ok(w, g, cand, tsc, false)) {
			w->cnt.credit_moved++;
			return cand;
		}
	}
	for (k = 0; k < s->n_backends; k++) {
		cand = s->first_backend + (uint32_t)((h + k) % s->n_backends);
		if (cand != idx && g->backends[cand].state == LB_BACKEND_ACTIVE &&
			!(g->backends[cand].flags & (MUX_BE_WEIGHT_ZERO | MUX_BE_OUT_ZONE)) &&
			mux_credit_ok(w, g, cand, tsc, false)) {
			w->cnt.credit_moved++;
			return cand;
		}
	}
	w->cnt.credit_none++;
	return UINT32_MAX;
}

/* The worker's busiest counters, kept in registers for a burst and added once. */
struct mux_burst_cnt {
	uint64_t fwd_pkts;
	uint64_t fwd_bytes;
	uint64_t conn_hit;
	uint64_t conn_new;
};

/* A packet's backend, and how it was found. */
struct mux_choice {
	uint32_t id;	  /* index in the generation */
	bool hit;	  /* from the connection table */
	bool was_closing; /* ... whose entry was closing */
	bool credit;	  /* a new connection to a capped id: mux_choose_credit() decides */
};

/*
 * The backend of packet pi (its frame at p) of service svc with flow hash
 * fh, ce being its connection-table entry or NULL. false: none, for
 * mux_no_choice() to answer: the service has no usable backend (dropped
 * no_backend), or its policy rejects (c->id MUX_CHOICE_REJECT). A new
 * connection to a capped backend spends nothing here: c->credit says
 * mux_choose_credit() is to decide, once the admission rules let it in.
 */
static inline bool
mux_choose(const struct mux_gen *g, uint32_t svc, const struct mux_conn *ce,
	const struct lb_pkt *pi, const uint8_t *p, uint64_t fh, uint32_t now, struct mux_choice *c)
{
	const struct mux_service *s;

	c->was_closing = false;
	c->credit = false;
	c->id = ce != NULL ? mux_conn_hit(g, svc, ce, pi, now, &c->was_closing) : UINT32_MAX;
	c->hit = c->id != UINT32_MAX;
	if (c->hit)
		return true;
	s = &g->services[svc];
	c->id = mux_pick(g, s, pi, p, fh);
	/* Capacity credits: only a connection's opening spends one (a SYN; UDP is never capped). */
	c->credit = unlikely(g->credit_slot != NULL) && c->id < MUX_CHOICE_REJECT &&
		    (g->backends[c->id].flags & MUX_BE_CAPPED) && pi->kind == LB_PKT_L4 &&
		    mux_new_conn(pi);
	return c->id < MUX_CHOICE_NO_CREDIT;
}

/*
 * A new connection to a capped backend (the caller saw c->credit), once
 * the admission rules let it in: spend a credit of it, or move it
 * (mux_capped()). Never before the rules: a SYN they refuse must not use
 * up a backend's credits. false: none anywhere, c->id saying what the
 * failure policy makes of it (mux_no_choice()).
 */
static inline bool
mux_choose_credit(struct mux_worker *w, const struct mux_gen *g, uint32_t svc,
	const struct lb_pkt *pi, const uint8_t *p, uint64_t fh, struct mux_choice *c)
{
	const struct mux_service *s = &g->services[svc];

	c->id = mux_capped(w, g, s, c->id, mux_affinity_hash(g, s, pi, p, fh));
	if (c->id == UINT32_MAX && s->on_unusable == LB_UNUSABLE_REJECT)
		c->id = MUX_CHOICE_REJECT;
	else if (c->id == UINT32_MAX)
		c->id = MUX_CHOICE_NO_CREDIT;
	return c->id < MUX_CHOICE_NO_CREDIT;
}

/* A packet mux_choose() found no backend for: rejected by policy, or dropped no_backend. */
static inline void
mux_no_choice(struct mux_worker *w, uint16_t port, struct rte_mbuf *m, const struct lb_pkt *pi,
	const struct mux_choice *c)
{
	if (c->id == MUX_CHOICE_REJECT)
		mux_reply_unusable(w, port, m, pi);
	else if (c->id == MUX_CHOICE_NO_CREDIT)
		mux_drop(w, m, LB_DROP_NO_CREDIT);
	else
		mux_drop(w, m, LB_DROP_NO_BACKEND);
}

/*
 * A TCP/UDP packet that missed the table and got no entry (its service's
 * quota, or a full table: the counter *why): it and the flow's next
 * packets go by Maglev alone and miss again. Only a packet that opens a
 * connection (a SYN, or UDP, which cannot tell) counts as a new one, and
 * as one more flow without an entry: false for the others.
 */
static inline bool
mux_no_entry(const struct lb_pkt *pi, uint64_t *why)
{
	if (!mux_new_conn(pi))
		return false;
	(*why)++;
	return true;
}

/*
 * Count the choice once the packet is on its way: a hit, or a new
 * connection (TCP and UDP only: errors follow flows, never start them);
 * made is false for a packet of a flow the table could not take, past
 * its first (mux_no_entry()).
 */
static inline void
mux_count_choice(struct mux_worker *w, const struct mux_gen *g, uint32_t svc,
	const struct lb_pkt *pi, const struct mux_choice *c, bool made, struct mux_burst_cnt *bc)
{
	if (c->hit) {
		bc->conn_hit++;
	} else if (pi->kind == LB_PKT_L4 && made) {
		bc->conn_new++;
		w->svc_cnt[g->services[svc].sid].new_conns++;
		w->be_cnt[g->backends[c->id].sid].new_conns++;
	}
}

/*
 * Admission (docs/protection.md): a new connection (a SYN, or a UDP flow)
 * of a service with rules, that the table did not pin, is checked; a TCP
 * packet that missed the table without a SYN is an established
 * connection: never cut. false: refused, and m answered or dropped.
 */
static inline bool
mux_admit(struct mux_worker *w, const struct mux_gen *g, uint16_t port, struct rte_mbuf *m,
	const struct lb_pkt *pi, uint32_t svc, const struct mux_choice *c)
{
	int rc;

	if (c->hit || pi->kind != LB_PKT_L4 || likely(!g->services[svc].checks) ||
		!mux_new_conn(pi))
		return true;
	rc = mux_limit_check(w, g, svc, pi, rte_pktmbuf_mtod(m, const uint8_t *));
	if (rc == 0)
		return true;
	mux_reply_refuse(w, port, m, pi, rc - 1);
	return false;
}

/*
 * Write the entry of a TCP/UDP packet's connection: ce rewritten in place
 * (only if it changes), or, with no entry, *rec and *exp for the caller's
 * table and true. The record names the backend by its stable id: it
 * outlives generations. Errors about a flow follow it; they never start
 * or refresh one.
 */
static inline bool
mux_conn_write(struct mux_conn *ce, const uint32_t timeout[3], const struct mux_gen *g,
	const struct lb_pkt *pi, const struct mux_choice *c, uint32_t now, struct mux_conn *out)
{
	if (pi->kind != LB_PKT_L4)
		return false;
	out->backend = mux_conn_record(
		timeout, pi, g->backends[c->id].sid, c->was_closing, now, &out->expires);
	if (ce == NULL)
		return true;
	if (ce->backend != out->backend || ce->expires != out->expires)
		*ce = *out;
	return false;
}

#endif /* MUX_CHOOSE_H */
