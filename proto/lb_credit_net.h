/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capacity-credit channel's plumbing, shared by the mux and the agent
 * (docs/architecture.md, "Capacity credits"): its "credits" group and its
 * sockets. A mux listens (nng rep0); an agent dials each mux (req0) and
 * asks every interval_ms: the request carries its grants, the reply the
 * mux's report. Over tls+tcp:// both sides present certificates from the
 * control plane's CA (as members do to the manager); ipc:// is for one
 * host.
 *
 *   mux:    credits = { listen = "tls+tcp://10.99.0.2:7500";
 *                       ca = "ca.pem"; cert = "mux1.pem"; key = "mux1.key"; };
 *   agent:  credits = { muxes = ( { id = "mux1"; url = "tls+tcp://10.99.0.2:7500"; } );
 *                       ttl_ms = 1000; interval_ms = 100;
 *                       ca = "ca.pem"; cert = "host1.pem"; key = "host1.key"; };
 *
 * An agent's id is its member id (the "manager" group's), or `id`.
 */
#ifndef LB_CREDIT_NET_H
#define LB_CREDIT_NET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>
#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_codec.h"
#include "lb_config.h"

#define LB_CREDIT_MUXES 16
#define LB_CREDIT_TTL_MS 1000
#define LB_CREDIT_INTERVAL_MS 100

struct lb_credit_peer {
	char id[LB_MSG_ID];
	char url[LB_MSG_URL];
};

struct lb_credit_cfg {
	char id[LB_MSG_ID];
	char listen[LB_MSG_URL]; /* a mux's */
	uint32_t n_muxes;	 /* an agent's */
	struct lb_credit_peer muxes[LB_CREDIT_MUXES];
	uint32_t ttl_ms;
	uint32_t interval_ms;
	char ca[LB_CFG_FILE_LEN];
	char cert[LB_CFG_FILE_LEN];
	char key[LB_CFG_FILE_LEN];
};

/*
 * Parse the optional "credits" group of the file at path (root its root)
 * for a mux (agent false: listen) or an agent (muxes, ttl_ms,
 * interval_ms); id is the member id, or NULL. Returns 1 when the group is
 * there, 0 when not, -LB_ECONFIG with err naming the field.
 */
int lb_credit_cfg_load(const config_setting_t *root, const char *path, bool agent, const char *id,
	struct lb_credit_cfg *cfg, struct lb_cfg_err *err);

/*
 * A TLS configuration: our certificate and key, peers checked against ca
 * (required both ways); server_name checked in a client's (may be NULL
 * for a server). 0, or an nng error with what failed in err.
 */
int lb_tls_config(nng_tls_config **out, bool server, const char *ca, const char *cert,
	const char *key, const char *server_name, char *err, size_t len);

/*
 * Open the socket of one end: a mux's rep0 listening on cfg->listen, or
 * an agent's req0 dialing url (non-blocking: nng redials by itself), with
 * TLS for tls+tcp://. pipes (NULL: not kept) counts the agent's live
 * connections to that mux, from before the first dial. 0, or an nng error
 * with err set.
 */
int lb_credit_open(nng_socket *s, const struct lb_credit_cfg *cfg, const struct lb_credit_peer *mux,
	int *pipes, char *err, size_t len);

/*
 * Start an end's thread, run(arg), named sluice-credits. 0, or -1 with
 * err set (what the end opened is the caller's to close).
 */
int lb_credit_thread(pthread_t *t, void *(*run)(void *), void *arg, char *err, size_t len);

/*
 * A new incarnation for a credit peer's start (never 0): random, so that
 * what the other side granted or was granted by an earlier start of this
 * one is void (docs/architecture.md, "Capacity credits").
 */
uint64_t lb_credit_incarnation(void);

#endif /* LB_CREDIT_NET_H */
