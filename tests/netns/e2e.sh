#!/usr/bin/env bash
# End to end: 400 HTTP requests from the client through the VIP, equal
# weights. Every request succeeds, the spread fits the weights, the mux sees
# every client packet and none of the replies, the agents decapsulate and
# rewrite the replies (DSR); every component stops cleanly and nothing is
# left behind. Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 1 1 1

# The VMs' ports are veths by default (LAB_VM_PORTS), af_packet on the agent's end.
is_veth() { ip -d -n "$(lab_ns_vm "$1")" link show dev "$(lab_tap "$1")" | grep -q ' veth '; }
for v in "${LAB_VMS[@]}"; do check "$v's port is a veth" is_veth "$v"; done
check "HTTP through the VIP: spread and direct server return" t_check_traffic 400 1,1,1,1
# Frames on the af_packet uplinks ended the workers' naps (dataplane/dp_wake.h).
wakes() { t_tel "$1" "$2" idle_wakes; }
check "the mux's worker was woken by frames on its uplink" \
	test "$(wakes "${LAB_PREFIX[mux]}" /sluice/stats)" -gt 0
check "agent 1's lcore was woken by frames on its uplink" \
	test "$(wakes "${LAB_PREFIX[1]}" /sluice/agent/stats)" -gt 0
check "agent 2's lcore was woken by frames on its uplink" \
	test "$(wakes "${LAB_PREFIX[2]}" /sluice/agent/stats)" -gt 0
# The namespaces' own IP stacks never saw the frames DPDK took (lab_dpdk_port):
# without the veths' ingress drop each one was looked up there and dropped as
# unroutable (no forwarding), counted in Ip: InAddrErrors.
addr_errors() {
	ip netns exec "$1" awk '$1 == "Ip:" { if (!n++) for (i = 2; i <= NF; i++) col[$i] = i;
		else print $col["InAddrErrors"] }' /proc/net/snmp
}
for ns in "$LAB_NS_MUX" "${LAB_NS_HOST[1]}" "${LAB_NS_HOST[2]}"; do
	check "$ns's kernel routed none of DPDK's frames ($(addr_errors "$ns") unroutable)" \
		test "$(addr_errors "$ns")" -eq 0
done

t_end
check "agents' JSON: DSR rewrites on both hosts" \
	test "$(t_json agent1 dsr)" -gt 0 -a "$(t_json agent2 dsr)" -gt 0
t_check_clean
t_finish
