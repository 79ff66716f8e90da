/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl's commands: their table (words, operation, arguments, options)
 * and what running one does with the manager's reply.
 *
 * A change (vip add/set/del, backend add/del/set, config apply, mux
 * drain/undrain) is
 * accepted by the manager as "will commit as version N"; by default the
 * CLI then polls WAIT N until every member has voted and the version is
 * committed or aborted, so a script that runs sluicectl knows the data
 * plane has it. WAIT's answer is read from its typed fields (lb_wait);
 * the JSON is only printed, for --json.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"

const struct ctl_cmd ctl_cmds[] = {
	{NULL, "status", LB_CTL_STATUS, 0, 0, 0, false, "status"},
	{"vip", "list", LB_CTL_VIP_LIST, 0, 0, 0, false, "vip list"},
	{"vip", "show", LB_CTL_VIP_LIST, 1, 1, CTL_O_PROTO, false,
		"vip show VIP:PORT [--proto tcp|udp]"},
	{"vip", "add", LB_CTL_VIP_ADD, 1, 1, CTL_O_PROTO | CTL_O_POOL, true,
		"vip add VIP:PORT [--proto tcp|udp] [POOL OPTIONS]"},
	{"vip", "set", LB_CTL_VIP_SET, 1, 1, CTL_O_PROTO | CTL_O_POOL, true,
		"vip set VIP:PORT [--proto tcp|udp] [--probe none|tcp|http] [--probe-port N] "
		"[--path P] [--codes 200-399] [--interval S] [--probe-timeout S] [--healthy N] "
		"[--unhealthy N] [--drain-delay S] [--slow-start S] [--min-healthy N|N%|N,M%] "
		"[--withdraw-below N|N%|N,M%]"},
	{"vip", "del", LB_CTL_VIP_DEL, 1, 1, CTL_O_PROTO, true,
		"vip del VIP:PORT [--proto tcp|udp]"},
	{"backend", "add", LB_CTL_BACKEND_ADD, 2, 2,
		CTL_O_PROTO | CTL_O_HOST | CTL_O_WEIGHT | CTL_O_STATE | CTL_O_MAX_CONNS, true,
		"backend add VIP:PORT DIP:PORT --host PA [--weight N] "
		"[--state active|drain|maint] [--max-connections N] [--proto tcp|udp]"},
	{"backend", "list", LB_CTL_BACKEND_LIST, 0, 0, 0, false, "backend list"},
	{"backend", "del", LB_CTL_BACKEND_DEL, 2, 2, CTL_O_PROTO, true,
		"backend del VIP:PORT DIP:PORT [--proto tcp|udp]"},
	{"backend", "set", LB_CTL_BACKEND_SET, 2, 2,
		CTL_O_PROTO | CTL_O_HOST | CTL_O_WEIGHT | CTL_O_STATE | CTL_O_MAX_CONNS, true,
		"backend set VIP:PORT DIP:PORT [--weight N] [--state active|drain|maint] "
		"[--host PA] [--max-connections N] [--proto tcp|udp]"},
	{NULL, "stats", LB_CTL_STATS, 0, 0, CTL_O_REFRESH | CTL_O_ONCE, false,
		"stats [--refresh S] [--once]"},
	{NULL, "history", LB_CTL_HISTORY, 0, 0, CTL_O_LIMIT, false, "history [--limit N]"},
	{"config", "export", LB_CTL_EXPORT, 0, 1, 0, false, "config export [FILE]"},
	{"config", "apply", LB_CTL_APPLY, 1, 1, 0, true, "config apply [-f] FILE"},
	{"mux", "drain", LB_CTL_MUX_DRAIN, 1, 1, 0, true, "mux drain ID"},
	{"mux", "undrain", LB_CTL_MUX_UNDRAIN, 1, 1, 0, true, "mux undrain ID"},
	{"limit", "set", LB_CTL_LIMIT_SET, 2, 3,
		CTL_O_PROTO | CTL_O_BURST | CTL_O_MODE | CTL_O_PREFIX | CTL_O_REFUSE, true,
		"limit set VIP:PORT|mux per_source|new_per_second|max_connections [LIMIT] "
		"[--burst N] [--mode monitor|intercept] [--prefix N] [--refuse drop|rst|icmp] "
		"[--proto tcp|udp]"},
	{"limit", "del", LB_CTL_LIMIT_DEL, 1, 2, CTL_O_PROTO, true,
		"limit del VIP:PORT|mux [RULE] [--proto tcp|udp]"},
	{"limit", "list", LB_CTL_LIMIT_LIST, 0, 0, 0, false, "limit list"},
	{NULL, "top", LB_CTL_TOP, 1, 1, CTL_O_PROTO, false, "top VIP[:PORT] [--proto tcp|udp]"},
};

const size_t ctl_n_cmds = sizeof(ctl_cmds) / sizeof(ctl_cmds[0]);

static void
ctl_print(const char *text)
{
	size_t n;

	if (text == NULL || *text == '\0')
		return;
	n = strlen(text);
	fputs(text, stdout);
	if (text[n - 1] != '\n')
		fputc('\n', stdout);
}

