/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admission rules (docs/protection.md): what a service and a mux allow of
 * new connections, as plain C beside the flow table that carries them.
 *
 * The rules are part of the flow table, not a side channel, so that the
 * digest covers them and every mux switches its rules at one version (the
 * "atomic bundle" of Nacos' control plugin): a service's rules travel with
 * the service (struct lb_service_cfg.limits), the mux-wide cap with the
 * table's options (struct lb_ftable.mux_rate).
 *
 * A rule whose limit is 0 does not exist. Each rule has its own mode:
 * monitor counts what it would refuse and forwards everything; intercept
 * refuses. What a refused client gets is the service's (refuse): nothing,
 * a TCP RST from the VIP, or an ICMP administratively prohibited.
 *
 * The token bucket and the division of a limit into shares are here too,
 * static inline and without DPDK, so that the unit tests check them
 * against exact arithmetic and the mux runs the very same code.
 */
#ifndef LB_LIMITS_H
#define LB_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_flow.h" /* enum lb_af */

enum lb_limit_mode { LB_LIMIT_MONITOR, LB_LIMIT_INTERCEPT };

enum lb_refuse { LB_REFUSE_DROP, LB_REFUSE_RST, LB_REFUSE_ICMP };

/* A service's rules, in the order the mux checks them. */
enum lb_limit_kind {
	LB_LIM_SOURCE, /* new connections per second from one source prefix */
	LB_LIM_RATE,   /* new connections per second to the service */
	LB_LIM_CONNS,  /* concurrent connections */
	LB_LIM_N
};

/* The largest limit or burst a rule may have. */
#define LB_LIMIT_MAX 100000000u

struct lb_limit_rule {
	uint32_t limit; /* 0: no rule; connections, or new connections per second */
	uint32_t burst; /* rates: the bucket's depth; 0 means the limit */
	uint8_t mode;	/* enum lb_limit_mode */
};

struct lb_svc_limits {
	struct lb_limit_rule rule[LB_LIM_N];
	uint8_t source_prefix; /* of the per-source rule: 1..32, 0 means 32 */
	uint8_t refuse;	       /* enum lb_refuse */
};

/* The names a rule goes by in files, the CLI, counters and errors. */
extern const char *const lb_limit_kind_names[LB_LIM_N];
extern const char *const lb_limit_mode_names[2];
extern const char *const lb_refuse_names[3];

/* Index of name in names[0..n-1], or -1. */
int lb_limit_name_find(const char *const *names, int n, const char *name);

/*
 * names[0..n-1] as a sentence's list, "drop, rst or icmp", into buf (cut
 * to len): what an error about a name that is none of them offers instead.
 */
void lb_limit_name_list(const char *const *names, int n, char *buf, size_t len);

/* True if l holds at least one rule, or a refusal other than the default. */
bool lb_limits_any(const struct lb_svc_limits *l);

static inline bool
lb_limit_rule_equal(const struct lb_limit_rule *a, const struct lb_limit_rule *b)
{
	return a->limit == b->limit && a->burst == b->burst && a->mode == b->mode;
}

/* The same rules (an unset prefix and /32 are the same). */
bool lb_limits_equal(const struct lb_svc_limits *a, const struct lb_svc_limits *b);

/*
 * per_source's prefix: up to /32 for an IPv4 service, /128 for an IPv6
 * one; unset (0) is /32 for IPv4. An IPv6 service's unset prefix is made
 * /64 where its rule enters (the file, limit set): lb_limit_prefix_fill().
 */
static inline unsigned
lb_limit_prefix_max(uint8_t af)
{
	return af == LB_AF_INET6 ? 128 : 32;
}

#define LB_LIMIT_PREFIX6_DEFAULT 64

/* An IPv6 service's per_source rule without a prefix: /64. */
static inline void
lb_limit_prefix_fill(struct lb_svc_limits *l, uint8_t af)
{
	if (af == LB_AF_INET6 && l->rule[LB_LIM_SOURCE].limit != 0 && l->source_prefix == 0)
		l->source_prefix = LB_LIMIT_PREFIX6_DEFAULT;
}

/*
 * Check the rules of a service of family af and protocol proto (what a
 * peer or a file could get wrong): limits and bursts in range, known modes
 * and refusals, the prefix (lb_limit_prefix_max()), no RST for UDP. Returns 0,
 * or -LB_EINVAL with the reason naming the field
 * ("limits.new_per_second.burst: ...") in err.
 */
int lb_limits_check(
	const struct lb_svc_limits *l, uint8_t af, uint8_t proto, char *err, size_t len);

/* The same for one rule named name ("mux_new_per_second"). */
int lb_limit_rule_check(const struct lb_limit_rule *r, const char *name, char *err, size_t len);

/*
 * Write l as a libconfig "limits" group at the given tab indent (nothing
 * if l holds nothing), and a mux-wide rule as its own group.
 */
void lb_limits_write(const struct lb_svc_limits *l, FILE *f, int indent);
void lb_limit_rule_write(const struct lb_limit_rule *r, const char *name, FILE *f, int indent);

/*
 * The rules for people, as history shows them: "new_per_second=100
 * burst=200 intercept, max_connections=10 monitor; refuse=rst", or "none".
 * A mux-wide rule alone: lb_limit_rule_str(r, "mux_new_per_second", ...).
 */
void lb_limits_str(const struct lb_svc_limits *l, char *buf, size_t len);
void lb_limit_rule_str(
	const struct lb_limit_rule *r, const char *name, uint8_t prefix, char *buf, size_t len);

/*
 * The name a rule's counter goes by in a mux's STATUS (at most 47
 * characters): "limit.192.0.2.10:80/tcp.rate.deny", or for the mux-wide cap
 * (kind LB_LIM_N, vip NULL) "limit.mux.deny". counter: 0 checked, 1 passed,
 * 2 would_deny, 3 denied. vip of family af, port in host order. An IPv6
 * VIP is its text in brackets where the name fits ("limit.[2001:db8::10]:
 * 80/tcp.rate.deny"), else "6h" and 16 hex digits of a 64-bit hash of its
 * bytes. The manager sums them over the muxes by the same names.
 */
#define LB_LIMIT_COUNTER_LEN 48
struct lb_addr;
void lb_limit_counter_name(char *buf, size_t len, const struct lb_addr *vip, uint8_t af,
	uint16_t port, uint8_t proto, int kind, int counter);
extern const char *const lb_limit_counter_names[4]; /* checked, passed, would_deny, denied */

/*
 * A service's top talkers in a mux's STATUS: its LB_TOP_REPORTED largest
 * sources over the workers (lb_topk_merge()), rank 0 the largest, each as
 * three counters: "top.192.0.2.10:80/tcp.0.src" (the IPv4 source, network
 * order, in the value's low 32 bits), ".n" (its count of checked new
 * connections since the mux started) and ".err" (the count's error bound).
 * field: 0 src, 1 n, 2 err. The manager merges them over the muxes and
 * makes rates of two STATUS (sluicectl top).
 */
#define LB_TOP_REPORTED 5
void lb_top_counter_name(
	char *buf, size_t len, uint32_t vip, uint16_t port, uint8_t proto, int rank, int field);

/* ---- shares ---- */

/*
 * Share i of total divided among n (n > 0): total / n, and one more for
 * the first total % n shares, so that the shares add up to total exactly.
 */
static inline uint32_t
lb_share(uint32_t total, uint32_t n, uint32_t i)
{
	return total / n + (i < total % n ? 1 : 0);
}

/* ---- the token bucket ---- */

/*
 * A rate of `rate` tokens per second with a depth of `burst`, on a clock
 * of hz ticks per second. The bucket holds credit in 1/hz of a token, so
 * a refill is an exact multiplication (no rounding ever loses or makes a
 * token): elapsed ticks * rate, capped at burst * hz. fill is the ticks an
 * empty bucket takes to fill, so the multiplication never overflows.
 */
struct lb_tb_rate {
	uint64_t rate; /* tokens per second */
	uint64_t cap;  /* burst * hz */
	uint64_t cost; /* hz: the credit of one token */
	uint64_t fill; /* ticks from empty to full */
};

struct lb_tbucket {
	uint64_t credit;
	uint64_t last; /* tick of the last refill */
};

/*
 * A bucket with a rate holds at least one token: a burst shared out over
 * many workers and muxes can leave a share of 0, and a bucket that holds
 * none never gives one, whatever its rate.
 */
static inline void
lb_tb_rate_set(struct lb_tb_rate *r, uint32_t rate, uint32_t burst, uint64_t hz)
{
	if (rate != 0 && burst == 0)
		burst = 1;
	r->rate = rate;
	r->cost = hz;
	r->cap = (uint64_t)burst * hz;
	r->fill = rate != 0 ? r->cap / rate + 1 : UINT64_MAX;
}

/* A bucket full at tick now. */
static inline void
lb_tb_init(struct lb_tbucket *b, const struct lb_tb_rate *r, uint64_t now)
{
	b->credit = r->cap;
	b->last = now;
}

/* Refill to tick now, then take one token if there is one. */
static inline bool
lb_tb_take(struct lb_tbucket *b, const struct lb_tb_rate *r, uint64_t now)
{
	uint64_t dt = now - b->last;

	if (now > b->last) {
		if (dt >= r->fill)
			b->credit = r->cap;
		else {
			b->credit += dt * r->rate;
			if (b->credit > r->cap)
				b->credit = r->cap;
		}
		b->last = now;
	}
	if (b->credit < r->cost)
		return false;
	b->credit -= r->cost;
	return true;
}

#endif /* LB_LIMITS_H */
