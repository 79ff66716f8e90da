/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BIRD 2 from the outside: the configuration the speaker generates, and a
 * client for BIRD's control socket (what birdc speaks). Sluice never
 * speaks BGP itself.
 *
 * The control protocol (BIRD's doc/reply_codes): BIRD greets with
 * "0001 BIRD 2.0.12 ready."; every command is one line; a reply is lines
 * "NNNN-text" (more follows), " text" (continues the previous code) and a
 * last "NNNN text". Codes 0xxx end a successful command, 1xxx/2xxx carry
 * data, 8xxx are run-time errors (8002: the configuration file is wrong,
 * BIRD keeps running the old one), 9xxx errors of the command itself.
 *
 * Announcements change by rewriting one included file of
 * "route VIP/32 blackhole;" lines and sending "configure": BIRD
 * reconfigures the static protocol in place, and its BGP channels export
 * the difference without touching the sessions. The BGP channel sets the
 * next hop to the mux's data-plane address ("next hop address"), which the
 * routers accept as a third-party next hop on the shared subnet.
 *
 * Found while writing this, BIRD 2.0.12: an "include" must start its own
 * line ("protocol static vips { ipv4; include "f"; }" is a syntax error);
 * the protocol times are printed as "%s" (unix seconds, one token) because
 * the default format changes shape after 20 hours.
 */
#ifndef MUX_BIRD_H
#define MUX_BIRD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mux_bgp_cfg.h"

#define MUX_BIRD_STATIC "vips" /* the static protocol holding the VIP routes */
#define MUX_BIRD_REPLY_MAX 65536

/* Files of the speaker in run_dir. */
struct mux_bird_paths {
	char dir[MUX_BGP_RUN_DIR_MAX];
	char conf[MUX_BGP_RUN_DIR_MAX + 16]; /* bird.conf, generated */
	char vips[MUX_BGP_RUN_DIR_MAX + 16]; /* vips.conf, the routes, rewritten */
	char ctl[MUX_BGP_RUN_DIR_MAX + 16];  /* bird.ctl, the control socket */
	char log[MUX_BGP_RUN_DIR_MAX + 16];  /* bird.log */
};

void mux_bird_paths(struct mux_bird_paths *p, const char *dir);

/*
 * BIRD's configuration for cfg into buf: router id, the static protocol
 * including p->vips, one BGP protocol per neighbor ("n0", "n1" ...) with
 * the timers and the next hop. Returns the length, or -1 if buf is small.
 */
int mux_bird_conf(
	const struct mux_bgp_cfg *cfg, const struct mux_bird_paths *p, char *buf, size_t len);

/* The routes file for vips (network order): one "route A.B.C.D/32 blackhole;" each. */
int mux_bird_vips(const uint32_t *vips, uint32_t n, char *buf, size_t len);

/* Write len bytes to path through path.tmp and a rename. Returns 0 or -errno. */
int mux_bird_write_file(const char *path, const char *buf, size_t len);

/*
 * One line of the control protocol (without its newline). *code: its reply
 * code (continuation lines: cont_code, the previous one); *last: it ends
 * the reply; *text: what follows the code. Returns 0, or -1 for a line
 * that is none of the three forms.
 */
int mux_bird_parse_line(const char *line, int cont_code, int *code, bool *last, const char **text);

/* A BGP or static protocol, one row of "show protocols". */
struct mux_bird_proto {
	char name[32];
	char proto[16]; /* BGP, Static, Device */
	char state[16]; /* up, start, down ... */
	uint64_t since_unix;
	char info[24];	/* BGP: Established, Active, Connect, Idle, OpenSent ... */
	char error[96]; /* the rest of the info column: BIRD's last error */
};

/*
 * Rows of a "show protocols" reply as mux_bird_cmd() returns it (lines of
 * "CODE text"), at most max. Returns how many.
 */
int mux_bird_parse_protocols(const char *reply, struct mux_bird_proto *out, int max);

/* A connection to BIRD's control socket. */
struct mux_bird {
	int fd;
	size_t len; /* bytes in buf not yet taken */
	char buf[4096];
};

/*
 * Connect to path and read the greeting, waiting at most timeout_ms.
 * Returns 0, or -1 with the reason in err.
 */
int mux_bird_connect(struct mux_bird *b, const char *path, int timeout_ms, char *err, size_t len);

void mux_bird_close(struct mux_bird *b);

/*
 * Send cmd and read its reply, at most timeout_ms. reply (may be NULL)
 * receives its lines as "CODE text\n", continuation lines under their
 * code. Returns the code of the last line (0..9999: 0xxx success, 8xxx and
 * 9xxx BIRD's errors), or -1 when the connection failed or timed out (err
 * says which; the connection is closed then).
 */
int mux_bird_cmd(struct mux_bird *b, const char *cmd, int timeout_ms, char *reply, size_t rlen,
	char *err, size_t elen);

#endif /* MUX_BIRD_H */
