/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commit driver's tables: desired (and its pool options), the
 * effective table health makes of it, and what became of every accepted
 * change (the versions promised, the changes rejected, the versions that
 * carried them: what WAIT answers).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_log.h"
#include "mgr_driver_int.h"

/* The round's desired table and pools become the committed version's base. */
void
mgr_driver_base_from_round(struct mgr_driver *d, struct mgr_round *r)
{
	lb_ftable_free(&d->base_desired);
	mgr_pools_free(&d->base_pools);
	d->base_desired = r->r_desired;
	d->base_pools = r->r_pools;
	memset(&r->r_desired, 0, sizeof(r->r_desired));
	memset(&r->r_pools, 0, sizeof(r->r_pools));
}

void
mgr_driver_health(struct mgr_driver *d, uint64_t now)
{
	d->eff_dirty = true;
	/* Anchored at the first: a stream of health news cannot postpone it. */
	if (d->batch_deadline_ms == 0)
		d->batch_deadline_ms = now + d->cfg->mc_health_batch_ms;
}

void
mgr_driver_refresh(struct mgr_driver *d, uint64_t now)
{
	struct lb_ftable t = {0};
	uint64_t next;

	if (!d->eff_dirty)
		return;
	if (mgr_health_effective(d->health, &d->desired, now, &t, &next) != 0) {
		LB_ERR("out of memory for the effective table: it stays as it was");
		return;
	}
	lb_ftable_free(&d->effective);
	d->effective = t;
	lb_ftable_digest(&d->effective, d->effective_digest);
	d->eff_timer_ms = next;
	d->eff_dirty = false;
}

/* The desired table changed: health follows it, and the effective table. */
void
mgr_driver_desired_changed(struct mgr_driver *d, uint64_t now)
{
	if (mgr_health_sync(d->health, &d->desired, &d->pools, &d->committed, false, now) != 0)
		LB_ERR("out of memory: probes do not follow the desired table yet");
	d->eff_dirty = true;
	mgr_driver_refresh(d, now);
}

void
mgr_driver_commit_rec(struct mgr_driver *d, uint64_t version, uint64_t seq)
{
	struct mgr_commit_rec *cr = &d->commits[d->n_commits++ % MGR_COMMITS];

	cr->cr_version = version;
	cr->cr_seq = seq;
}

/*
 * Throw away every change no version carries: desired goes back to the
 * committed table and whoever waits for them hears `reason`.
 */
void
mgr_driver_reject_pending(struct mgr_driver *d, uint64_t version, const char *reason, uint64_t now)
{
	struct mgr_rejection *rj = &d->rejections[d->n_rejections++ % MGR_REJECTIONS];
	struct lb_ftable back;
	struct mgr_pools back_pools;

	rj->rj_lo = d->committed_seq + 1;
	rj->rj_hi = d->accepted_seq;
	rj->rj_version = version;
	snprintf(rj->rj_reason, sizeof(rj->rj_reason), "%s", reason);
	d->committed_seq = d->accepted_seq;
	d->batch_deadline_ms = 0;
	/* Health-made tables can be voted down too: do not retry at once, forever. */
	d->reject_backoff_ms = d->reject_backoff_ms == 0 ? MGR_REJECT_RETRY_MS
			       : d->reject_backoff_ms * 2 > MGR_REJECT_RETRY_MAX_MS
				       ? MGR_REJECT_RETRY_MAX_MS
				       : d->reject_backoff_ms * 2;
	d->reject_retry_ms = now + d->reject_backoff_ms;
	if (lb_ftable_copy(&back, &d->base_desired) != 0 ||
		mgr_pools_copy(&back_pools, &d->base_pools) != 0) {
		lb_ftable_free(&back);
		LB_ERR("pending changes rejected (%s) but out of memory to restore the desired "
		       "table",
			reason);
		return;
	}
	/* The ids the rejected changes took stay taken: ids are never reused. */
	if (mgr_store_save_desired(d->store, &back, &back_pools, &d->meta) != 0)
		LB_ERR("%s (the desired table reverts to version %" PRIu64 " in memory only)",
			mgr_store_error(d->store), d->commit->committed);
	lb_ftable_free(&d->desired);
	mgr_pools_free(&d->pools);
	d->desired = back;
	d->pools = back_pools;
	lb_ftable_digest(&d->desired, d->desired_digest);
	mgr_driver_desired_changed(d, now);
	LB_WARN("pending changes rejected, desired table back at version %" PRIu64 ": %s",
		d->commit->committed, reason);
}

