#!/usr/bin/env bash
# Failover time of the PoP (docs/performance.md, "Failover"): from kill -9
# and from SIGSTOP of a mux to
#   (a) the router's route converged (the victim's next hop gone from the
#       kernel table: `ip monitor route` in the router's namespace), and
#   (b) the first packet of a moved flow forwarded by the other mux (an
#       IP-in-IP packet leaving the survivor whose inner TCP source port
#       belongs to a flow seen going to the victim just before the signal),
# and from SIGCONT to the route restored, over several repetitions.
#
# The PoP of scripts/netns-pop.sh (two muxes behind FRR, BIRD speakers,
# hold time 3 s), with 8 long rate-limited downloads running so that both
# muxes carry flows (the ACKs of the client are what the muxes forward).
# After each kill -9 the mux is started again and the route waited for.
#
#   bench/failover_bench.sh [-n REPS] [-o FILE]   (root; build first)
#
# Prints one line per measurement and a summary (min / median / max); with
# -o also writes them to FILE (bench/results/failover.txt in the tree).
set -euo pipefail
reps=5
outfile=
while getopts "n:o:" opt; do
	case $opt in
	n) reps=$OPTARG ;;
	o) outfile=$OPTARG ;;
	*) echo "usage: $0 [-n REPS] [-o FILE]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "failover_bench: needs root (namespaces)" >&2; exit 1; }

LAB_SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$LAB_SRC/scripts/netns-lab.sh"
. "$LAB_SRC/scripts/netns-pop.sh"
dir=$(mktemp -d /tmp/sluice-failover-bench.XXXXXX)
lab_init "fob$$" "$dir"
trap 'lab_down; rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM

log=$dir/bench.txt
say() { echo "$*" | tee -a "$log"; }
tool() { ip netns exec "$LAB_NS_ROUTER" "$LAB_PY" "$LAB_SRC/scripts/pop_tool.py" "$@"; }

pop_up_all 2
say "# failover bench $(date -u +%FT%TZ), $(git -C "$LAB_SRC" rev-parse --short HEAD 2>/dev/null || echo '?'),"
say "# $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load $(cut -d' ' -f1-3 /proc/loadavg)"
say "# two muxes behind FRR $(dpkg-query -W -f='${Version}' frr 2>/dev/null), BIRD $(dpkg-query -W -f='${Version}' bird2 2>/dev/null), hold 3 s, keepalive 1 s"

size=$((64 * 1024 * 1024))
head -c "$size" /dev/urandom >"$dir/big.bin"
for v in "${LAB_VMS[@]}"; do ln -f "$dir/big.bin" "$dir/www/$v/big.bin"; done
for _ in $(seq 1 8); do
	# a subshell's child, not a job of ours: lab_down kills it quietly
	(ip netns exec "$LAB_NS_CLIENT" curl -s --max-time 600 --limit-rate 256K -o /dev/null \
		"http://$LAB_VIP/big.bin" &)
done

# One measurement: signal mux 1, want next hops; prints the JSON, appends a row.
measure() {
	local sig=$1 want=$2 rep=$3 out extra=()
	if [ "$sig" != CONT ]; then
		extra=(--victim-if rt-mux --survivor-if rt-mux2 --survivor-ta "${POP_TA[2]}")
	fi
	out=$(tool failover --vip "$LAB_VIP" --pid "$(lab_pid mux1)" --signal "$sig" \
		--want "$want" --timeout 10 "${extra[@]}") || true
	say "$sig rep $rep: $out"
	echo "$sig $(jq -r '.route_ms' <<<"$out") $(jq -r '.moved_ms' <<<"$out")" >>"$dir/rows"
}

# Mux 1 forwards again (ECMP moved some flows back onto it): its counter grows.
fwd1() { pop_tel 1 /sluice/stats | jq .fwd_pkts; }
mux1_forwards_since() { [ "$(fwd1)" -gt "$1" ]; }
mux1_carries() {
	local f
	f=$(fwd1)
	lab_poll mux1_forwards_since "$f" || { echo "mux 1 carries no flow" >&2; return 1; }
}

for ((rep = 1; rep <= reps; rep++)); do
	mux1_carries
	measure KILL "${POP_TA[2]}" "$rep"
	lab_kill mux1 2>/dev/null
	pop_mux_start 1
	pop_wait_nexthops "$(pop_all_tas)"
	mux1_carries
	measure STOP "${POP_TA[2]}" "$rep"
	measure CONT "$(pop_all_tas)" "$rep"
done

summary() {
	"$LAB_PY" - "$dir/rows" <<-'EOF'
		import statistics, sys
		rows = [l.split() for l in open(sys.argv[1])]
		def stat(sig, col, what):
		    v = [float(r[col]) for r in rows if r[0] == sig and r[col] != "null"]
		    n = sum(1 for r in rows if r[0] == sig)
		    if not v:
		        return f"{sig:5} {what:44} no value of {n}"
		    return (f"{sig:5} {what:44} min {min(v):7.1f}  median {statistics.median(v):7.1f}"
		            f"  max {max(v):7.1f} ms  ({len(v)} of {n})")
		print(stat("KILL", 1, "kill -9 -> route converged at the router"))
		print(stat("KILL", 2, "kill -9 -> first moved packet via mux 2"))
		print(stat("STOP", 1, "SIGSTOP -> route converged at the router"))
		print(stat("STOP", 2, "SIGSTOP -> first moved packet via mux 2"))
		print(stat("CONT", 1, "SIGCONT -> route restored (both next hops)"))
	EOF
}
say "# summary over $reps repetitions"
summary | tee -a "$log"
if [ -n "$outfile" ]; then
	cp "$log" "$outfile"
fi
