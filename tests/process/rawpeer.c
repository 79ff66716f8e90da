/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawpeer: a scripted peer that misbehaves on purpose, for
 * tests/process/test_control_plane.py. It plays one of three parts:
 *
 *   a member      (default) dials the manager's member socket (nng pair1)
 *                 and sends what a real member never would: garbage,
 *                 truncated and oversize messages, a future protocol
 *                 version, votes and commits out of place, a flood of
 *                 snapshot requests, another member's id;
 *   the manager   (--listen) waits for a real mux to dial it and sends it
 *                 PREPAREs on the wrong base, COMMITs it never prepared;
 *   an operator   (--ctl) floods the manager's ctl socket (nng req0).
 *
 * Messages are built with the real codec (lb_msg_encode) and then broken
 * as each step says. Everything that comes back is printed, one line per
 * event, for the test to read:
 *
 *   recv VOTE version=6 base=0 flag=1 id= sender=mux2 digest=... text=""
 *   closed                  the connection was dropped by the other side
 *   expect VOTE ok | FAILED expect VOTE
 *   summary WELCOME=1 ...   counts of every message type received
 *
 * Exit status: 0 every step ran and every expectation held, 1 one did
 * not, 2 usage, 3 the connection could not be made (a TLS handshake the
 * other side refused, nothing listening).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/supplemental/tls/tls.h>

#include "lb_addr.h"
#include "lb_codec.h"
#include "lb_err.h"
#include "lb_ftable.h"
#include "lb_hdr.h"

#include "rawpeer.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: rawpeer [--ca F] [--cert F --key F] [--server-name N] [--id ID]\n"
		"               [--listen | --ctl] [--quiet-status]\n"
		"               [--agent-pas A,B --agent-dips A,B (hello as an agent)] URL "
		"STEP...\n"
		"member steps (to the manager):\n"
		"  hello:ID:VERSION[:DIGEST]  garbage:BYTES[:COUNT]  truncate  oversize:MB\n"
		"  future:PROTO  vote:VERSION[:DIGEST[:no]]  commit:VERSION  abort:VERSION\n"
		"  prepare:VERSION[:BASE]  welcome:VERSION  snapreq:COUNT  status:VERSION\n"
		"  autovote  recv:MS  expect:TYPE:MS  expect-none:TYPE:MS  expect-close:MS\n"
		"  expect-text:TEXT  sleep:MS\n"
		"manager steps (--listen): snapshot:VERSION, prepare:VERSION[:BASE],\n"
		"  welcome:VERSION[:resync], commit:VERSION, abort:VERSION, and the receive steps\n"
		"operator steps (--ctl): ctl-status:N  ctl-malformed:N  ctl-parallel:N:THREADS\n"
		"  ctl-noread:N  ctl-as:NAME (over TLS: challenged, then proven as NAME)  "
		"sleep:MS\n");
}

/* "a,b,c": addresses of either family into v (at most max). */
static int
addr_list(const char *s, struct lb_host_addr *v, uint32_t max, uint32_t *n)
{
	char buf[2048], *tok, *save = NULL, why[128];

	*n = 0;
	snprintf(buf, sizeof(buf), "%s", s != NULL ? s : "");
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (*n == max || lb_addr_parse(tok, LB_ADDR_ANY, &v[*n].a, &v[*n].af, why,
					 sizeof(why)) != 0) {
			fprintf(stderr, "rawpeer: address %s: %s\n", tok,
				*n == max ? "too many" : why);
			return -1;
		}
		(*n)++;
	}
	return 0;
}

/* ---- messages ---- */

static void
addr4(struct lb_addr *a, const char *s)
{
	memset(a, 0, sizeof(*a));
	inet_pton(AF_INET, s, &a->a32[0]);
}

/* A service with one backend: what the fake manager's tables are made of. */
static void
fake_service(struct lb_service_cfg *s, struct lb_backend_cfg *be, int n)
{
	char vip[32], dip[32];

	snprintf(vip, sizeof(vip), "192.0.2.%d", 30 + n);
	snprintf(dip, sizeof(dip), "10.3.3.%d", 1 + n);
	memset(s, 0, sizeof(*s));
	memset(be, 0, sizeof(*be));
	addr4(&s->vip, vip);
	s->port = 80;
	s->proto = LB_IPPROTO_TCP;
	s->af = LB_AF_INET;
	s->id = (uint32_t)n + 1;
	addr4(&be->dip, dip);
	addr4(&be->host, "10.0.3.1");
	be->port = 8080;
	be->weight = 1;
	be->id = (uint32_t)n + 1;
	s->n_backends = 1;
	s->backends = be;
}

