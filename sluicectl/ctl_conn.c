/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl's connection to the manager: a req0 socket dialed at once (an
 * interval timer bounds the dial for peers that never answer a SYN or a
 * TLS hello), mutual TLS from --ca/--cert/--key, and over TLS the proof of
 * the name on our certificate (lb_proof.h) when the manager challenges.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>

#include "ctl.h"
#include "lb_err.h"
#include "lb_file.h"

static char ctl_dial_timeout_msg[512];

/* The dial outlived --timeout (a dropped SYN, a peer that never answers TLS). */
static void
ctl_dial_alarm(int sig)
{
	ssize_t n;

	(void)sig;
	n = write(STDERR_FILENO, ctl_dial_timeout_msg, strlen(ctl_dial_timeout_msg));
	(void)n;
	_exit(CTL_EXIT_UNREACHABLE);
}

static void
ctl_dial_timer(double seconds)
{
	struct itimerval it = {0};

	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
	/* A zero timer would be no timer: --timeout is at least a microsecond. */
	if (seconds > 0 && it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* A PEM file (a certificate or a key) as a string. */
static int
ctl_read_pem(const char *opt, const char *path, char **out)
{
	int rc = lb_read_file(path, CTL_MAX_PEM, out, NULL);

	if (rc != 0)
		return ctl_usage_error(NULL, "%s %s: %s", opt, path,
			rc == -EFBIG ? "too large for a PEM file" : strerror(-rc));
	return 0;
}

/* nng_tls_config_free() does not take NULL. */
static void
ctl_tls_config_free(nng_tls_config *cfg)
{
	if (cfg != NULL)
		nng_tls_config_free(cfg);
}

static int
ctl_tls_config(const struct ctl_opts *o, nng_tls_config **out)
{
	char *cert = NULL, *key = NULL;
	nng_tls_config *cfg;
	int rv, rc;

	if (o->ca == NULL || o->cert == NULL || o->key == NULL)
		return ctl_usage_error(NULL,
			"%s: tls+tcp needs --ca, --cert and --key (or SLUICE_CA, SLUICE_CERT, "
			"SLUICE_KEY)",
			o->url);
	rv = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_CLIENT);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: TLS: %s\n", nng_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	rv = nng_tls_config_ca_file(cfg, o->ca);
	if (rv != 0) {
		nng_tls_config_free(cfg);
		return ctl_usage_error(NULL, "--ca %s: %s", o->ca, nng_strerror(rv));
	}
	/*
	 * nng_tls_config_cert_key_file() wants both in one file; ours are
	 * two (as make-certs.sh writes them), so load them as PEM text.
	 */
	rc = ctl_read_pem("--cert", o->cert, &cert);
	if (rc == 0)
		rc = ctl_read_pem("--key", o->key, &key);
	if (rc == 0) {
		rv = nng_tls_config_own_cert(cfg, cert, key, NULL);
		if (rv != 0)
			rc = ctl_usage_error(
				NULL, "--cert %s, --key %s: %s", o->cert, o->key, nng_strerror(rv));
	}
	free(cert);
	if (key != NULL) {
		explicit_bzero(key, strlen(key));
		free(key);
	}
	if (rc != 0) {
		nng_tls_config_free(cfg);
		return rc;
	}
	rv = nng_tls_config_server_name(cfg, o->server_name);
	if (rv == 0)
		rv = nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_REQUIRED);
	if (rv != 0) {
		nng_tls_config_free(cfg);
		fprintf(stderr, "sluicectl: TLS: %s\n", nng_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	*out = cfg;
	return 0;
}

int
ctl_connect(const struct ctl_opts *o, struct ctl_conn *c)
{
	nng_duration ms = (nng_duration)(o->timeout * 1000.0);
	bool tls = strncmp(o->url, "tls+", 4) == 0;
	nng_tls_config *tcfg = NULL;
	nng_dialer d;
	int rv, rc;

	memset(c, 0, sizeof(*c));
	c->url = o->url;
	c->timeout = o->timeout;
	if (!tls && o->tls_on_cmdline)
		return ctl_usage_error(
			NULL, "--ca, --cert and --key apply only to tls+tcp:// URLs");
	if (tls && (rc = ctl_tls_config(o, &tcfg)) != 0)
		return rc;
	if (tls) {
		char err[256];

		c->signer = lb_proof_signer_load(o->cert, o->key, err, sizeof(err));
		if (c->signer == NULL) {
			ctl_tls_config_free(tcfg);
			return ctl_usage_error(
				NULL, "--cert %s, --key %s: %s", o->cert, o->key, err);
		}
	}

	rc = CTL_EXIT_UNREACHABLE;
	rv = nng_req0_open(&c->sock);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: nng: %s\n", nng_strerror(rv));
		goto fail_tls;
	}
	/*
	 * A change must never be sent twice because a reply was slow: req0
	 * resends on a timer unless told not to. We wait instead, bounded
	 * by the receive timeout.
	 */
	if ((rv = nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE)) ||
		(rv = nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO, ms)) ||
		(rv = nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, ms)) ||
		(rv = nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, LB_MSG_MAX_BYTES))) {
		fprintf(stderr, "sluicectl: nng: %s\n", nng_strerror(rv));
		goto fail_sock;
	}
	rv = nng_dialer_create(&d, c->sock, o->url);
	if (rv != 0) {
		rc = ctl_usage_error(NULL, "--manager %s: %s", o->url, nng_strerror(rv));
		goto fail_sock;
	}
	/* The dialer holds its own reference to the TLS configuration. */
	if (tcfg != NULL && (rv = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, tcfg)) != 0) {
		fprintf(stderr, "sluicectl: %s: TLS: %s\n", o->url, nng_strerror(rv));
		goto fail_sock;
	}

	snprintf(ctl_dial_timeout_msg, sizeof(ctl_dial_timeout_msg),
		"sluicectl: cannot connect to the manager at %s: no answer within %g s\n", o->url,
		o->timeout);
	signal(SIGALRM, ctl_dial_alarm);
	ctl_dial_timer(o->timeout);
	rv = nng_dialer_start(d, 0);
	ctl_dial_timer(0);
	signal(SIGALRM, SIG_DFL);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: cannot connect to the manager at %s: %s\n", o->url,
			nng_strerror(rv));
		if (rv == NNG_ECONNREFUSED)
			fprintf(stderr, "sluicectl: is sluice-manager running and listening there? "
					"(--manager, SLUICE_MANAGER)\n");
		/* nng says no more than "Cryptographic error": name the suspects. */
		if (tls && (rv == NNG_ECRYPTO || rv == NNG_EPEERAUTH || rv == NNG_ECONNSHUT))
			fprintf(stderr,
				"sluicectl: the TLS handshake failed: is the manager's certificate "
				"signed by --ca %s and named %s (--server-name), does the manager "
				"trust the CA of --cert %s, and is --key its key?\n",
				o->ca, o->server_name, o->cert);
		goto fail_sock;
	}
	ctl_tls_config_free(tcfg);
	return 0;

