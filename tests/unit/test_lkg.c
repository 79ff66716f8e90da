/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A member's last known good table (proto/lb_lkg.c): the file's bytes
 * decode back to the same table, version, digest and term; every kind of
 * damage (each byte of the header changed, truncation at every length, a
 * flipped bit in the table, trailing bytes, a digest that names another
 * table) is refused with a reason and leaves nothing half-loaded; the
 * atomic save replaces the file whole; and the verdict a mux announces by
 * while it serves without a manager.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lb_err.h"
#include "lb_lkg.h"
#include "test_table.h"

/* A table of n_svc services of n_be backends, sorted as the member keeps it. */
static void
make_table(struct lb_ftable *ft, uint32_t n_svc, uint32_t n_be)
{
	test_make_table(ft, n_svc, n_be, 1);
	lb_ftable_sort(ft);
}

/* The file of a 3-service table at version 7, term 42. */
static uint8_t *
sample(struct lb_ftable *ft, uint8_t digest[LB_DIGEST_LEN], size_t *len)
{
	uint8_t *buf = NULL;

	make_table(ft, 3, 4);
	lb_ftable_digest(ft, digest);
	cr_assert_eq(lb_lkg_encode(ft, 7, digest, 42, &buf, len), 0);
	return buf;
}

Test(lkg, round_trip)
{
	struct lb_ftable ft;
	uint8_t digest[LB_DIGEST_LEN], d2[LB_DIGEST_LEN];
	struct lb_lkg l;
	char err[LB_LKG_WHY];
	size_t len;
	uint8_t *buf = sample(&ft, digest, &len);

	cr_assert_eq(lb_lkg_decode(buf, len, &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.version, 7);
	cr_assert_eq(l.term, 42);
	cr_assert_eq(memcmp(l.digest, digest, LB_DIGEST_LEN), 0);
	cr_assert_eq(l.table.n_services, 3);
	lb_ftable_digest(&l.table, d2);
	cr_assert_eq(memcmp(d2, digest, LB_DIGEST_LEN), 0, "the table itself comes back");
	cr_assert_eq(l.table.seed.k0, ft.seed.k0);
	cr_assert_eq(l.table.maglev_size, 65537);
	lb_lkg_free(&l);
	lb_ftable_free(&ft);
	free(buf);
}

/* Every prefix of the file (a write cut short) is refused. */
Test(lkg, truncated_at_every_length)
{
	struct lb_ftable ft;
	uint8_t digest[LB_DIGEST_LEN];
	struct lb_lkg l;
	char err[LB_LKG_WHY];
	size_t len, n;
	uint8_t *buf = sample(&ft, digest, &len);

	for (n = 0; n < len; n++) {
		err[0] = '\0';
		cr_assert_eq(lb_lkg_decode(buf, n, &l, err, sizeof(err)), -LB_EPARSE,
			"%zu of %zu bytes taken", n, len);
		cr_assert_neq(err[0], '\0', "a reason for %zu bytes", n);
		cr_assert_eq(l.table.n_services, 0, "nothing half-loaded at %zu bytes", n);
		cr_assert_null(l.table.services);
	}
	lb_ftable_free(&ft);
	free(buf);
}

/* A single bit flipped anywhere is caught (header, codec or digest). */
Test(lkg, every_bit_flip)
{
	struct lb_ftable ft;
	uint8_t digest[LB_DIGEST_LEN];
	struct lb_lkg l;
	char err[LB_LKG_WHY];
	size_t len, i;
	uint8_t *buf = sample(&ft, digest, &len);
	int bit, taken = 0;

	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			buf[i] ^= (uint8_t)(1u << bit);
			if (lb_lkg_decode(buf, len, &l, err, sizeof(err)) == 0) {
				/* The only bytes no check covers: the reserved word. */
				cr_assert(i >= 12 && i < 16, "byte %zu bit %d accepted", i, bit);
				cr_assert_eq(l.version, 7);
				lb_lkg_free(&l);
				taken++;
			}
			buf[i] ^= (uint8_t)(1u << bit);
		}
	}
	cr_assert_eq(taken, 32, "%d flips accepted, the reserved word's 32 bits expected", taken);
	lb_ftable_free(&ft);
	free(buf);
}

