/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>

#include "lb_err.h"
#include "lb_flow.h"

/* SipHash's round is LB_SIPROUND(), which lb_flow.h's inline IPv4 hash shares. */

static inline uint64_t
load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return lb_le64_to_cpu(v);
}

uint64_t
lb_siphash13(const struct lb_hash_seed *seed, const void *data, size_t len)
{
	const uint8_t *p = data;
	const uint8_t *end = p + (len & ~(size_t)7);
	uint64_t v0 = 0x736f6d6570736575ULL ^ seed->k0;
	uint64_t v1 = 0x646f72616e646f6dULL ^ seed->k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ seed->k0;
	uint64_t v3 = 0x7465646279746573ULL ^ seed->k1;
	uint64_t b = (uint64_t)len << 56;
	uint64_t m;

	for (; p != end; p += 8) {
		m = load_le64(p);
		v3 ^= m;
		LB_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	switch (len & 7) {
	case 7:
		b |= (uint64_t)p[6] << 48;
		/* fall through */
	case 6:
		b |= (uint64_t)p[5] << 40;
		/* fall through */
	case 5:
		b |= (uint64_t)p[4] << 32;
		/* fall through */
	case 4:
		b |= (uint64_t)p[3] << 24;
		/* fall through */
	case 3:
		b |= (uint64_t)p[2] << 16;
		/* fall through */
	case 2:
		b |= (uint64_t)p[1] << 8;
		/* fall through */
	case 1:
		b |= (uint64_t)p[0];
		break;
	case 0:
		break;
	}
	v3 ^= b;
	LB_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	LB_SIPROUND(v0, v1, v2, v3);
	LB_SIPROUND(v0, v1, v2, v3);
	LB_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t
lb_flow_hash(const struct lb_hash_seed *seed, const struct lb_flow_key *k)
{
	if (k->af == LB_AF_INET)
		return lb_flow_hash_v4(seed, k->lo_addr.a32[0], k->hi_addr.a32[0], k->lo_port,
			k->hi_port, k->proto);
	return lb_siphash13(seed, k, offsetof(struct lb_flow_key, pad));
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
lb_hash_seed_parse(struct lb_hash_seed *seed, const char *hex)
{
	uint64_t w[2] = {0, 0};
	int i;

	if (hex == NULL || strlen(hex) != 32)
		return -LB_EPARSE;
	for (i = 0; i < 32; i++) {
		int v = hexval((unsigned char)hex[i]);

		if (v < 0)
			return -LB_EPARSE;
		w[i / 16] = (w[i / 16] << 4) | (uint64_t)v;
	}
	seed->k0 = w[0];
	seed->k1 = w[1];
	return 0;
}
