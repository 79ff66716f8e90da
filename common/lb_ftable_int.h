/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What lb_ftable.c, lb_ftable_validate.c and lb_ftable_delta.c share, and
 * no one else: the flow table's operations are split by subject, not
 * behind an interface.
 */
#ifndef LB_FTABLE_INT_H
#define LB_FTABLE_INT_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lb_ftable.h"

/* qsort and memcpy with no elements: their pointers may be NULL then. */
static inline void
sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void
copy_n(void *dst, const void *src, size_t n, size_t size)
{
	if (n > 0)
		memcpy(dst, src, n * size);
}

/* dst gets a copy of the n ids of src (NULL when n is 0). 0 or -LB_ENOMEM. */
int lb_ftable_copy_ids(lb_ftable_id **dst, uint32_t *n_dst, const lb_ftable_id *src, uint32_t n);
/* dst gets src with a copy of its backends. 0 or -LB_ENOMEM. */
int lb_ftable_copy_service(struct lb_service_cfg *dst, const struct lb_service_cfg *src);

/* "tcp 192.0.2.10:80", "udp [2001:db8::10]:53": a service in a message; buf. */
const char *lb_ftable_svc_name(const struct lb_service_cfg *s, char *buf, size_t len);

#endif /* LB_FTABLE_INT_H */