Test(lkg, refusals_name_the_lie)
{
	struct lb_ftable ft, other;
	uint8_t digest[LB_DIGEST_LEN], wrong[LB_DIGEST_LEN];
	struct lb_lkg l;
	char err[LB_LKG_WHY];
	size_t len, len2;
	uint8_t *buf = sample(&ft, digest, &len), *b2 = NULL, *longer;

	buf[0] = 'X';
	cr_assert_eq(lb_lkg_decode(buf, len, &l, err, sizeof(err)), -LB_EPARSE);
	cr_assert(strstr(err, "magic") != NULL, "%s", err);
	buf[0] = 'S';
	buf[11] = 2;
	cr_assert_eq(lb_lkg_decode(buf, len, &l, err, sizeof(err)), -LB_EPARSE);
	cr_assert(strstr(err, "format 2") != NULL, "%s", err);
	buf[11] = 1;
	cr_assert_eq(lb_lkg_decode(buf, len - 1, &l, err, sizeof(err)), -LB_EPARSE);
	cr_assert(strstr(err, "truncated") != NULL, "%s", err);
	longer = malloc(len + 3);
	memcpy(longer, buf, len);
	memset(longer + len, 0, 3);
	cr_assert_eq(lb_lkg_decode(longer, len + 3, &l, err, sizeof(err)), -LB_EPARSE);
	cr_assert(strstr(err, "trailing") != NULL, "%s", err);
	free(longer);
	/* A well-formed file whose digest names another table. */
	make_table(&other, 2, 2);
	lb_ftable_digest(&other, wrong);
	cr_assert_eq(lb_lkg_encode(&ft, 7, wrong, 42, &b2, &len2), 0);
	cr_assert_eq(lb_lkg_decode(b2, len2, &l, err, sizeof(err)), -LB_EPARSE);
	cr_assert(strstr(err, "digest mismatch") != NULL, "%s", err);
	cr_assert_eq(l.table.n_services, 0);
	free(b2);
	/* Version 0 is nothing to serve. */
	cr_assert_eq(lb_lkg_encode(&ft, 0, digest, 42, &b2, &len2), 0);
	cr_assert_eq(lb_lkg_decode(b2, len2, &l, err, sizeof(err)), -LB_EPARSE);
	cr_assert(strstr(err, "version 0") != NULL, "%s", err);
	free(b2);
	lb_ftable_free(&other);
	lb_ftable_free(&ft);
	free(buf);
}

Test(lkg, save_and_load)
{
	char dir[] = "/tmp/lkg-test-XXXXXX", path[128], tmp[140], err[LB_LKG_WHY + 256];
	struct lb_ftable ft, ft2;
	uint8_t digest[LB_DIGEST_LEN], d2[LB_DIGEST_LEN];
	struct lb_lkg l;
	struct stat st;
	int64_t mtime = 0;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/mux1.lkg", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	cr_assert_eq(lb_lkg_load(path, &l, &mtime, err, sizeof(err)), -LB_ENOENT);
	make_table(&ft, 2, 3);
	lb_ftable_digest(&ft, digest);
	cr_assert_eq(lb_lkg_save(path, &ft, 5, digest, 9, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "the table holds the hash seed: owner only");
	cr_assert_neq(stat(tmp, &st), 0, "no temporary file left");
	/* A second save replaces the first whole. */
	make_table(&ft2, 4, 1);
	lb_ftable_digest(&ft2, d2);
	cr_assert_eq(lb_lkg_save(path, &ft2, 6, d2, 10, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(lb_lkg_load(path, &l, &mtime, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.version, 6);
	cr_assert_eq(l.term, 10);
	cr_assert_eq(l.table.n_services, 4);
	cr_assert_gt(mtime, 0);
	lb_lkg_free(&l);
	/* Cut short on disk: refused, with the path's reason. */
	cr_assert_eq(truncate(path, 100), 0);
	cr_assert_eq(lb_lkg_load(path, &l, &mtime, err, sizeof(err)), -LB_EPARSE);
	cr_assert(strstr(err, "truncated") != NULL, "%s", err);
	/* Garbage of the right size: refused too. */
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("flow_table = { services = (); };\n", f);
	fclose(f);
	cr_assert_eq(lb_lkg_load(path, &l, &mtime, err, sizeof(err)), -LB_EPARSE);
	cr_assert(strstr(err, "magic") != NULL, "%s", err);
	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s/sub", dir);
	rmdir(tmp);
	rmdir(dir);
	lb_ftable_free(&ft);
	lb_ftable_free(&ft2);
}

/* What a mux serving without a manager announces: rows of (inputs, verdict, words). */
struct verdict_case {
	const char *name;
	uint64_t version, known;
	int64_t confirmed, now;
	uint64_t max_age_ms;
	bool announce;
	const char *words;
};

Test(lkg, verdict)
{
	static const struct verdict_case cases[] = {
		{"nothing to serve", 0, 0, 0, 1000, 0, false, "no table"},
		{"the last committed, young", 7, 7, 1000, 43000, 0, true,
			"serving last known good v7 (no manager for 42 s)"},
		{"no limit: old is fine", 7, 7, 0, 86400000, 0, true, "serving last known good v7"},
		{"behind what was committed", 5, 7, 1000, 2000, 0, false,
			"v5 is behind: v7 was committed"},
		{"within the max age", 7, 7, 1000, 60000, 60000, true, "serving"},
		{"past the max age", 7, 7, 1000, 62000, 60000, false, "past lkg_max_age 60 s"},
		{"a clock that went back", 7, 7, 5000, 1000, 60000, true, "for 0 s"},
	};
	char why[LB_LKG_WHY];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct verdict_case *c = &cases[i];
		bool a = lb_lkg_verdict(c->version, c->known, c->confirmed, c->now, c->max_age_ms,
			why, sizeof(why));

		cr_expect_eq(a, c->announce, "%s: announce %d", c->name, a);
		cr_expect(strstr(why, c->words) != NULL, "%s: \"%s\" lacks \"%s\"", c->name, why,
			c->words);
	}
}
