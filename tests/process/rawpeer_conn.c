/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawpeer's connection: the nng socket (pair1, or req0 for --ctl) with its
 * TLS, sends of messages the real codec encoded (and a step may break),
 * and the receive loop that prints every message, proves a CHALLENGE and
 * votes yes when told to.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_codec.h"
#include "lb_err.h"
#include "lb_file.h"

#include "rawpeer.h"

static const char *const rp_type_names[RP_TYPES] = {
	[0] = "NONE",
	[LB_MSG_HELLO] = "HELLO",
	[LB_MSG_WELCOME] = "WELCOME",
	[LB_MSG_PREPARE] = "PREPARE",
	[LB_MSG_VOTE] = "VOTE",
	[LB_MSG_COMMIT] = "COMMIT",
	[LB_MSG_ABORT] = "ABORT",
	[LB_MSG_SNAPSHOT_REQUEST] = "SNAPSHOT_REQUEST",
	[LB_MSG_SNAPSHOT_CHUNK] = "SNAPSHOT_CHUNK",
	[LB_MSG_STATUS] = "STATUS",
	[LB_MSG_REFUSED] = "REFUSED",
	[LB_MSG_CTL_REQUEST] = "CTL_REQUEST",
	[LB_MSG_CTL_REPLY] = "CTL_REPLY",
	[LB_MSG_CHALLENGE] = "CHALLENGE",
	[LB_MSG_SYNC] = "SYNC",
	[LB_MSG_SHARES] = "SHARES",
};

uint64_t
rp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
rp_hex(const uint8_t *d, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	if (n == 0)
		out[0] = '\0';
}

