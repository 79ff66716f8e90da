/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A member among several managers, and its last known good table
 * (lb_member.h has the design, lb_member_int.h the split).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lb_err.h"
#include "lb_lkg.h"
#include "lb_log.h"
#include "lb_member_int.h"

/* The newest committed version this member has heard of (a max). */
void
lb_mbr_heard(struct lb_member *m, uint64_t version)
{
	if (version > __atomic_load_n(&m->known_committed, __ATOMIC_ACQUIRE))
		__atomic_store_n(&m->known_committed, version, __ATOMIC_RELEASE);
}

/*
 * Write the running table to the state file. A failure leaves it stale
 * (lkg_stale): its time must not say an older table is confirmed, so
 * lb_mbr_confirm() tries the save again rather than touch it.
 */
static void
lkg_write(struct lb_member *m)
{
	char err[LB_LKG_WHY + 512];
	bool was = m->lkg_stale;

	m->lkg_stale = lb_lkg_save(m->cfg.state_file, &m->applied, m->applied_version,
			       m->applied_digest, m->fence.highest, err, sizeof(err)) != 0;
	if (m->lkg_stale && !was)
		LB_WARN("manager: last known good table not kept (tried again every %u s): %s",
			TOUCH_MS / 1000, err);
	else if (!m->lkg_stale && was)
		LB_INFO("manager: last known good table kept again (version %" PRIu64 ")",
			m->applied_version);
	m->touched_ms = lb_now_ms();
}

/* The table now running came from a manager: keep it as the last known good. */
void
lb_mbr_lkg_save(struct lb_member *m)
{
	__atomic_store_n(&m->synced, 1, __ATOMIC_RELEASE);
	lb_mbr_heard(m, m->applied_version);
	if (m->cfg.state_file[0] == '\0' || m->applied_version == 0)
		return;
	lkg_write(m);
}

/*
 * While a leader holds us in sync, the table is confirmed: a table served
 * without a manager is as old as the last moment this held (the file's
 * time says it after a restart).
 */
static void
lb_mbr_confirm(struct lb_member *m, uint64_t now)
{
	if (!m->welcomed || !__atomic_load_n(&m->synced, __ATOMIC_ACQUIRE) ||
		m->applied_version == 0)
		return;
	__atomic_store_n(&m->confirmed_ms, lb_mbr_wall_ms(), __ATOMIC_RELEASE);
	if (m->cfg.state_file[0] != '\0' && now - m->touched_ms >= TOUCH_MS) {
		if (m->lkg_stale) {
			lkg_write(m);
			return;
		}
		lb_lkg_touch(m->cfg.state_file);
		m->touched_ms = now;
	}
}

/* A message of term `term`: false when an older term than one seen (refused). */
bool
lb_mbr_term_ok(struct lb_member *m, uint64_t term, const char *what)
{
	switch (lb_fence_check(&m->fence, term)) {
	case LB_FENCE_STALE:
		LB_WARN("manager: %s of term %" PRIu64 " refused: term %" PRIu64
			" was seen, this one comes from a deposed leader",
			what, term, m->fence.highest);
		return false;
	case LB_FENCE_NEWER:
		LB_INFO("manager: the leader's term is %" PRIu64, term);
		return true;
	default:
		return true;
	}
}

/* Dial urls[i] from now on (after MOVE_MIN_MS since the last move): why is logged. */
void
lb_mbr_plan_move(struct lb_member *m, uint32_t i, const char *why)
{
	uint64_t at = m->moved_ms + MOVE_MIN_MS, now = lb_now_ms();

	if (m->move_at_ms != 0)
		return; /* one is planned */
	LB_INFO("manager: %s: dialing %s%s", why, m->cfg.urls[i], i == m->url_i ? " again" : "");
	m->move_to = i;
	m->move_at_ms = at > now ? at : now;
	/* No hello to this one meanwhile. */
	m->hello_hold_ms = m->move_at_ms;
}

uint32_t
lb_mbr_next_url(const struct lb_member *m)
{
	return (m->url_i + 1) % m->cfg.n_urls;
}

/* WELCOME: the hello's answer, and a leader's answer to every STATUS. */
void
lb_mbr_on_welcome(struct lb_member *m, const struct lb_msg *msg)
{
	if (!lb_mbr_term_ok(m, msg->term, "welcome")) {
		lb_mbr_plan_move(m, lb_mbr_next_url(m), "welcomed by a deposed leader");
		return;
	}
	if (m->welcomed && msg->term != 0)
		m->acked = true; /* a leader that answers: its silence will mean something */
	if (!m->welcomed)
		lb_mbr_send_status(m); /* the counters at once, then every heartbeat */
	m->welcomed = true;
	m->ever_welcomed = true;
	__atomic_store_n(&m->leader_ok, 1, __ATOMIC_RELEASE);
	lb_mbr_heard(m, msg->version);
	__atomic_store_n(
		&m->synced, !msg->flag && msg->version == m->applied_version, __ATOMIC_RELEASE);
	if (msg->flag)
		lb_mbr_ask_snapshot(m, "the manager says this member is out of sync");
}

