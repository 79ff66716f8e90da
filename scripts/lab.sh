#!/usr/bin/env bash
# The README's first command: a whole Sluice PoP on one machine.
#
# Installs the Debian packages it needs, builds, then builds this topology
# out of network namespaces (scripts/netns-lab.sh and scripts/netns-pop.sh
# have the functions and draw it in full):
#
#   sl-client ---- sl-router [FRR, AS 65000; sluice-manager]
#   198.51.100.10    |  | br-mux: BGP sessions and ECMP next hops
#                    |  +-- sl-mux  [sluice-mux 10.255.0.1, BIRD AS 65001]
#                    |  +-- sl-mux2 [sluice-mux 10.255.0.2, BIRD AS 65001]
#                    +----- sl-host1 [sluice-agent 10.0.1.1] -- sl-vm11, sl-vm12
#                     \---- sl-host2 [sluice-agent 10.0.2.1] -- sl-vm21, sl-vm22
#   VIP 192.0.2.10:80/tcp -> four backends DIP:8080, each a python3 http.server
#
# The PoP is IPv4 only: its muxes announce IPv4 VIPs (BIRD's ipv4
# channel, the router's ECMP route). The dual-stack lab of a single mux
# behind a static route (the IPv6 VIP over 6in6) is scripts/netns-lab.sh's
# with LAB_IPV6=1, as tests/netns/ipv6.sh and ipv6_managed.sh run it.
#
# Both muxes and both agents are the manager's two-phase-commit members and
# start empty; sluicectl adds the VIP and its backends, each change a
# version committed to all four. Each mux announces the VIP over BGP
# through its BIRD once the manager says it is in sync, and the router
# spreads the client's flows over both by five-tuple ECMP. It prints the
# router's ECMP route, sends real traffic (a ping, 400 curl requests: their
# spread over the backends and the share each mux carried, wrk if
# installed), drains one mux (sluicectl mux drain: its route leaves the
# router, new connections go to the other) and undrains it, makes a change
# under traffic, then prints every component's counters and tears
# everything down, on success, failure or Ctrl-C alike.
#
#   scripts/lab.sh          run, report, tear down
#   scripts/lab.sh --keep   run, report, leave it up and print what to try
#   scripts/lab.sh --down   tear down a lab left by --keep
#   scripts/lab.sh --pcap   the mux alone on a pcap file (scripts/lab-pcap.sh)
#   --hugepages             (with the above) run the DPDK processes on 2 MiB
#                           hugepages instead of --no-huge, so that secondary
#                           processes such as dpdk-dumpcap can attach (the
#                           lab mounts its own hugetlbfs and grows the page
#                           pool as needed; --down gives them back)
#
# Needs root (namespaces, veths, DPDK). See docs/lab.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/script-args.sh

mode=run
huge=0
for arg in "$@"; do
	case "$arg" in
	--keep) mode=keep ;;
	--down) mode=down ;;
	--pcap) exec scripts/lab-pcap.sh ;;
	--hugepages) huge=1 ;;
	-h | --help) script_help ;;
	*) script_usage "scripts/lab.sh [--keep | --down | --pcap] [--hugepages] [--help]" ;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "lab: needs root (network namespaces, veths, DPDK)" >&2
	exit 1
fi

LAB_STATE=/run/sluice-lab
# the PoP announces IPv4 VIPs only (above)
export LAB_IPV6=0
. scripts/netns-lab.sh
. scripts/netns-pop.sh
tool() { "$LAB_PY" scripts/lab_tool.py "$@"; }
lab_pop_init() { lab_init "" "$LAB_STATE" && pop_init 2; }
step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }

if [ "$mode" = down ]; then
	lab_pop_init
	lab_down
	lab_leftovers
	rm -rf "$LAB_STATE"
	echo "lab: down, nothing left behind"
	exit 0
fi

step "dependencies and build"
scripts/install-deps.sh
scripts/build.sh >/dev/null

