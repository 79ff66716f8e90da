/* SPDX-License-Identifier: BSD-3-Clause */
/* A member's last known good table on disk (lb_lkg.h has the format). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mbedtls/sha256.h>

#include "lb_codec.h"
#include "lb_err.h"
#include "lb_lkg.h"

static const uint8_t lkg_magic[8] = {'S', 'L', 'K', 'G', '\r', '\n', 0x1a, '\n'};

/* The largest file taken: a chunk of the largest message, and the header. */
#define LKG_MAX_BYTES ((size_t)LB_MSG_MAX_BYTES + LB_LKG_HEADER)

static void
put_be(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* What the header's checksum holds: SHA-256 of the chunk, its first 8 bytes. */
static uint64_t
checksum(const uint8_t *p, size_t n)
{
	uint8_t h[32];

	/* mbed TLS 2.28: the _ret form (the plain one is deprecated there). */
	if (mbedtls_sha256_ret(p, n, h, 0) != 0)
		memset(h, 0, sizeof(h));
	return (uint64_t)h[0] << 56 | (uint64_t)h[1] << 48 | (uint64_t)h[2] << 40 |
	       (uint64_t)h[3] << 32 | (uint64_t)h[4] << 24 | (uint64_t)h[5] << 16 |
	       (uint64_t)h[6] << 8 | h[7];
}

static uint64_t
get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int
lb_lkg_encode(const struct lb_ftable *t, uint64_t version, const uint8_t digest[LB_DIGEST_LEN],
	uint64_t term, uint8_t **buf, size_t *len)
{
	struct lb_msg *m = calloc(1, sizeof(*m));
	uint8_t *chunk = NULL, *out;
	size_t n = 0;
	int rc;

	if (m == NULL)
		return -LB_ENOMEM;
	m->type = LB_MSG_SNAPSHOT_CHUNK;
	snprintf(m->sender, sizeof(m->sender), "lkg");
	m->version = version;
	m->term = term;
	m->index = 0;
	m->count = 1;
	memcpy(m->digest, digest, LB_DIGEST_LEN);
	m->table = *t; /* borrowed: not freed here */
	rc = lb_msg_encode(m, &chunk, &n);
	free(m);
	if (rc != 0)
		return rc;
	out = malloc(LB_LKG_HEADER + n);
	if (out == NULL) {
		free(chunk);
		return -LB_ENOMEM;
	}
	memcpy(out, lkg_magic, sizeof(lkg_magic));
	put_be(out + 8, LB_LKG_FORMAT, 4);
	put_be(out + 12, 0, 4);
	put_be(out + 16, n, 8);
	put_be(out + 24, checksum(chunk, n), 8);
	memcpy(out + LB_LKG_HEADER, chunk, n);
	free(chunk);
	*buf = out;
	*len = LB_LKG_HEADER + n;
	return 0;
}

int
lb_lkg_decode(const uint8_t *buf, size_t len, struct lb_lkg *out, char *err, size_t elen)
{
	uint8_t digest[LB_DIGEST_LEN];
	char why[LB_MSG_TEXT];
	struct lb_msg *m;
	uint64_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	/* Each check names the lie it catches. */
	if (len < LB_LKG_HEADER)
		return lb_fail(err, elen, -LB_EPARSE,
			"truncated: %zu bytes, shorter than the header", len);
	if (memcmp(buf, lkg_magic, sizeof(lkg_magic)) != 0)
		return lb_fail(err, elen, -LB_EPARSE, "not a last-known-good file (bad magic)");
	if (get_be(buf + 8, 4) != LB_LKG_FORMAT)
		return lb_fail(err, elen, -LB_EPARSE, "format %" PRIu64 ", this build reads %d",
			get_be(buf + 8, 4), LB_LKG_FORMAT);
	n = get_be(buf + 16, 8);
	if (n != len - LB_LKG_HEADER)
		return lb_fail(err, elen, -LB_EPARSE,
			"%s: %zu bytes after the header, %" PRIu64 " announced",
			n > len - LB_LKG_HEADER ? "truncated" : "trailing bytes",
			len - LB_LKG_HEADER, n);
	if (get_be(buf + 24, 8) != checksum(buf + LB_LKG_HEADER, (size_t)n))
		return lb_fail(err, elen, -LB_EPARSE, "checksum mismatch: the file was damaged");
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return lb_fail(err, elen, -LB_EPARSE, "out of memory");
	rc = lb_msg_decode(buf + LB_LKG_HEADER, (size_t)n, m, why, sizeof(why));
	if (rc != 0) {
		rc = lb_fail(err, elen, -LB_EPARSE, "the table does not decode: %s", why);
	} else if (m->type != LB_MSG_SNAPSHOT_CHUNK || m->index != 0 || m->count != 1) {
		rc = lb_fail(err, elen, -LB_EPARSE, "the table is not one whole snapshot");
	} else if (m->version == 0) {
		rc = lb_fail(err, elen, -LB_EPARSE, "version 0");
	} else {
		lb_ftable_sort(&m->table);
		lb_ftable_digest(&m->table, digest);
		if (lb_ftable_validate(&m->table, why, sizeof(why)) != 0)
			rc = lb_fail(err, elen, -LB_EPARSE, "the table is not valid: %s", why);
		else if (memcmp(digest, m->digest, LB_DIGEST_LEN) != 0)
			rc = lb_fail(err, elen, -LB_EPARSE,
				"digest mismatch: the table is not the one recorded (version "
				"%" PRIu64 ")",
				m->version);
	}
	if (rc == 0) {
		out->version = m->version;
		out->term = m->term;
		memcpy(out->digest, m->digest, LB_DIGEST_LEN);
		out->table = m->table;
		memset(&m->table, 0, sizeof(m->table));
	}
	lb_msg_free(m);
	free(m);
	return rc;
}

void
lb_lkg_free(struct lb_lkg *l)
{
	lb_ftable_free(&l->table);
	memset(l, 0, sizeof(*l));
}

static int
io_fail(char *err, size_t elen, const char *what, const char *path)
{
	snprintf(err, elen, "%s %s: %s", what, path, strerror(errno));
	return -LB_EIO;
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
lb_lkg_save(const char *path, const struct lb_ftable *t, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], uint64_t term, char *err, size_t elen)
{
	char tmp[PATH_MAX], dirbuf[PATH_MAX], *dir;
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd, rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, elen, "%s: path too long", path);
		return -LB_EIO;
	}
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	dir = dirname(dirbuf);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return io_fail(err, elen, "cannot create", dir);
	rc = lb_lkg_encode(t, version, digest, term, &buf, &len);
	if (rc != 0) {
		snprintf(err, elen, "encode version %" PRIu64 ": %s", version, lb_strerror(rc));
		return -LB_EIO;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(buf);
		return io_fail(err, elen, "cannot create", tmp);
	}
	/* The new file is whole on disk before it takes the old one's name. */
	if (write_all(fd, buf, len) != 0 || fsync(fd) != 0) {
		rc = io_fail(err, elen, "cannot write", tmp);
		close(fd);
		unlink(tmp);
		free(buf);
		return rc;
	}
	free(buf);
	close(fd);
	if (rename(tmp, path) != 0) {
		rc = io_fail(err, elen, "cannot rename to", path);
		unlink(tmp);
		return rc;
	}
	/* ... and the rename itself survives a power cut. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0) {
		rc = io_fail(err, elen, "cannot sync the folder", dir);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(fd);
	return 0;
}

int
lb_lkg_load(const char *path, struct lb_lkg *out, int64_t *mtime_ms, char *err, size_t elen)
{
	struct stat st;
	uint8_t *buf;
	ssize_t r;
	size_t got = 0;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return -LB_ENOENT;
	if (fd < 0)
		return io_fail(err, elen, "cannot open", path);
	if (fstat(fd, &st) != 0) {
		rc = io_fail(err, elen, "cannot stat", path);
		close(fd);
		return rc;
	}
	if ((size_t)st.st_size > LKG_MAX_BYTES) {
		close(fd);
		snprintf(err, elen, "%s: %lld bytes, more than any table", path,
			(long long)st.st_size);
		return -LB_EPARSE;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		close(fd);
		snprintf(err, elen, "%s: out of memory", path);
		return -LB_EIO;
	}
	while (got < (size_t)st.st_size &&
		((r = read(fd, buf + got, (size_t)st.st_size - got)) > 0 ||
			(r < 0 && errno == EINTR)))
		if (r > 0)
			got += (size_t)r;
	close(fd);
	*mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	rc = lb_lkg_decode(buf, got, out, err, elen);
	free(buf);
	return rc;
}

void
lb_lkg_touch(const char *path)
{
	utimensat(AT_FDCWD, path, NULL, 0);
}

bool
lb_lkg_verdict(uint64_t version, uint64_t known_committed, int64_t confirmed_ms, int64_t now_ms,
	uint64_t max_age_ms, char *why, size_t len)
{
	int64_t age = now_ms > confirmed_ms ? now_ms - confirmed_ms : 0;

	if (version == 0) {
		snprintf(why, len, "no table: no manager answers and no last known good table");
		return false;
	}
	if (known_committed > version) {
		snprintf(why, len,
			"last known good v%" PRIu64 " is behind: v%" PRIu64
			" was committed, the other muxes run another table",
			version, known_committed);
		return false;
	}
	if (max_age_ms != 0 && (uint64_t)age > max_age_ms) {
		snprintf(why, len,
			"last known good v%" PRIu64 " is %" PRId64
			" s old, past lkg_max_age %" PRIu64 " s",
			version, age / 1000, max_age_ms / 1000);
		return false;
	}
	snprintf(why, len, "serving last known good v%" PRIu64 " (no manager for %" PRId64 " s)",
		version, age / 1000);
	return true;
}
