/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "lb_addr.h"
#include "lb_err.h"

static int
refuse(char *why, size_t len, const char *fmt, const char *arg)
{
	snprintf(why, len, fmt, arg);
	return -LB_EPARSE;
}

/*
 * The unicast rules every address field shares. Loopback addresses pass:
 * tests run backends on them (the manager probes 127.0.77.1).
 */
static int
check_v4(const uint8_t *b, char *why, size_t len)
{
	if ((b[0] | b[1] | b[2] | b[3]) == 0)
		return refuse(why, len, "%s", "is the unspecified address");
	if (b[0] >= 224)
		return refuse(why, len, "%s", "is a multicast or reserved address, not unicast");
	return 0;
}

static int
check_v6(const uint8_t *b, unsigned allow, char *why, size_t len)
{
	static const uint8_t zero[16];

	if (memcmp(b, zero, 16) == 0)
		return refuse(why, len, "%s", "is the unspecified address");
	if (lb_addr6_is_multicast(b))
		return refuse(why, len, "%s", "is a multicast address, not unicast");
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80 && !(allow & LB_ADDR_LINK_LOCAL))
		return refuse(why, len, "%s",
			"is link-local (fe80::/10): only a global or unique-local address will "
			"do here");
	/* ::ffff:a.b.c.d is IPv4 in IPv6's clothes: say which one is meant. */
	if (memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff)
		return refuse(why, len, "%s",
			"is an IPv4-mapped IPv6 address: write the IPv4 address itself");
	return 0;
}

int
lb_addr_parse(
	const char *s, unsigned allow, struct lb_addr *out, uint8_t *af, char *why, size_t len)
{
	const char *p;
	uint8_t b[16];

	memset(out, 0, sizeof(*out));
	*af = LB_AF_NONE;
	if (s == NULL || s[0] == '\0')
		return refuse(why, len, "%s", "is empty: an address is wanted");
	if ((p = strchr(s, '/')) != NULL)
		return refuse(why, len, "is a prefix (\"%s\"): an address is wanted", p);
	if ((p = strchr(s, '%')) != NULL)
		return refuse(why, len,
			"is a scoped address (zone \"%s\"): a zone names one host's interface; "
			"give the address alone",
			p + 1);
	if (inet_pton(AF_INET, s, b) == 1) {
		if (!(allow & LB_ADDR_V4))
			return refuse(
				why, len, "%s", "is an IPv4 address: this field takes IPv6 only");
		if (check_v4(b, why, len) != 0)
			return -LB_EPARSE;
		memcpy(&out->a32[0], b, 4);
		*af = LB_AF_INET;
		return 0;
	}
	if (strchr(s, ':') != NULL && inet_pton(AF_INET6, s, b) == 1) {
		if (!(allow & LB_ADDR_V6))
			return refuse(
				why, len, "%s", "is an IPv6 address: this field takes IPv4 only");
		if (check_v6(b, allow, why, len) != 0)
			return -LB_EPARSE;
		memcpy(out->a8, b, 16);
		*af = LB_AF_INET6;
		return 0;
	}
	if ((allow & LB_ADDR_ANY) == LB_ADDR_ANY)
		return refuse(why, len, "%s", "is not an IPv4 or IPv6 address");
	return refuse(why, len, "%s",
		allow & LB_ADDR_V4 ? "is not an IPv4 address" : "is not an IPv6 address");
}

const char *
lb_addr_ntop(uint8_t af, const struct lb_addr *a, char *buf, size_t len)
{
	if (inet_ntop(af == LB_AF_INET6 ? AF_INET6 : AF_INET, a->a8, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

const char *
lb_addr_str(const struct lb_addr *a, char *buf, size_t len)
{
	return lb_addr_ntop(LB_AF_INET, a, buf, len);
}
