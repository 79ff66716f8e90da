/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lb_addr.h"
#include "lb_ftable.h"
#include "lb_hdr.h"
#include "mgr_text.h"

static bool
buf_reserve(struct mgr_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->mb_oom)
		return false;
	if (b->mb_len + more + 1 <= b->mb_cap)
		return true;
	cap = b->mb_cap ? b->mb_cap : 256;
	while (cap < b->mb_len + more + 1)
		cap *= 2;
	p = realloc(b->mb_p, cap);
	if (p == NULL) {
		b->mb_oom = true;
		return false;
	}
	b->mb_p = p;
	b->mb_cap = cap;
	return true;
}

void
mgr_buf_printf(struct mgr_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->mb_p + b->mb_len, b->mb_cap - b->mb_len, fmt, ap);
	va_end(ap);
	b->mb_len += (size_t)n;
}

void
mgr_buf_json_str(struct mgr_buf *b, const char *s)
{
	const unsigned char *p;

	mgr_buf_printf(b, "\"");
	for (p = (const unsigned char *)(s ? s : ""); *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			mgr_buf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			mgr_buf_printf(b, "\\n");
		else if (*p == '\t')
			mgr_buf_printf(b, "\\t");
		else if (*p < 0x20)
			mgr_buf_printf(b, "\\u%04x", *p);
		else
			mgr_buf_printf(b, "%c", *p);
	}
	mgr_buf_printf(b, "\"");
}

const char *
mgr_buf_str(const struct mgr_buf *b)
{
	return b->mb_p != NULL ? b->mb_p : "";
}

char *
mgr_buf_take(struct mgr_buf *b)
{
	char *p = b->mb_oom ? NULL : b->mb_p;

	if (p == NULL)
		free(b->mb_p);
	memset(b, 0, sizeof(*b));
	return p;
}

void
mgr_buf_free(struct mgr_buf *b)
{
	free(b->mb_p);
	memset(b, 0, sizeof(*b));
}

static const char *
proto_name(uint8_t proto)
{
	return proto == LB_IPPROTO_TCP ? "tcp" : proto == LB_IPPROTO_UDP ? "udp" : "proto?";
}

/* "a.b.c.d:port" or "[v6]:port". */
static const char *
addr_port(uint8_t af, const struct lb_addr *a, uint16_t port, char *buf, size_t len)
{
	char t[LB_ADDR_STRLEN];

	lb_addr_ntop(af, a, t, sizeof(t));
	snprintf(buf, len, af == LB_AF_INET6 ? "[%s]:%u" : "%s:%u", t, port);
	return buf;
}

const char *
mgr_svc_str(const struct lb_service_cfg *s, char *buf, size_t len)
{
	char a[MGR_BE_STR];

	snprintf(buf, len, "%s %s", proto_name(s->proto),
		addr_port(s->af, &s->vip, s->port, a, sizeof(a)));
	return buf;
}

const char *
mgr_key_str(const struct lb_svc_key *k, char *buf, size_t len)
{
	char a[MGR_BE_STR];

	snprintf(buf, len, "%s %s", proto_name(k->proto),
		addr_port(k->af, &k->vip, lb_be16_to_cpu(k->port), a, sizeof(a)));
	return buf;
}

const char *
mgr_be_str(uint8_t af, const struct lb_backend_cfg *b, char *buf, size_t len)
{
	return addr_port(af, &b->dip, b->port, buf, len);
}

const char *
mgr_host_str(const struct lb_backend_cfg *b, char *buf, size_t len)
{
	return lb_addr_ntop(b->host6 ? LB_AF_INET6 : LB_AF_INET, &b->host, buf, len);
}

