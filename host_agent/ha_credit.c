/* SPDX-License-Identifier: BSD-3-Clause */
/* The agent's end of the capacity-credit channel (ha_credit.h). */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "dp_counters.h"
#include "ha_agent.h"
#include "ha_credit.h"
#include "ha_grant.h"
#include "ha_track.h"
#include "ha_update.h"
#include "lb_clock.h"
#include "lb_credit_msg.h"
#include "lb_err.h"
#include "lb_log.h"
#include "lb_nng.h"

#define CREDIT_CLOSE_MS 2000

struct ha_credit {
	struct ha_update *u;
	struct lb_credit_cfg cfg;
	nng_socket socks[LB_CREDIT_MUXES];
	bool up[LB_CREDIT_MUXES];   /* its last exchange worked (logged on change) */
	int pipes[LB_CREDIT_MUXES]; /* live connections to it (nng's pipe events) */
	uint64_t skipped;	    /* exchanges not tried: no connection to the mux */
	pthread_mutex_t lock;	    /* the books against telemetry's reads */
	bool too_many;		    /* said once: more capped backends than the books hold */
	struct ha_grant g;
	pthread_t thread;
	volatile bool quit;
};

/* The capped local backends of the running map, and their connections now. */
static void
read_caps(struct ha_credit *c)
{
	static struct ha_grant_cap caps[HA_GRANT_BACKENDS];
	const struct ha_worker *w = c->u->w;
	const struct ha_map *m;
	uint32_t i, n = 0;

	pthread_mutex_lock(&c->u->map_lock);
	m = w->map;
	for (i = 0; m != NULL && i < m->n_lb; i++)
		if (m->lb[i].max_conns != 0 && m->lb[i].proto == LB_IPPROTO_TCP &&
			n < HA_GRANT_BACKENDS)
			caps[n++] = (struct ha_grant_cap){m->lb[i].be_id, m->lb[i].max_conns};
	pthread_mutex_unlock(&c->u->map_lock);
	if (ha_grant_caps(&c->g, caps, n) != 0 && !c->too_many) {
		LB_WARN("credits: more than %u capped backends; the rest get none",
			HA_GRANT_BACKENDS);
		c->too_many = true;
	}
}

/*
 * The tracker's count of each capped backend now: read before every
 * request, so that a connection a report says was spent is counted by the
 * time the next mux is granted.
 */
static void
read_active(struct ha_credit *c)
{
	uint32_t i;

	for (i = 0; i < c->g.n_be; i++) {
		const struct ha_be_load *l = ha_track_load(c->u->w->track, c->g.be[i].id);

		ha_grant_active(&c->g, c->g.be[i].id, l != NULL ? DP_RD(l->active) : 0);
	}
}

/* One request to mux i and its answer; false: no answer. */
static bool
exchange(struct ha_credit *c, uint32_t i)
{
	struct lb_credit_grant q;
	struct lb_credit_report r;
	char why[LB_MSG_TEXT];
	uint8_t *buf = NULL;
	nng_msg *msg;
	size_t len;
	bool ok = false;
	int rc;

	memset(&q, 0, sizeof(q));
	snprintf(q.agent, sizeof(q.agent), "%s", c->cfg.id);
	pthread_mutex_lock(&c->lock);
	read_active(c);
	ha_grant_make(&c->g, i, lb_now_ms(), &q);
	pthread_mutex_unlock(&c->lock);
	rc = lb_credit_grant_encode(&q, &buf, &len);
	if (rc == 0 && (rc = nng_msg_alloc(&msg, len)) == 0) {
		memcpy(nng_msg_body(msg), buf, len);
		if ((rc = nng_sendmsg(c->socks[i], msg, 0)) != 0)
			nng_msg_free(msg);
	}
	free(buf);
	if (rc != 0) {
		/* Never sent: its grants are no one's. */
		pthread_mutex_lock(&c->lock);
		ha_grant_unsend(&c->g, i, &q);
		pthread_mutex_unlock(&c->lock);
		return false;
	}
	if (nng_recvmsg(c->socks[i], &msg, 0) != 0)
		return false;
	if (lb_credit_report_decode(nng_msg_body(msg), nng_msg_len(msg), &r, why, sizeof(why)) ==
		0) {
		pthread_mutex_lock(&c->lock);
		ok = ha_grant_report(&c->g, i, &r, lb_now_ms(), why, sizeof(why)) == 0;
		pthread_mutex_unlock(&c->lock);
	}
	nng_msg_free(msg);
	if (!ok)
		LB_WARN("credits: %s's report refused: %s", c->cfg.muxes[i].id, why);
	return ok;
}

static void *
credit_main(void *arg)
{
	struct ha_credit *c = arg;
	uint32_t i;

	while (!c->quit) {
		uint64_t next = lb_now_ms() + c->cfg.interval_ms;

		pthread_mutex_lock(&c->lock);
		read_caps(c);
		pthread_mutex_unlock(&c->lock);
		for (i = 0; i < c->cfg.n_muxes && !c->quit; i++) {
			/*
			 * A mux with no connection is not asked: req0 would wait
			 * out the send timeout, and a few muxes down would stretch
			 * the round past the grants' ttl for the ones up.
			 */
			bool linked = __atomic_load_n(&c->pipes[i], __ATOMIC_RELAXED) > 0;
			bool ok = linked && exchange(c, i);

			if (!linked)
				__atomic_add_fetch(&c->skipped, 1, __ATOMIC_RELAXED);

			if (ok != c->up[i])
				LB_INFO("credits: %s %s", c->cfg.muxes[i].id,
					ok ? "answers" : "does not answer");
			c->up[i] = ok;
		}
		for (uint64_t now; !c->quit && (now = lb_now_ms()) < next;)
			rte_delay_us_sleep((unsigned)(1000 * RTE_MIN(next - now, 50ull)));
	}
	return NULL;
}

