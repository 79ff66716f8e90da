# shellcheck shell=bash
# The PoP as shell functions: source this file after scripts/netns-lab.sh
# (tests/netns/pop_lib.sh does both), do not run it.
#
# The lab of netns-lab.sh with its single mux and static route replaced by
# a PoP: N muxes (2 by default) behind an FRR router that learns the VIP
# from each mux's BGP speaker (BIRD, forked by the mux) and spreads flows
# over them with five-tuple ECMP. Client, hosts, agents and VMs are the
# lab's, unchanged.
#
#      ns sl-router: FRR (zebra + bgpd, AS 65000), fib_multipath_hash_policy=1
#     +------------------------------------------------------------------+
#     | rt-cl 198.51.100.1    rt-h1, rt-h2 toward the hosts (as the lab) |
#     | br-mux 10.255.0.254/24 (02:..:fe:01), the muxes' VLAN:            |
#     |   192.0.2.10 proto bgp nexthop via 10.255.0.1 nexthop via 10.255.0.2
#     +---+-----------+------------------+-------------+-----------------+
#         |rt-mux     |rt-mg1            |rt-mux2      |rt-mg2   (bridge ports)
#   ns sl-mux         |          ns sl-mux2            |
#   +-----+-----------+-----+    +-------+-------------+-----+
#   | mux0: sluice-mux DPDK |    | mux0: sluice-mux DPDK     |
#   |   tunnel 10.255.0.1   |    |   tunnel 10.255.0.2       |
#   |   (no kernel address: |    | mgmt0 10.255.0.102/24     |
#   |    the mux answers    |    |   BIRD AS 65001 ...       |
#   |    its own ARP)       |    +---------------------------+
#   | mgmt0 10.255.0.101/24 |
#   |   BIRD AS 65001: BGP  |
#   |   .101 -> .254,       |
#   |   VIP/32 next hop .1  |
#   +-----------------------+
#
# Mux i: namespace sl-mux (i = 1, the lab's) or sl-mux<i>, tunnel address
# 10.255.0.<i>, management address 10.255.0.10<i>, DPDK prefix
# <lab prefix>mux<i>, config DIR/mux<i>.cfg, process name mux<i>.
#
#   pop_init [N]                after lab_init: names for N muxes (1..8)
#   pop_topology_up             lab_topology_up, then the bridge and the muxes' veths
#   pop_configs                 after lab_configs: DIR/mux<i>.cfg with a bgp group
#   pop_bgp_group I             the bgp group of mux I (POP_HOLD, POP_KEEPALIVE,
#                               POP_DRAIN, POP_BIRD, POP_NEIGHBOR override it)
#   pop_frr_start               zebra and bgpd in the router, one neighbor per mux
#   pop_mux_start I [CFG]       sluice-mux I; returns once it answers ping
#   pop_nexthops                the router's kernel next hops for the VIP, sorted
#   pop_wait_nexthops "A B"     until they are exactly A B ("" = no route)
#   pop_vtysh CMD               a vtysh command against the lab's FRR
#   pop_tel I CMD               a telemetry command of mux I (JSON)
#   pop_up_all [N]              everything, with weights 1 1 1 1; returns once the
#                               router has all N next hops and HTTP works
#   pop_mux_state I             mux I's route reason in its telemetry (NONE when
#                               it announces, DRAINED, NOT_IN_SYNC ...)
#
# POP_ZONES="a b": mux i's zone is the i-th word (mux.zone), for services
# with cross_zone off (docs/architecture.md, "Choosing a backend").
#
# POP_CREDITS=1: capacity credits (docs/architecture.md, "Capacity credits").
# Each mux listens for its agents on tls+tcp://<its management address>:7500;
# each agent dials every mux over a management link of its own to the router
# (lab_mgmt_up's, 10.254.<2|3>.1), with certificates made by
# scripts/make-certs.sh in DIR/pki (CN mux<i>, agent<h>).
#
# LAB_MANAGED=1 (export it before pop_up_all): the PoP under sluice-manager,
# as the lab's managed mode. Each mux is member mux<i> (its manager group
# replaces the flow table), the manager runs in the router, the pool is
# added with sluicectl, and a mux announces only once the manager says it
# is in sync (docs/routing.md).
#
# lab_down (and lab_leftovers) also cover the PoP: its namespaces, FRR and
# the speakers' run folders (/run/sluice/<prefix>).

