/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DIP health's records by key: the sorted arrays of services and records
 * (mgr_hrec.h) are searched here, by mgr_health.c, mgr_effective.c and
 * the views alike.
 */
#include <stdlib.h>
#include <string.h>

#include "mgr_hrec.h"

/* What a record is sorted by: its service, DIP and port. */
struct rec_key {
	const struct lb_svc_key *k;
	const struct lb_addr *dip;
	uint16_t port;
};

static int
key_cmp(const struct rec_key *a, const struct mgr_hrec *r)
{
	int c = memcmp(a->k, &r->hr_svc->hs_key, sizeof(*a->k));

	if (c != 0)
		return c;
	c = memcmp(a->dip, &r->hr_be.dip, sizeof(*a->dip));
	return c != 0 ? c : (int)a->port - (int)r->hr_be.port;
}

int
mgr_hrec_cmp(const void *a, const void *b)
{
	const struct mgr_hrec *x = *(const struct mgr_hrec *const *)a;
	const struct mgr_hrec *y = *(const struct mgr_hrec *const *)b;
	const struct rec_key kx = {&x->hr_svc->hs_key, &x->hr_be.dip, x->hr_be.port};

	return key_cmp(&kx, y);
}

int
mgr_hsvc_cmp(const void *a, const void *b)
{
	const struct mgr_hsvc *x = *(const struct mgr_hsvc *const *)a;
	const struct mgr_hsvc *y = *(const struct mgr_hsvc *const *)b;

	return memcmp(&x->hs_key, &y->hs_key, sizeof(x->hs_key));
}

static int
svc_vs(const void *key, const void *elem)
{
	return memcmp(
		key, &(*(const struct mgr_hsvc *const *)elem)->hs_key, sizeof(struct lb_svc_key));
}

static int
rec_vs(const void *key, const void *elem)
{
	return key_cmp(key, *(const struct mgr_hrec *const *)elem);
}

struct mgr_hsvc *
mgr_hsvc_find(const struct mgr_health *h, const struct lb_svc_key *k)
{
	struct mgr_hsvc **s =
		h->h_n_svcs == 0 ? NULL
				 : bsearch(k, h->h_svcs, h->h_n_svcs, sizeof(*h->h_svcs), svc_vs);

	return s != NULL ? *s : NULL;
}

struct mgr_hsvc *
mgr_hsvc_of(const struct mgr_health *h, const struct lb_service_cfg *sc)
{
	struct lb_svc_key k;

	lb_ftable_key(sc, &k);
	return mgr_hsvc_find(h, &k);
}

uint32_t
mgr_hrec_lower(const struct mgr_health *h, const struct lb_svc_key *k)
{
	uint32_t lo = 0, hi = h->h_n_recs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (memcmp(&h->h_recs[mid]->hr_svc->hs_key, k, sizeof(*k)) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct mgr_hrec *
mgr_hrec_find(const struct mgr_health *h, const struct lb_svc_key *k, const struct lb_addr *dip,
	uint16_t port)
{
	const struct rec_key key = {k, dip, port};
	struct mgr_hrec **r = h->h_n_recs == 0 ? NULL
					       : bsearch(&key, h->h_recs, h->h_n_recs,
							 sizeof(*h->h_recs), rec_vs);

	return r != NULL ? *r : NULL;
}
