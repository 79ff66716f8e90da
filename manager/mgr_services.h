/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A services file (`config apply`'s text, or the configuration's
 * services_file) as a desired table and its pool options: the file's
 * flow_table group, and its optional top-level `pools` list. Loading only:
 * the caller validates, stores and commits.
 */
#ifndef MGR_SERVICES_H
#define MGR_SERVICES_H

#include <stddef.h>

#include "lb_config.h"
#include "lb_ftable.h"
#include "mgr_pool.h"
#include "mgr_store.h"

/*
 * The flow_table group of a services file already read into `c` as a
 * desired table: the seed and Maglev size of `desired` (the one it would
 * replace) unless the file sets them, ids kept for services and backends
 * that stay in `desired` (same service key, DIP and port), fresh ids from
 * meta's counters for the others. Errors are "FILE:LINE: field: message",
 * FILE being `name` when the text has no file. Returns 0 or -LB_ECONFIG /
 * -LB_ENOMEM; *out is empty on error.
 */
int mgr_services_load(const struct lb_ftable *desired, config_t *c, const char *name,
	struct mgr_meta *meta, struct lb_ftable *out, struct mgr_pools *pools, char *err,
	size_t len);

#endif /* MGR_SERVICES_H */
