#!/usr/bin/env bash
# Path MTU discovery through the load balancer (the packet walk's ICMP
# step): the router's link to the client gets MTU 1400, smaller than the
# backends' 1480-byte replies. The router's "fragmentation needed" goes to
# the VIP (the replies' source), so it reaches the mux, which forwards it by
# the quoted flow's hash to the same backend's host; the agent translates
# the quote (VIP:80 -> DIP:8080) so the VM's TCP finds its connection and
# shrinks its segments. Without any of that the download would stall
# forever (a PMTU black hole). Topology: scripts/netns-lab.sh.
#
# With PMTU_FAMILY=6 (tests/netns/pmtu6.sh) the same over IPv6 on the
# dual-stack lab: 1460-byte IPv6 replies (MSS 1400, the agents' default
# mss_clamp6 with an IPv6 PA), the router's ICMPv6 packet too big to the
# IPv6 VIP (IPv6 routers never fragment), forwarded inside 6in6, the quote
# translated with checksums over the pseudo-header.
PMTU_FAMILY=${PMTU_FAMILY:-4}
[ "$PMTU_FAMILY" = 6 ] && LAB_IPV6=1
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 1 1 1

t_big_file $((4 * 1024 * 1024)) big.bin
ip -n "$LAB_NS_ROUTER" link set dev rt-cl mtu 1400

url=http://$LAB_VIP/big.bin what="fragmentation-needed errors" snmp=/proc/net/snmp
if [ "$PMTU_FAMILY" = 6 ]; then
	url="http://[$LAB_VIP6]/big.bin" what="ICMPv6 packet too big errors" snmp=/proc/net/snmp6
fi
dl() {
	ip netns exec "$LAB_NS_CLIENT" curl -sf --max-time 15 -o "$LAB_DIR/big.bin.got" \
		-w '%{http_code} %{size_download}' "$url" >"$LAB_DIR/big.bin.out"
}
# ICMP errors: the router's, the mux's forwarded, the agents' translated
icmp_counts() {
	ip netns exec "$LAB_NS_ROUTER" awk '
		$1 == "Icmp6OutPktTooBigs" { print $2 }
		/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "OutDestUnreachs") c = i; h = 1 }
			else print $c }' "$snmp"
	t_tel "${LAB_PREFIX[mux]}" /sluice/stats icmp_err_fwd
	echo $(($(t_tel "${LAB_PREFIX[1]}" /sluice/agent/stats icmp_translated) +
		$(t_tel "${LAB_PREFIX[2]}" /sluice/agent/stats icmp_translated)))
}
read -r sent0 fwd0 tr0 <<<"$(icmp_counts | tr '\n' ' ')"
check "a 4 MiB download over the 1400-byte link completes ($url)" dl
echo "# curl: $(cat "$LAB_DIR/big.bin.out")"
check "every byte arrived intact" t_intact big.bin
read -r sent fwd tr <<<"$(icmp_counts | tr '\n' ' ')"
sent=$((sent - sent0)) fwd=$((fwd - fwd0)) tr=$((tr - tr0))
echo "# router sent $sent $what, the mux forwarded $fwd, the agents translated $tr"
check "the router sent $what to the VIP" test "$sent" -gt 0
check "the mux forwarded each of them to a host" test "$fwd" -eq "$sent"
check "the agents translated each quote for the VM" test "$tr" -eq "$sent"

t_end
t_check_clean
t_finish
