/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the operator's command line for sluice-manager.
 *
 * One nng req0 request per command, one lb_msg each way (CTL_REQUEST,
 * CTL_REPLY), so the CLI knows nothing of the wire format beyond the
 * codec. Every argument is checked before anything is sent, so a typo is a
 * usage error naming the argument, never a round trip.
 *
 *   ctl_args.c   the command line: options, words, the request they make
 *   ctl_conn.c   the connection: dial, TLS, the proof of our name, a call
 *   ctl_cmds.c   the commands: their table, and running one (a change
 *                waits for its version by WAIT; export writes a file)
 *   ctl_stats.c  stats, redrawn like top(1)
 *   ctl_main.c   main: parse, connect, run
 */
#ifndef CTL_H
#define CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "lb_codec.h"
#include "lb_proof.h"

#define CTL_DEFAULT_URL "ipc:///run/sluice/manager.sock"
#define CTL_DEFAULT_SERVER_NAME "sluice-manager"
#define CTL_DEFAULT_TIMEOUT 10.0
/* A commit takes milliseconds: poll from 2 ms, doubling to 50 ms. */
#define CTL_POLL_FIRST_MS 2
#define CTL_POLL_MS 50
#define CTL_MAX_PEM (1u << 20)
/* An applied file travels in one message: leave room for the envelope. */
#define CTL_MAX_FILE (LB_MSG_MAX_BYTES - 4096)

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_REFUSED = 1, /* the manager said no, or a change aborted */
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_UNREACHABLE = 3,
};

/* Command-specific options; each command lists the ones it takes. */
enum {
	CTL_O_PROTO = 1u << 0,
	CTL_O_HOST = 1u << 1,
	CTL_O_WEIGHT = 1u << 2,
	CTL_O_STATE = 1u << 3,
	CTL_O_LIMIT = 1u << 4,
	/* pool options (vip add, vip set) */
	CTL_O_PROBE = 1u << 5,
	CTL_O_PROBE_PORT = 1u << 6,
	CTL_O_PATH = 1u << 7,
	CTL_O_CODES = 1u << 8,
	CTL_O_INTERVAL = 1u << 9,
	CTL_O_PROBE_TIMEOUT = 1u << 10,
	CTL_O_HEALTHY = 1u << 11,
	CTL_O_UNHEALTHY = 1u << 12,
	CTL_O_DRAIN_DELAY = 1u << 13,
	CTL_O_SLOW_START = 1u << 14,
	CTL_O_MIN_HEALTHY = 1u << 15,
	/* stats */
	CTL_O_REFRESH = 1u << 16,
	CTL_O_ONCE = 1u << 17,
	CTL_O_WITHDRAW_BELOW = 1u << 18,
	/* admission rules (limit set) */
	CTL_O_BURST = 1u << 19,
	CTL_O_MODE = 1u << 20,
	CTL_O_PREFIX = 1u << 21,
	CTL_O_REFUSE = 1u << 22,
	CTL_O_MAX_CONNS = 1u << 23,
};

#define CTL_DEFAULT_REFRESH 2.0

#define CTL_O_POOL                                                                                 \
	(CTL_O_PROBE | CTL_O_PROBE_PORT | CTL_O_PATH | CTL_O_CODES | CTL_O_INTERVAL |              \
		CTL_O_PROBE_TIMEOUT | CTL_O_HEALTHY | CTL_O_UNHEALTHY | CTL_O_DRAIN_DELAY |        \
		CTL_O_SLOW_START | CTL_O_MIN_HEALTHY | CTL_O_WITHDRAW_BELOW)

#define CTL_MAX_WORDS 8