static double
ctl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Poll WAIT until `version` is committed or aborted, or --timeout passes. */
static int
ctl_wait(struct ctl_conn *c, const struct ctl_opts *o, uint64_t version)
{
	struct timespec nap = {0, CTL_POLL_FIRST_MS * 1000000L};
	double deadline = ctl_now() + o->timeout;
	struct lb_msg req, rep;
	uint64_t v;
	int rc;

	for (;;) {
		memset(&req, 0, sizeof(req));
		memset(&rep, 0, sizeof(rep));
		req.type = LB_MSG_CTL_REQUEST;
		ctl_sender(req.sender, sizeof(req.sender));
		req.role = LB_ROLE_CTL;
		req.ctl.op = LB_CTL_WAIT;
		req.version = version;
		rc = ctl_call(c, &req, &rep);
		if (rc != 0) {
			lb_msg_free(&rep);
			fprintf(stderr,
				"sluicectl: the change was accepted as version %" PRIu64
				": sluicectl history tells how it ended\n",
				version);
			return rc;
		}
		if (!rep.flag) {
			fprintf(stderr, "sluicectl: %s\n", rep.text);
			lb_msg_free(&rep);
			return CTL_EXIT_REFUSED;
		}
		/* The answer's typed fields: the JSON is for --json only. */
		v = rep.wait.state == LB_WAIT_COMMITTED ? rep.wait.committed_as : version;
		if (rep.wait.state == LB_WAIT_COMMITTED) {
			if (o->json)
				ctl_print(rep.json);
			else
				printf("committed as version %" PRIu64 "\n", v);
			lb_msg_free(&rep);
			return CTL_EXIT_OK;
		}
		if (rep.wait.state == LB_WAIT_ABORTED) {
			if (o->json)
				ctl_print(rep.json);
			fprintf(stderr, "sluicectl: version %" PRIu64 " aborted: %s\n", v,
				rep.wait.reason[0] != '\0' ? rep.wait.reason : "no reason given");
			lb_msg_free(&rep);
			return CTL_EXIT_REFUSED;
		}
		if (rep.wait.state != LB_WAIT_PENDING) {
			fprintf(stderr, "sluicectl: bad WAIT reply from the manager: %s\n",
				rep.json != NULL && rep.json[0] != '\0' ? rep.json
									: "(no wait state)");
			lb_msg_free(&rep);
			return CTL_EXIT_UNREACHABLE;
		}
		if (ctl_now() + CTL_POLL_MS / 1000.0 > deadline) {
			if (o->json)
				ctl_print(rep.json);
			fprintf(stderr,
				"sluicectl: not committed after %g s: still pending as version "
				"%" PRIu64 "\n",
				o->timeout, v);
			lb_msg_free(&rep);
			return CTL_EXIT_REFUSED;
		}
		lb_msg_free(&rep);
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < CTL_POLL_MS * 1000000L)
			nap.tv_nsec = nap.tv_nsec * 2 < CTL_POLL_MS * 1000000L
					      ? nap.tv_nsec * 2
					      : CTL_POLL_MS * 1000000L;
	}
}

static int
ctl_write_file(const char *path, const char *text)
{
	size_t n = text != NULL ? strlen(text) : 0;
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "sluicectl: config export: %s: %s\n", path, strerror(errno));
		return CTL_EXIT_REFUSED;
	}
	if (fwrite(text != NULL ? text : "", 1, n, f) != n ||
		(n > 0 && text[n - 1] != '\n' && fputc('\n', f) == EOF)) {
		fprintf(stderr, "sluicectl: config export: %s: %s\n", path, strerror(errno));
		fclose(f);
		return CTL_EXIT_REFUSED;
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "sluicectl: config export: %s: %s\n", path, strerror(errno));
		return CTL_EXIT_REFUSED;
	}
	return 0;
}

int
ctl_run(const struct ctl_cmd *cmd, const struct ctl_opts *o, const char *const *args, int n_args,
	struct lb_msg *req)
{
	struct ctl_conn conn;
	struct lb_msg rep;
	int rc;

	rc = ctl_connect(o, &conn);
	if (rc != 0)
		return rc;
	if (cmd->op == LB_CTL_STATS) {
		rc = ctl_stats(&conn, o, req);
		ctl_close(&conn);
		return rc;
	}
	memset(&rep, 0, sizeof(rep));
	rc = ctl_call(&conn, req, &rep);
	if (rc != 0)
		goto out;
	if (!rep.flag) {
		fprintf(stderr, "sluicectl: %s\n", rep.text[0] != '\0' ? rep.text : "refused");
		rc = CTL_EXIT_REFUSED;
		goto out;
	}

	if (cmd->change) {
		if (!o->no_wait) {
			rc = ctl_wait(&conn, o, rep.version);
		} else if (o->json) {
			ctl_print(rep.json);
		} else {
			printf("accepted: will commit as version %" PRIu64 "\n", rep.version);
		}
	} else if (cmd->op == LB_CTL_EXPORT && n_args == 1) {
		rc = ctl_write_file(args[0], rep.body);
		if (rc == 0 && o->json)
			ctl_print(rep.json);
		else if (rc == 0)
			printf("exported version %" PRIu64 " to %s\n", rep.version, args[0]);
	} else {
		ctl_print(o->json ? rep.json : rep.body);
	}
out:
	lb_msg_free(&rep);
	ctl_close(&conn);
	return rc;
}
