/* SPDX-License-Identifier: BSD-3-Clause */
/* A member's proof of its id (lb_proof.h), with mbed TLS (nng's own TLS library). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/oid.h>
#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/sha256.h>
#include <mbedtls/x509_crt.h>

#include "lb_err.h"
#include "lb_file.h"
#include "lb_proof.h"

#define PROOF_LABEL "sluice hello proof 1"

struct lb_proof_signer {
	struct lb_sign_key key;
	char *cert; /* PEM */
	size_t cert_len;
	char name[LB_PROOF_NAME_MAX]; /* its CN */
};

struct lb_proof_ca {
	mbedtls_x509_crt chain;
};

static void
mbed_err(char *err, size_t len, const char *what, int rc)
{
	char buf[128];

	mbedtls_strerror(rc, buf, sizeof(buf));
	snprintf(err, len, "%s: %s", what, buf);
}

/* SHA-256(label, 0, nonce, id): what is signed. */
static int
proof_hash(const uint8_t nonce[LB_NONCE_LEN], const char *id, uint8_t out[32])
{
	mbedtls_sha256_context c;
	int rc;

	mbedtls_sha256_init(&c);
	rc = mbedtls_sha256_starts_ret(&c, 0);
	if (rc == 0)
		rc = mbedtls_sha256_update_ret(
			&c, (const uint8_t *)PROOF_LABEL, sizeof(PROOF_LABEL)); /* with its NUL */
	if (rc == 0)
		rc = mbedtls_sha256_update_ret(&c, nonce, LB_NONCE_LEN);
	if (rc == 0)
		rc = mbedtls_sha256_update_ret(&c, (const uint8_t *)id, strlen(id));
	if (rc == 0)
		rc = mbedtls_sha256_finish_ret(&c, out);
	mbedtls_sha256_free(&c);
	return rc;
}

/* The certificate's CN, for a message or an operator's name. */
static void
cert_name(const mbedtls_x509_crt *crt, char *out, size_t len)
{
	const mbedtls_x509_name *n;

	snprintf(out, len, "?");
	for (n = &crt->subject; n != NULL; n = n->next)
		if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &n->oid) == 0) {
			snprintf(out, len, "%.*s", (int)n->val.len, (const char *)n->val.p);
			return;
		}
}

void
lb_sign_key_init(struct lb_sign_key *k)
{
	mbedtls_pk_init(&k->pk);
	mbedtls_entropy_init(&k->entropy);
	mbedtls_ctr_drbg_init(&k->drbg);
}

int
lb_sign_key_load(
	struct lb_sign_key *k, const char *key_path, const char *label, char *err, size_t len)
{
	int rc;

	if ((rc = mbedtls_pk_parse_keyfile(&k->pk, key_path, NULL)) != 0) {
		mbed_err(err, len, key_path, rc);
		return -1;
	}
	if ((rc = mbedtls_ctr_drbg_seed(&k->drbg, mbedtls_entropy_func, &k->entropy,
		     (const uint8_t *)label, strlen(label))) != 0) {
		mbed_err(err, len, "random numbers", rc);
		return -1;
	}
	return 0;
}

void
lb_sign_key_free(struct lb_sign_key *k)
{
	mbedtls_pk_free(&k->pk);
	mbedtls_ctr_drbg_free(&k->drbg);
	mbedtls_entropy_free(&k->entropy);
}

struct lb_proof_signer *
lb_proof_signer_load(const char *cert_path, const char *key_path, char *err, size_t len)
{
	struct lb_proof_signer *s = lb_zalloc(sizeof(*s), NULL, err, len);
	mbedtls_x509_crt crt;
	int rc;

	if (s == NULL)
		return NULL;
	lb_sign_key_init(&s->key);
	mbedtls_x509_crt_init(&crt);
	if ((rc = lb_read_file(cert_path, LB_PROOF_CERT_MAX - 1, &s->cert, &s->cert_len)) != 0) {
		snprintf(err, len, "cannot read %s: %s", cert_path,
			rc == -EFBIG ? "over 16 KB" : strerror(-rc));
		goto fail;
	}
	s->cert_len++; /* PEM goes to mbed TLS with its NUL */
	if ((rc = mbedtls_x509_crt_parse(&crt, (const uint8_t *)s->cert, s->cert_len)) != 0) {
		mbed_err(err, len, cert_path, rc);
		goto fail;
	}
	if (lb_sign_key_load(&s->key, key_path, PROOF_LABEL, err, len) != 0)
		goto fail;
	cert_name(&crt, s->name, sizeof(s->name));
	if ((rc = mbedtls_pk_check_pair(&crt.pk, &s->key.pk)) != 0) {
		snprintf(err, len, "%s is not the key of %s", key_path, cert_path);
		goto fail;
	}
	mbedtls_x509_crt_free(&crt);
	return s;
fail:
	mbedtls_x509_crt_free(&crt);
	lb_proof_signer_free(s);
	return NULL;
}

void
lb_proof_signer_free(struct lb_proof_signer *s)
{
	if (s == NULL)
		return;
	lb_sign_key_free(&s->key);
	free(s->cert);
	free(s);
}

