/* SPDX-License-Identifier: BSD-3-Clause */
/* Services files as desired tables (mgr_services.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_hdr.h"
#include "mgr_services.h"
#include "mgr_text.h"

/* "<config>:12: ..." from a text without a file becomes "<apply>:12: ...". */
static void
name_errors(char *msg, size_t len, const char *name)
{
	static const char pfx[] = "<config>:";
	char tmp[LB_CFG_ERR_LEN];

	if (strncmp(msg, pfx, sizeof(pfx) - 1) != 0)
		return;
	snprintf(tmp, sizeof(tmp), "%s:%s", name, msg + sizeof(pfx) - 1);
	snprintf(msg, len, "%s", tmp);
}

/*
 * One `pools` entry: its service (which the file's flow_table must have,
 * and no entry before, seen[0..n_seen)) and options; its key into *out.
 */
static int
pool_entry(const config_setting_t *g, const struct lb_ftable *t, const struct lb_svc_key *seen,
	uint32_t n_seen, struct lb_svc_key *out, struct mgr_pools *pools, struct lb_cfg_err *e)
{
	const char *fields[32], *proto = "tcp";
	struct mgr_pool p = *mgr_pool_defaults();
	struct lb_svc_key k;
	char ks[MGR_SVC_STR];
	struct lb_addr vip;
	uint8_t af;
	long long port;
	uint32_t i, n = 0;
	int rc;

	if (!config_setting_is_group(g))
		return lb_cfg_error(e, g, NULL,
			"expected a group { vip = ...; port = ...; protocol = ...; probe = ...; }");
	fields[n++] = "vip";
	fields[n++] = "port";
	fields[n++] = "protocol";
	for (i = 0; mgr_pool_cfg_fields[i] != NULL; i++)
		fields[n++] = mgr_pool_cfg_fields[i];
	fields[n] = NULL;
	if ((rc = lb_cfg_check_fields(g, fields, e)) != 0 ||
		(rc = lb_cfg_get_addr(g, "vip", true, LB_ADDR_ANY, &vip, &af, e)) != 0 ||
		(rc = lb_cfg_get_int(g, "port", true, 1, 65535, 0, &port, e)) != 0 ||
		(rc = lb_cfg_get_string(g, "protocol", false, "tcp", &proto, e)) != 0)
		return rc;
	if (strcmp(proto, "tcp") != 0 && strcmp(proto, "udp") != 0)
		return lb_cfg_error(e, config_setting_get_member(g, "protocol"), NULL,
			"\"%s\": must be tcp or udp", proto);
	lb_svc_key_make(&k, af, &vip, lb_cpu_to_be16((uint16_t)port),
		strcmp(proto, "udp") == 0 ? LB_IPPROTO_UDP : LB_IPPROTO_TCP);
	mgr_key_str(&k, ks, sizeof(ks));
	if (lb_ftable_find(t, &k) < 0)
		return lb_cfg_error(e, g, NULL, "no service %s in flow_table.services", ks);
	/* By key: an entry of defaults alone leaves no pool behind to find. */
	for (i = 0; i < n_seen; i++)
		if (memcmp(&seen[i], &k, sizeof(k)) == 0)
			return lb_cfg_error(e, g, NULL, "%s has a pool already", ks);
	if ((rc = mgr_pool_from_cfg(g, &p, e)) != 0)
		return rc;
	*out = k;
	return mgr_pools_set(pools, &k, &p) != 0 ? -LB_ENOMEM : 0;
}

/* The optional top-level `pools` list of a services file. */
static int
pools_load(config_setting_t *root, const struct lb_ftable *t, struct mgr_pools *pools,
	struct lb_cfg_err *e)
{
	const config_setting_t *l;
	struct lb_svc_key *seen;
	int i, n, rc;

	if ((rc = lb_cfg_get_list(root, "pools", false, NULL,
		     "expected a list ( { vip = ...; port = ...; probe = ...; }, ... )", &l, &n,
		     e)) != 0)
		return rc;
	if ((seen = calloc((size_t)n + 1, sizeof(*seen))) == NULL)
		return -LB_ENOMEM;
	for (i = 0, rc = 0; i < n && rc == 0; i++)
		rc = pool_entry(config_setting_get_elem(l, (unsigned)i), t, seen, (uint32_t)i,
			&seen[i], pools, e);
	free(seen);
	return rc;
}

int
mgr_services_load(const struct lb_ftable *desired, config_t *c, const char *name,
	struct mgr_meta *meta, struct lb_ftable *out, struct mgr_pools *pools, char *err,
	size_t len)
{
	static const char *const top[] = {"flow_table", "pools", NULL};
	config_setting_t *root = config_root_setting(c), *g, *s;
	struct lb_cfg_err e;
	char hex[40];
	uint32_t i, j;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(pools, 0, sizeof(*pools));
	if (lb_cfg_check_fields(root, top, &e) != 0) {
		name_errors(e.msg, sizeof(e.msg), name);
		snprintf(err, len, "%s", e.msg);
		return -LB_ECONFIG;
	}
	g = config_setting_get_member(root, "flow_table");
	if (g == NULL) {
		snprintf(err, len, "%s: flow_table: missing (flow_table = { services = ( ... ); })",
			name);
		return -LB_ECONFIG;
	}
	/* The manager's seed and Maglev size, unless the file sets its own. */
	if (config_setting_is_group(g) && config_setting_get_member(g, "hash_seed") == NULL) {
		snprintf(hex, sizeof(hex), "%016" PRIx64 "%016" PRIx64, desired->seed.k0,
			desired->seed.k1);
		s = config_setting_add(g, "hash_seed", CONFIG_TYPE_STRING);
		if (s == NULL || config_setting_set_string(s, hex) != CONFIG_TRUE)
			goto nomem;
	}
	if (config_setting_is_group(g) && config_setting_get_member(g, "maglev_size") == NULL) {
		s = config_setting_add(g, "maglev_size", CONFIG_TYPE_INT);
		if (s == NULL ||
			config_setting_set_int(s, (int)desired->maglev_size) != CONFIG_TRUE)
			goto nomem;
	}
	rc = lb_ftable_load(g, out, &e);
	if (rc == 0)
		rc = pools_load(root, out, pools, &e);
	if (rc != 0) {
		lb_ftable_free(out);
		mgr_pools_free(pools);
		name_errors(e.msg, sizeof(e.msg), name);
		snprintf(err, len, "%s", rc == -LB_ENOMEM ? "out of memory" : e.msg);
		return rc;
	}
	/* Ids follow (service, DIP, port): what stays keeps its id. */
	for (i = 0; i < out->n_services; i++) {
		struct lb_service_cfg *sc = &out->services[i];
		const struct lb_service_cfg *old = NULL;
		struct lb_svc_key k;
		int f;

		lb_ftable_key(sc, &k);
		f = lb_ftable_find(desired, &k);
		if (f >= 0)
			old = &desired->services[f];
		sc->id = old != NULL ? old->id : meta->mm_next_service_id++;
		for (j = 0; j < sc->n_backends; j++) {
			const struct lb_backend_cfg *ob =
				old == NULL
					? NULL
					: bsearch(&sc->backends[j], old->backends, old->n_backends,
						  sizeof(*old->backends), lb_backend_cmp);

			sc->backends[j].id = ob != NULL ? ob->id : meta->mm_next_backend_id++;
		}
	}
	meta->mm_seed = out->seed;
	meta->mm_has_seed = true;
	meta->mm_maglev_size = out->maglev_size;
	return 0;
nomem:
	snprintf(err, len, "out of memory");
	return -LB_ENOMEM;
}
