/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Synthetic traffic: flow numbers to tuples, frames, flow tables and the
 * order in which flows are picked (uniform, Zipf, sequential).
 */
#include <math.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "lb_csum.h"
#include "lb_hdr.h"
#include "lb_maglev.h"

/* Scatters Zipf ranks over flow numbers; prime, so coprime with any n below it. */
#define BENCH_SCATTER 1000003u

void
bench_flow_of(uint64_t f, uint32_t n_services, struct bench_flow *fl)
{
	/* 4096 ports per client address, 2^24 addresses in 11.0.0.0/8. */
	fl->src = lb_cpu_to_be32(0x0b000000u | (uint32_t)((f >> 12) & 0xffffff));
	fl->sport = lb_cpu_to_be16((uint16_t)(16384 + (f & 0xfff)));
	fl->dst = lb_cpu_to_be32(BENCH_VIP_BASE + (uint32_t)(f % n_services));
	fl->dport = lb_cpu_to_be16(BENCH_SVC_PORT);
}

void
bench_put_eth(uint8_t *p, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	struct lb_eth_hdr *eth = (struct lb_eth_hdr *)p;

	memcpy(eth->dst, dst, 6);
	memcpy(eth->src, src, 6);
	eth->type = lb_cpu_to_be16(type);
}

/* Ethernet from the bench's client side to the mux's port. */
static void
put_eth(uint8_t *buf, uint16_t type)
{
	static const uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0x01};
	static const uint8_t smac[6] = {0x02, 0, 0, 0, 0, 0x02};

	bench_put_eth(buf, dmac, smac, type);
}

/* A TCP header without options; the checksum is the caller's. */
static void
put_tcp(struct lb_tcp_hdr *tcp, lb_be16_t sport, lb_be16_t dport, uint8_t tcp_flags)
{
	tcp->sport = sport;
	tcp->dport = dport;
	tcp->seq = lb_cpu_to_be32(1);
	tcp->ack = (tcp_flags & LB_TCP_ACK) ? lb_cpu_to_be32(1) : 0;
	tcp->data_off = 0x50;
	tcp->flags = tcp_flags;
	tcp->window = lb_cpu_to_be16(65535);
}

void
bench_frame(uint8_t *buf, const struct bench_flow *fl, uint8_t tcp_flags, uint16_t len)
{
	struct lb_eth_hdr *eth = (struct lb_eth_hdr *)buf;
	struct lb_ipv4_hdr *ip = (struct lb_ipv4_hdr *)(buf + sizeof(*eth));
	struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(buf + sizeof(*eth) + sizeof(*ip));

	/* A minimum frame is a 54-byte packet and Ethernet padding; larger ones carry payload. */
	uint16_t l4_len = len <= BENCH_FRAME_LEN ? (uint16_t)sizeof(*tcp)
						 : (uint16_t)(len - sizeof(*eth) - sizeof(*ip));

	memset(buf, 0, len);
	put_eth(buf, LB_ETHERTYPE_IPV4);
	lb_ipv4_hdr_init(
		ip, LB_IPPROTO_TCP, fl->src, fl->dst, (uint16_t)(sizeof(*ip) + l4_len), 64);
	ip->frag_off = lb_cpu_to_be16(LB_IPV4_DF);
	ip->csum = lb_ipv4_hdr_csum(ip, sizeof(*ip));
	put_tcp(tcp, fl->sport, fl->dport, tcp_flags);
	tcp->csum = lb_ipv4_l4_csum(ip->src, ip->dst, LB_IPPROTO_TCP, tcp, l4_len);
}

void
bench_addr6(uint8_t *a, uint16_t net, uint32_t n)
{
	static const uint8_t pre[4] = {0x20, 0x01, 0x00, 0x02};
	lb_be32_t v = lb_cpu_to_be32(n);

	memset(a, 0, 16);
	memcpy(a, pre, 4);
	a[6] = (uint8_t)(net >> 8);
	a[7] = (uint8_t)net;
	memcpy(a + 12, &v, 4);
}

