/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_msg_decode() on arbitrary bytes: the control protocol's only entry for
 * what a peer sends. A message that decodes must encode again
 * (lb_msg_encode), and that encoding must decode to the same message in
 * every field the type carries; lb_msg_free runs on every path, so a leak
 * on any of them is a LeakSanitizer report. The same bytes go to the
 * credit channel's two decoders (lb_credit_msg.h), under the same rule.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "lb_codec.h"
#include "lb_credit_msg.h"
#include "lb_err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
same_services(const struct lb_service_cfg *a, const struct lb_service_cfg *b, uint32_t n)
{
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		FUZZ_CHECK(memcmp(&a[i].vip, &b[i].vip, sizeof(a[i].vip)) == 0);
		FUZZ_CHECK(a[i].port == b[i].port && a[i].proto == b[i].proto);
		FUZZ_CHECK(a[i].af == b[i].af);
		FUZZ_CHECK(a[i].n_backends == b[i].n_backends);
		for (j = 0; j < a[i].n_backends; j++) {
			const struct lb_backend_cfg *x = &a[i].backends[j], *y = &b[i].backends[j];

			FUZZ_CHECK(memcmp(&x->dip, &y->dip, sizeof(x->dip)) == 0);
			FUZZ_CHECK(memcmp(&x->host, &y->host, sizeof(x->host)) == 0);
			FUZZ_CHECK(x->host6 == y->host6);
			FUZZ_CHECK(x->port == y->port && x->weight == y->weight);
			FUZZ_CHECK(x->state == y->state && x->id == y->id);
		}
	}
}

