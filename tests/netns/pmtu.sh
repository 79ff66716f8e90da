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
# dual-stack lab: 1500-byte IPv6 replies (the agents' IPv6 MSS clamping
# off, mss_clamp6 = 0), the router's ICMPv6 packet too big to the IPv6 VIP
# (IPv6 routers never fragment), forwarded inside 6in6, the quote
# translated with checksums over the pseudo-header. Then the other way:
# the client's 1500-byte upload segments do not fit the 6in6 tunnel
# (mux.mtu 1500 - 40), so the mux answers ICMPv6 packet too big with MTU
# 1460 from the VIP; the client's TCP shrinks its segments and 8 uploads of
# 256 KiB reach the VMs' sinks whole.
PMTU_FAMILY=${PMTU_FAMILY:-4}
[ "$PMTU_FAMILY" = 6 ] && LAB_IPV6=1
. "$(dirname "$0")/lib.sh"
t_init
lab_topology_up
lab_configs 1 1 1 1
if [ "$PMTU_FAMILY" = 6 ]; then
	sed -i 's/^\(\tmss_clamp = [0-9]*;\).*/\1\n\tmss_clamp6 = 0;/' "$LAB_DIR"/agent[12].cfg
	check "the agents clamp no IPv6 MSS" grep -q "mss_clamp6 = 0;" "$LAB_DIR/agent1.cfg"
fi
lab_start_all 1 1 1 1

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

if [ "$PMTU_FAMILY" = 6 ]; then
	ip -n "$LAB_NS_ROUTER" link set dev rt-cl mtu 1500
	t_sinks
	ptb() { ip netns exec "$LAB_NS_CLIENT" awk '$1 == "Icmp6InPktTooBigs" { print $2 }' \
		/proc/net/snmp6; }
	got0=$(ptb) ptb0=$(t_tel "${LAB_PREFIX[mux]}" /sluice/stats ptb_sent)
	ip netns exec "$LAB_NS_CLIENT" "$LAB_PY" "$LAB_SRC/tests/netns/uploads.py" upload \
		"$LAB_VIP6" 8 262144 >"$LAB_DIR/upload.out" 2>&1 && rc=0 || rc=$?
	tail -n 3 "$LAB_DIR/upload.out"
	check "8 uploads of 256 KiB through the IPv6 VIP arrived whole at a sink" \
		test "$rc" -eq 0 -a "$(tail -n 1 "$LAB_DIR/upload.out")" = 8
	got=$(($(ptb) - got0)) ptb=$(($(t_tel "${LAB_PREFIX[mux]}" /sluice/stats ptb_sent) - ptb0))
	echo "# the mux sent $ptb packet too big, the client took $got"
	check "the mux sent the client ICMPv6 packet too big for the 6in6 tunnel" test "$ptb" -gt 0
	check "the client received each of them" test "$got" -eq "$ptb"
fi

t_end
t_check_clean
t_finish
