/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capacity credits, the mux's side (docs/architecture.md, "Capacity
 * credits"). A backend with max_connections gets new connections from
 * this mux only with a credit its host agent granted; the agent's
 * arithmetic is host_agent/ha_grant.h, the channel mux_credit_chan.c.
 *
 * Every capped backend has a slot; every worker a lane per slot: a ring
 * of grants the credit thread writes (single producer: entries, then
 * tail with release) and the worker consumes (single consumer: head and
 * how much of the head grant it took). A grant carries a mux-local
 * sequence number; void_below, which only the credit thread writes,
 * voids every grant below it at once (an agent's take-back, or its
 * restart). Expiry is in TSC cycles, set on receipt and pushed on by the
 * agent's renewals (the credit thread's word, read relaxed). No locks and no
 * atomic read-modify-writes: the worker reads two words the credit thread
 * publishes and writes its own, and only on a new connection to a capped
 * backend, or one lane per loop in its sweep (so grants that expire
 * unused free their ring entries even while no connection asks).
 *
 * A grant is split between the workers (the agent grants the mux; the
 * mux does not know which worker the next SYN reaches), so a mux with
 * several workers can turn a connection away while another worker still
 * holds a credit: it counts as denied, and the agent's next shares see
 * the demand.
 */
#ifndef MUX_CREDIT_H
#define MUX_CREDIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "lb_credit_msg.h"

#define MUX_CREDIT_SLOTS 256 /* capped backends a mux serves at once */
#define MUX_CREDIT_RING 16   /* grants a lane holds (a power of two) */
#define MUX_CREDIT_NONE UINT16_MAX

struct mux_credit_grant {
	uint64_t seq;	  /* mux-local, increasing per slot */
	uint64_t name;	  /* the agent's */
	uint64_t expires; /* TSC */
	uint32_t count;
	uint32_t pad;
};

struct mux_credit_lane {
	/* the credit thread's */
	struct mux_credit_grant ring[MUX_CREDIT_RING];
	uint32_t tail;	     /* next entry written; published with release */
	uint64_t void_below; /* grants with seq below are void */
	uint64_t received;   /* credits pushed */
	/* the worker's */
	uint32_t head __rte_cache_aligned; /* next entry to spend from; published with release */
	uint32_t taken;			   /* of ring[head] */
	uint64_t used;
	uint64_t expired;
	uint64_t revoked;
	uint64_t denied;
} __rte_cache_aligned;

struct lb_ftable;
struct mux_gen;

/*
 * The slots and every worker's lanes. lock guards the slot map against
 * the two threads that change it: a build (binding a generation's capped
 * backends) and the credit thread (taking grants).
 */
struct mux_credit {
	pthread_mutex_t lock;
	uint16_t n_workers;
	uint64_t tsc_hz;
	uint32_t slot_id[MUX_CREDIT_SLOTS]; /* the backend's stable id */
	uint8_t slot_bound[MUX_CREDIT_SLOTS];
	uint64_t slot_seq[MUX_CREDIT_SLOTS];	   /* next grant's sequence number */
	uint64_t slot_agent_inc[MUX_CREDIT_SLOTS]; /* the agent start that grants it */
	/*
	 * The agent that grants it ("": none yet), and when it last did (TSC):
	 * another agent's grants for the slot are ignored until this one has
	 * been silent for 2 x ttl (a backend that moved hosts, or a stray).
	 */
	char slot_agent[MUX_CREDIT_SLOTS][LB_MSG_ID];
	uint64_t slot_heard[MUX_CREDIT_SLOTS];
	uint64_t slot_granted[MUX_CREDIT_SLOTS]; /* that agent's counter, last taken */
	struct mux_credit_lane *lanes;		 /* [n_workers * MUX_CREDIT_SLOTS] */
	/* the credit thread's tallies */
	uint64_t grants;	 /* grants taken */
	uint64_t grants_refused; /* grant messages refused */
	uint64_t grants_dropped; /* grants a full lane could not take */
	uint64_t revokes;	 /* take-backs applied */
	uint64_t renewals;	 /* renewals applied (backend entries) */
	uint64_t grants_foreign; /* entries ignored: another agent grants that backend */
};

/* NULL with rte_errno (ENOMEM). */
struct mux_credit *mux_credit_create(uint16_t n_workers, uint64_t tsc_hz, int socket);
void mux_credit_free(struct mux_credit *c);

