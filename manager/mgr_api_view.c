/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What sluicectl shows of the tables and their health: `vip list` (the
 * committed table, each backend with the state members run and why, its
 * admin state and its health), the health part of `status` (probes, and
 * every pool that fails open, loudly) and `config export`.
 *
 * Text for people, JSON for programs, from the same walk.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_ftable.h"
#include "lb_hdr.h"
#include "mgr_api_int.h"
#include "mgr_dip_prober.h"
#include "mgr_health.h"
#include "mgr_text.h"

static const char *
health_name(const struct mgr_hview *v)
{
	if (!v->hv_found)
		return "unknown";
	if (!v->hv_probed)
		return "none";
	switch (v->hv_health) {
	case MGR_H_INITIAL:
		return "initial";
	case MGR_H_HEALTHY:
		return "healthy";
	case MGR_H_UNHEALTHY:
		return "unhealthy";
	default:
		return "unknown";
	}
}

static const char *
admin_name(const struct mgr_hview *v)
{
	if (!v->hv_found)
		return "removed";
	return v->hv_deregistered ? "deregistered" : mgr_state_name(v->hv_admin);
}

static void
secs(struct mgr_buf *b, uint64_t ms)
{
	if (ms < 10000)
		mgr_buf_printf(b, "%" PRIu64 ".%01" PRIu64 " s", ms / 1000, ms % 1000 / 100);
	else
		mgr_buf_printf(b, "%" PRIu64 " s", ms / 1000);
}

/* "unhealthy for 12 s: connect: connection refused (0.4 s ago)", and the rest. */
static void
health_text(struct mgr_buf *b, const struct mgr_hview *v, const struct lb_backend_cfg *be)
{
	if (!v->hv_found) {
		mgr_buf_printf(b, "removed from desired");
		return;
	}
	if (v->hv_deregistered) {
		mgr_buf_printf(b, "deregistered, draining: ");
		secs(b, v->hv_drain_left_ms);
		mgr_buf_printf(b, " left");
		return;
	}
	if (v->hv_admin != be->state)
		mgr_buf_printf(b, "admin %s, ", mgr_state_name(v->hv_admin));
	if (!v->hv_probed)
		mgr_buf_printf(b, "not probed");
	else if (v->hv_health == MGR_H_UNHEALTHY) {
		mgr_buf_printf(b, "unhealthy for ");
		secs(b, v->hv_health_ms);
		mgr_buf_printf(b, ": %s (", v->hv_last_failure);
		secs(b, v->hv_last_failure_ago_ms);
		mgr_buf_printf(b, " ago)");
	} else {
		mgr_buf_printf(b, "%s", health_name(v));
		if (v->hv_failures > 0)
			mgr_buf_printf(b, " (%u failed: %s)", v->hv_failures, v->hv_last_failure);
	}
	if (v->hv_draining && v->hv_drain_left_ms > 0) {
		mgr_buf_printf(b, ", draining: ");
		secs(b, v->hv_drain_left_ms);
		mgr_buf_printf(b, " left");
	} else if (v->hv_draining) {
		mgr_buf_printf(b, ", drained");
	}
	if (v->hv_slow_start) {
		mgr_buf_printf(b, ", slow start: weight %u of %u (%u.%u%% of new connections), ",
			v->hv_slow_weight, v->hv_slow_target, v->hv_share_permille / 10,
			v->hv_share_permille % 10);
		secs(b, v->hv_slow_start_left_ms);
		mgr_buf_printf(b, " left");
	}
	if (strncmp(v->hv_why, "fail-open", 9) == 0)
		mgr_buf_printf(b, ", FAIL-OPEN");
}

