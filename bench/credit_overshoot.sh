#!/usr/bin/env bash
# How far above max_connections a capped backend goes (issue 17; method and
# figures in docs/performance.md, "Capacity credits: the overshoot").
#
# The managed PoP of scripts/netns-pop.sh with capacity credits
# (POP_CREDITS=1: two muxes behind ECMP, each agent granting both over
# mutual TLS). VIP:9091 has one backend, vm11, with max_connections = CAP
# and on_unusable = "reject", so every connection past its credits is
# refused, never moved elsewhere. vm11's server samples its kernel's count
# of established connections on the port every 2 ms and keeps the highest
# (tests/netns/long_conns.py serve --stats).
#
#   bursts  ROUNDS times: 50 connections at once (every SYN before any
#           answer), held until the count settles, then closed.
#   churn   PARALLEL clients for SECONDS, each connecting, exchanging a
#           line, holding HOLD ms and closing, again and again: credits are
#           spent, connections end, the agent grants again, continuously.
#
# Prints, for each phase, the highest count against the cap, and the
# connections answered and refused (churn: per second).
#
#   bench/credit_overshoot.sh [--cap N] [--rounds N] [--seconds S]
#                             [--parallel P] [--hold MS] [--interval MS] [--out FILE]
#
# --interval: the agents' credits.interval_ms (50, as netns_pop_credits).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/script-args.sh

cap=10 rounds=10 secs=20 par=32 hold=20 out= interval=50
while [ $# -gt 0 ]; do
	case "$1" in
	--cap) cap=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--parallel) par=$2; shift ;;
	--hold) hold=$2; shift ;;
	--interval) interval=$2; shift ;;
	--out) out=$2; shift ;;
	-h | --help) script_help ;;
	*) script_usage "bench/credit_overshoot.sh [--cap N] [--rounds N] [--seconds S] [--parallel P] [--hold MS] [--interval MS] [--out FILE]" ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "credit_overshoot: needs root" >&2; exit 1; }
[ -n "$out" ] && exec > >(tee "$out")

export LAB_IPV6=0 LAB_MANAGED=1 POP_CREDITS=1 POP_CREDIT_INTERVAL=$interval
. scripts/netns-lab.sh
. scripts/netns-pop.sh
dir=$(mktemp -d /tmp/sluice-credit-bench.XXXXXX)
lab_init crb "$dir"
cleanup() {
	lab_down >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
port=9091
lc() { "$LAB_PY" tests/netns/long_conns.py "$@"; }

pop_up_all 2 >/dev/null
lab_ctl vip add "$LAB_VIP:$port" --probe none >/dev/null
lab_ctl backend add "$LAB_VIP:$port" "${LAB_VM_DIP[vm11]}:$port" \
	--host "${LAB_HOST_PA[1]}" >/dev/null
lab_spawn srv "$(lab_ns_vm vm11)" "$LAB_PY" tests/netns/long_conns.py serve --name vm11 \
	--port "$port" --stats "$dir/est.json"
lab_ctl config export >"$dir/services.cfg"
sed -i -e "s|\(port = $port; weight = 1; host = \"[0-9.]*\"; state = \"active\";\)|\1 max_connections = $cap;|" \
	-e "s|^\(\t*\)port = $port;\$|&\n\1on_unusable = \"reject\";|" "$dir/services.cfg"
grep -q "max_connections = $cap" "$dir/services.cfg" || { echo "credit_overshoot: no cap set" >&2; exit 1; }
lab_ctl config apply "$dir/services.cfg" >/dev/null
granting() { t=$("$LAB_PY" scripts/lab_tool.py tel "${LAB_PREFIX[1]}" /sluice/agent/credits) &&
	jq -e '[to_entries[] | select(.key | test("_mux[12]_granted$")) | .value > 0] | all and length == 2' <<<"$t" >/dev/null; }
lab_poll granting
est() { jq -r ".$1" "$dir/est.json"; }
settle() { # until the count stops changing for 300 ms
	local a b
	a=$(est now)
	while sleep 0.3; b=$(est now); [ "$a" != "$b" ]; do a=$b; done
}
reset_max() { # restart the server's sampler: a new highest per phase
	lab_kill srv >/dev/null 2>&1 || true
	rm -f "$dir/est.json"
	lab_spawn srv "$(lab_ns_vm vm11)" "$LAB_PY" tests/netns/long_conns.py serve --name vm11 \
		--port "$port" --stats "$dir/est.json"
	lab_poll test -s "$dir/est.json"
}

echo "# cap $cap, interval $interval ms; $(nproc) cores: $(lscpu | sed -n 's/^Model name: *//p')"
echo "phase  round  highest  over  answered  refused"
worst=0
for ((r = 1; r <= rounds; r++)); do
	reset_max
	rm -rf "$dir/b"
	mkdir "$dir/b"
	lab_spawn "b$r" "$LAB_NS_CLIENT" "$LAB_PY" tests/netns/long_conns.py client --host "$LAB_VIP" \
		--port "$port" -n 50 --at-once --dir "$dir/b" --idle 30
	lab_poll test -s "$dir/b/round.0.json"
	settle
	ok=$(jq '[.[] | select(.status == "ok")] | length' "$dir/b/round.0.json")
	ref=$(jq '[.[] | select(.status == "connect ECONNREFUSED")] | length' "$dir/b/round.0.json")
	hi=$(est max)
	echo "burst  $r  $hi  $((hi - cap))  $ok  $ref"
	[ $((hi - cap)) -gt "$worst" ] && worst=$((hi - cap))
	touch "$dir/b/stop"
	lab_kill "b$r" >/dev/null 2>&1 || true
	while [ "$(est now)" -gt 0 ]; do sleep 0.1; done
	sleep 1 # the agent sees them end and grants again
done
reset_max
res=$(ip netns exec "$LAB_NS_CLIENT" "$LAB_PY" tests/netns/long_conns.py churn --host "$LAB_VIP" \
	--port "$port" --parallel "$par" --seconds "$secs" --hold-ms "$hold")
hi=$(est max)
echo "churn  -  $hi  $((hi - cap))  $(jq -r '.ok' <<<"$res")  $(jq -r '.refused' <<<"$res")"
echo "# churn: $par clients, hold $hold ms, $secs s: $(jq -r '(.ok / .seconds | floor | tostring) + " answered/s, " + (.refused / .seconds | floor | tostring) + " refused/s, other " + (.other | tostring)' <<<"$res")"
[ $((hi - cap)) -gt "$worst" ] && worst=$((hi - cap))
echo "# the highest over the cap, all phases: $worst"
"$LAB_PY" scripts/lab_tool.py tel "${LAB_PREFIX[1]}" /sluice/agent/credits |
	jq -c '{granted, grants, reclaims, reports, reports_rejected}' | sed 's/^/# agent1: /'
