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

#include "lb_hdr.h"
#include "lb_maglev.h"
#include "lb_parse.h"
#include "mux_conn.h"
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
};

/*
 * The backend of packet pi of service svc with flow hash fh, ce being its
 * connection-table entry or NULL. false: the service has no usable
 * backend (the packet is dropped no_backend).
 */
static inline bool
mux_choose(const struct mux_gen *g, uint32_t svc, const struct mux_conn *ce,
	const struct lb_pkt *pi, uint64_t fh, uint32_t now, struct mux_choice *c)
{
	c->was_closing = false;
	c->id = ce != NULL ? mux_conn_hit(g, svc, ce, pi, now, &c->was_closing) : UINT32_MAX;
	c->hit = c->id != UINT32_MAX;
	if (!c->hit)
		c->id = mux_maglev_pick(g, &g->services[svc], fh);
	return c->id != UINT32_MAX;
}

/*
 * Count the choice once the packet is on its way: a hit, or a new
 * connection (TCP and UDP only: errors follow flows, never start them).
 */
static inline void
mux_count_choice(struct mux_worker *w, const struct mux_gen *g, uint32_t svc,
	const struct lb_pkt *pi, const struct mux_choice *c, struct mux_burst_cnt *bc)
{
	if (c->hit) {
		bc->conn_hit++;
	} else if (pi->kind == LB_PKT_L4) {
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
