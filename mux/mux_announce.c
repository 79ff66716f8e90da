/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mux_announce.h"

static const char *const reason_names[] = {
#define MUX_ANN_NAME(name, text) #name,
	MUX_ANN_REASONS(MUX_ANN_NAME)
#undef MUX_ANN_NAME
};

static const char *const reason_texts[] = {
#define MUX_ANN_TXT(name, text) text,
	MUX_ANN_REASONS(MUX_ANN_TXT)
#undef MUX_ANN_TXT
};

const char *
mux_ann_reason_name(enum mux_ann_reason r)
{
	return (unsigned)r < MUX_ANN_REASON_MAX ? reason_names[r] : "UNKNOWN";
}

const char *
mux_ann_reason_text(enum mux_ann_reason r)
{
	return (unsigned)r < MUX_ANN_REASON_MAX ? reason_texts[r] : "unknown";
}

void
mux_announce_init(struct mux_announce *a, const struct mux_ann_cfg *cfg, uint64_t now_ms)
{
	memset(a, 0, sizeof(*a));
	a->cfg = *cfg;
	a->slow_worker = -1;
	a->down_port = -1;
	a->in_sync = true;
	a->reason = MUX_ANN_STARTING;
	snprintf(a->why, sizeof(a->why), "%s", mux_ann_reason_text(MUX_ANN_STARTING));
	a->reason_since_ms = now_ms;
}

static int
cmp_u32(const void *x, const void *y)
{
	uint32_t a = ntohl(*(const uint32_t *)x), b = ntohl(*(const uint32_t *)y);

	return a < b ? -1 : a > b;
}

