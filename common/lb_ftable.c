/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow table's operations: lifetime, counts, the canonical order and
 * the digest, and writing a table back as a file. Validation is
 * lb_ftable_validate.c's, deltas lb_ftable_delta.c's (which stands on both).
 */
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_ftable_int.h"
#include "lb_hdr.h"
#include "lb_maglev.h"

void
lb_ftable_free(struct lb_ftable *ft)
{
	uint32_t i;

	for (i = 0; i < ft->n_services; i++)
		free(ft->services[i].backends);
	free(ft->services);
	free(ft->drained);
	memset(ft, 0, sizeof(*ft));
}

int
lb_ftable_copy_ids(lb_ftable_id **dst, uint32_t *n_dst, const lb_ftable_id *src, uint32_t n)
{
	*dst = NULL;
	*n_dst = 0;
	if (n == 0)
		return 0;
	*dst = malloc(sizeof(**dst) * n);
	if (*dst == NULL)
		return -LB_ENOMEM;
	memcpy(*dst, src, sizeof(**dst) * n);
	*n_dst = n;
	return 0;
}

static int
id_find(const lb_ftable_id *v, uint32_t n, const char *id, uint32_t *at)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		int c = strcmp(v[mid], id);

		if (c == 0) {
			*at = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return 0;
}

bool
lb_ftable_drained(const struct lb_ftable *ft, const char *id)
{
	uint32_t at;

	return ft->n_drained != 0 && id_find(ft->drained, ft->n_drained, id, &at) == 1;
}

int
lb_ftable_copy_drained(struct lb_ftable *dst, const struct lb_ftable *src)
{
	lb_ftable_id *v;
	uint32_t n;

	if (lb_ftable_copy_ids(&v, &n, src->drained, src->n_drained) != 0)
		return -LB_ENOMEM;
	free(dst->drained);
	dst->drained = v;
	dst->n_drained = n;
	return 0;
}

int
lb_ftable_set_drained(struct lb_ftable *ft, const char *id, bool on)
{
	lb_ftable_id *v;
	uint32_t at;
	bool found;

	if (id[0] == '\0' || strlen(id) >= LB_FTABLE_ID_LEN)
		return -LB_EINVAL;
	found = ft->n_drained != 0 && id_find(ft->drained, ft->n_drained, id, &at) == 1;
	if (ft->n_drained == 0)
		at = 0;
	if (found == on)
		return 0;
	if (!on) {
		memmove(&ft->drained[at], &ft->drained[at + 1],
			sizeof(*ft->drained) * (ft->n_drained - at - 1));
		if (--ft->n_drained == 0) {
			free(ft->drained);
			ft->drained = NULL;
		}
		return 1;
	}
	if (ft->n_drained == LB_FTABLE_MAX_DRAINED)
		return -LB_EINVAL;
	v = realloc(ft->drained, sizeof(*v) * (ft->n_drained + 1));
	if (v == NULL)
		return -LB_ENOMEM;
	memmove(&v[at + 1], &v[at], sizeof(*v) * (ft->n_drained - at));
	memset(v[at], 0, sizeof(v[at]));
	snprintf(v[at], sizeof(v[at]), "%s", id);
	ft->drained = v;
	ft->n_drained++;
	return 1;
}

uint32_t
lb_ftable_backend_count(const struct lb_ftable *ft)
{
	uint32_t i, n = 0;

	for (i = 0; i < ft->n_services; i++)
		n += ft->services[i].n_backends;
	return n;
}

int
lb_ftable_copy_service(struct lb_service_cfg *dst, const struct lb_service_cfg *src)
{
	*dst = *src;
	dst->backends = malloc(sizeof(*dst->backends) * (src->n_backends ? src->n_backends : 1));
	if (dst->backends == NULL) {
		dst->n_backends = 0;
		return -LB_ENOMEM;
	}
	copy_n(dst->backends, src->backends, src->n_backends, sizeof(*dst->backends));
	return 0;
}

int
lb_ftable_copy(struct lb_ftable *dst, const struct lb_ftable *src)
{
	uint32_t i;

	memset(dst, 0, sizeof(*dst));
	dst->seed = src->seed;
	dst->maglev_size = src->maglev_size;
	dst->mux_rate = src->mux_rate;
	dst->services = calloc(src->n_services ? src->n_services : 1, sizeof(*dst->services));
	if (dst->services == NULL)
		return -LB_ENOMEM;
	if (lb_ftable_copy_ids(&dst->drained, &dst->n_drained, src->drained, src->n_drained) != 0) {
		lb_ftable_free(dst);
		return -LB_ENOMEM;
	}
	for (i = 0; i < src->n_services; i++) {
		dst->n_services = i + 1;
		if (lb_ftable_copy_service(&dst->services[i], &src->services[i]) != 0) {
			lb_ftable_free(dst);
			return -LB_ENOMEM;
		}
	}
	return 0;
}

