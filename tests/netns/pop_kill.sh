#!/usr/bin/env bash
# kill -9 of a mux under 20 long downloads: none breaks.
#
# Two standalone muxes with the same flow table and seed behind an FRR
# router (scripts/netns-pop.sh draws it), each announcing the VIP over BGP
# through its BIRD. The router holds a two-way ECMP route; 20 rate-limited
# downloads of a 4 MiB file spread over both muxes (each mux's counters
# show some). Then mux 1 is killed with SIGKILL: its speaker and BIRD die
# with it, the kernel closes the BGP session, and the router drops mux 1's
# next hop within 1 s (the time is printed, with the time until the first
# packet of a flow that was on mux 1 left mux 2). The flows ECMP moves to
# mux 2 meet the same Maglev table: every download completes intact
# (sha256), on its one connection, none reset.
. "$(dirname "$0")/pop_lib.sh"
pop_t_init
pop_up_all 2
echo "# PoP up in $((SECONDS - T_START)) s; router: $LAB_VIP via $(pop_nexthops)"
check "the router holds a two-way ECMP route for the VIP" pop_nexthops_are "10.255.0.1 10.255.0.2"
bgp_paths=$(pop_vtysh "show ip route $LAB_VIP/32 json" |
	jq "[.\"$LAB_VIP/32\"[] | select(.protocol == \"bgp\") | .nexthops[] | select(.fib)] | length")
check "FRR installed both BGP paths ($bgp_paths)" test "$bgp_paths" -eq 2

N=20
size=$((4 * 1024 * 1024))
pop_downloads_spread "$N" "$size" 512K 262144
c2=$POP_C2

# the route figures below judge it; a non-zero exit is only reported
if ! out=$(pop_tool failover --vip "$LAB_VIP" --pid "$(lab_pid mux1)" --signal KILL --want 10.255.0.2 \
	--victim-if rt-mux --survivor-if rt-mux2 --survivor-ta 10.255.0.2 --timeout 5); then
	echo "# pop_tool failover exited non-zero: $out"
fi
echo "# kill -9 of mux 1: $out"
route_ms=$(pop_field "$out" route_ms)
moved_ms=$(pop_field "$out" moved_ms)
echo "# the router dropped mux 1's next hop $route_ms ms after kill -9; the first packet of a" \
	"flow from mux 1 left mux 2 $moved_ms ms after it"
check "the router dropped mux 1's next hop within 1 s ($route_ms ms)" \
	t_py -c "import sys; sys.exit(not (0 <= float('$route_ms') < 1000))"
check "a flow that was on mux 1 went on through mux 2 ($moved_ms ms)" \
	t_py -c "import sys; sys.exit(not (0 <= float('$moved_ms') < 5000))"
running=$(pop_downloads_running)
check "the kill came mid-way: $running of $N downloads were still running" test "$running" -ge $((N * 3 / 4))

pop_downloads_check_clean "$size"
c2b=$(pop_tel_field 2 /sluice/stats .conn_new)
echo "# mux 2 took over $((c2b - c2)) connections"
check "mux 2 picked up the flows mux 1 had (new connections $c2 -> $c2b)" test "$c2b" -gt "$c2"

lab_kill mux1
check "mux 1 died of SIGKILL (status $(cat "$LAB_DIR/mux1.status"))" \
	test "$(cat "$LAB_DIR/mux1.status")" -eq 137
check "its speaker and BIRD died with it" \
	bash -c "! ip netns pids '${POP_NS[1]}' | grep -q ."
pop_stop_muxes
t_check_stopped mux2
t_check_clean
t_finish
