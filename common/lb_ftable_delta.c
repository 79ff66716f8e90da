/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow-table deltas both ways: a base and a delta make the next table
 * (checked as a whole, lb_ftable_validate()), two tables make the delta
 * from one to the other.
 */
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_ftable_int.h"
#include "lb_limits.h"

int
lb_ftable_apply(const struct lb_ftable *base, const struct lb_ftable_delta *d,
	struct lb_ftable *out, char *err, size_t len)
{
	uint32_t i, n = base->n_services, cap = base->n_services + d->n_upsert;
	struct lb_service_cfg *svcs;
	char s[80];
	int rc = 0;

	memset(out, 0, sizeof(*out));
	svcs = calloc(cap ? cap : 1, sizeof(*svcs));
	if (svcs == NULL)
		return lb_fail(err, len, -LB_EINVAL, "out of memory");
	out->services = svcs;
	out->seed = d->has_options ? d->seed : base->seed;
	out->maglev_size = d->has_options ? d->maglev_size : base->maglev_size;
	if ((d->has_options ? lb_ftable_copy_ids(
				      &out->drained, &out->n_drained, d->drained, d->n_drained)
			    : lb_ftable_copy_ids(&out->drained, &out->n_drained, base->drained,
				      base->n_drained)) != 0) {
		rc = lb_fail(err, len, -LB_EINVAL, "out of memory");
		goto out;
	}
	out->mux_rate = d->has_options ? d->mux_rate : base->mux_rate;
	for (i = 0; i < n; i++) {
		out->n_services = i + 1;
		if (lb_ftable_copy_service(&svcs[i], &base->services[i]) != 0) {
			rc = lb_fail(err, len, -LB_EINVAL, "out of memory");
			goto out;
		}
	}
	for (i = 0; i < d->n_remove; i++) {
		int k = lb_ftable_find(out, &d->remove[i]);

		if (k < 0) {
			struct lb_service_cfg tmp = {.port = lb_be16_to_cpu(d->remove[i].port),
				.proto = d->remove[i].proto,
				.af = d->remove[i].af};

			tmp.vip = d->remove[i].vip;
			rc = lb_fail(err, len, -LB_EINVAL,
				"removes service %s, which the base lacks",
				lb_ftable_svc_name(&tmp, s, sizeof(s)));
			goto out;
		}
		free(svcs[k].backends);
		svcs[k] = svcs[--out->n_services];
	}
	for (i = 0; i < d->n_upsert; i++) {
		struct lb_svc_key key;
		int k;

		lb_ftable_key(&d->upsert[i], &key);
		k = lb_ftable_find(out, &key);
		if (k >= 0)
			free(svcs[k].backends);
		else
			k = (int)out->n_services++;
		if (lb_ftable_copy_service(&svcs[k], &d->upsert[i]) != 0) {
			svcs[k] = svcs[--out->n_services];
			rc = lb_fail(err, len, -LB_EINVAL, "out of memory");
			goto out;
		}
	}
	lb_ftable_sort(out);
	rc = lb_ftable_validate(out, err, len);
out:
	if (rc != 0)
		lb_ftable_free(out);
	return rc;
}

static bool
service_equal(const struct lb_service_cfg *a, const struct lb_service_cfg *b)
{
	uint32_t i;

	if (lb_service_cmp(a, b) != 0 || a->id != b->id || a->n_backends != b->n_backends ||
		a->withdrawn != b->withdrawn || a->n_wzones != b->n_wzones ||
		memcmp(a->wzones, b->wzones, sizeof(a->wzones[0]) * a->n_wzones) != 0 ||
		!lb_limits_equal(&a->limits, &b->limits) ||
		memcmp(&a->choice, &b->choice, sizeof(a->choice)) != 0)
		return false;
	/* Tables are sorted, so equal backend lists are equal arrays. */
	for (i = 0; i < a->n_backends; i++) {
		const struct lb_backend_cfg *x = &a->backends[i], *y = &b->backends[i];

		if (lb_backend_cmp(x, y) != 0 || memcmp(&x->host, &y->host, sizeof(x->host)) != 0 ||
			x->host6 != y->host6 || x->weight != y->weight || x->state != y->state ||
			x->id != y->id || strncmp(x->zone, y->zone, LB_ZONE_LEN) != 0 ||
			x->max_conns != y->max_conns)
			return false;
	}
	return true;
}

static bool
drained_equal(const struct lb_ftable *a, const struct lb_ftable *b)
{
	uint32_t i;

	if (a->n_drained != b->n_drained)
		return false;
	for (i = 0; i < a->n_drained; i++)
		if (strcmp(a->drained[i], b->drained[i]) != 0)
			return false;
	return true;
}

int
lb_ftable_diff(
	const struct lb_ftable *from, const struct lb_ftable *to, struct lb_ftable_delta *out)
{
	uint32_t i;

	memset(out, 0, sizeof(*out));
	out->upsert = calloc(to->n_services + 1, sizeof(*out->upsert));
	out->remove = calloc(from->n_services + 1, sizeof(*out->remove));
	if (out->upsert == NULL || out->remove == NULL)
		goto nomem;
	for (i = 0; i < to->n_services; i++) {
		struct lb_svc_key k;
		int j;

		lb_ftable_key(&to->services[i], &k);
		j = lb_ftable_find(from, &k);
		if (j >= 0 && service_equal(&from->services[j], &to->services[i]))
			continue;
		if (lb_ftable_copy_service(&out->upsert[out->n_upsert], &to->services[i]) != 0)
			goto nomem;
		out->n_upsert++;
	}
	for (i = 0; i < from->n_services; i++) {
		struct lb_svc_key k;

		lb_ftable_key(&from->services[i], &k);
		if (lb_ftable_find(to, &k) < 0)
			out->remove[out->n_remove++] = k;
	}
	if ((from->seed.k0 != to->seed.k0 || from->seed.k1 != to->seed.k1 ||
		    from->maglev_size != to->maglev_size || !drained_equal(from, to) ||
		    !lb_limit_rule_equal(&from->mux_rate, &to->mux_rate)) &&
		lb_ftable_delta_options(out, to) != 0)
		goto nomem;
	return 0;
nomem:
	lb_ftable_delta_free(out);
	return -LB_ENOMEM;
}

bool
lb_ftable_delta_empty(const struct lb_ftable_delta *d)
{
	return d->n_upsert == 0 && d->n_remove == 0 && !d->has_options;
}

int
lb_ftable_delta_options(struct lb_ftable_delta *d, const struct lb_ftable *ft)
{
	free(d->drained);
	d->has_options = true;
	d->seed = ft->seed;
	d->maglev_size = ft->maglev_size;
	d->mux_rate = ft->mux_rate;
	return lb_ftable_copy_ids(&d->drained, &d->n_drained, ft->drained, ft->n_drained);
}

void
lb_ftable_delta_free(struct lb_ftable_delta *d)
{
	uint32_t i;

	for (i = 0; d->upsert != NULL && i < d->n_upsert; i++)
		free(d->upsert[i].backends);
	free(d->upsert);
	free(d->remove);
	free(d->drained);
	memset(d, 0, sizeof(*d));
}
