# shellcheck shell=bash
# The Sluice lab as shell functions: source this file, do not run it.
# scripts/lab.sh and tests/netns/*.sh are built from these functions.
#
# One machine, network namespaces for everything: a client, a router, one
# "host" per DPDK process (the mux and two host agents attach to their veth
# ends with net_af_packet, the agents to their VMs' veths as well;
# LAB_VM_PORTS=tap: the agents create their VMs' interfaces with net_tap)
# and one per backend "VM":
#
#    ns sl-client                      ns sl-router (ip_forward=1, rp_filter=0)
#   +--------------------+            +---------------------------------------+
#   | eth0 198.51.100.10 |------------| rt-cl  198.51.100.1/24                |
#   | default via .1     |            | rt-mux 10.255.0.254/24 02:..:fe:01    |
#   +--------------------+            |   192.0.2.10/32 via 10.255.0.1        |
#                                     | rt-h1  10.0.1.254/24   02:..:fe:11    |
#                                     | rt-h2  10.0.2.254/24   02:..:fe:12    |
#                                     +----+-------------+-------------+------+
#                                          |rt-mux       |rt-h1        |rt-h2
#                              ns sl-mux   |  ns sl-host1|  ns sl-host2|
#                                  +-------+---+  +------+-----+ +-----+------+
#                                  | mux0      |  | h1up       | | h2up       |
#                                  | sluice-mux|  |sluice-agent| |sluice-agent|
#                                  | 10.255.0.1|  | pa 10.0.1.1| | pa 10.0.2.1|
#                                  +-----------+  +--+------+--+ +--+------+--+
#                                af_packet on veths  |      |       |      |
#                                               sl-vm11 sl-vm12 sl-vm21 sl-vm22
#                                     (each VM's end in its own namespace,
#                                      DIP/24, MAC from the agent config,
#                                      default via .1 = the agent's proxy ARP,
#                                      python3 -m http.server 8080)
#   VMs: sl-vm11 10.1.1.11  sl-vm12 10.1.1.12  sl-vm21 10.2.1.21  sl-vm22 10.2.1.22
#
# Packet walk: client -> router -> mux (VIP 192.0.2.10:80 -> DIP:8080, IP-in-IP
# to the host's PA) -> router -> agent (decapsulates, delivers to the VM's port) ->
# VM; the reply goes VM -> agent (source rewritten to VIP:80, direct server
# return) -> router -> client, never through the mux.
#
# Dual stack (LAB_IPV6=1; scripts/lab.sh sets it): IPv6 beside every IPv4
# address, and a second service, VIP6 [2001:db8::10]:80, whose four
# backends are the same VMs' IPv6 DIPs behind their hosts' IPv6 PAs:
# IPv6-in-IPv6 on the wire (the IPv4 VIP keeps its IPv4 PAs: 4in4).
#
#   client 2001:db8:c::10/64 -- rt-cl 2001:db8:c::1      router forwards IPv6,
#   mux tunnel_address6 2001:db8:ff::1 -- rt-mux 2001:db8:ff::254   2001:db8::10/128
#   host1 pa6 2001:db8:a1::1 -- rt-h1 2001:db8:a1::254             via the mux
#   host2 pa6 2001:db8:a2::1 -- rt-h2 2001:db8:a2::254
#   VMs 2001:db8:1::11 ::12 (host1), 2001:db8:2::21 ::22 (host2), /64, default
#   via fe80::1 (each agent's gateway6, answered by neighbor advertisements)
#
# Without LAB_IPV6 the namespaces keep IPv6 off, so that router
# solicitations, MLD and DAD stay out of the tests' exact packet counts.
#
# Why a namespace per DPDK process, not the root namespace: DPDK 22.11's
# af_packet PMD opens its socket for every protocol and binds it to the
# interface only after setting up its rings, so for a moment it receives
# frames from every interface of its namespace, and the process starts by
# handling strangers' frames (seen: a restarted mux counting other muxes'
# IP-in-IP, an agent decapsulating another lab's packets). Alone in its
# namespace, it can only see its own link. The root namespace stays untouched.
#
# With a TAG (lab_init TAG), every namespace and DPDK file prefix carries it,
# so tests can run beside each other and beside an operator's lab. Without
# one, the names are the plain ones drawn above.
#
#   . scripts/netns-lab.sh
#   lab_init [TAG] [DIR]        names; DIR holds configs, logs, pids, JSON
#   trap lab_down EXIT          always clean up
#   lab_topology_up             namespaces, veths, addresses, routes, sysctls
#   lab_configs W11 W12 W21 W22 render examples/lab/*.cfg.in with these weights
#   lab_servers_start           the HTTP server of every VM
#   lab_mux_start               sluice-mux; returns once it answers ping on the VIP
#   lab_agent_start 1|2         sluice-agent; moves its taps into the VMs
#   lab_wait_vip                until an HTTP request through the VIP works
#   lab_up_all W11 W12 W21 W22  all of the above
#   lab_start_all W11 W12 W21 W22  the same, after topology and configs
#   lab_manager_start           sluice-manager (LAB_MANAGED=1); returns once it answers
#   lab_ctl ARGS...             sluicectl against the lab's manager
#   lab_ctl_pool W11 W12 W21 W22  the VIP and its four backends, through the manager
#                               (and the IPv6 VIP's with LAB_IPV6=1)
#   lab_flow_table SVCS BES     DIR/flow_table.cfg with other services/backends
#   lab_flow_table_apply [N..]  put it into the configs of N (mux agent1 agent2)
#   lab_reload N...             SIGHUP each; wait for its reloaded/refused line
#   lab_stop                    SIGTERM mux and agents: summaries, JSON in DIR
#   lab_down                    everything gone: processes, namespaces, runtime dirs
#                               (and the hugepages lab_hugepages_up made)
#   lab_metrics_url N           LAB_METRICS=1: the /metrics URL of N (mux agent1
#                               agent2 manager), reachable from the router
#   lab_hugepages_up            LAB_HUGEPAGES=1: 2 MiB pages on a hugetlbfs of
#                               the lab's own (DIR/huge), so that DPDK secondary
#                               processes (dpdk-dumpcap) can attach
#
# Waits poll a condition with a bound (LAB_WAIT seconds); none sleeps blindly.

