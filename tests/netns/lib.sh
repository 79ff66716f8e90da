# shellcheck shell=bash
# Sourced by every tests/netns/*.sh: the lab functions (scripts/netns-lab.sh,
# where the topology is drawn), a unique tag so runs never collide (with
# each other or with an operator's scripts/lab.sh --keep), cleanup on any
# exit, check/finish helpers that print one line per check, and what the
# tests ask of the lab again and again (requests through the VIP, a
# telemetry field, the manager's status: t_*).
#
# Meson passes SLUICE_SRC, SLUICE_MUX and SLUICE_AGENT, and PYTHONPATH for
# the Python checkers (the harness, tests/lib/sluicetest). Exit 77
# (skipped) when not root: namespaces and veths need it.
set -euo pipefail

LAB_SRC=${SLUICE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$LAB_SRC/scripts/netns-lab.sh"

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
"$LAB_PY" -c 'import sluicetest' 2>/dev/null ||
	{ echo "FAIL $T_NAME: no sluicetest on PYTHONPATH (meson test sets it: tests/lib)"; exit 1; }

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
	# T_KEEP=1: the work folder stays after a pass too (hunting a rare failure)
	if [ "$rc" -ne 0 ] || [ "$T_FAILED" -ne 0 ] || [ -n "${T_KEEP:-}" ]; then
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

# t_up W11 W12 W21 W22: the whole lab (lab_up_all), and how long it took.
t_up() {
	lab_up_all "$@"
	echo "# lab up in $((SECONDS - T_START)) s"
}

# The JSON field of a stopped component's --stats-json file.
t_json() { t_py -c 'import json,sys; j=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): j=j[k]
print(j)' "$LAB_DIR/$1.json" "$2"; }

# t_tel PREFIX COMMAND [FIELD]: a running component's telemetry (one field of it).
t_tel() { t_py "$LAB_SRC/scripts/lab_tool.py" tel "$@"; }

# t_burst N [WEIGHTS [MORE...]]: N requests through the VIP, one connection
# each; fails unless all are answered and spread as WEIGHTS (default even).
t_burst() {
	t_py "$LAB_SRC/scripts/lab_tool.py" burst --ns "$LAB_NS_CLIENT" \
		--url "http://$LAB_VIP/" -n "$1" ${2:+--weights "$2"} --check "${@:3}"
}

# t_check_traffic N WEIGHTS: N requests through the VIP and every
# component's counters around them (tests/netns/check_traffic.py).
t_check_traffic() {
	local v bes=
	for v in "${LAB_VMS[@]}"; do bes+=$v=${LAB_VM_DIP[$v]},; done
	t_py "$LAB_SRC/tests/netns/check_traffic.py" --client-ns "$LAB_NS_CLIENT" \
		--mux "${LAB_PREFIX[mux]}" --agents "${LAB_PREFIX[1]},${LAB_PREFIX[2]}" \
		--url "http://$LAB_VIP/" -n "$1" --backends "${bes%,}" --weights "$2"
}

# The manager's view (LAB_MANAGED=1), read from sluicectl --json by the
# harness (python3 -m sluicetest.manager: the same readings as the
# process tests').
T_SVC=$LAB_VIP:$LAB_VIP_PORT
t_mgr() { t_py -m sluicetest.manager "$@"; }
t_committed() { lab_ctl --json status | t_mgr committed; }
# t_in_sync --count N | --ids A,B [--version V]: those members in sync on V
# (default: the committed version)
t_in_sync() { lab_ctl --json status | t_mgr in-sync "$@"; }
t_member() { lab_ctl --json status | t_mgr member "$@"; }   # ID FIELD[.FIELD]
t_backend() { lab_ctl --json vip list | t_mgr backend "$@"; } # DIP FIELD ("-": absent)
# t_states: each VM's backend's state, in LAB_VMS order ("-": not in the table)
t_states() {
	local v dips=()
	for v in "${LAB_VMS[@]}"; do dips+=("${LAB_VM_DIP[$v]}"); done
	lab_ctl --json vip list | t_mgr states "${dips[@]}"
}

# t_big_file BYTES NAME...: DIR/big.bin of random bytes, served by every VM
# as each NAME; its sha256 in T_BIG_SUM.
t_big_file() {
	local size=$1 v n
	shift
	head -c "$size" /dev/urandom >"$LAB_DIR/big.bin"
	for v in "${LAB_VMS[@]}"; do
		for n in "$@"; do ln "$LAB_DIR/big.bin" "$LAB_DIR/www/$v/$n"; done
	done
	T_BIG_SUM=$(sha256sum <"$LAB_DIR/big.bin")
}

# t_bg RCFILE CMD...: CMD in the background (its pid in T_DL); once it
# ends, its exit code in RCFILE. Ask t_ended and t_rc, not `kill -0 PID` or
# `wait PID`: bash forgets a finished job's status once a later foreground
# command of the shell gets the same pid, and the pids a test takes (every
# sluicectl's nng threads take one each) can wrap the kernel's 32768 within
# a test (docs/reliability.md, Found 23).
t_bg() {
	local f=$1
	shift
	rm -f "$f"
	{
		rc=0 # (errexit: a failing CMD would end this subshell before the echo)
		"$@" || rc=$?
		echo "$rc" >"$f"
	} &
	T_DL=$!
}
t_ended() { [ -s "$1" ]; } # RCFILE
# t_rc RCFILE: the exit code once the command has ended (124 if it has not
# in 300 s; a download's --max-time bounds it well below).
t_rc() {
	local end=$((SECONDS + 300))
	until t_ended "$1"; do
		[ "$SECONDS" -lt "$end" ] || { echo 124; return 0; }
		sleep 0.1
	done
	cat "$1"
}

# t_download NAME RATE MAX_S [CURL_ARGS...]: GET /NAME through the VIP in
# the background (t_bg), at most RATE bytes/s (curl's --limit-rate) for at
# most MAX_S s: the body in DIR/NAME.got, "code size connects port seconds"
# in DIR/NAME.out, and curl's exit code in DIR/NAME.rc once it ends.
t_download() {
	t_bg "$LAB_DIR/$1.rc" ip netns exec "$LAB_NS_CLIENT" curl -s --max-time "$3" \
		--limit-rate "$2" "${@:4}" -o "$LAB_DIR/$1.got" \
		-w '%{http_code} %{size_download} %{num_connects} %{local_port} %{time_total}\n' \
		"http://$LAB_VIP/$1" >"$LAB_DIR/$1.out" 2>&1
}
t_download_ended() { t_ended "$LAB_DIR/$1.rc"; }  # NAME
t_download_running() { ! t_download_ended "$1"; } # NAME
t_download_rc() { t_rc "$LAB_DIR/$1.rc"; }        # NAME: curl's exit code, once it ended
t_under_way() { [ "$(t_bytes "$LAB_DIR/$1.got")" -gt 1048576 ]; } # NAME: 1 MiB in
t_intact() { [ "$(sha256sum <"$LAB_DIR/$1.got")" = "$T_BIG_SUM" ]; } # NAME: all of big.bin

# t_served_by PATH: the VM whose http.server logged GET PATH (fails if none).
t_served_by() {
	local v
	for v in "${LAB_VMS[@]}"; do
		grep -q "GET $1" "$LAB_DIR/http-$v.log" && echo "$v" && return 0
	done
	return 1
}

# t_vm_servers NAME PORT CMD...: CMD in every VM's namespace, as process
# NAME-VM (@VM@ in CMD is replaced by the VM's name); returns once
# each listens on PORT (fails with the process's log if one died).
t_vm_servers() {
	local name=$1 port=$2 v
	shift 2
	for v in "${LAB_VMS[@]}"; do
		lab_spawn "$name-$v" "$(lab_ns_vm "$v")" "${@//@VM@/$v}"
	done
	t_listening_on() { ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q LISTEN; }
	for v in "${LAB_VMS[@]}"; do
		lab_until_alive "$name-$v" t_listening_on "$(lab_ns_vm "$v")" "$port" || return 1
	done
}

# t_sinks: every VM's HTTP server gives way to an upload sink on the same
# port (tests/netns/uploads.py: it answers each upload with its length and
# SHA-256), both families.
t_sinks() {
	local v
	for v in "${LAB_VMS[@]}"; do
		lab_kill "http-$v"
		lab_spawn "sink-$v" "$(lab_ns_vm "$v")" "$LAB_PY" "$LAB_SRC/tests/netns/uploads.py" \
			sink "$LAB_BE_PORT"
	done
	for v in "${LAB_VMS[@]}"; do
		check "the sink of $v listens" lab_poll lab_listening "$(lab_ns_vm "$v")"
	done
}

# t_bytes FILE: its size, 0 while it does not exist.
t_bytes() { stat -c %s "$1" 2>/dev/null || echo 0; }

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

# The end of every test: the components stopped cleanly, nothing left.
t_end() {
	lab_stop
	t_check_stopped mux agent1 agent2
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