/* ---- the canonical order ---- */

int
lb_backend_cmp(const void *a, const void *b)
{
	const struct lb_backend_cfg *x = a, *y = b;
	int c = memcmp(&x->dip, &y->dip, sizeof(x->dip));

	return c != 0 ? c : (int)x->port - (int)y->port;
}

int
lb_service_cmp(const void *a, const void *b)
{
	const struct lb_service_cfg *x = a, *y = b;
	int c;

	if (x->af != y->af)
		return (int)x->af - (int)y->af;
	c = memcmp(&x->vip, &y->vip, sizeof(x->vip));
	if (c != 0)
		return c;
	if (x->proto != y->proto)
		return (int)x->proto - (int)y->proto;
	return (int)x->port - (int)y->port;
}

bool
lb_service_same_vip(const struct lb_service_cfg *a, const struct lb_service_cfg *b)
{
	return a->af == b->af && lb_addr_eq(&a->vip, &b->vip);
}

static int
id_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const lb_ftable_id *)a, *(const lb_ftable_id *)b);
}

void
lb_ftable_sort(struct lb_ftable *ft)
{
	uint32_t i;

	sort_n(ft->drained, ft->n_drained, sizeof(*ft->drained), id_cmp_str);
	sort_n(ft->services, ft->n_services, sizeof(*ft->services), lb_service_cmp);
	for (i = 0; i < ft->n_services; i++)
		sort_n(ft->services[i].backends, ft->services[i].n_backends,
			sizeof(*ft->services[i].backends), lb_backend_cmp);
}

/* Services through an array of pointers to them, in the canonical order. */
static int
service_ptr_cmp(const void *a, const void *b)
{
	return lb_service_cmp(
		*(const struct lb_service_cfg *const *)a, *(const struct lb_service_cfg *const *)b);
}

/* A service's rules into both halves of the digest, the prefix as it acts. */
static void
digest_limits(const struct lb_hash_seed k[2], uint64_t h[2], const struct lb_svc_limits *l)
{
	uint64_t rec[LB_LIM_N + 2];
	uint32_t i, r;

	for (i = 0; i < LB_LIM_N; i++)
		rec[i] = (uint64_t)l->rule[i].limit << 32 | (uint64_t)l->rule[i].burst << 1 |
			 (l->rule[i].mode & 1);
	rec[LB_LIM_N] = (uint64_t)(l->source_prefix ? l->source_prefix : 32) << 8 | l->refuse;
	for (r = 0; r < 2; r++) {
		rec[LB_LIM_N + 1] = h[r];
		h[r] = lb_siphash13(&k[r], rec, sizeof(rec));
	}
}