void
bench_flow6_of(uint64_t f, uint32_t n_services, struct bench_flow6 *fl)
{
	bench_addr6(fl->src, BENCH_NET6_CLIENT, (uint32_t)((f >> 12) & 0xffffff));
	fl->sport = lb_cpu_to_be16((uint16_t)(16384 + (f & 0xfff)));
	bench_addr6(fl->dst, BENCH_NET6_VIP, (uint32_t)(f % n_services) + 1);
	fl->dport = lb_cpu_to_be16(BENCH_SVC_PORT);
}

void
bench_frame6(uint8_t *buf, const struct bench_flow6 *fl, uint8_t tcp_flags)
{
	struct lb_ipv6_hdr *ip = (struct lb_ipv6_hdr *)(buf + sizeof(struct lb_eth_hdr));
	struct lb_tcp_hdr *tcp = (struct lb_tcp_hdr *)(ip + 1);

	memset(buf, 0, BENCH_FRAME6_LEN);
	put_eth(buf, LB_ETHERTYPE_IPV6);
	lb_ipv6_hdr_init(ip, LB_IPPROTO_TCP, fl->src, fl->dst, sizeof(*tcp), 64);
	put_tcp(tcp, fl->sport, fl->dport, tcp_flags);
	tcp->csum = lb_ipv6_l4_csum(ip->src, ip->dst, LB_IPPROTO_TCP, tcp, sizeof(*tcp));
}

const char *
bench_check6(const uint8_t *p, uint32_t len, const struct bench_flow6 *fl, uint64_t flow,
	const uint8_t *tunnel6, uint32_t n_services, uint32_t n_backends, uint32_t *be)
{
	const struct lb_ipv6_hdr *o = (const struct lb_ipv6_hdr *)(p + sizeof(struct lb_eth_hdr));
	const struct lb_ipv6_hdr *in = o + 1;
	const struct lb_tcp_hdr *tcp = (const struct lb_tcp_hdr *)(in + 1);
	uint8_t host[16];
	lb_be32_t id;

	if (len != sizeof(struct lb_eth_hdr) + 2 * sizeof(*o) + sizeof(*tcp))
		return "frame length (no outer header?)";
	if (((const struct lb_eth_hdr *)p)->type != lb_cpu_to_be16(LB_ETHERTYPE_IPV6) ||
		o->next_hdr != LB_IPPROTO_IPV6 || memcmp(o->src, tunnel6, 16) != 0 ||
		(lb_be32_to_cpu(o->vtc_flow) & 0xfffff) == 0 ||
		lb_be16_to_cpu(o->payload_len) != sizeof(*in) + sizeof(*tcp))
		return "outer IPv6 header (6in6, source, flow label, length)";
	memcpy(&id, in->dst + 12, 4);
	*be = lb_be32_to_cpu(id) - 1;
	if (*be >= n_services * n_backends || *be / n_backends != (uint32_t)(flow % n_services))
		return "inner destination is not a backend of the flow's service";
	bench_addr6(host, BENCH_NET6_HOST, (*be & 0xffff) + 1);
	if (memcmp(o->dst, host, 16) != 0)
		return "outer destination is not the backend's host";
	if (in->hop_limit != 63 || memcmp(in->src, fl->src, 16) != 0)
		return "inner IPv6 header (hop limit or source)";
	if (tcp->dport != lb_cpu_to_be16(BENCH_BE_PORT) || tcp->sport != fl->sport ||
		lb_ipv6_l4_csum(in->src, in->dst, LB_IPPROTO_TCP, tcp, sizeof(*tcp)) != 0)
		return "inner TCP header (port or checksum)";
	return NULL;
}

