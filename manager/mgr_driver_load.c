/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commit driver's start: the seed and the id counters, the committed
 * version and its table, the desired table (the services file replaces
 * it), health as the members' table says backends were, and the round a
 * crash left undecided or unannounced.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lb_config.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "lb_maglev.h"
#include "mgr_driver_int.h"
#include "mgr_services.h"
#include "mgr_text.h"

static void
max_ids(const struct lb_ftable *t, struct mgr_meta *meta)
{
	uint32_t i, j;

	/* Counters stay above every id in use, whatever the database said. */
	for (i = 0; i < t->n_services; i++) {
		const struct lb_service_cfg *s = &t->services[i];

		if (s->id >= meta->mm_next_service_id)
			meta->mm_next_service_id = s->id + 1;
		for (j = 0; j < s->n_backends; j++)
			if (s->backends[j].id >= meta->mm_next_backend_id)
				meta->mm_next_backend_id = s->backends[j].id + 1;
	}
}

/* The seed: the configuration's, else the database's, else a new random one. */
static int
load_meta(struct mgr_driver *d)
{
	struct mgr_meta *meta = &d->meta;
	bool changed = false;

	if (mgr_store_load_meta(d->store, meta) != 0) {
		LB_ERR("%s", mgr_store_error(d->store));
		return -1;
	}
	if (d->cfg->mc_has_seed && (!meta->mm_has_seed || meta->mm_seed.k0 != d->cfg->mc_seed.k0 ||
					   meta->mm_seed.k1 != d->cfg->mc_seed.k1)) {
		if (meta->mm_has_seed)
			LB_WARN("hash_seed: the configuration's replaces the database's; the next "
				"version carries it");
		meta->mm_seed = d->cfg->mc_seed;
		meta->mm_has_seed = true;
		changed = true;
	}
	if (!meta->mm_has_seed) {
		if (getrandom(&meta->mm_seed, sizeof(meta->mm_seed), 0) != sizeof(meta->mm_seed)) {
			LB_ERR("getrandom: %s", strerror(errno));
			return -1;
		}
		meta->mm_has_seed = true;
		changed = true;
		LB_INFO("hash seed generated and kept in the database");
	}
	if (d->cfg->mc_has_maglev_size && meta->mm_maglev_size != d->cfg->mc_maglev_size) {
		meta->mm_maglev_size = d->cfg->mc_maglev_size;
		changed = true;
	}
	if (meta->mm_maglev_size == 0) {
		meta->mm_maglev_size = LB_MAGLEV_DEFAULT_SIZE;
		changed = true;
	}
	if (changed && mgr_store_save_meta(d->store, meta) != 0) {
		LB_ERR("%s", mgr_store_error(d->store));
		return -1;
	}
	return 0;
}

/* services_file: the desired table (and its pools) at every start. */
static int
load_services_file(struct mgr_driver *d, struct lb_ftable *out, struct mgr_pools *pools)
{
	struct lb_cfg_err e;
	char err[LB_CFG_ERR_LEN];
	config_t c;
	int rc;

	if (lb_cfg_read_file(&c, d->cfg->mc_services_file, &e) != 0) {
		LB_ERR("%s", e.msg);
		return -1;
	}
	rc = mgr_services_load(
		&d->desired, &c, d->cfg->mc_services_file, &d->meta, out, pools, err, sizeof(err));
	config_destroy(&c);
	if (rc != 0) {
		LB_ERR("%s", err);
		return -1;
	}
	if (d->cfg->mc_has_seed &&
		(out->seed.k0 != d->cfg->mc_seed.k0 || out->seed.k1 != d->cfg->mc_seed.k1)) {
		LB_ERR("%s: flow_table.hash_seed differs from manager.hash_seed in %s: set one",
			d->cfg->mc_services_file, d->cfg->mc_path);
		lb_ftable_free(out);
		mgr_pools_free(pools);
		return -1;
	}
	return 0;
}

