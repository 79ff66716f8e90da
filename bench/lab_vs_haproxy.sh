#!/usr/bin/env bash
# The lab against HAProxy on the same machine (issue 18; method and figures
# in docs/performance.md, "The lab against HAProxy").
#
# Builds both set-ups side by side and runs wrk against each in turn, in the
# same minutes, so that the ratios hold on a shared, noisy host:
#
#   Sluice: the PoP of scripts/lab.sh (netns-pop.sh's pop_up_all: router
#   with FRR, two muxes behind ECMP, two agents, four VMs on net_tap), each
#   VM serving with nginx (LAB_HTTPD=nginx: one process, keep-alive).
#
#   HAProxy: hp-client -- hp-lb [haproxy, TCP mode, one thread,
#   roundrobin] -- hp-be [four nginx, the same config, one per address].
#   Three namespaces joined by veths, the kernel's defaults.
#
#   With --router, a third side, haproxy-rt: the same HAProxy (another
#   address) reached from hp-rclient through hp-rt, a namespace that
#   forwards as the PoP's router does (the kernel's, static routes), so that
#   each request crosses a router both ways, as in the PoP: what the PoP's
#   shape costs, apart from the load balancer.
#
# First, 5 s with no traffic: the CPU each process uses idle. Then the
# same wrk (-t1 -cCONNS -dSECS) from each set-up's client, keep-alive
# and a new connection per request ("Connection: close"), alternating
# sluice, haproxy, sluice, ... for ROUNDS rounds. Prints every run, the CPU
# each side's processes used (per cent of one core, from /proc/PID/stat),
# the whole machine's CPU per request (/proc/stat: busy time over requests)
# and its context switches per request (/proc/stat's ctxt), the medians and
# the ratios sluice / haproxy.
#
#   bench/lab_vs_haproxy.sh [--rounds N] [--seconds S] [--conns C] [--out FILE]
#                           [--perf DIR] [--router]
#
# --perf DIR: in the first round, `perf record -a -g` (every CPU, with call
# graphs) for the length of each wrk run, into DIR/SIDE.MODE.data, and after
# each run the share of the samples by command and by command and object
# (perf report --sort comm / comm,dso): where the machine's time went.
# perf costs CPU itself: the first round's rates are a little low.
#
# Needs root, and nginx, haproxy and wrk (apt-get install nginx-light
# haproxy wrk). Tears everything down on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/script-args.sh

rounds=3 secs=8 conns=32 out= perf_dir= router=0
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--conns) conns=$2; shift ;;
	--out) out=$2; shift ;;
	--perf) perf_dir=$2; shift ;;
	--router) router=1 ;;
	-h | --help) script_help ;;
	*) script_usage "bench/lab_vs_haproxy.sh [--rounds N] [--seconds S] [--conns C] [--out FILE] [--perf DIR] [--router]" ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "lab_vs_haproxy: needs root" >&2; exit 1; }
for c in nginx haproxy wrk; do
	command -v "$c" >/dev/null || {
		echo "lab_vs_haproxy: no $c (apt-get install nginx-light haproxy wrk)" >&2
		exit 1
	}
done
[ -n "$out" ] && exec > >(tee "$out")
if [ -n "$perf_dir" ]; then
	command -v perf >/dev/null || { echo "lab_vs_haproxy: --perf needs perf (apt-get install linux-perf)" >&2; exit 1; }
	mkdir -p "$perf_dir"
fi

export LAB_IPV6=0 LAB_MANAGED=1 LAB_HTTPD=nginx
. scripts/netns-lab.sh
. scripts/netns-pop.sh
lab_init bench /run/sluice-bench-lab
HP_NS=(hp-client hp-lb hp-be hp-rclient hp-rt)
HP_VIP=10.9.0.1
HP_RT_VIP=10.9.4.1
HP_BE=(10.9.1.11 10.9.1.12 10.9.1.21 10.9.1.22)

