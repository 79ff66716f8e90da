/* SPDX-License-Identifier: BSD-3-Clause */
/* sluicectl: parse the command line, then run the command (ctl.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"

int
main(int argc, char **argv)
{
	const struct ctl_cmd *cmd;
	struct ctl_opts o;
	struct lb_msg req;
	int rc, used = 0;

	rc = ctl_parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	if (o.help || (o.n_words > 0 && strcmp(o.words[0], "help") == 0)) {
		fputs(ctl_usage_text, stdout);
		return CTL_EXIT_OK;
	}
	if (o.n_words == 0)
		return ctl_usage_error(NULL, "missing command");
	cmd = ctl_find_cmd(&o, &used);
	if (cmd == NULL)
		return ctl_group_error(o.words[0], o.n_words > 1 ? o.words[1] : NULL);

	memset(&req, 0, sizeof(req));
	rc = ctl_build_request(cmd, &o, o.words + used, o.n_words - used, &req);
	if (rc == 0)
		rc = ctl_run(cmd, &o, o.words + used, o.n_words - used, &req);
	lb_msg_free(&req);

	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "sluicectl: stdout: %s\n", strerror(errno));
		if (rc == 0)
			rc = CTL_EXIT_REFUSED;
	}
	return rc;
}
