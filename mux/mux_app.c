/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running mux as one object (mux_app.h): what main.c starts once EAL
 * and the ports run, before the workers are launched.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "dp_rcu.h"
#include "lb_err.h"
#include "lb_log.h"
#include "mux_app.h"
#include "mux_conn.h"
#include "mux_gen.h"

/*
 * The first generation and the RCU state that guards its replacements.
 * Reloads may grow the table to twice its size, or to 65,536 backends. A
 * managed mux starts empty at version 0: the file's table, if any, was
 * dropped, and nothing is forwarded until the manager's arrives.
 */
static int
gen_start(struct mux_app *app, char *errbuf, size_t len)
{
	struct lb_cfg_err cerr;

	app->seed_fixed = !app->cfg.managed;
	app->ctx.gen = mux_gen_build(&app->cfg.ftable, app->cfg.managed ? 0 : 1,
		app->cfg.cap_backends != 0
			? app->cfg.cap_backends
			: RTE_MAX(65536u, 2 * lb_ftable_backend_count(&app->cfg.ftable)),
		app->cfg.cap_services != 0 ? app->cfg.cap_services
					   : RTE_MAX(8192u, 2 * app->cfg.ftable.n_services),
		mux_config_tunnels(&app->cfg), app->cfg.zone, (int)rte_socket_id(), &cerr);
	if (app->ctx.gen == NULL) {
		snprintf(errbuf, len, "%s", cerr.msg);
		return -1;
	}
	app->ctx.qsv = dp_rcu_create("mux_qsbr", app->n_workers, errbuf, len);
	if (app->ctx.qsv == NULL)
		return -1;
	return 0;
}

/* What every worker reads; *eof_pkts: the packets of the ports' rx_pcap inputs. */
static int
ctx_fill(struct mux_app *app, bool exit_on_eof, uint64_t *eof_pkts, char *errbuf, size_t len)
{
	struct mux_ctx *ctx = &app->ctx;
	uint16_t p;

	ctx->tunnel_addr = app->cfg.tunnel_addr;
	ctx->has_tunnel6 = app->cfg.has_tunnel6;
	memcpy(ctx->tunnel_addr6, app->cfg.tunnel_addr6.a8, 16);
	memcpy(&ctx->next_hop, app->cfg.next_hop_mac, 6);
	memcpy(&ctx->next_hop6, app->cfg.next_hop_mac6, 6);
	for (p = 0; p < app->cfg.n_ports; p++) {
		ctx->port_mac[app->ports[p].id] = app->ports[p].mac;
		if (app->ports[p].id + 1 > ctx->n_ports)
			ctx->n_ports = (uint16_t)(app->ports[p].id + 1);
		if (exit_on_eof && !app->ports[p].eof_capable) {
			snprintf(errbuf, len,
				"--exit-on-eof: port %s does not read only rx_pcap files",
				app->cfg.ports[p].name);
			return -1;
		}
		*eof_pkts += app->ports[p].eof_pkts;
	}
	ctx->mtu = app->cfg.mtu;
	ctx->tunnel_ttl = app->cfg.tunnel_ttl;
	ctx->arp_for_vips = app->cfg.arp_for_vips;
	ctx->nd_for_vips = app->cfg.nd_for_vips;
	ctx->n_probers = app->cfg.n_probers;
	memcpy(ctx->probers, app->cfg.probers, sizeof(ctx->probers));
	ctx->n_probers6 = app->cfg.n_probers6;
	for (p = 0; p < app->cfg.n_probers6; p++)
		memcpy(ctx->probers6[p], app->cfg.probers6[p].a8, 16);
	ctx->busy_poll = app->cfg.busy_poll;
	ctx->idle_sleep_us = app->cfg.idle_sleep_us;
	ctx->tsc_hz = rte_get_tsc_hz();
	ctx->tsc0 = rte_rdtsc();
	ctx->n_workers = app->n_workers;
	ctx->lim_share = 0;
	return 0;
}

static int
workers_create(struct mux_app *app)
{
	const uint32_t timeout[3] = {
		app->cfg.tcp_timeout, app->cfg.tcp_fin_timeout, app->cfg.udp_timeout};
	unsigned lcore;
	uint16_t w = 0, p;

	app->workers = rte_zmalloc(
		"mux_workers", sizeof(*app->workers) * app->n_workers, RTE_CACHE_LINE_SIZE);
	if (app->workers == NULL)
		return -LB_ENOMEM;
	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		struct mux_worker *wk = &app->workers[w];

		if (w == app->n_workers)
			break;
		if (mux_worker_init(wk, &app->ctx, app->ctx.gen, w, lcore, app->cfg.conn_entries,
			    app->cfg.conn_entries6, timeout,
			    (int)rte_lcore_to_socket_id(lcore)) != 0)
			return -LB_ENOMEM;
		/* A flooded service stops getting entries at its share of the table. */
		wk->conn->quota =
			(uint32_t)((uint64_t)wk->conn->entries * app->cfg.conn_service_share / 100);
		wk->conn6->quota = (uint32_t)((uint64_t)wk->conn6->entries *
					      app->cfg.conn_service_share / 100);
		for (p = 0; p < app->cfg.n_ports; p++)
			if (w < app->ports[p].nb_rxq) {
				wk->rxq[wk->n_rxq].port = app->ports[p].id;
				wk->rxq[wk->n_rxq++].queue = w;
			}
		w++;
	}
	return w == app->n_workers ? 0 : -LB_EINVAL;
}

/*
 * The pools of outer fragmentation (mux_frag.c): headers come from the
 * daemon's pool, the references to the payload from a pool of indirect
 * mbufs of their own (no data room), sized for a burst of fragments per
 * worker and port.
 */
static int
frag_pools(struct mux_app *app, struct rte_mempool *pool, char *errbuf, size_t len)
{
	unsigned n = RTE_MAX(1024u, 2u * MUX_BURST * 8 * app->n_workers * MUX_MAX_PORTS);

	app->ctx.frag_direct = pool;
	app->ctx.frag_indirect =
		rte_pktmbuf_pool_create("mux_frag_ind", n, 64, 0, 0, (int)rte_socket_id());
	if (app->ctx.frag_indirect == NULL) {
		snprintf(errbuf, len, "the pool for outer fragments: %s", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

int
mux_app_start(struct mux_app *app, struct rte_mempool *pool, bool exit_on_eof, uint64_t *eof_pkts,
	char *errbuf, size_t len)
{
	if (gen_start(app, errbuf, len) != 0 ||
		ctx_fill(app, exit_on_eof, eof_pkts, errbuf, len) != 0 ||
		frag_pools(app, pool, errbuf, len) != 0)
		return -1;
	if (workers_create(app) != 0) {
		snprintf(errbuf, len,
			"workers: out of memory for connection tables "
			"(lower mux.conn_table.entries or raise EAL -m)");
		return -1;
	}
	if (mux_telemetry_register(app) != 0)
		LB_WARN("telemetry commands not registered");
	pthread_mutex_init(&app->gen_lock, NULL);
	app->be_freed_at = calloc(app->ctx.gen->cap_backends, sizeof(*app->be_freed_at));
	app->svc_freed_at = calloc(app->ctx.gen->cap_services, sizeof(*app->svc_freed_at));
	app->be_base = calloc(app->ctx.gen->cap_backends, sizeof(*app->be_base));
	app->svc_base = calloc(app->ctx.gen->cap_services, sizeof(*app->svc_base));
	app->lim_base = calloc(app->ctx.gen->cap_services, sizeof(*app->lim_base));
	return 0;
}