POP_ASN_ROUTER=65000
POP_ASN_MUX=65001
POP_RT_IP=10.255.0.254
SLUICE_FRR_DIR=${SLUICE_FRR_DIR:-/usr/lib/frr}

pop_init() {
	local i
	POP_N=${1:-2}
	if [ "$POP_N" -lt 1 ] || [ "$POP_N" -gt 8 ]; then
		lab_log "pop_init: 1..8 muxes, not $POP_N"
		return 1
	fi
	declare -gA POP_NS=() POP_TA=() POP_MG=() POP_PFX=()
	for ((i = 1; i <= POP_N; i++)); do
		if [ "$i" = 1 ]; then POP_NS[1]=$LAB_NS_MUX; else POP_NS[$i]=${LAB_NSP}mux$i; fi
		POP_TA[$i]=10.255.0.$i
		POP_MG[$i]=10.255.0.10$i
		POP_PFX[$i]=${LAB_NSP}mux$i
		# shellcheck disable=SC2034 # lab_down and lab_leftovers read it
		LAB_PREFIX["mux$i"]=${POP_PFX[$i]}
	done
	POP_FRR=$LAB_DIR/frr
	# LAB_HUGEPAGES=1: 128 pages (256 MB) per DPDK process, the agents' and
	# every mux's, and room for dpdk-dumpcap (netns-lab.sh counts three)
	LAB_HUGE_PAGES=$((128 * (POP_N + 2) + 64))
	if [ "$LAB_IPV6" = 1 ]; then
		lab_log "pop_init: the PoP is IPv4 only (its muxes announce IPv4 VIPs): LAB_IPV6=0"
		return 1
	fi
}

# lab_namespaces, lab_down and lab_leftovers, extended to the PoP's extras
# (netns-lab.sh's own stay as *_lab; sourcing this file twice wraps once).
if ! declare -F lab_namespaces_lab >/dev/null; then
	eval "$(declare -f lab_namespaces | sed '1s/^lab_namespaces/lab_namespaces_lab/')"
	eval "$(declare -f lab_down | sed '1s/^lab_down/lab_down_lab/')"
	eval "$(declare -f lab_leftovers | sed '1s/^lab_leftovers/lab_leftovers_lab/')"
fi
lab_namespaces() {
	local i
	lab_namespaces_lab
	for ((i = 2; i <= ${POP_N:-0}; i++)); do echo "${POP_NS[$i]}"; done
}
lab_down() {
	local i
	lab_down_lab
	for ((i = 1; i <= ${POP_N:-0}; i++)); do rm -rf "/run/sluice/${POP_PFX[$i]}"; done
	return 0
}
lab_leftovers() {
	local rc=0 i
	lab_leftovers_lab || rc=1
	for ((i = 1; i <= ${POP_N:-0}; i++)); do
		if [ -e "/run/sluice/${POP_PFX[$i]}" ]; then
			echo "left behind: /run/sluice/${POP_PFX[$i]}" >&2
			rc=1
		fi
	done
	return "$rc"
}

# A veth from mux i's namespace into the router's bridge: its data port
# (DPDK's, lab_dpdk_port) or its management link (the kernel's).
pop_bridge_veth() {
	local ns=$1 dev=$2 peer=$3 r=$LAB_NS_ROUTER
	ip -n "$ns" link add "$dev" type veth peer name "$peer" netns "$r"
	if [ "$dev" = "$LAB_IF_MUX" ]; then
		lab_dpdk_port "$ns" "$dev"
	else
		lab_no_offload "$ns" "$dev"
	fi
	lab_no_offload "$r" "$peer"
	ip -n "$r" link set "$peer" master br-mux up
	ip -n "$ns" link set "$dev" up
}

