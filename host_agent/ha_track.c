/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection tracking for the backends' load (ha_track.h). One rte_hash of
 * (client, DIP, ports, family) -> position, and an entry per position: the
 * backend's id, the state, the time of the last segment (of the SYN while
 * it waits for an answer). The sweep walks HA_TRACK_SWEEP positions per
 * loop, so a full pass over 65,536 takes 1,024 loops.
 */
#include <stdbool.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "dp_counters.h"
#include "ha_agent.h"
#include "ha_track.h"
#include "lb_hdr.h"
#include "lb_log.h"

/*
 * SYN: the client's SYN seen; SYNACK: the backend answered, the client's
 * ACK not yet seen (a spoofed SYN ends here, and expires as a SYN does);
 * EST: the client acknowledged.
 */
enum ha_conn_state { HA_CONN_FREE, HA_CONN_SYN, HA_CONN_SYNACK, HA_CONN_EST, HA_CONN_CLOSED };

struct ha_ckey {
	struct lb_addr client;
	struct lb_addr dip;
	lb_be16_t cport;
	lb_be16_t dport;
	uint8_t af;
	uint8_t pad[3];
};

struct ha_conn {
	uint32_t be;
	uint32_t last_ms;
	uint8_t state;
};

struct ha_track {
	struct rte_hash *h;
	struct ha_conn *conn; /* [HA_TRACK_ENTRIES] by the key's position */
	/*
	 * Backend id -> its slot in be[]: added by the lcore at a backend's
	 * first SYN, read lock-free by the control threads, deleted by the
	 * lcore when it forgets the backend (forget_some()). A deleted key's
	 * slot stays taken, its counters as they were, for HA_TRACK_GRACE_MS
	 * (a reader that found it before the delete is done by then): only
	 * then does the lcore zero it and free it for another backend.
	 */
	struct rte_hash *ids;
	struct ha_be_load *be; /* [n_slots] by slot */
	uint32_t n_slots;
	uint32_t id_next; /* the next slot forget_some() looks at */
	uint32_t id_ms;	  /* when it last looked */
	struct ha_retired {
		uint32_t slot;
		uint32_t at_ms;
	} * retired; /* [n_slots]: a FIFO of slots deleted, waiting out the grace */
	uint32_t ret_head, ret_n;
	uint32_t sweep; /* next position the sweep looks at */
	uint64_t untracked;
	uint64_t adopted;
	uint64_t forgotten;
	uint32_t adopt_from_ms; /* adopt() works from then (the first sweep) ... */
	bool adopt_open;	/* ... set then, for HA_TRACK_IDLE_MS (adopting()) */
	bool adopt_over;	/* ... and that time has passed, for good */
};

