#!/usr/bin/env bash
# IPv6 end to end under the manager, on the dual-stack lab (LAB_IPV6=1,
# LAB_MANAGED=1): the mux and both agents start empty; sluicectl adds the
# IPv4 VIP and the IPv6 VIP [2001:db8::10]:80 with their backends, as an
# operator types them (lab_ctl_pool: [v6]:port, hosts' IPv6 PAs: 6in6).
#   1. Every member runs the last version; the manager's TCP probes reach
#      the IPv6 DIPs through the agents (all eight backends healthy).
#   2. 200 requests through the IPv6 VIP all answered, spread 1:1:2:1.
#   3. An IPv4 backend moved to its host's IPv6 PA with `backend set
#      --host` (4in6): IPv4 requests keep succeeding, all four backends
#      answer.
#   4. An IPv4 host given for an IPv6 backend of host1 that is not host1's
#      PA is refused, naming the agent; the version does not move.
# Topology: scripts/netns-lab.sh.
LAB_IPV6=1
export LAB_MANAGED=1
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 1 2 1
SVC6="[$LAB_VIP6]:$LAB_VIP_PORT"

v=$(t_committed)
check "the two pools took ten versions: $v" test "$v" -eq 10
check "all three members run version $v" lab_poll t_in_sync --ids mux,agent1,agent2 --version "$v"
healthy() { # every backend of both services healthy
	lab_ctl --json vip list | t_py -c 'import json, sys
j = json.load(sys.stdin)
sys.exit(0 if all(b["health"] == "healthy" for s in j["services"] for b in s["backends"]) and
         sum(len(s["backends"]) for s in j["services"]) == 8 else 1)'
}
check "TCP probes over IPv6 through the agents: all eight backends healthy" lab_poll healthy
listed() { lab_ctl vip list | grep -E "$1" >/dev/null; } # vip list has a line matching ERE
check "vip list shows the IPv6 service as [v6]:port" listed 'tcp \[2001:db8::10\]:80'
check "... its backends' DIPs so, their hosts plain" \
	listed '\[2001:db8:2::21\]:8080 +host 2001:db8:a2::1 '
check "200 requests through the IPv6 VIP: all answered, spread 1:1:2:1" \
	t_py "$LAB_SRC/scripts/lab_tool.py" burst --ns "$LAB_NS_CLIENT" \
	--url "http://[$LAB_VIP6]:$LAB_VIP_PORT/" -n 200 --weights 1,1,2,1 --check

check "backend set --host moves vm11's IPv4 backend to host1's IPv6 PA (4in6)" \
	lab_ctl backend set "$T_SVC" "${LAB_VM_DIP[vm11]}:$LAB_BE_PORT" --host "${LAB_HOST_PA6[1]}"
v=$(t_committed)
check "all three members run version $v" lab_poll t_in_sync --ids mux,agent1,agent2 --version "$v"
check "200 requests through the IPv4 VIP, one backend over 4in6: all answered, spread 1:1:2:1" \
	t_burst 200 1,1,2,1

out=$(lab_ctl backend add "$SVC6" "[${LAB_VM_DIP6[vm12]}]:9090" --host 10.0.2.1 2>&1) && rc=0 || rc=$?
echo "# $out"
check "a host that is not the DIP's agent's PA is refused (exit 1), naming agent1" \
	test "$rc" -eq 1 -a -n "$(echo "$out" | grep 'not a PA of agent agent1')"
check "... and the version stays $v" test "$(t_committed)" -eq "$v"

t_end
check "both agents decapsulated tunnel packets" \
	test "$(t_json agent1 decap)" -gt 0 -a "$(t_json agent2 decap)" -gt 0
t_check_clean
t_finish
