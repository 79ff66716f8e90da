#!/usr/bin/env bash
# A restarted managed mux is not announced before the manager says it is
# in sync.
#
# Two muxes under sluice-manager behind the FRR router (LAB_MANAGED=1).
#   1. mux 1 is killed (-9): the router keeps mux 2's next hop only.
#   2. mux 1 is restarted while the manager's VIP probes through it fail
#      (pop_block_probes): it connects, takes its snapshot, applies the
#      committed version and its BGP session comes up, which once
#      was enough to announce. The manager's word stays "not in sync"
#      (its probes fail): a sampler of the router's route every 0.1 s
#      never sees mux 1's next hop, and mux 1 says NOT_IN_SYNC.
#   3. The probes pass: the manager says it is in sync and mux 1 is
#      announced again; the route appears only then.
# Its Prometheus endpoint says the same in both states (sluice_bgp_*).
. "$(dirname "$0")/pop_lib.sh"
export LAB_MANAGED=1 POP_METRICS=1
pop_t_init
pop_t_up 2
committed=$(t_committed)

# 1. kill -9
pop_kill_mux1

# 2. restart, its probes failing
pop_block_probes 1
pop_sampler_start
pop_mux_start 1
runs_committed() { [ "$(pop_tel_field 1 /sluice/stats .version)" = "$committed" ]; }
check "restarted mux 1 applies the committed version $committed (by snapshot)" lab_poll runs_committed
check "its BGP session comes up" lab_poll pop_session_up 1
# a few probe intervals more with a table, a session and no word to announce
probes_failed_since() { [ "$(pop_mux_json mux1 vip_probe.failures)" -ge "$1" ]; }
f0=$(pop_mux_json mux1 vip_probe.failures)
check "the manager's probes through it go on failing ($f0 -> $((f0 + 3)) in a row)" \
	lab_poll probes_failed_since $((f0 + 3))
why=$(pop_mux_json mux1 notice.why)
echo "# the manager's word to mux1: $why"
check "the manager told it it is not in sync ($why)" \
	test "$(pop_mux_json mux1 notice.in_sync)" = False
check "mux 1 withholds its routes as not in sync ($(pop_mux_state 1))" \
	test "$(pop_mux_state 1)" = NOT_IN_SYNC
vip_series="sluice_bgp_vip_announced{vip=\"$LAB_VIP\"}"
session_series="sluice_bgp_session_established{neighbor=\"$POP_RT_IP\",session=\"n0\"}"
check "its metrics: $vip_series 0, the reason NOT_IN_SYNC, the session established" \
	test "$(pop_metric 1 "$vip_series") $(pop_metric 1 'sluice_bgp_state{reason="NOT_IN_SYNC"}') $(pop_metric 1 "$session_series")" = "0 1 1"
pop_sampler_stop 20
n=$(wc -l <"$LAB_DIR/nexthops.log")
seen=$(grep -c '10\.255\.0\.1' "$LAB_DIR/nexthops.log" || true)
check "in $n samples of the router's route since the restart, mux 1's next hop never appeared ($seen)" \
	test "$n" -ge 20 -a "$seen" -eq 0

# 3. its probes pass: in sync, announced
t0=$(date +%s%3N)
pop_unblock_probes 1
pop_wait_nexthops "10.255.0.1 10.255.0.2"
echo "# mux 1 announced $(($(date +%s%3N) - t0)) ms after its probes passed"
check "announced once the manager says it is in sync" \
	bash -c "[ '$(pop_mux_json mux1 notice.in_sync)' = True ] && [ '$(pop_mux_state 1)' = NONE ]"
check "mux1 runs the committed version" t_in_sync --ids mux1
announced_metrics() {
	[ "$(pop_metric 1 "$vip_series") $(pop_metric 1 'sluice_bgp_state{reason="ANNOUNCED"}') $(pop_metric 1 'sluice_bgp_state{reason="NOT_IN_SYNC"}')" = "1 1 0" ]
}
check "its metrics: $vip_series 1, the reason ANNOUNCED ($(pop_metric 1 sluice_bgp_announced_vips) VIP announced)" \
	lab_poll announced_metrics
metrics_well_formed() { pop_metrics 1 | promtool check metrics; }
check "promtool finds its metrics (with the bgp families) well formed" metrics_well_formed
check "40 requests all succeed" t_burst 40
c1=$(pop_tel_field 1 /sluice/stats .conn_new)
check "mux 1 carries new connections again ($c1)" test "$c1" -gt 0

pop_stop_muxes
t_check_stopped mux1 mux2
t_check_clean
t_finish
