/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `stats`: per service and backend, packets, bits and new connections per
 * second summed over every connected mux, and their counters (what the
 * muxes' STATUS carry, mgr_stats.h). sluicectl redraws it like top(1).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "lb_addr.h"
#include "mgr_api_int.h"
#include "mgr_members.h"
#include "mgr_stats.h"
#include "mgr_text.h"

/* 1234567 -> "1.23M": a rate in a column of 8. */
static const char *
si(double v, char *buf, size_t len)
{
	static const char unit[] = " kMGT";
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.2f%c", v, unit[u]);
	return buf;
}

static void
row(struct mgr_buf *b, const char *name, const struct mgr_flow_sum *f)
{
	char p[16], r[16], c[16];

	mgr_buf_printf(b, "%-30s %9s %9s %8s %14" PRIu64 " %16" PRIu64 " %10" PRIu64 " %5u\n", name,
		si(f->rate.pps, p, sizeof(p)), si(f->rate.bps, r, sizeof(r)),
		si(f->rate.cps, c, sizeof(c)), f->f.pkts, f->f.bytes, f->f.new_conns, f->members);
}

static void
json_fields(struct mgr_buf *j, const struct mgr_flow_sum *f)
{
	mgr_buf_printf(j,
		",\"muxes\":%u,\"pps\":%.3f,\"bps\":%.3f,\"cps\":%.3f,\"packets\":%" PRIu64
		",\"bytes\":%" PRIu64 ",\"new_connections\":%" PRIu64,
		f->members, f->rate.pps, f->rate.bps, f->rate.cps, f->f.pkts, f->f.bytes,
		f->f.new_conns);
}

void
mgr_api_stats(struct mgr_api *api, const struct mgr_api_req *q)
{
	const struct mgr_commit *c = q->v.commit;
	struct mgr_buf b = {0}, j = {0};
	bool in[MGR_MAX_MEMBERS] = {false};
	struct mgr_flow_sum *sum;
	char name[MGR_SVC_STR], ip[LB_ADDR_STRLEN];
	uint32_t i, muxes = 0;
	int n, s, k = 0, nb = 0, open = 0;

	for (i = 0; i < c->n_members; i++) {
		in[i] = c->members[i].role == LB_ROLE_MUX &&
			mgr_members_connected(api->deps.members, (int)i);
		muxes += in[i];
	}
	n = mgr_stats_sum(api->deps.stats, in, &sum);
	if (n < 0) {
		mgr_api_refuse(q->rep, "stats: out of memory");
		return;
	}
	mgr_buf_printf(&b,
		"stats       version %" PRIu64 ", %u muxes connected; per second over the last "
		"%u-%u s, summed over the muxes\n",
		c->committed, muxes, MGR_STATS_WINDOW_MS / 1000, 2 * MGR_STATS_WINDOW_MS / 1000);
	mgr_buf_printf(&b, "%-30s %9s %9s %8s %14s %16s %10s %5s\n", "SERVICE / BACKEND", "PKT/S",
		"BIT/S", "CONN/S", "PACKETS", "BYTES", "CONNS", "MUXES");
	mgr_buf_printf(&j, "{\"version\":%" PRIu64 ",\"muxes\":%u,\"window_ms\":%u,\"services\":[",
		c->committed, muxes, MGR_STATS_WINDOW_MS);
	for (s = 0; s < n; s++) {
		const struct mgr_flow_sum *f = &sum[s];

		lb_addr_ntop(f->f.af, &f->f.vip, ip, sizeof(ip));
		if (f->f.dip_port == 0) {
			snprintf(name, sizeof(name),
				f->f.af == LB_AF_INET6 ? "%s [%s]:%u" : "%s %s:%u",
				f->f.proto == LB_IPPROTO_UDP ? "udp" : "tcp", ip, f->f.port);
			row(&b, name, f);
			mgr_buf_printf(&j,
				"%s%s{\"service\":\"%s\",\"vip\":\"%s\",\"port\":%u,"
				"\"protocol\":\"%s\"",
				open ? "]}" : "", k++ ? "," : "", name, ip, f->f.port,
				f->f.proto == LB_IPPROTO_UDP ? "udp" : "tcp");
			json_fields(&j, f);
			mgr_buf_printf(&j, ",\"backends\":[");
			open = 1;
			nb = 0;
			continue;
		}
		if (!open)
			continue; /* a backend of a service no mux reports: cannot be */
		lb_addr_ntop(f->f.af, &f->f.dip, ip, sizeof(ip));
		snprintf(name, sizeof(name), f->f.af == LB_AF_INET6 ? "  [%s]:%u" : "  %s:%u", ip,
			f->f.dip_port);
		row(&b, name, f);
		mgr_buf_printf(&j, "%s{\"backend\":\"%s\",\"dip\":\"%s\",\"port\":%u",
			nb++ ? "," : "", name + 2, ip, f->f.dip_port);
		json_fields(&j, f);
		mgr_buf_printf(&j, "}");
	}
	mgr_buf_printf(&j, "%s]}", open ? "]}" : "");
	if (n == 0)
		mgr_buf_printf(&b, "(no mux reports a service yet)\n");
	free(sum);
	mgr_api_reply(q->rep, &b, &j);
}
