/* SPDX-License-Identifier: BSD-3-Clause */
/* The capacity-credit channel's configuration and sockets (lb_credit_net.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lb_clock.h"
#include "lb_credit_msg.h"
#include "lb_credit_net.h"

#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include "lb_err.h"
#include "lb_file.h"
#include "lb_member.h"

static int
check_url(const config_setting_t *s, const char *url, char *out, struct lb_cfg_err *err)
{
	if (strncmp(url, "tls+tcp://", 10) != 0 && strncmp(url, "ipc://", 6) != 0)
		return lb_cfg_error(err, s, NULL,
			"\"%s\": credits go over tls+tcp:// (mutual TLS) or ipc://", url);
	if (strlen(url) >= LB_MSG_URL)
		return lb_cfg_error(err, s, NULL, "URL too long");
	snprintf(out, LB_MSG_URL, "%s", url);
	return 0;
}

static int
load_muxes(const config_setting_t *g, struct lb_credit_cfg *cfg, struct lb_cfg_err *err)
{
	static const char *const fields[] = {"id", "url", NULL};
	const config_setting_t *l = config_setting_get_member(g, "muxes");
	int i, k, n, rc;

	if (l == NULL || !config_setting_is_list(l) || (n = config_setting_length(l)) < 1 ||
		n > LB_CREDIT_MUXES)
		return lb_cfg_error(err, l != NULL ? l : g, l != NULL ? NULL : "muxes",
			"a list of 1 to %u muxes: ( { id = \"mux1\"; url = \"tls+tcp://...\"; } )",
			LB_CREDIT_MUXES);
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
		const char *id = NULL, *url = NULL;

		if ((rc = lb_cfg_group(e, fields, "a mux is { id = ...; url = ...; }", err)) != 0 ||
			(rc = lb_cfg_get_string(e, "id", true, NULL, &id, err)) != 0 ||
			(rc = lb_cfg_get_string(e, "url", true, NULL, &url, err)) != 0 ||
			(rc = check_url(config_setting_get_member(e, "url"), url, cfg->muxes[i].url,
				 err)) != 0)
			return rc;
		if (id[0] == 0 || strlen(id) >= LB_MSG_ID)
			return lb_cfg_error(err, config_setting_get_member(e, "id"), NULL,
				"an id of 1 to %u characters", LB_MSG_ID - 1);
		for (k = 0; k < i; k++)
			if (strcmp(cfg->muxes[k].id, id) == 0 ||
				strcmp(cfg->muxes[k].url, cfg->muxes[i].url) == 0)
				return lb_cfg_error(err, e, NULL,
					"mux \"%s\" (%s) listed twice: each mux once", id,
					cfg->muxes[i].url);
		snprintf(cfg->muxes[i].id, LB_MSG_ID, "%s", id);
	}
	cfg->n_muxes = (uint32_t)n;
	return 0;
}

int
lb_credit_cfg_load(const config_setting_t *root, const char *path, bool agent, const char *id,
	struct lb_credit_cfg *cfg, struct lb_cfg_err *err)
{
	static const char *const mux_fields[] = {"listen", "ca", "cert", "key", NULL};
	static const char *const agent_fields[] = {
		"id", "muxes", "ttl_ms", "interval_ms", "ca", "cert", "key", NULL};
	const struct lb_cfg_u32 nums[] = {
		{"ttl_ms", LB_CREDIT_TTL_MIN, LB_CREDIT_TTL_MAX, LB_CREDIT_TTL_MS, false,
			&cfg->ttl_ms},
		{"interval_ms", 10, 10000, LB_CREDIT_INTERVAL_MS, false, &cfg->interval_ms},
	};
	const config_setting_t *g = config_setting_get_member(root, "credits");
	const char *v = NULL;
	bool tls = false;
	uint32_t i;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (g == NULL)
		return 0;
	if ((rc = lb_cfg_group(
		     g, agent ? agent_fields : mux_fields, "credits is a group { ... }", err)) != 0)
		return rc;
	if (!agent) {
		if ((rc = lb_cfg_get_string(g, "listen", true, NULL, &v, err)) != 0 ||
			(rc = check_url(
				 config_setting_get_member(g, "listen"), v, cfg->listen, err)) != 0)
			return rc;
		tls = strncmp(cfg->listen, "tls+tcp://", 10) == 0;
	} else {
		if ((rc = load_muxes(g, cfg, err)) != 0 ||
			(rc = lb_cfg_get_u32s(g, nums, sizeof(nums) / sizeof(nums[0]), err)) != 0 ||
			(rc = lb_cfg_get_string(g, "id", id == NULL, id, &v, err)) != 0)
			return rc;
		if (cfg->interval_ms * 2 > cfg->ttl_ms)
			return lb_cfg_error(err,
				config_setting_get_member(g, "interval_ms") != NULL
					? config_setting_get_member(g, "interval_ms")
					: config_setting_get_member(g, "ttl_ms"),
				NULL,
				"%u ms: at most half of ttl_ms (%u), or grants lapse between "
				"two requests",
				cfg->interval_ms, cfg->ttl_ms);
		if (v[0] == 0 || strlen(v) >= LB_MSG_ID)
			return lb_cfg_error(
				err, g, "id", "an id of 1 to %u characters", LB_MSG_ID - 1);
		snprintf(cfg->id, sizeof(cfg->id), "%s", v);
		for (i = 0; i < cfg->n_muxes; i++)
			tls = tls || strncmp(cfg->muxes[i].url, "tls+tcp://", 10) == 0;
	}
	rc = lb_cfg_tls_files(g, tls, path, cfg->ca, cfg->cert, cfg->key, err);
	return rc != 0 ? rc : 1;
}

int
lb_tls_config(nng_tls_config **out, bool server, const char *ca, const char *cert, const char *key,
	const char *server_name, char *err, size_t len)
{
	char *c = NULL, *k = NULL;
	const char *what = "allocating the TLS configuration";
	int rc;

	*out = NULL;
	rc = nng_tls_config_alloc(out, server ? NNG_TLS_MODE_SERVER : NNG_TLS_MODE_CLIENT);
	if (rc == 0) {
		what = ca;
		rc = nng_tls_config_ca_file(*out, ca);
	}
	if (rc == 0) {
		lb_read_file(cert, 1 << 20, &c, NULL);
		lb_read_file(key, 1 << 20, &k, NULL);
		what = c == NULL ? cert : key;
		rc = c == NULL || k == NULL ? NNG_ENOENT
					    : nng_tls_config_own_cert(*out, c, k, NULL);
		if (rc != 0 && c != NULL && k != NULL)
			what = "the certificate and key";
	}
	free(c);
	free(k);
	if (rc == 0 && server_name != NULL) {
		what = "the server name";
		rc = nng_tls_config_server_name(*out, server_name);
	}
	if (rc == 0) {
		what = "requiring the peer's certificate";
		rc = nng_tls_config_auth_mode(*out, NNG_TLS_AUTH_MODE_REQUIRED);
	}
	if (rc != 0) {
		snprintf(err, len, "TLS: %s: %s", what, nng_strerror(rc));
		if (*out != NULL)
			nng_tls_config_free(*out);
		*out = NULL;
	}
	return rc;
}

/*
 * nng's pipe events of a socket whose live pipes are counted in *arg. A
 * pipe that has had ADD_PRE always gets REM_POST, even when it is refused
 * before ADD_POST (nng 1.5): counting from ADD_PRE keeps the two paired.
 */