static void
health_json(struct mgr_buf *j, const struct mgr_hview *v)
{
	mgr_buf_printf(j, ",\"admin_state\":\"%s\",\"admin_weight\":", admin_name(v));
	if (v->hv_found)
		mgr_buf_printf(j, "%u", v->hv_admin_weight);
	else
		mgr_buf_printf(j, "null");
	mgr_buf_printf(j,
		",\"health\":\"%s\",\"health_for_ms\":%" PRIu64
		",\"successes\":%u,\"failures\":%u,\"last_failure\":",
		health_name(v), v->hv_health_ms, v->hv_successes, v->hv_failures);
	mgr_buf_json_str(j, v->hv_last_failure);
	if (v->hv_last_failure[0] != '\0')
		mgr_buf_printf(j, ",\"last_failure_ago_ms\":%" PRIu64, v->hv_last_failure_ago_ms);
	else
		mgr_buf_printf(j, ",\"last_failure_ago_ms\":null");
	mgr_buf_printf(
		j, ",\"deregistered\":%s,\"draining\":", v->hv_deregistered ? "true" : "false");
	if (v->hv_draining)
		mgr_buf_printf(j, "{\"left_ms\":%" PRIu64 ",\"left_s\":%" PRIu64 "}",
			v->hv_drain_left_ms, (v->hv_drain_left_ms + 999) / 1000);
	else
		mgr_buf_printf(j, "null");
	mgr_buf_printf(j, ",\"slow_start\":");
	if (v->hv_slow_start)
		mgr_buf_printf(j,
			"{\"weight\":%u,\"target\":%u,\"share\":%.3f,\"left_ms\":%" PRIu64 "}",
			v->hv_slow_weight, v->hv_slow_target, v->hv_share_permille / 1000.0,
			v->hv_slow_start_left_ms);
	else
		mgr_buf_printf(j, "null");
	mgr_buf_printf(j, ",\"why\":");
	mgr_buf_json_str(j, v->hv_why);
}

static void
pool_text(struct mgr_buf *b, const struct mgr_pool *p)
{
	char m[32];

	if (p->pl_probe == LB_PROBE_NONE)
		mgr_buf_printf(b, "no probe");
	else if (p->pl_probe == LB_PROBE_HTTP)
		mgr_buf_printf(b, "http GET %s (%s)", p->pl_path, p->pl_codes);
	else
		mgr_buf_printf(b, "tcp");
	if (p->pl_probe != LB_PROBE_NONE) {
		if (p->pl_probe_port != 0)
			mgr_buf_printf(b, " port %u", p->pl_probe_port);
		mgr_buf_printf(b,
			" every %" PRIu32 " s, timeout %" PRIu32 " s, healthy %" PRIu32
			", unhealthy %" PRIu32,
			p->pl_interval_s, p->pl_timeout_s, p->pl_healthy, p->pl_unhealthy);
	}
	mgr_buf_printf(b, "; drain %" PRIu32 " s", p->pl_drain_delay_s);
	if (p->pl_slow_start_s != 0)
		mgr_buf_printf(b, "; slow start %" PRIu32 " s", p->pl_slow_start_s);
	mgr_buf_printf(b, "; min healthy %s", mgr_pool_min_str(p, m, sizeof(m)));
	if (mgr_pool_withdraws(p))
		mgr_buf_printf(b, "; withdraw below %s", mgr_pool_withdraw_str(p, m, sizeof(m)));
}

static void
pool_json(struct mgr_buf *j, const struct mgr_pool *p)
{
	mgr_buf_printf(j,
		"{\"probe\":\"%s\",\"probe_port\":%u,\"path\":", mgr_probe_name(p->pl_probe),
		p->pl_probe_port);
	mgr_buf_json_str(j, p->pl_path);
	mgr_buf_printf(j, ",\"codes\":");
	mgr_buf_json_str(j, p->pl_codes);
	mgr_buf_printf(j,
		",\"interval\":%" PRIu32 ",\"timeout\":%" PRIu32 ",\"healthy\":%" PRIu32
		",\"unhealthy\":%" PRIu32 ",\"drain_delay\":%" PRIu32 ",\"slow_start\":%" PRIu32
		",\"min_healthy\":%" PRIu32 ",\"min_healthy_percent\":%" PRIu32
		",\"withdraw_below\":%" PRIu32 ",\"withdraw_below_percent\":%" PRIu32 "}",
		p->pl_interval_s, p->pl_timeout_s, p->pl_healthy, p->pl_unhealthy,
		p->pl_drain_delay_s, p->pl_slow_start_s, p->pl_min_healthy, p->pl_min_healthy_pct,
		p->pl_withdraw_below, p->pl_withdraw_below_pct);
}

