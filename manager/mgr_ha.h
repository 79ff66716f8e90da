/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store = "etcd": this manager among several (docs/manager.md, "High
 * availability"). It campaigns for the lead (mgr_leader.c) and, until it
 * wins, stands by: sluicectl is answered "not the leader, ask <its ctl
 * URL>" and a member's hello is refused with the leader's member URL, so
 * both follow the leader. Won, the manager starts as a single one does,
 * from the store (the committed version, the desired table, a round the
 * old leader left to finish or abort), with every store write and every
 * PREPARE, COMMIT, ABORT, WELCOME and snapshot carrying its term.
 *
 * Deposed (its lease could not be renewed in time, or the key names
 * another term), a leader does not try to turn back into a standby with
 * half a round in memory: it exits (status 3) and its supervisor starts it
 * again, as a standby. Its writes after the moment it was deposed fail
 * the store's term guard, and the members refuse its older term.
 */
#ifndef MGR_HA_H
#define MGR_HA_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_codec.h"
#include "mgr_config.h"
#include "mgr_store.h"

#define MGR_HA_EXIT_DEPOSED 3

struct mgr_ha;
struct mgr_transport;

/* The election for cfg over store's etcd (borrowed). NULL: out of memory. */
struct mgr_ha *mgr_ha_new(const struct mgr_config *cfg, struct mgr_store *store);

void mgr_ha_free(struct mgr_ha *h);

/* Let the election do what is due; returns when it is next due. */
uint64_t mgr_ha_tick(struct mgr_ha *h, uint64_t now);

/* Leading: the term (0: standing by). */
uint64_t mgr_ha_term(const struct mgr_ha *h);

/* This manager led and was deposed: it must stop. */
bool mgr_ha_deposed(const struct mgr_ha *h);

/* A standby's answer to a sluicectl request: not the leader, ask ... */
void mgr_ha_standby_ctl(const struct mgr_ha *h, struct lb_msg *rep);

/* A standby's answer to a member's message (a hello: refused, with the leader's URL). */
void mgr_ha_standby_member(
	const struct mgr_ha *h, struct mgr_transport *t, uint32_t pipe, const struct lb_msg *msg);

/* Revoke the lease (at a clean stop the standbys take over at once). */
void mgr_ha_stop(struct mgr_ha *h, uint64_t now);

#endif /* MGR_HA_H */
