# shellcheck shell=bash
# Sourced by every tests/netns/*.sh: the lab functions (scripts/netns-lab.sh,
# where the topology is drawn), a unique tag so runs never collide (with
# each other or with an operator's scripts/lab.sh --keep), cleanup on any
# exit, and check/finish helpers that print one line per check.
#
# Meson passes SLUICE_SRC, SLUICE_MUX and SLUICE_AGENT. Exit 77 (skipped)
# when not root: namespaces and veths need it.
set -euo pipefail

LAB_SRC=${SLUICE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$LAB_SRC/scripts/netns-lab.sh"
export PYTHONPATH="$LAB_SRC/scripts${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1

T_NAME=$(basename "$0" .sh)
T_FAILED=0
T_PASSED=0

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP $T_NAME: needs root (network namespaces)"
	exit 77
fi
for _b in "$SLUICE_MUX" "$SLUICE_AGENT"; do
	[ -x "$_b" ] || { echo "FAIL $T_NAME: no executable $_b"; exit 1; }
done
for _c in ip ethtool curl ping ss "$LAB_PY"; do
	command -v "$_c" >/dev/null || { echo "FAIL $T_NAME: $_c not installed (scripts/install-deps.sh)"; exit 1; }
done

check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then
		echo "ok   $what"
		T_PASSED=$((T_PASSED + 1))
	else
		echo "FAIL $what"
		T_FAILED=$((T_FAILED + 1))
	fi
}

t_cleanup() {
	local rc=$?
	lab_down
	if [ "$rc" -ne 0 ] || [ "$T_FAILED" -ne 0 ]; then
		echo "--- logs of $LAB_DIR (kept)"
		for f in "$LAB_DIR"/manager.log "$LAB_DIR"/mux.log "$LAB_DIR"/agent*.log; do
			[ -e "$f" ] && { echo "--- $f"; grep -v '^EAL:\|multiq\|rte flow\|qdisc' "$f" | tail -40; }
		done
	else
		rm -rf "$LAB_DIR"
	fi
	exit "$rc"
}

# t_init: tag = test letter + pid, at most 10 characters.
t_init() {
	local tag dir
	tag=$(printf '%.3s%s' "${T_NAME//_/}" "$$")
	dir=$(mktemp -d "/tmp/sluice-netns-$T_NAME.XXXXXX")
	lab_init "$tag" "$dir"
	trap t_cleanup EXIT
	trap 'exit 130' INT TERM
	T_START=$SECONDS
	echo "# $T_NAME: tag $tag, namespaces ${LAB_NSP}*, work folder $dir"
}

t_py() { "$LAB_PY" "$@"; }

# The JSON field of a stopped component's --stats-json file.
t_json() { t_py -c 'import json,sys; j=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): j=j[k]
print(j)' "$LAB_DIR/$1.json" "$2"; }

t_status_zero() { [ "$(cat "$LAB_DIR/$1.status" 2>/dev/null)" = 0 ]; }

# After lab_stop: each component exited 0 on SIGTERM and printed a summary.
t_check_stopped() {
	local n
	for n in "$@"; do
		check "$n exits 0 on SIGTERM" t_status_zero "$n"
		check "$n printed its summary and wrote its JSON" \
			bash -c "grep -q summary '$LAB_DIR/$n.log' && [ -s '$LAB_DIR/$n.json' ]"
	done
}

# Tear down now and check nothing is left (the EXIT trap then has nothing to do).
t_check_clean() {
	lab_down
	check "no namespace, process or DPDK runtime folder left" lab_leftovers
}

t_finish() {
	echo "# $T_NAME took $((SECONDS - T_START)) s"
	echo "$T_NAME: $T_PASSED passed, $T_FAILED failed"
	[ "$T_FAILED" -eq 0 ]
}

# Lines of the files matching a fixed string; 0 when none (grep -c exits 1 then).
count_lines() {
	local pattern=$1
	shift
	awk -v p="$pattern" 'index($0, p) { n++ } END { print n + 0 }' "$@"
}

# Wait for a condition, bounded; a timeout is reported and left to the
# checks that follow to judge.
wait_or_note() {
	if ! lab_poll "$@"; then
		echo "# still waiting after the limit: $*"
	fi
}
