#!/usr/bin/env bash
# Path MTU discovery through the load balancer (the packet walk's ICMP
# step): the router's link to the client gets MTU 1400, smaller than the
# backends' 1480-byte replies. The router's "fragmentation needed" goes to
# the VIP (the replies' source), so it reaches the mux, which forwards it by
# the quoted flow's hash to the same backend's host; the agent translates
# the quote (VIP:80 -> DIP:8080) so the VM's TCP finds its connection and
# shrinks its segments. Without any of that the download would stall
# forever (a PMTU black hole). Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 1 1 1

t_big_file $((4 * 1024 * 1024)) big.bin
ip -n "$LAB_NS_ROUTER" link set dev rt-cl mtu 1400

dl() {
	ip netns exec "$LAB_NS_CLIENT" curl -s --max-time 15 -o "$LAB_DIR/big.bin.got" \
		-w '%{http_code} %{size_download}' "http://$LAB_VIP/big.bin" >"$LAB_DIR/big.bin.out"
}
# ICMP errors: the router's, the mux's forwarded, the agents' translated
icmp_counts() {
	ip netns exec "$LAB_NS_ROUTER" cat /proc/net/snmp | awk '/^Icmp:/ {
		if (!h) { for (i = 1; i <= NF; i++) if ($i == "OutDestUnreachs") c = i; h = 1 }
		else print $c }'
	t_tel "${LAB_PREFIX[mux]}" /sluice/stats icmp_err_fwd
	echo $(($(t_tel "${LAB_PREFIX[1]}" /sluice/agent/stats icmp_translated) +
		$(t_tel "${LAB_PREFIX[2]}" /sluice/agent/stats icmp_translated)))
}
read -r sent0 fwd0 tr0 <<<"$(icmp_counts | tr '\n' ' ')"
check "a 4 MiB download over the 1400-byte link completes" dl
echo "# curl: $(cat "$LAB_DIR/big.bin.out")"
check "every byte arrived intact" t_intact big.bin
read -r sent fwd tr <<<"$(icmp_counts | tr '\n' ' ')"
sent=$((sent - sent0)) fwd=$((fwd - fwd0)) tr=$((tr - tr0))
echo "# router sent $sent frag-needed, the mux forwarded $fwd, the agents translated $tr"
check "the router sent fragmentation-needed errors to the VIP" test "$sent" -gt 0
check "the mux forwarded each of them to a host" test "$fwd" -eq "$sent"
check "the agents translated each quote for the VM" test "$tr" -eq "$sent"

t_end
t_check_clean
t_finish
