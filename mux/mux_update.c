/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Updating the mux: replacing the running generation.
 *
 * A new flow table is compiled off the fast path, keeping the stable ids
 * of every service and backend the running one knows, then published with
 * one atomic pointer store. The old generation is freed after an RCU grace
 * period: every worker has reported quiescence (or gone offline to nap)
 * since the store, so none still reads it. Telemetry readers, which are not
 * RCU threads, take app->gen_lock; workers never do.
 *
 * A standalone mux takes the new table from its configuration file on
 * SIGHUP (mux_reload). A managed one takes it from the manager's two-phase
 * commit only: the member thread calls mux_member_ops.build at PREPARE (or
 * for a snapshot), .publish at COMMIT and .discard at ABORT, and SIGHUP
 * leaves the flow table alone. Either way only one thread ever replaces the
 * generation, so a build made against the running generation is still
 * made against it when it is published.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "dp_status.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "lb_member.h"
#include "mux_app.h"
#include "mux_conn.h"
#include "mux_credit.h"
#include "mux_gen.h"
#include "mux_route.h"
#include "mux_limit.h"
#include "mux_update.h"

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
		      a->arp_for_vips == b->arp_for_vips && a->n_probers == b->n_probers &&
		      memcmp(a->probers, b->probers, sizeof(a->probers)) == 0 &&
		      a->has_tunnel6 == b->has_tunnel6 &&
		      lb_addr_eq(&a->tunnel_addr6, &b->tunnel_addr6) &&
		      memcmp(a->next_hop_mac6, b->next_hop_mac6, 6) == 0 &&
		      a->nd_for_vips == b->nd_for_vips && a->n_probers6 == b->n_probers6 &&
		      memcmp(a->probers6, b->probers6, sizeof(a->probers6)) == 0 &&
		      a->conn_entries6 == b->conn_entries6 &&
		      a->conn_service_share == b->conn_service_share &&
		      a->cap_services == b->cap_services && a->cap_backends == b->cap_backends &&
		      strcmp(a->zone, b->zone) == 0 && a->idle_sleep_us == b->idle_sleep_us &&
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

/*
 * Sids removed less than the longest idle timeout ago, backends' then
 * services' (one buffer: cap_backends bytes, then cap_services). A
 * connection table may still pin a flow to a backend's, and handing it to
 * a new backend would send that flow there instead of re-balancing it. A
 * service's entries still count as its own (svc_live, svc_held: its
 * max_connections and quota), and a new service under its sid would
 * start with them.
 */
static uint8_t *
hold_recent(const struct mux_app *app, const struct mux_gen *old)
{
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	/* The longest an entry can outlive its last packet: a closing one's too. */
	uint64_t quarantine =
		(uint64_t)RTE_MAX(RTE_MAX(app->cfg.tcp_timeout, app->cfg.tcp_fin_timeout),
			app->cfg.udp_timeout) *
		hz;
	uint8_t *hold = calloc((size_t)old->cap_backends + old->cap_services, 1);
	uint32_t i;

	if (hold == NULL)
		return NULL;
	for (i = 0; app->be_freed_at != NULL && i < old->cap_backends; i++)
		hold[i] = app->be_freed_at[i] != 0 && now - app->be_freed_at[i] < quarantine;
	for (i = 0; app->svc_freed_at != NULL && i < old->cap_services; i++)
		hold[old->cap_backends + i] =
			app->svc_freed_at[i] != 0 && now - app->svc_freed_at[i] < quarantine;
	return hold;
}

/*
 * Remember when each backend of old that ng lacks was removed, and start
 * the counters of ids that ng gives to newcomers from where they stand.
 */
