/* SPDX-License-Identifier: BSD-3-Clause */
/* The muxes' flow counters and their rates (mgr_stats.h has the design). */
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "mgr_commit.h"
#include "mgr_stats.h"

struct st_sample {
	uint64_t pkts, bytes, conns, ms;
};

struct st_flow {
	struct lb_flow_count key; /* counters unused: the samples hold them */
	struct st_sample base, cur;
	uint32_t pass; /* the member's round it was last reported in */
	bool used;
};

/* One member's flows: open addressing, linear probing, at most half full. */
struct st_member {
	struct st_flow *tab;
	uint32_t cap, n;
	uint32_t pass; /* whole rounds of its windows seen */
};

struct mgr_stats {
	struct st_member m[MGR_MAX_MEMBERS];
};

struct mgr_stats *
mgr_stats_new(void)
{
	return calloc(1, sizeof(struct mgr_stats));
}

void
mgr_stats_free(struct mgr_stats *st)
{
	uint32_t i;

	if (st == NULL)
		return;
	for (i = 0; i < MGR_MAX_MEMBERS; i++)
		free(st->m[i].tab);
	free(st);
}

static bool
same_key(const struct lb_flow_count *a, const struct lb_flow_count *b)
{
	return a->af == b->af && a->vip.a64[0] == b->vip.a64[0] && a->vip.a64[1] == b->vip.a64[1] &&
	       a->port == b->port && a->proto == b->proto && a->dip.a64[0] == b->dip.a64[0] &&
	       a->dip.a64[1] == b->dip.a64[1] && a->dip_port == b->dip_port;
}

static uint32_t
hash_key(const struct lb_flow_count *k)
{
	uint64_t h = k->vip.a64[0] ^ k->vip.a64[1] * 31 ^ (uint64_t)k->port << 40 ^
		     (uint64_t)k->proto << 56 ^ k->dip.a64[0] * 0x9e3779b97f4a7c15ULL ^
		     k->dip.a64[1] ^ (uint64_t)k->dip_port << 24;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* The slot of key in m: its own, or the empty one it would take. */
static struct st_flow *
slot(const struct st_member *m, const struct lb_flow_count *key)
{
	uint32_t i = hash_key(key) & (m->cap - 1);

	while (m->tab[i].used && !same_key(&m->tab[i].key, key))
		i = (i + 1) & (m->cap - 1);
	return &m->tab[i];
}

static int
grow(struct st_member *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 1024, i;
	struct st_member n = {.cap = cap, .pass = m->pass};

	n.tab = calloc(cap, sizeof(*n.tab));
	if (n.tab == NULL)
		return -LB_ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->tab[i].used) {
			*slot(&n, &m->tab[i].key) = m->tab[i];
			n.n++;
		}
	free(m->tab);
	*m = n;
	return 0;
}

/* Drop the flows missing from the last two whole rounds (rebuilding the table). */
static void
sweep(struct st_member *m)
{
	struct st_member n = {.cap = m->cap, .pass = m->pass};
	uint32_t i;

	n.tab = calloc(m->cap, sizeof(*n.tab));
	if (n.tab == NULL)
		return; /* keep them: next round */
	for (i = 0; i < m->cap; i++)
		if (m->tab[i].used && m->tab[i].pass + 2 >= m->pass) {
			*slot(&n, &m->tab[i].key) = m->tab[i];
			n.n++;
		}
	free(m->tab);
	*m = n;
}

static void
sample(struct st_flow *e, const struct lb_flow_count *f, uint32_t pass, uint64_t now)
{
	struct st_sample s = {f->pkts, f->bytes, f->new_conns, now};

	if (e->used && (s.pkts < e->cur.pkts || s.bytes < e->cur.bytes || s.conns < e->cur.conns))
		e->used = false; /* a counter went back: start over */
	if (!e->used) {
		e->key = *f;
		e->base = e->cur = s;
		e->used = true;
	} else {
		/* base stays at least a window behind cur */
		if (e->cur.ms >= e->base.ms + MGR_STATS_WINDOW_MS)
			e->base = e->cur;
		e->cur = s;
	}
	e->pass = pass;
}

int
mgr_stats_status(struct mgr_stats *st, int member, const struct lb_flow_count *f, uint32_t n,
	uint32_t first, uint32_t total, uint64_t now)
{
	struct st_member *m;
	uint32_t i;
	int rc = 0;

	if (member < 0 || member >= MGR_MAX_MEMBERS)
		return 0;
	m = &st->m[member];
	for (i = 0; i < n; i++) {
		struct st_flow *e;

		if ((m->n + 1) * 2 > m->cap && m->n < MGR_STATS_MAX_FLOWS && grow(m) != 0)
			rc = -LB_ENOMEM;
		if (m->cap == 0)
			return -LB_ENOMEM;
		e = slot(m, &f[i]);
		if (!e->used) {
			if ((m->n + 1) * 2 > m->cap) {
				rc = -LB_ENOMEM; /* no room for one more */
				continue;
			}
			m->n++;
		}
		sample(e, &f[i], m->pass, now);
	}
	/* The window reached the end of the member's flows: a whole round. */
	if (total == 0 || first + n >= total) {
		m->pass++;
		sweep(m);
	}
	return rc;
}