static void
table(struct mgr_api *api, const struct mgr_driver_view *dv, const struct lb_ftable *t,
	const struct lb_svc_key *only, struct mgr_buf *b, struct mgr_buf *j, uint64_t now)
{
	bool first = true;

	char s[MGR_SVC_STR], d[MGR_BE_STR], a[LB_ADDR_STRLEN], h[LB_ADDR_STRLEN], mn[32];
	uint32_t i, k;

	if (t->n_services == 0)
		mgr_buf_printf(b, "(no services)\n");
	mgr_buf_printf(j, "[");
	for (i = 0; i < t->n_services; i++) {
		const struct lb_service_cfg *sc = &t->services[i];
		const struct mgr_pool *p;
		struct mgr_sview sv;
		struct lb_svc_key key;

		lb_ftable_key(sc, &key);
		if (only != NULL && memcmp(&key, only, sizeof(key)) != 0)
			continue;
		p = mgr_pools_get(dv->pools, &key);
		mgr_health_service(api->deps.health, &key, now, &sv);
		mgr_buf_printf(b, "%s  (%u backend%s, %u of %u registered healthy)\n  pool: ",
			mgr_svc_str(sc, s, sizeof(s)), sc->n_backends,
			sc->n_backends == 1 ? "" : "s", sv.sv_healthy, sv.sv_registered);
		pool_text(b, p);
		mgr_buf_printf(b, "\n");
		if (sv.sv_fail_open)
			mgr_buf_printf(b, "  FAIL-OPEN: %u of %u healthy, minimum %s\n",
				sv.sv_healthy, sv.sv_registered,
				mgr_pool_min_str(p, mn, sizeof(mn)));
		/* The table's flag: what the muxes were told, not what health says now. */
		if (sc->withdrawn)
			mgr_buf_printf(b, "  WITHDRAWN: every mux withdraws %s (%s)\n",
				lb_addr_ntop(sc->af, &sc->vip, a, sizeof(a)),
				sv.sv_below_withdraw ? "below its withdraw_below"
						     : "another service of the VIP is below");
		if (sc->n_wzones != 0) {
			mgr_buf_printf(b, "  WITHDRAWN in zone%s", sc->n_wzones == 1 ? "" : "s");
			for (k = 0; k < sc->n_wzones && k < LB_WZONES; k++)
				mgr_buf_printf(b, " %.*s", LB_ZONE_LEN - 1, sc->wzones[k]);
			mgr_buf_printf(b,
				": their muxes withdraw %s (healthy backends there below "
				"withdraw_below)\n",
				lb_addr_ntop(sc->af, &sc->vip, a, sizeof(a)));
		}
		mgr_buf_printf(j,
			"%s{\"vip\":\"%s\",\"family\":%u,\"protocol\":\"%s\",\"port\":%u,"
			"\"id\":%u,\"registered\":%u,\"healthy\":%u,\"fail_open\":%s,\"withdrawn\":"
			"%s,"
			"\"below_withdraw\":%s,\"pool\":",
			first ? "" : ",", lb_addr_ntop(sc->af, &sc->vip, a, sizeof(a)), sc->af,
			sc->proto == LB_IPPROTO_UDP ? "udp" : "tcp", sc->port, sc->id,
			sv.sv_registered, sv.sv_healthy, sv.sv_fail_open ? "true" : "false",
			sc->withdrawn ? "true" : "false", sv.sv_below_withdraw ? "true" : "false");
		pool_json(j, p);
		mgr_buf_printf(j, ",\"withdrawn_zones\":[");
		for (k = 0; k < sc->n_wzones && k < LB_WZONES; k++) {
			char z[LB_ZONE_LEN];

			snprintf(z, sizeof(z), "%.*s", LB_ZONE_LEN - 1, sc->wzones[k]);
			mgr_buf_printf(j, "%s", k ? "," : "");
			mgr_buf_json_str(j, z);
		}
		mgr_buf_printf(j, "],\"backends\":[");
		for (k = 0; k < sc->n_backends; k++) {
			const struct lb_backend_cfg *be = &sc->backends[k];
			struct mgr_hview v;

			mgr_health_backend(api->deps.health, &key, &be->dip, be->port, now, &v);
			mgr_buf_printf(b, "  %-21s  host %-15s  weight %-5u  %-6s  id %-5u  ",
				mgr_be_str(sc->af, be, d, sizeof(d)),
				mgr_host_str(be, h, sizeof(h)), be->weight,
				mgr_state_name(be->state), be->id);
			health_text(b, &v, be);
			mgr_buf_printf(b, "\n");
			mgr_buf_printf(j,
				"%s{\"dip\":\"%s\",\"port\":%u,\"weight\":%u,\"host\":\"%s\","
				"\"state\":\"%s\",\"id\":%u",
				k ? "," : "", lb_addr_ntop(sc->af, &be->dip, a, sizeof(a)),
				be->port, be->weight, mgr_host_str(be, h, sizeof(h)),
				mgr_state_name(be->state), be->id);
			health_json(j, &v);
			mgr_buf_printf(j, "}");
		}
		mgr_buf_printf(j, "]}");
		first = false;
	}
	mgr_buf_printf(j, "]");
}

