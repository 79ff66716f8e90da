/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The election's I/O: the pure state machine (core/mgr_elect.h) fed with
 * what etcd answers. Each action is one call to etcd's v3 JSON gateway
 * (mgr_etcd.h), bounded by the etcd timeout:
 *
 *   GRANT      POST /v3/lease/grant {"TTL": ttl}
 *   CAMPAIGN   POST /v3/kv/txn: if P/leader's create_revision is 0, put it
 *              (value: this manager's info) on our lease, else range it.
 *              Won: the term is the txn's revision (the key's
 *              create_revision). The key on our own lease (a repeated
 *              campaign) is won too; another's: lost, and who leads.
 *   KEEPALIVE  POST /v3/lease/keepalive {"ID": lease}: an answer without a
 *              TTL means the lease is gone.
 *   READ       POST /v3/kv/range P/leader
 *   REVOKE     POST /v3/lease/revoke (at stop: the key goes at once)
 *
 * Standbys read the key every ttl (the state machine's backstop) rather
 * than holding a streaming watch open: a takeover then waits at most the
 * dead leader's remaining lease plus one read period (docs/manager.md,
 * "High availability" has the figures).
 *
 * The calls are synchronous: the manager's loop makes them between its
 * other work, each at most timeout_ms, at most a few per ttl/3.
 */
#ifndef MGR_LEADER_H
#define MGR_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "mgr_elect.h"
#include "mgr_etcd.h"

struct mgr_leader;

/* What the manager is told (mgr_elect's ELECTED, DEPOSED and LEADER actions). */
struct mgr_leader_ops {
	void (*elected)(void *arg, uint64_t term);
	void (*deposed)(void *arg, const char *why);
	/* The leader as now seen (term 0: none); info is its key's value. */
	void (*leader)(void *arg, uint64_t term, const char *info);
};

/*
 * An elector on etcd (borrowed: the caller frees it after this), under
 * prefix, with a lease of ttl_s seconds; info is what the leader key holds
 * while this one leads.
 */
struct mgr_leader *mgr_leader_new(struct mgr_etcd *etcd, const char *prefix, uint32_t ttl_s,
	const char *info, const struct mgr_leader_ops *ops, void *arg);

void mgr_leader_free(struct mgr_leader *l);

/*
 * Let the election do what is due at now_ms (a monotonic clock):
 * loop_alive false says the caller's loop has stood still (a leader then
 * lets its lease lapse). Makes the etcd calls, feeds their answers, calls
 * the ops. Returns when the next step is due (mgr_elect_next_ms).
 */
uint64_t mgr_leader_step(struct mgr_leader *l, uint64_t now_ms, bool loop_alive);

/* Revoke the lease (the standbys take over at once). */
void mgr_leader_stop(struct mgr_leader *l, uint64_t now_ms);

/* The state machine, for status and logs. */
const struct mgr_elect *mgr_leader_elect(const struct mgr_leader *l);

/* The last etcd error ("" when the last call worked). */
const char *mgr_leader_error(const struct mgr_leader *l);

#endif /* MGR_LEADER_H */