void
mgr_stats_forget(struct mgr_stats *st, int member)
{
	if (member < 0 || member >= MGR_MAX_MEMBERS)
		return;
	free(st->m[member].tab);
	memset(&st->m[member], 0, sizeof(st->m[member]));
}

static struct mgr_rate
rate_of(const struct st_flow *e)
{
	struct mgr_rate r = {0, 0, 0};
	double dt = (double)(e->cur.ms - e->base.ms) / 1000.0;

	if (dt <= 0)
		return r;
	r.pps = (double)(e->cur.pkts - e->base.pkts) / dt;
	r.bps = (double)(e->cur.bytes - e->base.bytes) * 8 / dt;
	r.cps = (double)(e->cur.conns - e->base.conns) / dt;
	return r;
}

bool
mgr_stats_rate(
	const struct mgr_stats *st, int member, const struct lb_flow_count *key, struct mgr_rate *r)
{
	const struct st_member *m;
	const struct st_flow *e;

	if (member < 0 || member >= MGR_MAX_MEMBERS || st->m[member].cap == 0)
		return false;
	m = &st->m[member];
	e = slot(m, key);
	if (!e->used)
		return false;
	*r = rate_of(e);
	return true;
}

uint32_t
mgr_stats_count(const struct mgr_stats *st, int member)
{
	return member >= 0 && member < MGR_MAX_MEMBERS ? st->m[member].n : 0;
}

/* Service order, a service (dip_port 0) before its backends. */
static int
cmp_flow(const void *a, const void *b)
{
	const struct lb_flow_count *x = &((const struct mgr_flow_sum *)a)->f;
	const struct lb_flow_count *y = &((const struct mgr_flow_sum *)b)->f;
	int c = memcmp(&x->vip, &y->vip, sizeof(x->vip));

	if (c != 0)
		return c;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if ((x->dip_port == 0) != (y->dip_port == 0))
		return x->dip_port == 0 ? -1 : 1;
	c = memcmp(&x->dip, &y->dip, sizeof(x->dip));
	if (c != 0)
		return c;
	return x->dip_port < y->dip_port ? -1 : x->dip_port > y->dip_port;
}

int
mgr_stats_sum(const struct mgr_stats *st, const bool *in, struct mgr_flow_sum **out)
{
	struct mgr_flow_sum *s = NULL;
	size_t n = 0, cap = 0, i, k;
	uint32_t mi, j;

	*out = NULL;
	/* every flow once, then each member's added by binary search */
	for (mi = 0; mi < MGR_MAX_MEMBERS; mi++) {
		const struct st_member *m = &st->m[mi];

		if (!in[mi])
			continue;
		for (j = 0; j < m->cap; j++) {
			if (!m->tab[j].used)
				continue;
			if (n == cap) {
				struct mgr_flow_sum *t;

				cap = cap ? cap * 2 : 256;
				t = realloc(s, cap * sizeof(*s));
				if (t == NULL) {
					free(s);
					return -LB_ENOMEM;
				}
				s = t;
			}
			memset(&s[n], 0, sizeof(s[n]));
			s[n++].f = m->tab[j].key;
		}
	}
	if (n == 0) {
		free(s);
		return 0;
	}
	qsort(s, n, sizeof(*s), cmp_flow);
	for (i = 1, k = 1; i < n; i++) /* duplicates out */
		if (cmp_flow(&s[i], &s[k - 1]) != 0)
			s[k++] = s[i];
	n = k;
	for (mi = 0; mi < MGR_MAX_MEMBERS; mi++) {
		const struct st_member *m = &st->m[mi];

		if (!in[mi])
			continue;
		for (j = 0; j < m->cap; j++) {
			const struct st_flow *e = &m->tab[j];
			struct mgr_flow_sum key = {.f = e->key}, *t;
			struct mgr_rate r;

			if (!e->used)
				continue;
			t = bsearch(&key, s, n, sizeof(*s), cmp_flow);
			r = rate_of(e);
			t->f.pkts += e->cur.pkts;
			t->f.bytes += e->cur.bytes;
			t->f.new_conns += e->cur.conns;
			t->rate.pps += r.pps;
			t->rate.bps += r.bps;
			t->rate.cps += r.cps;
			t->members++;
		}
	}
	*out = s;
	return (int)n;
}