struct ha_track *
ha_track_create(uint32_t backends)
{
	static unsigned seq;
	struct ha_track *t = rte_zmalloc("ha_track", sizeof(*t), 0);
	char name[32];
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = HA_TRACK_ENTRIES,
		.key_len = sizeof(struct ha_ckey),
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
	};

	if (t == NULL)
		return NULL;
	snprintf(name, sizeof(name), "ha_track_%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	t->h = rte_hash_create(&hp);
	snprintf(name, sizeof(name), "ha_track_ids_%u",
		__atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	/* Positions (slots) run from 0 to entries - 1; rte_hash wants 8 or more. */
	hp.entries = backends;
	hp.key_len = sizeof(uint32_t);
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF;
	t->ids = rte_hash_create(&hp);
	t->n_slots = backends;
	t->conn = rte_zmalloc("ha_conns", sizeof(*t->conn) * HA_TRACK_ENTRIES, 0);
	t->be = rte_zmalloc("ha_be_load", sizeof(*t->be) * t->n_slots, 0);
	t->retired = rte_zmalloc("ha_retired", sizeof(*t->retired) * t->n_slots, 0);
	if (t->h == NULL || t->ids == NULL || t->conn == NULL || t->be == NULL ||
		t->retired == NULL) {
		ha_track_free(t);
		return NULL;
	}
	return t;
}

void
ha_track_free(struct ha_track *t)
{
	if (t == NULL)
		return;
	rte_hash_free(t->h);
	rte_hash_free(t->ids);
	rte_free(t->conn);
	rte_free(t->be);
	rte_free(t->retired);
	rte_free(t);
}

/* The key of a segment between client (c, cport) and DIP (d, dport) of family af. */
static void
make_key(struct ha_ckey *k, uint8_t af, const void *c, lb_be16_t cport, const void *d,
	lb_be16_t dport)
{
	size_t n = af == LB_AF_INET6 ? 16 : 4;

	memset(k, 0, sizeof(*k));
	memcpy(k->client.a8, c, n);
	memcpy(k->dip.a8, d, n);
	k->cport = cport;
	k->dport = dport;
	k->af = af;
}

/* An entry that stops counting as active: a FIN, a RST, an unanswered SYN, idle expiry. */
static void
close_conn(struct ha_track *t, struct ha_conn *c, uint32_t now)
{
	if (c->state == HA_CONN_SYN || c->state == HA_CONN_SYNACK || c->state == HA_CONN_EST)
		t->be[c->be].active--;
	c->state = HA_CONN_CLOSED;
	c->last_ms = now;
}

/* Backend id's slot in be[], made at its first SYN; -1: no room (counted untracked). */
static int32_t
slot_of(struct ha_track *t, uint32_t id)
{
	int32_t s = rte_hash_lookup(t->ids, &id);

	if (s < 0)
		s = rte_hash_add_key(t->ids, &id);
	if (s < 0)
		t->untracked++;
	return s;
}

/*
 * Is the window for adopt() open at now? It opens at the first sweep and
 * closes HA_TRACK_IDLE_MS later, for good. The millisecond clock is 32 bits
 * and wraps in 49.7 days: the time is measured from the opening (unsigned,
 * so a reading 2^31 ms on is still past the end, not before it) and the
 * end is latched the first time it is seen (every sweep looks).
 */
static bool
adopting(struct ha_track *t, uint32_t now)
{
	if (!t->adopt_open || t->adopt_over)
		return false;
	if (now - t->adopt_from_ms >= HA_TRACK_IDLE_MS) {
		t->adopt_over = true;
		return false;
	}
	return true;
}

/*
 * A segment of a connection the table does not know, established by its
 * flags (ACK, no SYN, FIN or RST): one opened before this agent started.
 * It is counted from now on as established (never as opened), so an agent
 * that restarts finds the connections it had as soon as they send:
 * capacity credits and least connections depend on it. Only for the idle
 * timeout after the lcore's first loop: later, a connection it never
 * saw open is one it should not count (a stray or forged ACK, which a
 * backend may drop instead of answering with the RST that would close the
 * entry, or a segment of one the table had no room for).
 */
static void
adopt(struct ha_worker *w, const struct ha_ckey *k, const struct lb_pkt *pi)
{
	struct ha_track *t = w->track;
	const struct ha_lb *lb;
	struct ha_conn *c;
	int32_t slot, pos;

	/* Only for the idle timeout after the start: by then any connection from before sent. */
	if (!adopting(t, w->now_ms) ||
		(pi->tcp_flags & (LB_TCP_ACK | LB_TCP_FIN | LB_TCP_RST)) != LB_TCP_ACK ||
		(lb = ha_map_by_dip(w->map, k->af, k->dip.a8, k->dport, LB_IPPROTO_TCP)) == NULL ||
		(slot = slot_of(t, lb->be_id)) < 0)
		return;
	if ((pos = rte_hash_add_key(t->h, k)) < 0) {
		t->untracked++;
		return;
	}
	c = &t->conn[pos];
	c->be = (uint32_t)slot;
	c->state = HA_CONN_EST;
	c->last_ms = w->now_ms;
	t->be[c->be].active++;
	t->adopted++;
}

void
ha_track_in(struct ha_worker *w, const uint8_t *p, const struct lb_pkt *pi)
{
	struct ha_track *t = w->track;
	uint8_t af = pi->v6 ? LB_AF_INET6 : LB_AF_INET;
	bool syn = (pi->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK | LB_TCP_RST)) == LB_TCP_SYN;
	const uint8_t *dip = pi->v6 ? lb_pkt_dst6(p, pi) : (const uint8_t *)&pi->dst;
	const struct ha_lb *lb = NULL;
	int32_t slot = -1;
	struct ha_ckey k;
	struct ha_conn *c;
	int32_t pos;

	if (t == NULL)
		return;
	/* Only a SYN needs the backend: later segments find it in the entry. */
	if (syn && ((lb = ha_map_by_dip(w->map, af, dip, pi->dport, LB_IPPROTO_TCP)) == NULL ||
			   (slot = slot_of(t, lb->be_id)) < 0))
		return;
	make_key(&k, af, pi->v6 ? lb_pkt_src6(p, pi) : (const uint8_t *)&pi->src, pi->sport, dip,
		pi->dport);
	pos = syn ? rte_hash_add_key(t->h, &k) : rte_hash_lookup(t->h, &k);
	if (pos < 0 && !syn) {
		adopt(w, &k, pi);
		return;
	}
	if (pos < 0) {
		t->untracked++;
		return;
	}
	c = &t->conn[pos];
	if (syn) {
		/* New, or a closed tuple reused; a retransmitted SYN keeps its time. */
		if (c->state == HA_CONN_FREE || c->state == HA_CONN_CLOSED) {
			c->be = (uint32_t)slot;
			c->state = HA_CONN_SYN;
			c->last_ms = w->now_ms;
			t->be[c->be].opened++;
			t->be[c->be].active++;
		}
		return;
	}
	if (c->state == HA_CONN_FREE)
		return;
	if (pi->tcp_flags & (LB_TCP_FIN | LB_TCP_RST)) {
		close_conn(t, c, w->now_ms);
	} else if (c->state == HA_CONN_SYNACK && (pi->tcp_flags & LB_TCP_ACK)) {
		c->state = HA_CONN_EST; /* the client's half of the handshake */
		c->last_ms = w->now_ms;
	} else if (c->state == HA_CONN_EST) {
		c->last_ms = w->now_ms;
	}
}

