/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection for the HA tests (tests/process/test_ha.py): the
 * manager kills itself (SIGKILL, as kill -9 would) at a named step of a
 * round, so that a test can show what the next leader makes of a round cut
 * there. The steps:
 *
 *   prepared   the first vote arrived: PREPARE went out and was built
 *   voted      every vote is in, before the commit record is written
 *   recorded   the commit record is durable, before any COMMIT is sent
 *
 * and one where it lives on (mgr_fault_at):
 *
 *   unanswered etcd took the commit record, but the manager hears no
 *              answer and cannot read it back (mgr_store_lost())
 *
 * Off unless SLUICE_TEST_CRASH_AT names the step; with
 * SLUICE_TEST_CRASH_ONCE=PATH only the first manager to create PATH
 * (O_EXCL) dies there, so the managers of a test can share the setting.
 * Nothing else of the daemon changes when the variable is unset.
 */
#ifndef MGR_CRASH_H
#define MGR_CRASH_H

#include <stdbool.h>

void mgr_crash_at(const char *step);

/* True, once a test's manager, when SLUICE_TEST_CRASH_AT names step. */
bool mgr_fault_at(const char *step);

#endif /* MGR_CRASH_H */