fail_sock:
	nng_close(c->sock);
fail_tls:
	ctl_tls_config_free(tcfg);
	lb_proof_signer_free(c->signer);
	c->signer = NULL;
	return rc;
}

void
ctl_close(struct ctl_conn *c)
{
	nng_close(c->sock);
	lb_proof_signer_free(c->signer);
	c->signer = NULL;
}

/*
 * req as sent: over TLS, once the manager has challenged this connection,
 * with the proof of our certificate's name. *out is req itself, or a copy
 * (free() it, not lb_msg_free(): it shares req's buffers).
 */
static int
ctl_signed(struct ctl_conn *c, const struct lb_msg *req, struct lb_msg **out)
{
	struct lb_msg *r;
	char err[256];
	size_t n;

	*out = (struct lb_msg *)req;
	if (c->signer == NULL || !c->have_nonce)
		return 0;
	if ((r = malloc(sizeof(*r))) == NULL) {
		fprintf(stderr, "sluicectl: out of memory\n");
		return CTL_EXIT_REFUSED;
	}
	*r = *req;
	snprintf(r->id, sizeof(r->id), "%s", lb_proof_signer_name(c->signer));
	memcpy(r->nonce, c->nonce, LB_NONCE_LEN);
	r->cert = (char *)lb_proof_signer_cert(c->signer, &n);
	if (lb_proof_sign(c->signer, c->nonce, r->id, r->proof, &n, err, sizeof(err)) != 0) {
		free(r);
		fprintf(stderr, "sluicectl: cannot sign the request: %s\n", err);
		return CTL_EXIT_REFUSED;
	}
	r->proof_len = (uint16_t)n;
	*out = r;
	return 0;
}