/* Telemetry's (one channel per agent); NULL once it stops, under tel_lock. */
static struct ha_credit *tel_c;
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;

/* A telemetry key (DPDK 22.11 takes [A-Za-z0-9_/] only): be_<id>_<mux>_<what>. */
static void
tel_key(char *k, size_t len, uint32_t id, const char *mux, const char *what)
{
	char *p;

	snprintf(k, len, "be_%u%s%.32s_%s", id, mux ? "_" : "", mux ? mux : "", what);
	for (p = k; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
}

/*
 * /sluice/agent/credits: the tallies, and per capped backend (id) its cap,
 * its connections and, per mux, what it was granted, may still spend,
 * used and had to turn away: "be_7_max", "be_7_mux1_outstanding" ...
 */
static int
tel_credits(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	static const char *const what[] = {"granted", "outstanding", "used", "denied"};
	struct ha_credit *c;
	uint64_t now = lb_now_ms(), v[4];
	char k[RTE_TEL_MAX_STRING_LEN];
	uint32_t b, m, f;

	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel_lock);
	if ((c = tel_c) == NULL) {
		pthread_mutex_unlock(&tel_lock);
		return 0;
	}
	pthread_mutex_lock(&c->lock);
	rte_tel_data_add_dict_u64(d, "granted", c->g.st.granted);
	rte_tel_data_add_dict_u64(d, "grants", c->g.st.grants);
	rte_tel_data_add_dict_u64(d, "reclaims", c->g.st.reclaims);
	rte_tel_data_add_dict_u64(d, "reports", c->g.st.reports);
	rte_tel_data_add_dict_u64(d, "reports_rejected", c->g.st.reports_rejected);
	rte_tel_data_add_dict_u64(d, "skipped", __atomic_load_n(&c->skipped, __ATOMIC_RELAXED));
	for (b = 0; b < c->g.n_be; b++) {
		const struct ha_grant_be *e = &c->g.be[b];

		tel_key(k, sizeof(k), e->id, NULL, "max");
		rte_tel_data_add_dict_u64(d, k, e->max);
		tel_key(k, sizeof(k), e->id, NULL, "active");
		rte_tel_data_add_dict_u64(d, k, e->active);
		for (m = 0; m < c->g.n_muxes; m++) {
			v[0] = e->m[m].granted;
			v[1] = ha_grant_outstanding(&c->g, b, m, now);
			v[2] = e->m[m].last.used;
			v[3] = e->m[m].last.denied;
			for (f = 0; f < 4; f++) {
				tel_key(k, sizeof(k), e->id, c->cfg.muxes[m].id, what[f]);
				rte_tel_data_add_dict_u64(d, k, v[f]);
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

struct ha_credit *
ha_credit_start(struct ha_update *u, const struct lb_credit_cfg *cfg, char *err, size_t len)
{
	struct ha_credit *c = lb_zalloc(sizeof(*c), "credits", err, len);
	uint64_t inc = 0;
	uint32_t i;

	if (c == NULL)
		return NULL;
	c->u = u;
	c->cfg = *cfg;
	pthread_mutex_init(&c->lock, NULL);
	/* A new incarnation makes every mux void what an earlier start of ours granted. */
	inc = lb_credit_incarnation();
	ha_grant_init(&c->g, cfg->n_muxes, cfg->ttl_ms, inc, lb_now_ms());
	for (i = 0; i < cfg->n_muxes; i++) {
		if (lb_credit_open(&c->socks[i], cfg, &cfg->muxes[i], &c->pipes[i], err, len) !=
			0) {
			while (i-- > 0)
				nng_close(c->socks[i]);
			free(c);
			return NULL;
		}
		/* An answer comes within the interval, or the mux counts as silent. */
		nng_socket_set_ms(c->socks[i], NNG_OPT_SENDTIMEO, cfg->interval_ms / 2);
		nng_socket_set_ms(c->socks[i], NNG_OPT_RECVTIMEO, cfg->interval_ms / 2);
	}
	if (lb_credit_thread(&c->thread, credit_main, c, err, len) != 0) {
		for (i = 0; i < cfg->n_muxes; i++)
			nng_close(c->socks[i]);
		free(c);
		return NULL;
	}
	DP_TEL_PUBLISH(&tel_lock, tel_c, c);
	if (DP_TEL_REGISTER("/sluice/agent/credits", tel_credits,
		    "Capacity credits: per capped backend and mux, granted, outstanding, used, "
		    "denied.") != 0)
		LB_WARN("credits: telemetry command not registered");
	LB_INFO("credits: granting as %s to %u mux%s (ttl %u ms, every %u ms)", cfg->id,
		cfg->n_muxes, cfg->n_muxes == 1 ? "" : "es", cfg->ttl_ms, cfg->interval_ms);
	return c;
}

void
ha_credit_stop(struct ha_credit *c)
{
	uint32_t i;
	bool stuck = false;

	if (c == NULL)
		return;
	DP_TEL_PUBLISH(&tel_lock, tel_c, NULL);
	c->quit = true;
	pthread_join(c->thread, NULL);
	for (i = 0; i < c->cfg.n_muxes; i++)
		stuck |= !lb_nng_close_within(c->socks[i], CREDIT_CLOSE_MS);
	if (stuck) {
		LB_WARN("credits: a socket did not close within %u ms; exiting without it",
			CREDIT_CLOSE_MS);
		return;
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}