/* Playing the manager: chunk 0 of 1 of a one-service table at `version`. */
static int
step_snapshot(struct rp *rp, uint64_t version)
{
	struct lb_service_cfg s;
	struct lb_backend_cfg be;
	struct lb_ftable t = {.seed = {.k0 = 0x0011223344556677ull, .k1 = 0x8899aabbccddeeffull},
		.maglev_size = 251,
		.n_services = 1,
		.services = &s};
	struct lb_msg *m = rp_msg_new(LB_MSG_SNAPSHOT_CHUNK, version);
	int rc;

	fake_service(&s, &be, 0);
	lb_ftable_free(&rp->table);
	if (lb_ftable_copy(&rp->table, &t) != 0)
		return -1;
	lb_ftable_sort(&rp->table);
	lb_ftable_digest(&rp->table, rp->digest);
	rp->version = version;
	memcpy(m->digest, rp->digest, LB_DIGEST_LEN);
	m->index = 0;
	m->count = 1;
	m->table = t; /* borrowed: not freed with the message */
	rc = rp_send_msg(rp, m, NULL, 0);
	free(m);
	return rc;
}

/*
 * PREPARE(version, base): the delta adds one service to the table the
 * fake manager sent, and the digest is that of the result, so a member
 * whose applied table and version match would vote yes.
 */
static int
step_prepare(struct rp *rp, uint64_t version, uint64_t base)
{
	struct lb_service_cfg s;
	struct lb_backend_cfg be;
	struct lb_ftable next = {0};
	struct lb_msg *m = rp_msg_new(LB_MSG_PREPARE, version);
	char err[256];
	int rc;

	fake_service(&s, &be, 1);
	m->base_version = base;
	m->delta.n_upsert = 1;
	m->delta.upsert = &s; /* borrowed */
	if (lb_ftable_apply(&rp->table, &m->delta, &next, err, sizeof(err)) == 0)
		lb_ftable_digest(&next, rp->prep_digest);
	lb_ftable_free(&next);
	memcpy(m->digest, rp->prep_digest, LB_DIGEST_LEN);
	rc = rp_send_msg(rp, m, NULL, 0);
	free(m);
	if (rc == 0)
		printf("sent PREPARE version=%" PRIu64 " base=%" PRIu64 "\n", version, base);
	return rc;
}

/* Every prefix of an encoded HELLO: none of them is a whole message. */
static int
step_truncate(struct rp *rp)
{
	struct lb_msg *m = rp_msg_new(LB_MSG_HELLO, 3), *d = rp_msg_new(0, 0);
	uint8_t *buf = NULL;
	size_t len = 0, n, bad = 0;
	char err[LB_MSG_TEXT];

	m->role = LB_ROLE_MUX;
	snprintf(m->id, sizeof(m->id), "%s", rp->o.id);
	snprintf(m->sender, sizeof(m->sender), "%s", rp->o.id);
	memset(m->digest, 0xab, LB_DIGEST_LEN);
	if (lb_msg_encode(m, &buf, &len) != 0)
		return -1;
	for (n = 1; n < len; n++) {
		/* What the manager's decoder will say, to count on its side. */
		if (lb_msg_decode(buf, n, d, err, sizeof(err)) != 0)
			bad++;
		lb_msg_free(d);
		if (rp_send_raw(rp, buf, n) != 0)
			break;
	}
	printf("sent truncate %zu prefixes of a %zu-byte HELLO, %zu undecodable\n", n - 1, len,
		bad);
	free(buf);
	free(m);
	free(d);
	return 0;
}

