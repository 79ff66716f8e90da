# shellcheck shell=bash
# Help and usage errors for the project's scripts: source this file, do not
# run it. A script's help is its opening comment, from line 2 down to its
# `set -euo pipefail` line.

# script_help: print the running script's opening comment, exit 0.
script_help() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 0
}

# script_usage SYNOPSIS: print "usage: SYNOPSIS" on stderr, exit 2.
script_usage() {
	echo "usage: $*" >&2
	exit 2
}