if [ -e /run/netns/sl-client ] || compgen -G "$LAB_STATE/pids/*.pid" >/dev/null; then
	echo "lab: a lab is already up (scripts/lab.sh --keep?); taking it down first"
	lab_pop_init
	lab_down
fi
rm -rf "$LAB_STATE"
lab_pop_init
on_exit() {
	local rc=$?
	lab_down
	[ "$rc" -eq 0 ] || echo "lab: stopped (status $rc); everything torn down, configs and logs kept in $LAB_STATE" >&2
}
trap on_exit EXIT
trap 'exit 130' INT TERM

if [ "$huge" = 1 ]; then
	# the same path as tests/netns/capture.sh: a hugetlbfs of the lab's own
	# (lab_hugepages_up), given back by lab_down
	export LAB_HUGEPAGES=1
fi

export LAB_MANAGED=1
ctl() { echo "\$ sluicectl $*"; lab_ctl "$@"; }
conns() { pop_tel "$1" /sluice/stats | jq .conn_new; }
# N requests; then the share of their connections each mux carried
burst_shares() {
	local n=$1 w=$2 a b a1 b1
	a=$(conns 1)
	b=$(conns 2)
	tool burst --ns "$LAB_NS_CLIENT" --url "http://$LAB_VIP/" -n "$n" --weights "$w" --check
	a1=$(($(conns 1) - a))
	b1=$(($(conns 2) - b))
	echo "connections carried: mux1 $a1 ($((100 * a1 / (a1 + b1))) %), mux2 $b1 ($((100 * b1 / (a1 + b1))) %)"
}
route() {
	echo "\$ ip route show $LAB_VIP/32   (in $LAB_NS_ROUTER)"
	ip -n "$LAB_NS_ROUTER" route show "$LAB_VIP/32"
}
step "topology: namespaces, veths, the router's bridge for the muxes"
pop_topology_up
if ! lab_hugepages_up; then
	echo "lab: --hugepages: the kernel could not give $LAB_HUGE_PAGES free 2 MiB pages" >&2
	exit 1
fi
lab_configs 1 1 1 1
pop_configs
lab_servers_start
step "sluice-manager in $LAB_NS_ROUTER (database $LAB_DIR/manager.db)"
lab_manager_start
step "FRR in $LAB_NS_ROUTER (AS $POP_ASN_ROUTER, one neighbor per mux, ECMP over 8 paths)"
pop_frr_start
for i in 1 2; do
	step "sluice-mux $i in ${POP_NS[$i]} (tunnel address ${POP_TA[$i]}, BIRD from ${POP_MG[$i]}), empty until the manager syncs it"
	pop_mux_start "$i"
done
step "sluice-agent in ${LAB_NS_HOST[1]} (PA ${LAB_HOST_PA[1]}) and ${LAB_NS_HOST[2]} (PA ${LAB_HOST_PA[2]})"
lab_agent_start 1
lab_agent_start 2
step "the VIP and its backends, with sluicectl: each change is a version"
ctl vip add "$LAB_VIP:$LAB_VIP_PORT"
for v in "${LAB_VMS[@]}"; do
	ctl backend add "$LAB_VIP:$LAB_VIP_PORT" "${LAB_VM_DIP[$v]}:$LAB_BE_PORT" \
		--host "${LAB_HOST_PA[${LAB_VM_HOST[$v]}]}" --weight 1
done
step "both muxes in sync: each announces the VIP, the router holds two next hops"
pop_wait_nexthops "$(pop_all_tas)"
lab_wait_vip
route
pop_vtysh "show ip bgp $LAB_VIP/32" | sed -n '1,20p'
ctl status

step "ping the VIP from the client (a mux answers)"
ip netns exec "$LAB_NS_CLIENT" ping -c 3 -i 0.2 "$LAB_VIP"

step "400 HTTP requests through the VIP, one connection each, over both muxes"
burst_shares 400 1,1,1,1

