/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One DIP probe as a non-blocking socket state machine, driven by the
 * manager's event loop through an epoll set: never a thread, never a
 * blocking call.
 *
 *   TCP:  connect (O_NONBLOCK) -> writable -> SO_ERROR 0: up.
 *   HTTP: the same, then "GET path HTTP/1.0" with Host and Connection:
 *         close, then read the status line: its code must be one the
 *         pool accepts.
 *
 * The deadline is the caller's (DIP health keeps every probe's in one
 * heap; mgr_dip_prober.c runs them). A probe ends with a reset (SO_LINGER 0) rather than a FIN, so
 * that 2,000 probes a second leave no TIME_WAIT sockets behind on either
 * side. Failure reasons are short and stable, for people and greps:
 * "connect: connection refused", "HTTP 503", "timeout after 2 s".
 */
#ifndef MGR_DIP_PROBE_H
#define MGR_DIP_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "lb_flow.h"
#include "mgr_health.h" /* enum mgr_dip_probe_rc, MGR_DIP_PROBE_WHY */
#include "mgr_pool.h"

enum mgr_dip_probe_stage { MGR_DIP_IDLE = 0, MGR_DIP_CONNECTING, MGR_DIP_SENDING, MGR_DIP_READING };

struct mgr_dip_probe {
	int pr_fd;	/* -1 when idle */
	void *pr_owner; /* epoll's data.ptr for it */
	uint8_t pr_stage;
	uint8_t pr_af;	      /* the DIP's family: LB_AF_INET or LB_AF_INET6 */
	uint16_t pr_sent;     /* bytes of the request sent */
	uint16_t pr_got;      /* bytes of the reply held */
	char pr_rx[40];	      /* "HTTP/1.1 200 OK\r\n": the status line is all we read */
	uint64_t pr_start_us; /* the prober's: when it started (its latency histogram) */
};

void mgr_dip_probe_init(struct mgr_dip_probe *p);

/*
 * Open a socket and start connecting to dip:port, dip of family af (a TCP
 * or an IPv6 one, as its service is); the socket joins epfd with
 * data.ptr = owner. Returns PENDING, or DOWN (an error the connect
 * returned at once: "connect: network is unreachable") or NOSOCK with why.
 */
enum mgr_dip_probe_rc mgr_dip_probe_start(struct mgr_dip_probe *p, int epfd, void *owner,
	uint8_t af, const struct lb_addr *dip, uint16_t port, char *why, size_t len);

/* An epoll event on the probe's socket: advance it. Ends closed unless PENDING. */
enum mgr_dip_probe_rc mgr_dip_probe_event(struct mgr_dip_probe *p, int epfd, uint32_t events,
	const struct mgr_pool *pool, const struct lb_addr *dip, char *why, size_t len);

/* The deadline passed: close it and say what it was waiting for. */
void mgr_dip_probe_timeout(struct mgr_dip_probe *p, uint32_t timeout_s, char *why, size_t len);

/* Close without a verdict (the backend is gone). */
void mgr_dip_probe_close(struct mgr_dip_probe *p);

/*
 * "HTTP/1.1 503 Service Unavailable" -> 503; -1 when the text is not a
 * status line. Exposed for the tests.
 */
int mgr_dip_probe_status_code(const char *line, size_t len);

#endif /* MGR_DIP_PROBE_H */