pop_topology_up() {
	local r=$LAB_NS_ROUTER i
	lab_topology_up
	# The lab's static route and its point-to-point link become the PoP's
	# bridge: rt-mux (mux 1's data port) is one of its ports, the router's
	# address and MAC move to the bridge.
	ip -n "$r" route del "$LAB_VIP/32"
	ip -n "$r" addr del "$POP_RT_IP/24" dev rt-mux
	ip -n "$r" link set rt-mux down
	ip -n "$r" link set rt-mux address 02:00:00:00:fe:a1
	ip -n "$r" link add br-mux type bridge
	# A router's bridge switches frames; it does not hand them to iptables
	# (on by default where the kernel has br_netfilter: a route lookup and
	# the netfilter hooks for every frame the muxes send or receive)
	if ip netns exec "$r" test -e /proc/sys/net/bridge/bridge-nf-call-iptables; then
		ip netns exec "$r" sysctl -qw net.bridge.bridge-nf-call-iptables=0 \
			net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0
	fi
	ip -n "$r" link set br-mux address "$LAB_RT_MUX_MAC"
	ip netns exec "$r" sysctl -qw net.ipv4.fib_multipath_hash_policy=1 \
		net.ipv4.conf.br-mux.rp_filter=0
	ip -n "$r" link set rt-mux master br-mux up
	ip -n "$r" addr add "$POP_RT_IP/24" dev br-mux
	ip -n "$r" link set br-mux up
	# (lab_topology_up made the muxes' namespaces: lab_namespaces lists them)
	for ((i = 2; i <= POP_N; i++)); do
		pop_bridge_veth "${POP_NS[$i]}" "$LAB_IF_MUX" "rt-mux$i"
	done
	for ((i = 1; i <= POP_N; i++)); do
		pop_bridge_veth "${POP_NS[$i]}" mgmt0 "rt-mg$i"
		ip -n "${POP_NS[$i]}" addr add "${POP_MG[$i]}/24" dev mgmt0
	done
	if [ "${POP_CREDITS:-0}" = 1 ]; then pop_credits_links; fi
}

# The bgp group of mux i.
pop_bgp_group() {
	local i=$1
	cat <<-EOF
		# The PoP (scripts/netns-pop.sh): BIRD announces the VIPs to the router.
		bgp = {
		    bird = "${POP_BIRD:-bird}";
		    local_as = $POP_ASN_MUX;
		    local_address = "${POP_MG[$i]}";
		    neighbors = ( { address = "${POP_NEIGHBOR:-$POP_RT_IP}"; as = $POP_ASN_ROUTER; } );
		    hold_time = ${POP_HOLD:-3};
		    keepalive = ${POP_KEEPALIVE:-1};
		    drain_time = ${POP_DRAIN:-2};
		};

	EOF
}

# DIR/mux<i>.cfg: the lab's mux template with mux i's prefix and tunnel
# address, its bgp group, then the flow table (so lab_flow_table_apply works).
# The agents accept IP-in-IP from every mux.
pop_configs() {
	local i ex=$LAB_SRC/examples/lab muxes zs
	muxes=$(pop_all_tas | sed 's/\([0-9.]*\)/"\1"/g; s/ /, /g')
	sed -i "s|muxes = \[ \"$LAB_MUX_TA\" \];|muxes = [ $muxes ];|" \
		"$LAB_DIR/agent1.cfg" "$LAB_DIR/agent2.cfg"
	for ((i = 1; i <= POP_N; i++)); do
		# IPv4 only (the PoP announces IPv4 VIPs): no ipv6 block, no IPv6 prober
		lab_render "$ex/mux.cfg.in" "$LAB_DIR/mux$i.cfg" \
			"PREFIX=${POP_PFX[$i]}" "MUX_IF=$LAB_IF_MUX" "PROBER6="
		sed -i -e '/# ipv6 {/,/# ipv6 }/d' "$LAB_DIR/mux$i.cfg"
		sed -i "s|tunnel_address = \"$LAB_MUX_TA\"|tunnel_address = \"${POP_TA[$i]}\"|" \
			"$LAB_DIR/mux$i.cfg"
		if [ -n "${POP_ZONES:-}" ]; then
			read -r -a zs <<<"$POP_ZONES"
			sed -i "s|^\(\t*\)workers = 1;|&\n\1zone = \"${zs[$((i - 1))]}\";|" "$LAB_DIR/mux$i.cfg"
		fi
		pop_bgp_group "$i" >>"$LAB_DIR/mux$i.cfg"
		# POP_METRICS=1: GET /metrics on its management address (pop_metric); the
		# agents and the manager serve none here (LAB_METRICS is the one-mux lab's)
		if [ "${POP_METRICS:-0}" = 1 ]; then
			printf 'metrics = { listen = "%s:%s"; };\n' "${POP_MG[$i]}" \
				"${LAB_METRICS_PORT[mux]}" >>"$LAB_DIR/mux$i.cfg"
		fi
		if [ "${LAB_MANAGED:-0}" = 1 ]; then
			printf 'manager = { url = "ipc://%s/members.sock"; id = "mux%s"; heartbeat_ms = 500;\n\tstate_file = "%s/mux%s.lkg"; };\n' \
				"$LAB_DIR" "$i" "$LAB_DIR" "$i" >>"$LAB_DIR/mux$i.cfg"
		else
			cat "$LAB_DIR/flow_table.cfg" >>"$LAB_DIR/mux$i.cfg"
		fi
		if [ "${POP_CREDITS:-0}" = 1 ]; then
			printf 'credits = { listen = "tls+tcp://%s:7500"; ca = "pki/ca.pem";\n\tcert = "pki/mux%s.pem"; key = "pki/mux%s.key"; };\n' \
				"${POP_MG[$i]}" "$i" "$i" >>"$LAB_DIR/mux$i.cfg"
		fi
		if [ "$LAB_HUGEPAGES" = 1 ]; then lab_eal_hugepages "$LAB_DIR/mux$i.cfg"; fi
	done
	if [ "${POP_CREDITS:-0}" = 1 ]; then pop_credits_configs; fi
}

