#!/usr/bin/env bash
# Every manager down in the PoP: a restarted mux serves its last known good
# table and announces it; the manager's return withdraws no mux
# (docs/manager.md, "What a member serves without a manager").
#
# Two muxes under sluice-manager behind the FRR router (LAB_MANAGED=1),
# each keeping its table in LAB_DIR/mux<i>.lkg.
#   1. The manager killed (-9), then mux 1 (-9): the router keeps mux 2.
#      Mux 1 restarted: no manager answers, so after lkg_wait_ms it runs
#      the committed version from its file, and with no leader heard since
#      its start it announces it: the router has both next hops again, and
#      requests through the VIP succeed, mux 1 carrying new connections.
#   2. The manager back: both muxes say hello in sync and keep their
#      routes (a sampler of the router's route every 0.1 s sees both next
#      hops in every sample); mux 1 is held in sync by the manager again.
. "$(dirname "$0")/pop_lib.sh"
export LAB_MANAGED=1
pop_t_init
pop_t_up 2
committed=$(t_committed)
check "mux 1 kept version $committed as its last known good table" \
	lab_poll test -s "$LAB_DIR/mux1.lkg"

# 1. no manager, mux 1 restarted
kill -KILL "$(lab_pid manager)"
lab_kill manager
pop_kill_mux1
pop_mux_start 1
runs_committed() { [ "$(pop_tel_field 1 /sluice/stats .version)" = "$committed" ]; }
check "with no manager, restarted mux 1 runs version $committed from its file" \
	lab_poll runs_committed
check "it is announced again: the router routes through both muxes" \
	pop_wait_nexthops "10.255.0.1 10.255.0.2"
check "its route state: announced ($(pop_mux_state 1): $(pop_tel 1 /sluice/route | jq -r .why))" \
	test "$(pop_mux_state 1)" = NONE
check "its log says it announces the last known good table" \
	grep -q "bgp: no manager since the start: serving last known good v$committed" \
	"$LAB_DIR/mux1.log"
check "40 requests all succeed" t_burst 40
c1=$(pop_tel_field 1 /sluice/stats .conn_new)
check "mux 1 carries new connections ($c1)" test "$c1" -gt 0

# 2. the manager back: no mux withdrawn
pop_sampler_start
lab_manager_start
check "the manager is back at version $committed" test "$(t_committed)" = "$committed"
check "both muxes are in sync with it" lab_poll t_in_sync --ids mux1,mux2
said_in_sync() { [ "$(pop_mux_json mux1 notice.in_sync)" = True ]; }
check "the manager's word to mux 1: in sync" lab_poll said_in_sync
answered() { [ "$(pop_mux_json mux1 vip_probe.answered)" -ge 2 ]; }
check "its VIP probes through mux 1 are answered (a few intervals)" lab_poll answered
pop_sampler_stop 10
n=$(wc -l <"$LAB_DIR/nexthops.log")
both=$(grep -c ' 10\.255\.0\.1 10\.255\.0\.2$' "$LAB_DIR/nexthops.log" || true)
check "in $n samples of the router's route since the manager's start, both next hops in all ($both)" \
	test "$n" -ge 10 -a "$both" -eq "$n"
check "mux 1 is no longer serving last known good" \
	test "$(pop_tel_field 1 /sluice/stats .lkg)" = 0
check "40 requests all succeed" t_burst 40

pop_stop_muxes
t_check_stopped mux1 mux2
t_check_clean
t_finish