int
rp_unhex(const char *s, uint8_t out[LB_DIGEST_LEN])
{
	unsigned int v;
	int i;

	memset(out, 0, LB_DIGEST_LEN);
	if (s == NULL || strcmp(s, "-") == 0)
		return 0;
	if (strlen(s) != 2 * LB_DIGEST_LEN)
		return -1;
	for (i = 0; i < LB_DIGEST_LEN; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

const char *
rp_type_name(enum lb_msg_type t)
{
	return (unsigned)t < RP_TYPES && rp_type_names[t] != NULL ? rp_type_names[t] : "?";
}

int
rp_type_of(const char *name)
{
	int t;

	for (t = 1; t < RP_TYPES; t++)
		if (strcmp(name, rp_type_names[t]) == 0)
			return t;
	return -1;
}

/* The Envelope's first field is `protocol` (tag 0x08), a one-byte varint. */
void
rp_patch_protocol(uint8_t *buf, size_t len, long proto)
{
	if (len >= 2 && buf[0] == 0x08 && buf[1] < 0x80)
		buf[1] = (uint8_t)proto;
}

struct lb_msg *
rp_msg_new(enum lb_msg_type type, uint64_t version)
{
	struct lb_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		fprintf(stderr, "rawpeer: out of memory\n");
		exit(1);
	}
	m->type = type;
	m->version = version;
	return m;
}

/* ---- the connection ---- */

static void
pipe_removed(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct rp *rp = arg;

	(void)p;
	(void)ev;
	__atomic_add_fetch(&rp->closed, 1, __ATOMIC_ACQ_REL);
	printf("closed\n");
	fflush(stdout);
}

static int
tls_config(struct rp *rp, nng_tls_config **out)
{
	const struct rp_opts *o = &rp->o;
	char *cert = NULL, *key = NULL;
	nng_tls_config *c;
	int rv;

	*out = NULL;
	if (strncmp(o->url, "tls+tcp://", 10) != 0)
		return 0;
	rv = nng_tls_config_alloc(&c, o->listen ? NNG_TLS_MODE_SERVER : NNG_TLS_MODE_CLIENT);
	if (rv != 0)
		return rv;
	if (o->ca != NULL)
		rv = nng_tls_config_ca_file(c, o->ca);
	if (rv == 0 && o->cert != NULL) {
		lb_read_file(o->cert, 1 << 20, &cert, NULL);
		lb_read_file(o->key, 1 << 20, &key, NULL);
		rv = cert == NULL || key == NULL ? NNG_ENOENT
						 : nng_tls_config_own_cert(c, cert, key, NULL);
	}
	if (rv == 0 && !o->listen)
		rv = nng_tls_config_server_name(c, o->server_name);
	if (rv == 0)
		rv = nng_tls_config_auth_mode(
			c, o->ca != NULL ? NNG_TLS_AUTH_MODE_REQUIRED : NNG_TLS_AUTH_MODE_NONE);
	free(cert);
	free(key);
	if (rv != 0) {
		nng_tls_config_free(c);
		return rv;
	}
	*out = c;
	return 0;
}

/* The listener or the dialer started (rv 0: 0, said with done), or not (3, said with failed). */
static int
started(const struct rp *rp, int rv, const char *failed, const char *done)
{
	if (rv != 0) {
		printf("%s: %s\n", failed, nng_strerror(rv));
		return 3;
	}
	printf("%s %s\n", done, rp->o.url);
	fflush(stdout);
	return 0;
}

int
rp_open(struct rp *rp)
{
	nng_dialer d;
	nng_listener l;
	int rv;

	rv = rp->o.ctl ? nng_req0_open(&rp->sock) : nng_pair1_open(&rp->sock);
	if (rv == 0)
		rv = nng_socket_set_size(rp->sock, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES);
	if (rv == 0)
		rv = nng_socket_set_ms(rp->sock, NNG_OPT_SENDTIMEO, RP_CTL_TIMEOUT_MS);
	if (rv == 0 && rp->o.ctl)
		rv = nng_socket_set_ms(rp->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	if (rv == 0)
		rv = nng_pipe_notify(rp->sock, NNG_PIPE_EV_REM_POST, pipe_removed, rp);
	if (rv == 0)
		rv = tls_config(rp, &rp->tls);
	if (rv != 0) {
		fprintf(stderr, "rawpeer: %s\n", nng_strerror(rv));
		return 2;
	}
	if (rp->tls != NULL && rp->o.cert != NULL && !rp->o.listen) {
		char err[LB_MSG_TEXT];

		rp->signer = lb_proof_signer_load(rp->o.cert, rp->o.key, err, sizeof(err));
		if (rp->signer == NULL) {
			fprintf(stderr, "rawpeer: %s\n", err);
			return 2;
		}
	}
	if (rp->o.listen) {
		rv = nng_listener_create(&l, rp->sock, rp->o.url);
		if (rv == 0 && rp->tls != NULL)
			rv = nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, rp->tls);
		if (rv == 0)
			rv = nng_listener_start(l, 0);
		return started(rp, rv, "listen-failed", "listening");
	}
	rv = nng_dialer_create(&d, rp->sock, rp->o.url);
	if (rv == 0 && rp->tls != NULL)
		rv = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, rp->tls);
	/*
	 * One connection: once dropped it stays dropped ("closed"), rather than
	 * nng redialing behind the script's back (and leaving a handshake
	 * half done when rawpeer exits).
	 */
	if (rv == 0)
		rv = nng_dialer_set_ms(d, NNG_OPT_RECONNMINT, 3600 * 1000);
	if (rv == 0)
		rv = nng_dialer_set_ms(d, NNG_OPT_RECONNMAXT, 3600 * 1000);
	/* Synchronous: a refused handshake is an error here, not a retry. */
	if (rv == 0)
		rv = nng_dialer_start(d, 0);
	return started(rp, rv, "dial-failed", "connected");
}

int
rp_send_raw(struct rp *rp, const void *buf, size_t len)
{
	int rv = nng_send(rp->sock, (void *)buf, len, 0);

	if (rv != 0)
		printf("send-failed: %s\n", nng_strerror(rv));
	return rv;
}

/* Encode and send; `patch` may break the encoding first. */
int
rp_send_msg(struct rp *rp, struct lb_msg *m, void (*patch)(uint8_t *, size_t, long), long arg)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	snprintf(m->sender, sizeof(m->sender), "%s", rp->o.id);
	rc = lb_msg_encode(m, &buf, &len);
	if (rc != 0) {
		printf("encode-failed: %s\n", lb_strerror(rc));
		return rc;
	}
	if (patch != NULL)
		patch(buf, len, arg);
	rc = rp_send_raw(rp, buf, len);
	free(buf);
	return rc;
}