# POP_CREDITS=1: the certificates, the agents' management links and routes,
# and every agent's credits group (each mux, by its id and address).
pop_credits_configs() {
	local h i names=() list=""
	for ((i = 1; i <= POP_N; i++)); do
		names+=("mux$i")
		list+="${list:+, }{ id = \"mux$i\"; url = \"tls+tcp://${POP_MG[$i]}:7500\"; }"
	done
	"$LAB_SRC/scripts/make-certs.sh" "$LAB_DIR/pki" "${names[@]}" agent1 agent2 >/dev/null
	for h in 1 2; do
		printf 'credits = { muxes = ( %s );\n\tttl_ms = %s; interval_ms = %s;\n\tca = "pki/ca.pem"; cert = "pki/agent%s.pem"; key = "pki/agent%s.key"; };\n' \
			"$list" "${POP_CREDIT_TTL:-1000}" "${POP_CREDIT_INTERVAL:-50}" "$h" "$h" \
			>>"$LAB_DIR/agent$h.cfg"
	done
}

# POP_CREDITS=1: agent h reaches the muxes' management network through the
# router over lab_mgmt_up's link; the muxes answer through the router.
pop_credits_links() {
	local h i
	lab_mgmt_up
	for h in 1 2; do
		ip -n "${LAB_NS_HOST[$h]}" route add 10.255.0.0/24 via "${LAB_MG_NET[agent$h]}.2"
	done
	for ((i = 1; i <= POP_N; i++)); do
		ip -n "${POP_NS[$i]}" route add 10.254.0.0/16 via "$POP_RT_IP"
	done
}

pop_vtysh() { vtysh --vty_socket "$POP_FRR" -c "$1"; }

# pop_metrics I: mux I's /metrics (POP_METRICS=1); pop_metric I SERIES: the
# value of one series of it, e.g. 'sluice_bgp_state{reason="ANNOUNCED"}'; empty if absent.
pop_metrics() {
	ip netns exec "$LAB_NS_ROUTER" curl -s --max-time 2 \
		"http://${POP_MG[$1]}:${LAB_METRICS_PORT[mux]}/metrics"
}
pop_metric() { pop_metrics "$1" | awk -v s="$2" '$1 == s { print $2 }'; }

# FRR in the router, as the lab notes recipe says: zebra then bgpd, as user
# frr (root is refused), each with its own pid file, zserv socket and vty
# folder in a folder frr owns.
pop_frr_start() {
	local i r=$LAB_NS_ROUTER
	if [ ! -x "$SLUICE_FRR_DIR/zebra" ] || [ ! -x "$SLUICE_FRR_DIR/bgpd" ]; then
		lab_log "no FRR in $SLUICE_FRR_DIR (scripts/install-deps.sh)"
		return 1
	fi
	mkdir -p "$POP_FRR"
	chmod 711 "$LAB_DIR" # frr must reach its folder inside
	{
		echo "frr defaults datacenter"
		echo "hostname ${LAB_NSP}router"
		echo "log stdout informational"
		echo "router bgp $POP_ASN_ROUTER"
		echo " bgp router-id $POP_RT_IP"
		echo " no bgp ebgp-requires-policy"
		echo " bgp bestpath as-path multipath-relax"
		for ((i = 1; i <= POP_N; i++)); do
			echo " neighbor ${POP_MG[$i]} remote-as $POP_ASN_MUX"
			echo " neighbor ${POP_MG[$i]} timers 1 3"
			echo " neighbor ${POP_MG[$i]} timers connect 1"
		done
		echo " address-family ipv4 unicast"
		echo "  maximum-paths 8"
		echo " exit-address-family"
	} >"$POP_FRR/frr.conf"
	: >"$POP_FRR/zebra.conf"
	chown -R frr:frr "$POP_FRR"
	lab_spawn frr-zebra "$r" "$SLUICE_FRR_DIR/zebra" -u frr -g frr -f "$POP_FRR/zebra.conf" \
		-i "$POP_FRR/zebra.pid" -z "$POP_FRR/zserv.api" --vty_socket "$POP_FRR"
	lab_until_alive frr-zebra test -S "$POP_FRR/zserv.api" || return 1
	lab_spawn frr-bgpd "$r" "$SLUICE_FRR_DIR/bgpd" -u frr -g frr -f "$POP_FRR/frr.conf" \
		-i "$POP_FRR/bgpd.pid" -z "$POP_FRR/zserv.api" --vty_socket "$POP_FRR"
	lab_until_alive frr-bgpd pop_vtysh "show bgp summary"
}

