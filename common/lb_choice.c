/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "lb_choice.h"

const char *const lb_affinity_names[LB_AFF_N] = {"five_tuple", "client_protocol", "client"};
const char *const lb_unusable_names[LB_UNUSABLE_N] = {"redistribute", "reject"};
const char *const lb_balance_names[LB_BALANCE_N] = {"weighted", "least_connections"};

const char *
lb_zone_problem(const char *z, bool empty_ok)
{
	size_t n = strnlen(z, LB_ZONE_LEN), i;

	if (n == 0)
		return empty_ok ? NULL : "empty";
	if (n >= LB_ZONE_LEN)
		return "longer than 15 characters";
	for (i = 0; i < n; i++) {
		char ch = z[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return "not made of letters, digits, '.', '_' and '-'";
	}
	return NULL;
}

int
lb_choice_check(const struct lb_svc_choice *c, char *err, size_t len)
{
	if (c->affinity >= LB_AFF_N || c->on_unusable >= LB_UNUSABLE_N || c->zonal > 1 ||
		c->balance >= LB_BALANCE_N || c->mitigate > 1) {
		snprintf(err, len,
			"affinity %u, on_unusable %u, cross_zone %u, balance %u or mitigate %u out "
			"of range",
			c->affinity, c->on_unusable, c->zonal, c->balance, c->mitigate);
		return -1;
	}
	return 0;
}
