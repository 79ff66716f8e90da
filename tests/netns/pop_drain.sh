#!/usr/bin/env bash
# SIGTERM drains: withdraw first, keep forwarding for drain_time, exit 0.
#
# The PoP of two muxes (scripts/netns-pop.sh), drain_time 8 s. One
# download is pinned to mux 1 by a policy route in the router (its client
# port -> via 10.255.0.1): a router elsewhere in the PoP that has not
# converged yet still sends that flow to mux 1 after the withdrawal. Mux 1
# gets SIGTERM in the middle of the download: its route is gone from the
# router first (time printed), then mux 1 goes on forwarding the pinned
# flow (its counters move after the withdrawal), the download completes
# intact before mux 1 exits, new connections go through mux 2 only, and
# mux 1 exits 0 about drain_time after the withdrawal, with its summary.
. "$(dirname "$0")/pop_lib.sh"
pop_t_init
# 3 MiB at 512 KiB/s: some 4 s of it left after the withdrawal, inside the
# 8 s drain, with room for a loaded machine between the test's steps (a
# download that had ended before the first counter read made it fail)
DRAIN=8
# mux 1's NOTIFY_SOCKET, as its unit would have it (pop_mux_start): its stop
# must tell systemd how long it takes, or TimeoutStopSec (20 s) would kill
# a longer drain half-way
t_bg "$LAB_DIR/notify.rc" t_py "$LAB_SRC/scripts/lab_tool.py" notify "$LAB_DIR/mux1.notify" \
	"$LAB_DIR/mux1.notify.log" --until EXTEND_TIMEOUT_USEC= --timeout 900
lab_poll test -S "$LAB_DIR/mux1.notify"
POP_DRAIN=$DRAIN pop_up_all 2
echo "# PoP up in $((SECONDS - T_START)) s; router: $LAB_VIP via $(pop_nexthops)"

r=$LAB_NS_ROUTER
port=41234
ip -n "$r" route add "$LAB_VIP/32" via "${POP_TA[1]}" dev br-mux table 100
ip -n "$r" rule add iif rt-cl ipproto tcp sport "$port" lookup 100 priority 100

size=$((3 * 1024 * 1024))
want=$(pop_big_file big.bin "$size")
t_bg "$LAB_DIR/dl.rc" ip netns exec "$LAB_NS_CLIENT" curl -s --max-time 60 --limit-rate 512K \
	--local-port "$port" -o "$LAB_DIR/got.bin" \
	-w '%{http_code} %{size_download} %{num_connects}\n' \
	"http://$LAB_VIP/big.bin" >"$LAB_DIR/dl.out" 2>&1
got_some() { [ "$(stat -c %s "$LAB_DIR/got.bin" 2>/dev/null || echo 0)" -gt 524288 ] || return 1; }
check "the pinned download is under way (512 KiB in)" lab_poll got_some
check "it goes through mux 1" test "$(pop_tel_field 1 /sluice/stats .conn_new)" -ge 1

pid1=$(lab_pid mux1)
# the route figures below judge it; a non-zero exit is only reported
if ! out=$(pop_tool failover --vip "$LAB_VIP" --pid "$pid1" --signal TERM --want 10.255.0.2 --timeout 5); then
	echo "# pop_tool failover exited non-zero: $out"
fi
withdrawn_at=$(date +%s%N)
echo "# SIGTERM of mux 1: $out"
term_ms=$(pop_field "$out" route_ms)
echo "# the router dropped mux 1 $term_ms ms after SIGTERM"
check "withdrawn first: the route lost mux 1 within 1 s ($term_ms ms)" \
	t_py -c "import sys; sys.exit(not (0 <= float('$term_ms') < 1000))"
check "mux 1 still runs after the withdrawal (draining)" lab_alive mux1
fwd0=$(pop_tel_field 1 /sluice/stats .fwd_pkts)
fwd_moved() { [ "$(pop_tel_field 1 /sluice/stats .fwd_pkts)" -gt "$fwd0" ]; }
check "mux 1 keeps forwarding the pinned flow after the withdrawal" lab_poll fwd_moved
check "its status says why: withdrawn, shutting down" \
	test "$(pop_tel_field 1 /sluice/route .reason)" = SHUTDOWN
c1=$(pop_tel_field 1 /sluice/stats .conn_new)
c2=$(pop_tel_field 2 /sluice/stats .conn_new)
burst() {
	t_py "$LAB_SRC/scripts/lab_tool.py" burst --ns "$LAB_NS_CLIENT" \
		--url "http://$LAB_VIP/" -n "$1" --check
}
check "50 new connections during the drain all succeed" burst 50
check "none of them reached mux 1 (new connections $c1 -> $(pop_tel_field 1 /sluice/stats .conn_new))" \
	test "$(pop_tel_field 1 /sluice/stats .conn_new)" -eq "$c1"
check "mux 2 took them" test "$(pop_tel_field 2 /sluice/stats .conn_new)" -ge $((c2 + 50))

rc=$(t_rc "$LAB_DIR/dl.rc")
done_at=$(date +%s%N)
check "the download completed before mux 1 exited" lab_alive mux1
check "on its one connection (curl exit $rc: $(cat "$LAB_DIR/dl.out"))" \
	bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$LAB_DIR/dl.out')\" = '200 $size 1' ]"
check "every byte intact (sha256)" test "$(sha256sum <"$LAB_DIR/got.bin")" = "$want"
mux1_gone() { ! kill -0 "$pid1" 2>/dev/null || [ "$(awk '{print $3}' /proc/"$pid1"/stat)" = Z ]; }
LAB_WAIT=15 lab_poll mux1_gone
exit_at=$(date +%s%N)
drain_ms=$(((exit_at - withdrawn_at) / 1000000))
echo "# download done $(((done_at - withdrawn_at) / 1000000)) ms after the withdrawal;" \
	"mux 1 exited $drain_ms ms after it (drain_time $((DRAIN * 1000)) ms)"
check "mux 1 drained for about drain_time ($((DRAIN * 1000 - 500))..$((DRAIN * 1000 + 1500)) ms: $drain_ms)" \
	test "$drain_ms" -ge $((DRAIN * 1000 - 500)) -a "$drain_ms" -le $((DRAIN * 1000 + 1500))
lab_kill mux1
check "mux 1 exited 0" t_status_zero mux1
notify_rc=$(t_rc "$LAB_DIR/notify.rc")
ext=$(sed -n 's/^EXTEND_TIMEOUT_USEC=//p' "$LAB_DIR/mux1.notify.log" | head -1)
check "at SIGTERM it told systemd its stop runs past drain_time (EXTEND_TIMEOUT_USEC=$ext)" \
	test "$notify_rc" = 0 -a "${ext:-0}" -gt $((DRAIN * 1000000))
check "its log: withdrawn, then drained" \
	bash -c "grep -n 'bgp: withdrawn in\|bgp: drained' '$LAB_DIR/mux1.log' | cut -d: -f2- | tr '\n' '|' |
		grep -q 'withdrawn in.*|.*drained'"
ann=$(t_json mux1 route.announces)
wd=$(t_json mux1 route.withdraws)
check "its JSON counts the announcement and the withdrawal ($ann, $wd)" test "$ann" -eq 1 -a "$wd" -eq 1

ip -n "$r" rule del priority 100
pop_stop_muxes
t_check_stopped mux2
t_check_clean
t_finish
