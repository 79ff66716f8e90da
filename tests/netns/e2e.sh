#!/usr/bin/env bash
# End to end: 400 HTTP requests from the client through the VIP, equal
# weights. Every request succeeds, the spread fits the weights, the mux sees
# every client packet and none of the replies, the agents decapsulate and
# rewrite the replies (DSR); every component stops cleanly and nothing is
# left behind. Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
lab_up_all 1 1 1 1
echo "# lab up in $((SECONDS - T_START)) s"

check "HTTP through the VIP: spread and direct server return" \
	t_py "$LAB_SRC/tests/netns/check_traffic.py" --client-ns "$LAB_NS_CLIENT" \
	--mux "${LAB_PREFIX[mux]}" --agents "${LAB_PREFIX[1]},${LAB_PREFIX[2]}" \
	--url "http://$LAB_VIP/" -n 400 \
	--backends vm11=10.1.1.11,vm12=10.1.1.12,vm21=10.2.1.21,vm22=10.2.1.22 \
	--weights 1,1,1,1

lab_stop
t_check_stopped mux agent1 agent2
check "agents' JSON: DSR rewrites on both hosts" \
	test "$(t_json agent1 dsr)" -gt 0 -a "$(t_json agent2 dsr)" -gt 0
t_check_clean
t_finish
