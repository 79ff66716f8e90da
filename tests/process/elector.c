/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One manager's election and term-guarded store writes, without the rest
 * of the manager: what tests/process/test_election.py runs three of
 * against a three-member etcd cluster. It loads a real manager
 * configuration (store = "etcd"), opens the etcd store (mgr_estore.c:
 * refused for an endpoint that does not answer, or a key space that holds
 * something else), and runs the election (mgr_leader.c over
 * core/mgr_elect.c). Every write_ms it makes one store write, the leader's
 * "save meta", guarded by the term it was elected with (mgr_es_txn), also
 * after it was deposed by its own clock's reckoning but before its election
 * has looked at the time: a leader frozen (SIGSTOP) and resumed tries a
 * write with its old term first, which etcd must refuse.
 *
 * Lines on stdout, flushed, each with the monotonic time in ms:
 *   T ready                      the store opened
 *   T elected TERM
 *   T deposed WHY
 *   T leader TERM INFO           the leader as seen (TERM 0: none)
 *   T write ok TERM              a guarded write held
 *   T write refused TERM WHY     it did not (a deposed leader's)
 * SIGTERM: the lease revoked, exit 0. A failure to start: the reason on
 * stderr, exit 1.
 *
 *   elector CONFIG [WRITE_MS]
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lb_err.h"
#include "mgr_clock.h"
#include "mgr_config.h"
#include "mgr_leader.h"
#include "mgr_store.h"
#include "mgr_estore.h"

static volatile sig_atomic_t stop;

struct elector {
	struct mgr_store *store;
	uint64_t term; /* 0: not the leader */
};

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void
elected(void *arg, uint64_t term)
{
	struct elector *e = arg;

	e->term = term;
	mgr_store_set_term(e->store, term);
	printf("%" PRIu64 " elected %" PRIu64 "\n", mgr_now_ms(), term);
	fflush(stdout);
}

static void
deposed(void *arg, const char *why)
{
	struct elector *e = arg;

	printf("%" PRIu64 " deposed %s\n", mgr_now_ms(), why);
	fflush(stdout);
	/* The store keeps the old term: the next write shows etcd refusing it. */
	e->term = 0;
}

static void
leader(void *arg, uint64_t term, const char *info)
{
	(void)arg;
	printf("%" PRIu64 " leader %" PRIu64 " %s\n", mgr_now_ms(), term, info);
	fflush(stdout);
}

static void
sleep_ms(uint64_t ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

int
main(int argc, char **argv)
{
	static const struct mgr_leader_ops ops = {elected, deposed, leader};
	struct mgr_meta meta = {.mm_maglev_size = 65537};
	struct elector el = {0};
	struct mgr_config cfg;
	struct lb_cfg_err cerr;
	struct mgr_leader *l;
	uint64_t write_ms, next_write = 0, last_term = 0, now;
	char info[MGR_ELECT_INFO], err[1024];

	if (argc < 2) {
		fprintf(stderr, "usage: elector CONFIG [WRITE_MS]\n");
		return 2;
	}
	write_ms = argc > 2 ? strtoull(argv[2], NULL, 10) : 300;
	if (mgr_config_load(argv[1], &cfg, &cerr) != 0) {
		fprintf(stderr, "%s\n", cerr.msg);
		return 1;
	}
	if (cfg.mc_store != MGR_STORE_ETCD) {
		fprintf(stderr, "%s: store = \"etcd\" expected\n", argv[1]);
		return 1;
	}
	el.store = mgr_store_open_etcd(&cfg, err, sizeof(err));
	if (el.store == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if ((size_t)snprintf(info, sizeof(info),
		    "{\"id\":\"%s\",\"members\":\"%s\",\"ctl\":\"%s\"}", cfg.mc_id,
		    cfg.mc_adv_members, cfg.mc_adv_ctl) >= sizeof(info)) {
		fprintf(stderr, "%s: id and advertised URLs too long\n", argv[1]);
		return 1;
	}
	l = mgr_leader_new(
		el.store->es->etcd, cfg.mc_etcd_prefix, cfg.mc_lease_ttl_s, info, &ops, &el);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	printf("%" PRIu64 " ready\n", mgr_now_ms());
	fflush(stdout);
	while (!stop) {
		now = mgr_now_ms();
		/* The write first: a leader resumed from SIGSTOP tries its old term. */
		if ((el.term != 0 || last_term != 0) && now >= next_write) {
			uint64_t t = el.term != 0 ? el.term : last_term;

			next_write = now + write_ms;
			if (mgr_store_save_meta(el.store, &meta) == 0)
				printf("%" PRIu64 " write ok %" PRIu64 "\n", mgr_now_ms(), t);
			else
				printf("%" PRIu64 " write refused %" PRIu64 " %s\n", mgr_now_ms(),
					t, el.store->err);
			fflush(stdout);
			last_term = el.term;
			if (el.term == 0)
				mgr_store_set_term(el.store, 0);
		}
		if (el.term != 0)
			last_term = el.term;
		mgr_leader_step(l, mgr_now_ms(), true);
		sleep_ms(50);
	}
	mgr_leader_stop(l, mgr_now_ms());
	mgr_leader_free(l);
	mgr_store_close(el.store);
	return 0;
}