static int
step_garbage(struct rp *rp, size_t bytes, long count)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t *buf = malloc(bytes ? bytes : 1);
	struct lb_msg *d = rp_msg_new(0, 0);
	char err[LB_MSG_TEXT];
	long i, bad = 0, proto = 0;
	size_t k;
	int rc = 0;

	if (buf == NULL)
		return -1;
	for (i = 0; i < count && rc == 0; i++) {
		for (k = 0; k < bytes; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (uint8_t)x;
		}
		rc = lb_msg_decode(buf, bytes, d, err, sizeof(err));
		if (rc == -LB_EPROTOCOL)
			proto++;
		else if (rc != 0)
			bad++;
		lb_msg_free(d);
		rc = rp_send_raw(rp, buf, bytes);
	}
	printf("sent garbage %ld x %zu bytes: %ld malformed, %ld another protocol\n", i, bytes, bad,
		proto);
	free(buf);
	free(d);
	return rc;
}

static int
step_oversize(struct rp *rp, size_t mb)
{
	nng_msg *nm;
	int rv;

	if ((rv = nng_msg_alloc(&nm, mb << 20)) != 0) {
		printf("oversize: %s\n", nng_strerror(rv));
		return rv;
	}
	memset(nng_msg_body(nm), 0x5a, mb << 20);
	rv = nng_sendmsg(rp->sock, nm, 0);
	if (rv != 0) {
		nng_msg_free(nm);
		printf("send-failed: %s\n", nng_strerror(rv));
		return rv;
	}
	printf("sent oversize %zu MB\n", mb);
	return 0;
}

/* ---- closing ---- */

#define RP_CLOSE_WAIT_S 5

static int rp_exit_code;

/*
 * nng 1.5.2 sometimes never returns from nng_close() after the other side
 * dropped the connection in the middle of a large TLS send (the oversize
 * step: 8 runs in 120 here). That is the test tool's socket, not the code
 * under test: say so and exit anyway.
 */
static void *
close_watchdog(void *arg)
{
	(void)arg;
	sleep(RP_CLOSE_WAIT_S);
	fprintf(stderr, "rawpeer: nng_close() still blocked after %d s; exiting without it\n",
		RP_CLOSE_WAIT_S);
	fflush(stdout);
	_exit(rp_exit_code);
}

/* ---- the script ---- */

static void
expect_result(struct rp *rp, bool ok, const char *what)
{
	printf("%s %s\n", ok ? "expect ok:" : "FAILED expect:", what);
	if (!ok)
		rp->failures++;
}