/* One request sent, one reply decoded (of any type); 0 or an exit code. */
static int
ctl_call_once(struct ctl_conn *c, const struct lb_msg *req, struct lb_msg *rep)
{
	struct lb_msg *sent;
	char err[256] = "";
	uint8_t *buf = NULL;
	size_t len = 0;
	int rv;

	if ((rv = ctl_signed(c, req, &sent)) != 0)
		return rv;
	rv = lb_msg_encode(sent, &buf, &len);
	if (sent != req)
		free(sent);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: cannot encode the request: %s\n", lb_strerror(rv));
		return CTL_EXIT_REFUSED;
	}
	rv = nng_send(c->sock, buf, len, 0);
	free(buf);
	if (rv != 0) {
		fprintf(stderr, "sluicectl: cannot send to the manager at %s: %s\n", c->url,
			nng_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	buf = NULL;
	rv = nng_recv(c->sock, &buf, &len, NNG_FLAG_ALLOC);
	if (rv == NNG_ETIMEDOUT) {
		fprintf(stderr, "sluicectl: no reply from the manager at %s within %g s\n", c->url,
			c->timeout);
		return CTL_EXIT_UNREACHABLE;
	}
	if (rv != 0) {
		fprintf(stderr, "sluicectl: no reply from the manager at %s: %s\n", c->url,
			nng_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	rv = lb_msg_decode(buf, len, rep, err, sizeof(err));
	nng_free(buf, len);
	if (rv == -LB_EPROTOCOL) {
		fprintf(stderr,
			"sluicectl: the manager speaks protocol %" PRIu32
			", this sluicectl speaks %d: use the sluicectl of the same release\n",
			rep->protocol, LB_PROTOCOL);
		return CTL_EXIT_UNREACHABLE;
	}
	if (rv != 0) {
		fprintf(stderr, "sluicectl: bad reply from the manager: %s\n",
			err[0] != '\0' ? err : lb_strerror(rv));
		return CTL_EXIT_UNREACHABLE;
	}
	if (rep->type == LB_MSG_REFUSED) {
		fprintf(stderr, "sluicectl: refused by the manager: %s\n", rep->text);
		return CTL_EXIT_REFUSED;
	}
	return 0;
}

int
ctl_call(struct ctl_conn *c, const struct lb_msg *req, struct lb_msg *rep)
{
	int rc = ctl_call_once(c, req, rep);

	/* Challenged: first on a connection, or again after a reconnect. */
	if (rc == 0 && rep->type == LB_MSG_CHALLENGE && c->signer != NULL &&
		(!c->have_nonce || memcmp(c->nonce, rep->nonce, LB_NONCE_LEN) != 0)) {
		memcpy(c->nonce, rep->nonce, LB_NONCE_LEN);
		c->have_nonce = true;
		lb_msg_free(rep);
		rc = ctl_call_once(c, req, rep);
	}
	if (rc == 0 && rep->type != LB_MSG_CTL_REPLY) {
		fprintf(stderr, "sluicectl: unexpected reply from the manager (message type %d)\n",
			(int)rep->type);
		return CTL_EXIT_UNREACHABLE;
	}
	return rc;
}
