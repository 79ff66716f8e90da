/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Addresses of both families as text: parsing what an operator writes (a
 * configuration file, sluicectl) with a reason when it is refused, and the
 * canonical text back (RFC 5952 for IPv6: lower case, leading zeros dropped,
 * the longest run of two or more zero words as "::").
 *
 * struct lb_addr (lb_flow.h) holds either family in 16 bytes; an IPv4
 * address sits in a32[0] with the rest zero. The bytes alone do not say the
 * family (102:304:: and 1.2.3.4 look alike), so the family always travels
 * with the address: a service's af, a backend's host6, an lb_pkt's v6.
 */
#ifndef LB_ADDR_H
#define LB_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_flow.h"

/* Room for any address's text and its NUL (INET6_ADDRSTRLEN). */
#define LB_ADDR_STRLEN 46

/* What a field takes (lb_addr_parse()'s allow). */
#define LB_ADDR_V4 1u
#define LB_ADDR_V6 2u
#define LB_ADDR_ANY (LB_ADDR_V4 | LB_ADDR_V6)
/* IPv6 link-local (fe80::/10) too: a VM's gateway, never a VIP, DIP or PA. */
#define LB_ADDR_LINK_LOCAL 4u

/*
 * Parse s as one unicast address of a family allow names. Refused, with
 * the reason in why (a phrase that follows the quoted text: "is a prefix:
 * an address is wanted"): text that is no address; a prefix ("/64"); a
 * zone index ("fe80::1%eth0", which names an interface of one host); a
 * family the field does not take; the unspecified or a multicast address;
 * an IPv6 link-local address unless allow has LB_ADDR_LINK_LOCAL. On
 * success *af is LB_AF_INET or LB_AF_INET6 and out holds the address.
 * Returns 0 or -LB_EPARSE.
 */
int lb_addr_parse(
	const char *s, unsigned allow, struct lb_addr *out, uint8_t *af, char *why, size_t len);

/* Canonical text of a of family af (LB_AF_INET6, else IPv4) into buf. */
const char *lb_addr_ntop(uint8_t af, const struct lb_addr *a, char *buf, size_t len);

static inline bool
lb_addr_eq(const struct lb_addr *a, const struct lb_addr *b)
{
	return ((a->a64[0] ^ b->a64[0]) | (a->a64[1] ^ b->a64[1])) == 0;
}

/* All zero: no address (a field left out). */
static inline bool
lb_addr_is_zero(const struct lb_addr *a)
{
	return (a->a64[0] | a->a64[1]) == 0;
}

/* An IPv6 address from 16 bytes as they lie in a packet. */
static inline void
lb_addr_v6(struct lb_addr *a, const uint8_t *v6)
{
	memcpy(a->a8, v6, 16);
}

/* True for an IPv6 multicast address (ff00::/8). */
static inline bool
lb_addr6_is_multicast(const uint8_t *v6)
{
	return v6[0] == 0xff;
}

/* a is one of the n IPv4 addresses of list (short lists: a plain scan). */
static inline bool
lb_addr4_in(lb_be32_t a, const lb_be32_t *list, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (list[i] == a)
			return true;
	return false;
}

/* The 16 bytes at a are one of the n IPv6 addresses of list, 16 bytes each. */
static inline bool
lb_addr6_in(const uint8_t *a, const void *list, uint32_t n)
{
	const uint8_t *l = list;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (memcmp(l + 16 * i, a, 16) == 0)
			return true;
	return false;
}

#endif /* LB_ADDR_H */
