/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Byte order of our own, so that the domain headers, and the manager and
 * sluicectl built on them, need no DPDK (its rte_byteorder.h drags in
 * rte_config.h and the DPDK include path).
 *
 * lb_be16_t / lb_be32_t / lb_be64_t mark values in network byte order, so a
 * missing conversion is visible at the use site; they are plain integers,
 * interchangeable with DPDK's rte_be*_t. The conversions are the compiler's
 * builtins: DPDK 22.11's rte_bswap16() of a variable is an asm volatile
 * xchgb on x86, which the compiler can neither fold into its neighbours nor
 * schedule, while __builtin_bswap16() is one rotate (or none where the
 * value is only compared), and a constant argument folds at compile time.
 */
#ifndef LB_TYPES_H
#define LB_TYPES_H

#include <stdint.h>

/* The byte order, checked when compiling: there is no run-time fallback. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LB_LITTLE_ENDIAN 1
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LB_LITTLE_ENDIAN 0
#else
#error "lb_types.h: the compiler does not say the byte order (__BYTE_ORDER__)"
#endif

typedef uint16_t lb_be16_t;
typedef uint32_t lb_be32_t;
typedef uint64_t lb_be64_t;

static inline uint16_t
lb_bswap16(uint16_t v)
{
	return __builtin_bswap16(v);
}

static inline uint32_t
lb_bswap32(uint32_t v)
{
	return __builtin_bswap32(v);
}

static inline uint64_t
lb_bswap64(uint64_t v)
{
	return __builtin_bswap64(v);
}

static inline uint16_t
lb_be16_to_cpu(lb_be16_t v)
{
#if LB_LITTLE_ENDIAN
	return lb_bswap16(v);
#else
	return v;
#endif
}

static inline uint32_t
lb_be32_to_cpu(lb_be32_t v)
{
#if LB_LITTLE_ENDIAN
	return lb_bswap32(v);
#else
	return v;
#endif
}

static inline uint64_t
lb_be64_to_cpu(lb_be64_t v)
{
#if LB_LITTLE_ENDIAN
	return lb_bswap64(v);
#else
	return v;
#endif
}

static inline lb_be16_t
lb_cpu_to_be16(uint16_t v)
{
	return (lb_be16_t)lb_be16_to_cpu((lb_be16_t)v);
}

static inline lb_be32_t
lb_cpu_to_be32(uint32_t v)
{
	return (lb_be32_t)lb_be32_to_cpu((lb_be32_t)v);
}

static inline lb_be64_t
lb_cpu_to_be64(uint64_t v)
{
	return (lb_be64_t)lb_be64_to_cpu((lb_be64_t)v);
}

/* Little-endian data (SipHash reads its message so, whatever the host order). */
static inline uint64_t
lb_le64_to_cpu(uint64_t v)
{
#if LB_LITTLE_ENDIAN
	return v;
#else
	return lb_bswap64(v);
#endif
}

#endif /* LB_TYPES_H */
