/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the mux says about its routes: the summary's lines, the stats
 * JSON's "route" member and the /sluice/route telemetry command. Every
 * reader takes the route lock, so a report is one pass's consistent view.
 *
 * Two sources, kept apart on purpose: the decision says what the mux wants
 * announced and why not the rest; the speaker's section says what BIRD
 * actually announces, since when, and on which sessions. "Announced" in
 * the reports is always the speaker's word.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_telemetry.h>

#include "lb_codec.h"
#include "lb_prom.h"
#include "mux_route_int.h"

#define TEL_PAGE 64

static uint64_t
unix_ms(uint64_t mono_ms)
{
	struct timespec ts;
	uint64_t now_real, now_mono = lb_now_ms();

	if (mono_ms == 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	now_real = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	return now_real - (now_mono > mono_ms ? now_mono - mono_ms : 0);
}

static const char *
ip4(uint32_t be, char *buf)
{
	return inet_ntop(AF_INET, &be, buf, INET_ADDRSTRLEN);
}

static const char *
phase_name(enum mux_route_phase p)
{
	static const char *const names[] = {"running", "withdrawing", "draining", "done"};

	return (unsigned)p < 4 ? names[p] : "?";
}

static unsigned
sessions_up(const struct mux_rp_speaker *s)
{
	unsigned i, n = 0;

	for (i = 0; i < s->n_peers; i++)
		n += s->peers[i].established != 0;
	return n;
}

/* One line on where the routes stand, the first thing an operator reads. */
static void
status_line(const struct mux_route *r, char *buf, size_t len)
{
	const struct mux_rp_speaker *s = &r->spk;
	unsigned up = sessions_up(s), i;

	if (r->speaker_gone) {
		snprintf(buf, len, "not announced: %s", r->speaker_exit);
	} else if (r->ann->reason != MUX_ANN_NONE) {
		snprintf(buf, len, "withdrawn: %s", r->ann->why);
	} else if (s->stale) {
		snprintf(buf, len, "withdrawn by the speaker: the mux's heartbeat was stale");
	} else if (r->mine.n_vips == 0) {
		snprintf(buf, len, "nothing to announce: every VIP is withheld");
	} else if (s->n_vips == 0) {
		snprintf(buf, len, "not announced yet: speaker %s%s%s", s->state,
			s->last_error[0] ? "; last error: " : "", s->last_error);
	} else if (up == 0) {
		size_t off = (size_t)snprintf(
			buf, len, "announced to no router: no BGP session established");

		for (i = 0; i < s->n_peers && off < len; i++) {
			char a[INET_ADDRSTRLEN];

			off += (size_t)snprintf(buf + off, len - off, "%sn%u %s %s%s%s",
				i ? "; " : " (", i, ip4(s->peers[i].addr, a), s->peers[i].state,
				s->peers[i].error[0] ? ": " : "", s->peers[i].error);
		}
		if (off < len)
			snprintf(buf + off, len - off, ")");
	} else {
		snprintf(buf, len, "announced: %u VIP%s to %u of %u neighbor%s", s->n_vips,
			s->n_vips == 1 ? "" : "s", up, s->n_peers, s->n_peers == 1 ? "" : "s");
	}
}

static void
print_locked(const struct mux_route *r, const char *st, FILE *out)
{
	const struct mux_rp_speaker *s = &r->spk;
	char a[INET_ADDRSTRLEN];
	uint32_t i, withheld = 0;

	for (i = 0; i < r->ann->n_vips; i++)
		withheld += !r->ann->vips[i].announce;
	fprintf(out, "  route: %s\n", st);
	fprintf(out,
		"  route: %u VIPs announced, %u withheld; announces %" PRIu64 ", withdraws %" PRIu64
		", frozen-heartbeat withdrawals %" PRIu64 ", speaker errors %" PRIu64 "\n",
		s->n_vips, withheld, s->announces, s->withdraws, s->stale_withdrawals,
		s->errors + r->speaker_errors);
	for (i = 0; i < s->n_peers; i++)
		fprintf(out, "  route: session n%u with %s (AS %u): %s%s%s\n", i,
			ip4(s->peers[i].addr, a), s->peers[i].as, s->peers[i].state,
			s->peers[i].error[0] ? ", " : "", s->peers[i].error);
	if (s->last_error[0] != '\0')
		fprintf(out, "  route: last speaker error: %s\n", s->last_error);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void
json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void
json_locked(const struct mux_route *r, const char *st, FILE *out)
{
	const struct mux_rp_speaker *s = &r->spk;
	char a[INET_ADDRSTRLEN];
	uint32_t i, k = 0;

	fprintf(out, ",\"route\":{\"status\":");
	json_str(out, st);
	fprintf(out, ",\"phase\":\"%s\",\"reason\":", phase_name(r->phase));
	json_str(out, r->ann->why);
	fprintf(out,
		",\"announces\":%" PRIu64 ",\"withdraws\":%" PRIu64 ",\"speaker_errors\":%" PRIu64
		",\"stale_withdrawals\":%" PRIu64 ",\"announced\":[",
		s->announces, s->withdraws, s->errors + r->speaker_errors, s->stale_withdrawals);
	for (i = 0; i < s->n_vips; i++)
		fprintf(out, "%s{\"vip\":\"%s\",\"since_unix_ms\":%" PRIu64 "}", i ? "," : "",
			ip4(s->vips[i], a), unix_ms(s->since_ms[i]));
	fprintf(out, "],\"withheld\":[");
	for (i = 0; i < r->ann->n_vips; i++) {
		const struct mux_ann_vip *v = &r->ann->vips[i];

		if (v->announce)
			continue;
		fprintf(out, "%s{\"vip\":\"%s\",\"reason\":\"%s\",\"why\":", k++ ? "," : "",
			ip4(v->vip, a), mux_ann_reason_name(v->reason));
		json_str(out, v->why);
		fprintf(out, ",\"since_unix_ms\":%" PRIu64 "}", unix_ms(v->since_ms));
	}
	fprintf(out, "],\"sessions\":[");
	for (i = 0; i < s->n_peers; i++) {
		fprintf(out, "%s{\"peer\":\"%s\",\"as\":%u,\"state\":", i ? "," : "",
			ip4(s->peers[i].addr, a), s->peers[i].as);
		json_str(out, s->peers[i].state);
		fprintf(out, ",\"error\":");
		json_str(out, s->peers[i].error);
		fprintf(out, "}");
	}
	fprintf(out, "],\"last_error\":");
	json_str(out, s->last_error);
	fprintf(out, "}");
}

/* A section's part (print_locked or json_locked), written under the route lock. */
static void
section_locked(const void *arg, FILE *out,
	void (*part)(const struct mux_route *r, const char *status, FILE *out))
{
	struct mux_route *r = (struct mux_route *)arg; /* const: only its lock changes */
	char st[512];

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	status_line(r, st, sizeof(st));
	part(r, st, out);
	pthread_mutex_unlock(&r->lock);
}

static void
route_print(const void *arg, FILE *out)
{
	section_locked(arg, out, print_locked);
}

static void
route_json(const void *arg, FILE *out)
{
	section_locked(arg, out, json_locked);
}

struct dp_section
mux_route_section(struct mux_route *r)
{
	return (struct dp_section){.print = route_print, .json = route_json, .arg = r};
}

bool
mux_route_status(struct mux_route *r, struct lb_route_state *out)
{
	const struct mux_rp_speaker *s;
	uint32_t i;

	if (r == NULL)
		return false;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&r->lock);
	s = &r->spk;
	status_line(r, out->status, sizeof(out->status));
	snprintf(out->reason, sizeof(out->reason), "%s", mux_ann_reason_name(r->ann->reason));
	out->since_unix_ms = unix_ms(r->ann->reason_since_ms);
	out->sessions = s->n_peers;
	out->sessions_up = sessions_up(s);
	out->n_vips_total = r->ann->n_vips;
	for (i = 0; i < r->ann->n_vips && i < LB_ROUTE_MAX_VIPS; i++) {
		const struct mux_ann_vip *v = &r->ann->vips[i];
		struct lb_route_vip *o = &out->vips[i];
		uint64_t since = 0;

		o->vip = v->vip;
		o->announced = !r->speaker_gone && mux_rp_announces(s, v->vip, &since);
		if (o->announced)
			o->since_unix_ms = unix_ms(since);
		else
			o->since_unix_ms = unix_ms(v->since_ms);
		/* Wanted, not yet announced: the speaker's word is awaited. */
		snprintf(o->reason, sizeof(o->reason), "%s",
			o->announced  ? ""
			: v->announce ? "PENDING"
				      : mux_ann_reason_name(v->reason));
		out->n_vips = i + 1;
	}
	pthread_mutex_unlock(&r->lock);
	return true;
}

/* ---- /sluice/route: read-only, one page of VIPs per call ---- */

static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mux_route *tel_route;

/* 22.11 telemetry does not escape strings: keep values plain and short. */
static const char *
tel_str(const char *s, char *buf)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i < RTE_TEL_MAX_STRING_LEN - 1; i++)
		buf[i] = (s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20) ? '\'' : s[i];
	buf[i] = '\0';
	return buf;
}