/* A standby manager refused our hello: dial the leader it names, or the next one. */
void
lb_mbr_on_not_leader(struct lb_member *m, const struct lb_msg *msg)
{
	char why[LB_MSG_URL + 96];
	uint32_t i;

	__atomic_store_n(&m->leader_ok, 0, __ATOMIC_RELEASE);
	for (i = 0; i < m->cfg.n_urls; i++)
		if (msg->leader_url[0] != '\0' && strcmp(m->cfg.urls[i], msg->leader_url) == 0)
			break;
	snprintf(why, sizeof(why), "%s is not the leader (%s)", m->cfg.urls[m->url_i],
		msg->leader_url[0] == '\0' ? "it knows none yet"
		: i < m->cfg.n_urls	   ? "the leader is one of ours"
					   : "it names a leader not in our urls");
	lb_mbr_plan_move(m, i < m->cfg.n_urls && i != m->url_i ? i : lb_mbr_next_url(m), why);
}

/* The planned move: a new dialer for urls[move_to]; this connection is over. */
void
lb_mbr_move(struct lb_member *m)
{
	char err[LB_MSG_URL + 64];

	m->url_i = m->move_to;
	m->move_at_ms = 0;
	m->moved_ms = lb_now_ms();
	m->down_since_ms = 0;
	m->welcomed = false;
	m->acked = false;
	m->proof_len = 0;
	__atomic_store_n(&m->leader_ok, 0, __ATOMIC_RELEASE);
	nng_dialer_close(m->dialer);
	lb_mbr_new_sock(m);
	if (lb_mbr_dial(m, err, sizeof(err)) != 0)
		LB_WARN("manager: dial: %s", err);
}

/* No manager welcomed us within lkg_wait_ms of the start: run the file's table. */
static void
lb_mbr_lkg_start(struct lb_member *m)
{
	char err[LB_LKG_WHY + 512];
	struct lb_lkg l;
	int64_t mtime = 0;
	void *built;
	int rc;

	if (m->cfg.state_file[0] == '\0' || m->applied_version != 0)
		return;
	rc = lb_lkg_load(m->cfg.state_file, &l, &mtime, err, sizeof(err));
	if (rc == -LB_ENOENT) {
		LB_INFO("manager: none answered within %u ms and there is no last known good "
			"table (%s): waiting for one",
			m->cfg.lkg_wait_ms, m->cfg.state_file);
		return;
	}
	if (rc != 0) {
		LB_ERR("manager: none answered within %u ms; the last known good table %s is "
		       "ignored: %s; starting empty, waiting for a manager",
			m->cfg.lkg_wait_ms, m->cfg.state_file, err);
		return;
	}
	built = m->ops->build(m->arg, &l.table, l.version, err, sizeof(err));
	if (built == NULL) {
		LB_ERR("manager: the last known good table %s (version %" PRIu64
		       ") cannot be built: %s; waiting for a manager",
			m->cfg.state_file, l.version, err);
		lb_lkg_free(&l);
		return;
	}
	m->ops->publish(m->arg, built, l.version);
	lb_fence_check(&m->fence, l.term);
	lb_mbr_heard(m, l.version);
	__atomic_store_n(&m->confirmed_ms, mtime, __ATOMIC_RELEASE);
	lb_mbr_became(m, &l.table, l.version, l.digest);
	LB_WARN("manager: none answered within %u ms: forwarding from the last known good table "
		"%s, version %" PRIu64 " (term %" PRIu64 ", %u services, confirmed %" PRId64
		" s ago)",
		m->cfg.lkg_wait_ms, m->cfg.state_file, l.version, l.term, m->applied.n_services,
		(lb_mbr_wall_ms() - mtime) / 1000);
	lb_lkg_free(&l);
	if (__atomic_load_n(&m->connected, __ATOMIC_ACQUIRE) > 0)
		lb_mbr_send_hello(m); /* whoever listens learns what we run now */
}

/* Last known good at the start; the table's confirmation; a leader gone silent. */
void
lb_mbr_lkg_tick(struct lb_member *m)
{
	uint64_t now = lb_now_ms();

	if (!m->lkg_done && (m->ever_welcomed || now - m->start_ms >= m->cfg.lkg_wait_ms)) {
		m->lkg_done = true;
		if (!m->ever_welcomed)
			lb_mbr_lkg_start(m);
	}
	lb_mbr_confirm(m, now);
	if (m->acked && m->welcomed && m->move_at_ms == 0 &&
		now - m->last_rx_ms > (uint64_t)LB_MEMBER_LEADER_SILENT * m->cfg.heartbeat_ms) {
		char why[96];

		snprintf(why, sizeof(why), "the leader has not answered for %" PRIu64 " ms",
			now - m->last_rx_ms);
		lb_mbr_plan_move(m, lb_mbr_next_url(m), why);
	}
}

bool
lb_member_lkg_verdict(const struct lb_member *m, bool *announce, char *why, size_t len)
{
	if (__atomic_load_n(&m->leader_ok, __ATOMIC_ACQUIRE)) {
		*announce = true;
		if (len > 0)
			why[0] = '\0';
		return false;
	}
	*announce = lb_lkg_verdict(__atomic_load_n(&m->applied_version, __ATOMIC_ACQUIRE),
		__atomic_load_n(&m->known_committed, __ATOMIC_ACQUIRE),
		__atomic_load_n(&m->confirmed_ms, __ATOMIC_ACQUIRE), lb_mbr_wall_ms(),
		(uint64_t)m->cfg.lkg_max_age_s * 1000, why, len);
	return true;
}
