/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The text exposition format (lb_prom.h). Reference: Prometheus'
 * "Exposition formats" (text format 0.0.4): a sample line is
 * name{label="value",...} value; label values escape \ " and newline,
 * HELP text escapes \ and newline; +Inf, -Inf and NaN are spelt so.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "lb_prom.h"

static const char *const type_names[] = {
	[LB_PROM_COUNTER] = "counter",
	[LB_PROM_GAUGE] = "gauge",
	[LB_PROM_HISTOGRAM] = "histogram",
};

void
lb_prom_init(struct lb_prom *p, FILE *out, const char *ns)
{
	p->out = out;
	p->ns = ns != NULL ? ns : "";
	p->family = "";
}

void
lb_prom_family(struct lb_prom *p, const char *name, enum lb_prom_type type, const char *help)
{
	const char *c;

	p->family = name;
	fprintf(p->out, "# HELP %s%s ", p->ns, name);
	for (c = help; *c != '\0'; c++) {
		if (*c == '\\')
			fputs("\\\\", p->out);
		else if (*c == '\n')
			fputs("\\n", p->out);
		else
			fputc(*c, p->out);
	}
	fprintf(p->out, "\n# TYPE %s%s %s\n", p->ns, name, type_names[type]);
}

/* name{labels} or name, for the family begun last and a suffix (histograms). */
static void
sample_name(struct lb_prom *p, const char *suffix, const char *labels)
{
	fprintf(p->out, "%s%s%s", p->ns, p->family, suffix);
	if (labels != NULL && labels[0] != '\0')
		fprintf(p->out, "{%s}", labels);
}

void
lb_prom_sample(struct lb_prom *p, const char *labels, uint64_t v)
{
	sample_name(p, "", labels);
	fprintf(p->out, " %" PRIu64 "\n", v);
}

static void
put_double(FILE *out, double v)
{
	if (isnan(v))
		fputs("NaN", out);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", out);
	else
		fprintf(out, "%.15g", v);
}

void
lb_prom_sample_f(struct lb_prom *p, const char *labels, double v)
{
	sample_name(p, "", labels);
	fputc(' ', p->out);
	put_double(p->out, v);
	fputc('\n', p->out);
}

void
lb_prom_one(
	struct lb_prom *p, const char *name, enum lb_prom_type type, const char *help, uint64_t v)
{
	lb_prom_family(p, name, type, help);
	lb_prom_sample(p, NULL, v);
}

/* Append key="value" (escaped) at buf[*at]; false (nothing appended) if it does not fit. */
static bool
label_put(char *buf, size_t len, size_t *at, const char *key, const char *value)
{
	size_t n = *at;
	const char *c;

#define PUT(ch)                                                                                    \
	do {                                                                                       \
		if (n + 1 >= len)                                                                  \
			return false;                                                              \
		buf[n++] = (ch);                                                                   \
	} while (0)
	if (n > 0)
		PUT(',');
	for (c = key; *c != '\0'; c++)
		PUT(*c);
	PUT('=');
	PUT('"');
	for (c = value; *c != '\0'; c++) {
		if (*c == '\\' || *c == '"') {
			PUT('\\');
			PUT(*c);
		} else if (*c == '\n') {
			PUT('\\');
			PUT('n');
		} else {
			PUT(*c);
		}
	}
	PUT('"');
#undef PUT
	buf[n] = '\0';
	*at = n;
	return true;
}

const char *
lb_prom_labels(char *buf, size_t len, ...)
{
	const char *key, *value;
	size_t at = 0;
	va_list ap;

	buf[0] = '\0';
	va_start(ap, len);
	while ((key = va_arg(ap, const char *)) != NULL) {
		value = va_arg(ap, const char *);
		if (!label_put(buf, len, &at, key, value != NULL ? value : ""))
			break;
	}
	va_end(ap);
	buf[at] = '\0';
	return buf;
}

const char *
lb_prom_labels_add(char *buf, size_t len, const char *a, const char *key, const char *value)
{
	size_t at;

	if (buf != a)
		snprintf(buf, len, "%s", a != NULL ? a : "");
	at = strlen(buf);
	if (!label_put(buf, len, &at, key, value))
		buf[at] = '\0';
	return buf;
}

void
lb_hist_init(struct lb_hist *h, const double *le, unsigned n)
{
	memset(h, 0, sizeof(*h));
	h->n = n < LB_HIST_MAX_BUCKETS ? n : LB_HIST_MAX_BUCKETS;
	memcpy(h->le, le, h->n * sizeof(*le));
}

void
lb_hist_observe(struct lb_hist *h, double v)
{
	unsigned i;

	for (i = 0; i < h->n; i++)
		if (v <= h->le[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum += v;
}

void
lb_prom_hist(struct lb_prom *p, const char *labels, const struct lb_hist *h)
{
	char le[32], l[512];
	uint64_t cum = 0;
	unsigned i;

	for (i = 0; i < h->n; i++) {
		cum += h->bucket[i];
		snprintf(le, sizeof(le), "%g", h->le[i]);
		sample_name(p, "_bucket", lb_prom_labels_add(l, sizeof(l), labels, "le", le));
		fprintf(p->out, " %" PRIu64 "\n", cum);
	}
	sample_name(p, "_bucket", lb_prom_labels_add(l, sizeof(l), labels, "le", "+Inf"));
	fprintf(p->out, " %" PRIu64 "\n", h->count);
	sample_name(p, "_sum", labels);
	fputc(' ', p->out);
	put_double(p->out, h->sum);
	fputc('\n', p->out);
	sample_name(p, "_count", labels);
	fprintf(p->out, " %" PRIu64 "\n", h->count);
}