static bool
same_str(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

static void
same_msg(const struct lb_msg *a, const struct lb_msg *b)
{
	uint32_t i;

	FUZZ_CHECK(a->type == b->type);
	FUZZ_CHECK(a->protocol == LB_PROTOCOL && b->protocol == LB_PROTOCOL);
	FUZZ_CHECK(strcmp(a->sender, b->sender) == 0);
	FUZZ_CHECK(strcmp(a->id, b->id) == 0);
	FUZZ_CHECK(a->role == b->role);
	FUZZ_CHECK(a->version == b->version && a->base_version == b->base_version);
	FUZZ_CHECK(a->flag == b->flag);
	FUZZ_CHECK(strcmp(a->text, b->text) == 0);
	FUZZ_CHECK(a->index == b->index && a->count == b->count);
	FUZZ_CHECK(a->n_counters == b->n_counters);
	for (i = 0; i < a->n_counters; i++) {
		FUZZ_CHECK(strcmp(a->counters[i].name, b->counters[i].name) == 0);
		FUZZ_CHECK(a->counters[i].value == b->counters[i].value);
	}
	FUZZ_CHECK(a->delta.n_upsert == b->delta.n_upsert);
	FUZZ_CHECK(a->delta.n_remove == b->delta.n_remove);
	FUZZ_CHECK(a->delta.has_options == b->delta.has_options);
	if (a->delta.has_options) {
		FUZZ_CHECK(a->delta.seed.k0 == b->delta.seed.k0);
		FUZZ_CHECK(a->delta.seed.k1 == b->delta.seed.k1);
		FUZZ_CHECK(a->delta.maglev_size == b->delta.maglev_size);
	}
	same_services(a->delta.upsert, b->delta.upsert, a->delta.n_upsert);
	if (a->delta.n_remove != 0)
		FUZZ_CHECK(memcmp(a->delta.remove, b->delta.remove,
				   sizeof(*a->delta.remove) * a->delta.n_remove) == 0);
	FUZZ_CHECK(a->table.n_services == b->table.n_services);
	FUZZ_CHECK(a->table.seed.k0 == b->table.seed.k0 && a->table.seed.k1 == b->table.seed.k1);
	FUZZ_CHECK(a->table.maglev_size == b->table.maglev_size);
	same_services(a->table.services, b->table.services, a->table.n_services);
	/* HELLO's addresses, each with its family. */
	FUZZ_CHECK(memcmp(&a->probe_addr, &b->probe_addr, sizeof(a->probe_addr)) == 0);
	FUZZ_CHECK(memcmp(&a->probe_addr6, &b->probe_addr6, sizeof(a->probe_addr6)) == 0);
	FUZZ_CHECK(a->n_pas == b->n_pas && a->n_dips == b->n_dips);
	FUZZ_CHECK(memcmp(a->pas, b->pas, sizeof(a->pas[0]) * a->n_pas) == 0);
	FUZZ_CHECK(memcmp(a->dips, b->dips, sizeof(a->dips[0]) * a->n_dips) == 0);
	/* An operator's request: the service and the backend with their families. */
	FUZZ_CHECK(a->ctl.has_svc == b->ctl.has_svc && a->ctl.has_be == b->ctl.has_be);
	FUZZ_CHECK(memcmp(&a->ctl.svc, &b->ctl.svc, sizeof(a->ctl.svc)) == 0);
	FUZZ_CHECK(a->ctl.be_af == b->ctl.be_af && a->ctl.be.host6 == b->ctl.be.host6);
	FUZZ_CHECK(memcmp(&a->ctl.be.dip, &b->ctl.be.dip, sizeof(a->ctl.be.dip)) == 0);
	FUZZ_CHECK(memcmp(&a->ctl.be.host, &b->ctl.be.host, sizeof(a->ctl.be.host)) == 0);
	/* HELLO may omit its digest; what encode sends for it is zeros, as decoded. */
	FUZZ_CHECK(memcmp(a->digest, b->digest, LB_DIGEST_LEN) == 0);
	/* Proofs (HELLO, CTL_REQUEST) and challenges, and the texts beside them. */
	FUZZ_CHECK(a->proof_len == b->proof_len && memcmp(a->proof, b->proof, a->proof_len) == 0);
	if (a->proof_len != 0 || a->type == LB_MSG_CHALLENGE)
		FUZZ_CHECK(memcmp(a->nonce, b->nonce, LB_NONCE_LEN) == 0);
	FUZZ_CHECK(same_str(a->cert, b->cert));
	FUZZ_CHECK(same_str(a->body, b->body));
}

/* The credit channel: what decodes encodes again to the same message. */
static void
credit_roundtrip(const uint8_t *data, size_t size)
{
	static struct lb_credit_grant g, g2;
	static struct lb_credit_report r, r2;
	char err[256];
	uint8_t *buf;
	size_t len;
	uint32_t i;

	if (lb_credit_grant_decode(data, size, &g, err, sizeof(err)) == 0 &&
		lb_credit_grant_encode(&g, &buf, &len) == 0) {
		FUZZ_CHECK(lb_credit_grant_decode(buf, len, &g2, err, sizeof(err)) == 0);
		FUZZ_CHECK(strcmp(g.agent, g2.agent) == 0 && g.incarnation == g2.incarnation);
		FUZZ_CHECK(g.ttl_ms == g2.ttl_ms && g.n == g2.n && g.n <= LB_CREDIT_MAX);
		for (i = 0; i < g.n; i++)
			FUZZ_CHECK(memcmp(&g.c[i], &g2.c[i], sizeof(g.c[i])) == 0);
		free(buf);
	}
	if (lb_credit_report_decode(data, size, &r, err, sizeof(err)) == 0 &&
		lb_credit_report_encode(&r, &buf, &len) == 0) {
		FUZZ_CHECK(lb_credit_report_decode(buf, len, &r2, err, sizeof(err)) == 0);
		FUZZ_CHECK(strcmp(r.mux, r2.mux) == 0 && strcmp(r.refused, r2.refused) == 0);
		FUZZ_CHECK(r.n == r2.n && r.n <= LB_CREDIT_MAX);
		for (i = 0; i < r.n; i++) {
			FUZZ_CHECK(memcmp(&r.u[i], &r2.u[i], sizeof(r.u[i])) == 0);
			FUZZ_CHECK(
				r.u[i].used + r.u[i].expired + r.u[i].revoked <= r.u[i].received);
		}
		free(buf);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lb_msg m, again;
	char err[256];
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	credit_roundtrip(data, size);
	rc = lb_msg_decode(data, size, &m, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -LB_EPARSE || rc == -LB_EPROTOCOL || rc == -LB_EUNSUPPORTED ||
		   rc == -LB_ENOMEM);
	if (rc != 0) {
		/* Refused whole: nothing half-decoded is left behind. */
		FUZZ_CHECK(m.delta.upsert == NULL && m.table.services == NULL);
		FUZZ_CHECK(m.delta.n_upsert == 0 && m.table.n_services == 0);
		lb_msg_free(&m);
		return 0;
	}
	if (m.type == LB_MSG_SNAPSHOT_CHUNK && m.index == 0)
		/* lb_ftable_digest must cope with whatever a peer can send. */
		lb_ftable_digest(&m.table, (uint8_t[LB_DIGEST_LEN]){0});
	rc = lb_msg_encode(&m, &buf, &len);
	FUZZ_CHECK(rc == 0 || rc == -LB_ENOMEM);
	if (rc == 0) {
		rc = lb_msg_decode(buf, len, &again, err, sizeof(err));
		if (rc != 0)
			fprintf(stderr, "fuzz_codec: re-decode: %s\n", err);
		FUZZ_CHECK(rc == 0);
		same_msg(&m, &again);
		lb_msg_free(&again);
	}
	free(buf);
	lb_msg_free(&m);
	return 0;
}