static void
note_removed(struct mux_app *app, const struct mux_gen *old, const struct mux_gen *ng)
{
	uint64_t now = rte_rdtsc();
	uint32_t i;
	int r;

	for (i = 0; i < ng->n_backends; i++) {
		uint32_t sid = ng->backends[i].sid;

		if (app->be_base != NULL && old->by_sid[sid] == MUX_GEN_NONE)
			mux_stats_flow_raw(app, 1, sid, &app->be_base[sid]);
	}
	for (i = 0; i < ng->n_services; i++) {
		struct lb_svc_key k = ng->services[i].key;
		int64_t o = mux_gen_lookup(old, &k);

		if (o >= 0 && o != MUX_GEN_VIP)
			continue;
		if (app->svc_base != NULL)
			mux_stats_flow_raw(
				app, 0, ng->services[i].sid, &app->svc_base[ng->services[i].sid]);
		for (r = 0; app->lim_base != NULL && r < LB_LIM_N; r++)
			mux_limit_sum(app->workers, app->n_workers, NULL, ng->services[i].sid, r,
				&app->lim_base[ng->services[i].sid].k[r]);
	}
	for (i = 0; app->svc_freed_at != NULL && i < old->n_services; i++) {
		struct lb_svc_key k = old->services[i].key;
		int64_t o = mux_gen_lookup(ng, &k);

		if (o < 0 || o == MUX_GEN_VIP)
			app->svc_freed_at[old->services[i].sid] = now;
	}
	for (i = 0; app->svc_freed_at != NULL && i < ng->n_services; i++)
		app->svc_freed_at[ng->services[i].sid] = 0;
	if (app->be_freed_at == NULL)
		return;
	for (i = 0; i < old->n_backends; i++) {
		uint32_t sid = old->backends[i].sid;

		if (ng->by_sid[sid] == MUX_GEN_NONE)
			app->be_freed_at[sid] = now;
		else
			app->be_freed_at[sid] = 0;
	}
}

int
mux_reload(struct mux_app *app)
{
	const struct mux_gen *old = app->ctx.gen;
	struct lb_ftable named = {0};
	struct mux_config nc;
	struct lb_cfg_err err;
	struct mux_gen *ng;
	uint8_t *hold;
	int rc;

	rc = mux_config_load(&nc, app->cfg.path, &err);
	if (rc != 0) {
		LB_ERR("reload refused: %s", err.msg);
		return rc;
	}
	warn_unreloadable(&app->cfg, &nc);
	if (app->cfg.managed) {
		if (!nc.managed)
			LB_WARN("%s: no manager group any more; restart to run standalone",
				app->cfg.path);
		LB_INFO("managed: the flow table comes from the manager");
		rc = 0;
		goto out;
	}
	if (nc.managed) {
		/* Its flow table is dropped: applying it would empty the mux. */
		LB_ERR("reload refused: %s: manager: switching to managed mode needs a restart",
			app->cfg.path);
		rc = -LB_EINVAL;
		goto out;
	}
	if (nc.ftable.seed.k0 != old->seed.k0 || nc.ftable.seed.k1 != old->seed.k1) {
		/* The connection tables are keyed by the old seed's hashes. */
		LB_ERR("reload refused: %s: flow_table.hash_seed: changing the seed needs a "
		       "restart",
			app->cfg.path);
		rc = -LB_EINVAL;
		goto out;
	}
	hold = hold_recent(app, old);
	/* The file's ids name the backends to their agents: keep them for the credits. */
	rc = hold == NULL || lb_ftable_copy(&named, &nc.ftable) != 0
		     ? -LB_ENOMEM
		     : mux_gen_assign_sids(old, &nc.ftable, hold, hold + old->cap_backends, &err);
	free(hold);
	if (rc == 0) {
		/* The running tunnels: a reload does not change them (warn_unreloadable()). */
		ng = mux_gen_build(&nc.ftable, old->version + 1, old->cap_backends,
			old->cap_services, mux_config_tunnels(&app->cfg), app->cfg.zone,
			(int)rte_socket_id(), &err);
		if (ng == NULL)
			rc = -LB_EINVAL;
	}
	if (rc == 0 &&
		mux_credit_bind(app->ctx.credit, ng, &named, old, err.msg, sizeof(err.msg)) != 0) {
		mux_gen_free(ng);
		rc = -LB_EINVAL;
	}
	lb_ftable_free(&named);
	if (rc != 0) {
		LB_ERR("reload refused: %s: %s", app->cfg.path, err.msg);
		goto out;
	}
	note_removed(app, old, ng);
	mux_gen_publish(app, ng);
	LB_INFO("reloaded flow table: version %llu, %u services, %u backends",
		(unsigned long long)ng->version, ng->n_services, ng->n_backends);
out:
	mux_config_free(&nc);
	return rc;
}