LAB_SRC=${LAB_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
SLUICE_MUX=${SLUICE_MUX:-$LAB_SRC/build/mux/sluice-mux}
SLUICE_AGENT=${SLUICE_AGENT:-$LAB_SRC/build/host_agent/sluice-agent}
SLUICE_MANAGER_BIN=${SLUICE_MANAGER_BIN:-$LAB_SRC/build/manager/sluice-manager}
SLUICECTL=${SLUICECTL:-$LAB_SRC/build/sluicectl/sluicectl}
# LAB_MANAGED=1: sluice-manager owns the flow table; the mux and agents are
# its two-phase-commit members (ipc:// in DIR: the DPDK namespaces have no
# management network) and start empty; lab_ctl_pool configures the VIP.
LAB_MANAGED=${LAB_MANAGED:-0}
# LAB_UPLINK_PMD: the DPDK device on the mux's and the agents' veths:
# net_af_packet0 (the default: a TPACKET ring), or net_af_xdp0 (an AF_XDP
# socket in copy mode, an XDP program on the veth; docs/performance.md).
LAB_UPLINK_PMD=${LAB_UPLINK_PMD:-net_af_packet0}
# LAB_VM_PORTS: how an agent reaches its VMs: veth (the default: a veth
# pair made before the agent starts, the VM's end in its namespace, the
# agent on the other end with net_af_packet) or tap (net_tap makes each
# VM's tap, moved into the VM's namespace once the agent runs). veth costs
# less CPU per request (docs/performance.md, "The VMs' ports").
LAB_VM_PORTS=${LAB_VM_PORTS:-veth}
LAB_PY=/usr/bin/python3 # Debian's: the one scapy imports under
LAB_WAIT=${LAB_WAIT:-20}
# LAB_HUGEPAGES=1: the DPDK processes on 2 MiB hugepages instead of
# --no-huge, from a hugetlbfs mount of the lab's own (lab_hugepages_up);
# three processes of 256 MB each, and room for dpdk-dumpcap.
LAB_HUGEPAGES=${LAB_HUGEPAGES:-0}
LAB_HUGE_PAGES=448
# LAB_METRICS=1: every daemon serves GET /metrics (docs/operations.md,
# "Metrics") where a Prometheus in the router's namespace can scrape it:
# the manager on the router's loopback, the DPDK processes on a management
# link of their own to the router (mg0, a /30 each: the data port is
# DPDK's). Nothing else travels on those links.
LAB_METRICS=${LAB_METRICS:-0}
declare -A LAB_MG_NET=([mux]=10.254.1 [agent1]=10.254.2 [agent2]=10.254.3)
declare -A LAB_METRICS_PORT=([mux]=9540 [agent1]=9541 [agent2]=9541 [manager]=9542)

LAB_VIP=192.0.2.10
LAB_VIP_PORT=80
LAB_BE_PORT=8080
LAB_CLIENT_IP=198.51.100.10
LAB_MUX_TA=10.255.0.1
LAB_VMS=(vm11 vm12 vm21 vm22)
declare -A LAB_VM_HOST=([vm11]=1 [vm12]=1 [vm21]=2 [vm22]=2)
declare -A LAB_VM_DIP=([vm11]=10.1.1.11 [vm12]=10.1.1.12 [vm21]=10.2.1.21 [vm22]=10.2.1.22)
declare -A LAB_VM_MAC=([vm11]=02:00:00:01:01:11 [vm12]=02:00:00:01:01:12
	[vm21]=02:00:00:02:01:21 [vm22]=02:00:00:02:01:22)
declare -A LAB_HOST_PA=([1]=10.0.1.1 [2]=10.0.2.1)
declare -A LAB_HOST_GW=([1]=10.1.1.1 [2]=10.2.1.1)      # VMs' gateway (proxy ARP)
declare -A LAB_HOST_RTMAC=([1]=02:00:00:00:fe:11 [2]=02:00:00:00:fe:12)
LAB_RT_MUX_MAC=02:00:00:00:fe:01
# Dual stack (LAB_IPV6=1): the IPv6 side of the same lab.
LAB_IPV6=${LAB_IPV6:-0}
LAB_VIP6=2001:db8::10
LAB_CLIENT_IP6=2001:db8:c::10
LAB_MUX_TA6=2001:db8:ff::1
declare -A LAB_VM_DIP6=([vm11]=2001:db8:1::11 [vm12]=2001:db8:1::12 [vm21]=2001:db8:2::21
	[vm22]=2001:db8:2::22)
declare -A LAB_HOST_PA6=([1]=2001:db8:a1::1 [2]=2001:db8:a2::1)
LAB_GW6=fe80::1 # every agent's gateway6

lab_log() { echo "lab: $*" >&2; }

# Names for TAG (empty: the plain names of the drawing) and the work folder.
lab_init() {
	LAB_TAG=${1-}
	LAB_DIR=${2:-/run/sluice-lab}
	if [ -n "$LAB_TAG" ]; then
		if [ "${#LAB_TAG}" -gt 16 ] || [[ ! $LAB_TAG =~ ^[a-z0-9]+$ ]]; then
			lab_log "tag must be 1..16 of [a-z0-9]: '$LAB_TAG'"
			return 1
		fi
		LAB_NSP=sl-$LAB_TAG-
	else
		LAB_NSP=sl-
	fi
	LAB_NS_CLIENT=${LAB_NSP}client
	LAB_NS_ROUTER=${LAB_NSP}router
	LAB_NS_MUX=${LAB_NSP}mux
	declare -gA LAB_NS_HOST=([1]=${LAB_NSP}host1 [2]=${LAB_NSP}host2)
	# interface names live inside the namespaces: no tag needed
	LAB_IF_MUX=mux0
	declare -gA LAB_IF_UP=([1]=h1up [2]=h2up)
	declare -gA LAB_PREFIX=([mux]=${LAB_NSP}mux [1]=${LAB_NSP}agent1 [2]=${LAB_NSP}agent2)
	mkdir -p "$LAB_DIR/pids" "$LAB_DIR/www"
	echo "$LAB_TAG" >"$LAB_DIR/tag"
}

lab_ns_vm() { echo "${LAB_NSP}$1"; }
lab_tap() { echo "sl-$1"; }
# The agent's end of VM V's veth (LAB_VM_PORTS=veth), in the host's namespace.
lab_vm_peer() { echo "ag-$1"; }
# The DPDK device of an agent's VM port I (0 or 1), before ",iface=".
lab_vm_pmd() {
	if [ "$LAB_VM_PORTS" = veth ]; then echo "net_af_packet_vm$1"; else echo "net_tap$1"; fi
}
lab_vms_of() { local v; for v in "${LAB_VMS[@]}"; do [ "${LAB_VM_HOST[$v]}" = "$1" ] && echo "$v"; done; }
lab_namespaces() {
	local v
	echo "$LAB_NS_CLIENT" "$LAB_NS_ROUTER" "$LAB_NS_MUX" "${LAB_NS_HOST[1]}" "${LAB_NS_HOST[2]}"
	for v in "${LAB_VMS[@]}"; do lab_ns_vm "$v"; done
}

# Poll "$@" every 50 ms until it succeeds or LAB_WAIT seconds pass.
lab_poll() {
	local end=$((SECONDS + LAB_WAIT))
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

lab_ns_add() {
	ip netns add "$1"
	ip -n "$1" link set lo up
	if [ "$LAB_IPV6" = 1 ]; then
		# on, but quiet: no duplicate address detection, no router
		# solicitations (addresses are static, nodad)
		ip netns exec "$1" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 \
			net.ipv6.conf.default.router_solicitations=0 \
			net.ipv6.conf.all.router_solicitations=0
		return
	fi
	# keep IPv6 (router solicitations, MLD, DAD) out of every count
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
}

# No checksum or segmentation offload on a veth: af_packet hands DPDK frames
# exactly as the kernel would put them on a wire (no CHECKSUM_PARTIAL, no
# 64 KiB GSO frames).
lab_no_offload() {
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null
}

# A veth that a DPDK process takes with net_af_packet: no offloads, and its
# namespace's own IP stack kept off it. A packet socket gets each frame
# before the interface's ingress hooks, the kernel's IP stack after them;
# without the drop every frame the mux or an agent receives was routed a
# second time by the kernel of its namespace, only to be dropped there (no
# forwarding), at a few per cent of the lab's CPU. A NIC bound to DPDK
# gives its frames to no kernel; this makes the veth behave the same.
lab_dpdk_port() {
	local ns=$1 dev=$2
	lab_no_offload "$ns" "$dev" || return 1
	# (made again with the veth: an agent's VM ports are, on its restart)
	ip netns exec "$ns" nft -f - <<-EOF
		table netdev sluice_lab_$dev
		delete table netdev sluice_lab_$dev
		table netdev sluice_lab_$dev {
			chain dpdk_only {
				type filter hook ingress device "$dev" priority 0; policy drop;
			}
		}
	EOF
}

# A veth from a DPDK process's namespace to the router.
lab_host_veth() {
	local ns=$1 dev=$2 peer=$3 peer_mac=$4
	ip -n "$ns" link add "$dev" type veth peer name "$peer" netns "$LAB_NS_ROUTER"
	lab_dpdk_port "$ns" "$dev"
	ip -n "$ns" link set "$dev" up
	ip -n "$LAB_NS_ROUTER" link set "$peer" address "$peer_mac"
	lab_no_offload "$LAB_NS_ROUTER" "$peer"
}

lab_topology_up() {
	local ns v r=$LAB_NS_ROUTER
	for ns in $(lab_namespaces); do
		lab_ns_add "$ns"
	done
	ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0

	ip -n "$LAB_NS_CLIENT" link add eth0 type veth peer name rt-cl netns "$r"
	lab_no_offload "$LAB_NS_CLIENT" eth0
	lab_no_offload "$r" rt-cl
	lab_host_veth "$LAB_NS_MUX" "$LAB_IF_MUX" rt-mux "$LAB_RT_MUX_MAC"
	lab_host_veth "${LAB_NS_HOST[1]}" "${LAB_IF_UP[1]}" rt-h1 "${LAB_HOST_RTMAC[1]}"
	lab_host_veth "${LAB_NS_HOST[2]}" "${LAB_IF_UP[2]}" rt-h2 "${LAB_HOST_RTMAC[2]}"

	# A client reading slowly (curl --limit-rate) must slow the sender: with
	# Linux's default 32 MiB receive buffer a whole test download would sit
	# in the client's kernel within a second, "long-lived" only to curl.
	ip netns exec "$LAB_NS_CLIENT" sysctl -qw net.ipv4.tcp_rmem="4096 131072 262144"
	ip -n "$LAB_NS_CLIENT" addr add "$LAB_CLIENT_IP/24" dev eth0
	ip -n "$LAB_NS_CLIENT" link set eth0 up
	ip -n "$LAB_NS_CLIENT" route add default via 198.51.100.1

	ip -n "$r" addr add 198.51.100.1/24 dev rt-cl
	ip -n "$r" addr add 10.255.0.254/24 dev rt-mux
	ip -n "$r" addr add 10.0.1.254/24 dev rt-h1
	ip -n "$r" addr add 10.0.2.254/24 dev rt-h2
	for v in rt-cl rt-mux rt-h1 rt-h2; do
		# DSR replies carry the VIP as source and arrive from rt-h*
		ip netns exec "$r" sysctl -qw "net.ipv4.conf.$v.rp_filter=0"
		ip -n "$r" link set "$v" up
	done
	ip -n "$r" route add "$LAB_VIP/32" via "$LAB_MUX_TA" dev rt-mux
	# the manager (in this namespace) probes the DIPs directly: through
	# each host's agent, which lets its probers in (agent.probers)
	ip -n "$r" route add 10.1.1.0/24 via "${LAB_HOST_PA[1]}" dev rt-h1
	ip -n "$r" route add 10.2.1.0/24 via "${LAB_HOST_PA[2]}" dev rt-h2
	if [ "$LAB_IPV6" = 1 ]; then lab_topology6_up; fi

	for v in "${LAB_VMS[@]}"; do
		mkdir -p "$LAB_DIR/www/$v"
		printf 'served by %s (%s)\n' "$v" "${LAB_VM_DIP[$v]}" >"$LAB_DIR/www/$v/index.html"
	done
	if [ "$LAB_METRICS" = 1 ]; then lab_mgmt_up; fi
}

# LAB_METRICS=1: a management link from each DPDK process's namespace to
# the router: mg0 NET.1/30 there, mg-NAME NET.2/30 in the router.
lab_mgmt_up() {
	local n ns
	declare -A nsof=([mux]=$LAB_NS_MUX [agent1]=${LAB_NS_HOST[1]} [agent2]=${LAB_NS_HOST[2]})
	for n in mux agent1 agent2; do
		ns=${nsof[$n]}
		ip -n "$ns" link add mg0 type veth peer name "mg-$n" netns "$LAB_NS_ROUTER"
		ip -n "$ns" addr add "${LAB_MG_NET[$n]}.1/30" dev mg0
		ip -n "$LAB_NS_ROUTER" addr add "${LAB_MG_NET[$n]}.2/30" dev "mg-$n"
		ip -n "$ns" link set mg0 up
		ip -n "$LAB_NS_ROUTER" link set "mg-$n" up
	done
}

# LAB_METRICS=1: N's metrics group, appended to DIR/N.cfg (before the
# flow table: lab_flow_table_apply replaces everything from it on).
lab_metrics_cfg() {
	[ "$LAB_METRICS" = 1 ] || return 0
	printf 'metrics = { listen = "%s"; };\n' "$(lab_metrics_addr "$1")" >>"$LAB_DIR/$1.cfg"
}

# The listen address of N's metrics, and its URL.
lab_metrics_addr() {
	if [ "$1" = manager ]; then echo "127.0.0.1:${LAB_METRICS_PORT[manager]}"; else
		echo "${LAB_MG_NET[$1]}.1:${LAB_METRICS_PORT[$1]}"; fi
}
lab_metrics_url() { echo "http://$(lab_metrics_addr "$1")/metrics"; }

# The IPv6 half of the topology (LAB_IPV6=1): addresses, forwarding, routes.
lab_topology6_up() {
	local r=$LAB_NS_ROUTER h
	ip netns exec "$r" sysctl -qw net.ipv6.conf.all.forwarding=1
	# the client reads slowly here too (lab_topology_up says why)
	ip netns exec "$LAB_NS_CLIENT" sysctl -qw net.ipv4.tcp_rmem="4096 131072 262144"
	ip -n "$LAB_NS_CLIENT" -6 addr add "$LAB_CLIENT_IP6/64" dev eth0 nodad
	ip -n "$LAB_NS_CLIENT" -6 route add default via 2001:db8:c::1 dev eth0
	ip -n "$r" -6 addr add 2001:db8:c::1/64 dev rt-cl nodad
	ip -n "$r" -6 addr add 2001:db8:ff::254/64 dev rt-mux nodad
	for h in 1 2; do
		ip -n "$r" -6 addr add "2001:db8:a$h::254/64" dev "rt-h$h" nodad
		# the manager's probes to the IPv6 DIPs, through the agent (probers)
		ip -n "$r" -6 route add "2001:db8:$h::/64" via "${LAB_HOST_PA6[$h]}" dev "rt-h$h"
	done
	ip -n "$r" -6 route add "$LAB_VIP6/128" via "$LAB_MUX_TA6" dev rt-mux
}

# Render a template: @KEY@ -> value for each KEY=value argument.
lab_render() {
	local tmpl=$1 out=$2 kv expr=()
	shift 2
	for kv in "UPLINK_PMD=$LAB_UPLINK_PMD" "$@"; do
		expr+=(-e "s|@${kv%%=*}@|${kv#*=}|g")
	done
	sed "${expr[@]}" "$tmpl" >"$out"
}

# Configs for weights W11 W12 W21 W22. LAB_HUGEPAGES=1: EAL on hugepages
# instead of --no-huge (secondary processes such as dpdk-dumpcap need it).
lab_configs() {
	local ex=$LAB_SRC/examples/lab h a b f six=0 drop6=("-e" "/# ipv6 {/,/# ipv6 }/d")
	# the templates' "# ipv6 {" ... "# ipv6 }" blocks: kept (dual stack) or dropped
	if [ "$LAB_IPV6" = 1 ]; then
		drop6=("-e" "/# ipv6 [{}]/d")
		six=1
	fi
	lab_render "$ex/flow_table.cfg.in" "$LAB_DIR/flow_table.cfg" \
		"W11=${1:-1}" "W12=${2:-1}" "W21=${3:-1}" "W22=${4:-1}"
	sed -i "${drop6[@]}" "$LAB_DIR/flow_table.cfg"
	lab_render "$ex/mux.cfg.in" "$LAB_DIR/mux.cfg" \
		"PREFIX=${LAB_PREFIX[mux]}" "MUX_IF=$LAB_IF_MUX" \
		"PROBER6=$([ "$six" = 1 ] && echo ', "2001:db8:ff::254"')"
	sed -i "${drop6[@]}" "$LAB_DIR/mux.cfg"
	lab_metrics_cfg mux
	cat "$LAB_DIR/flow_table.cfg" >>"$LAB_DIR/mux.cfg"
	for h in 1 2; do
		read -r a b < <(lab_vms_of "$h" | xargs)
		lab_render "$ex/agent.cfg.in" "$LAB_DIR/agent$h.cfg" \
			"PREFIX=${LAB_PREFIX[$h]}" "PA=${LAB_HOST_PA[$h]}" \
			"PROBER=10.0.$h.254" \
			"GW_MAC=${LAB_HOST_RTMAC[$h]}" "UP_IF=${LAB_IF_UP[$h]}" \
			"VM_A=$a" "VM_PMD_A=$(lab_vm_pmd 0)" "VM_IF_A=$(lab_vm_if "$a")" \
			"DIP_A=${LAB_VM_DIP[$a]}" \
			"MAC_A=${LAB_VM_MAC[$a]}" \
			"VM_B=$b" "VM_PMD_B=$(lab_vm_pmd 1)" "VM_IF_B=$(lab_vm_if "$b")" \
			"DIP_B=${LAB_VM_DIP[$b]}" \
			"MAC_B=${LAB_VM_MAC[$b]}" \
			"PA6=${LAB_HOST_PA6[$h]}" \
			"MUX6=$([ "$six" = 1 ] && echo ", \"$LAB_MUX_TA6\"")" \
			"PROBER6=$([ "$six" = 1 ] && echo ", \"2001:db8:a$h::254\"")" \
			"DIP6_A=${LAB_VM_DIP6[$a]}" "DIP6_B=${LAB_VM_DIP6[$b]}"
		sed -i "${drop6[@]}" "$LAB_DIR/agent$h.cfg"
		lab_metrics_cfg "agent$h"
		cat "$LAB_DIR/flow_table.cfg" >>"$LAB_DIR/agent$h.cfg"
	done
	if [ "$LAB_MANAGED" = 1 ]; then
		# members: the manager group instead of the table; the manager
		# starts with the template's seed and no services
		lab_render "$ex/manager.cfg.in" "$LAB_DIR/manager.cfg" "DIR=$LAB_DIR" \
			"SEED=$(sed -n 's/^[[:space:]]*hash_seed = "\([0-9a-f]*\)";.*/\1/p' \
				"$ex/flow_table.cfg.in")"
		lab_metrics_cfg manager
		for f in mux agent1 agent2; do
			awk '/^flow_table[[:space:]]*=/ { exit } { print }' "$LAB_DIR/$f.cfg" >"$LAB_DIR/$f.cfg.new"
			printf 'manager = { url = "ipc://%s/members.sock"; id = "%s"; heartbeat_ms = 500;\n\tstate_file = "%s/%s.lkg"; };\n' \
				"$LAB_DIR" "$f" "$LAB_DIR" "$f" >>"$LAB_DIR/$f.cfg.new"
			mv "$LAB_DIR/$f.cfg.new" "$LAB_DIR/$f.cfg"
		done
	fi
	if [ "$LAB_HUGEPAGES" = 1 ]; then
		lab_eal_hugepages "$LAB_DIR/mux.cfg" "$LAB_DIR/agent1.cfg" "$LAB_DIR/agent2.cfg"
	fi
}

# LAB_HUGEPAGES=1: the EAL arguments of the configs FILE... on the lab's
# hugetlbfs instead of --no-huge, and EAL's memory at a fixed address,
# LAB_EAL_BASE (--base-virtaddr). DPDK's default base, 4 GiB, falls in
# AddressSanitizer's shadow gap: an ASan-built daemon's memory then lands
# wherever the kernel puts it, and dpdk-dumpcap (a secondary process, which
# must map that memory at the same address) finds the range taken by its
# own libraries about one time in five ("EAL: Cannot init memory"). 32 TiB
# is application memory in an ASan process and unused in any other.
LAB_EAL_BASE=0x200000000000
lab_eal_hugepages() {
	local f
	for f in "$@"; do
		sed -i "s|\"--no-huge\", \"-m\", \"256\", |\"-m\", \"256\", \"--huge-dir=$LAB_DIR/huge\", \"--base-virtaddr=$LAB_EAL_BASE\", |" "$f"
	done
}

# Free 2 MiB pages now.
lab_hugepages_free() { awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo; }

# LAB_HUGEPAGES=1: LAB_HUGE_PAGES free 2 MiB pages and a hugetlbfs mount on
# DIR/huge for the lab's DPDK processes (their EAL runs with --huge-dir).
# The pool grows by what is missing; DIR/huge.state records what to undo,
# for lab_hugepages_down (lab_down calls it). Fails, saying why, if the
# kernel cannot give the pages.
lab_hugepages_up() {
	local free total want
	[ "$LAB_HUGEPAGES" = 1 ] || return 0
	free=$(lab_hugepages_free)
	total=$(cat /proc/sys/vm/nr_hugepages)
	want=$((total + LAB_HUGE_PAGES - free))
	mkdir -p "$LAB_DIR/huge"
	echo "$total" >"$LAB_DIR/huge.state"
	if [ "$free" -lt "$LAB_HUGE_PAGES" ]; then
		echo "$want" >/proc/sys/vm/nr_hugepages
	fi
	mount -t hugetlbfs -o pagesize=2M nodev "$LAB_DIR/huge"
	free=$(lab_hugepages_free)
	if [ "$free" -lt "$LAB_HUGE_PAGES" ]; then
		lab_log "hugepages: $free free 2 MiB pages, the lab needs $LAB_HUGE_PAGES (memory too fragmented?)"
		return 1
	fi
}

# Undo lab_hugepages_up: unmount, and give back the pages it asked for
# (the pool goes back to the size it had, as far as the kernel can).
lab_hugepages_down() {
	[ -e "$LAB_DIR/huge.state" ] || return 0
	if mountpoint -q "$LAB_DIR/huge"; then
		rm -f "$LAB_DIR/huge/"* 2>/dev/null
		umount "$LAB_DIR/huge"
	fi
	rmdir "$LAB_DIR/huge" 2>/dev/null
	cat "$LAB_DIR/huge.state" >/proc/sys/vm/nr_hugepages
	rm -f "$LAB_DIR/huge.state"
}

# Start "$@" in namespace NS, detached (own session: a closed terminal or
# Ctrl-C reaches it only through lab_stop), output to DIR/NAME.log, pid in
# DIR/pids/NAME.pid (ip netns exec execs the command: same pid).
lab_spawn() {
	local name=$1 ns=$2
	shift 2
	setsid ip netns exec "$ns" "$@" </dev/null >"$LAB_DIR/$name.log" 2>&1 &
	echo $! >"$LAB_DIR/pids/$name.pid"
}

lab_pid() { cat "$LAB_DIR/pids/$1.pid" 2>/dev/null; }
lab_alive() { local p; p=$(lab_pid "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# nginx.conf for one server: one process (no master, so no user switch:
# it reads the lab's folder as root), keep-alive, no access log; the
# listening port and document root as http.server's.
lab_nginx_conf() {
	local name=$1 root=$2 listen6=
	[ "$LAB_IPV6" = 1 ] && listen6="listen [::]:$LAB_BE_PORT;"
	mkdir -p "$LAB_DIR/nginx-$name"
	cat <<-EOF
		daemon off;
		master_process off;
		worker_processes 1;
		pid $LAB_DIR/nginx-$name/nginx.pid;
		error_log $LAB_DIR/nginx-$name/error.log warn;
		events { worker_connections 4096; }
		http {
		    access_log off;
		    keepalive_requests 1000000;
		    client_body_temp_path $LAB_DIR/nginx-$name;
		    proxy_temp_path $LAB_DIR/nginx-$name;
		    fastcgi_temp_path $LAB_DIR/nginx-$name;
		    uwsgi_temp_path $LAB_DIR/nginx-$name;
		    scgi_temp_path $LAB_DIR/nginx-$name;
		    server { listen $LAB_BE_PORT; $listen6 root $root; }
		}
	EOF
}

# Every VM's HTTP server: python's http.server, or nginx with
# LAB_HTTPD=nginx (bench/lab_vs_haproxy.sh: a backend that is not the
# bottleneck).
lab_servers_start() {
	local v bind=()
	# "::" serves both families (http.server's DualStackServer clears
	# IPV6_V6ONLY); without --bind it listens on 0.0.0.0 only
	[ "$LAB_IPV6" = 1 ] && bind=(--bind ::)
	for v in "${LAB_VMS[@]}"; do
		if [ "${LAB_HTTPD:-python}" = nginx ]; then
			lab_nginx_conf "$v" "$LAB_DIR/www/$v" >"$LAB_DIR/nginx-$v.conf"
			lab_spawn "http-$v" "$(lab_ns_vm "$v")" nginx -c "$LAB_DIR/nginx-$v.conf"
			continue
		fi
		lab_spawn "http-$v" "$(lab_ns_vm "$v")" \
			"$LAB_PY" -m http.server "$LAB_BE_PORT" "${bind[@]}" --directory "$LAB_DIR/www/$v"
	done
	for v in "${LAB_VMS[@]}"; do
		lab_poll lab_listening "$(lab_ns_vm "$v")" || {
			lab_log "http server of $v did not start"
			cat "$LAB_DIR/http-$v.log" >&2
			return 1
		}
	done
}

lab_listening() { ip netns exec "$1" ss -Hltn "sport = :$LAB_BE_PORT" | grep -q LISTEN; }

# Fail with the process's log if it died while we waited for it.
lab_expect_alive() {
	lab_alive "$1" && return 0
	lab_log "$1 exited; its log:"
	cat "$LAB_DIR/$1.log" >&2
	return 1
}

lab_ping() { ip netns exec "$1" ping -c 1 -W 1 -q "$2"; }

lab_until_alive() {
	local name=$1 end=$((SECONDS + LAB_WAIT))
	shift
	until "$@" >/dev/null 2>&1; do
		lab_expect_alive "$name" || return 1
		[ "$SECONDS" -lt "$end" ] || {
			lab_log "$name: timed out waiting for: $*"
			return 1
		}
		sleep 0.05
	done
}

lab_mux_start() {
	[ -x "$SLUICE_MUX" ] || { lab_log "no $SLUICE_MUX (scripts/build.sh)"; return 1; }
	lab_spawn mux "$LAB_NS_MUX" "$SLUICE_MUX" -c "$LAB_DIR/mux.cfg" \
		--stats-json "$LAB_DIR/mux.json"
	if [ "$LAB_MANAGED" = 1 ] && ! lab_ctl_has_vip; then
		# no VIP yet: running is all we can see (telemetry answers)
		lab_until_alive mux "$LAB_PY" "$LAB_SRC/scripts/lab_tool.py" tel \
			"${LAB_PREFIX[mux]}" /sluice/stats
		return
	fi
	# the mux answers echo requests for its VIPs once its workers run
	lab_until_alive mux lab_ping "$LAB_NS_CLIENT" "$LAB_VIP"
}

lab_manager_start() {
	[ -x "$SLUICE_MANAGER_BIN" ] || { lab_log "no $SLUICE_MANAGER_BIN (scripts/build.sh)"; return 1; }
	lab_spawn manager "$LAB_NS_ROUTER" "$SLUICE_MANAGER_BIN" -c "$LAB_DIR/manager.cfg"
	lab_until_alive manager lab_ctl status
}

lab_ctl() { "$SLUICECTL" --manager "ipc://$LAB_DIR/manager.sock" "$@"; }

lab_ctl_has_vip() { lab_ctl vip list 2>/dev/null | grep -q "$LAB_VIP:$LAB_VIP_PORT"; }

# The VIP with the four backends at weights W11 W12 W21 W22, as an
# operator would type it; each change waits for its commit.
lab_ctl_pool() {
	lab_ctl_pool_of 4 "$@"
	if [ "$LAB_IPV6" = 1 ]; then lab_ctl_pool_of 6 "$@"; fi
}

# lab_ctl_pool_of 4|6 W11 W12 W21 W22: one family's VIP and its backends: the
# IPv6 VIP has the same VMs' IPv6 DIPs behind their hosts' IPv6 PAs (6in6).
# Each command goes through ${LAB_CTL_CMD:-lab_ctl} (scripts/lab.sh echoes them).
lab_ctl_pool_of() {
	local fam=$1 i=0 v svc dip pa ctl=${LAB_CTL_CMD:-lab_ctl}
	shift
	local w=("$@")
	svc=$LAB_VIP:$LAB_VIP_PORT
	[ "$fam" = 6 ] && svc="[$LAB_VIP6]:$LAB_VIP_PORT"
	"$ctl" vip add "$svc"
	for v in "${LAB_VMS[@]}"; do
		dip=${LAB_VM_DIP[$v]} pa=${LAB_HOST_PA[${LAB_VM_HOST[$v]}]}
		[ "$fam" = 6 ] && dip="[${LAB_VM_DIP6[$v]}]" pa=${LAB_HOST_PA6[${LAB_VM_HOST[$v]}]}
		"$ctl" backend add "$svc" "$dip:$LAB_BE_PORT" --host "$pa" --weight "${w[$i]:-1}"
		i=$((i + 1))
	done
}

lab_link_up() { ip -n "$1" -o link show dev "$2" 2>/dev/null | grep -q '[<,]UP[,>]'; }

# The interface the agent's config names for VM V: its tap, or the agent's
# end of its veth.
lab_vm_if() {
	if [ "$LAB_VM_PORTS" = veth ]; then lab_vm_peer "$1"; else lab_tap "$1"; fi
}

# LAB_VM_PORTS=veth: VM V's veth pair, made before its agent starts: the
# VM's end (named as its tap would be) in its namespace, the agent's end up
# in the host's namespace, both without offloads, the agent's end taken by
# DPDK alone (lab_dpdk_port).
lab_vm_veth() {
	local v=$1 hns=$2 ns tap peer
	ns=$(lab_ns_vm "$v")
	tap=$(lab_tap "$v")
	peer=$(lab_vm_peer "$v")
	ip -n "$hns" link del "$peer" 2>/dev/null
	ip -n "$hns" link add "$peer" type veth peer name "$tap" netns "$ns" || return 1
	lab_no_offload "$ns" "$tap" || return 1
	lab_dpdk_port "$hns" "$peer" || return 1
	# no address of its own: nothing the kernel sends there but the VM's
	ip netns exec "$hns" sysctl -qw "net.ipv6.conf.$peer.disable_ipv6=1"
	ip -n "$hns" link set dev "$peer" up
}

# Start agent H in its host namespace; once it runs (its VMs' ports are up,
# it answers ping on its PA), address each VM's end in its namespace
# (LAB_VM_PORTS=tap: each tap is moved there first; veth: the veths were
# made before the agent started).
lab_agent_start() {
	local h=$1 v ns tap hns=${LAB_NS_HOST[$1]}
	[ -x "$SLUICE_AGENT" ] || { lab_log "no $SLUICE_AGENT (scripts/build.sh)"; return 1; }
	if [ "$LAB_VM_PORTS" = veth ]; then
		for v in $(lab_vms_of "$h"); do lab_vm_veth "$v" "$hns" || return 1; done
	fi
	lab_spawn "agent$h" "$hns" "$SLUICE_AGENT" -c "$LAB_DIR/agent$h.cfg" \
		--stats-json "$LAB_DIR/agent$h.json"
	for v in $(lab_vms_of "$h"); do
		lab_until_alive "agent$h" lab_link_up "$hns" "$(lab_vm_if "$v")" || return 1
	done
	lab_until_alive "agent$h" lab_ping "$LAB_NS_ROUTER" "${LAB_HOST_PA[$h]}" || return 1
	for v in $(lab_vms_of "$h"); do
		ns=$(lab_ns_vm "$v")
		tap=$(lab_tap "$v")
		[ "$LAB_VM_PORTS" = veth ] || ip -n "$hns" link set dev "$tap" netns "$ns"
		ip -n "$ns" link set dev "$tap" address "${LAB_VM_MAC[$v]}"
		ip -n "$ns" addr add "${LAB_VM_DIP[$v]}/24" dev "$tap"
		ip -n "$ns" link set dev "$tap" up
		ip -n "$ns" route add default via "${LAB_HOST_GW[$h]}"
		if [ "$LAB_IPV6" = 1 ]; then
			ip -n "$ns" -6 addr add "${LAB_VM_DIP6[$v]}/64" dev "$tap" nodad
			ip -n "$ns" -6 route add default via "$LAB_GW6" dev "$tap"
		fi
	done
}

lab_http_ok() {
	ip netns exec "$LAB_NS_CLIENT" curl -sf --max-time 2 -o /dev/null \
		"http://$LAB_VIP:$LAB_VIP_PORT/"
}

lab_http6_ok() {
	ip netns exec "$LAB_NS_CLIENT" curl -6 -sf --max-time 2 -o /dev/null \
		"http://[$LAB_VIP6]:$LAB_VIP_PORT/"
}

lab_wait_vip() {
	lab_poll lab_http_ok || { lab_log "no HTTP answer through the VIP"; return 1; }
	[ "$LAB_IPV6" = 1 ] || return 0
	lab_poll lab_http6_ok || { lab_log "no HTTP answer through the IPv6 VIP"; return 1; }
}

# The whole lab with weights W11 W12 W21 W22.
lab_up_all() {
	lab_topology_up
	lab_configs "$@"
	lab_start_all "$@"
}

# What lab_up_all starts once the topology and the configs are there.
lab_start_all() {
	lab_servers_start
	if [ "$LAB_MANAGED" = 1 ]; then lab_manager_start; fi
	lab_mux_start
	lab_agent_start 1
	lab_agent_start 2
	if [ "$LAB_MANAGED" = 1 ]; then lab_ctl_pool "$@"; fi
	lab_wait_vip
}

# A flow table other than the template's: SVCS is "VIP_PORT:BE_PORT ...",
# BES is "VM=WEIGHT ..." (VMs not named are not in the table at all), e.g.
#   lab_flow_table "80:8080 9090:9090" "vm11=1 vm12=1 vm21=1"
# Written to DIR/flow_table.cfg; hash_seed and maglev_size are the template's.
lab_flow_table() {
	local svcs=$1 bes=$2 tmpl=$LAB_SRC/examples/lab/flow_table.cfg.in seed size
	local sv vm w sep i n out=$LAB_DIR/flow_table.cfg
	seed=$(sed -n 's/^[[:space:]]*hash_seed = "\([0-9a-f]*\)";.*/\1/p' "$tmpl")
	size=$(sed -n 's/^[[:space:]]*maglev_size = \([0-9]*\);.*/\1/p' "$tmpl")
	read -ra bes <<<"$bes"
	read -ra svcs <<<"$svcs"
	{
		printf '# flow table of the test (lab_flow_table "%s" "%s")\n' "$1" "$2"
		printf 'flow_table = {\n\thash_seed = "%s";\n\tmaglev_size = %s;\n\tservices = (\n' \
			"$seed" "$size"
		n=${#svcs[@]}
		for ((i = 0; i < n; i++)); do
			sv=${svcs[$i]}
			printf '\t\t{\n\t\t\tvip = "%s"; protocol = "tcp"; port = %s;\n\t\t\tbackends = (\n' \
				"$LAB_VIP" "${sv%%:*}"
			sep=
			for vm in "${bes[@]}"; do
				w=${vm#*=}
				vm=${vm%%=*}
				[ -n "${LAB_VM_DIP[$vm]:-}" ] || { lab_log "lab_flow_table: no VM $vm"; return 1; }
				printf '%s\t\t\t\t{ dip = "%s"; port = %s; weight = %s; host = "%s"; }' "$sep" \
					"${LAB_VM_DIP[$vm]}" "${sv#*:}" "$w" "${LAB_HOST_PA[${LAB_VM_HOST[$vm]}]}"
				sep=$',\n'
			done
			printf '\n\t\t\t);\n\t\t}%s\n' "$([ $((i + 1)) -lt "$n" ] && echo ,)"
		done
		printf '\t);\n};\n'
	} >"$out"
}

# Replace the flow_table group (and the comment lines right above it) at the
# end of the configs of NAMES (default: mux agent1 agent2) with
# DIR/flow_table.cfg. Each file is replaced by a rename: a daemon reading it
# sees the old or the new file, never half of one.
lab_flow_table_apply() {
	local n f
	[ "$#" -gt 0 ] || set -- mux agent1 agent2
	for n in "$@"; do
		f=$LAB_DIR/$n.cfg
		awk '/^flow_table[[:space:]]*=/ { exit }
			/^#/ { c = c $0 "\n"; next }
			{ printf "%s%s\n", c, $0; c = "" }' "$f" >"$f.new"
		cat "$LAB_DIR/flow_table.cfg" >>"$f.new"
		mv "$f.new" "$f"
	done
}

# Lines of NAME's log that report a reload, successful or refused.
lab_reload_lines() {
	awk '/reloaded flow table|reload refused/ { n++ } END { print n + 0 }' "$LAB_DIR/$1.log"
}

# SIGHUP each of NAMES and wait (bounded) until each logged one more line
# about it: "reloaded flow table: ..." or "reload refused: ...". Returns 0
# if every one reloaded; 1 (with the line) if any refused, died or timed out.
lab_reload() {
	local n pid rc=0
	local -A before=()
	for n in "$@"; do
		before[$n]=$(lab_reload_lines "$n")
		pid=$(lab_pid "$n") || { lab_log "$n: no pid"; return 1; }
		kill -HUP "$pid"
	done
	for n in "$@"; do
		lab_until_alive "$n" lab_reload_grew "$n" "${before[$n]}" || { rc=1; continue; }
		if grep -E 'reloaded flow table|reload refused' "$LAB_DIR/$n.log" | tail -1 |
			grep -q 'reload refused'; then
			lab_log "$n: $(grep 'reload refused' "$LAB_DIR/$n.log" | tail -1)"
			rc=1
		fi
	done
	return "$rc"
}
lab_reload_grew() { [ "$(lab_reload_lines "$1")" -gt "$2" ]; }

# Where a hung process NAME (PID) is: every thread's stack, from gdb, into
# DIR/NAME.hang.txt; the main thread's few frames on stderr (the test's log).
lab_backtrace() {
	local f="$LAB_DIR/$1.hang.txt"
	command -v gdb >/dev/null || { lab_log "$1: no gdb for a backtrace"; return 0; }
	if ! timeout 20 gdb -p "$2" -batch -ex "thread apply all bt" >"$f" 2>&1; then
		lab_log "$1: gdb could not attach to $2 (see $f)"
	fi
	lab_log "$1 ($2) hangs at (all threads in $f):"
	awk '/^Thread 1 /{p=1} p && /^#/{print "lab:   " $0; if (++n == 6) exit}' "$f" >&2
}

# SIGTERM a process we started and wait (bounded) for it; SIGKILL after that.
lab_kill() {
	local name=$1 pid end st
	pid=$(lab_pid "$name") || return 0
	[ -n "$pid" ] || return 0
	# errexit-safe: the process may be gone between any two of these lines
	# (a failed kill means it is gone already: then there is nothing to wait for)
	if kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null; then
		end=$((SECONDS + 10))
		while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null; then
			lab_log "$name ($pid) ignored SIGTERM for 10 s: SIGKILL"
			lab_backtrace "$name" "$pid"
			if kill -KILL "$pid" 2>/dev/null; then
				lab_log "$name ($pid) killed"
			fi
		fi
	fi
	# reap it if it is our child (a --keep lab's are not): DIR/NAME.status
	st=0
	wait "$pid" 2>/dev/null || st=$?
	[ "$st" -eq 127 ] || echo "$st" >"$LAB_DIR/$name.status"
	rm -f "$LAB_DIR/pids/$name.pid"
	return 0
}

# Stop the DPDK processes: each prints its summary into its log and writes
# its JSON. Agents first: the mux's counters then include everything sent.
lab_stop() {
	lab_kill agent1
	lab_kill agent2
	lab_kill mux
	lab_kill manager
}

# Idempotent, and safe from a trap under errexit: best effort on every step.
lab_down() {
	local f name ns pid p errexit=${-//[^e]/}
	[ -n "${LAB_DIR:-}" ] || return 0
	set +e
	lab_stop
	for f in "$LAB_DIR"/pids/*.pid; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .pid)
		lab_kill "$name"
	done
	for ns in $(lab_namespaces); do
		[ -e "/run/netns/$ns" ] || continue
		# anything still running in our namespaces was started by us
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	for p in "${LAB_PREFIX[@]}"; do
		rm -rf "/var/run/dpdk/$p"
	done
	lab_hugepages_down
	[ -n "$errexit" ] && set -e
	return 0
}

# What lab_down would have left: prints it and fails if anything remains.
lab_leftovers() {
	local left=() ns p v
	for ns in $(lab_namespaces); do
		[ -e "/run/netns/$ns" ] && left+=("netns $ns")
	done
	for p in "${LAB_PREFIX[@]}"; do
		[ -e "/var/run/dpdk/$p" ] && left+=("/var/run/dpdk/$p")
	done
	for p in "$LAB_DIR"/pids/*.pid; do
		[ -e "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null && left+=("process $(cat "$p")")
	done
	mountpoint -q "$LAB_DIR/huge" 2>/dev/null && left+=("hugetlbfs on $LAB_DIR/huge")
	[ "${#left[@]}" -eq 0 ] && return 0
	printf 'left behind: %s\n' "${left[@]}" >&2
	return 1
}
