/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawpeer --ctl: the operator socket (nng req0) flooded, fed malformed
 * requests, left unread, and asked to serve a name the certificate does
 * not prove.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "lb_codec.h"

#include "rawpeer.h"

/* ---- the operator's socket ---- */

struct ctl_tally {
	uint64_t ok, failed, malformed, refused, other, noreply;
	uint64_t max_ms, total_ms;
};

static void
ctl_status_msg(uint8_t **buf, size_t *len)
{
	struct lb_msg *m = rp_msg_new(LB_MSG_CTL_REQUEST, 0);

	m->ctl.op = LB_CTL_STATUS;
	snprintf(m->sender, sizeof(m->sender), "ctl");
	if (lb_msg_encode(m, buf, len) != 0) {
		fprintf(stderr, "rawpeer: cannot encode a status request\n");
		exit(1);
	}
	free(m);
}

/* One request, one reply on a req0 socket; the reply sorted into t. */
static void
ctl_call(nng_socket s, const uint8_t *buf, size_t len, struct ctl_tally *t)
{
	struct lb_msg *m = rp_msg_new(0, 0);
	uint64_t t0 = rp_now_ms(), dt;
	char err[LB_MSG_TEXT];
	void *rbuf = NULL;
	size_t rlen = 0;
	int rv;

	rv = nng_send(s, (void *)buf, len, 0);
	if (rv == 0)
		rv = nng_recv(s, &rbuf, &rlen, NNG_FLAG_ALLOC);
	dt = rp_now_ms() - t0;
	t->total_ms += dt;
	if (dt > t->max_ms)
		t->max_ms = dt;
	if (rv != 0) {
		t->noreply++;
	} else if (lb_msg_decode(rbuf, rlen, m, err, sizeof(err)) != 0) {
		t->other++;
	} else if (m->type == LB_MSG_REFUSED) {
		t->refused++;
	} else if (m->type != LB_MSG_CTL_REPLY) {
		t->other++;
	} else if (m->flag) {
		t->ok++;
	} else if (strncmp(m->text, "malformed request", 17) == 0) {
		t->malformed++;
	} else {
		t->failed++;
	}
	lb_msg_free(m);
	free(m);
	if (rbuf != NULL)
		nng_free(rbuf, rlen);
}

/* One request, one reply: the decoded reply, or NULL after printing why. */
static struct lb_msg *
ctl_roundtrip(struct rp *rp, const struct lb_msg *req, const char *what)
{
	struct lb_msg *m = rp_msg_new(0, 0);
	char err[LB_MSG_TEXT];
	uint8_t *buf = NULL;
	void *rbuf = NULL;
	size_t len = 0, rlen = 0;
	int rv;

	if (lb_msg_encode(req, &buf, &len) != 0) {
		printf("%s: cannot encode\n", what);
		free(m);
		return NULL;
	}
	rv = nng_send(rp->sock, buf, len, 0);
	free(buf);
	if (rv == 0)
		rv = nng_recv(rp->sock, &rbuf, &rlen, NNG_FLAG_ALLOC);
	if (rv != 0) {
		printf("%s: no reply: %s\n", what, nng_strerror(rv));
		free(m);
		return NULL;
	}
	rv = lb_msg_decode(rbuf, rlen, m, err, sizeof(err));
	nng_free(rbuf, rlen);
	if (rv != 0) {
		printf("%s: bad reply: %s\n", what, err);
		lb_msg_free(m);
		free(m);
		return NULL;
	}
	return m;
}

/*
 * ctl-as:NAME: a status request over ctl_tls claiming to be operator NAME,
 * proven with --cert and --key (which may well not name NAME): the first
 * request must be challenged; prints the answer to the proven one.
 */
