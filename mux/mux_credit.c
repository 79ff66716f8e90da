/* SPDX-License-Identifier: BSD-3-Clause */
/* Capacity credits, the mux's side: slots, grants in, reports out (mux_credit.h). */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "lb_ftable.h"
#include "mux_credit.h"
#include "mux_gen.h"

struct mux_credit *
mux_credit_create(uint16_t n_workers, uint64_t tsc_hz, int socket)
{
	struct mux_credit *c = rte_zmalloc_socket("mux_credit", sizeof(*c), 0, socket);

	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->lanes = rte_zmalloc_socket("mux_credit_lanes",
		sizeof(*c->lanes) * n_workers * MUX_CREDIT_SLOTS, RTE_CACHE_LINE_SIZE, socket);
	if (c->lanes == NULL) {
		rte_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->n_workers = n_workers;
	c->tsc_hz = tsc_hz;
	return c;
}

void
mux_credit_free(struct mux_credit *c)
{
	if (c == NULL)
		return;
	pthread_mutex_destroy(&c->lock);
	rte_free(c->lanes);
	rte_free(c);
}

static int
slot_of(const struct mux_credit *c, uint32_t id)
{
	int s;

	for (s = 0; s < MUX_CREDIT_SLOTS; s++)
		if (c->slot_bound[s] && c->slot_id[s] == id)
			return s;
	return -1;
}

/* Void every grant of slot s, in every lane (the credit thread's words). */
static void
void_slot(struct mux_credit *c, uint16_t s)
{
	uint16_t w;

	for (w = 0; w < c->n_workers; w++)
		__atomic_store_n(
			&mux_credit_lane(c, w, s)->void_below, c->slot_seq[s], __ATOMIC_RELEASE);
}

int
mux_credit_bind(struct mux_credit *c, struct mux_gen *g, const struct lb_ftable *ft,
	const struct mux_gen *running, char *err, size_t len)
{
	uint8_t keep[MUX_CREDIT_SLOTS] = {0};
	uint32_t i, j, k = 0;
	int s, rc = 0;

	if (g->credit_slot == NULL || c == NULL)
		return 0;
	pthread_mutex_lock(&c->lock);
	/* Slots the running generation uses stay bound until it is replaced. */
	for (i = 0; running != NULL && running->credit_slot != NULL && i < running->n_backends; i++)
		if (running->credit_slot[i] != MUX_CREDIT_NONE)
			keep[running->credit_slot[i]] = 1;
	/* g's backends lie in ft's order (mux_gen_build()): ft's ids are the agents'. */
	for (i = 0; i < ft->n_services; i++)
		for (j = 0; j < ft->services[i].n_backends; j++, k++)
			if (ft->services[i].backends[j].max_conns != 0 &&
				(s = slot_of(c, ft->services[i].backends[j].id)) >= 0)
				keep[s] = 1;
	for (s = 0; s < MUX_CREDIT_SLOTS; s++)
		if (!keep[s])
			c->slot_bound[s] = 0;
	k = 0;
	for (i = 0; rc == 0 && i < ft->n_services; i++)
		for (j = 0; rc == 0 && j < ft->services[i].n_backends; j++, k++) {
			uint32_t id = ft->services[i].backends[j].id;

			if (ft->services[i].backends[j].max_conns == 0)
				continue;
			if ((s = slot_of(c, id)) < 0) {
				for (s = 0; s < MUX_CREDIT_SLOTS && (c->slot_bound[s] || keep[s]);
					s++)
					;
				if (s == MUX_CREDIT_SLOTS) {
					snprintf(err, len,
						"more than %u backends with max_connections",
						MUX_CREDIT_SLOTS);
					rc = -1;
					break;
				}
				/* Whatever the slot held before was another backend's. */
				c->slot_bound[s] = 1;
				c->slot_id[s] = id;
				c->slot_agent_inc[s] = 0;
				c->slot_granted[s] = 0;
				c->slot_agent[s][0] = 0;
				void_slot(c, (uint16_t)s);
			}
			g->credit_slot[k] = (uint16_t)s;
		}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* What slot s holds and did, over every worker's lane. */
static void
report_slot(struct mux_credit *c, uint16_t s, uint64_t tsc, struct lb_credit_use *u)
{
	uint16_t w;

	u->granted = c->slot_granted[s];
	for (w = 0; w < c->n_workers; w++) {
		const struct mux_credit_lane *l = mux_credit_lane(c, w, s);
		uint32_t i, head = __atomic_load_n(&l->head, __ATOMIC_ACQUIRE);

		/* The worker's counters first: they never pass received, read after. */
		u->used += __atomic_load_n(&l->used, __ATOMIC_RELAXED);
		u->expired += __atomic_load_n(&l->expired, __ATOMIC_RELAXED);
		u->revoked += __atomic_load_n(&l->revoked, __ATOMIC_RELAXED);
		u->denied += __atomic_load_n(&l->denied, __ATOMIC_RELAXED);
		u->received += l->received;
		/*
		 * Live: what usable grants hold, less what the worker took of the
		 * head one, when head did not move while taken was read (else the
		 * head whole: an upper bound, never less than the truth).
		 */
		for (i = head; i != l->tail; i++) {
			const struct mux_credit_grant *gr = &l->ring[i & (MUX_CREDIT_RING - 1)];

			if (gr->seq >= l->void_below && tsc < gr->expires)
				u->live += gr->count;
		}
		if (head != l->tail) {
			const struct mux_credit_grant *gr = &l->ring[head & (MUX_CREDIT_RING - 1)];
			uint32_t taken = __atomic_load_n(&l->taken, __ATOMIC_ACQUIRE);

			if (__atomic_load_n(&l->head, __ATOMIC_ACQUIRE) == head &&
				gr->seq >= l->void_below && tsc < gr->expires && taken <= gr->count)
				u->live -= taken;
		}
	}
}

/* Push count credits of grant name into slot s, split over the workers. */
static void
push(struct mux_credit *c, uint16_t s, uint64_t name, uint32_t count, uint64_t expires)
{
	uint64_t seq = c->slot_seq[s]++;
	uint16_t w;

	for (w = 0; w < c->n_workers; w++) {
		struct mux_credit_lane *l = mux_credit_lane(c, w, s);
		uint32_t share = count / c->n_workers + (w < count % c->n_workers);
		struct mux_credit_grant *gr;

		if (share == 0)
			continue;
		if (l->tail - __atomic_load_n(&l->head, __ATOMIC_ACQUIRE) >= MUX_CREDIT_RING) {
			/* Full of grants nobody asked for: the agent counts them until they expire.
			 */
			c->grants_dropped++;
			continue;
		}
		gr = &l->ring[l->tail & (MUX_CREDIT_RING - 1)];
		*gr = (struct mux_credit_grant){seq, name, expires, share, 0};
		l->received += share;
		__atomic_store_n(&l->tail, l->tail + 1, __ATOMIC_RELEASE);
	}
}

/*
 * The agent renews: every usable grant of slot s lives until expires (a
 * lease its agent keeps while we answer; ha_grant.h). The worker reads
 * expires as it spends: it sees the old word or the new, and one it
 * already dropped stays dropped (only a push writes an entry past tail).
 */
static void
renew(struct mux_credit *c, uint16_t s, uint64_t tsc, uint64_t expires)
{
	uint16_t w;

	for (w = 0; w < c->n_workers; w++) {
		struct mux_credit_lane *l = mux_credit_lane(c, w, s);
		uint32_t i;

		for (i = __atomic_load_n(&l->head, __ATOMIC_ACQUIRE); i != l->tail; i++) {
			struct mux_credit_grant *gr = &l->ring[i & (MUX_CREDIT_RING - 1)];

			if (gr->seq >= l->void_below && tsc < gr->expires && gr->expires < expires)
				__atomic_store_n(&gr->expires, expires, __ATOMIC_RELAXED);
		}
	}
	c->renewals++;
}

/* The sequence number of slot s's first grant named at or above name, for a take-back. */
static uint64_t
seq_from(struct mux_credit *c, uint16_t s, uint64_t name)
{
	uint64_t seq = c->slot_seq[s];
	uint16_t w;

	for (w = 0; w < c->n_workers; w++) {
		const struct mux_credit_lane *l = mux_credit_lane(c, w, s);
		uint32_t i;

		for (i = __atomic_load_n(&l->head, __ATOMIC_ACQUIRE); i != l->tail; i++) {
			const struct mux_credit_grant *gr = &l->ring[i & (MUX_CREDIT_RING - 1)];

			if (gr->name >= name && gr->seq < seq)
				seq = gr->seq;
		}
	}
	return seq;
}

int
mux_credit_take(struct mux_credit *c, const struct lb_credit_grant *g, uint64_t tsc,
	struct lb_credit_report *r)
{
	uint64_t expires = tsc + c->tsc_hz * g->ttl_ms / 1000;
	int slots[LB_CREDIT_MAX];
	uint32_t i;

	r->agent_incarnation = g->incarnation;
	r->n = 0;
	pthread_mutex_lock(&c->lock);
	/* Check the whole grant before taking any of it. */
	for (i = 0; i < g->n; i++) {
		const struct lb_credit *cr = &g->c[i];
		int s = slots[i] = slot_of(c, cr->backend);

		if (s >= 0 && c->slot_agent_inc[s] == g->incarnation &&
			strcmp(c->slot_agent[s], g->agent) == 0 &&
			cr->granted < c->slot_granted[s]) {
			snprintf(r->refused, sizeof(r->refused),
				"backend %u: the agent's granted counter went back from %llu to "
				"%llu",
				cr->backend, (unsigned long long)c->slot_granted[s],
				(unsigned long long)cr->granted);
			c->grants_refused++;
			pthread_mutex_unlock(&c->lock);
			return -1;
		}
	}
	for (i = 0; i < g->n; i++) {
		const struct lb_credit *cr = &g->c[i];
		struct lb_credit_use *u = &r->u[r->n++];
		int s = slots[i];

		memset(u, 0, sizeof(*u));
		u->backend = cr->backend;
		if (s < 0)
			continue;
		if (c->slot_agent[s][0] != 0 && strcmp(c->slot_agent[s], g->agent) != 0) {
			if (tsc - c->slot_heard[s] < 2 * (expires - tsc)) {
				c->grants_foreign++;
				continue; /* another agent grants it: reported as holding none */
			}
			c->slot_agent_inc[s] = 0; /* that one went silent: this one takes over */
		}
		snprintf(c->slot_agent[s], sizeof(c->slot_agent[s]), "%s", g->agent);
		c->slot_heard[s] = tsc;
		if (c->slot_agent_inc[s] != g->incarnation) {
			/* Another start of the agent: what the old one granted is void. */
			if (c->slot_agent_inc[s] != 0)
				c->revokes++;
			void_slot(c, (uint16_t)s);
			c->slot_agent_inc[s] = g->incarnation;
		} else if (cr->revoke_below != 0) {
			uint64_t v = seq_from(c, (uint16_t)s, cr->revoke_below);

			if (v > mux_credit_lane(c, 0, (uint16_t)s)->void_below) {
				uint16_t w;

				for (w = 0; w < c->n_workers; w++)
					__atomic_store_n(
						&mux_credit_lane(c, w, (uint16_t)s)->void_below, v,
						__ATOMIC_RELEASE);
				c->revokes++;
			}
		}
		c->slot_granted[s] = cr->granted;
		if (cr->renew)
			renew(c, (uint16_t)s, tsc, expires);
		if (cr->count != 0) {
			push(c, (uint16_t)s, cr->grant, cr->count, expires);
			c->grants++;
		}
		report_slot(c, (uint16_t)s, tsc, u);
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void
mux_credit_tel(struct mux_credit *c, struct rte_tel_data *d)
{
	static const char *const what[] = {
		"received", "used", "expired", "revoked", "denied", "live", "granted"};
	char k[RTE_TEL_MAX_STRING_LEN];
	uint64_t tsc = rte_rdtsc();
	uint16_t s;
	uint32_t f;

	pthread_mutex_lock(&c->lock);
	rte_tel_data_add_dict_u64(d, "grants", c->grants);
	rte_tel_data_add_dict_u64(d, "grants_refused", c->grants_refused);
	rte_tel_data_add_dict_u64(d, "grants_dropped", c->grants_dropped);
	rte_tel_data_add_dict_u64(d, "grants_foreign", c->grants_foreign);
	rte_tel_data_add_dict_u64(d, "revokes", c->revokes);
	rte_tel_data_add_dict_u64(d, "renewals", c->renewals);
	for (s = 0; s < MUX_CREDIT_SLOTS; s++) {
		struct lb_credit_use u = {0};
		uint64_t v[RTE_DIM(what)];

		if (!c->slot_bound[s])
			continue;
		report_slot(c, s, tsc, &u);
		v[0] = u.received;
		v[1] = u.used;
		v[2] = u.expired;
		v[3] = u.revoked;
		v[4] = u.denied;
		v[5] = u.live;
		v[6] = u.granted;
		for (f = 0; f < RTE_DIM(what); f++) {
			snprintf(k, sizeof(k), "be_%u_%s", c->slot_id[s], what[f]);
			rte_tel_data_add_dict_u64(d, k, v[f]);
		}
		snprintf(k, sizeof(k), "be_%u_agent", c->slot_id[s]);
		rte_tel_data_add_dict_string(d, k, c->slot_agent[s][0] ? c->slot_agent[s] : "-");
	}
	pthread_mutex_unlock(&c->lock);
}