/* ---- receiving ---- */

static void
print_msg(const struct lb_msg *m)
{
	char d[2 * LB_DIGEST_LEN + 1];

	rp_hex(m->digest, LB_DIGEST_LEN, d);
	printf("recv %s version=%" PRIu64 " base=%" PRIu64
	       " flag=%d id=%s sender=%s digest=%s index=%u count=%u protocol=%u text=\"%s\"\n",
		rp_type_name(m->type), m->version, m->base_version, m->flag ? 1 : 0, m->id,
		m->sender, d, m->index, m->count, m->protocol, m->text);
}

/* The last HELLO again, with a proof of its id over the CHALLENGE's nonce. */
static void
prove(struct rp *rp, const struct lb_msg *ch)
{
	struct lb_msg *h;
	size_t n, cert_len;
	char err[LB_MSG_TEXT];

	if (rp->signer == NULL || rp->hello == NULL) {
		printf("no proof: %s\n", rp->signer == NULL ? "no certificate" : "no hello sent");
		return;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return;
	*h = *rp->hello;
	memcpy(h->nonce, ch->nonce, LB_NONCE_LEN);
	if (lb_proof_sign(rp->signer, ch->nonce, h->id, h->proof, &n, err, sizeof(err)) != 0) {
		printf("proof-failed: %s\n", err);
		free(h);
		return;
	}
	h->proof_len = (uint16_t)n;
	h->body = (char *)lb_proof_signer_cert(rp->signer, &cert_len);
	if (rp_send_msg(rp, h, NULL, 0) == 0)
		printf("sent HELLO id=%s with a proof\n", h->id);
	free(h);
}

static void
answer(struct rp *rp, const struct lb_msg *m)
{
	struct lb_msg *v;

	if (m->type == LB_MSG_CHALLENGE) {
		prove(rp, m);
		return;
	}
	/* A member's vote:VERSION step votes for what it was last prepared. */
	if (m->type == LB_MSG_PREPARE)
		memcpy(rp->prep_digest, m->digest, LB_DIGEST_LEN);
	if (!rp->autovote || m->type != LB_MSG_PREPARE)
		return;
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return;
	v->type = LB_MSG_VOTE;
	v->version = m->version;
	memcpy(v->digest, m->digest, LB_DIGEST_LEN);
	v->flag = true;
	if (rp_send_msg(rp, v, NULL, 0) == 0)
		printf("sent VOTE version=%" PRIu64 " yes (as %s)\n", v->version, rp->o.id);
	free(v);
}

/* Receive and print until `until_ms`, or until a message of `stop_type` arrives. */
void
rp_receive(struct rp *rp, uint64_t until_ms, int stop_type)
{
	struct lb_msg *m = calloc(1, sizeof(*m));
	char err[LB_MSG_TEXT];

	if (m == NULL)
		return;
	for (;;) {
		uint64_t now = rp_now_ms();
		void *buf = NULL;
		size_t len = 0;
		int rv;

		if (stop_type > 0 && rp->received[stop_type] > rp->consumed[stop_type])
			break;
		if (now >= until_ms)
			break;
		nng_socket_set_ms(rp->sock, NNG_OPT_RECVTIMEO,
			(nng_duration)(until_ms - now < RP_TICK_MS ? until_ms - now : RP_TICK_MS));
		rv = nng_recv(rp->sock, &buf, &len, NNG_FLAG_ALLOC);
		if (rv == NNG_ETIMEDOUT)
			continue;
		if (rv != 0) {
			printf("recv-failed: %s\n", nng_strerror(rv));
			break;
		}
		if (lb_msg_decode(buf, len, m, err, sizeof(err)) != 0) {
			rp->malformed++;
			printf("recv-malformed %zu bytes: %s\n", len, err);
		} else {
			rp->received[m->type]++;
			if (m->type != LB_MSG_STATUS || !rp->o.quiet_status)
				print_msg(m);
			answer(rp, m);
		}
		lb_msg_free(m);
		nng_free(buf, len);
		fflush(stdout);
	}
	free(m);
}
