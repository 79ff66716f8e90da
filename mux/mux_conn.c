/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "lb_log.h"
#include "mux_conn.h"

/* The flow hash is already keyed and mixed: its low bits are the signature. */
static uint32_t
conn_hash_unused(const void *key, uint32_t len, uint32_t init)
{
	/* Only reached by rte_hash calls without a precomputed signature. */
	return rte_hash_crc(key, len, init);
}

static uint32_t
conn_sig(const struct mux_conn_table *ct, const struct mux_conn_key *k)
{
	return lb_flow_sig(mux_conn_hash(&ct->seed, k));
}

/*
 * Learn where rte_hash keeps the key slots, and check it.
 *
 * DPDK 22.11 (lib/hash/rte_cuckoo_hash.h) stores each key in a slot of
 * RTE_ALIGN(sizeof(struct rte_hash_key) + key_len, 16) bytes: the data
 * word (union { uintptr_t idata; void *pdata; }) followed by the key.
 * Position p (what adds and lookups return) is slot p + 1 of one array.
 * That header is internal, so rather than copy it, add two keys, find
 * their key pointers with rte_hash_iterate() (public: it returns pointers
 * into the key store), derive base and stride, and check that the data
 * word sits just before each key, holds what the add stored, and that a
 * record written there is what rte_hash itself then returns. Also check
 * that mux_conn_hash() gives lb_flow_hash()'s value. The two keys are
 * deleted again. Returns 0, or -1 if anything differs.
 */
static int
conn_learn_layout(struct mux_conn_table *ct)
{
	struct mux_conn_key k[2];
	struct lb_flow_key fk;
	const void *key;
	void *data;
	uint8_t *kp[2] = {NULL, NULL};
	int32_t pos[2], p;
	uint32_t next = 0, i;

	mux_conn_key_v4(&k[0], rte_cpu_to_be_32(0xc0000201), rte_cpu_to_be_16(40000),
		rte_cpu_to_be_32(0xc6120001), rte_cpu_to_be_16(80), 6);
	mux_conn_key_v4(&k[1], rte_cpu_to_be_32(0xcb007103), rte_cpu_to_be_16(443),
		rte_cpu_to_be_32(0x0a000002), rte_cpu_to_be_16(53124), 17);
	lb_flow_key_v4(&fk, k[0].lo_addr, k[0].lo_port, k[0].hi_addr, k[0].hi_port, 6);
	if (mux_conn_hash(&ct->seed, &k[0]) != lb_flow_hash(&ct->seed, &fk))
		return -1;
	for (i = 0; i < 2; i++) {
		if (rte_hash_add_key_with_hash_data(ct->h, &k[i], conn_sig(ct, &k[i]),
			    (void *)(uintptr_t)mux_conn_pack(100 + i, 7 + i)) != 0)
			return -1;
		pos[i] = rte_hash_lookup_with_hash(ct->h, &k[i], conn_sig(ct, &k[i]));
		if (pos[i] < 0)
			return -1;
	}
	while ((kp[0] == NULL || kp[1] == NULL) &&
		(p = rte_hash_iterate(ct->h, &key, &data, &next)) >= 0)
		for (i = 0; i < 2; i++)
			if (p == pos[i])
				kp[i] = (uint8_t *)(uintptr_t)key;
	if (kp[0] == NULL || kp[1] == NULL || pos[0] == pos[1])
		return -1;
	ct->stride = (uint32_t)((kp[1] - kp[0]) / (pos[1] - pos[0]));
	if (ct->stride != RTE_ALIGN(sizeof(void *) + sizeof(struct mux_conn_key), 16))
		return -1;
	ct->slots = kp[0] - sizeof(void *) - (size_t)pos[0] * ct->stride;
	for (i = 0; i < 2; i++) {
		struct mux_conn *c = mux_conn_at(ct, pos[i]);

		if ((uint8_t *)(c + 1) != kp[i] || memcmp(kp[i], &k[i], sizeof(k[i])) != 0 ||
			c->backend != 100 + i || c->expires != 7 + i)
			return -1;
		c->backend = 200 + i;
		if (rte_hash_lookup_with_hash_data(ct->h, &k[i], conn_sig(ct, &k[i]), &data) !=
				pos[i] ||
			(uint64_t)(uintptr_t)data != mux_conn_pack(200 + i, 7 + i))
			return -1;
	}
	for (i = 0; i < 2; i++) {
		if (rte_hash_del_key_with_hash(ct->h, &k[i], conn_sig(ct, &k[i])) != pos[i])
			return -1;
		*mux_conn_at(ct, pos[i]) = (struct mux_conn){0, 0};
	}
	return rte_hash_count(ct->h) == 0 ? 0 : -1;
}

struct mux_conn_table *
mux_conn_create(const char *name, uint32_t entries, int socket, const uint32_t timeout[3],
	const struct lb_hash_seed *seed)
{
	struct rte_hash_parameters hp = {
		.name = name,
		/* 2^k - 1 keys make the free-slot ring 2^k, not 2^(k+1), indices. */
		.entries = rte_is_power_of_2(entries) && entries > 8 ? entries - 1 : entries,
		.key_len = sizeof(struct mux_conn_key),
		.hash_func = conn_hash_unused,
		.socket_id = socket,
	};
	struct mux_conn_table *ct;
	int32_t max;
	int err = ENOMEM;

	ct = rte_zmalloc_socket("mux_conn", sizeof(*ct), RTE_CACHE_LINE_SIZE, socket);
	if (ct == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ct->seed = *seed;
	ct->timeout[0] = timeout[0];
	ct->timeout[1] = timeout[1];
	ct->timeout[2] = timeout[2];
	ct->h = rte_hash_create(&hp);
	if (ct->h == NULL)
		goto fail;
	max = rte_hash_max_key_id(ct->h);
	if (max < 0)
		goto fail;
	ct->entries = (uint32_t)max;
	if (conn_learn_layout(ct) != 0) {
		LB_ERR("connection table: rte_hash key store is not laid out as this build "
		       "expects (DPDK 22.11)");
		err = ENOTSUP;
		goto fail;
	}
	return ct;
fail:
	mux_conn_free(ct);
	rte_errno = err;
	return NULL;
}

void
mux_conn_free(struct mux_conn_table *ct)
{
	if (ct == NULL)
		return;
	rte_hash_free(ct->h);
	rte_free(ct);
}

void
mux_conn_reset(struct mux_conn_table *ct)
{
	/* Zeroes the key store too, so every record reads as free. */
	rte_hash_reset(ct->h);
	ct->sweep_next = 0;
}

uint32_t
mux_conn_sweep(struct mux_conn_table *ct, uint32_t now, uint32_t budget)
{
	uint32_t deleted = 0;

	/*
	 * Walk key positions rather than rte_hash_iterate(): the cost is the
	 * budget, however empty the table is. A zero expiry marks a free slot;
	 * a deleted key's slot keeps its data word, so zero it here.
	 */
	while (budget-- > 0) {
		uint32_t pos = ct->sweep_next;
		struct mux_conn *e = mux_conn_at(ct, (int32_t)pos);
		const struct mux_conn_key *k = (const struct mux_conn_key *)(e + 1);

		ct->sweep_next = pos + 1 == ct->entries ? 0 : pos + 1;
		if (e->expires == 0 || (int32_t)(e->expires - now) > 0)
			continue;
		rte_hash_del_key_with_hash(ct->h, k, conn_sig(ct, k));
		e->expires = 0;
		deleted++;
	}
	return deleted;
}

uint32_t
mux_conn_count(const struct mux_conn_table *ct)
{
	return (uint32_t)rte_hash_count(ct->h);
}