void
mgr_api_vip_view(struct mgr_api *api, const struct mgr_driver_view *dv,
	const struct lb_svc_key *only, struct mgr_buf *b, struct mgr_buf *j, uint64_t now)
{
	uint64_t v = dv->commit->committed;

	mgr_buf_printf(b, "version %" PRIu64 "\n", v);
	mgr_buf_printf(j, "{\"version\":%" PRIu64 ",\"services\":", v);
	table(api, dv, dv->committed, only, b, j, now);
	if (dv->pending) {
		mgr_buf_printf(
			b, "\nnext (will commit as version %" PRIu64 ")\n", dv->target_version);
		mgr_buf_printf(j,
			",\"desired\":{\"version\":%" PRIu64 ",\"services\":", dv->target_version);
		table(api, dv, dv->effective, only, b, j, now);
		mgr_buf_printf(j, "}");
	} else {
		mgr_buf_printf(j, ",\"desired\":null");
	}
	mgr_buf_printf(j, "}");
}

void
mgr_api_health_view(struct mgr_api *api, const struct mgr_driver_view *v, struct mgr_buf *b,
	struct mgr_buf *j, uint64_t now)
{
	static const unsigned edges[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
	struct mgr_dip_probe_stats ps;
	uint32_t i, n_open = 0;
	char s[MGR_SVC_STR], a[LB_ADDR_STRLEN], mn[32];

	mgr_health_stats(api->deps.health, &ps);
	mgr_dip_prober_stats(api->deps.dip, &ps);
	mgr_buf_printf(b,
		"probes      %u backends, %u in flight, %" PRIu64 " run (%" PRIu64 " up, %" PRIu64
		" down), late: max %" PRIu64 " ms, mean %.2f ms\n",
		ps.ps_backends, ps.ps_in_flight, ps.ps_started, ps.ps_up, ps.ps_down,
		ps.ps_late_max_ms,
		ps.ps_started ? (double)ps.ps_late_sum_ms / (double)ps.ps_started : 0.0);
	mgr_buf_printf(j,
		",\"probes\":{\"backends\":%u,\"in_flight\":%u,\"max_in_flight\":%u,"
		"\"started\":%" PRIu64 ",\"up\":%" PRIu64 ",\"down\":%" PRIu64
		",\"no_socket\":%" PRIu64 ",\"transitions\":%" PRIu64 ",\"late_max_ms\":%" PRIu64
		",\"late_sum_ms\":%" PRIu64 ",\"late_hist\":{\"below_ms\":[",
		ps.ps_backends, ps.ps_in_flight, ps.ps_max_in_flight, ps.ps_started, ps.ps_up,
		ps.ps_down, ps.ps_nosock, ps.ps_transitions, ps.ps_late_max_ms, ps.ps_late_sum_ms);
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		mgr_buf_printf(j, "%s%u", i ? "," : "", edges[i]);
	mgr_buf_printf(j, ",null],\"count\":[");
	for (i = 0; i < 11; i++)
		mgr_buf_printf(j, "%s%" PRIu64, i ? "," : "", ps.ps_late_hist[i]);
	mgr_buf_printf(j, "]}},\"fail_open\":[");
	for (i = 0; i < v->desired->n_services; i++) {
		const struct lb_service_cfg *sc = &v->desired->services[i];
		const struct mgr_pool *p;
		struct lb_svc_key k;
		struct mgr_sview sv;

		lb_ftable_key(sc, &k);
		mgr_health_service(api->deps.health, &k, now, &sv);
		if (!sv.sv_fail_open)
			continue;
		p = mgr_pools_get(v->pools, &k);
		/* Loud on purpose: every backend, sick or not, takes traffic. */
		mgr_buf_printf(b, "FAIL-OPEN   %s: %u of %u healthy, minimum %s (for ",
			mgr_svc_str(sc, s, sizeof(s)), sv.sv_healthy, sv.sv_registered,
			mgr_pool_min_str(p, mn, sizeof(mn)));
		secs(b, sv.sv_fail_open_ms);
		mgr_buf_printf(b, ")\n");
		mgr_buf_printf(j,
			"%s{\"service\":\"%s\",\"vip\":\"%s\",\"protocol\":\"%s\",\"port\":%u,"
			"\"healthy\":%u,\"registered\":%u,\"min_healthy\":%" PRIu32
			",\"min_healthy_percent\":%" PRIu32 ",\"for_ms\":%" PRIu64 "}",
			n_open++ ? "," : "", s, lb_addr_ntop(sc->af, &sc->vip, a, sizeof(a)),
			sc->proto == LB_IPPROTO_UDP ? "udp" : "tcp", sc->port, sv.sv_healthy,
			sv.sv_registered, p->pl_min_healthy, p->pl_min_healthy_pct,
			sv.sv_fail_open_ms);
	}
	mgr_buf_printf(j, "],\"withdrawn\":[");
	n_open = 0;
	for (i = 0; i < v->effective->n_services; i++) {
		const struct lb_service_cfg *sc = &v->effective->services[i];
		struct lb_svc_key k;
		struct mgr_sview sv;

		/* One line per VIP (its services are adjacent, and flagged alike). */
		if (!sc->withdrawn ||
			(i > 0 && lb_service_same_vip(&v->effective->services[i - 1], sc)))
			continue;
		lb_ftable_key(sc, &k);
		mgr_health_service(api->deps.health, &k, now, &sv);
		mgr_buf_printf(b, "WITHDRAWN   %s: every mux withdraws it (for ",
			lb_addr_ntop(sc->af, &sc->vip, a, sizeof(a)));
		secs(b, sv.sv_withdrawn_ms);
		mgr_buf_printf(b, "): its services are below their withdraw_below\n");
		mgr_buf_printf(j, "%s{\"vip\":\"%s\",\"for_ms\":%" PRIu64 "}", n_open++ ? "," : "",
			a, sv.sv_withdrawn_ms);
	}
	mgr_buf_printf(j, "]");
}

int
mgr_api_export_text(const struct mgr_driver_view *v, char **text)
{
	size_t len = 0;
	FILE *f = open_memstream(text, &len);
	uint32_t i;
	int rc;

	if (f == NULL)
		return -1;
	/* The operators' table, not the effective one: health is not configuration. */
	fprintf(f,
		"# sluice-manager: the desired flow table and its pools (committed version "
		"%" PRIu64 ")\n",
		v->commit->committed);
	rc = lb_ftable_write(v->desired, f);
	if (v->pools->ps_n > 0)
		fprintf(f, "pools = (");
	for (i = 0; i < v->pools->ps_n; i++) {
		const struct mgr_pool_entry *e = &v->pools->ps_v[i];
		char a[LB_ADDR_STRLEN];

		fprintf(f, "%s\n\t{ vip = \"%s\"; port = %u; protocol = \"%s\";\n\t\t  ",
			i ? "," : "", lb_addr_ntop(e->pe_key.af, &e->pe_key.vip, a, sizeof(a)),
			lb_be16_to_cpu(e->pe_key.port),
			e->pe_key.proto == LB_IPPROTO_UDP ? "udp" : "tcp");
		mgr_pool_write(&e->pe_pool, f);
		fprintf(f, " }");
	}
	if (v->pools->ps_n > 0)
		fprintf(f, "\n);\n");
	if (fclose(f) != 0 || rc != 0) {
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}
