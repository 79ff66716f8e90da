/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "mux_conn.h"

/* The flow hash is already keyed and mixed: its low bits are the signature. */
static uint32_t
conn_hash_unused(const void *key, uint32_t len, uint32_t init)
{
	/* Only reached by rte_hash calls without a precomputed signature. */
	return rte_hash_crc(key, len, init);
}

struct mux_conn_table *
mux_conn_create(const char *name, uint32_t entries, int socket, const uint32_t timeout[3],
	const struct lb_hash_seed *seed)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = entries,
		.key_len = sizeof(struct lb_flow_key),
		.hash_func = conn_hash_unused,
		.socket_id = socket,
	};
	struct mux_conn_table *ct;
	int32_t max;

	ct = rte_zmalloc_socket("mux_conn", sizeof(*ct), RTE_CACHE_LINE_SIZE, socket);
	if (ct == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ct->h = rte_hash_create(&hp);
	if (ct->h == NULL)
		goto fail;
	max = rte_hash_max_key_id(ct->h);
	if (max < 0)
		goto fail;
	ct->entries = (uint32_t)max + 1;
	ct->ent = rte_zmalloc_socket("mux_conn_ent", sizeof(*ct->ent) * ct->entries,
		RTE_CACHE_LINE_SIZE, socket);
	if (ct->ent == NULL)
		goto fail;
	ct->seed = *seed;
	ct->timeout[0] = timeout[0];
	ct->timeout[1] = timeout[1];
	ct->timeout[2] = timeout[2];
	return ct;
fail:
	mux_conn_free(ct);
	rte_errno = ENOMEM;
	return NULL;
}

void
mux_conn_free(struct mux_conn_table *ct)
{
	if (ct == NULL)
		return;
	rte_hash_free(ct->h);
	rte_free(ct->ent);
	rte_free(ct);
}

uint32_t
mux_conn_sweep(struct mux_conn_table *ct, uint32_t now, uint32_t budget)
{
	uint32_t deleted = 0;
	void *key;

	/*
	 * Walk key positions rather than rte_hash_iterate(): the cost is the
	 * budget, however empty the table is. A zero expiry marks a free slot.
	 */
	while (budget-- > 0) {
		uint32_t pos = ct->sweep_next;
		struct mux_conn *e = &ct->ent[pos];

		ct->sweep_next = pos + 1 == ct->entries ? 0 : pos + 1;
		if (e->expires == 0 || (int32_t)(e->expires - now) > 0)
			continue;
		if (rte_hash_get_key_with_position(ct->h, (int32_t)pos, &key) == 0)
			rte_hash_del_key_with_hash(ct->h, key, lb_flow_sig(lb_flow_hash(&ct->seed, key)));
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
