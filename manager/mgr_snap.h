/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshots: the committed table as SNAPSHOT_CHUNK messages, encoded once
 * per version and sent to every member that needs a resync (a fenced one,
 * a new one, one that asked). A table of 100,000 backends is a few MB:
 * encoding it once, not once per member, is what lets a whole fleet resync
 * after a manager restart.
 *
 * Chunks hold at most MGR_SNAP_CHUNK_ENTRIES backends (a service counts one
 * more) and never split a service, so a member can check each service
 * whole. Only the loop thread uses it.
 */
#ifndef MGR_SNAP_H
#define MGR_SNAP_H

#include <stddef.h>
#include <stdint.h>

#include "lb_ftable.h"

#define MGR_SNAP_CHUNK_ENTRIES 20000

struct mgr_snap;

/* The encoded chunks of one version (owned by the mgr_snap). */
struct mgr_snap_chunks {
	uint64_t version;
	uint32_t count;
	uint8_t *const *buf;
	const size_t *len;
};

/* NULL when out of memory. */
struct mgr_snap *mgr_snap_new(void);

void mgr_snap_free(struct mgr_snap *s);

/* Drop the chunks (their version is no longer committed): memory back. */
void mgr_snap_clear(struct mgr_snap *s);

/*
 * The chunks of table t at version (with its digest), encoded at the first
 * call for that version. Valid until the next call or mgr_snap_clear().
 * Returns 0, or -LB_ENOMEM / -LB_EINVAL (nothing kept).
 */
int mgr_snap_get(struct mgr_snap *s, const struct lb_ftable *t, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], struct mgr_snap_chunks *out);

#endif /* MGR_SNAP_H */
