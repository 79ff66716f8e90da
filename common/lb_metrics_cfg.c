/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "metrics" group (lb_metrics.h), checked without binding anything so
 * that --check can run it: ADDRESS:PORT with a numeric address.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_metrics.h"

/* "a.b.c.d:port" or "[v6]:port": 0 if it is one. */
static int
parse_listen(const char *s, char *why, size_t len)
{
	char host[64];
	const char *colon;
	unsigned char a[16];
	char *end;
	long port;
	size_t hl;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':') {
			snprintf(why, len, "\"%s\": an IPv6 address is written [ADDRESS]:PORT", s);
			return -1;
		}
		hl = (size_t)(close - s - 1);
		colon = close + 1;
		if (hl >= sizeof(host))
			goto bad_addr;
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET6, host, a) != 1)
			goto bad_addr;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL) {
			snprintf(why, len, "\"%s\": expected ADDRESS:PORT", s);
			return -1;
		}
		hl = (size_t)(colon - s);
		if (hl >= sizeof(host))
			goto bad_addr;
		memcpy(host, s, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET, host, a) != 1)
			goto bad_addr;
	}
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || port < 0 || port > 65535) {
		snprintf(why, len, "\"%s\": the port is 0..65535", s);
		return -1;
	}
	return 0;
bad_addr:
	snprintf(why, len, "\"%s\": not a numeric IPv4 or [IPv6] address", s);
	return -1;
}

int
lb_metrics_cfg_load(const config_setting_t *root, uint16_t default_port, struct lb_metrics_cfg *cfg,
	struct lb_cfg_err *err)
{
	static const char *const fields[] = {"listen", NULL};
	const config_setting_t *g = config_setting_get_member(root, "metrics");
	char def[32], why[160];
	const char *listen;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (g == NULL)
		return 0;
	snprintf(def, sizeof(def), "127.0.0.1:%u", default_port);
	if ((rc = lb_cfg_group(
		     g, fields, "expected a group { listen = \"ADDRESS:PORT\"; }", err)) != 0 ||
		(rc = lb_cfg_get_string(g, "listen", false, def, &listen, err)) != 0)
		return rc;
	if (strlen(listen) >= sizeof(cfg->listen) || parse_listen(listen, why, sizeof(why)) != 0)
		return lb_cfg_error(err, g, "listen", "%s",
			strlen(listen) >= sizeof(cfg->listen) ? "too long" : why);
	snprintf(cfg->listen, sizeof(cfg->listen), "%s", listen);
	cfg->enabled = true;
	return 0;
}
