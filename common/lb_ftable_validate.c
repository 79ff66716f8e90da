/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a valid flow table is (lb_ftable_validate()): the checks a table
 * passes before anyone builds lookup structures from it, whether it came
 * from a file, a snapshot or a delta. Each refusal names the service or
 * backend at fault.
 */
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_ftable_int.h"
#include "lb_hdr.h"
#include "lb_maglev.h"

const char *
lb_ftable_svc_name(const struct lb_service_cfg *s, char *buf, size_t len)
{
	char a[LB_ADDR_STRLEN];
	bool v6 = s->af == LB_AF_INET6;

	snprintf(buf, len, "%s %s%s%s:%u", s->proto == LB_IPPROTO_UDP ? "udp" : "tcp",
		v6 ? "[" : "", lb_addr_ntop(s->af, &s->vip, a, sizeof(a)), v6 ? "]" : "", s->port);
	return buf;
}

/*
 * What is wrong with address a of family af as a VIP, DIP or PA, or NULL:
 * an IPv4 address with bytes past its four, the unspecified address (but
 * for a host, whose absence is the manager's to refuse), a multicast one.
 */
static const char *
addr_problem(uint8_t af, const struct lb_addr *a, bool host)
{
	static const struct lb_addr zero;

	if (!host && lb_addr_eq(a, &zero))
		return "the unspecified address";
	if (af == LB_AF_INET6)
		return lb_addr6_is_multicast(a->a8) ? "a multicast address" : NULL;
	if (a->a32[1] != 0 || a->a64[1] != 0)
		return "an IPv4 address with bytes past its four";
	return a->a8[0] >= 224 ? "a multicast address" : NULL;
}

static int
id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The zones a service withdraws its VIP in: valid names, sorted, each once. */
static int
wzones_check(const struct lb_service_cfg *sc, const char *s, char *err, size_t len)
{
	const char *why;
	uint32_t j;

	if (sc->n_wzones > LB_WZONES)
		return lb_fail(err, len, -LB_EINVAL,
			"service %s: withdrawn in %u zones, at most %u", s, sc->n_wzones,
			LB_WZONES);
	for (j = 0; j < sc->n_wzones; j++) {
		if ((why = lb_zone_problem(sc->wzones[j], false)) != NULL)
			return lb_fail(
				err, len, -LB_EINVAL, "service %s: a withdrawn zone is %s", s, why);
		if (j > 0 && strncmp(sc->wzones[j - 1], sc->wzones[j], LB_ZONE_LEN) >= 0)
			return lb_fail(err, len, -LB_EINVAL,
				"service %s: withdrawn zones out of order or twice", s);
	}
	return 0;
}

