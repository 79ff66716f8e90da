#!/usr/bin/env bash
# The lab with its VMs on net_tap (LAB_VM_PORTS=tap) instead of veths: each
# agent creates its VMs' taps, the lab moves them into the VMs' namespaces.
# The same 400 requests as e2e: all succeed, the spread fits the weights,
# the mux sees no reply (DSR). docs/performance.md, "The VMs' ports", has
# why veths are the default.
export LAB_VM_PORTS=tap
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 1 1 1

# Proof the VMs' ports are taps: a tun device in each VM's namespace.
is_tun() { ip -d -n "$(lab_ns_vm "$1")" link show dev "$(lab_tap "$1")" | grep -q ' tun '; }
for v in "${LAB_VMS[@]}"; do check "$v's port is a tap" is_tun "$v"; done
check "HTTP through the VIP over taps: spread and direct server return" \
	t_check_traffic 400 1,1,1,1

t_end
check "agents' JSON: DSR rewrites on both hosts" \
	test "$(t_json agent1 dsr)" -gt 0 -a "$(t_json agent2 dsr)" -gt 0
t_check_clean
t_finish
