#!/usr/bin/env bash
# The lab with its uplinks on net_af_xdp (LAB_UPLINK_PMD): the mux and both
# agents take their veths through an AF_XDP socket, the XDP program the PMD
# loads on each veth steering every frame into it, instead of af_packet's
# ring. The same 400 requests as e2e: all succeed, the spread fits the
# weights, the mux sees no reply (DSR). docs/performance.md, "AF_XDP for
# the lab's links", has why af_packet stays the default.
export LAB_UPLINK_PMD=net_af_xdp0
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 1 1 1

# Proof the uplinks are AF_XDP and not af_packet: an XDP program on each veth.
xdp_on() { ip -n "$1" link show dev "$2" | grep -q 'prog/xdp'; }
check "an XDP program on the mux's veth" xdp_on "$LAB_NS_MUX" "$LAB_IF_MUX"
check "an XDP program on agent 1's veth" xdp_on "${LAB_NS_HOST[1]}" "${LAB_IF_UP[1]}"
check "an XDP program on agent 2's veth" xdp_on "${LAB_NS_HOST[2]}" "${LAB_IF_UP[2]}"
check "HTTP through the VIP over AF_XDP: spread and direct server return" \
	t_check_traffic 400 1,1,1,1
# AF_XDP sockets do not end a nap (dataplane/dp_wake.h): timed naps only.
tel() { t_tel "${LAB_PREFIX[mux]}" /sluice/stats "$1"; }
check "the mux's worker napped" test "$(tel idle_sleeps)" -gt 0
check "... and no frame ended a nap early" test "$(tel idle_wakes)" -eq 0

t_end
check "agents' JSON: DSR rewrites on both hosts" \
	test "$(t_json agent1 dsr)" -gt 0 -a "$(t_json agent2 dsr)" -gt 0
t_check_clean
t_finish
