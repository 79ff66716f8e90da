/* SPDX-License-Identifier: BSD-3-Clause */
/* The mux's end of the capacity-credit channel (mux_credit_chan.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "dp_counters.h"

#include "lb_credit_msg.h"
#include "lb_err.h"
#include "lb_credit_net.h"
#include "lb_log.h"
#include "lb_nng.h"
#include "mux_credit.h"
#include "mux_credit_chan.h"

#define CHAN_TICK_MS 200 /* the thread looks at its quit flag this often */
#define CHAN_CLOSE_MS 2000

struct mux_credit_chan {
	struct mux_credit *credit;
	char id[LB_MSG_ID];
	uint64_t incarnation;
	nng_socket sock;
	pthread_t thread;
	volatile bool quit;
	uint64_t answered;
	uint64_t refused;
};

/* One request in, one reply out (rep0 wants both). */
static void
serve_one(struct mux_credit_chan *ch, nng_msg *req)
{
	struct lb_credit_grant g;
	struct lb_credit_report r;
	char why[LB_MSG_TEXT];
	uint8_t *buf = NULL;
	size_t len;
	nng_msg *rep;

	memset(&r, 0, sizeof(r));
	snprintf(r.mux, sizeof(r.mux), "%s", ch->id);
	r.incarnation = ch->incarnation;
	if (lb_credit_grant_decode(nng_msg_body(req), nng_msg_len(req), &g, why, sizeof(why)) !=
		0) {
		snprintf(r.refused, sizeof(r.refused), "%s", why);
		__atomic_add_fetch(&ch->refused, 1, __ATOMIC_RELAXED);
		LB_WARN("credits: a request refused: %s", why);
	} else if (mux_credit_take(ch->credit, &g, rte_rdtsc(), &r) != 0) {
		__atomic_add_fetch(&ch->refused, 1, __ATOMIC_RELAXED);
		LB_WARN("credits: a grant of %s refused: %s", g.agent, r.refused);
	}
	nng_msg_free(req);
	if (lb_credit_report_encode(&r, &buf, &len) != 0 || nng_msg_alloc(&rep, len) != 0) {
		free(buf);
		return; /* the agent's request times out: it keeps counting what it granted */
	}
	memcpy(nng_msg_body(rep), buf, len);
	free(buf);
	if (nng_sendmsg(ch->sock, rep, 0) != 0)
		nng_msg_free(rep);
	else
		__atomic_add_fetch(&ch->answered, 1, __ATOMIC_RELAXED);
}

static void *
chan_main(void *arg)
{
	struct mux_credit_chan *ch = arg;
	nng_msg *req;

	while (!ch->quit) {
		int rc = lb_nng_recvmsg_wait(ch->sock, &req, CHAN_TICK_MS);

		if (rc == NNG_ETIMEDOUT)
			continue;
		if (rc != 0) {
			if (rc == NNG_ECLOSED)
				break;
			continue;
		}
		serve_one(ch, req);
	}
	return NULL;
}

/* Telemetry's (one channel per mux); NULL once it stops, under tel_lock. */
static struct mux_credit_chan *tel_ch;
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;

/* /sluice/credits: requests answered and refused, then mux_credit_tel()'s. */
static int
tel_credits(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	uint64_t answered, refused;

	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel_lock);
	if (tel_ch != NULL) {
		mux_credit_chan_counts(tel_ch, &answered, &refused);
		rte_tel_data_add_dict_u64(d, "requests", answered);
		rte_tel_data_add_dict_u64(d, "requests_refused", refused);
		mux_credit_tel(tel_ch->credit, d);
	}
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

struct mux_credit_chan *
mux_credit_chan_start(struct mux_credit *c, const struct lb_credit_cfg *cfg, const char *id,
	char *err, size_t len)
{
	struct mux_credit_chan *ch = lb_zalloc(sizeof(*ch), "credits", err, len);

	if (ch == NULL)
		return NULL;
	ch->credit = c;
	snprintf(ch->id, sizeof(ch->id), "%s", id);
	/* A new incarnation tells every agent that what it granted the last one is gone. */
	ch->incarnation = lb_credit_incarnation();
	if (lb_credit_open(&ch->sock, cfg, NULL, NULL, err, len) != 0) {
		free(ch);
		return NULL;
	}
	nng_socket_set_ms(ch->sock, NNG_OPT_SENDTIMEO, CHAN_TICK_MS);
	if (lb_credit_thread(&ch->thread, chan_main, ch, err, len) != 0) {
		nng_close(ch->sock);
		free(ch);
		return NULL;
	}
	DP_TEL_PUBLISH(&tel_lock, tel_ch, ch);
	if (DP_TEL_REGISTER("/sluice/credits", tel_credits,
		    "Capacity credits: requests, grants, renewals; per capped backend what "
		    "its grants held and did.") != 0)
		LB_WARN("credits: telemetry command not registered");
	LB_INFO("credits: listening on %s as %s", cfg->listen, ch->id);
	return ch;
}

void
mux_credit_chan_counts(const struct mux_credit_chan *ch, uint64_t *answered, uint64_t *refused)
{
	*answered = ch != NULL ? __atomic_load_n(&ch->answered, __ATOMIC_RELAXED) : 0;
	*refused = ch != NULL ? __atomic_load_n(&ch->refused, __ATOMIC_RELAXED) : 0;
}

void
mux_credit_chan_stop(struct mux_credit_chan *ch)
{
	if (ch == NULL)
		return;
	DP_TEL_PUBLISH(&tel_lock, tel_ch, NULL);
	ch->quit = true;
	pthread_join(ch->thread, NULL);
	if (!lb_nng_close_within(ch->sock, CHAN_CLOSE_MS)) {
		LB_WARN("credits: the socket did not close within %u ms; exiting without it",
			CHAN_CLOSE_MS);
		return; /* its pipes may still point at nothing of ours but the socket */
	}
	free(ch);
}
