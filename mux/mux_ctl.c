/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control side of the mux: replacing the running generation.
 *
 * A new flow table is compiled off the fast path, keeping the stable ids
 * of every service and backend the running one knows, then published with
 * one atomic pointer store. The old generation is freed after an RCU grace
 * period: every worker has reported quiescence (or gone offline to nap)
 * since the store, so none still reads it. Telemetry readers, which are not
 * RCU threads, take app->gen_lock; workers never do.
 *
 * Today the new table comes from the configuration file on SIGHUP; the
 * manager's COMMIT will come through the same mux_gen_publish().
 */
#include <string.h>

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "lb_err.h"
#include "lb_log.h"
#include "mux_app.h"
#include "mux_gen.h"

void
mux_gen_publish(struct mux_app *app, struct mux_gen *ng)
{
	struct mux_gen *old;

	pthread_mutex_lock(&app->gen_lock);
	old = app->ctx.gen;
	__atomic_store_n(&app->ctx.gen, ng, __ATOMIC_RELEASE);
	/* Workers that started a loop with the old pointer finish it first. */
	rte_rcu_qsbr_synchronize(app->ctx.qsv, RTE_QSBR_THRID_INVALID);
	mux_gen_free(old);
	pthread_mutex_unlock(&app->gen_lock);
}

/* Settings a reload cannot change: say so rather than half-apply them. */
static void
warn_unreloadable(const struct mux_config *a, const struct mux_config *b)
{
	int i, same = a->file_n_ports == b->n_ports && a->file_workers == b->workers &&
		      a->file_busy_poll == b->busy_poll && a->tunnel_addr == b->tunnel_addr &&
		      a->mtu == b->mtu && a->tunnel_ttl == b->tunnel_ttl &&
		      a->arp_for_vips == b->arp_for_vips && a->idle_sleep_us == b->idle_sleep_us &&
		      a->rx_desc == b->rx_desc && a->tx_desc == b->tx_desc &&
		      memcmp(a->next_hop_mac, b->next_hop_mac, 6) == 0 &&
		      a->conn_entries == b->conn_entries && a->tcp_timeout == b->tcp_timeout &&
		      a->tcp_fin_timeout == b->tcp_fin_timeout &&
		      a->udp_timeout == b->udp_timeout && a->n_eal_args == b->n_eal_args;

	for (i = 0; same && i < a->n_eal_args; i++)
		same = strcmp(a->eal_args[i], b->eal_args[i]) == 0;
	/* With --pcap the running port is not the file's: nothing to compare. */
	for (i = 0; same && i < b->n_ports && a->file_n_ports == a->n_ports; i++)
		same = strcmp(a->ports[i].devargs, b->ports[i].devargs) == 0 &&
		       strcmp(a->ports[i].name, b->ports[i].name) == 0;
	if (!same)
		LB_WARN("reload applies the flow table only; restart to apply the other changes");
}

int
mux_reload(struct mux_app *app)
{
	const struct mux_gen *old = app->ctx.gen;
	struct mux_config nc;
	struct lb_cfg_err err;
	struct mux_gen *ng;
	int rc;

	rc = mux_config_load(&nc, app->cfg.path, &err);
	if (rc != 0) {
		LB_ERR("reload refused: %s", err.msg);
		return rc;
	}
	warn_unreloadable(&app->cfg, &nc);
	if (nc.ftable.seed.k0 != old->seed.k0 || nc.ftable.seed.k1 != old->seed.k1) {
		/* The connection tables are keyed by the old seed's hashes. */
		LB_ERR("reload refused: %s: flow_table.hash_seed: changing the seed needs a "
		       "restart",
			app->cfg.path);
		rc = -LB_EINVAL;
		goto out;
	}
	rc = mux_gen_assign_sids(old, &nc.ftable, &err);
	if (rc == 0) {
		ng = mux_gen_build(&nc.ftable, old->version + 1, old->cap_backends,
			old->cap_services, (int)rte_socket_id(), &err);
		if (ng == NULL)
			rc = -LB_EINVAL;
	}
	if (rc != 0) {
		LB_ERR("reload refused: %s: %s", app->cfg.path, err.msg);
		goto out;
	}
	mux_gen_publish(app, ng);
	LB_INFO("reloaded flow table: version %llu, %u services, %u backends",
		(unsigned long long)ng->version, ng->n_services, ng->n_backends);
out:
	mux_config_free(&nc);
	return rc;
}
