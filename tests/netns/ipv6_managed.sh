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
#   5. VIP probes over IPv6: the mux answers for both VIPs (the IPv6 one
#      through its IPv6 tunnel address); with the manager's IPv6 probes
#      blackholed it is fenced, naming the IPv6 VIP, and rejoins after.
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

# VIP probes over IPv6: both VIPs probed through the mux, the IPv6 one as
# ICMPv6 echo inside IPv6-in-IPv6 from the router's 2001:db8:ff::254
mux() { t_member mux "$1"; } # FIELD of the mux's row in status
answers_both() { # in sync, both VIPs probed, answered lately with the committed version
	lab_ctl --json status | t_py -c '
import json, sys
s = json.load(sys.stdin)
m = [m for m in s["members"] if m["id"] == "mux"][0]
p = m["vip_probe"]
sys.exit(0 if m["state"] == "in-sync" and p and p["address6"] == "2001:db8:ff::1" and
         p["vips"] == 2 and p["last_answer_ms"] is not None and p["last_answer_ms"] < 2000 and
         p["failures"] == 0 and p["version"] == s["committed"]["version"] else 1)'
}
check "the mux answers VIP probes for both VIPs, through 10.255.0.1 and 2001:db8:ff::1" \
	lab_poll answers_both
lab_ctl status | sed -n '/^vip probes/p;/^  mux /,+1p' | sed 's/^/# /'
# IPv6 probes alone lost: locally sent IPv6 to the mux's tunnel address
# blackholed in the router (forwarded traffic keeps its route via the mux)
ip -n "$LAB_NS_ROUTER" -6 route add blackhole "$LAB_MUX_TA6/128"
# fenced, and (its snapshot taken, in sync at once) fenced again while they fail
fenced6() { grep -q "fenced mux: VIP probe: no answer for $LAB_VIP6 through $LAB_MUX_TA6 (" \
	"$LAB_DIR/manager.log"; }
check "IPv6 VIP probes unanswered: the mux is fenced, the reason naming the IPv6 VIP and address" \
	lab_poll fenced6
check "... while the IPv4 VIP's probes were answered all along" \
	test "$(count_lines "no answer for $LAB_VIP " "$LAB_DIR/manager.log")" -eq 0
ip -n "$LAB_NS_ROUTER" -6 route del blackhole "$LAB_MUX_TA6/128"
check "answered again: back in sync at the committed version" lab_poll answers_both

t_end
check "both agents decapsulated tunnel packets" \
	test "$(t_json agent1 decap)" -gt 0 -a "$(t_json agent2 decap)" -gt 0
t_check_clean
t_finish