bool
mgr_driver_pending(const struct mgr_driver *d)
{
	if (d->round.r_active)
		return !mgr_same_digest(d->effective_digest, d->round.r_digest);
	return !mgr_same_digest(d->effective_digest, d->committed_digest);
}

uint64_t
mgr_driver_target_version(const struct mgr_driver *d)
{
	uint64_t c = d->commit->committed;

	if (!mgr_driver_pending(d))
		return d->round.r_active ? d->round.r_version : c;
	return c + (d->round.r_active ? 2 : 1);
}

/* *t and *ps become copies of desired and its pools (kept as they were if out of memory). */
static void
carry_desired(struct mgr_driver *d, struct lb_ftable *t, struct mgr_pools *ps)
{
	struct lb_ftable nt;
	struct mgr_pools np;

	if (lb_ftable_copy(&nt, &d->desired) != 0)
		goto nomem;
	if (mgr_pools_copy(&np, &d->pools) != 0) {
		lb_ftable_free(&nt);
		goto nomem;
	}
	lb_ftable_free(t);
	mgr_pools_free(ps);
	*t = nt;
	*ps = np;
	return;
nomem:
	LB_ERR("out of memory: a rejected round would revert to an older desired table");
}

/* Add who asked (NULL or "": nobody) to the askers of the next round, once. */
static void
note_asker(struct mgr_driver *d, const char *asker)
{
	size_t n = strlen(d->askers);

	if (asker == NULL || asker[0] == '\0' || strstr(d->askers, asker) != NULL)
		return;
	snprintf(d->askers + n, sizeof(d->askers) - n, "%s%s", n ? ", " : "", asker);
}

/* The changes accepted so far are told they commit as version. */
static void
promise(struct mgr_driver *d, uint64_t version)
{
	struct mgr_promise *p = &d->promises[d->n_promises++ % MGR_PROMISES];

	p->p_version = version;
	p->p_seq = d->accepted_seq;
}

int
mgr_driver_set_desired(struct mgr_driver *d, struct lb_ftable *next, struct mgr_pools *pools,
	const struct mgr_meta *meta, const char *asker, uint64_t *version, char *err, size_t len,
	uint64_t now)
{
	char e[LB_MSG_TEXT];

	lb_ftable_sort(next);
	mgr_pools_prune(pools, next);
	if (lb_ftable_validate(next, e, sizeof(e)) != 0) {
		snprintf(err, len, "%s", e);
		lb_ftable_free(next);
		mgr_pools_free(pools);
		return -LB_EINVAL;
	}
	/* Durable before the operator hears "accepted". */
	if (mgr_store_save_desired(d->store, next, pools, meta) != 0) {
		snprintf(err, len, "%s", mgr_store_error(d->store));
		snprintf(d->store_err, sizeof(d->store_err), "%s", mgr_store_error(d->store));
		LB_ERR("change refused: %s", mgr_store_error(d->store));
		lb_ftable_free(next);
		mgr_pools_free(pools);
		return -LB_EIO;
	}
	lb_ftable_free(&d->desired);
	mgr_pools_free(&d->pools);
	d->desired = *next;
	d->pools = *pools;
	memset(next, 0, sizeof(*next));
	memset(pools, 0, sizeof(*pools));
	d->meta = *meta;
	lb_ftable_digest(&d->desired, d->desired_digest);
	mgr_driver_desired_changed(d, now);
	d->accepted_seq++;
	note_asker(d, asker);
	if (!mgr_driver_pending(d)) {
		/*
		 * Back to what is committed or already on its way, or a change
		 * members do not see (a pool's interval): it is what that version
		 * carries now, and what a later rejection goes back to.
		 */
		if (d->round.r_active) {
			d->round.r_seq = d->accepted_seq;
			carry_desired(d, &d->round.r_desired, &d->round.r_pools);
		} else {
			d->committed_seq = d->accepted_seq;
			mgr_driver_commit_rec(d, d->commit->committed, d->accepted_seq);
			carry_desired(d, &d->base_desired, &d->base_pools);
		}
	} else if (d->batch_deadline_ms == 0 || d->batch_deadline_ms > now + d->cfg->mc_batch_ms) {
		/* An operator's change waits batch_ms at most, health news or not. */
		d->batch_deadline_ms = now + d->cfg->mc_batch_ms;
	}
	*version = mgr_driver_target_version(d);
	promise(d, *version);
	return 0;
}

