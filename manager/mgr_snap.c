/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_codec.h"
#include "lb_err.h"
#include "mgr_msg.h"
#include "mgr_snap.h"

struct mgr_snap {
	uint64_t s_term; /* the leader's, in every chunk (kept by mgr_snap_clear) */
	bool s_valid;
	uint64_t s_version;
	uint32_t s_count;
	uint8_t **s_buf;
	size_t *s_len;
};

struct mgr_snap *
mgr_snap_new(void)
{
	return calloc(1, sizeof(struct mgr_snap));
}

void
mgr_snap_clear(struct mgr_snap *s)
{
	uint64_t term = s->s_term;
	uint32_t i;

	for (i = 0; i < s->s_count; i++)
		free(s->s_buf[i]);
	free(s->s_buf);
	free(s->s_len);
	memset(s, 0, sizeof(*s));
	s->s_term = term;
}

void
mgr_snap_set_term(struct mgr_snap *s, uint64_t term)
{
	mgr_snap_clear(s);
	s->s_term = term;
}

void
mgr_snap_free(struct mgr_snap *s)
{
	if (s == NULL)
		return;
	mgr_snap_clear(s);
	free(s);
}

static int
build(struct mgr_snap *s, const struct lb_ftable *t, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN])
{
	uint32_t *start = calloc(t->n_services + 2, sizeof(*start));
	uint32_t i, n = 0, load = 0;
	struct lb_msg *msg = mgr_msg_new(LB_MSG_SNAPSHOT_CHUNK);
	int rc = 0;

	mgr_snap_clear(s);
	if (start == NULL || msg == NULL) {
		rc = -LB_ENOMEM;
		goto out;
	}
	start[n++] = 0;
	for (i = 0; i < t->n_services; i++) {
		uint32_t w = 1 + t->services[i].n_backends;

		if (i > start[n - 1] && load + w > MGR_SNAP_CHUNK_ENTRIES) {
			start[n++] = i;
			load = 0;
		}
		load += w;
	}
	start[n] = t->n_services;
	s->s_buf = calloc(n, sizeof(*s->s_buf));
	s->s_len = calloc(n, sizeof(*s->s_len));
	if (s->s_buf == NULL || s->s_len == NULL) {
		rc = -LB_ENOMEM;
		goto out;
	}
	msg->term = s->s_term;
	msg->version = version;
	memcpy(msg->digest, digest, LB_DIGEST_LEN);
	msg->count = n;
	msg->table = *t; /* borrowed; chunk 0 carries the options, each chunk its services */
	for (i = 0; i < n; i++) {
		msg->index = i;
		msg->table.services = t->services + start[i]; /* borrowed */
		msg->table.n_services = start[i + 1] - start[i];
		rc = lb_msg_encode(msg, &s->s_buf[i], &s->s_len[i]);
		if (rc != 0)
			goto out;
		s->s_count = i + 1;
	}
	s->s_version = version;
	s->s_valid = true;
out:
	if (rc != 0)
		mgr_snap_clear(s);
	free(start);
	free(msg);
	return rc;
}

int
mgr_snap_get(struct mgr_snap *s, const struct lb_ftable *t, uint64_t version,
	const uint8_t digest[LB_DIGEST_LEN], struct mgr_snap_chunks *out)
{
	int rc;

	if (!s->s_valid || s->s_version != version) {
		rc = build(s, t, version, digest);
		if (rc != 0)
			return rc;
	}
	out->version = s->s_version;
	out->count = s->s_count;
	out->buf = s->s_buf;
	out->len = s->s_len;
	return 0;
}