int
rp_ctl_as(struct rp *rp, const char *name)
{
	struct lb_msg *req = rp_msg_new(LB_MSG_CTL_REQUEST, 0), *rep;
	char err[LB_MSG_TEXT];
	size_t n;
	int rc = 1;

	req->ctl.op = LB_CTL_STATUS;
	snprintf(req->sender, sizeof(req->sender), "ctl:rawpeer");
	rep = ctl_roundtrip(rp, req, "ctl-as");
	if (rep == NULL)
		goto out;
	if (rep->type != LB_MSG_CHALLENGE || rp->signer == NULL) {
		printf("ctl-as %s: not challenged (message type %d)%s\n", name, (int)rep->type,
			rp->signer == NULL ? ", and no --cert to prove with" : "");
		goto out;
	}
	snprintf(req->id, sizeof(req->id), "%s", name);
	memcpy(req->nonce, rep->nonce, LB_NONCE_LEN);
	if (lb_proof_sign(rp->signer, rep->nonce, name, req->proof, &n, err, sizeof(err)) != 0) {
		printf("ctl-as %s: proof-failed: %s\n", name, err);
		goto out;
	}
	req->proof_len = (uint16_t)n;
	req->cert = (char *)lb_proof_signer_cert(rp->signer, &n);
	lb_msg_free(rep);
	free(rep);
	rep = ctl_roundtrip(rp, req, "ctl-as");
	req->cert = NULL; /* the signer's */
	if (rep == NULL)
		goto out;
	if (rep->type == LB_MSG_CTL_REPLY && rep->flag)
		printf("ctl-as %s: served\n", name);
	else
		printf("ctl-as %s: not served: %s\n", name, rep->text);
	rc = 0;
out:
	if (rep != NULL) {
		lb_msg_free(rep);
		free(rep);
	}
	free(req);
	return rc;
}

static void
print_tally(const char *what, uint64_t n, const struct ctl_tally *t)
{
	printf("%s requests=%" PRIu64 " ok=%" PRIu64 " failed=%" PRIu64 " malformed=%" PRIu64
	       " refused=%" PRIu64 " other=%" PRIu64 " noreply=%" PRIu64 " max_ms=%" PRIu64
	       " total_ms=%" PRIu64 "\n",
		what, n, t->ok, t->failed, t->malformed, t->refused, t->other, t->noreply,
		t->max_ms, t->total_ms);
}

void
rp_ctl_status(struct rp *rp, long n)
{
	struct ctl_tally t = {0};
	uint8_t *buf;
	size_t len;
	long i;

	ctl_status_msg(&buf, &len);
	nng_socket_set_ms(rp->sock, NNG_OPT_RECVTIMEO, RP_CTL_TIMEOUT_MS);
	for (i = 0; i < n; i++)
		ctl_call(rp->sock, buf, len, &t);
	free(buf);
	print_tally("ctl-status", (uint64_t)n, &t);
}

/*
 * Requests the manager must answer "malformed request" (garbage, a
 * truncated request, a message that is not a request, an operation out of
 * range, nothing at all) or REFUSED (another protocol version).
 */
void
rp_ctl_malformed(struct rp *rp, long n)
{
	struct ctl_tally t = {0};
	struct lb_msg *hello = rp_msg_new(LB_MSG_HELLO, 0);
	uint8_t *st, *hb, junk[16];
	size_t sl, hl, k;
	long i;

	ctl_status_msg(&st, &sl);
	hello->role = LB_ROLE_CTL;
	snprintf(hello->id, sizeof(hello->id), "ctl");
	if (lb_msg_encode(hello, &hb, &hl) != 0)
		exit(1);
	nng_socket_set_ms(rp->sock, NNG_OPT_RECVTIMEO, RP_CTL_TIMEOUT_MS);
	for (i = 0; i < n; i++) {
		uint8_t copy[64];

		if (sl > sizeof(copy))
			exit(1);
		memcpy(copy, st, sl);
		switch (i % 6) {
		case 0:
			for (k = 0; k < sizeof(junk); k++)
				junk[k] = (uint8_t)(0xf7 * (i + (long)k));
			ctl_call(rp->sock, junk, sizeof(junk), &t);
			break;
		case 1:
			ctl_call(rp->sock, hb, hl, &t);
			break;
		case 2:
			ctl_call(rp->sock, st, sl - 1, &t);
			break;
		case 3:
			rp_patch_protocol(copy, sl, 2);
			ctl_call(rp->sock, copy, sl, &t);
			break;
		case 4:
			/* CtlRequest.op is its body's first varint: make it 99. */
			if (sl >= 2 && copy[sl - 2] == 0x08 && copy[sl - 1] == LB_CTL_STATUS)
				copy[sl - 1] = 99;
			ctl_call(rp->sock, copy, sl, &t);
			break;
		default:
			ctl_call(rp->sock, copy, 0, &t);
			break;
		}
	}
	free(st);
	free(hb);
	free(hello);
	print_tally("ctl-malformed", (uint64_t)n, &t);
}