static int
run_step(struct rp *rp, char *step)
{
	char *argv[5] = {0};
	char *save = NULL, *tok;
	int argc = 0, t;
	struct lb_msg *m;
	int rc = 0;

	for (tok = strtok_r(step, ":", &save); tok != NULL && argc < 5;
		tok = strtok_r(NULL, ":", &save))
		argv[argc++] = tok;
	if (argc == 0)
		return 2;
#define ARG_U(i, dflt) (argc > (i) ? strtoull(argv[i], NULL, 0) : (dflt))
	if (strcmp(argv[0], "hello") == 0 && argc >= 3) {
		m = rp_msg_new(LB_MSG_HELLO, ARG_U(2, 0));
		m->role = LB_ROLE_MUX;
		snprintf(m->id, sizeof(m->id), "%s", argv[1]);
		if (rp_unhex(argc > 3 ? argv[3] : NULL, m->digest) != 0)
			return 2;
		if (rp->o.agent_pas != NULL || rp->o.agent_dips != NULL) {
			m->role = LB_ROLE_AGENT;
			if (addr_list(rp->o.agent_pas, m->pas, LB_MSG_MAX_PAS, &m->n_pas) != 0 ||
				addr_list(rp->o.agent_dips, m->dips, LB_MSG_MAX_DIPS, &m->n_dips) !=
					0)
				return 2;
		}
		rc = rp_send_msg(rp, m, NULL, 0);
		free(rp->hello);
		rp->hello = m; /* kept to answer a CHALLENGE */
	} else if (strcmp(argv[0], "future") == 0 && argc == 2) {
		m = rp_msg_new(LB_MSG_HELLO, 0);
		m->role = LB_ROLE_MUX;
		snprintf(m->id, sizeof(m->id), "%s", rp->o.id);
		rc = rp_send_msg(rp, m, rp_patch_protocol, strtol(argv[1], NULL, 0));
		free(m);
	} else if ((strcmp(argv[0], "vote") == 0 || strcmp(argv[0], "commit") == 0 ||
			   strcmp(argv[0], "abort") == 0) &&
		   argc >= 2) {
		m = rp_msg_new(argv[0][0] == 'v'   ? LB_MSG_VOTE
			       : argv[0][0] == 'c' ? LB_MSG_COMMIT
						   : LB_MSG_ABORT,
			ARG_U(1, 0));
		if (argc > 2) {
			if (rp_unhex(argv[2], m->digest) != 0)
				return 2;
		} else {
			/* The last PREPARE's digest, sent (the manager) or received (a member). */
			memcpy(m->digest, rp->prep_digest, LB_DIGEST_LEN);
		}
		m->flag = !(argc > 3 && strcmp(argv[3], "no") == 0);
		rc = rp_send_msg(rp, m, NULL, 0);
		free(m);
	} else if (strcmp(argv[0], "welcome") == 0 && argc >= 2) {
		m = rp_msg_new(LB_MSG_WELCOME, ARG_U(1, 0));
		m->flag = argc > 2 && strcmp(argv[2], "resync") == 0;
		rc = rp_send_msg(rp, m, NULL, 0);
		free(m);
	} else if (strcmp(argv[0], "status") == 0 && argc == 2) {
		m = rp_msg_new(LB_MSG_STATUS, ARG_U(1, 0));
		rc = rp_send_msg(rp, m, NULL, 0);
		free(m);
	} else if (strcmp(argv[0], "snapreq") == 0 && argc == 2) {
		long i, n = strtol(argv[1], NULL, 0);

		m = rp_msg_new(LB_MSG_SNAPSHOT_REQUEST, 0);
		for (i = 0; i < n && rc == 0; i++)
			rc = rp_send_msg(rp, m, NULL, 0);
		printf("sent %ld SNAPSHOT_REQUEST\n", i);
		free(m);
	} else if (strcmp(argv[0], "prepare") == 0 && argc >= 2) {
		rc = step_prepare(rp, ARG_U(1, 1), ARG_U(2, ARG_U(1, 1) - 1));
	} else if (strcmp(argv[0], "snapshot") == 0 && argc == 2) {
		rc = step_snapshot(rp, ARG_U(1, 1));
	} else if (strcmp(argv[0], "garbage") == 0 && argc >= 2) {
		rc = step_garbage(rp, ARG_U(1, 16), (long)ARG_U(2, 1));
	} else if (strcmp(argv[0], "truncate") == 0) {
		rc = step_truncate(rp);
	} else if (strcmp(argv[0], "oversize") == 0 && argc == 2) {
		rc = step_oversize(rp, ARG_U(1, 65));
	} else if (strcmp(argv[0], "autovote") == 0) {
		rp->autovote = true;
	} else if (strcmp(argv[0], "recv") == 0 && argc == 2) {
		rp_receive(rp, rp_now_ms() + ARG_U(1, 0), 0);
	} else if (strcmp(argv[0], "sleep") == 0 && argc == 2) {
		usleep((useconds_t)ARG_U(1, 0) * 1000);
	} else if ((strcmp(argv[0], "expect") == 0 || strcmp(argv[0], "expect-none") == 0) &&
		   argc == 3 && (t = rp_type_of(argv[1])) > 0) {
		bool none = argv[0][6] == '-';
		char what[128];

		rp_receive(rp, rp_now_ms() + ARG_U(2, 0), none ? 0 : t);
		snprintf(what, sizeof(what), "%s%s within %s ms", none ? "no " : "", argv[1],
			argv[2]);
		expect_result(rp, (rp->received[t] > rp->consumed[t]) != none, what);
		rp->consumed[t] = rp->received[t] > rp->consumed[t] && !none ? rp->consumed[t] + 1
									     : rp->received[t];
	} else if (strcmp(argv[0], "expect-close") == 0 && argc == 2) {
		uint64_t end = rp_now_ms() + ARG_U(1, 0);

		while (__atomic_load_n(&rp->closed, __ATOMIC_ACQUIRE) == 0 && rp_now_ms() < end)
			rp_receive(rp, rp_now_ms() + RP_TICK_MS, 0);
		expect_result(rp, __atomic_load_n(&rp->closed, __ATOMIC_ACQUIRE) != 0,
			"the connection dropped");
	} else if (strcmp(argv[0], "ctl-status") == 0 && argc == 2) {
		rp_ctl_status(rp, (long)ARG_U(1, 1));
	} else if (strcmp(argv[0], "ctl-malformed") == 0 && argc == 2) {
		rp_ctl_malformed(rp, (long)ARG_U(1, 1));
	} else if (strcmp(argv[0], "ctl-parallel") == 0 && argc == 3) {
		rp_ctl_parallel(rp, (long)ARG_U(1, 1), (long)ARG_U(2, 1));
	} else if (strcmp(argv[0], "ctl-noread") == 0 && argc == 2) {
		rp_ctl_noread(rp, (long)ARG_U(1, 1));
	} else if (strcmp(argv[0], "ctl-as") == 0 && argc == 2) {
		rc = rp_ctl_as(rp, argv[1]);
	} else {
		return 2;
	}
#undef ARG_U
	fflush(stdout);
	return rc != 0 ? 1 : 0;
}

