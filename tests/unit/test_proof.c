/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A member's proof of its id (lb_proof.h): a proof by the key of a
 * certificate of the CA that names the id holds; another id, another
 * nonce, another CA, a changed signature or a key that is not the
 * certificate's do not. Certificates come from scripts/make-certs.sh.
 * And the codec carries CHALLENGE and a proven HELLO intact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lb_codec.h"
#include "lb_proof.h"

static char dir[64];
static const uint8_t nonce[LB_NONCE_LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

/* A CA with mux1 and mux2, and another CA with its own mux1. */
static void
setup(void)
{
	char cmd[512];

	snprintf(dir, sizeof(dir), "/tmp/sluice-proof-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "%s %s/pki mux1 mux2 >/dev/null && %s %s/other mux1 >/dev/null",
		SLUICE_MAKE_CERTS, dir, SLUICE_MAKE_CERTS, dir);
	cr_assert_eq(system(cmd), 0, "make-certs.sh");
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(proof, .init = setup, .fini = teardown);

static char *
path(const char *pki, const char *file)
{
	static char p[4][256];
	static int n;
	char *out = p[n++ % 4];

	snprintf(out, sizeof(p[0]), "%s/%s/%s", dir, pki, file);
	return out;
}

/* Sign (nonce, id) as pki's name; verify against ca_pki's CA as `as`. */
static int
check(const char *pki, const char *name, const char *ca_pki, const uint8_t *vnonce, const char *as,
	bool flip, char *why, size_t len)
{
	char cert[64], key[64], err[256];
	struct lb_proof_signer *s;
	struct lb_proof_ca *ca;
	uint8_t sig[LB_PROOF_MAX];
	size_t n, cert_len;
	const char *pem;
	int rc;

	snprintf(cert, sizeof(cert), "%s.pem", name);
	snprintf(key, sizeof(key), "%s.key", name);
	s = lb_proof_signer_load(path(pki, cert), path(pki, key), err, sizeof(err));
	cr_assert_not_null(s, "%s", err);
	ca = lb_proof_ca_load(path(ca_pki, "ca.pem"), err, sizeof(err));
	cr_assert_not_null(ca, "%s", err);
	cr_assert_eq(lb_proof_sign(s, nonce, as, sig, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert(n > 0 && n <= LB_PROOF_MAX);
	if (flip)
		sig[n / 2] ^= 0x01;
	pem = lb_proof_signer_cert(s, &cert_len);
	rc = lb_proof_verify(ca, pem, cert_len, vnonce, as, sig, n, why, len);
	lb_proof_signer_free(s);
	lb_proof_ca_free(ca);
	return rc;
}

/* check() of a proof that must be refused: why it was. */
static const char *
refused(const char *pki, const char *name, const uint8_t *vnonce, const char *as, bool flip)
{
	static char why[256];

	why[0] = '\0';
	cr_assert_neq(check(pki, name, "pki", vnonce, as, flip, why, sizeof(why)), 0,
		"%s/%s proving %s is not refused", pki, name, as);
	return why;
}

Test(proof, holds_for_the_named_id)
{
	char why[256] = "";

	cr_assert_eq(
		check("pki", "mux1", "pki", nonce, "mux1", false, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(
		check("pki", "mux2", "pki", nonce, "mux2", false, why, sizeof(why)), 0, "%s", why);
}

Test(proof, another_id_is_refused_by_name)
{
	cr_assert_str_eq(refused("pki", "mux1", nonce, "mux2", false),
		"the certificate names mux1, not mux2");
}

/* Names compare exactly, not by TLS host-name rules: no case folding, no prefix. */
Test(proof, a_name_is_compared_exactly)
{
	cr_assert_str_eq(refused("pki", "mux1", nonce, "MUX1", false),
		"the certificate names mux1, not MUX1");
	refused("pki", "mux1", nonce, "mux", false);
	refused("pki", "mux1", nonce, "", false);
}

Test(proof, another_nonce_is_refused)
{
	uint8_t other[LB_NONCE_LEN] = {9, 9, 9};

	cr_assert_str_eq(refused("pki", "mux1", other, "mux1", false),
		"the signature does not verify with the certificate's key");
}

Test(proof, a_changed_signature_is_refused)
{
	const char *why = refused("pki", "mux1", nonce, "mux1", true);

	cr_assert(strstr(why, "signature") != NULL, "%s", why);
}

Test(proof, another_cas_certificate_is_refused)
{
	/* Same name, same kind of key, another CA. */
	const char *why = refused("other", "mux1", nonce, "mux1", false);

	cr_assert(strncmp(why, "certificate of mux1: ", 21) == 0, "%s", why);
}

Test(proof, a_key_that_is_not_the_certificates_is_refused_at_load)
{
	char err[256] = "";

	cr_assert_null(lb_proof_signer_load(
		path("pki", "mux1.pem"), path("pki", "mux2.key"), err, sizeof(err)));
	cr_assert(strstr(err, "is not the key of") != NULL, "%s", err);
	cr_assert_null(lb_proof_signer_load(
		path("pki", "none.pem"), path("pki", "mux1.key"), err, sizeof(err)));
	cr_assert(strstr(err, "cannot read") != NULL, "%s", err);
}

Test(proof, the_codec_carries_challenge_and_proven_hello)
{
	struct lb_msg in = {.type = LB_MSG_CHALLENGE}, out;
	char err[256], cert[] = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
	uint8_t *buf;
	size_t len;

	memcpy(in.nonce, nonce, LB_NONCE_LEN);
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.type, LB_MSG_CHALLENGE);
	cr_assert_arr_eq(out.nonce, nonce, LB_NONCE_LEN);
	free(buf);

	memset(&in, 0, sizeof(in));
	in.type = LB_MSG_HELLO;
	in.role = LB_ROLE_MUX;
	snprintf(in.id, sizeof(in.id), "mux1");
	memcpy(in.nonce, nonce, LB_NONCE_LEN);
	memset(in.proof, 0xab, 70);
	in.proof_len = 70;
	in.body = cert;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.proof_len, 70);
	cr_assert_arr_eq(out.proof, in.proof, 70);
	cr_assert_arr_eq(out.nonce, nonce, LB_NONCE_LEN);
	cr_assert_str_eq(out.body, cert);
	lb_msg_free(&out);
	free(buf);

	/* A hello without a proof has none after decoding. */
	in.proof_len = 0;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.proof_len, 0);
	cr_assert_null(out.body);
	lb_msg_free(&out);
	free(buf);
}

/*
 * An operator's request over ctl_tls: the name proven, the nonce, the proof
 * and the certificate travel with it, next to its own config text; the
 * decoded request verifies as the signer's CN and as nothing else.
 */
Test(proof, an_operator_request_carries_its_proof)
{
	struct lb_msg in, out;
	struct lb_proof_signer *s;
	struct lb_proof_ca *ca;
	char err[256], why[256];
	const char *pem;
	uint8_t *buf;
	size_t len, n;

	s = lb_proof_signer_load(
		path("pki", "mux2.pem"), path("pki", "mux2.key"), err, sizeof(err));
	cr_assert_not_null(s, "%s", err);
	cr_assert_str_eq(lb_proof_signer_name(s), "mux2");
	ca = lb_proof_ca_load(path("pki", "ca.pem"), err, sizeof(err));
	cr_assert_not_null(ca, "%s", err);

	memset(&in, 0, sizeof(in));
	in.type = LB_MSG_CTL_REQUEST;
	in.ctl.op = LB_CTL_APPLY;
	in.body = (char *)"services = ( );";
	snprintf(in.id, sizeof(in.id), "%s", lb_proof_signer_name(s));
	memcpy(in.nonce, nonce, LB_NONCE_LEN);
	cr_assert_eq(lb_proof_sign(s, nonce, in.id, in.proof, &n, err, sizeof(err)), 0, "%s", err);
	in.proof_len = (uint16_t)n;
	in.cert = (char *)lb_proof_signer_cert(s, &len);
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, &out, err, sizeof(err)), 0, "%s", err);
	free(buf);
	cr_assert_str_eq(out.id, "mux2");
	cr_assert_str_eq(out.body, "services = ( );", "the config stays the config");
	cr_assert_not_null(out.cert);
	cr_assert_str_eq(out.cert, in.cert);
	cr_assert_eq(out.proof_len, in.proof_len);
	pem = out.cert;
	cr_assert_eq(lb_proof_verify(ca, pem, strlen(pem) + 1, out.nonce, out.id, out.proof,
			     out.proof_len, why, sizeof(why)),
		0, "%s", why);
	cr_assert_neq(lb_proof_verify(ca, pem, strlen(pem) + 1, out.nonce, "mux1", out.proof,
			      out.proof_len, why, sizeof(why)),
		0);
	cr_assert_str_eq(why, "the certificate names mux2, not mux1");
	lb_msg_free(&out);

	/* A proof without its certificate is no proof: refused whole. */
	in.cert = NULL;
	cr_assert_eq(lb_msg_encode(&in, &buf, &len), 0);
	cr_assert_neq(lb_msg_decode(buf, len, &out, err, sizeof(err)), 0);
	cr_assert(strstr(err, "operator request: certificate") != NULL, "%s", err);
	lb_msg_free(&out);
	free(buf);
	lb_proof_ca_free(ca);
	lb_proof_signer_free(s);
}
