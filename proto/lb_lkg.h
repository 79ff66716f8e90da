/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A member's last known good table: the newest committed table it ran,
 * kept on local disk so that a mux or an agent restarted while no manager
 * answers can forward from it instead of starting empty and black-holing
 * its traffic (docs/manager.md, "High availability").
 *
 * The file: a 32-byte header, then one encoded SNAPSHOT_CHUNK (index 0 of
 * 1) carrying the version, the digest, the term and the whole table: the
 * wire codec is the only serialization of a flow table, as in the
 * manager's store.
 *
 *   offset 0   8 bytes  magic "SLKG\r\n\x1a\n" (a text-mode copy breaks it)
 *          8   4 bytes  format, big-endian (1)
 *         12   4 bytes  zero
 *         16   8 bytes  length of what follows, big-endian
 *         24   8 bytes  the first 8 bytes of SHA-256 of what follows
 *         32   ...      the chunk
 *
 * A file is taken only whole: the magic, the format, the length against
 * the file's size (a truncated file), the checksum (a flipped bit in the
 * version or the term, which the table's digest does not cover), the chunk
 * decoding (every field checked by the codec), the table's validation, and
 * the digest computed over the decoded table against the one recorded.
 * Anything else is refused with the reason, and nothing of it is used.
 *
 * Written atomically: a temporary file beside it, fsync, rename, fsync of
 * the folder; a crash leaves the old file or the new one, never half of
 * one. The file's modification time says when a manager last confirmed
 * the table (lb_lkg_touch while the member is in sync), which is what the
 * age of a table served without a manager is counted from.
 */
#ifndef LB_LKG_H
#define LB_LKG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_ftable.h"

#define LB_LKG_HEADER 32
#define LB_LKG_FORMAT 1
#define LB_LKG_WHY 160

struct lb_lkg {
	uint64_t version;
	uint64_t term; /* the leader's that committed it (0: a single manager) */
	uint8_t digest[LB_DIGEST_LEN];
	struct lb_ftable table; /* sorted */
};

/* The file's bytes for table t (sorted) at version, digest, term. 0 or -LB_ENOMEM. */
int lb_lkg_encode(const struct lb_ftable *t, uint64_t version, const uint8_t digest[LB_DIGEST_LEN],
	uint64_t term, uint8_t **buf, size_t *len);

/*
 * Decode a whole file into out (lb_lkg_free it). Returns 0, or -LB_EPARSE
 * with the reason in err ("truncated: 1200 bytes of 5000", "digest
 * mismatch", ...) and out empty.
 */
int lb_lkg_decode(const uint8_t *buf, size_t len, struct lb_lkg *out, char *err, size_t elen);

void lb_lkg_free(struct lb_lkg *l);

/* Write the file atomically (its folder created, 0700, if missing). 0 or -LB_EIO with err. */
int lb_lkg_save(const char *path, const struct lb_ftable *t, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], uint64_t term, char *err, size_t elen);

/*
 * Read and decode path. *mtime_ms: the file's modification time (Unix ms).
 * Returns 0, -LB_ENOENT when there is no file, or -LB_EIO / -LB_EPARSE
 * with the reason in err.
 */
int lb_lkg_load(const char *path, struct lb_lkg *out, int64_t *mtime_ms, char *err, size_t elen);

/* A manager confirmed the table now: the file's modification time moves. */
void lb_lkg_touch(const char *path);

/*
 * What a member serving without a manager tells its routing (a mux's
 * announcement): in sync (announce) or not, and why. Pure.
 *
 *   version         what it runs (0: nothing)
 *   known_committed the newest committed version it heard of
 *   confirmed_ms    when a manager last confirmed its table (Unix ms)
 *   max_age_ms      how long it may serve without one (0: no limit)
 *
 * Announced while the table is what the managers last committed as far as
 * the member knows ("serving last known good v7 (no manager for 42 s)");
 * withdrawn when it knows a newer version committed (it was behind: the
 * other muxes run another table) or the table is older than max_age_ms.
 */
bool lb_lkg_verdict(uint64_t version, uint64_t known_committed, int64_t confirmed_ms,
	int64_t now_ms, uint64_t max_age_ms, char *why, size_t len);

#endif /* LB_LKG_H */
