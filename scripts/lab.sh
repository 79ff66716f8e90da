#!/usr/bin/env bash
# The README's first command: the whole Sluice data path on one machine.
#
# Installs the Debian packages it needs, builds, then builds this topology
# out of network namespaces (scripts/netns-lab.sh has the functions):
#
#   sl-client ---- sl-router ---- sl-mux   [sluice-mux   10.255.0.1, 2001:db8:ff::1]
#   198.51.100.10      |    \---- sl-host1 [sluice-agent 10.0.1.1, 2001:db8:a1::1] -- sl-vm11, sl-vm12
#   2001:db8:c::10     |     \--- sl-host2 [sluice-agent 10.0.2.1, 2001:db8:a2::1] -- sl-vm21, sl-vm22
#   [sluice-manager]: the mux and both agents are its two-phase-commit members
#   VIP 192.0.2.10:80/tcp -> four backends DIP:8080, each a python3 http.server
#   VIP [2001:db8::10]:80/tcp -> the same VMs' IPv6 DIPs, IPv6-in-IPv6 to
#   the hosts' IPv6 PAs (dual stack: LAB_IPV6=0 turns IPv6 off)
#
# The mux and agents start empty; sluicectl adds the VIP and its backends,
# each change a version committed to all three. Then it sends real traffic
# from the client through the VIP: a ping (answered by the mux), 400 curl
# requests (their spread over the backends), wrk for a few seconds if
# installed; adds a fifth version under traffic. Then it prints every
# component's counters and tears everything down, on success, failure or
# Ctrl-C alike.
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

mode=run
huge=0
for arg in "$@"; do
	case "$arg" in
	--keep) mode=keep ;;
	--down) mode=down ;;
	--pcap) exec scripts/lab-pcap.sh ;;
	--hugepages) huge=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "usage: scripts/lab.sh [--keep | --down | --pcap] [--hugepages] [--help]" >&2
		exit 2
		;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "lab: needs root (network namespaces, veths, DPDK)" >&2
	exit 1
fi

LAB_STATE=/run/sluice-lab
# dual stack unless asked otherwise: an IPv4 and an IPv6 VIP
export LAB_IPV6=${LAB_IPV6:-1}
. scripts/netns-lab.sh
tool() { "$LAB_PY" scripts/lab_tool.py "$@"; }
step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }

if [ "$mode" = down ]; then
	lab_init "" "$LAB_STATE"
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
	lab_init "" "$LAB_STATE"
	lab_down
fi
rm -rf "$LAB_STATE"
lab_init "" "$LAB_STATE"
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
step "topology: namespaces, veths, routes"
lab_topology_up
if ! lab_hugepages_up; then
	echo "lab: --hugepages: the kernel could not give $LAB_HUGE_PAGES free 2 MiB pages" >&2
	exit 1
fi
lab_configs 1 1 1 1
lab_servers_start
step "sluice-manager (database $LAB_DIR/manager.db)"
lab_manager_start
step "sluice-mux in $LAB_NS_MUX (tunnel address $LAB_MUX_TA), empty until the manager syncs it"
lab_mux_start
step "sluice-agent in ${LAB_NS_HOST[1]} (PA ${LAB_HOST_PA[1]}) and ${LAB_NS_HOST[2]} (PA ${LAB_HOST_PA[2]})"
lab_agent_start 1
lab_agent_start 2
step "the VIP and its backends, with sluicectl: each change is a version"
LAB_CTL_CMD=ctl lab_ctl_pool_of 4 1 1 1 1
if [ "$LAB_IPV6" = 1 ]; then
	step "the IPv6 VIP and its backends behind the hosts' IPv6 PAs (6in6)"
	LAB_CTL_CMD=ctl lab_ctl_pool_of 6 1 1 1 1
fi
ctl status
lab_wait_vip

step "ping the VIP from the client (the mux answers)"
ip netns exec "$LAB_NS_CLIENT" ping -c 3 -i 0.2 "$LAB_VIP"
if [ "$LAB_IPV6" = 1 ]; then ip netns exec "$LAB_NS_CLIENT" ping -6 -c 3 -i 0.2 "$LAB_VIP6"; fi