pop_tel() { "$LAB_PY" "$LAB_SRC/scripts/lab_tool.py" tel "${POP_PFX[$1]}" "$2"; }
pop_mux_state() { pop_tel "$1" /sluice/route | jq -r .reason; }

# The capabilities the data planes' systemd unit leaves them
# (CapabilityBoundingSet= of deploy/systemd/sluice-dataplane@.service.in),
# as setpriv's --bounding-set: "-all,+net_admin,...".
pop_unit_caps() {
	local c out=-all
	for c in $(sed -n 's/^CapabilityBoundingSet=//p' \
		"$LAB_SRC/deploy/systemd/sluice-dataplane@.service.in"); do
		c=${c#CAP_}
		out+=",+${c,,}"
	done
	echo "$out"
}

# Mux i (with CFG, default DIR/mux<i>.cfg); returns once its workers answer
# ping on its tunnel address. A socket DIR/mux<i>.notify, when there, is its
# NOTIFY_SOCKET (what it tells systemd). It runs with only the capabilities its
# systemd unit grants (root as there, the rest dropped from the bounding
# set), and so does the BIRD it starts: a unit that leaves out one they
# need fails here, not in production (before stop 35, BIRD could not
# listen on port 179 and no session came up).
pop_mux_start() {
	local i=$1 cfg=${2:-$LAB_DIR/mux$1.cfg} caps notify=
	[ -x "$SLUICE_MUX" ] || { lab_log "no $SLUICE_MUX (scripts/build.sh)"; return 1; }
	[ -S "$LAB_DIR/mux$i.notify" ] && notify=$LAB_DIR/mux$i.notify
	caps=$(pop_unit_caps)
	[ "$caps" != -all ] || { lab_log "no CapabilityBoundingSet= in the unit"; return 1; }
	lab_spawn "mux$i" "${POP_NS[$i]}" env ${notify:+NOTIFY_SOCKET="$notify"} \
		setpriv --bounding-set="$caps" --inh-caps=-all \
		"$SLUICE_MUX" -c "$cfg" --stats-json "$LAB_DIR/mux$i.json"
	lab_until_alive "mux$i" lab_ping "$LAB_NS_ROUTER" "${POP_TA[$i]}"
}

# The next hops of the router's kernel route for the VIP, sorted, one line.
pop_nexthops() {
	ip -n "$LAB_NS_ROUTER" route show "$LAB_VIP/32" | grep -o 'via [0-9.]*' |
		awk '{print $2}' | sort | xargs
}
pop_nexthops_are() { [ "$(pop_nexthops)" = "$1" ]; }
pop_wait_nexthops() {
	lab_poll pop_nexthops_are "$1" || {
		lab_log "router's next hops for $LAB_VIP: '$(pop_nexthops)', not '$1'"
		return 1
	}
}
pop_all_tas() { local i; for ((i = 1; i <= POP_N; i++)); do echo "${POP_TA[$i]}"; done | sort | xargs; }

pop_up_all() {
	local i
	pop_init "${1:-2}"
	pop_topology_up
	lab_configs 1 1 1 1
	pop_configs
	lab_servers_start
	if [ "${LAB_MANAGED:-0}" = 1 ]; then lab_manager_start; fi
	pop_frr_start
	for ((i = 1; i <= POP_N; i++)); do pop_mux_start "$i"; done
	lab_agent_start 1
	lab_agent_start 2
	if [ "${LAB_MANAGED:-0}" = 1 ]; then lab_ctl_pool 1 1 1 1 >/dev/null; fi
	pop_wait_nexthops "$(pop_all_tas)"
	lab_wait_vip
}
