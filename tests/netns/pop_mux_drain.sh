#!/usr/bin/env bash
# sluicectl mux drain / undrain in a managed PoP: new connections avoid
# the drained mux, established ones finish.
#
# Two muxes under sluice-manager behind the FRR router (scripts/netns-pop.sh,
# LAB_MANAGED=1), both announcing the VIP once the manager says they are in
# sync. 16 rate-limited downloads spread over both. `sluicectl mux drain
# mux1` commits a version whose table lists mux1 as drained: mux1 withdraws
# the VIP (the router keeps only mux 2's next hop), a burst of new
# connections reaches mux 2 only, and the downloads mux 1 carried move to
# mux 2 by ECMP and finish intact on their one connection (mux 2 makes the
# same Maglev choice: same seed, same version). `sluicectl mux undrain
# mux1` brings it back: both next hops, new connections on both muxes.
. "$(dirname "$0")/pop_lib.sh"
export LAB_MANAGED=1
pop_t_init
pop_t_up 2
# The routes in status come with the mux's next STATUS, which may follow
# the router's update: wait for it.
announces_vip() {
	test "$(lab_ctl --json status | jq -r '.members[] | select(.id == "mux1") | .route.announced[0].vip')" = "$LAB_VIP"
}
check "status: mux1 announces the VIP" lab_poll announces_vip
check "status: the manager told mux1 it is in sync" test "$(pop_mux_json mux1 notice.in_sync)" = True

size=$((2 * 1024 * 1024))
pop_downloads_spread 16 "$size" 256K 131072
c2=$POP_C2

# drain
v0=$(t_committed)
t0=$(date +%s%3N)
check "sluicectl mux drain mux1 commits" lab_ctl mux drain mux1
pop_wait_nexthops 10.255.0.2
took=$(($(date +%s%3N) - t0))
echo "# mux1's next hop left the router $took ms after sluicectl mux drain (with its commit)"
check "the router now routes the VIP through mux 2 only" pop_nexthops_are 10.255.0.2
check "the drain is a version of its own ($v0 -> $(t_committed))" test "$(t_committed)" -eq $((v0 + 1))
history_says() { lab_ctl history --limit 1 | grep -q "$1"; }
check "history shows it" history_says 'drain mux mux1'
lab_ctl history --limit 1 | sed 's/^/# /'
check "mux1 withholds every route as drained ($(pop_mux_state 1))" test "$(pop_mux_state 1)" = DRAINED
check "mux2 still announces ($(pop_mux_state 2))" test "$(pop_mux_state 2)" = NONE
# The manager learns the mux's route state from its next STATUS report (the
# drained flag it knows at once): the report can come after the commit.
status_drained() {
	[ "$(pop_mux_json mux1 drained)" = True ] && [ "$(pop_mux_json mux1 route.reason)" = DRAINED ]
}
check "status: mux1 drained, its routes withheld as DRAINED" lab_poll status_drained
lab_ctl status | sed -n '/^  mux1 /,/^  mux2 /p' | sed 's/^/# /'

c1=$(pop_tel_field 1 /sluice/stats .conn_new)
c2d=$(pop_tel_field 2 /sluice/stats .conn_new)
echo "# mux2 took over $((c2d - c2)) of the downloads' connections from mux1"
check "mux2 picked up the flows mux1 carried (connections $c2 -> $c2d)" test "$c2d" -gt "$c2"
c2=$c2d
check "40 new connections while mux1 is drained all succeed" t_burst 40
c1b=$(pop_tel_field 1 /sluice/stats .conn_new)
c2b=$(pop_tel_field 2 /sluice/stats .conn_new)
echo "# new connections during the drain: mux1 +$((c1b - c1)), mux2 +$((c2b - c2))"
check "none of them reached mux1 (+$((c1b - c1)))" test "$c1b" -eq "$c1"
check "all of them reached mux2 (+$((c2b - c2)))" test $((c2b - c2)) -ge 40
check "mux1 keeps forwarding (it is drained, not stopped)" lab_alive mux1

pop_downloads_check_clean "$size"

# undrain
t0=$(date +%s%3N)
check "sluicectl mux undrain mux1 commits" lab_ctl mux undrain mux1
pop_wait_nexthops "10.255.0.1 10.255.0.2"
echo "# mux1's next hop back $(($(date +%s%3N) - t0)) ms after sluicectl mux undrain"
check "both next hops again" pop_nexthops_are "10.255.0.1 10.255.0.2"
check "status: mux1 no longer drained" test "$(pop_mux_json mux1 drained)" = False
c1=$(pop_tel_field 1 /sluice/stats .conn_new)
check "40 new connections after the undrain all succeed" t_burst 40
c1b=$(pop_tel_field 1 /sluice/stats .conn_new)
echo "# new connections on mux1 after the undrain: +$((c1b - c1))"
check "mux1 takes new connections again (+$((c1b - c1)))" test "$c1b" -gt "$c1"

pop_stop_muxes
t_check_stopped mux1 mux2
t_check_clean
t_finish