static int
load_tables(struct mgr_driver *d, uint64_t now)
{
	uint8_t stored[LB_DIGEST_LEN];
	char hex[MGR_HEX_DIGEST], hex2[MGR_HEX_DIGEST];
	uint64_t version;
	bool found, changed = false;

	if (mgr_store_load_committed(d->store, &version, stored, &d->committed) != 0) {
		LB_ERR("%s", mgr_store_error(d->store));
		return -1;
	}
	if (version == 0) {
		/* Nothing committed yet: version 0 is the empty table with our options. */
		d->committed.seed = d->meta.mm_seed;
		d->committed.maglev_size = d->meta.mm_maglev_size;
	}
	lb_ftable_sort(&d->committed);
	lb_ftable_digest(&d->committed, d->committed_digest);
	d->committed_version = version;
	if (version != 0 && memcmp(stored, d->committed_digest, LB_DIGEST_LEN) != 0)
		LB_WARN("version %" PRIu64 ": stored digest %s, table digest %s: using the table's",
			version, mgr_digest_hex(stored, hex),
			mgr_digest_hex(d->committed_digest, hex2));
	max_ids(&d->committed, &d->meta);
	mgr_commit_init(d->commit, version, d->committed_digest, d->cfg->mc_vote_timeout_ms);

	if (mgr_store_load_desired(d->store, &found, &d->desired) != 0 ||
		mgr_store_load_pools(d->store, &d->pools) != 0) {
		LB_ERR("%s", mgr_store_error(d->store));
		return -1;
	}
	if (!found) {
		if (lb_ftable_copy(&d->desired, &d->committed) != 0)
			return -1;
		changed = true;
	}
	lb_ftable_sort(&d->desired);
	max_ids(&d->desired, &d->meta);
	/* The configuration's options apply to what comes next. */
	if (d->desired.seed.k0 != d->meta.mm_seed.k0 || d->desired.seed.k1 != d->meta.mm_seed.k1 ||
		d->desired.maglev_size != d->meta.mm_maglev_size) {
		d->desired.seed = d->meta.mm_seed;
		d->desired.maglev_size = d->meta.mm_maglev_size;
		changed = true;
	}
	if (d->cfg->mc_services_file[0] != '\0') {
		struct lb_ftable ft;
		struct mgr_pools ps;

		if (load_services_file(d, &ft, &ps) != 0)
			return -1;
		/* Drains are about muxes, not services: a services file keeps them. */
		if (lb_ftable_copy_drained(&ft, &d->desired) != 0) {
			lb_ftable_free(&ft);
			mgr_pools_free(&ps);
			LB_ERR("out of memory");
			return -1;
		}
		lb_ftable_sort(&ft);
		lb_ftable_free(&d->desired);
		mgr_pools_free(&d->pools);
		d->desired = ft;
		d->pools = ps;
		changed = true;
	}
	mgr_pools_prune(&d->pools, &d->desired);
	lb_ftable_digest(&d->desired, d->desired_digest);
	if (changed && mgr_store_save_desired(d->store, &d->desired, &d->pools, &d->meta) != 0) {
		LB_ERR("%s", mgr_store_error(d->store));
		return -1;
	}
	/* What members run says how backends were: no flapping because we restarted. */
	if (lb_ftable_copy(&d->base_desired, &d->desired) != 0 ||
		mgr_pools_copy(&d->base_pools, &d->pools) != 0 ||
		mgr_health_sync(d->health, &d->desired, &d->pools, &d->committed, true, now) != 0) {
		LB_ERR("out of memory");
		return -1;
	}
	d->eff_dirty = true;
	mgr_driver_refresh(d, now);
	LB_INFO("committed version %" PRIu64 " (digest %s): %u services, %u backends%s", version,
		mgr_digest_hex(d->committed_digest, hex), d->committed.n_services,
		lb_ftable_backend_count(&d->committed),
		memcmp(d->effective_digest, d->committed_digest, LB_DIGEST_LEN) != 0
			? "; the effective table differs: a round follows the grace period"
			: "");
	return 0;
}

/* A round the last run left undecided or unannounced. */
static int
plan_recovery(struct mgr_driver *d)
{
	struct mgr_round_rec r;
	uint64_t committed = d->commit->committed;

	if (mgr_store_last_round(d->store, &r) != 0) {
		LB_ERR("%s", mgr_store_error(d->store));
		return -1;
	}
	if (r.mr_id == 0)
		return 0;
	if (r.mr_state == MGR_ROUND_PREPARED) {
		/* No commit record: nobody may have committed it. ABORT it. */
		if (mgr_store_round_abort(d->store, 0, "manager restarted") != 0)
			LB_ERR("%s", mgr_store_error(d->store));
		if (r.mr_version != committed + 1)
			return 0;
		d->rec_pending = true;
		d->rec_decided = false;
	} else if (r.mr_state == MGR_ROUND_COMMITTED && r.mr_version == committed) {
		/* Committed, maybe before every COMMIT was out: say it again. */
		d->rec_pending = true;
		d->rec_decided = true;
	} else {
		return 0;
	}
	d->rec_version = r.mr_version;
	memcpy(d->rec_digest, r.mr_digest, LB_DIGEST_LEN);
	LB_INFO("the last round, version %" PRIu64 ", was %s: %s after the grace period",
		r.mr_version, d->rec_decided ? "committed" : "left undecided",
		d->rec_decided ? "COMMIT goes out again" : "ABORT goes out");
	return 0;
}
int
mgr_driver_load(struct mgr_driver *d, uint64_t now)
{
	if (load_meta(d) != 0 || load_tables(d, now) != 0 || plan_recovery(d) != 0)
		return -1;
	return 0;
}
