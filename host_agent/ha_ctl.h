/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HA_CTL_H
#define HA_CTL_H

#include "ha_agent.h"

/*
 * Re-read path and apply its flow table to the running agent; other
 * changes need a restart (a warning says so). On a bad file nothing
 * changes and the reason is logged with file, line and field. Returns 0 or
 * a negative code.
 */
int ha_reload(struct ha_worker *w, const char *path, const struct ha_config *running);

#endif /* HA_CTL_H */
