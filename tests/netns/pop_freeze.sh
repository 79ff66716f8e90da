#!/usr/bin/env bash
# A frozen mux is withdrawn within the hold time, and announced again when it thaws.
#
# The PoP of two muxes (scripts/netns-pop.sh). SIGSTOP freezes mux 1 whole
# (workers, route thread), but not its speaker, a process of its own: the
# heartbeat stops moving, and the speaker withdraws everything once it is
# hold_time - 0.5 s old, so the router has dropped mux 1's next hop within
# hold_time (3 s; the time is printed). The BGP session itself stays up:
# BIRD is alive. Meanwhile 8 long downloads go on (the ones on mux 1 stall
# until the withdrawal, then move to mux 2 and its same Maglev table) and
# 100 new connections after the withdrawal all succeed, through mux 2.
# SIGCONT: the heartbeat moves again and the route comes back (time
# printed); the downloads all complete intact. Then two freezes the
# heartbeat cannot see: the whole process group stopped (BIRD too: the
# router's hold timer withdraws), and the speaker alone stopped (the mux
# kills it, and BIRD dies with it).
. "$(dirname "$0")/pop_lib.sh"
pop_t_init
pop_up_all 2
echo "# PoP up in $((SECONDS - T_START)) s; router: $LAB_VIP via $(pop_nexthops)"

N=8
size=$((4 * 1024 * 1024))
want=$(pop_big_file big.bin "$size")
pop_downloads_start "$N" 384K
under_way() { pop_downloads_past 131072; }
check "all $N downloads are under way" lab_poll under_way

pid1=$(lab_pid mux1)
# the route figures below judge it; a non-zero exit is only reported
if ! out=$(pop_tool failover --vip "$LAB_VIP" --pid "$pid1" --signal STOP --want 10.255.0.2 \
	--victim-if rt-mux --survivor-if rt-mux2 --survivor-ta 10.255.0.2 --timeout 8); then
	echo "# pop_tool failover exited non-zero: $out"
fi
echo "# SIGSTOP of mux 1: $out"
stop_ms=$(pop_field "$out" route_ms)
echo "# the router dropped the frozen mux 1 $stop_ms ms after SIGSTOP (hold time 3000 ms);" \
	"a flow from mux 1 went on through mux 2 after $(pop_field "$out" moved_ms) ms"
check "mux 1 is frozen (process state T)" \
	bash -c "[ \"\$(awk '{print \$3}' /proc/$pid1/stat)\" = T ]"
check "withdrawn within the hold time: $stop_ms ms < 3000 ms" \
	t_py -c "import sys; sys.exit(not (0 <= float('$stop_ms') < 3000))"
# The heartbeat was last bumped up to one 100 ms pass before the signal.
check "by the heartbeat's bound (2500 ms, less a pass before the signal): $stop_ms ms >= 2300" \
	t_py -c "import sys; sys.exit(not (float('$stop_ms') >= 2300))"
session_up() {
	pop_vtysh "show bgp neighbors ${POP_MG[1]} json" |
		jq -e ".\"${POP_MG[1]}\".bgpState == \"Established\"" >/dev/null
}
check "mux 1's BGP session stayed up: its BIRD withdrew, it did not die" session_up
c2=$(pop_tel_field 2 /sluice/stats .conn_new)
burst() {
	t_py "$LAB_SRC/scripts/lab_tool.py" burst --ns "$LAB_NS_CLIENT" \
		--url "http://$LAB_VIP/" -n "$1" --check
}
check "100 new connections while mux 1 is frozen all succeed" burst 100
c2b=$(pop_tel_field 2 /sluice/stats .conn_new)
check "mux 2 carried them ($((c2b - c2)) new connections)" test $((c2b - c2)) -ge 100

# the route figures below judge it; a non-zero exit is only reported
if ! out=$(pop_tool failover --vip "$LAB_VIP" --pid "$pid1" --signal CONT \
	--want "10.255.0.1 10.255.0.2" --timeout 8); then
	echo "# pop_tool failover exited non-zero: $out"