struct ctl_opts {
	bool json;
	bool no_wait;
	bool help;
	const char *url;
	const char *ca, *cert, *key;
	bool tls_on_cmdline; /* --ca/--cert/--key given (not just the environment) */
	const char *server_name;
	double timeout;
	unsigned given; /* CTL_O_* seen */
	const char *proto, *host, *weight, *state, *limit, *refresh, *max_conns;
	double refresh_s; /* stats: --refresh, checked by ctl_build_request() */
	const char *burst, *mode, *prefix, *refuse; /* limit set */
	bool once;				    /* stats: one sample */
	const char *pool[12]; /* the pool options' values, as ctl_pool_opts lists them */
	int n_words;
	const char *words[CTL_MAX_WORDS];
};

/* A command: its words, the operation it asks for, what it takes. */
struct ctl_cmd {
	const char *group; /* "vip", "backend", "config", "mux", "limit" or NULL */
	const char *name;
	enum lb_ctl_op op;
	int min_args, max_args; /* positionals after the command's name */
	unsigned opts;		/* CTL_O_* it accepts */
	bool change;		/* commits a new version: wait for it */
	const char *synopsis;
};

/* The commands, as `sluicectl --help` lists them (ctl_cmds.c). */
extern const struct ctl_cmd ctl_cmds[];
extern const size_t ctl_n_cmds;

/* The help text (ctl_args.c). */
extern const char ctl_usage_text[];

/* ---- ctl_args.c ---- */

/* Report a usage error about cmd (NULL: about the command line) and return 2. */
int ctl_usage_error(const struct ctl_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Options and words of the command line (and the environment's defaults); 0 or 2. */
int ctl_parse_args(int argc, char **argv, struct ctl_opts *o);

/* The command the first words name (*n_used of them), or NULL. */
const struct ctl_cmd *ctl_find_cmd(const struct ctl_opts *o, int *n_used);

/* "vip" alone, or "vip frob": name the subcommands the group has; returns 2. */
int ctl_group_error(const char *group, const char *sub);

/*
 * Check the words and options against cmd and fill the request; 0 or 2.
 * Keeps what it parsed that the command uses later in o (refresh_s).
 */
int ctl_build_request(const struct ctl_cmd *cmd, struct ctl_opts *o, const char *const *args,
	int n_args, struct lb_msg *req);

/* "ctl:user@host": who asks, as the manager's history shows it. */
void ctl_sender(char *out, size_t len);

/* ---- ctl_conn.c ---- */

struct ctl_conn {
	nng_socket sock;
	const char *url;
	const struct ctl_opts *opts; /* what it was dialed with (a redirect dials again) */
	bool redirected;	     /* a standby sent us to the leader already */
	double timeout;
	/* tls+tcp: we prove the name on our certificate (lb_proof.h) */
	struct lb_proof_signer *signer;
	bool have_nonce; /* the manager's challenge for this connection */
	uint8_t nonce[LB_NONCE_LEN];
};

/*
 * Dial the manager (--manager, TLS from --ca/--cert/--key), synchronously:
 * an unreachable manager is one immediate, clear error. Returns 0 or an
 * exit code after saying what went wrong.
 */
int ctl_connect(const struct ctl_opts *o, struct ctl_conn *c);

void ctl_close(struct ctl_conn *c);

/*
 * One request, one reply. Returns 0 with *rep a CTL_REPLY (ok or not), or
 * an exit code after saying what went wrong. Over TLS, the first request of
 * a connection is challenged (lb_proof.h) and sent again with the proof.
 */
int ctl_call(struct ctl_conn *c, const struct lb_msg *req, struct lb_msg *rep);

/* ---- ctl_stats.c ---- */

/*
 * stats: ask every --refresh seconds and redraw (q or Ctrl-C quits) on a
 * terminal, print samples one after another elsewhere; one sample with
 * --once or --json. An exit code.
 */
int ctl_stats(struct ctl_conn *c, const struct ctl_opts *o, const struct lb_msg *req);

/* ---- ctl_cmds.c ---- */

/* Connect, send the request, and do what cmd does with the reply; an exit code. */
int ctl_run(const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *const *args,
	int n_args, struct lb_msg *req);

#endif /* CTL_H */
