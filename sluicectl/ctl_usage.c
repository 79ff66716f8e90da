/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl --help: every command and option (docs/cli.md says more), and
 * the short usage a usage error ends with.
 */
#include <stdarg.h>
#include <stdio.h>

#include "ctl.h"

const char ctl_usage_text[] =
	"usage: sluicectl [OPTIONS] COMMAND [ARGS]\n"
	"\n"
	"Commands:\n"
	"  status                        members, versions, pending changes and every\n"
	"                                mux's routes (what it announces, since when)\n"
	"  vip list                      the committed services and their backends\n"
	"  vip add VIP:PORT              add a service (no backends yet)\n"
	"  vip set VIP:PORT POOL OPTIONS change the service's pool (health probes,\n"
	"                                draining, slow start, minimum healthy)\n"
	"  vip del VIP:PORT              remove a service and its backends\n"
	"  backend add VIP:PORT DIP:PORT --host PA [--weight N] [--state S]\n"
	"              [--max-connections N]\n"
	"                                add a backend; PA is the address of the host\n"
	"                                whose agent owns DIP\n"
	"  backend del VIP:PORT DIP:PORT remove a backend\n"
	"  backend list                  every backend, with the TCP connections its\n"
	"                                host agent counts (active, opened, failed)\n"
	"  backend set VIP:PORT DIP:PORT [--weight N] [--state S] [--host PA]\n"
	"              [--max-connections N]\n"
	"                                change a backend (at least one option)\n"
	"  stats [--refresh S] [--once]  per service and backend: packets, bits and new\n"
	"                                connections per second summed over the muxes,\n"
	"                                redrawn every S s (default 2; q quits)\n"
	"  history [--limit N]           committed and aborted versions, newest first\n"
	"  config export [FILE]          the committed table as a services file\n"
	"  config apply FILE             make FILE's services the desired table\n"
	"  mux drain ID                  withdraw mux ID's routes (new connections go to\n"
	"                                the other muxes; it keeps forwarding)\n"
	"  mux undrain ID                let mux ID announce again\n"
	"  limit set VIP:PORT|mux RULE [LIMIT] [--burst N] [--mode M] [--prefix N]\n"
	"            [--refuse drop|rst|icmp]\n"
	"                                set an admission rule (per_source,\n"
	"                                new_per_second, max_connections; mux: the\n"
	"                                mux-wide new_per_second cap); docs/protection.md\n"
	"  limit del VIP:PORT|mux [RULE] remove one rule, or all of the service's\n"
	"  limit list                    the rules, their counters summed over the muxes\n"
	"  top VIP[:PORT]                the top talkers of a service, or of every service\n"
	"                                of VIP (new connections the admission checks saw)\n"
	"                                over the muxes, with their rates\n"
	"  help                          this text\n"
	"\n"
	"VIP:PORT and DIP:PORT: 192.0.2.10:80, or IPv6 in brackets: [2001:db8::10]:80.\n"
	"A service is one family: its DIPs are of its VIP's; its hosts of either.\n"
	"\n"
	"Command options:\n"
	"  --proto tcp|udp               the service's protocol (default tcp)\n"
	"  --host PA                     the backend's host (physical) address, IPv4 or\n"
	"                                IPv6, plain\n"
	"  --weight N                    0..65535 (default 1; 0 takes no new flows)\n"
	"  --state active|drain|maint    (default active)\n"
	"  --max-connections N           a TCP backend's cap on connections, held by its\n"
	"                                agent's credits (default 0: none)\n"
	"  --limit N                     the newest N versions (default 0: all)\n"
	"  --refresh S                   stats: seconds between samples (0.1..3600)\n"
	"  --once                        stats: one sample, then exit (--json too)\n"
	"  --burst N                     limit set: the bucket's depth (default LIMIT)\n"
	"  --mode monitor|intercept      limit set: count only, or refuse (default monitor)\n"
	"  --prefix N                    limit set per_source: the source prefix (1..32, 1..128)\n"
	"  --refuse drop|rst|icmp        limit set: what a refused client gets\n"
	"\n"
	"Pool options (vip add, vip set; docs/manager.md has the defaults):\n"
	"  --probe none|tcp|http         how backends are probed (default tcp)\n"
	"  --probe-port N                probe this port, not the backend's (0: its own)\n"
	"  --path P                      http: the path to GET (default /)\n"
	"  --codes C                     http: the codes that pass (default 200-399)\n"
	"  --interval S                  seconds between probes, 1..300 (default 30)\n"
	"  --probe-timeout S             seconds a probe may take, 1..120, below the\n"
	"                                interval (default 5)\n"
	"  --healthy N                   successes to become healthy, 1..10 (default 5)\n"
	"  --unhealthy N                 failures to become unhealthy, 1..10 (default 2)\n"
	"  --drain-delay S               deregistration delay, 0..3600 (default 300)\n"
	"  --slow-start S                ramp a backend up over S s, 30..900; 0 off\n"
	"  --min-healthy N|N%|N,M%       below it the pool fails open (default 1; 0 off)\n"
	"  --withdraw-below N|N%|N,M%    below it every mux withdraws the VIP (default\n"
	"                                off); at or above --min-healthy\n"
	"\n"
	"Global options:\n"
	"  --manager URL                 the manager's control socket (env SLUICE_MANAGER;\n"
	"                                default " CTL_DEFAULT_URL ")\n"
	"  --ca FILE                     tls+tcp: the CA that signed the manager (SLUICE_CA)\n"
	"  --cert FILE                   tls+tcp: our certificate (SLUICE_CERT)\n"
	"  --key FILE                    tls+tcp: our private key (SLUICE_KEY)\n"
	"  --server-name NAME            tls+tcp: the name in the manager's certificate\n"
	"                                (default " CTL_DEFAULT_SERVER_NAME ")\n"
	"  --timeout SEC                 for each request and for a change to commit\n"
	"                                (default 10)\n"
	"  --no-wait                     return once a change is accepted\n"
	"  --json                        print the reply as JSON, for programs\n"
	"  -h, --help                    this text\n"
	"\n"
	"Exit status: 0 done; 1 the manager refused, or a change aborted or did not\n"
	"commit in time; 2 usage error; 3 the manager cannot be reached.\n";

static void
ctl_usage_short(const struct ctl_cmd *cmd)
{
	if (cmd != NULL)
		fprintf(stderr, "usage: sluicectl %s\n", cmd->synopsis);
	else
		fprintf(stderr, "usage: sluicectl [OPTIONS] COMMAND [ARGS]\n");
	fprintf(stderr, "(sluicectl --help lists every command and option)\n");
}

/* Report a usage error about cmd (NULL: about the command line) and return 2. */
int
ctl_usage_error(const struct ctl_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sluicectl: ");
	if (cmd != NULL && cmd->group != NULL)
		fprintf(stderr, "%s %s: ", cmd->group, cmd->name);
	else if (cmd != NULL)
		fprintf(stderr, "%s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ctl_usage_short(cmd);
	return CTL_EXIT_USAGE;
}