hp_down() {
	local ns pid
	for ns in "${HP_NS[@]}"; do
		[ -e "/run/netns/$ns" ] || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null || continue
			# reap it if it is ours, or bash prints "Killed" for it later
			# (its status is the SIGKILL's; 127 if it is not our child)
			wait "$pid" 2>/dev/null || continue
		done
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}
cleanup() {
	hp_down
	lab_down
	rm -rf "$LAB_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cleanup
lab_init bench /run/sluice-bench-lab

echo "== build"
scripts/build.sh >/dev/null

echo "== sluice: the PoP of scripts/lab.sh, nginx in the VMs"
pop_up_all 2

echo "== haproxy: hp-client hp-lb hp-be"
for ns in hp-client hp-lb hp-be; do
	ip netns add "$ns"
	ip -n "$ns" link set lo up
done
# a new connection per request: reuse TIME_WAIT ports on both clients
# and on HAProxy's side towards the backends (both set-ups alike)
for ns in hp-client hp-lb "$LAB_NS_CLIENT"; do
	ip netns exec "$ns" sysctl -qw net.ipv4.tcp_tw_reuse=1
done
ip -n hp-client link add eth0 type veth peer name cl0 netns hp-lb
ip -n hp-lb link add be0 type veth peer name eth0 netns hp-be
ip -n hp-client addr add 10.9.0.10/24 dev eth0
ip -n hp-lb addr add "$HP_VIP/24" dev cl0
ip -n hp-lb addr add 10.9.1.1/24 dev be0
for a in "${HP_BE[@]}"; do ip -n hp-be addr add "$a/24" dev eth0; done
ip -n hp-client link set eth0 up
ip -n hp-lb link set cl0 up
ip -n hp-lb link set be0 up
ip -n hp-be link set eth0 up
ip -n hp-be route add default via 10.9.1.1
if [ "$router" = 1 ]; then
	echo "== haproxy-rt: hp-rclient -- hp-rt (forwarding) -- hp-lb"
	for ns in hp-rclient hp-rt; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip netns exec hp-rclient sysctl -qw net.ipv4.tcp_tw_reuse=1
	ip netns exec hp-rt sysctl -qw net.ipv4.ip_forward=1
	ip -n hp-rclient link add eth0 type veth peer name cl0 netns hp-rt
	ip -n hp-rt link add lb0 type veth peer name rt0 netns hp-lb
	ip -n hp-rclient addr add 10.9.2.10/24 dev eth0
	ip -n hp-rt addr add 10.9.2.1/24 dev cl0
	ip -n hp-rt addr add 10.9.3.1/24 dev lb0
	ip -n hp-lb addr add 10.9.3.2/24 dev rt0
	ip -n hp-lb addr add "$HP_RT_VIP/32" dev lo
	for l in hp-rclient:eth0 hp-rt:cl0 hp-rt:lb0 hp-lb:rt0; do
		ip -n "${l%%:*}" link set "${l#*:}" up
	done
	ip -n hp-rclient route add default via 10.9.2.1
	ip -n hp-rt route add "$HP_RT_VIP/32" via 10.9.3.2
	ip -n hp-lb route add 10.9.2.0/24 via 10.9.3.1
fi
{
	echo "global"
	echo "    nbthread 1"
	echo "    maxconn 4096"
	echo "defaults"
	echo "    mode tcp"
	echo "    timeout connect 5s"
	echo "    timeout client 30s"
	echo "    timeout server 30s"
	echo "frontend vip"
	echo "    bind $HP_VIP:80"
	[ "$router" = 0 ] || echo "    bind $HP_RT_VIP:80"
	echo "    default_backend pool"
	echo "backend pool"
	echo "    balance roundrobin"
	for i in "${!HP_BE[@]}"; do echo "    server be$i ${HP_BE[$i]}:$LAB_BE_PORT"; done
} >"$LAB_DIR/haproxy.cfg"
for i in "${!HP_BE[@]}"; do
	v=${LAB_VMS[$i]}
	# the Sluice VM's config, bound to this backend's address
	lab_nginx_conf "hp$i" "$LAB_DIR/www/$v" |
		sed "s/listen $LAB_BE_PORT;/listen ${HP_BE[$i]}:$LAB_BE_PORT;/" >"$LAB_DIR/nginx-hp$i.conf"
	lab_spawn "hp-nginx$i" hp-be nginx -c "$LAB_DIR/nginx-hp$i.conf"
done
lab_spawn haproxy hp-lb haproxy -db -f "$LAB_DIR/haproxy.cfg"
hp_ok() { ip netns exec hp-client curl -s --max-time 1 "http://$HP_VIP/" | grep -q 'served by'; }
lab_poll hp_ok || { echo "haproxy set-up does not answer" >&2; cat "$LAB_DIR/haproxy.log" >&2; exit 1; }
hp_rt_ok() { ip netns exec hp-rclient curl -s --max-time 1 "http://$HP_RT_VIP/" | grep -q 'served by'; }
if [ "$router" = 1 ]; then
	lab_poll hp_rt_ok || { echo "haproxy behind the router does not answer" >&2; exit 1; }
fi

# CPU seconds (user + system) of the named lab processes, summed.
cpu_of() {
	local n t=0 p
	for n in "$@"; do
		p=$(lab_pid "$n") || continue
		[ -r "/proc/$p/stat" ] || continue
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
	done
	echo "$t"
}
# CPU seconds in ticks the whole machine spent busy (user, nice, system,
# irq, softirq: every process and the kernel's softirqs; not idle, iowait or
# the hypervisor's steal), from /proc/stat's first line.
cpu_machine() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
# The context switches the whole machine has made since boot.
ctxt_machine() { awk '$1 == "ctxt" { print $2; exit }' /proc/stat; }
tick=$(getconf CLK_TCK)
SIDES=(sluice haproxy)
[ "$router" = 0 ] || SIDES+=(haproxy-rt)
declare -A SIDE_NS=([sluice]=$LAB_NS_CLIENT [haproxy]=hp-client [haproxy-rt]=hp-rclient)
declare -A SIDE_URL=([sluice]="http://$LAB_VIP/" [haproxy]="http://$HP_VIP/"
	[haproxy-rt]="http://$HP_RT_VIP/")
declare -A SIDE_PROCS=([sluice]="mux1 mux2 agent1 agent2" [haproxy]="haproxy"
	[haproxy-rt]="haproxy")
declare -A RES=() CPU=()
# one wrk run: SIDE MODE (keepalive | close) [ROUND]; prints the line, keeps the figure
run() {
	local side=$1 mode=$2 round=${3:-0} hdr=() c0 c1 m0 m1 x0 x1 rps us perf_pid= data
	[ "$mode" = close ] && hdr=(-H "Connection: close")
	if [ -n "$perf_dir" ] && [ "$round" -eq 1 ]; then
		data=$perf_dir/$side.$mode.data
		perf record -a -g -q -F 499 -o "$data" -- sleep "$secs" 2>/dev/null &
		perf_pid=$!
	fi
	c0=$(cpu_of ${SIDE_PROCS[$side]})
	m0=$(cpu_machine)
	x0=$(ctxt_machine)
	rps=$(ip netns exec "${SIDE_NS[$side]}" wrk -t1 -c"$conns" -d"${secs}s" "${hdr[@]}" \
		"${SIDE_URL[$side]}" | awk '/^Requests\/sec:/ { print $2 }')
	m1=$(cpu_machine)
	x1=$(ctxt_machine)
	c1=$(cpu_of ${SIDE_PROCS[$side]})
	if [ -n "$perf_pid" ]; then
		wait "$perf_pid"
		echo "-- perf: $side $mode, share of all samples by command, then by command and object"
		# to files first: head closing a pipe would end this script (pipefail)
		perf report -q -i "$data" --stdio --no-children -g none --sort comm >"$data.comm" 2>/dev/null
		perf report -q -i "$data" --stdio --no-children -g none --sort comm,dso >"$data.dso" 2>/dev/null
		awk 'NF && n++ < 14' "$data.comm"
		awk 'NF && n++ < 16' "$data.dso"
	fi
	[ -n "$rps" ] || { echo "wrk printed no rate ($side $mode)" >&2; exit 1; }
	RES[$side.$mode]+="$rps "
	# the whole machine's CPU per request (client, LB, backends, kernel):
	# steadier than the rate on a shared host, whose steal it leaves out
	us=$(echo "1000000 * ($m1 - $m0) / $tick / ($rps * $secs)" | bc -l)
	CPU[$side.$mode]+="$us "
	printf '%-10s %-9s %10.0f req/s   %s: %3d%% of a core   machine: %5.1f us CPU, %4.1f switches/request\n' \
		"$side" "$mode" "$rps" "${SIDE_PROCS[$side]// /+}" $((100 * (c1 - c0) / tick / secs)) "$us" \
		"$(echo "($x1 - $x0) / ($rps * $secs)" | bc -l)"
}
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# Idle first: what each side's processes cost with no traffic at all.
idle_s=5
declare -A IDLE0=()
for n in ${SIDE_PROCS[sluice]} ${SIDE_PROCS[haproxy]}; do IDLE0[$n]=$(cpu_of "$n"); done
sleep "$idle_s"
line=
for n in ${SIDE_PROCS[sluice]} ${SIDE_PROCS[haproxy]}; do
	line+=" $n $((100 * ($(cpu_of "$n") - IDLE0[$n]) / tick / idle_s))%"
done
echo "== idle ${idle_s}s, per cent of a core:$line"
echo "== wrk -t1 -c$conns -d${secs}s, $rounds rounds, alternating ($(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2))"
for ((r = 1; r <= rounds; r++)); do
	for mode in keepalive close; do
		for side in "${SIDES[@]}"; do run "$side" "$mode" "$r"; done
	done
done
# ratios NAME: each mode's medians of RES (rates) or CPU (CPU per request)
# for Sluice and each other side and their ratio, Sluice's better side up:
# above 1.0, Sluice serves more (sluice/haproxy) or costs less (haproxy/sluice)
ratios() {
	local -n of=$1
	local mode s h side
	for side in "${SIDES[@]:1}"; do
		for mode in keepalive close; do
			s=$(echo "${of[sluice.$mode]}" | median)
			h=$(echo "${of[$side.$mode]}" | median)
			if [ "$1" = RES ]; then
				printf '%-9s sluice %10.0f  %s %10.0f  sluice/%s %.2f\n' \
					"$mode" "$s" "$side" "$h" "$side" "$(echo "$s / $h" | bc -l)"
			else
				printf '%-9s sluice %6.1f us  %s %6.1f us  %s/sluice %.2f\n' \
					"$mode" "$s" "$side" "$h" "$side" "$(echo "$h / $s" | bc -l)"
			fi
		done
	done
}
echo "== medians and ratios"
ratios RES
echo "== the machine's CPU per request (medians): haproxy/sluice above 1.0 means Sluice's side costs less"
ratios CPU