static void
count_pipes(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void)p;
	__atomic_add_fetch((int *)arg, ev == NNG_PIPE_EV_ADD_PRE ? 1 : -1, __ATOMIC_RELAXED);
}

int
lb_credit_open(nng_socket *s, const struct lb_credit_cfg *cfg, const struct lb_credit_peer *mux,
	int *pipes, char *err, size_t len)
{
	const char *url = mux != NULL ? mux->url : cfg->listen;
	bool tls = strncmp(url, "tls+tcp://", 10) == 0;
	nng_tls_config *tc = NULL;
	nng_listener l;
	nng_dialer d;
	int rc;

	rc = mux != NULL ? nng_req0_open(s) : nng_rep0_open(s);
	if (rc != 0) {
		snprintf(err, len, "credits: socket: %s", nng_strerror(rc));
		return rc;
	}
	if (tls && (rc = lb_tls_config(&tc, mux == NULL, cfg->ca, cfg->cert, cfg->key,
			    mux != NULL ? mux->id : NULL, err, len)) != 0) {
		nng_close(*s);
		return rc;
	}
	if (mux == NULL) {
		rc = nng_listener_create(&l, *s, url);
		if (rc == 0 && tc != NULL)
			rc = nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, tc);
		if (rc == 0)
			rc = nng_listener_start(l, 0);
	} else {
		/* A request is answered or given up within one interval: never resent late. */
		nng_socket_set_ms(*s, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
		nng_socket_set_ms(*s, NNG_OPT_RECONNMINT, 100);
		nng_socket_set_ms(*s, NNG_OPT_RECONNMAXT, 1000);
		if (pipes != NULL &&
			((rc = nng_pipe_notify(*s, NNG_PIPE_EV_ADD_PRE, count_pipes, pipes)) != 0 ||
				(rc = nng_pipe_notify(
					 *s, NNG_PIPE_EV_REM_POST, count_pipes, pipes)) != 0)) {
			snprintf(err, len, "credits: pipe events: %s", nng_strerror(rc));
			nng_close(*s);
			return rc;
		}
		rc = nng_dialer_create(&d, *s, url);
		if (rc == 0 && tc != NULL)
			rc = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, tc);
		if (rc == 0)
			rc = nng_dialer_start(d, NNG_FLAG_NONBLOCK);
	}
	if (tc != NULL)
		nng_tls_config_free(tc); /* the listener or dialer holds its own reference */
	if (rc != 0) {
		snprintf(err, len, "credits: %s: %s", url, nng_strerror(rc));
		nng_close(*s);
	}
	return rc;
}

int
lb_credit_thread(pthread_t *t, void *(*run)(void *), void *arg, char *err, size_t len)
{
	if (pthread_create(t, NULL, run, arg) != 0) {
		snprintf(err, len, "credits: cannot start its thread");
		return -1;
	}
	pthread_setname_np(*t, "sluice-credits");
	return 0;
}

uint64_t
lb_credit_incarnation(void)
{
	uint64_t inc = 0;

	if (getrandom(&inc, sizeof(inc), 0) != sizeof(inc) || inc == 0)
		inc = lb_now_us() | 1; /* no entropy yet: still new for this start */
	return inc;
}