int
lb_ftable_validate(const struct lb_ftable *ft, char *err, size_t len)
{
	uint32_t i, j, n = 0, total = lb_ftable_backend_count(ft);
	const struct lb_service_cfg **order;
	uint32_t *ids;
	char s[80], d[LB_ADDR_STRLEN], lim[160];
	const char *why;
	int rc = 0;

	if (lb_limit_rule_check(&ft->mux_rate, "mux_new_per_second", lim, sizeof(lim)) != 0)
		return lb_fail(err, len, -LB_EINVAL, "%s", lim);
	if (ft->maglev_size < LB_MAGLEV_MIN_SIZE || ft->maglev_size > LB_MAGLEV_MAX_SIZE ||
		!lb_is_prime(ft->maglev_size))
		return lb_fail(err, len, -LB_EINVAL, "maglev_size %u is not a prime in %u..%u",
			ft->maglev_size, LB_MAGLEV_MIN_SIZE, LB_MAGLEV_MAX_SIZE);
	if (ft->n_drained > LB_FTABLE_MAX_DRAINED)
		return lb_fail(err, len, -LB_EINVAL, "%u drained muxes, at most %u", ft->n_drained,
			LB_FTABLE_MAX_DRAINED);
	for (i = 0; i < ft->n_drained; i++) {
		size_t l = strnlen(ft->drained[i], LB_FTABLE_ID_LEN);

		if (l == 0 || l == LB_FTABLE_ID_LEN)
			return lb_fail(err, len, -LB_EINVAL,
				"drained mux %u: an id of 1 to %d characters", i,
				LB_FTABLE_ID_LEN - 1);
		if (i > 0 && strcmp(ft->drained[i - 1], ft->drained[i]) >= 0)
			return lb_fail(err, len, -LB_EINVAL,
				"drained muxes: \"%s\" out of order or twice", ft->drained[i]);
	}
	order = calloc(ft->n_services + 1, sizeof(*order));
	ids = calloc(total + 1, sizeof(*ids));
	if (order == NULL || ids == NULL) {
		free(order);
		free(ids);
		return lb_fail(err, len, -LB_EINVAL, "out of memory");
	}
	for (i = 0; rc == 0 && i < ft->n_services; i++) {
		const struct lb_service_cfg *sc = &ft->services[i];
		struct lb_backend_cfg *b;

		lb_ftable_svc_name(sc, s, sizeof(s));
		if (sc->port == 0 || (sc->proto != LB_IPPROTO_TCP && sc->proto != LB_IPPROTO_UDP) ||
			(sc->af != LB_AF_INET && sc->af != LB_AF_INET6)) {
			rc = lb_fail(err, len, -LB_EINVAL,
				"service %s: bad port, protocol or family", s);
			break;
		}
		if ((why = addr_problem(sc->af, &sc->vip, false)) != NULL) {
			rc = lb_fail(err, len, -LB_EINVAL, "service %s: the VIP is %s", s, why);
			break;
		}
		if (lb_limits_check(&sc->limits, sc->af, sc->proto, lim, sizeof(lim)) != 0) {
			rc = lb_fail(err, len, -LB_EINVAL, "service %s: %s", s, lim);
			break;
		}
		if (lb_choice_check(&sc->choice, lim, sizeof(lim)) != 0) {
			rc = lb_fail(err, len, -LB_EINVAL, "service %s: %s", s, lim);
			break;
		}
		if ((rc = wzones_check(sc, s, err, len)) != 0)
			break;
		if (sc->n_backends > LB_MAGLEV_MAX_BACKENDS) {
			rc = lb_fail(err, len, -LB_EINVAL, "service %s: %u backends, at most %u", s,
				sc->n_backends, LB_MAGLEV_MAX_BACKENDS);
			break;
		}
		b = malloc(sizeof(*b) * (sc->n_backends + 1));
		if (b == NULL) {
			rc = lb_fail(err, len, -LB_EINVAL, "out of memory");
			break;
		}
		copy_n(b, sc->backends, sc->n_backends, sizeof(*b));
		sort_n(b, sc->n_backends, sizeof(*b), lb_backend_cmp);
		for (j = 0; rc == 0 && j < sc->n_backends; j++) {
			lb_addr_ntop(sc->af, &b[j].dip, d, sizeof(d));
			/* A service is one family: its DIPs are the VIP's. */
			if ((why = addr_problem(sc->af, &b[j].dip, false)) != NULL)
				rc = lb_fail(err, len, -LB_EINVAL,
					"service %s: backend %s:%u: the DIP is %s (a service is "
					"one family: its DIPs are %s)",
					s, d, b[j].port, why,
					sc->af == LB_AF_INET6 ? "IPv6" : "IPv4");
			else if (b[j].host6 > 1 ||
				 (why = addr_problem(b[j].host6 ? LB_AF_INET6 : LB_AF_INET,
					  &b[j].host, true)) != NULL)
				rc = lb_fail(err, len, -LB_EINVAL,
					"service %s: backend %s:%u: the host is %s", s, d,
					b[j].port, why ? why : "of no family");
			else if (b[j].port == 0 || b[j].weight > LB_MAGLEV_MAX_WEIGHT ||
				 b[j].state > LB_BACKEND_MAINT)
				rc = lb_fail(err, len, -LB_EINVAL,
					"service %s: backend %s:%u: bad port, weight or state", s,
					d, b[j].port);
			else if ((why = lb_zone_problem(b[j].zone, !sc->choice.zonal)) != NULL)
				rc = lb_fail(err, len, -LB_EINVAL,
					"service %s: backend %s:%u: the zone is %s%s", s, d,
					b[j].port, why,
					sc->choice.zonal ? " (cross_zone is off)" : "");
			else if (b[j].max_conns != 0 && sc->proto != LB_IPPROTO_TCP)
				rc = lb_fail(err, len, -LB_EINVAL,
					"service %s: backend %s:%u: max_connections is for TCP "
					"services (the agent counts TCP connections)",
					s, d, b[j].port);
			else if (b[j].max_conns > LB_MAX_CONNS_CAP)
				rc = lb_fail(err, len, -LB_EINVAL,
					"service %s: backend %s:%u: max_connections "
					"above %u",
					s, d, b[j].port, LB_MAX_CONNS_CAP);
			else if (j > 0 && lb_backend_cmp(&b[j - 1], &b[j]) == 0)
				rc = lb_fail(err, len, -LB_EINVAL,
					"service %s: backend %s:%u listed twice", s, d, b[j].port);
			ids[n++] = b[j].id;
		}
		free(b);
		order[i] = sc;
	}
	if (rc == 0) {
		struct lb_service_cfg *copy = malloc(sizeof(*copy) * (ft->n_services + 1));

		if (copy == NULL) {
			rc = lb_fail(err, len, -LB_EINVAL, "out of memory");
		} else {
			copy_n(copy, ft->services, ft->n_services, sizeof(*copy));
			sort_n(copy, ft->n_services, sizeof(*copy), lb_service_cmp);
			for (i = 1; rc == 0 && i < ft->n_services; i++)
				if (lb_service_cmp(&copy[i - 1], &copy[i]) == 0)
					rc = lb_fail(err, len, -LB_EINVAL,
						"service %s listed twice",
						lb_ftable_svc_name(&copy[i], s, sizeof(s)));
			free(copy);
		}
	}
	if (rc == 0) {
		sort_n(ids, n, sizeof(*ids), id_cmp);
		for (i = 1; rc == 0 && i < n; i++)
			if (ids[i - 1] == ids[i])
				rc = lb_fail(
					err, len, -LB_EINVAL, "backend id %u used twice", ids[i]);
	}
	free(order);
	free(ids);
	return rc;
}