const char *
lb_proof_signer_cert(const struct lb_proof_signer *s, size_t *len)
{
	*len = s->cert_len;
	return s->cert;
}

const char *
lb_proof_signer_name(const struct lb_proof_signer *s)
{
	return s->name;
}

int
lb_proof_sign(struct lb_proof_signer *s, const uint8_t nonce[LB_NONCE_LEN], const char *id,
	uint8_t *sig, size_t *sig_len, char *err, size_t len)
{
	uint8_t hash[32], buf[MBEDTLS_PK_SIGNATURE_MAX_SIZE];
	size_t n = 0;
	int rc;

	if ((rc = proof_hash(nonce, id, hash)) != 0 ||
		(rc = mbedtls_pk_sign(&s->key.pk, MBEDTLS_MD_SHA256, hash, sizeof(hash), buf, &n,
			 mbedtls_ctr_drbg_random, &s->key.drbg)) != 0) {
		mbed_err(err, len, "sign", rc);
		return -1;
	}
	if (n > LB_PROOF_MAX) {
		snprintf(err, len, "a signature of %zu bytes (at most %d)", n, LB_PROOF_MAX);
		return -1;
	}
	memcpy(sig, buf, n);
	*sig_len = n;
	return 0;
}

void
lb_proof_nonce(const uint8_t key[32], uint32_t conn, uint8_t out[LB_NONCE_LEN])
{
	uint8_t in[36];

	memcpy(in, key, 32);
	memcpy(in + 32, &conn, 4);
	mbedtls_sha256_ret(in, sizeof(in), out, 0);
}

struct lb_proof_ca *
lb_proof_ca_load(const char *ca_path, char *err, size_t len)
{
	struct lb_proof_ca *ca = lb_zalloc(sizeof(*ca), NULL, err, len);
	int rc;

	if (ca == NULL)
		return NULL;
	mbedtls_x509_crt_init(&ca->chain);
	if ((rc = mbedtls_x509_crt_parse_file(&ca->chain, ca_path)) != 0) {
		mbed_err(err, len, ca_path, rc);
		lb_proof_ca_free(ca);
		return NULL;
	}
	return ca;
}

void
lb_proof_ca_free(struct lb_proof_ca *ca)
{
	if (ca == NULL)
		return;
	mbedtls_x509_crt_free(&ca->chain);
	free(ca);
}

/*
 * The certificate names id: its CN or one of its DNS subjectAltNames is
 * exactly id. Not TLS's host-name rules: no wildcard, no case folding, and
 * a SAN does not hide the CN (sluicectl proves its CN).
 */
static bool
names(const mbedtls_x509_crt *crt, const char *id)
{
	const mbedtls_x509_sequence *san;
	const mbedtls_x509_name *n;
	size_t len = strlen(id);

	for (san = &crt->subject_alt_names; san != NULL && san->buf.p != NULL; san = san->next)
		if (san->buf.tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_X509_SAN_DNS_NAME) &&
			san->buf.len == len && memcmp(san->buf.p, id, len) == 0)
			return true;
	for (n = &crt->subject; n != NULL; n = n->next)
		if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &n->oid) == 0 && n->val.len == len &&
			memcmp(n->val.p, id, len) == 0)
			return true;
	return false;
}

int
lb_proof_verify(struct lb_proof_ca *ca, const char *cert_pem, size_t cert_len,
	const uint8_t nonce[LB_NONCE_LEN], const char *id, const uint8_t *sig, size_t sig_len,
	char *err, size_t len)
{
	mbedtls_x509_crt crt;
	uint8_t hash[32];
	uint32_t flags = 0;
	char name[80];
	int rc, ret = -1;

	mbedtls_x509_crt_init(&crt);
	/* PEM must end with its NUL; a DER certificate is taken as it is. */
	if (cert_len == 0 || cert_len > LB_PROOF_CERT_MAX) {
		snprintf(err, len, "no certificate");
		goto out;
	}
	if ((rc = mbedtls_x509_crt_parse(&crt, (const uint8_t *)cert_pem, cert_len)) != 0) {
		mbed_err(err, len, "certificate", rc);
		goto out;
	}
	/* The chain and the dates; the name is names()'s to judge. */
	rc = mbedtls_x509_crt_verify(&crt, &ca->chain, NULL, NULL, &flags, NULL, NULL);
	cert_name(&crt, name, sizeof(name));
	if (rc != 0) {
		char info[160];

		mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
		info[strcspn(info, "\n")] = '\0';
		snprintf(err, len, "certificate of %s: %s", name, info[0] ? info : "not trusted");
		goto out;
	}
	if (!names(&crt, id)) {
		snprintf(err, len, "the certificate names %s, not %s", name, id);
		goto out;
	}
	if ((rc = proof_hash(nonce, id, hash)) != 0) {
		mbed_err(err, len, "hash", rc);
		goto out;
	}
	if ((rc = mbedtls_pk_verify(
		     &crt.pk, MBEDTLS_MD_SHA256, hash, sizeof(hash), sig, sig_len)) != 0) {
		snprintf(err, len, "the signature does not verify with the certificate's key");
		goto out;
	}
	ret = 0;
out:
	mbedtls_x509_crt_free(&crt);
	return ret;
}
