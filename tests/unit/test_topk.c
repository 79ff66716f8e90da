/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Top talkers (common/lb_topk.h) against exact counts on skewed input: the
 * space-saving guarantees for one summary, and for summaries merged as the
 * mux merges its workers'.
 */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_topk.h"
#include "test_util.h"

#define KEYS 1000
#define N 100000

/* A Zipf stream (weight 1/(k+1)^s, s 1 or 2), keys spread over 32 bits. */
static uint32_t
draw(uint64_t *seed, const double *cdf)
{
	double u = (double)(splitmix64(seed) >> 11) / 9007199254740992.0;
	uint32_t lo = 0, hi = KEYS - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo * 2654435761u + 7;
}

static double
weight(uint32_t k, int s)
{
	double x = (double)(k + 1);

	return s == 2 ? 1.0 / (x * x) : 1.0 / x;
}

static void
make_cdf(double *cdf, int s)
{
	double sum = 0;
	uint32_t k;

	for (k = 0; k < KEYS; k++)
		sum += weight(k, s);
	cdf[0] = weight(0, s) / sum;
	for (k = 1; k < KEYS; k++)
		cdf[k] = cdf[k - 1] + weight(k, s) / sum;
}

static uint32_t
key_index(uint32_t key)
{
	return (key - 7) * 244002641u; /* the inverse of 2654435761 mod 2^32 */
}

Test(topk, one_summary_keeps_the_heavy_hitters)
{
	static double cdf[KEYS];
	static uint32_t truth[KEYS];
	struct lb_topk t;
	uint64_t seed = 14;
	uint32_t i, k, heavy = 0;

	make_cdf(cdf, 2);
	memset(&t, 0, sizeof(t));
	memset(truth, 0, sizeof(truth));
	for (i = 0; i < N; i++) {
		uint32_t key = draw(&seed, cdf);

		truth[key_index(key)]++;
		lb_topk_add(&t, key);
	}
	for (i = 0; i < LB_TOPK; i++) {
		uint32_t real = truth[key_index(t.key[i])];

		cr_assert_leq(t.count[i] - t.err[i], real, "key %u: count %u err %u true %u",
			t.key[i], t.count[i], t.err[i], real);
		cr_assert_geq(t.count[i], real);
	}
	for (k = 0; k < KEYS; k++) {
		bool found = false;

		if (truth[k] <= N / LB_TOPK)
			continue;
		heavy++;
		for (i = 0; i < LB_TOPK; i++)
			found |= key_index(t.key[i]) == k;
		cr_assert(found, "key #%u (%u of %u) is not in the summary", k, truth[k], N);
	}
	cr_assert_geq(heavy, 1, "the input is skewed enough to have a heavy hitter");
}

Test(topk, merged_summaries_bound_the_truth)
{
	static double cdf[KEYS];
	static uint32_t truth[KEYS];
	struct lb_topk w[2];
	const struct lb_topk *ws[2] = {&w[0], &w[1]};
	struct lb_topk_entry out[2 * LB_TOPK];
	uint64_t seed = 15;
	uint32_t i, m;

	make_cdf(cdf, 1);
	memset(w, 0, sizeof(w));
	memset(truth, 0, sizeof(truth));
	for (i = 0; i < N; i++) {
		uint32_t key = draw(&seed, cdf);

		truth[key_index(key)]++;
		lb_topk_add(&w[splitmix64(&seed) & 1], key); /* RSS: a worker by hash */
	}
	m = lb_topk_merge(ws, 2, out);
	cr_assert_geq(m, LB_TOPK);
	for (i = 0; i < m; i++) {
		uint64_t real = truth[key_index(out[i].key)];

		cr_assert_leq(out[i].count, real + out[i].err, "key %u", out[i].key);
		cr_assert_geq(out[i].count + out[i].err, real, "key %u", out[i].key);
		if (i > 0)
			cr_assert_geq(out[i - 1].count, out[i].count, "sorted by count");
	}
	/* The heaviest key is Zipf's first, and first. */
	cr_assert_eq(key_index(out[0].key), 0);
}

Test(topk, exact_while_keys_fit)
{
	struct lb_topk t;
	uint32_t i, seen = 0;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < 30; i++)
		lb_topk_add(&t, 1);
	for (i = 0; i < 20; i++)
		lb_topk_add(&t, 2);
	for (i = 0; i < 40; i++)
		lb_topk_add(&t, 100 + i); /* singletons churn the smallest counters */

	for (i = 0; i < LB_TOPK; i++) {
		if (t.key[i] != 1 && t.key[i] != 2)
			continue;
		seen++;
		cr_assert_eq(t.count[i], t.key[i] == 1 ? 30u : 20u, "key %u", t.key[i]);
		cr_assert_eq(t.err[i], 0u, "key %u: never evicted, no error", t.key[i]);
	}
	cr_assert_eq(seen, 2, "both heavy keys kept through the churn");
	cr_assert_gt(lb_topk_floor(&t), 0, "the summary is full");
}

/* A worker adding while another thread copies (lb_topk_copy), as STATUS does. */
struct adder {
	struct lb_topk *t;
	volatile int stop;
	uint64_t added;
};

static void *
add_loop(void *arg)
{
	struct adder *a = arg;
	uint32_t x = 1;

	while (!a->stop) {
		x = x * 1103515245u + 12345u;
		lb_topk_add(a->t, (x >> 16) % 12); /* 12 keys, 8 counters: replacements */
		__atomic_fetch_add(&a->added, 1, __ATOMIC_RELAXED);
		/* a busy worker's pace, a new connection every few hundred cycles */
		for (int spin = 0; spin < 20; spin++)
			__asm__ volatile("pause");
	}
	return NULL;
}

Test(topk, copies_are_whole_while_a_worker_adds)
{
	struct lb_topk t, c;
	struct adder a = {.t = &t};
	uint64_t sum, last = 0;
	pthread_t th;
	int i, j, k, agreed = 0;

	memset(&t, 0, sizeof(t));
	cr_assert(lb_topk_copy(&c, &t));
	cr_assert_eq(memcmp(&c, &t, sizeof(t)), 0, "a quiet summary copies as it is");
	cr_assert_eq(pthread_create(&th, NULL, add_loop, &a), 0);
	/* copies while the worker adds, until it has added 200000 */
	for (i = 0; __atomic_load_n(&a.added, __ATOMIC_RELAXED) < 200000; i++) {
		/*
		 * Two reads that agree are the summary at one moment (a counter
		 * only grows, so none can change and come back between them); a
		 * copy that never agreed may be torn, and says so.
		 */
		if (!lb_topk_copy(&c, &t))
			continue;
		agreed++;
		for (j = 0, sum = 0; j < LB_TOPK; j++) {
			sum += c.count[j];
			cr_assert_leq(c.err[j], c.count[j], "an error within its count");
			for (k = 0; k < j; k++)
				cr_assert(
					c.count[j] == 0 || c.count[k] == 0 || c.key[j] != c.key[k],
					"a key in two counters");
		}
		/* every add adds one to the sum: a later copy's is never smaller */
		cr_assert_geq(sum, last);
		last = sum;
	}
	a.stop = 1;
	pthread_join(th, NULL);
	cr_assert_gt(agreed, 0, "some reads agreed");
	cr_log_info("%d of %d copies agreed, %" PRIu64 " adds", agreed, i, a.added);
	cr_assert(lb_topk_copy(&c, &t));
	for (j = 0, sum = 0; j < LB_TOPK; j++)
		sum += c.count[j];
	cr_assert_eq(sum, a.added, "the last copy holds every add");
}
