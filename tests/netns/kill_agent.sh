#!/usr/bin/env bash
# kill -9 of a host agent under traffic and commits. The lab under the
# manager, the pool probed by HTTP every 1 s through the agents:
#   1. A stream of changes runs (vm22's weight 2, 1, 2, ...) with bursts of
#      requests beside it; agent 1 (vm11, vm12) is killed with SIGKILL.
#   2. Its backends fail their probes and leave the table: requests go to
#      host 2's backends only and all succeed; the commits go on with the
#      two members left (agent 1 is fenced: disconnected).
#   3. Restarted (empty, version 0: it is managed), agent 1 is resynced by
#      snapshot, its backends pass their probes and come back, and the
#      requests spread over all four again. Every member ends on the
#      manager's last version.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
export LAB_MANAGED=1
t_init
t_up 1 1 1 1

check "the pool probes by HTTP every 1 s, thresholds 2 and 2" \
	lab_ctl vip set "$T_SVC" --probe http --path / --interval 1 --probe-timeout 1 \
	--healthy 2 --unhealthy 2
all_on() { t_in_sync --count "$1"; } # all_on N: N members in sync on the committed version
healthy_all() { [ "$(t_states)" = "active active active active" ]; }
check "all four backends active" lab_poll healthy_all

# 1. changes stream while agent 1 dies
stream_changes() {
	local i=0
	while [ ! -e "$LAB_DIR/stream.stop" ]; do
		i=$((i + 1))
		lab_ctl backend set "$T_SVC" "${LAB_VM_DIP[vm22]}:$LAB_BE_PORT" --weight $((1 + i % 2)) \
			>/dev/null 2>>"$LAB_DIR/stream.err" || echo "$i" >>"$LAB_DIR/stream.failed"
	done
	echo "$i" >"$LAB_DIR/stream.count"
}
# t_bg, not `wait PID`: every sluicectl's threads take pids (docs/reliability.md, Found 23)
t_bg "$LAB_DIR/stream.rc" stream_changes
v0=$(t_committed)
kill -KILL "$(lab_pid agent1)"
lab_kill agent1
rm -rf "/var/run/dpdk/${LAB_PREFIX[1]}"
t0=$SECONDS
host1_out() { [ "$(t_states | cut -d' ' -f1,2)" = "maint maint" ]; }
check "agent 1's backends leave the table (they fail their probes)" lab_poll host1_out
echo "# out after $((SECONDS - t0)) s: $(t_states)"
fenced1() { [ "$(t_member agent1 state)" = fenced ]; }
check "agent 1 is fenced: $(t_member agent1 why)" fenced1
check "100 requests meanwhile all succeed, on host 2's backends" t_burst 100 0,0,1,1
moved_on() { [ "$(t_committed)" -gt $((v0 + 5)) ]; }
check "the changes go on with the two members left: past version $((v0 + 5))" lab_poll moved_on

# 3. agent 1 again
lab_agent_start 1
check "agent 1, restarted empty, is resynced: all three members on the committed version" \
	lab_poll all_on 3
check "its backends pass their probes and come back" lab_poll healthy_all
touch "$LAB_DIR/stream.stop"
stream_rc=$(t_rc "$LAB_DIR/stream.rc")
check "the stream of changes ended when told (exit $stream_rc)" test "$stream_rc" -eq 0
check "every change of the stream committed ($(cat "$LAB_DIR/stream.count") changes, $(wc -l <"$LAB_DIR/stream.failed" 2>/dev/null || echo 0) failed)" \
	test ! -e "$LAB_DIR/stream.failed"
check "all three members on the last version" lab_poll all_on 3
lab_ctl backend set "$T_SVC" "${LAB_VM_DIP[vm22]}:$LAB_BE_PORT" --weight 1 >/dev/null
check "all three members on the last version" lab_poll all_on 3
check "200 requests spread over all four again" t_burst 200 1,1,1,1
check "agent 1's log says it applied a snapshot" grep -q "snapshot of version" "$LAB_DIR/agent1.log"

t_end
t_check_clean
t_finish
