#!/usr/bin/env bash
# Fenced by its VIP probes, a managed mux withdraws; resynced, it announces.
#
# Two muxes under sluice-manager behind the FRR router (LAB_MANAGED=1).
# The manager probes each VIP through each mux every second and fences a
# mux after 3 unanswered probes; its notice to the mux then says "not in
# sync" (core/mgr_notice.h) and the mux withdraws. Here mux 1 stays alive
# and its BGP session up: only its probes fail (pop_block_probes: the
# manager's IP-in-IP toward 10.255.0.1 is refused in the router). The
# router loses mux 1's next hop, traffic goes on through mux 2. Once the
# probes pass again the manager says it is in sync and it announces again.
. "$(dirname "$0")/pop_lib.sh"
export LAB_MANAGED=1
pop_t_init
pop_t_up 2

t0=$(date +%s%3N)
pop_block_probes 1
pop_wait_nexthops 10.255.0.2
took=$(($(date +%s%3N) - t0))
echo "# mux1's next hop left the router $took ms after its probes began to fail"
check "withdrawn within 3 probe intervals, the judging and a second ($took ms)" test "$took" -le 5000
check "mux1 is alive" lab_alive mux1
check "its BGP session stayed up: the manager's word withdrew it" pop_session_up 1
why=$(pop_mux_json mux1 notice.why)
echo "# the manager's word to mux1: $why"
check "the manager told mux1 it is not in sync, for its VIP probes" \
	bash -c "[ '$(pop_mux_json mux1 notice.in_sync)' = False ] && [[ '$why' == *'VIP probe'* ]]"
check "mux1 withholds its routes as not in sync ($(pop_mux_state 1))" \
	test "$(pop_mux_state 1)" = NOT_IN_SYNC
lab_ctl status | sed -n '/^  mux1 /,/^  mux2 /p' | sed 's/^/# /'
check "40 requests meanwhile all succeed (through mux 2)" t_burst 40

t0=$(date +%s%3N)
pop_unblock_probes 1
pop_wait_nexthops "10.255.0.1 10.255.0.2"
took=$(($(date +%s%3N) - t0))
echo "# mux1 announced again $took ms after its probes passed again"
check "announced again once resynced ($took ms)" pop_nexthops_are "10.255.0.1 10.255.0.2"
check "the manager says mux1 is in sync" test "$(pop_mux_json mux1 notice.in_sync)" = True
check "mux1 runs the committed version" t_in_sync --ids mux1
check "40 requests all succeed" t_burst 40

pop_stop_muxes
t_check_stopped mux1 mux2
t_check_clean
t_finish