if command -v wrk >/dev/null; then
	step "wrk: 5 s, 16 connections"
	ip netns exec "$LAB_NS_CLIENT" wrk -t 2 -c 16 -d 5s "http://$LAB_VIP/"
fi

step "drain mux1: its route leaves the router, new connections go to mux2"
ctl mux drain mux1
pop_wait_nexthops "${POP_TA[2]}"
route
burst_shares 200 1,1,1,1
ctl status
step "undrain mux1: announced again, both carry connections"
ctl mux undrain mux1
pop_wait_nexthops "$(pop_all_tas)"
route
burst_shares 200 1,1,1,1

step "a change under traffic: vm22's weight to 2 while 200 requests run"
# (the change commits in milliseconds: nearly all of them see weights 1,1,1,2)
tool burst --ns "$LAB_NS_CLIENT" --url "http://$LAB_VIP/" -n 200 --weights 1,1,1,2 --check &
burst=$!
ctl backend set "$LAB_VIP:$LAB_VIP_PORT" "${LAB_VM_DIP[vm22]}:$LAB_BE_PORT" --weight 2
wait "$burst"
ctl history
ctl status

if [ "$mode" = keep ]; then
	trap - EXIT INT TERM
	cat <<EOF

== the lab stays up; try:

  ip netns exec $LAB_NS_CLIENT curl -4 http://$LAB_VIP/
  ip netns exec $LAB_NS_CLIENT ping -c 3 $LAB_VIP
  ip netns exec $LAB_NS_CLIENT wrk -t 2 -c 16 -d 10s http://$LAB_VIP/
  # the backend's view: connections from the client to DIP:8080
  ip netns exec $(lab_ns_vm vm11) ss -tn
  # IP-in-IP from the muxes in, DSR replies out; only client -> VIP reaches the mux
  ip netns exec ${LAB_NS_HOST[1]} tcpdump -ni ${LAB_IF_UP[1]}
  ip netns exec $LAB_NS_MUX tcpdump -ni $LAB_IF_MUX
  # the router: the VIP's ECMP route, the BGP sessions with both muxes
  ip -n $LAB_NS_ROUTER route show $LAB_VIP/32
  vtysh --vty_socket $POP_FRR -c 'show bgp summary'
  # the manager: members, versions, the pool, every mux's routes
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock status
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock mux drain mux1
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock mux undrain mux1
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock vip list
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock backend set $LAB_VIP:$LAB_VIP_PORT ${LAB_VM_DIP[vm11]}:$LAB_BE_PORT --weight 3
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock history
  # live counters: /sluice/stats, /sluice/backends,0 (mux); /sluice/agent/stats (agent)
  # and /sluice/route (mux): what it announces, and why not
  dpdk-telemetry.py -f ${POP_PFX[1]}
  dpdk-telemetry.py -f ${LAB_PREFIX[1]}
EOF
	if [ "$huge" = 1 ]; then
		echo "  # what mux1 forwards (IP-in-IP), as tests/netns/capture.sh captures it"
		echo "  dpdk-dumpcap --file-prefix=${POP_PFX[1]} -i net_af_packet0 -f 'ip proto 4' -c 20 -w /tmp/mux.pcapng"
	else
		echo "  # dpdk-dumpcap cannot attach to a --no-huge process: scripts/lab.sh --keep --hugepages"
	fi
	cat <<EOF

  configs, logs and --stats-json files: $LAB_STATE/
  tear down: scripts/lab.sh --down
EOF
	exit 0
fi

step "stopping: each component's summary"
lab_kill agent1
lab_kill agent2
for i in 1 2; do
	if pid=$(lab_pid "mux$i"); then kill -TERM "$pid" 2>/dev/null || true; fi
done
lab_kill mux1
lab_kill mux2
lab_stop
for n in mux1 mux2 agent1 agent2; do
	echo
	sed -n '/summary/,$p' "$LAB_DIR/$n.log"
done
lab_down
trap - EXIT
lab_leftovers
rm -rf "$LAB_STATE"
step "done: no namespace, process or DPDK runtime folder left"