/* ---- managed mode: the member's callbacks ---- */

/* A prepared generation and the one it was built against. */
struct mux_build {
	struct mux_gen *gen;
	const struct mux_gen *base;
	uint64_t base_version;
};

static bool
seed_equal(const struct lb_hash_seed *a, const struct lb_hash_seed *b)
{
	return a->k0 == b->k0 && a->k1 == b->k1;
}

static void *
member_build(void *arg, const struct lb_ftable *next, uint64_t version, char *err, size_t len)
{
	struct mux_app *app = arg;
	const struct mux_gen *old = app->ctx.gen;
	struct lb_cfg_err cerr;
	struct lb_ftable ft;
	struct mux_build *b;
	uint8_t *hold;
	int rc;

	if (app->seed_fixed && !seed_equal(&next->seed, &old->seed)) {
		/* The connection tables are keyed by the running seed's hashes. */
		snprintf(err, len, "changing the hash seed needs a restart of the mux");
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	/* mux_gen_assign_sids() writes the ids into the table: use a copy. */
	if (b == NULL || lb_ftable_copy(&ft, next) != 0) {
		free(b);
		snprintf(err, len, "out of memory");
		return NULL;
	}
	hold = hold_recent(app, old);
	rc = hold == NULL ? -LB_ENOMEM
			  : mux_gen_assign_sids(old, &ft, hold, hold + old->cap_backends, &cerr);
	free(hold);
	if (rc == -LB_ENOMEM)
		snprintf(cerr.msg, sizeof(cerr.msg), "out of memory");
	else if (rc == -LB_EFULL)
		/* A managed mux starts empty: a restart would not grow it. */
		snprintf(cerr.msg, sizeof(cerr.msg),
			"more services or backends than this mux has room for (%u, %u)",
			old->cap_services, old->cap_backends);
	if (rc == 0) {
		b->gen = mux_gen_build(&ft, version, old->cap_backends, old->cap_services,
			mux_config_tunnels(&app->cfg), app->cfg.zone,
			(int)rte_lcore_to_socket_id(rte_get_main_lcore()), &cerr);
		if (b->gen == NULL)
			rc = -LB_EINVAL;
	}
	/* Credits are named by the manager's ids: next's, not the sids ft now holds. */
	if (rc == 0 && mux_credit_bind(app->ctx.credit, b->gen, next, old, cerr.msg,
			       sizeof(cerr.msg)) != 0) {
		mux_gen_free(b->gen);
		rc = -LB_EINVAL;
	}
	lb_ftable_free(&ft);
	if (rc != 0) {
		snprintf(err, len, "%s", cerr.msg);
		free(b);
		return NULL;
	}
	/* This mux's drain rides with the table it is in. */
	b->gen->drained = lb_ftable_drained(next, app->member_id);
	b->base = old;
	b->base_version = old->version;
	return b;
}

static void
member_publish(void *arg, void *built, uint64_t version)
{
	struct mux_app *app = arg;
	struct mux_build *b = built;
	struct mux_gen *old = app->ctx.gen, *ng = b->gen;
	uint16_t w;

	/*
	 * Stable ids were given against b->base: against any other generation
	 * they could name another backend. Only this thread publishes in
	 * managed mode, so this is a broken invariant, not a race.
	 */
	if (old != b->base || old->version != b->base_version || ng->version != version) {
		LB_ERR("managed: version %llu was built on version %llu, but version %llu "
		       "runs: not published",
			(unsigned long long)version, (unsigned long long)b->base_version,
			(unsigned long long)old->version);
		mux_gen_free(ng);
		free(b);
		return;
	}
	if (!seed_equal(&ng->seed, &old->seed)) {
		/*
		 * Allowed by build only before any service ran, so no table
		 * holds an entry yet; the store is ordered before the
		 * generation's release below, which workers load with acquire.
		 */
		for (w = 0; w < app->n_workers; w++)
			app->workers[w].conn->seed = ng->seed;
	}
	if (ng->n_services != 0)
		app->seed_fixed = true;
	note_removed(app, old, ng);
	mux_gen_publish(app, ng);
	LB_INFO("managed: applied flow table version %llu: %u services, %u backends",
		(unsigned long long)version, ng->n_services, ng->n_backends);
	free(b);
}

static void
member_discard(void *arg, void *built)
{
	struct mux_build *b = built;

	RTE_SET_USED(arg);
	if (b == NULL)
		return;
	mux_gen_free(b->gen);
	free(b);
}

/* STATUS: the list's counters with a place there, and two computed now. */
static uint32_t
member_counters(void *arg, struct lb_counter *out, uint32_t max)
{
	const struct mux_app *app = arg;
	struct dp_status st = {0};
	struct mux_counters t;
	uint32_t n;

	mux_stats_total(app, &t);
#define S(name, show, status, ...) dp_status_set(&st, status, #name, t.name);
	MUX_COUNTERS(S)
#undef S
	dp_status_set(&st, MUX_STATUS_DROPS, "drops", dp_drops_total(t.drops));
	dp_status_set(&st, MUX_STATUS_CONN_LIVE, "conn_live", mux_stats_conns(app));
	n = dp_status_put(&st, out, max);
	return n + mux_limit_status(app->workers, app->n_workers, app->lim_base, app->ctx.gen,
			   out + n, max - n);
}

/*
 * SHARES: this mux's place among the muxes that share the VIPs' limits.
 * One word, stored by this thread alone; workers compare it at their next
 * checked connection and compute their shares again.
 */
static void
member_shares(void *arg, uint32_t divisor, uint32_t index)
{
	struct mux_app *app = arg;

	__atomic_store_n(&app->ctx.lim_share, (uint64_t)divisor << 32 | index, __ATOMIC_RELAXED);
	LB_INFO("managed: admission limits shared by %u muxes, this one %u", divisor, index);
}

/* STATUS: the routes, with a bgp group. */
static bool
member_route(void *arg, struct lb_route_state *out)
{
	struct mux_app *app = arg;

	return mux_route_status(app->route, out);
}

/* The manager's word on announcing: to the route side's decision. */
static void
member_sync(void *arg, bool in_sync, uint64_t version, const char *why)
{
	struct mux_app *app = arg;

	mux_route_sync(app->route, in_sync, version, why);
}

/*
 * STATUS: each service, then its backends, as flow counts (the sums
 * sluicectl stats shows and the shares the manager's metrics divide), a
 * window from `first` of them. Runs on the member's thread, the only one
 * that replaces the generation in managed mode: no lock needed to read it.
 */
static uint32_t
member_flows(void *arg, struct lb_flow_count *out, uint32_t max, uint32_t first, uint32_t *total)
{
	const struct mux_app *app = arg;
	const struct mux_gen *g = app->ctx.gen;
	struct mux_flow_counters fc;
	uint32_t s, i, at = 0, n = 0;

	*total = g->n_services + g->n_backends;
	if (*total == 0)
		return 0;
	first %= *total;
	for (s = 0; s < g->n_services && n < max; s++) {
		const struct mux_service *sv = &g->services[s];

		for (i = 0; i <= sv->n_backends && n < max; i++, at++) {
			const struct mux_backend *be =
				i == 0 ? NULL : &g->backends[sv->first_backend + i - 1];
			struct lb_flow_count *f = &out[n];

			if (at < first)
				continue;
			memset(f, 0, sizeof(*f));
			f->vip = sv->key.vip;
			f->af = sv->key.af;
			f->port = lb_be16_to_cpu(sv->key.port);
			f->proto = sv->key.proto;
			if (be != NULL && f->af == LB_AF_INET6) {
				lb_addr_v6(&f->dip, g->addr6[sv->first_backend + i - 1].dip);
				f->dip_port = lb_be16_to_cpu(be->port);
			} else if (be != NULL) {
				lb_addr_v4(&f->dip, be->dip);
				f->dip_port = lb_be16_to_cpu(be->port);
			}
			mux_stats_flow(app, be != NULL, be != NULL ? be->sid : sv->sid, &fc);
			f->pkts = fc.pkts;
			f->bytes = fc.bytes;
			f->new_conns = fc.new_conns;
			n++;
		}
	}
	return n;
}

const struct lb_member_ops mux_member_ops = {
	.build = member_build,
	.publish = member_publish,
	.discard = member_discard,
	.counters = member_counters,
	.route = member_route,
	.sync = member_sync,
	.shares = member_shares,
	.flows = member_flows,
};