struct ctl_thread {
	const char *url;
	long n;
	struct ctl_tally t;
	const uint8_t *buf;
	size_t len;
};

static void *
ctl_thread_run(void *arg)
{
	struct ctl_thread *c = arg;
	nng_socket s;
	long i;

	if (nng_req0_open(&s) != 0 || nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, RP_CTL_TIMEOUT_MS) ||
		nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, RP_CTL_TIMEOUT_MS) ||
		nng_socket_set_ms(s, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE) ||
		nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES) ||
		nng_dial(s, c->url, NULL, 0) != 0) {
		c->t.noreply = (uint64_t)c->n;
		return NULL;
	}
	for (i = 0; i < c->n; i++)
		ctl_call(s, c->buf, c->len, &c->t);
	nng_close(s);
	return NULL;
}

/* n status requests from `threads` clients at once (ipc:// only). */
void
rp_ctl_parallel(struct rp *rp, long n, long threads)
{
	struct ctl_thread *c = calloc((size_t)threads, sizeof(*c));
	pthread_t *tid = calloc((size_t)threads, sizeof(*tid));
	struct ctl_tally sum = {0};
	uint8_t *buf;
	size_t len;
	long i;

	if (c == NULL || tid == NULL)
		exit(1);
	ctl_status_msg(&buf, &len);
	for (i = 0; i < threads; i++) {
		c[i] = (struct ctl_thread){.url = rp->o.url,
			.n = n / threads + (i < n % threads),
			.buf = buf,
			.len = len};
		if (pthread_create(&tid[i], NULL, ctl_thread_run, &c[i]) != 0)
			exit(1);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		sum.ok += c[i].t.ok;
		sum.failed += c[i].t.failed;
		sum.malformed += c[i].t.malformed;
		sum.refused += c[i].t.refused;
		sum.other += c[i].t.other;
		sum.noreply += c[i].t.noreply;
		sum.total_ms += c[i].t.total_ms;
		if (c[i].t.max_ms > sum.max_ms)
			sum.max_ms = c[i].t.max_ms;
	}
	free(buf);
	free(c);
	free(tid);
	print_tally("ctl-parallel", (uint64_t)n, &sum);
}

/*
 * n status requests on one connection, none of whose replies is read: a
 * raw req0 socket does not wait for a reply before the next request.
 */
void
rp_ctl_noread(struct rp *rp, long n)
{
	nng_socket s;
	uint8_t *buf;
	size_t len;
	long i;
	int rv;

	ctl_status_msg(&buf, &len);
	if ((rv = nng_req0_open_raw(&s)) != 0 ||
		(rv = nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, 2000)) != 0 ||
		(rv = nng_dial(s, rp->o.url, NULL, 0)) != 0) {
		printf("ctl-noread: %s\n", nng_strerror(rv));
		free(buf);
		return;
	}
	for (i = 0; i < n; i++) {
		nng_msg *m;

		if ((rv = nng_msg_alloc(&m, 0)) != 0 ||
			(rv = nng_msg_header_append_u32(m, 0x80000000u | (uint32_t)i)) != 0 ||
			(rv = nng_msg_append(m, buf, len)) != 0)
			break;
		if ((rv = nng_sendmsg(s, m, 0)) != 0) {
			nng_msg_free(m);
			break;
		}
	}
	printf("ctl-noread sent=%ld of %ld%s%s\n", i, n, rv != 0 ? ": " : "",
		rv != 0 ? nng_strerror(rv) : "");
	free(buf);
	/* The connection stays open, unread, until the process exits. */
}
