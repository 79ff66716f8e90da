/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>

#include "lb_err.h"
#include "lb_flow.h"

/* SipHash's steps are lb_sip_*() (lb_flow.h), which its inline IPv4 hash shares. */

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
	uint8_t tail[8] = {0};
	struct lb_sip s;

	lb_sip_init(&s, seed);
	for (; p != end; p += 8)
		lb_sip_word(&s, load_le64(p));
	/* The last len % 8 bytes, zero-padded: SipHash's final word but its length byte. */
	memcpy(tail, p, len & 7);
	return lb_sip_final(&s, load_le64(tail) | (uint64_t)len << 56);
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
