/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgr_msg.h"

void
mgr_msg_init(struct lb_msg *m, enum lb_msg_type type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	snprintf(m->sender, sizeof(m->sender), "manager");
}

struct lb_msg *
mgr_msg_new(enum lb_msg_type type)
{
	struct lb_msg *m = malloc(sizeof(*m));

	if (m != NULL)
		mgr_msg_init(m, type);
	return m;
}