void
ha_track_out(struct ha_worker *w, const uint8_t *p, const struct lb_pkt *pi)
{
	struct ha_track *t = w->track;
	uint8_t af = pi->v6 ? LB_AF_INET6 : LB_AF_INET;
	struct ha_ckey k;
	struct ha_conn *c;
	int32_t pos;

	if (t == NULL)
		return;
	/* The reply's destination is the client, its source the DIP. */
	make_key(&k, af, pi->v6 ? lb_pkt_dst6(p, pi) : (const uint8_t *)&pi->dst, pi->dport,
		pi->v6 ? lb_pkt_src6(p, pi) : (const uint8_t *)&pi->src, pi->sport);
	pos = rte_hash_lookup(t->h, &k);
	if (pos < 0 || (c = &t->conn[pos])->state == HA_CONN_FREE)
		return;
	if (pi->tcp_flags & LB_TCP_RST) {
		if (c->state == HA_CONN_SYN)
			t->be[c->be].refused++;
		close_conn(t, c, w->now_ms);
	} else if (pi->tcp_flags & LB_TCP_FIN) {
		close_conn(t, c, w->now_ms);
	} else if (c->state == HA_CONN_SYN &&
		   (pi->tcp_flags & (LB_TCP_SYN | LB_TCP_ACK)) == (LB_TCP_SYN | LB_TCP_ACK)) {
		c->state = HA_CONN_SYNACK; /* established once the client acknowledges */
		c->last_ms = w->now_ms;
	} else if (c->state == HA_CONN_EST) {
		c->last_ms = w->now_ms;
	}
}

/*
 * Every HA_TRACK_FORGET_MS: free the slots whose grace is over, then look
 * at the next HA_TRACK_FORGET_SCAN slots. A backend the map no longer
 * holds, with no connection open, is forgotten: deleted from ids, its slot
 * freed after the grace. (A CLOSED entry still names its slot, but never
 * counts in it again: a SYN that reuses the entry sets the slot anew.) By
 * slot, a few at a time, rather than rte_hash_iterate(), which walks every
 * empty place up to the next key: tens of microseconds on the lcore for a
 * tracker of few backends.
 */
