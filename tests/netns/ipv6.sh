#!/usr/bin/env bash
# IPv6 end to end on the dual-stack lab (LAB_IPV6=1, scripts/netns-lab.sh
# draws it), standalone: the mux and both agents read the flow table from
# their files. Real TCP from the client to the IPv6 VIP [2001:db8::10]:80,
# whose backends sit behind their hosts' IPv6 PAs (IPv6-in-IPv6 on the
# wire): 200 requests all answered and spread by weight (1:2:1:0), the mux's
# new connections for the service equal to them; a 16 MiB download intact
# (sha256) while the mux receives less than 1 MiB (direct server return:
# the agents send the replies, the mux never sees them); the IPv4 VIP keeps
# working beside it. Everything stops cleanly and nothing is left behind.
LAB_IPV6=1
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 2 1 0
MUX=${LAB_PREFIX[mux]}
URL6="http://[$LAB_VIP6]:$LAB_VIP_PORT"

check "the IPv4 VIP answers beside the IPv6 one" lab_http_ok
# the service's index among the mux's: IPv4 services sort first
svc6_conns() {
	t_py - "$MUX" <<'PY'
import sys
from sluicetest.procs import telemetry
print(sum(v[2] for v in telemetry(sys.argv[1], "/sluice/backends,1").values()))
PY
}
c0=$(svc6_conns)
f0=$(t_tel "$MUX" /sluice/stats fwd6_pkts)
check "200 requests through the IPv6 VIP: all answered, spread 1:2:1:0" \
	t_py "$LAB_SRC/scripts/lab_tool.py" burst --ns "$LAB_NS_CLIENT" --url "$URL6/" \
	-n 200 --weights 1,2,1,0 --check
check "the mux made one connection per request on the IPv6 service" \
	test "$(($(svc6_conns) - c0))" -eq 200
check "... and forwarded them as IPv6" test "$(($(t_tel "$MUX" /sluice/stats fwd6_pkts) - f0))" -gt 1000

t_big_file 16777216 big.bin
rx0=$(t_tel "$MUX" /sluice/stats rx_bytes)
dsr0=$(($(t_tel "${LAB_PREFIX[1]}" /sluice/agent/stats dsr) + $(t_tel "${LAB_PREFIX[2]}" /sluice/agent/stats dsr)))
check "a 16 MiB download through the IPv6 VIP completes (HTTP 200)" \
	ip netns exec "$LAB_NS_CLIENT" curl -6 -sf --max-time 30 -o "$LAB_DIR/big.got" "$URL6/big.bin"
check "a 16 MiB download through the IPv6 VIP arrives intact (sha256)" t_intact big
rx=$(($(t_tel "$MUX" /sluice/stats rx_bytes) - rx0))
dsr=$(($(t_tel "${LAB_PREFIX[1]}" /sluice/agent/stats dsr) + $(t_tel "${LAB_PREFIX[2]}" /sluice/agent/stats dsr) - dsr0))
echo "# the mux received $rx bytes during it; the agents sent $dsr replies as from the VIP"
check "DSR: the mux received under 1 MiB of the 16 MiB transfer" test "$rx" -lt 1048576
check "DSR: the agents sent the replies as from the VIP (over 11000 packets)" test "$dsr" -gt 11000

t_end
check "both agents decapsulated tunnel packets (6in6 to their IPv6 PAs)" \
	test "$(t_json agent1 decap)" -gt 0 -a "$(t_json agent2 decap)" -gt 0
t_check_clean
t_finish
