#!/usr/bin/env bash
# A SYN flood that starves no one else (docs/protection.md): hping3 sends
# SYNs from random (spoofed) sources at 192.0.2.10:80, ten times its rule
# (new_per_second 100, intercept, refuse drop), while
#   - a second service, 192.0.2.10:8081 (no rules; its own http.server on
#     8081 in every VM), serves wrk's real clients: its requests per second
#     with the flood must be at least 95% of those without, measured in the
#     same run, alternating, and printed;
#   - a download already running on the flooded service (16 MiB at 2 MiB/s)
#     completes, byte for byte (sha256): a rule never cuts an established
#     connection.
# The mux's counters then show the flood checked and denied at the rule.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
command -v hping3 >/dev/null || { echo "# no hping3 (scripts/install-deps.sh)"; exit 77; }
command -v wrk >/dev/null || { echo "# no wrk (scripts/install-deps.sh)"; exit 77; }

other=8081
limit=50
# hping3 sleeps between packets; asked for 14x it sends about 10x here
flood_pps=$((14 * limit))
# Alternating one-second slices, the order swapped every round, so that
# what else loads the machine weighs on both sides alike.
slice=1
rounds=8

lab_topology_up
lab_configs 1 1 1 1
lab_flow_table "$LAB_VIP_PORT:$LAB_BE_PORT $other:$other" "vm11=1 vm12=1 vm21=1 vm22=1"
# the flooded service's rule, in the file every component reads
sed -i "s|port = $LAB_VIP_PORT;\$|port = $LAB_VIP_PORT; limits = { new_per_second = { limit = $limit; mode = \"intercept\"; }; };|" \
	"$LAB_DIR/flow_table.cfg"
check "the rule is in the flow table" grep -q "limit = $limit;" "$LAB_DIR/flow_table.cfg"
lab_flow_table_apply
lab_servers_start
t_vm_servers http2 "$other" "$LAB_PY" -m http.server "$other" --directory "$LAB_DIR/www/@VM@"
lab_mux_start
lab_agent_start 1
lab_agent_start 2
lab_wait_vip
echo "# lab up in $((SECONDS - T_START)) s"

size=$((16 * 1024 * 1024))
t_big_file "$size" big.bin
t_download big.bin 2M 40
check "the download on the flooded service is under way" lab_poll t_under_way big.bin

# wrk's requests per second on the other service, for $slice s
rps() {
	ip netns exec "$LAB_NS_CLIENT" wrk -t1 -c4 -d"${slice}s" "http://$LAB_VIP:$other/" 2>&1 |
		awk '/^Requests\/sec:/ { printf "%d\n", $2 }'
}
flood_on() {
	ip netns exec "$LAB_NS_CLIENT" hping3 -q -S --rand-source -p "$LAB_VIP_PORT" \
		-i "u$((1000000 / flood_pps))" "$LAB_VIP" >"$LAB_DIR/hping3.log" 2>&1 &
	flood=$!
}
flood_off() { kill -INT "$flood" 2>/dev/null; wait "$flood" 2>/dev/null || true; }
mux_stat() { t_tel "${LAB_PREFIX[mux]}" /sluice/stats "$1"; }

base=0 with=0
checked0=$(mux_stat limit_checked)
flooded() { # requests/s of one slice under the flood, and the flood's seconds
	flood_on
	t0=$SECONDS
	w=$(rps)
	flood_off
	flood_s=$((${flood_s:-0} + SECONDS - t0))
}
for ((round = 1; round <= rounds; round++)); do
	if ((round % 2)); then
		b=$(rps)
		flooded
	else
		flooded
		b=$(rps)
	fi
	echo "# round $round: $b requests/s without the flood, $w with it"
	base=$((base + b))
	with=$((with + w))
done
checked=$(($(mux_stat limit_checked) - checked0))
denied=$(mux_stat limit_denied)
echo "# flooded service: $checked SYNs checked in about $flood_s s ($((checked / flood_s))/s against a limit of $limit/s), $denied denied"
echo "# other service: $((base / rounds)) requests/s without the flood, $((with / rounds)) with it ($((100 * with / (base > 0 ? base : 1)))%)"
check "the other service served requests" test "$base" -gt 0
check "the other service keeps at least 95% of its requests per second under the flood" \
	test $((100 * with)) -ge $((95 * base))
check "the flood came at about ten times the limit (at least 8x seen)" \
	test "$checked" -ge $((8 * limit * flood_s))
check "the rule denied the flood beyond its limit" \
	test "$denied" -ge $((checked - 2 * limit * (flood_s + 2)))

dl_done() { t_download_ended big.bin; }
LAB_WAIT=40 wait_or_note dl_done
dl_rc=$(t_download_rc big.bin)
check "the download completes (curl exit 0, HTTP 200, one connection)" \
	bash -c "[ $dl_rc -eq 0 ] && [[ \"\$(cat '$LAB_DIR/big.bin.out')\" == '200 $size 1 '* ]]"
check "every byte arrived intact (sha256)" t_intact big.bin

t_end
final=$(t_json mux limit_denied)
check "the mux's summary counts the denied SYNs ($final)" test "$final" -ge "$denied"
t_check_clean
t_finish