void
lb_ftable_digest(const struct lb_ftable *ft, uint8_t out[LB_DIGEST_LEN])
{
	/* Two fixed keys make 128 bits; integrity, not secrecy (TLS does that). */
	static const struct lb_hash_seed k[2] = {{0x736c756963652d64ULL, 0x6967657374300000ULL},
		{0x736c756963652d64ULL, 0x6967657374310000ULL}};
	const struct lb_service_cfg **order = calloc(ft->n_services + 1, sizeof(*order));
	uint64_t h[2] = {0, 0}, rec[2];
	uint32_t i, j, r;

	for (r = 0; r < 2; r++) {
		rec[0] = ft->seed.k0 ^ ft->seed.k1;
		rec[1] = ft->maglev_size;
		h[r] = lb_siphash13(&k[r], rec, sizeof(rec));
	}
	/* Rules join the digest only where they exist: tables without keep theirs. */
	if (ft->mux_rate.limit != 0) {
		uint64_t mr[3] = {ft->mux_rate.limit,
			(uint64_t)ft->mux_rate.burst << 1 | (ft->mux_rate.mode & 1), 0};

		for (r = 0; r < 2; r++) {
			mr[2] = h[r];
			h[r] = lb_siphash13(&k[r], mr, sizeof(mr));
		}
	}
	if (order != NULL) {
		for (i = 0; i < ft->n_services; i++)
			order[i] = &ft->services[i];
		sort_n(order, ft->n_services, sizeof(*order), service_ptr_cmp);
		for (i = 0; i < ft->n_services; i++) {
			const struct lb_service_cfg *s = order[i];
			struct lb_backend_cfg *b = calloc(s->n_backends + 1, sizeof(*b));
			struct {
				struct lb_addr vip;
				uint16_t port;
				uint8_t proto;
				uint8_t pad;
				uint32_t n;
				uint64_t prev;
			} sh = {s->vip, s->port, s->proto, s->af == LB_AF_INET6 ? 6 : 0,
				s->n_backends, 0};

			for (r = 0; r < 2; r++) {
				sh.prev = h[r];
				h[r] = lb_siphash13(&k[r], &sh, sizeof(sh));
			}
			/* Only when set: older tables keep their digests. */
			if (s->withdrawn)
				for (r = 0; r < 2; r++) {
					uint64_t wr[2] = {
						0x7769746864726177ULL /* "withdraw" */, h[r]};

					h[r] = lb_siphash13(&k[r], wr, sizeof(wr));
				}
			/* The zones withdrawing it, in their sorted order, only when some do. */
			for (j = 0; j < s->n_wzones && j < LB_WZONES; j++)
				for (r = 0; r < 2; r++) {
					struct {
						char zone[LB_ZONE_LEN];
						uint64_t tag, prev;
					} zh;

					memset(&zh, 0, sizeof(zh));
					memcpy(zh.zone, s->wzones[j],
						strnlen(s->wzones[j], LB_ZONE_LEN));
					zh.tag = 0x777a6f6e65000000ULL; /* "wzone" */
					zh.prev = h[r];
					h[r] = lb_siphash13(&k[r], &zh, sizeof(zh));
				}
			if (lb_limits_any(&s->limits))
				digest_limits(k, h, &s->limits);
			if (lb_choice_any(&s->choice))
				for (r = 0; r < 2; r++) {
					uint64_t cr[3] = {0x63686f6963650000ULL /* "choice" */,
						(uint64_t)s->choice.mitigate << 32 |
							(uint64_t)s->choice.balance << 24 |
							(uint64_t)s->choice.affinity << 16 |
							(uint64_t)s->choice.on_unusable << 8 |
							s->choice.zonal,
						h[r]};

					h[r] = lb_siphash13(&k[r], cr, sizeof(cr));
				}
			if (b == NULL)
				continue;
			copy_n(b, s->backends, s->n_backends, sizeof(*b));
			sort_n(b, s->n_backends, sizeof(*b), lb_backend_cmp);
			for (j = 0; j < s->n_backends; j++) {
				struct {
					struct lb_addr dip;
					struct lb_addr host;
					uint16_t port;
					uint8_t state;
					uint8_t pad;
					uint32_t weight;
					uint32_t id;
					uint32_t pad2;
					uint64_t prev;
				} bh = {b[j].dip, b[j].host, b[j].port, b[j].state,
					b[j].host6 ? 6 : 0, b[j].weight, b[j].id, 0, 0};

				for (r = 0; r < 2; r++) {
					bh.prev = h[r];
					h[r] = lb_siphash13(&k[r], &bh, sizeof(bh));
				}
				/* A zone joins only when set: older tables keep their digests. */
				for (r = 0; b[j].zone[0] != 0 && r < 2; r++) {
					struct {
						char zone[LB_ZONE_LEN];
						uint64_t prev;
					} zh;

					memset(&zh, 0, sizeof(zh));
					memcpy(zh.zone, b[j].zone, strnlen(b[j].zone, LB_ZONE_LEN));
					zh.prev = h[r];
					h[r] = lb_siphash13(&k[r], &zh, sizeof(zh));
				}
				/* So does a cap: 'C' tags it apart from a zone. */
				for (r = 0; b[j].max_conns != 0 && r < 2; r++) {
					uint64_t ch[2] = {
						(uint64_t)'C' << 32 | b[j].max_conns, h[r]};

					h[r] = lb_siphash13(&k[r], ch, sizeof(ch));
				}
			}
			free(b);
		}
		free(order);
	}
	/* The drained muxes, in their sorted order, only when there are some. */
	for (i = 0; i < ft->n_drained; i++) {
		struct {
			lb_ftable_id id;
			uint64_t prev;
		} dr;

		memset(&dr, 0, sizeof(dr));
		snprintf(dr.id, sizeof(dr.id), "%s", ft->drained[i]);
		for (r = 0; r < 2; r++) {
			dr.prev = h[r];
			h[r] = lb_siphash13(&k[r], &dr, sizeof(dr));
		}
	}
	memcpy(out, &h[0], 8);
	memcpy(out + 8, &h[1], 8);
}