static void
forget_some(struct ha_track *t, const struct ha_map *map, uint32_t now)
{
	int32_t slot;
	uint32_t id, i;
	void *key;

	if (now - t->id_ms < HA_TRACK_FORGET_MS)
		return;
	t->id_ms = now;
	while (t->ret_n > 0 && now - t->retired[t->ret_head].at_ms >= HA_TRACK_GRACE_MS) {
		slot = (int32_t)t->retired[t->ret_head].slot;
		memset(&t->be[slot], 0, sizeof(t->be[slot]));
		rte_hash_free_key_with_position(t->ids, slot);
		t->ret_head = (t->ret_head + 1) % t->n_slots;
		t->ret_n--;
	}
	for (i = 0; i < HA_TRACK_FORGET_SCAN && i < t->n_slots; i++) {
		slot = (int32_t)t->id_next;
		t->id_next = (t->id_next + 1) % t->n_slots;
		/* No key there (never used, deleted, or freed): nothing to forget. */
		if (rte_hash_get_key_with_position(t->ids, slot, &key) != 0)
			continue;
		memcpy(&id, key, sizeof(id));
		if (t->be[slot].active != 0 || ha_map_has_id(map, id) || t->ret_n == t->n_slots ||
			rte_hash_del_key(t->ids, &id) != slot)
			continue;
		t->retired[(t->ret_head + t->ret_n) % t->n_slots] =
			(struct ha_retired){.slot = (uint32_t)slot, .at_ms = now};
		t->ret_n++;
		t->forgotten++;
	}
}

void
ha_track_sweep(struct ha_worker *w)
{
	struct ha_track *t = w->track;
	uint32_t i, now = w->now_ms;

	if (t == NULL)
		return;
	if (!t->adopt_open) {
		t->adopt_from_ms = now;
		t->adopt_open = true;
	}
	adopting(t, now); /* latch the window's end */
	for (i = 0; i < HA_TRACK_SWEEP; i++) {
		uint32_t pos = t->sweep;
		struct ha_conn *c = &t->conn[pos];
		uint32_t age = now - c->last_ms;
		const void *key;

		t->sweep = (pos + 1) % HA_TRACK_ENTRIES;
		if (c->state == HA_CONN_SYN && age >= HA_TRACK_SYN_MS) {
			t->be[c->be].unanswered++;
			close_conn(t, c, now);
		} else if (c->state == HA_CONN_SYNACK && age >= HA_TRACK_SYN_MS) {
			/* Answered, never acknowledged: the client's doing, no failure. */
			close_conn(t, c, now);
		} else if (c->state == HA_CONN_EST && age >= HA_TRACK_IDLE_MS) {
			close_conn(t, c, now);
		} else if (c->state == HA_CONN_CLOSED && age >= HA_TRACK_FIN_MS &&
			   rte_hash_get_key_with_position(t->h, (int32_t)pos, (void **)&key) == 0) {
			struct ha_ckey k;

			memcpy(&k, key, sizeof(k));
			rte_hash_del_key(t->h, &k);
			c->state = HA_CONN_FREE;
		}
	}
	forget_some(t, w->map, now);
}

const struct ha_be_load *
ha_track_load(const struct ha_track *t, uint32_t id)
{
	static const struct ha_be_load none; /* no SYN yet */
	int32_t s;

	if (t == NULL)
		return NULL;
	s = rte_hash_lookup(t->ids, &id);
	return s >= 0 ? &t->be[s] : &none;
}

uint64_t
ha_track_untracked(const struct ha_track *t)
{
	return t != NULL ? DP_RD(t->untracked) : 0;
}

uint64_t
ha_track_adopted(const struct ha_track *t)
{
	return t != NULL ? DP_RD(t->adopted) : 0;
}

uint64_t
ha_track_forgotten(const struct ha_track *t)
{
	return t != NULL ? DP_RD(t->forgotten) : 0;
}