step "400 HTTP requests through the VIP, one connection each"
tool burst --ns "$LAB_NS_CLIENT" --url "http://$LAB_VIP/" -n 400 --weights 1,1,1,1 --check
if [ "$LAB_IPV6" = 1 ]; then
	step "400 HTTP requests through the IPv6 VIP (curl -6)"
	tool burst --ns "$LAB_NS_CLIENT" --url "http://[$LAB_VIP6]/" -n 400 --weights 1,1,1,1 --check
fi

if command -v wrk >/dev/null; then
	step "wrk: 5 s, 16 connections"
	ip netns exec "$LAB_NS_CLIENT" wrk -t 2 -c 16 -d 5s "http://$LAB_VIP/"
	if [ "$LAB_IPV6" = 1 ]; then
		step "wrk over IPv6: 5 s, 16 connections"
		ip netns exec "$LAB_NS_CLIENT" wrk -t 2 -c 16 -d 5s "http://[$LAB_VIP6]/"
	fi
fi

step "a change under traffic: vm22's weight to 2 while 200 requests run"
# (the change commits in milliseconds: nearly all of them see weights 1,1,1,2)
tool burst --ns "$LAB_NS_CLIENT" --url "http://$LAB_VIP/" -n 200 --weights 1,1,1,2 --check &
burst=$!
ctl backend set "$LAB_VIP:$LAB_VIP_PORT" "${LAB_VM_DIP[vm22]}:$LAB_BE_PORT" --weight 2
wait "$burst"
ctl history
ctl status

step "direct server return: who saw what"
tool dsr --client-ns "$LAB_NS_CLIENT" --mux "${LAB_PREFIX[mux]}" \
	--agents "${LAB_PREFIX[1]},${LAB_PREFIX[2]}"

if [ "$mode" = keep ]; then
	trap - EXIT INT TERM
	cat <<EOF

== the lab stays up; try:

  ip netns exec $LAB_NS_CLIENT curl -4 http://$LAB_VIP/
  ip netns exec $LAB_NS_CLIENT curl -6 'http://[$LAB_VIP6]/'
  ip netns exec $LAB_NS_CLIENT ping -c 3 $LAB_VIP
  ip netns exec $LAB_NS_CLIENT ping -6 -c 3 $LAB_VIP6
  ip netns exec $LAB_NS_CLIENT wrk -t 2 -c 16 -d 10s http://$LAB_VIP/
  # the backend's view: connections from the client to DIP:8080
  ip netns exec $(lab_ns_vm vm11) ss -tn
  # IP-in-IP (and IPv6-in-IPv6) from the mux in, DSR replies out; only client -> VIP reaches the mux
  ip netns exec ${LAB_NS_HOST[1]} tcpdump -ni ${LAB_IF_UP[1]}
  ip netns exec $LAB_NS_MUX tcpdump -ni $LAB_IF_MUX
  # the manager: members, versions, the pool
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock status
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock vip list
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock backend set $LAB_VIP:$LAB_VIP_PORT ${LAB_VM_DIP[vm11]}:$LAB_BE_PORT --weight 3
  $SLUICECTL --manager ipc://$LAB_DIR/manager.sock history
  # live counters: /sluice/stats, /sluice/backends,0 (mux); /sluice/agent/stats (agent)
  dpdk-telemetry.py -f ${LAB_PREFIX[mux]}
  dpdk-telemetry.py -f ${LAB_PREFIX[1]}
EOF
	if [ "$huge" = 1 ]; then
		echo "  # what the mux forwards (IP-in-IP), as tests/netns/capture.sh captures it"
		echo "  dpdk-dumpcap --file-prefix=${LAB_PREFIX[mux]} -i net_af_packet0 -f 'ip proto 4' -c 20 -w /tmp/mux.pcapng"
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
lab_stop
for n in mux agent1 agent2; do
	echo
	sed -n '/summary/,$p' "$LAB_DIR/$n.log"
done
lab_down
trap - EXIT
lab_leftovers
rm -rf "$LAB_STATE"
step "done: no namespace, process or DPDK runtime folder left"