/*
 * The options, each setting a string or a flag of o: 0 when parsed, 1 after
 * --help (printed), 2 on a usage error (printed).
 */
static int
parse_options(struct rp_opts *o, int argc, char **argv)
{
	const struct {
		const char *name;
		const char **str; /* the option's argument goes here, */
		bool *flag;	  /* or the option sets this */
	} opts[] = {
		{"ca", &o->ca, NULL},
		{"cert", &o->cert, NULL},
		{"key", &o->key, NULL},
		{"server-name", &o->server_name, NULL},
		{"id", &o->id, NULL},
		{"listen", NULL, &o->listen},
		{"ctl", NULL, &o->ctl},
		{"quiet-status", NULL, &o->quiet_status},
		{"agent-pas", &o->agent_pas, NULL},
		{"agent-dips", &o->agent_dips, NULL},
	};
	enum { N_OPTS = sizeof(opts) / sizeof(opts[0]) };
	struct option longopts[N_OPTS + 2];
	int opt, idx, i;

	memset(longopts, 0, sizeof(longopts));
	for (i = 0; i < N_OPTS; i++) {
		longopts[i].name = opts[i].name;
		longopts[i].has_arg = opts[i].str != NULL ? required_argument : no_argument;
	}
	longopts[N_OPTS] = (struct option){"help", no_argument, NULL, 'h'};
	while ((opt = getopt_long(argc, argv, "+h", longopts, &idx)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 1;
		}
		if (opt != 0) {
			usage(stderr);
			return 2;
		}
		if (opts[idx].str != NULL)
			*opts[idx].str = optarg;
		else
			*opts[idx].flag = true;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct rp *rp = calloc(1, sizeof(*rp));
	pthread_t watchdog;
	int i, rc, t;

	if (rp == NULL)
		return 1;
	rp->o.server_name = "sluice-manager";
	rp->o.id = "rawpeer";
	rc = parse_options(&rp->o, argc, argv);
	if (rc != 0)
		return rc == 1 ? 0 : 2;
	if (optind >= argc || (rp->o.cert == NULL) != (rp->o.key == NULL) ||
		(rp->o.listen && rp->o.ctl)) {
		usage(stderr);
		return 2;
	}
	rp->o.url = argv[optind++];
	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = rp_open(rp);
	for (i = optind; rc == 0 && i < argc; i++) {
		char step[256];

		snprintf(step, sizeof(step), "%s", argv[i]);
		printf("step %s\n", argv[i]);
		rc = run_step(rp, step);
		if (rc == 2) {
			fprintf(stderr, "rawpeer: bad step %s\n", argv[i]);
			usage(stderr);
		}
	}
	printf("summary");
	for (t = 1; t < RP_TYPES; t++)
		printf(" %s=%" PRIu64, rp_type_name((enum lb_msg_type)t), rp->received[t]);
	printf(" malformed=%" PRIu64 " closed=%d\n", rp->malformed,
		__atomic_load_n(&rp->closed, __ATOMIC_ACQUIRE));
	fflush(stdout);
	if (rc == 0 && rp->failures > 0)
		rc = 1;
	/* Our own close is not the other side dropping us. */
	nng_pipe_notify(rp->sock, NNG_PIPE_EV_REM_POST, NULL, NULL);
	rp_exit_code = rc;
	if (pthread_create(&watchdog, NULL, close_watchdog, NULL) == 0)
		pthread_detach(watchdog);
	nng_close(rp->sock);
	if (rp->tls != NULL)
		nng_tls_config_free(rp->tls);
	lb_ftable_free(&rp->table);
	lb_proof_signer_free(rp->signer);
	free(rp->hello);
	free(rp);
	return rc;
}