int
bench_ftable(struct lb_ftable *ft, uint32_t n_services, uint32_t n_backends, uint32_t maglev_size,
	bool v6)
{
	uint32_t i, j;

	memset(ft, 0, sizeof(*ft));
	ft->seed.k0 = 0x5a1ce0f10e5eed5aULL;
	ft->seed.k1 = 0x1ce0f10e5eed0001ULL;
	ft->maglev_size = maglev_size;
	ft->services = calloc(n_services, sizeof(*ft->services));
	if (ft->services == NULL)
		return -1;
	for (i = 0; i < n_services; i++) {
		struct lb_service_cfg *s = &ft->services[i];
		s->id = i;

		if (v6)
			bench_addr6(s->vip.a8, BENCH_NET6_VIP, i + 1);
		else
			lb_addr_v4(&s->vip, lb_cpu_to_be32(BENCH_VIP_BASE + i));
		s->port = BENCH_SVC_PORT;
		s->proto = LB_IPPROTO_TCP;
		s->af = v6 ? LB_AF_INET6 : LB_AF_INET;
		s->backends = calloc(n_backends, sizeof(*s->backends));
		ft->n_services++;
		if (s->backends == NULL) {
			lb_ftable_free(ft);
			return -1;
		}
		s->n_backends = n_backends;
		for (j = 0; j < n_backends; j++) {
			struct lb_backend_cfg *b = &s->backends[j];
			uint32_t id = i * n_backends + j;

			if (v6) {
				bench_addr6(b->dip.a8, BENCH_NET6_DIP, id + 1);
				bench_addr6(b->host.a8, BENCH_NET6_HOST, (id & 0xffff) + 1);
				b->host6 = 1;
			} else {
				lb_addr_v4(&b->dip, lb_cpu_to_be32(BENCH_DIP_BASE + id + 1));
				lb_addr_v4(&b->host,
					lb_cpu_to_be32(BENCH_HOST_BASE + (id & 0xffff) + 1));
			}
			b->port = BENCH_BE_PORT;
			b->weight = 1;
			b->id = id;
		}
	}
	return 0;
}

static inline uint64_t
xorshift64s(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform double in [0, 1). */
static inline double
unit(uint64_t *s)
{
	return (double)(xorshift64s(s) >> 11) * (1.0 / 9007199254740992.0);
}

uint32_t *
bench_sequence(enum bench_dist dist, double s, uint32_t n_flows, uint32_t len, uint64_t seed)
{
	uint32_t *seq = malloc(sizeof(*seq) * len);
	double *cdf = NULL;
	uint64_t st = seed | 1;
	uint32_t i;

	if (seq == NULL)
		return NULL;
	switch (dist) {
	case BENCH_SEQ:
		for (i = 0; i < len; i++)
			seq[i] = i % n_flows;
		break;
	case BENCH_UNIFORM:
		for (i = 0; i < len; i++)
			seq[i] = (uint32_t)(((xorshift64s(&st) >> 32) * n_flows) >> 32);
		break;
	case BENCH_ZIPF:
		/* Inverse CDF over ranks 1..n with weight 1/k^s. */
		cdf = malloc(sizeof(*cdf) * n_flows);
		if (cdf == NULL) {
			free(seq);
			return NULL;
		}
		cdf[0] = 1.0;
		for (i = 1; i < n_flows; i++)
			cdf[i] = cdf[i - 1] + pow((double)i + 1, -s);
		for (i = 0; i < len; i++) {
			double u = unit(&st) * cdf[n_flows - 1];
			uint32_t lo = 0, hi = n_flows - 1;

			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;

				if (cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			seq[i] = (uint32_t)(((uint64_t)lo * BENCH_SCATTER) % n_flows);
		}
		free(cdf);
		break;
	}
	return seq;
}

int
bench_write_pcap(const char *path, uint32_t n, uint32_t n_services, uint8_t tcp_flags, uint16_t len)
{
	struct pcap_pkthdr h = {.caplen = len, .len = len};
	uint8_t frame[BENCH_FRAME_MAX];
	struct bench_flow fl;
	pcap_dumper_t *d;
	pcap_t *p;
	uint32_t i;

	p = pcap_open_dead(DLT_EN10MB, 65535);
	if (p == NULL)
		return -1;
	d = pcap_dump_open(p, path);
	if (d == NULL) {
		pcap_close(p);
		return -1;
	}
	for (i = 0; i < n; i++) {
		bench_flow_of(i, n_services, &fl);
		bench_frame(frame, &fl, tcp_flags, len);
		h.ts.tv_sec = 1;
		h.ts.tv_usec = (suseconds_t)i;
		pcap_dump((u_char *)d, &h, frame);
	}
	pcap_dump_close(d);
	pcap_close(p);
	return 0;
}