/* Worker w's lane of slot s. */
static inline struct mux_credit_lane *
mux_credit_lane(struct mux_credit *c, uint16_t w, uint16_t s)
{
	return &c->lanes[(uint32_t)w * MUX_CREDIT_SLOTS + s];
}

/*
 * Give g's capped backends their slots (g->credit_slot), by the ids of
 * ft, the table g was built from as the manager numbered it (before
 * mux_gen_assign_sids(): those are the agents' ids), keeping the
 * slots of backends that `running` (the generation in use, may be NULL)
 * also has; a slot neither uses is freed, and one given anew has its
 * grants voided. -1 with why in err: more than MUX_CREDIT_SLOTS capped
 * backends. c NULL (no credit channel): the slots stay none, and a
 * capped backend never gets a new connection from this mux.
 */
int mux_credit_bind(struct mux_credit *c, struct mux_gen *g, const struct lb_ftable *ft,
	const struct mux_gen *running, char *err, size_t len);

/*
 * Take one agent's grant (the credit thread), and fill its report: what
 * this mux holds and did for every backend the grant names. A grant for a
 * backend this mux has no slot for is ignored (reported with zeros).
 * Returns 0, or -1 when the grant is refused whole (r->refused says why).
 */
int mux_credit_take(struct mux_credit *c, const struct lb_credit_grant *g, uint64_t tsc,
	struct lb_credit_report *r);

struct rte_tel_data;

/*
 * /sluice/credits' dict (any thread): the credit thread's tallies, and per
 * bound slot be_<id>_received, _used, _expired, _revoked, _denied (every
 * worker's lane together), _live (what its usable grants still hold),
 * _granted (its agent's counter) and _agent (the agent that grants it).
 * Telemetry's dict holds 256 entries: the first 31 bound slots show.
 */
void mux_credit_tel(struct mux_credit *c, struct rte_tel_data *d);

/*
 * A worker spends a credit of slot s (its lane l) for a new connection.
 * Grants are spent oldest first; void and expired ones are skipped and
 * their rest counted. false: none left (counted denied by the caller's
 * choice, mux_choose.h).
 */
static inline bool
mux_credit_spend(struct mux_credit_lane *l, uint64_t tsc)
{
	uint32_t tail = __atomic_load_n(&l->tail, __ATOMIC_ACQUIRE);
	uint64_t void_below = __atomic_load_n(&l->void_below, __ATOMIC_ACQUIRE);

	while (l->head != tail) {
		const struct mux_credit_grant *gr = &l->ring[l->head & (MUX_CREDIT_RING - 1)];

		uint64_t expires = __atomic_load_n(&gr->expires, __ATOMIC_RELAXED);

		if (gr->seq >= void_below && tsc < expires && l->taken < gr->count) {
			/* The credit thread reads taken to report what is left (report_slot()). */
			__atomic_store_n(&l->taken, l->taken + 1, __ATOMIC_RELEASE);
			l->used++;
			return true;
		}
		if (gr->seq < void_below)
			l->revoked += gr->count - l->taken;
		else if (tsc >= expires)
			l->expired += gr->count - l->taken;
		l->taken = 0;
		__atomic_store_n(&l->head, l->head + 1, __ATOMIC_RELEASE);
	}
	return false;
}

/* Drop lane l's head grant if it is void or expired (the worker's sweep). */
static inline void
mux_credit_sweep(struct mux_credit_lane *l, uint64_t tsc)
{
	uint32_t tail = __atomic_load_n(&l->tail, __ATOMIC_ACQUIRE);
	const struct mux_credit_grant *gr;
	uint64_t expires;

	if (l->head == tail)
		return;
	gr = &l->ring[l->head & (MUX_CREDIT_RING - 1)];
	expires = __atomic_load_n(&gr->expires, __ATOMIC_RELAXED);
	if (gr->seq >= __atomic_load_n(&l->void_below, __ATOMIC_ACQUIRE) && tsc < expires &&
		l->taken < gr->count)
		return;
	if (gr->seq < l->void_below)
		l->revoked += gr->count - l->taken;
	else if (tsc >= expires)
		l->expired += gr->count - l->taken;
	l->taken = 0;
	__atomic_store_n(&l->head, l->head + 1, __ATOMIC_RELEASE);
}

#endif /* MUX_CREDIT_H */