void
lb_ftable_key(const struct lb_service_cfg *sc, struct lb_svc_key *k)
{
	lb_svc_key_make(k, sc->af, &sc->vip, lb_cpu_to_be16(sc->port), sc->proto);
}

int
lb_ftable_find(const struct lb_ftable *ft, const struct lb_svc_key *k)
{
	uint32_t i;

	for (i = 0; i < ft->n_services; i++) {
		const struct lb_service_cfg *s = &ft->services[i];

		if (s->af == k->af && lb_addr_eq(&s->vip, &k->vip) && s->proto == k->proto &&
			lb_cpu_to_be16(s->port) == k->port)
			return (int)i;
	}
	return -1;
}

const char *const lb_backend_state_names[3] = {"active", "drain", "maint"};

/* A service's choice settings where not the defaults, one per line at depth 3. */
static void
choice_write(const struct lb_svc_choice *c, FILE *f)
{
	if (c->affinity != LB_AFF_TUPLE && c->affinity < LB_AFF_N)
		fprintf(f, "\t\t\taffinity = \"%s\";\n", lb_affinity_names[c->affinity]);
	if (c->on_unusable != LB_UNUSABLE_REDISTRIBUTE && c->on_unusable < LB_UNUSABLE_N)
		fprintf(f, "\t\t\ton_unusable = \"%s\";\n", lb_unusable_names[c->on_unusable]);
	if (c->zonal)
		fprintf(f, "\t\t\tcross_zone = false;\n");
	if (c->balance != LB_BALANCE_WEIGHTED && c->balance < LB_BALANCE_N)
		fprintf(f, "\t\t\tbalance = \"%s\";\n", lb_balance_names[c->balance]);
	if (c->mitigate)
		fprintf(f, "\t\t\tmitigate = true;\n");
}

int
lb_ftable_write(const struct lb_ftable *ft, FILE *f)
{
	uint32_t i, j;
	char a[LB_ADDR_STRLEN], h[LB_ADDR_STRLEN];

	fprintf(f, "flow_table = {\n\thash_seed = \"%016llx%016llx\";\n",
		(unsigned long long)ft->seed.k0, (unsigned long long)ft->seed.k1);
	fprintf(f, "\tmaglev_size = %u;\n", ft->maglev_size);
	lb_limit_rule_write(&ft->mux_rate, "mux_new_per_second", f, 1);
	fprintf(f, "\tservices = (");
	for (i = 0; i < ft->n_services; i++) {
		const struct lb_service_cfg *s = &ft->services[i];

		fprintf(f, "%s\n\t\t{\n\t\t\tvip = \"%s\";\n\t\t\tprotocol = \"%s\";\n",
			i ? "," : "", lb_addr_ntop(s->af, &s->vip, a, sizeof(a)),
			s->proto == LB_IPPROTO_UDP ? "udp" : "tcp");
		fprintf(f, "\t\t\tport = %u;\n", s->port);
		lb_limits_write(&s->limits, f, 3);
		choice_write(&s->choice, f);
		fprintf(f, "\t\t\tbackends = (");
		for (j = 0; j < s->n_backends; j++) {
			const struct lb_backend_cfg *b = &s->backends[j];

			fprintf(f,
				"%s\n\t\t\t\t{ dip = \"%s\"; port = %u; weight = %u; host = "
				"\"%s\"; "
				"state = \"%s\";",
				j ? "," : "", lb_addr_ntop(s->af, &b->dip, a, sizeof(a)), b->port,
				b->weight,
				lb_addr_ntop(b->host6 ? LB_AF_INET6 : LB_AF_INET, &b->host, h,
					sizeof(h)),
				lb_backend_state_names[b->state <= LB_BACKEND_MAINT ? b->state
										    : 0]);
			if (b->zone[0] != 0)
				fprintf(f, " zone = \"%.*s\";", LB_ZONE_LEN - 1, b->zone);
			if (b->max_conns != 0)
				fprintf(f, " max_connections = %u;", b->max_conns);
			fprintf(f, " }");
		}
		fprintf(f, "%s);\n\t\t}", s->n_backends ? "\n\t\t\t" : "");
	}
	fprintf(f, "%s);\n};\n", ft->n_services ? "\n\t" : "");
	return ferror(f) ? -LB_EIO : 0;
}
