#!/usr/bin/env bash
# Unequal weights 1:2:3:0 over the four backends: 600 requests spread in
# proportion (chi-square, p >= 1e-6) and the weight-0 backend gets no new
# connection; the mux's per-backend counts match the client's view, and
# the mux still sees none of the replies. Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
lab_up_all 1 2 3 0
echo "# lab up in $((SECONDS - T_START)) s"

check "HTTP through the VIP with weights 1,2,3,0" \
	t_py "$LAB_SRC/tests/netns/check_traffic.py" --client-ns "$LAB_NS_CLIENT" \
	--mux "${LAB_PREFIX[mux]}" --agents "${LAB_PREFIX[1]},${LAB_PREFIX[2]}" \
	--url "http://$LAB_VIP/" -n 600 \
	--backends vm11=10.1.1.11,vm12=10.1.1.12,vm21=10.2.1.21,vm22=10.2.1.22 \
	--weights 1,2,3,0

lab_stop
t_check_stopped mux agent1 agent2
t_check_clean
t_finish