static struct mux_ann_vip *
find(struct mux_announce *a, uint32_t vip)
{
	uint32_t lo = 0, hi = a->n_vips, h = ntohl(vip);

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2, m = ntohl(a->vips[mid].vip);

		if (m == h)
			return &a->vips[mid];
		if (m < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
mux_announce_table(struct mux_announce *a, uint64_t version, uint32_t n_services,
	const uint32_t *vips, uint32_t n_vips, uint64_t now_ms)
{
	uint32_t *sorted = malloc(sizeof(*sorted) * (n_vips ? n_vips : 1));
	struct mux_ann_vip *old = malloc(sizeof(*old) * (a->n_vips ? a->n_vips : 1));
	uint32_t i, j, n = 0, n_old = a->n_vips, kept = 0, was = 0;

	a->version = version;
	a->n_services = n_services;
	if (sorted == NULL || old == NULL) {
		/* Fail closed: with no VIP list nothing is announced. */
		for (i = 0; i < a->n_vips; i++)
			a->dirty |= a->vips[i].announce;
		a->n_vips = 0;
		free(sorted);
		free(old);
		return;
	}
	if (n_vips != 0) /* vips may be NULL then */
		memcpy(sorted, vips, sizeof(*sorted) * n_vips);
	qsort(sorted, n_vips, sizeof(*sorted), cmp_u32);
	memcpy(old, a->vips, sizeof(*old) * n_old);
	a->n_dropped = 0;
	for (i = 0, j = 0; i < n_vips; i++) {
		struct mux_ann_vip *v;

		if (i > 0 && sorted[i] == sorted[i - 1])
			continue;
		if (n == MUX_ANN_MAX_VIPS) {
			a->n_dropped++;
			continue;
		}
		v = &a->vips[n++];
		while (j < n_old && ntohl(old[j].vip) < ntohl(sorted[i]))
			j++;
		if (j < n_old && old[j].vip == sorted[i]) {
			*v = old[j];
			kept += old[j].announce;
			continue;
		}
		memset(v, 0, sizeof(*v));
		v->vip = sorted[i];
		v->reason = MUX_ANN_REASON_MAX; /* judged by the next eval */
		v->since_ms = now_ms;
	}
	a->n_vips = n;
	for (i = 0; i < n_old; i++)
		was += old[i].announce;
	if (kept != was) /* an announced VIP left the table */
		a->dirty = true;
	free(sorted);
	free(old);
}

void
mux_announce_workers(
	struct mux_announce *a, bool started, int slow_worker, uint64_t slow_progress_ms)
{
	a->workers_started = started;
	a->slow_worker = slow_worker;
	a->slow_progress_ms = slow_progress_ms;
}

void
mux_announce_port(struct mux_announce *a, int down_port, const char *name)
{
	a->down_port = down_port;
	snprintf(a->down_port_name, sizeof(a->down_port_name), "%s", name ? name : "?");
}

void
mux_announce_shutdown(struct mux_announce *a)
{
	a->shutdown = true;
}

void
mux_announce_drain(struct mux_announce *a, bool drained)
{
	a->drained = drained;
}

void
mux_announce_sync(struct mux_announce *a, bool in_sync, uint64_t version, const char *why)
{
	a->sync_known = true;
	a->in_sync = in_sync;
	a->sync_version = version;
	snprintf(a->sync_why, sizeof(a->sync_why), "%s", why ? why : "");
}

void
mux_announce_lkg(struct mux_announce *a, bool active, bool ok, const char *why, uint64_t now_ms)
{
	if (!active && a->lkg_active && a->lkg_ok && !a->sync_known)
		a->word_until_ms = now_ms + MUX_ANN_WORD_MS;
	else if (active)
		a->word_until_ms = 0;
	a->lkg_active = active;
	a->lkg_ok = active && ok;
	/*
	 * Withdrawn for its last known good table (too old, or behind): the
	 * last leader's in-sync word no longer holds. After a reconnect the
	 * new leader's word decides, not the old one until it comes.
	 */
	if (active && !ok)
		a->sync_known = false;
	snprintf(a->lkg_why, sizeof(a->lkg_why), "%s", active && why ? why : "");
}

int
mux_announce_vip_hold(struct mux_announce *a, uint32_t vip, bool held, const char *why)
{
	struct mux_ann_vip *v = find(a, vip);

	if (v == NULL)
		return -1;
	v->held = held;
	snprintf(v->held_why, sizeof(v->held_why), "%s", held && why ? why : "");
	return 0;
}

/* The mux-wide verdict, first match wins (see the header). */
static enum mux_ann_reason
mux_wide(const struct mux_announce *a, uint64_t now_ms, char *why, size_t len)
{
	enum mux_ann_reason r = MUX_ANN_NONE;

	if (a->shutdown)
		r = MUX_ANN_SHUTDOWN;
	else if (a->drained)
		r = MUX_ANN_DRAINED;
	else if (!a->workers_started)
		r = MUX_ANN_STARTING;
	else if (a->slow_worker >= 0 && now_ms >= a->slow_progress_ms &&
		 now_ms - a->slow_progress_ms >= a->cfg.stall_ms) {
		snprintf(why, len, "worker %d: no progress for more than %llu ms", a->slow_worker,
			(unsigned long long)a->cfg.stall_ms);
		return MUX_ANN_STALLED;
	} else if (a->down_port >= 0) {
		snprintf(why, len, "port %s: link down", a->down_port_name);
		return MUX_ANN_PORT_DOWN;
	} else if (a->cfg.managed && a->version == 0) {
		snprintf(why, len, "no flow table from the manager yet (version 0)");
		return MUX_ANN_NO_TABLE;
	} else if (a->n_services == 0) {
		snprintf(why, len, "the flow table (version %llu) has no services",
			(unsigned long long)a->version);
		return MUX_ANN_NO_TABLE;
	} else if (a->cfg.managed && a->lkg_active && !a->lkg_ok) {
		snprintf(why, len, "no manager: %.100s", a->lkg_why);
		return MUX_ANN_NOT_IN_SYNC;
	} else if (a->cfg.managed && a->lkg_active && !a->sync_known) {
		/* No leader heard since the start: the table it serves, announced. */
		snprintf(why, len, "%.110s", a->lkg_why);
		return MUX_ANN_NONE;
	} else if (a->cfg.managed && !a->sync_known && now_ms < a->word_until_ms) {
		/* Its word follows the WELCOME: no withdrawal for the moment between. */
		snprintf(why, len, "a leader is back: announced as before until its word");
		return MUX_ANN_NONE;
	} else if (a->cfg.managed && !a->sync_known) {
		snprintf(why, len, "waiting for the manager's word that it is in sync");
		return MUX_ANN_NOT_IN_SYNC;
	} else if (a->cfg.managed && !a->in_sync) {
		snprintf(why, len, "not in sync with the manager%s%.90s",
			a->sync_why[0] ? ": " : "", a->sync_why);
		return MUX_ANN_NOT_IN_SYNC;
	} else if (a->cfg.managed && a->version < a->sync_version) {
		snprintf(why, len, "runs version %llu, the manager committed %llu",
			(unsigned long long)a->version, (unsigned long long)a->sync_version);
		return MUX_ANN_NOT_IN_SYNC;
	}
	snprintf(why, len, "%s", mux_ann_reason_text(r));
	return r;
}

bool
mux_announce_eval(struct mux_announce *a, uint64_t now_ms)
{
	char why[MUX_ANN_TEXT];
	enum mux_ann_reason r = mux_wide(a, now_ms, why, sizeof(why));
	bool changed = a->dirty;
	uint32_t i;

	a->dirty = false;
	if (r != a->reason)
		a->reason_since_ms = now_ms;
	a->reason = r;
	snprintf(a->why, sizeof(a->why), "%s", why);
	for (i = 0; i < a->n_vips; i++) {
		struct mux_ann_vip *v = &a->vips[i];
		enum mux_ann_reason vr = r != MUX_ANN_NONE ? r : v->held ? MUX_ANN_VIP_HELD : r;
		bool ann = vr == MUX_ANN_NONE;

		if (ann != v->announce || vr != v->reason) {
			v->since_ms = now_ms;
			changed |= ann != v->announce;
		}
		v->announce = ann;
		v->reason = vr;
		if (vr == MUX_ANN_VIP_HELD)
			snprintf(v->why, sizeof(v->why), "%s",
				v->held_why[0] ? v->held_why : mux_ann_reason_text(vr));
		else
			snprintf(v->why, sizeof(v->why), "%s", why);
	}
	if (changed)
		a->changes++;
	return changed;
}

uint32_t
mux_announce_set(const struct mux_announce *a, uint32_t *out, uint32_t max)
{
	uint32_t i, n = 0;

	for (i = 0; i < a->n_vips && n < max; i++)
		if (a->vips[i].announce)
			out[n++] = a->vips[i].vip;
	return n;
}
