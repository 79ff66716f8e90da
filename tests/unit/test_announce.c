/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a mux announces (mux/mux_announce.c), driven like the route thread
 * drives it: inputs with the time, then a verdict per VIP with its reason
 * and since when. Each test starts from a fresh state.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "mux_announce.h"

#define STALL 2500

static uint32_t
ip(const char *s)
{
	struct in_addr a;

	cr_assert_eq(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

static struct mux_announce *
fresh(bool managed)
{
	struct mux_announce *a = malloc(sizeof(*a));
	struct mux_ann_cfg c = {.managed = managed, .stall_ms = STALL};

	cr_assert_not_null(a);
	mux_announce_init(a, &c, 1000);
	return a;
}

/* A standalone mux with two VIPs (three services) and workers that run. */
static struct mux_announce *
serving(uint64_t now)
{
	struct mux_announce *a = fresh(false);
	uint32_t v[] = {ip("192.0.2.20"), ip("192.0.2.10"), ip("192.0.2.20")};

	mux_announce_table(a, 1, 3, v, 3, now);
	mux_announce_workers(a, true, 0, now);
	mux_announce_port(a, -1, NULL);
	cr_assert(mux_announce_eval(a, now), "the first announcement is a change");
	return a;
}

static uint32_t
announced(const struct mux_announce *a, uint32_t *out)
{
	return mux_announce_set(a, out, MUX_ANN_MAX_VIPS);
}

/*
 * Evaluates at now and checks the whole verdict: whether the announced set
 * changed, the mux-wide reason and how many VIPs are announced. The time is
 * in each message, so a failure names the step of the test that failed.
 */
static void
verdict(struct mux_announce *a, uint64_t now, bool changed, enum mux_ann_reason reason, uint32_t n)
{
	uint32_t out[MUX_ANN_MAX_VIPS];

	cr_assert_eq(mux_announce_eval(a, now), changed, "at %llu: changed is not %d",
		(unsigned long long)now, changed);
	cr_assert_eq(a->reason, reason, "at %llu: reason %s, not %s", (unsigned long long)now,
		mux_ann_reason_name(a->reason), mux_ann_reason_name(reason));
	cr_assert_eq(
		announced(a, out), n, "at %llu: not %u VIPs announced", (unsigned long long)now, n);
}

Test(announce, starts_withheld_until_the_workers_run)
{
	struct mux_announce *a = fresh(false);
	uint32_t v = ip("192.0.2.10"), out[4];

	mux_announce_table(a, 1, 1, &v, 1, 1000);
	/* nothing was announced, so nothing changed */
	verdict(a, 1000, false, MUX_ANN_STARTING, 0);
	cr_assert_eq(a->vips[0].reason, MUX_ANN_STARTING);
	mux_announce_workers(a, true, 0, 1100);
	verdict(a, 1100, true, MUX_ANN_NONE, 1);
	announced(a, out);
	cr_assert_eq(out[0], v);
	cr_assert_eq(a->vips[0].since_ms, 1100, "announced since the verdict changed");
	cr_assert_str_eq(a->why, "announced");
	free(a);
}

Test(announce, vips_sorted_and_distinct)
{
	struct mux_announce *a = serving(2000);
	uint32_t out[4];

	cr_assert_eq(a->n_vips, 2);
	cr_assert_eq(announced(a, out), 2);
	cr_assert_eq(out[0], ip("192.0.2.10"));
	cr_assert_eq(out[1], ip("192.0.2.20"));
	cr_assert_not(mux_announce_eval(a, 2100), "same inputs, same set");
	cr_assert_eq(a->changes, 1);
	free(a);
}

Test(announce, standalone_without_services_announces_nothing)
{
	struct mux_announce *a = fresh(false);

	mux_announce_table(a, 1, 0, NULL, 0, 1000);
	mux_announce_workers(a, true, 0, 1000);
	verdict(a, 1000, false, MUX_ANN_NO_TABLE, 0);
	cr_assert(strstr(a->why, "no services") != NULL, "%s", a->why);
	free(a);
}

Test(announce, managed_waits_for_a_version)
{
	struct mux_announce *a = fresh(true);
	uint32_t v = ip("192.0.2.10");

	mux_announce_table(a, 0, 0, NULL, 0, 1000);
	mux_announce_workers(a, true, 0, 1000);
	verdict(a, 1000, false, MUX_ANN_NO_TABLE, 0);
	cr_assert(strstr(a->why, "version 0") != NULL, "%s", a->why);
	/* A version alone is not the manager's word. */
	mux_announce_table(a, 7, 1, &v, 1, 1500);
	verdict(a, 1500, false, MUX_ANN_NOT_IN_SYNC, 0);
	mux_announce_sync(a, true, 7, "");
	verdict(a, 1600, true, MUX_ANN_NONE, 1);
	free(a);
}

Test(announce, stalled_worker_withdraws_everything_and_comes_back)
{
	struct mux_announce *a = serving(2000);

	/* worker 1's loop last moved at 2000: not yet stalled 1 ms before the limit */
	mux_announce_workers(a, true, 1, 2000);
	verdict(a, 2000 + STALL - 1, false, MUX_ANN_NONE, 2);
	verdict(a, 2000 + STALL, true, MUX_ANN_STALLED, 0);
	cr_assert(strstr(a->why, "worker 1") != NULL, "%s", a->why);
	cr_assert_eq(a->vips[0].since_ms, 2000 + STALL);
	cr_assert_eq(a->vips[1].reason, MUX_ANN_STALLED);
	mux_announce_workers(a, true, 0, 9000);
	verdict(a, 9000, true, MUX_ANN_NONE, 2);
	cr_assert_eq(a->vips[1].since_ms, 9000);
	free(a);
}

Test(announce, port_down_withdraws_naming_the_port)
{
	struct mux_announce *a = serving(2000);

	mux_announce_port(a, 0, "uplink");
	verdict(a, 2100, true, MUX_ANN_PORT_DOWN, 0);
	cr_assert_str_eq(a->why, "port uplink: link down");
	mux_announce_port(a, -1, NULL);
	verdict(a, 2200, true, MUX_ANN_NONE, 2);
	free(a);
}

Test(announce, shutdown_is_final_and_first)
{
	struct mux_announce *a = serving(2000);

	/* shutdown comes before drained and port down */
	mux_announce_shutdown(a);
	mux_announce_port(a, 0, "uplink");
	mux_announce_drain(a, true);
	verdict(a, 2100, true, MUX_ANN_SHUTDOWN, 0);
	/* nothing brings a shutting mux back */
	mux_announce_port(a, -1, NULL);
	mux_announce_drain(a, false);
	mux_announce_workers(a, true, 0, 5000);
	verdict(a, 5000, false, MUX_ANN_SHUTDOWN, 0);
	free(a);
}

/* The first reason that holds is the one given (mux_announce.h's list). */
Test(announce, reasons_in_order)
{
	struct mux_announce *a = fresh(true);
	uint32_t v = ip("192.0.2.10");

	mux_announce_table(a, 0, 0, NULL, 0, 1000);
	mux_announce_sync(a, false, 3, "fenced: VIP probes fail");
	mux_announce_port(a, 0, "p0");
	mux_announce_workers(a, true, 0, 1000);
	mux_announce_drain(a, true);
	mux_announce_eval(a, 1000 + STALL);
	cr_assert_eq(a->reason, MUX_ANN_DRAINED);
	mux_announce_drain(a, false);
	mux_announce_eval(a, 1000 + STALL);
	cr_assert_eq(a->reason, MUX_ANN_STALLED);
	mux_announce_workers(a, true, 0, 1000 + STALL);
	mux_announce_eval(a, 1000 + STALL);
	cr_assert_eq(a->reason, MUX_ANN_PORT_DOWN);
	mux_announce_port(a, -1, NULL);
	mux_announce_eval(a, 1000 + STALL);
	cr_assert_eq(a->reason, MUX_ANN_NO_TABLE);
	mux_announce_table(a, 3, 1, &v, 1, 4000);
	mux_announce_eval(a, 4000);
	cr_assert_eq(a->reason, MUX_ANN_NOT_IN_SYNC);
	cr_assert_str_eq(a->why, "not in sync with the manager: fenced: VIP probes fail");
	mux_announce_sync(a, true, 3, NULL);
	mux_announce_eval(a, 4100);
	cr_assert_eq(a->reason, MUX_ANN_NONE);
	cr_assert_eq(a->reason_since_ms, 4100);
	free(a);
}

/* A managed mux that serves, but has not heard from the manager. */
static struct mux_announce *
managed_serving(uint64_t version, uint64_t now)
{
	struct mux_announce *a = fresh(true);
	uint32_t v[] = {ip("192.0.2.10"), ip("192.0.2.20")};

	mux_announce_table(a, version, 2, v, 2, now);
	mux_announce_workers(a, true, 0, now);
	mux_announce_port(a, -1, NULL);
	return a;
}

/* A managed mux the manager says is in sync at version: both VIPs announced since now. */
static struct mux_announce *
managed_announcing(uint64_t version, uint64_t now)
{
	struct mux_announce *a = managed_serving(version, now);

	mux_announce_sync(a, true, version, "");
	verdict(a, now, true, MUX_ANN_NONE, 2);
	return a;
}

Test(announce, managed_waits_for_the_managers_word)
{
	struct mux_announce *a = managed_serving(5, 1000);

	/* a table is not enough */
	verdict(a, 1000, false, MUX_ANN_NOT_IN_SYNC, 0);
	cr_assert_str_eq(a->why, "waiting for the manager's word that it is in sync");
	mux_announce_sync(a, true, 5, "");
	verdict(a, 1200, true, MUX_ANN_NONE, 2);
	free(a);
}

Test(announce, managed_in_sync_only_at_the_committed_version)
{
	struct mux_announce *a = managed_serving(5, 1000);
	uint32_t v[] = {ip("192.0.2.10"), ip("192.0.2.20")};

	/* The notice of version 6 overtook the snapshot of version 6. */
	mux_announce_sync(a, true, 6, "");
	verdict(a, 1000, false, MUX_ANN_NOT_IN_SYNC, 0);
	cr_assert_str_eq(a->why, "runs version 5, the manager committed 6");
	mux_announce_table(a, 6, 2, v, 2, 1100);
	verdict(a, 1100, true, MUX_ANN_NONE, 2);
	/* Later commits need no new notice. */
	mux_announce_table(a, 7, 2, v, 2, 1200);
	verdict(a, 1200, false, MUX_ANN_NONE, 2);
	free(a);
}

Test(announce, fenced_then_resynced)
{
	struct mux_announce *a = managed_announcing(5, 1000);

	/* fenced: withdrawn; back in sync: announced again */
	mux_announce_sync(a, false, 5, "VIP probes fail: no answer for 192.0.2.10");
	verdict(a, 2000, true, MUX_ANN_NOT_IN_SYNC, 0);
	cr_assert_eq(a->vips[0].since_ms, 2000);
	mux_announce_sync(a, true, 5, "");
	verdict(a, 3000, true, MUX_ANN_NONE, 2);
	cr_assert_eq(a->reason_since_ms, 3000);
	free(a);
}

/*
 * No leader since the start: the last known good table is announced (issue
 * 16); at back_ms a leader welcomes the mux, whose word on sync is yet to
 * come (the SYNC after the WELCOME).
 */
static struct mux_announce *
lkg_leader_back(uint64_t back_ms)
{
	struct mux_announce *a = managed_serving(5, 1000);

	mux_announce_lkg(a, true, true, "serving last known good v5 (no manager for 3 s)", 1000);
	verdict(a, 1000, true, MUX_ANN_NONE, 2);
	mux_announce_lkg(a, false, true, NULL, back_ms);
	return a;
}

Test(announce, lkg_announced_when_no_leader_was_ever_heard)
{
	struct mux_announce *a = lkg_leader_back(1500);

	/* Announced until the leader's word: no withdrawal for the moment between. */
	verdict(a, 1500, false, MUX_ANN_NONE, 2);
	cr_assert_str_eq(a->why, "a leader is back: announced as before until its word");
	/* It says not in sync: its word decides. */
	mux_announce_sync(a, false, 6, "fenced: runs version 5, current is 6");
	verdict(a, 1600, true, MUX_ANN_NOT_IN_SYNC, 0);
	free(a);
}

/* A leader back whose word never comes: withdrawn MUX_ANN_WORD_MS later. */
Test(announce, lkg_leader_back_without_a_word)
{
	struct mux_announce *a = lkg_leader_back(1500);
	uint64_t end = 1500 + MUX_ANN_WORD_MS;

	mux_announce_workers(a, true, 0, end - 1); /* they still run */
	verdict(a, end - 1, false, MUX_ANN_NONE, 2);
	verdict(a, end, true, MUX_ANN_NOT_IN_SYNC, 0);
	cr_assert_str_eq(a->why, "waiting for the manager's word that it is in sync");
	/* Its word: in sync. */
	mux_announce_sync(a, true, 5, "");
	verdict(a, end + 1, true, MUX_ANN_NONE, 2);
	free(a);
}

Test(announce, lkg_that_says_withdraw_withholds_all)
{
	struct mux_announce *a = managed_announcing(5, 1000);

	/* The manager goes: the leader's in-sync word stands; then the table grows too old. */
	mux_announce_lkg(a, true, true, "serving last known good v5 (no manager for 1 s)", 1000);
	verdict(a, 2000, false, MUX_ANN_NONE, 2);
	mux_announce_lkg(
		a, true, false, "last known good v5 is 601 s old, past lkg_max_age 600 s", 2000);
	verdict(a, 3000, true, MUX_ANN_NOT_IN_SYNC, 0);
	cr_assert_str_eq(
		a->why, "no manager: last known good v5 is 601 s old, past lkg_max_age 600 s");
	/*
	 * A leader welcomes it (the verdict goes) and sends its table: until
	 * it says in sync, the old leader's word from before counts for nothing.
	 */
	mux_announce_lkg(a, false, true, NULL, 2000);
	verdict(a, 3100, false, MUX_ANN_NOT_IN_SYNC, 0);
	cr_assert_str_eq(a->why, "waiting for the manager's word that it is in sync");
	mux_announce_sync(a, true, 5, NULL);
	verdict(a, 3200, true, MUX_ANN_NONE, 2);
	free(a);
}

Test(announce, lkg_keeps_the_last_leaders_not_in_sync)
{
	struct mux_announce *a = managed_serving(5, 1000);

	/* Fenced by its VIP probes, then every manager goes: it stays withdrawn. */
	mux_announce_sync(a, false, 5, "VIP probes fail: no answer for 192.0.2.10");
	mux_announce_lkg(a, true, true, "serving last known good v5 (no manager for 1 s)", 1000);
	verdict(a, 1000, false, MUX_ANN_NOT_IN_SYNC, 0);
	free(a);
}

Test(announce, lkg_means_nothing_standalone)
{
	struct mux_announce *a = serving(2000);

	mux_announce_lkg(a, true, false, "no table", 2000);
	verdict(a, 2100, false, MUX_ANN_NONE, 2);
	free(a);
}

Test(announce, drained_withdraws_everything_until_undrained)
{
	struct mux_announce *a = serving(2000);

	mux_announce_drain(a, true);
	verdict(a, 2100, true, MUX_ANN_DRAINED, 0);
	mux_announce_drain(a, false);
	verdict(a, 2200, true, MUX_ANN_NONE, 2);
	free(a);
}

Test(announce, sync_only_matters_when_managed)
{
	struct mux_announce *a = serving(2000);

	/* a standalone mux has no manager to be in sync with */
	mux_announce_sync(a, false, 1, "no manager here");
	verdict(a, 2100, false, MUX_ANN_NONE, 2);
	free(a);
}

Test(announce, table_change_keeps_since_of_vips_that_stay)
{
	struct mux_announce *a = serving(2000);
	uint32_t v2[] = {ip("192.0.2.30"), ip("192.0.2.10")}, out[4];

	mux_announce_table(a, 2, 2, v2, 2, 3000);
	cr_assert(mux_announce_eval(a, 3000), ".20 left, .30 came: the set changed");
	cr_assert_eq(announced(a, out), 2);
	cr_assert_eq(out[0], ip("192.0.2.10"));
	cr_assert_eq(out[1], ip("192.0.2.30"));
	cr_assert_eq(a->vips[0].since_ms, 2000, "192.0.2.10 stayed announced");
	cr_assert_eq(a->vips[1].since_ms, 3000);
	free(a);
}

Test(announce, removing_an_announced_vip_is_a_change)
{
	struct mux_announce *a = serving(2000);
	uint32_t v = ip("192.0.2.10");

	mux_announce_table(a, 2, 1, &v, 1, 3000);
	verdict(a, 3000, true, MUX_ANN_NONE, 1);
	free(a);
}

Test(announce, vip_hold_withholds_one_vip)
{
	struct mux_announce *a = serving(2000);
	uint32_t out[4], v2[] = {ip("192.0.2.10"), ip("192.0.2.20")};

	cr_assert_eq(mux_announce_vip_hold(a, ip("192.0.2.99"), true, "x"), -1);
	cr_assert_eq(mux_announce_vip_hold(
			     a, ip("192.0.2.20"), true, "1 healthy backend, withdraw_below 2"),
		0);
	cr_assert(mux_announce_eval(a, 2500));
	cr_assert_eq(announced(a, out), 1);
	cr_assert_eq(out[0], ip("192.0.2.10"));
	cr_assert_eq(a->vips[1].reason, MUX_ANN_VIP_HELD);
	cr_assert_str_eq(a->vips[1].why, "1 healthy backend, withdraw_below 2");
	cr_assert_eq(a->reason, MUX_ANN_NONE, "the mux as a whole serves");
	mux_announce_table(a, 2, 2, v2, 2, 2600);
	mux_announce_eval(a, 2600);
	cr_assert_eq(announced(a, out), 1, "a hold survives a new version of the table");
	mux_announce_vip_hold(a, ip("192.0.2.20"), false, NULL);
	cr_assert(mux_announce_eval(a, 2700));
	cr_assert_eq(announced(a, out), 2);
	cr_assert_eq(a->vips[1].since_ms, 2700);
	free(a);
}

Test(announce, more_vips_than_room_are_counted_not_announced)
{
	struct mux_announce *a = fresh(false);
	uint32_t n = MUX_ANN_MAX_VIPS + 5, i;
	uint32_t *v = malloc(sizeof(*v) * n), *out = malloc(sizeof(*out) * n);

	for (i = 0; i < n; i++)
		v[i] = htonl(0x0a000000u + i);
	mux_announce_table(a, 1, n, v, n, 1000);
	mux_announce_workers(a, true, 0, 1000);
	mux_announce_eval(a, 1000);
	cr_assert_eq(a->n_vips, MUX_ANN_MAX_VIPS);
	cr_assert_eq(a->n_dropped, 5);
	cr_assert_eq(mux_announce_set(a, out, n), MUX_ANN_MAX_VIPS);
	free(v);
	free(out);
	free(a);
}

Test(announce, reason_names)
{
	cr_assert_str_eq(mux_ann_reason_name(MUX_ANN_STALLED), "STALLED");
	cr_assert_str_eq(mux_ann_reason_text(MUX_ANN_NONE), "announced");
	cr_assert_str_eq(mux_ann_reason_name(MUX_ANN_REASON_MAX), "UNKNOWN");
}
