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
 * Off unless SLUICE_TEST_CRASH_AT names the step; with
 * SLUICE_TEST_CRASH_ONCE=PATH only the first manager to create PATH
 * (O_EXCL) dies there, so the managers of a test can share the setting.
 * Nothing else of the daemon changes when the variable is unset.
 */
#ifndef MGR_CRASH_H
#define MGR_CRASH_H

void mgr_crash_at(const char *step);

#endif /* MGR_CRASH_H */