static int
add_array(struct rte_tel_data *d, const char *name, struct rte_tel_data *a)
{
	return rte_tel_data_add_dict_container(d, name, a, 0);
}

static int
tel_route_locked(struct mux_route *r, unsigned long page, struct rte_tel_data *d)
{
	const struct mux_rp_speaker *s = &r->spk;
	struct rte_tel_data *an = rte_tel_data_alloc(), *an_t = rte_tel_data_alloc();
	struct rte_tel_data *wh = rte_tel_data_alloc(), *wh_r = rte_tel_data_alloc();
	struct rte_tel_data *wh_t = rte_tel_data_alloc(), *sp = rte_tel_data_alloc();
	struct rte_tel_data *sa = rte_tel_data_alloc(), *ss = rte_tel_data_alloc();
	struct rte_tel_data *st_ = rte_tel_data_alloc(), *se = rte_tel_data_alloc();
	struct rte_tel_data *all[] = {an, an_t, wh, wh_r, wh_t, sp, sa, ss, st_, se};
	char buf[RTE_TEL_MAX_STRING_LEN], line[512], a[INET_ADDRSTRLEN];
	uint64_t now = lb_now_ms();
	uint32_t i, lo = (uint32_t)(page * TEL_PAGE), hi = lo + TEL_PAGE;
	size_t k;

	for (k = 0; k < sizeof(all) / sizeof(all[0]); k++)
		if (all[k] == NULL) {
			for (k = 0; k < sizeof(all) / sizeof(all[0]); k++)
				rte_tel_data_free(all[k]);
			return -ENOMEM;
		}
	rte_tel_data_start_dict(d);
	status_line(r, line, sizeof(line));
	rte_tel_data_add_dict_string(d, "status", tel_str(line, buf));
	rte_tel_data_add_dict_string(d, "phase", phase_name(r->phase));
	rte_tel_data_add_dict_string(d, "reason", mux_ann_reason_name(r->ann->reason));
	rte_tel_data_add_dict_string(d, "why", tel_str(r->ann->why, buf));
	rte_tel_data_add_dict_u64(d, "reason_since_unix_ms", unix_ms(r->ann->reason_since_ms));
	rte_tel_data_add_dict_u64(d, "page", page);
	rte_tel_data_add_dict_u64(d, "vips", r->ann->n_vips);
	rte_tel_data_add_dict_u64(d, "vips_dropped", r->ann->n_dropped);
	rte_tel_data_add_dict_u64(d, "announces", s->announces);
	rte_tel_data_add_dict_u64(d, "withdraws", s->withdraws);
	rte_tel_data_add_dict_u64(d, "speaker_errors", s->errors + r->speaker_errors);
	rte_tel_data_add_dict_u64(d, "stale_withdrawals", s->stale_withdrawals);
	rte_tel_data_add_dict_u64(d, "heartbeat_age_ms",
		r->mine.heartbeat_ms ? now - r->mine.heartbeat_ms : UINT64_MAX);
	rte_tel_data_add_dict_u64(
		d, "speaker_age_ms", s->updated_ms ? now - s->updated_ms : UINT64_MAX);
	rte_tel_data_add_dict_u64(d, "speaker_pid", r->speaker_gone ? 0 : (uint64_t)r->speaker);
	rte_tel_data_add_dict_u64(d, "bird_pid", s->bird_pid);
	rte_tel_data_add_dict_string(d, "speaker_state", tel_str(s->state, buf));
	rte_tel_data_add_dict_string(
		d, "last_error", tel_str(r->speaker_gone ? r->speaker_exit : s->last_error, buf));

	rte_tel_data_start_array(an, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(an_t, RTE_TEL_U64_VAL);
	for (i = lo; i < s->n_vips && i < hi; i++) {
		rte_tel_data_add_array_string(an, ip4(s->vips[i], a));
		rte_tel_data_add_array_u64(an_t, unix_ms(s->since_ms[i]));
	}
	rte_tel_data_start_array(wh, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(wh_r, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(wh_t, RTE_TEL_U64_VAL);
	for (i = lo; i < r->ann->n_vips && i < hi; i++) {
		const struct mux_ann_vip *v = &r->ann->vips[i];

		if (v->announce)
			continue;
		rte_tel_data_add_array_string(wh, ip4(v->vip, a));
		rte_tel_data_add_array_string(wh_r, tel_str(v->why, buf));
		rte_tel_data_add_array_u64(wh_t, unix_ms(v->since_ms));
	}
	rte_tel_data_start_array(sp, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(sa, RTE_TEL_U64_VAL);
	rte_tel_data_start_array(ss, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(st_, RTE_TEL_U64_VAL);
	rte_tel_data_start_array(se, RTE_TEL_STRING_VAL);
	for (i = 0; i < s->n_peers; i++) {
		rte_tel_data_add_array_string(sp, ip4(s->peers[i].addr, a));
		rte_tel_data_add_array_u64(sa, s->peers[i].as);
		rte_tel_data_add_array_string(ss, tel_str(s->peers[i].state, buf));
		rte_tel_data_add_array_u64(st_, s->peers[i].since_unix);
		rte_tel_data_add_array_string(se, tel_str(s->peers[i].error, buf));
	}
	add_array(d, "announced", an);
	add_array(d, "announced_since_unix_ms", an_t);
	add_array(d, "withheld", wh);
	add_array(d, "withheld_why", wh_r);
	add_array(d, "withheld_since_unix_ms", wh_t);
	add_array(d, "session_peer", sp);
	add_array(d, "session_as", sa);
	add_array(d, "session_state", ss);
	add_array(d, "session_since_unix", st_);
	add_array(d, "session_error", se);
	return 0;
}

static int
tel_route_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned long page = params && *params ? strtoul(params, NULL, 10) : 0;
	int rc = -EINVAL;

	(void)cmd;
	pthread_mutex_lock(&tel_lock);
	if (tel_route != NULL) {
		pthread_mutex_lock(&tel_route->lock);
		rc = tel_route_locked(tel_route, page, d);
		pthread_mutex_unlock(&tel_route->lock);
	}
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

int
mux_route_telemetry_register(struct mux_route *r)
{
	pthread_mutex_lock(&tel_lock);
	tel_route = r;
	pthread_mutex_unlock(&tel_lock);
	return rte_telemetry_register_cmd("/sluice/route", tel_route_cmd,
		"BGP announcements: status, VIPs announced (and since), withheld (and why), "
		"sessions, counters. Parameter: page of 64 VIPs.");
}

void
mux_route_telemetry_forget(struct mux_route *r)
{
	pthread_mutex_lock(&tel_lock);
	if (tel_route == r)
		tel_route = NULL;
	pthread_mutex_unlock(&tel_lock);
}

/* Is vip (network order) among what BIRD announces? */
static bool
speaker_announces(const struct mux_rp_speaker *s, uint32_t vip)
{
	uint32_t i;

	for (i = 0; i < s->n_vips && i < MUX_RP_MAX_VIPS; i++)
		if (s->vips[i] == vip)
			return true;
	return false;
}

void
mux_route_metrics(struct mux_route *r, struct lb_prom *p)
{
	const struct mux_rp_speaker *s;
	char l[96], a[INET_ADDRSTRLEN], n[8];
	uint32_t i;
	int k;

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	s = &r->spk;
	lb_prom_family(p, "bgp_vip_announced", LB_PROM_GAUGE,
		"1 while the BGP speaker announces the VIP (BIRD's word), 0 while withheld.");
	for (i = 0; i < r->ann->n_vips; i++)
		lb_prom_sample(p,
			lb_prom_labels(l, sizeof(l), "vip", ip4(r->ann->vips[i].vip, a), NULL),
			!r->speaker_gone && speaker_announces(s, r->ann->vips[i].vip));
	/* A state set: one series per reason, 1 for the mux-wide one now. */
	lb_prom_family(p, "bgp_state", LB_PROM_GAUGE,
		"Why the mux's routes stand as they do: 1 for the reason now "
		"(ANNOUNCED: nothing withholds them all).");
	for (k = 0; k < MUX_ANN_REASON_MAX; k++) {
		if (k == MUX_ANN_VIP_HELD)
			continue; /* per VIP, not the mux's */
		lb_prom_sample(p,
			lb_prom_labels(l, sizeof(l), "reason",
				k == MUX_ANN_NONE ? "ANNOUNCED" : mux_ann_reason_name(k), NULL),
			r->ann->reason == (enum mux_ann_reason)k);
	}
	lb_prom_family(p, "bgp_session_established", LB_PROM_GAUGE,
		"1 while the BGP session with the neighbor is established.");
	for (i = 0; i < s->n_peers && i < MUX_BGP_MAX_NEIGHBORS; i++) {
		snprintf(n, sizeof(n), "n%u", i);
		lb_prom_sample(p,
			lb_prom_labels(l, sizeof(l), "neighbor", ip4(s->peers[i].addr, a),
				"session", n, NULL),
			!r->speaker_gone && s->peers[i].established != 0);
	}
	lb_prom_one(p, "bgp_announced_vips", LB_PROM_GAUGE, "VIPs the BGP speaker announces now.",
		r->speaker_gone ? 0 : s->n_vips);
	lb_prom_one(p, "bgp_announces_total", LB_PROM_COUNTER, "VIP routes given to BIRD.",
		s->announces);
	lb_prom_one(p, "bgp_withdraws_total", LB_PROM_COUNTER, "VIP routes taken from BIRD.",
		s->withdraws);
	lb_prom_one(p, "bgp_stale_withdrawals_total", LB_PROM_COUNTER,
		"Times the speaker withdrew everything because the mux's heartbeat went stale.",
		s->stale_withdrawals);
	lb_prom_one(p, "bgp_speaker_errors_total", LB_PROM_COUNTER,
		"Failed BIRD reconfigurations, BIRD exits, control socket failures, speaker "
		"deaths.",
		s->errors + r->speaker_errors);
	pthread_mutex_unlock(&r->lock);
}
