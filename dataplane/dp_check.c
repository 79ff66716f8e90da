/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --check for the data planes (dp_daemon.h), like nginx -t and haproxy -c:
 * what the loaders do not look at, checked without starting anything. The
 * loaders have already checked every field (types, ranges, unknown
 * names, the flow table, the manager and metrics groups); what is left
 * are the files the configuration names: the manager's TLS material and
 * the ports' pcap inputs. EAL's own arguments are EAL's to judge, at
 * start: they are not checked here.
 */
#include <stdio.h>
#include <string.h>

#include "dp_daemon.h"
#include "lb_proof.h"

/* err at the setting path (e.g. "manager.cert") of file. */
static int
at(struct lb_cfg_err *err, config_t *file, const char *path, const char *what)
{
	return lb_cfg_error(err, config_lookup(file, path), NULL, "%s", what);
}

/* The CA parses; the certificate and key parse, and the key is the certificate's. */
static int
check_tls(config_t *file, const struct lb_member_cfg *mc, struct lb_cfg_err *err)
{
	struct lb_proof_signer *signer;
	struct lb_proof_ca *ca;
	char why[300];

	if (strncmp(mc->url, "tls+tcp://", 10) != 0)
		return 0;
	ca = lb_proof_ca_load(mc->ca, why, sizeof(why));
	if (ca == NULL)
		return at(err, file, "manager.ca", why);
	lb_proof_ca_free(ca);
	signer = lb_proof_signer_load(mc->cert, mc->key, why, sizeof(why));
	if (signer == NULL)
		return at(err, file, strstr(why, "key") != NULL ? "manager.key" : "manager.cert",
			why);
	lb_proof_signer_free(signer);
	return 0;
}

/* Each rx_pcap= input of the port's devargs can be read as a capture. */
static int
check_port(const config_setting_t *port, struct lb_cfg_err *err)
{
	const config_setting_t *s = config_setting_get_member(port, "devargs");
	unsigned files = 0;
	uint64_t pkts = 0;
	char why[300];
	int others = 0;

	if (s == NULL || config_setting_get_string(s) == NULL)
		return 0;
	if (lb_devargs_pcaps(
		    config_setting_get_string(s), &files, &others, &pkts, why, sizeof(why)) != 0)
		return lb_cfg_error(err, s, NULL, "%s", why);
	return 0;
}

int
dp_check_done(const struct dp_daemon *d, const char *path, config_t *file,
	const struct lb_member_cfg *mc, const config_setting_t *const *ports, unsigned n)
{
	struct lb_cfg_err err;
	unsigned i;
	int rc;

	rc = check_tls(file, mc, &err);
	for (i = 0; rc == 0 && i < n; i++)
		rc = check_port(ports[i], &err);
	if (rc != 0)
		return dp_config_error(d, err.msg);
	printf("%s: ok\n", path);
	return 0;
}