fi
echo "# SIGCONT of mux 1: $out"
cont_ms=$(pop_field "$out" route_ms)
echo "# mux 1 announced again $cont_ms ms after SIGCONT"
check "announced again after SIGCONT ($cont_ms ms)" \
	t_py -c "import sys; sys.exit(not (0 <= float('$cont_ms') < 3000))"
stale=$(pop_tel_field 1 /sluice/route .stale_withdrawals)
check "mux 1's speaker counted one frozen-heartbeat withdrawal ($stale)" test "$stale" -eq 1
status_announced() {
	pop_tel 1 /sluice/route | jq -e '.status | startswith("announced: 1 VIP")' >/dev/null
}
check "mux 1's status: announced again" status_announced

pop_downloads_check "$size" "$want"

# Known state for the next cases: both next hops, mux 1 running.
check "both next hops again" pop_wait_nexthops "$(pop_all_tas)"

# The whole process group stopped (a Ctrl-Z): BIRD stops too (it stays in
# the mux's group on purpose), its keepalives stop, the router's hold timer
# (3 s) withdraws mux 1. SIGCONT of the group: BIRD reconnects, announced.
# the route figures below judge it; a non-zero exit is only reported
if ! out=$(pop_tool failover --vip "$LAB_VIP" --pid "-$pid1" --signal STOP --want 10.255.0.2 \
	--timeout 8); then
	echo "# pop_tool failover exited non-zero: $out"
fi
gstop_ms=$(pop_field "$out" route_ms)
check "group stop: the router's hold timer withdrew mux 1 ($gstop_ms ms < 4000)" \
	t_py -c "import sys; sys.exit(not (0 <= float('$gstop_ms') < 4000))"
# the route figures below judge it; a non-zero exit is only reported
if ! out=$(pop_tool failover --vip "$LAB_VIP" --pid "-$pid1" --signal CONT \
	--want "$(pop_all_tas)" --timeout 15); then
	echo "# pop_tool failover exited non-zero: $out"
fi
gcont_ms=$(pop_field "$out" route_ms)
echo "# process group stopped: withdrawn by the router's hold timer after $gstop_ms ms;" \
	"continued: announced again after $gcont_ms ms (a new session)"
check "group continued: announced again ($gcont_ms ms)" \
	t_py -c "import sys; sys.exit(not (0 <= float('$gcont_ms') < 15000))"
stale=$(pop_tel_field 1 /sluice/route .stale_withdrawals)
check "group continued: the speaker, stopped too, did not take the old heartbeat for a freeze ($stale)" \
	test "$stale" -eq 1

# The speaker alone stopped: it cannot withdraw, and its BIRD would go on
# announcing; the mux's route thread kills it, BIRD dies with it.
spk=$(pop_tel_field 1 /sluice/route .speaker_pid)
# the route figures below judge it; a non-zero exit is only reported
if ! out=$(pop_tool failover --vip "$LAB_VIP" --pid "$spk" --signal STOP --want 10.255.0.2 \
	--timeout 8); then
	echo "# pop_tool failover exited non-zero: $out"
fi
sstop_ms=$(pop_field "$out" route_ms)
echo "# speaker stopped: the mux killed it, the router dropped mux 1 after $sstop_ms ms"
check "speaker stopped: mux 1 withdrawn within the hold time ($sstop_ms ms < 3000)" \
	t_py -c "import sys; sys.exit(not (0 <= float('$sstop_ms') < 3000))"
speaker_gone() {
	pop_tel 1 /sluice/route | jq -e '.status | test("^not announced: the speaker .* killed by signal 9")' >/dev/null
}
check "speaker stopped: /sluice/route says the speaker was killed" lab_poll speaker_gone
check "speaker stopped: its BIRD died with it" \
	bash -c "! ip netns pids '${POP_NS[1]}' | xargs -r ps -o comm= -p | grep -q bird"
check "speaker stopped: mux 1 itself still runs" lab_alive mux1

pop_stop_muxes
t_check_stopped mux1 mux2
t_check_clean
t_finish
