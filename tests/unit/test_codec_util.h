/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the codec's tests (test_codec.c: messages; test_codec_table.c: flow
 * tables) share: addresses from text, two tables compared service by
 * service, a message of a type, and its round trip through the encoder and
 * the decoder.
 */
#ifndef SLUICE_TEST_CODEC_UTIL_H
#define SLUICE_TEST_CODEC_UTIL_H

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lb_addr.h"
#include "lb_codec.h"
#include "lb_ftable.h"

static inline struct lb_addr
v4(const char *s)
{
	struct lb_addr a;
	struct in_addr ia;

	inet_pton(AF_INET, s, &ia);
	lb_addr_v4(&a, ia.s_addr);
	return a;
}

static inline struct lb_addr
v6(const char *s)
{
	struct lb_addr a;

	cr_assert_eq(inet_pton(AF_INET6, s, a.a8), 1, "%s", s);
	return a;
}

static inline void
assert_tables_equal(const struct lb_ftable *a, const struct lb_ftable *b)
{
	uint32_t s;

	cr_assert_eq(a->n_services, b->n_services);
	for (s = 0; s < a->n_services; s++) {
		const struct lb_service_cfg *x = &a->services[s], *y = &b->services[s];

		cr_assert_eq(x->af, y->af, "service %u: family", s);
		cr_assert_eq(memcmp(&x->vip, &y->vip, sizeof(x->vip)), 0);
		cr_assert_eq(x->port, y->port);
		cr_assert_eq(x->proto, y->proto);
		cr_assert_eq(x->n_backends, y->n_backends);
		cr_assert_eq(memcmp(x->backends, y->backends, sizeof(*x->backends) * x->n_backends),
			0, "service %u: backends differ", s);
	}
}

/* *m: a message of type t, every other field zero. */
static inline void
msg_init(struct lb_msg *m, enum lb_msg_type t)
{
	memset(m, 0, sizeof(*m));
	m->type = t;
}

/* in encoded and decoded into *out (freed with lb_msg_free()). */
static inline void
roundtrip(const struct lb_msg *in, struct lb_msg *out)
{
	char err[256];
	uint8_t *buf;
	size_t len;

	cr_assert_eq(lb_msg_encode(in, &buf, &len), 0);
	cr_assert_eq(lb_msg_decode(buf, len, out, err, sizeof(err)), 0, "decode: %s", err);
	free(buf);
	cr_assert_eq(out->type, in->type);
	cr_assert_eq(out->protocol, LB_PROTOCOL);
	cr_assert_str_eq(out->sender, in->sender);
}

#endif
