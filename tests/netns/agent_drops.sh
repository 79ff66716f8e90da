#!/usr/bin/env bash
# Malformed and misaddressed IP-in-IP, and IP-in-IP from an unknown source,
# sent by hand (scapy, from the router's namespace) to agent 1's uplink:
# each frame is dropped and counted under its reason (common/lb_drop.h),
# nothing reaches a VM but the valid control case, and the agent's final
# JSON agrees. The cases are the table in check_agent_drops.py.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 1 1 1

check "agent 1 drops and counts every bad tunnel frame by reason" \
	ip netns exec "$LAB_NS_ROUTER" "$LAB_PY" "$LAB_SRC/tests/netns/check_agent_drops.py" \
	--iface rt-h1 --router-mac "${LAB_HOST_RTMAC[1]}" \
	--agent-mac "$(ip netns exec "${LAB_NS_HOST[1]}" cat "/sys/class/net/${LAB_IF_UP[1]}/address")" \
	--prefix "${LAB_PREFIX[1]}" --pa "${LAB_HOST_PA[1]}" --other-pa "${LAB_HOST_PA[2]}" \
	--mux "$LAB_MUX_TA" --dip "${LAB_VM_DIP[vm11]}" --other-dip "${LAB_VM_DIP[vm21]}"
check "HTTP through the VIP still works afterwards" lab_http_ok

t_end
for r in not_our_pa:2 unknown_mux:2 inner_malformed:7 no_local_dip:3 not_tunnel:2; do
	check "agent1.json drops.${r%:*} == $((${r#*:} * 3))" \
		test "$(t_json agent1 "drops.${r%:*}")" -eq $((${r#*:} * 3))
done
check "agent2.json: agent 2 saw none of it (drops.not_our_pa == 0)" \
	test "$(t_json agent2 drops.not_our_pa)" -eq 0
t_check_clean
t_finish
