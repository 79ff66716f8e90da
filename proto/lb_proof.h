/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A member's proof that its id is the name on its certificate.
 *
 * Mutual TLS tells the manager that a peer holds *a* certificate of the CA,
 * not which one (nng 1.5.2 exposes no peer certificate). So a member
 * connected over TLS must also prove its id: the manager answers its first
 * HELLO with a CHALLENGE (a nonce of its own for that connection), and the
 * member says HELLO again with its certificate and an ECDSA or RSA
 * signature, by its private key, of SHA-256("sluice hello proof 1", 0,
 * nonce, id). The manager accepts the id only if the certificate chains to
 * its CA, is valid now, names the id (CN or a DNS subjectAltName) and the
 * signature verifies with its key. ipc members are local and need none.
 *
 * Operators over ctl_tls prove the name on their certificate (its CN) the
 * same way, in their requests (CtlRequest's proof fields), so that history
 * names them by what the CA certified.
 */
#ifndef LB_PROOF_H
#define LB_PROOF_H

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>

#define LB_NONCE_LEN 32
#define LB_PROOF_MAX 512	/* a signature: ECDSA P-521 or RSA-4096 at most */
#define LB_PROOF_CERT_MAX 16384 /* a certificate in PEM */
#define LB_PROOF_NAME_MAX 64	/* a certificate's CN, as a name to prove */

/*
 * A private key and the random generator that signs with it: a member's
 * proofs, the listener guard's TLS handshakes. init, then load; free after
 * either (it takes a key that failed to load).
 */
struct lb_sign_key {
	mbedtls_pk_context pk;
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
};

void lb_sign_key_init(struct lb_sign_key *k);
/* Parse key_path, seed the generator (label tells it apart). 0, or -1 with err. */
int lb_sign_key_load(
	struct lb_sign_key *k, const char *key_path, const char *label, char *err, size_t len);
void lb_sign_key_free(struct lb_sign_key *k);

/* The member's side: its certificate (PEM) and private key. */
struct lb_proof_signer;

/* Load cert_path and key_path; NULL and err on failure. */
struct lb_proof_signer *lb_proof_signer_load(
	const char *cert_path, const char *key_path, char *err, size_t len);
void lb_proof_signer_free(struct lb_proof_signer *s);
/* The certificate as PEM text and its length (with the final NUL). */
const char *lb_proof_signer_cert(const struct lb_proof_signer *s, size_t *len);
/* The certificate's CN ("?" if it has none): the name an operator proves. */
const char *lb_proof_signer_name(const struct lb_proof_signer *s);
/* Sign (nonce, id) into sig (LB_PROOF_MAX bytes). Returns 0 or -1 with err. */
int lb_proof_sign(struct lb_proof_signer *s, const uint8_t nonce[LB_NONCE_LEN], const char *id,
	uint8_t *sig, size_t *sig_len, char *err, size_t len);

/* The manager's side: the nonce of connection conn, SHA-256(key, conn). */
void lb_proof_nonce(const uint8_t key[32], uint32_t conn, uint8_t out[LB_NONCE_LEN]);

/* The CA that must have issued every member's certificate. */
struct lb_proof_ca;

struct lb_proof_ca *lb_proof_ca_load(const char *ca_path, char *err, size_t len);
void lb_proof_ca_free(struct lb_proof_ca *ca);
/*
 * Check a proof. Returns 0, or -1 with the reason in err ("the certificate
 * names peer1, not mux1", "bad signature", ...).
 */
int lb_proof_verify(struct lb_proof_ca *ca, const char *cert_pem, size_t cert_len,
	const uint8_t nonce[LB_NONCE_LEN], const char *id, const uint8_t *sig, size_t sig_len,
	char *err, size_t len);

#endif /* LB_PROOF_H */