/* Does the round in flight carry the desired table as it stands (and its pools)? */
static bool
round_holds_desired(const struct mgr_driver *d)
{
	uint8_t dg[LB_DIGEST_LEN];

	if (!d->round.r_active)
		return false;
	lb_ftable_digest(&d->round.r_desired, dg);
	return mgr_same_digest(dg, d->desired_digest) &&
	       mgr_pools_equal(&d->round.r_pools, &d->pools);
}

uint64_t
mgr_driver_promise_unchanged(struct mgr_driver *d)
{
	uint64_t v = mgr_driver_target_version(d);

	/*
	 * Changes this run accepted wait: the table asked for is theirs, and
	 * commits with them (even as a version health's news takes: committed
	 * + 2 behind a round in flight).
	 */
	if (d->accepted_seq > d->committed_seq) {
		if (v > d->commit->committed)
			promise(d, v);
		return v;
	}
	/*
	 * None waits (they were committed, or thrown away by a "no", or came
	 * before a restart, which keeps no count of them): the version answers
	 * alone, as it always did; the round in flight's, if it carries the
	 * table, rather than one health may take after it.
	 */
	return round_holds_desired(d) ? d->round.r_version : v;
}

enum mgr_wait_state
mgr_driver_wait(
	const struct mgr_driver *d, uint64_t version, uint64_t *committed_as, const char **reason)
{
	const struct mgr_promise *p = NULL;
	uint32_t k, n = d->n_promises < MGR_PROMISES ? d->n_promises : MGR_PROMISES;

	*committed_as = 0;
	*reason = NULL;
	/* The newest change told `version`. */
	for (k = 0; k < n; k++) {
		const struct mgr_promise *q = &d->promises[(d->n_promises - 1 - k) % MGR_PROMISES];

		if (q->p_version == version) {
			p = q;
			break;
		}
	}
	if (p != NULL) {
		n = d->n_rejections < MGR_REJECTIONS ? d->n_rejections : MGR_REJECTIONS;
		for (k = 0; k < n; k++) {
			const struct mgr_rejection *rj = &d->rejections[k];

			if (p->p_seq >= rj->rj_lo && p->p_seq <= rj->rj_hi) {
				*reason = rj->rj_reason;
				return MGR_WAIT_ABORTED;
			}
		}
		if (p->p_seq <= d->committed_seq) {
			n = d->n_commits < MGR_COMMITS ? d->n_commits : MGR_COMMITS;
			*committed_as = version;
			/* The oldest commit that carried it. */
			for (k = n; k > 0; k--) {
				const struct mgr_commit_rec *cr =
					&d->commits[(d->n_commits - k) % MGR_COMMITS];

				if (cr->cr_seq >= p->p_seq) {
					*committed_as = cr->cr_version;
					break;
				}
			}
			return MGR_WAIT_COMMITTED;
		}
		if (d->store_err[0] != '\0')
			*reason = d->store_err;
		return MGR_WAIT_PENDING;
	}
	if (version <= d->commit->committed) {
		*committed_as = version;
		return MGR_WAIT_COMMITTED;
	}
	if ((d->round.r_active && version == d->round.r_version) ||
		(version == d->commit->committed + 1 && mgr_driver_pending(d))) {
		if (d->store_err[0] != '\0')
			*reason = d->store_err;
		return MGR_WAIT_PENDING;
	}
	return MGR_WAIT_UNKNOWN;
}