const char *
mgr_digest_hex(const uint8_t d[LB_DIGEST_LEN], char out[MGR_HEX_DIGEST])
{
	int i;

	for (i = 0; i < LB_DIGEST_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	return out;
}

const char *
mgr_state_name(uint8_t state)
{
	return state <= LB_BACKEND_MAINT ? lb_backend_state_names[state] : "unknown";
}

const char *
mgr_role_name(enum lb_role role)
{
	switch (role) {
	case LB_ROLE_MUX:
		return "mux";
	case LB_ROLE_AGENT:
		return "agent";
	case LB_ROLE_CTL:
		return "ctl";
	default:
		return "none";
	}
}

const char *
mgr_time_str(int64_t unix_ms, char *buf, size_t len)
{
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%lld", (long long)unix_ms);
	return buf;
}

/* ---- summaries ---- */

struct summ {
	char *out;
	size_t len, off;
	uint32_t more; /* items that did not fit */
	mgr_why_fn why;
	void *ctx;
};

static void item(struct summ *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
item(struct summ *s, const char *fmt, ...)
{
	char one[512];
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(one, sizeof(one), fmt, ap);
	va_end(ap);
	n = strlen(one) + (s->off ? 2 : 0);
	/* Keep room for "(and N more)" at the end. */
	if (s->more > 0 || s->off + n + 24 > s->len) {
		s->more++;
		return;
	}
	s->off +=
		(size_t)snprintf(s->out + s->off, s->len - s->off, "%s%s", s->off ? ", " : "", one);
}

static int
be_cmp(const void *a, const void *b)
{
	return lb_backend_cmp(
		*(const struct lb_backend_cfg *const *)a, *(const struct lb_backend_cfg *const *)b);
}

static const struct lb_backend_cfg **
sorted_backends(const struct lb_service_cfg *sc)
{
	const struct lb_backend_cfg **v = calloc(sc->n_backends + 1, sizeof(*v));
	uint32_t i;

	if (v == NULL)
		return NULL;
	for (i = 0; i < sc->n_backends; i++)
		v[i] = &sc->backends[i];
	qsort(v, sc->n_backends, sizeof(*v), be_cmp);
	return v;
}

/* What changed in one backend, " weight 1->3 state active->drain", or "". */
static void
be_change(const struct lb_backend_cfg *o, const struct lb_backend_cfg *n, char *what, size_t len)
{
	char h1[LB_ADDR_STRLEN], h2[LB_ADDR_STRLEN];
	size_t off = 0;

	what[0] = '\0';
	if (o->weight != n->weight)
		off += (size_t)snprintf(
			what + off, len - off, " weight %u->%u", o->weight, n->weight);
	if (o->state != n->state)
		off += (size_t)snprintf(what + off, len - off, " state %s->%s",
			mgr_state_name(o->state), mgr_state_name(n->state));
	if (memcmp(&o->host, &n->host, sizeof(o->host)) != 0 || o->host6 != n->host6)
		snprintf(what + off, len - off, " host %s->%s", mgr_host_str(o, h1, sizeof(h1)),
			mgr_host_str(n, h2, sizeof(h2)));
	else if (what[0] == '\0' && o->id != n->id)
		snprintf(what, len, " id %u->%u", o->id, n->id);
}

/* Backends added, removed or changed in one service. */
struct be_group {
	uint32_t n;
	const struct lb_backend_cfg *first, *last, *old; /* old: of a single change */
	char why[160]; /* the reason they share, "" when none or not the same */
};

static void
group_add(struct summ *s, const struct lb_svc_key *k, struct be_group *g,
	const struct lb_backend_cfg *b, const struct lb_backend_cfg *old,
	const struct lb_backend_cfg *from, const struct lb_backend_cfg *to)
{
	char buf[160];
	const char *w = s->why != NULL ? s->why(s->ctx, k, from, to, buf, sizeof(buf)) : NULL;

	if (w == NULL)
		w = "";
	if (g->n == 0)
		snprintf(g->why, sizeof(g->why), "%s", w);
	else if (strcmp(g->why, w) != 0)
		g->why[0] = '\0';
	if (g->n++ == 0)
		g->first = b;
	g->last = b;
	g->old = old;
}

/* One backend in detail; several as a count and their range. */
static void
group_item(struct summ *s, const struct be_group *g, char sign, uint8_t af, const char *sv)
{
	char a[MGR_BE_STR], b[MGR_BE_STR], what[160] = "", why[168] = "";

	if (g->n == 0)
		return;
	mgr_be_str(af, g->first, a, sizeof(a));
	if (g->why[0] != '\0')
		snprintf(why, sizeof(why), " (%s)", g->why);
	if (g->n == 1 && sign == '~')
		be_change(g->old, g->first, what, sizeof(what));
	if (g->n == 1)
		item(s, "%cbackend %s on %s%s%s%s", sign, a, sv, what[0] ? ":" : "", what, why);
	else
		item(s, "%c%u backends on %s (%s .. %s)%s", sign, g->n, sv, a,
			mgr_be_str(af, g->last, b, sizeof(b)), why);
}

static void
backend_changes(struct summ *s, const struct lb_service_cfg *a, const struct lb_service_cfg *b)
{
	const struct lb_backend_cfg **x = sorted_backends(a), **y = sorted_backends(b);
	struct be_group add = {0}, del = {0}, mod = {0};
	char sv[MGR_SVC_STR], what[160];
	uint32_t i = 0, j = 0;
	struct lb_svc_key k;

	lb_ftable_key(b, &k);
	mgr_svc_str(b, sv, sizeof(sv));
	if (x == NULL || y == NULL) {
		item(s, "~vip %s", sv);
		goto out;
	}
	while (i < a->n_backends || j < b->n_backends) {
		int c = i == a->n_backends ? 1 : j == b->n_backends ? -1 : be_cmp(&x[i], &y[j]);

		if (c < 0) {
			group_add(s, &k, &del, x[i], NULL, x[i], NULL);
			i++;
		} else if (c > 0) {
			group_add(s, &k, &add, y[j], NULL, NULL, y[j]);
			j++;
		} else {
			be_change(x[i], y[j], what, sizeof(what));
			if (what[0] != '\0')
				group_add(s, &k, &mod, y[j], x[i], x[i], y[j]);
			i++;
			j++;
		}
	}
	group_item(s, &add, '+', b->af, sv);
	group_item(s, &del, '-', b->af, sv);
	group_item(s, &mod, '~', b->af, sv);
out:
	free(x);
	free(y);
}

/* "drain mux1" / "undrain mux1": the drained list's changes. */
static void
drain_changes(struct summ *s, const struct lb_ftable *from, const struct lb_ftable *to)
{
	uint32_t i;

	for (i = 0; i < to->n_drained; i++)
		if (!lb_ftable_drained(from, to->drained[i]))
			item(s, "drain mux %s", to->drained[i]);
	for (i = 0; i < from->n_drained; i++)
		if (!lb_ftable_drained(to, from->drained[i]))
			item(s, "undrain mux %s", from->drained[i]);
}

/* Is the VIP of `to`'s service i withdrawn there, and was it in `from`? Once per VIP. */
static void
withdraw_changes(struct summ *s, const struct lb_ftable *from, const struct lb_ftable *to)
{
	char a[LB_ADDR_STRLEN];
	uint32_t i, j;

	for (i = 0; i < to->n_services; i++) {
		const struct lb_service_cfg *n = &to->services[i];
		bool was = false;

		if (i > 0 && lb_service_same_vip(&to->services[i - 1], n))
			continue;
		for (j = 0; j < from->n_services; j++)
			if (lb_service_same_vip(&from->services[j], n)) {
				was = from->services[j].withdrawn != 0;
				break;
			}
		if (j == from->n_services && !n->withdrawn)
			continue; /* a new VIP, announced: "+vip" says it */
		if (was != (n->withdrawn != 0))
			item(s, "%s vip %s", n->withdrawn ? "withdraw" : "announce",
				lb_addr_ntop(n->af, &n->vip, a, sizeof(a)));
	}
}

void
mgr_summary(const struct lb_ftable *from, const struct lb_ftable *to, char *out, size_t len)
{
	mgr_summary_why(from, to, out, len, NULL, NULL);
}

void
mgr_summary_why(const struct lb_ftable *from, const struct lb_ftable *to, char *out, size_t len,
	mgr_why_fn why, void *ctx)
{
	struct summ s = {out, len, 0, 0, why, ctx};
	char sv[MGR_SVC_STR];
	uint32_t i;

	out[0] = '\0';
	if (from->seed.k0 != to->seed.k0 || from->seed.k1 != to->seed.k1)
		item(&s, "hash seed changed");
	if (from->maglev_size != to->maglev_size)
		item(&s, "maglev size %u->%u", from->maglev_size, to->maglev_size);
	drain_changes(&s, from, to);
	if (!lb_limit_rule_equal(&from->mux_rate, &to->mux_rate)) {
		char r[96] = "none";

		if (to->mux_rate.limit != 0)
			lb_limit_rule_str(&to->mux_rate, "new_per_second", 0, r, sizeof(r));
		item(&s, "~limits mux: %s", r);
	}
	for (i = 0; i < from->n_services; i++) {
		struct lb_svc_key k;

		lb_ftable_key(&from->services[i], &k);
		if (lb_ftable_find(to, &k) < 0)
			item(&s, "-vip %s", mgr_svc_str(&from->services[i], sv, sizeof(sv)));
	}
	for (i = 0; i < to->n_services; i++) {
		const struct lb_service_cfg *n = &to->services[i];
		struct lb_svc_key k;
		int f;

		lb_ftable_key(n, &k);
		f = lb_ftable_find(from, &k);
		if (f < 0 && n->n_backends == 0)
			item(&s, "+vip %s", mgr_svc_str(n, sv, sizeof(sv)));
		else if (f < 0)
			item(&s, "+vip %s with %u backend%s", mgr_svc_str(n, sv, sizeof(sv)),
				n->n_backends, n->n_backends == 1 ? "" : "s");
		else
			backend_changes(&s, &from->services[f], n);
		if (f >= 0 ? !lb_limits_equal(&from->services[f].limits, &n->limits)
			   : lb_limits_any(&n->limits)) {
			char r[320];

			lb_limits_str(&n->limits, r, sizeof(r));
			item(&s, "~limits %s: %s", mgr_svc_str(n, sv, sizeof(sv)), r);
		}
	}
	withdraw_changes(&s, from, to);
	if (s.more > 0)
		snprintf(out + s.off, len - s.off, " (and %u more)", s.more);
	else if (s.off == 0)
		snprintf(out, len, "no change");
}
