#!/usr/bin/env bash
# Outer fragments reassembled by the host agents. The client does not set
# DF (net.ipv4.ip_no_pmtu_disc = 1 in its namespace), so the mux does not
# set it on the tunnel either (it copies DF), and the router's links to the
# hosts get MTU 1200: every full-sized tunnel packet (1500 bytes, the
# agents clamp the MSS to 1440) is split by the router's kernel. The agents
# must put the fragments back together and deliver them. Uploads, not
# downloads: the clients' segments are what crosses the tunnel.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
# The lab of lab_up_all, but the agents' uplinks on net_pcap over the same
# veths: DPDK 22.11's net_af_packet joins a PACKET_FANOUT group with the
# defrag flag, so there the kernel reassembles before the agent sees a frame.
lab_topology_up
lab_configs 1 1 1 1
for h in 1 2; do
	sed -i "s|net_af_packet0,iface=${LAB_IF_UP[$h]}\"|net_pcap0,rx_iface_in=${LAB_IF_UP[$h]},tx_iface=${LAB_IF_UP[$h]}\"|" \
		"$LAB_DIR/agent$h.cfg"
	check "agent $h's uplink is on net_pcap" grep -q "net_pcap0,rx_iface_in=" "$LAB_DIR/agent$h.cfg"
done
lab_start_all 1 1 1 1
echo "# lab up in $((SECONDS - T_START)) s"

# Each VM's HTTP server gives way to a sink on the same port: it reads one
# upload to its end and answers with its length and SHA-256 (uploads.py).
t_sinks

ip netns exec "$LAB_NS_CLIENT" sysctl -qw net.ipv4.ip_no_pmtu_disc=1
ip -n "$LAB_NS_ROUTER" link set dev rt-h1 mtu 1200
ip -n "$LAB_NS_ROUTER" link set dev rt-h2 mtu 1200

tel() { t_tel "$1" /sluice/agent/stats; }
# frags_in reassembled reassembly_failed reassembly_too_big, both agents summed
agent_frags() {
	t_py -c '
import json, sys
tot = [0, 0, 0, 0]
for path in sys.argv[1:]:
    d = json.load(open(path))  # drops that are not zero are keys of their own
    for i, k in enumerate(["frags_in", "reassembled", "reassembly_failed",
                           "reassembly_too_big"]):
        tot[i] += d.get(k, 0)
print(*tot)' "$@"
}
router_frags() {
	ip netns exec "$LAB_NS_ROUTER" awk '/^Ip:/ {
		if (!h) { for (i = 1; i <= NF; i++) if ($i == "FragCreates") c = i; h = 1 }
		else print $c }' /proc/net/snmp
}
tel "${LAB_PREFIX[1]}" >"$LAB_DIR/a1.before.json"
tel "${LAB_PREFIX[2]}" >"$LAB_DIR/a2.before.json"
read -r in0 re0 fail0 big0 <<<"$(agent_frags "$LAB_DIR"/a[12].before.json)"
made0=$(router_frags)

uploads=16 rc=0
# A stalled upload (fragments lost) times out after 20 s and ends the run.
ip netns exec "$LAB_NS_CLIENT" "$LAB_PY" "$LAB_SRC/tests/netns/uploads.py" upload "$LAB_VIP" \
	"$uploads" 262144 >"$LAB_DIR/upload.out" 2>&1 || rc=$?
tail -n 3 "$LAB_DIR/upload.out"
check "all $uploads uploads of 256 KiB arrived whole at a sink (length and SHA-256)" \
	test "$rc" -eq 0 -a "$(tail -n 1 "$LAB_DIR/upload.out")" = "$uploads"

tel "${LAB_PREFIX[1]}" >"$LAB_DIR/a1.after.json"
tel "${LAB_PREFIX[2]}" >"$LAB_DIR/a2.after.json"
read -r in1 re1 fail1 big1 <<<"$(agent_frags "$LAB_DIR"/a[12].after.json)"
made=$(($(router_frags) - made0))
fin=$((in1 - in0)) fre=$((re1 - re0)) ffail=$((fail1 - fail0)) fbig=$((big1 - big0))
echo "# the router made $made fragments; the agents took $fin and made $fre datagrams whole;" \
	"gave up on $ffail, too big $fbig"
check "the router fragmented the tunnel packets" test "$made" -gt 100
check "the agents took every fragment the router made" test "$fin" -eq "$made"
check "two fragments per datagram: $fre datagrams made whole" test "$((2 * fre))" -eq "$fin"
check "no reassembly failed or overflowed" test "$ffail" -eq 0 -a "$fbig" -eq 0

t_end
t_check_clean
t_finish
