#!/usr/bin/env bash
# Unequal weights 1:2:3:0 over the four backends: 600 requests spread in
# proportion (chi-square, p >= 1e-6) and the weight-0 backend gets no new
# connection; the mux's per-backend counts match the client's view, and
# the mux still sees none of the replies. Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 2 3 0

check "HTTP through the VIP with weights 1,2,3,0" t_check_traffic 600 1,2,3,0

t_end
t_check_clean
t_finish
