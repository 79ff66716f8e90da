#!/usr/bin/env bash
# The whole system under its manager, on real TCP: sluice-manager owns the
# flow table, the mux and both agents are its two-phase-commit members and
# start empty; the VIP and its four backends are added with sluicectl.
#   1. 200 requests through the VIP all succeed and spread evenly.
#   2. 1000 versions are committed, one by one, while a long download and
#      bursts of short connections run: no request fails, the download is
#      intact, every member ends on the last version.
#   3. The manager is killed (-9) in the middle of a stream of changes and
#      restarted: it resumes at its last committed version, finishes what
#      was pending, and every member converges on one version.
#   4. The mux is killed (-9) and restarted: it comes back empty, is sent a
#      snapshot, and serves the VIP again.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
export LAB_MANAGED=1
t_init
t_up 1 1 1 1

members_at() { t_in_sync --ids mux,agent1,agent2 --version "$1"; } # all three on VERSION

v0=$(t_committed)
echo "# the pool took versions 1..$v0"
check "the pool was five versions (vip add, four backend add): $v0" test "$v0" -eq 5
check "all three members run version $v0" lab_poll members_at "$v0"
check "200 requests through the VIP all succeed, even spread" t_burst 200

# 2. 1000 commits under traffic
size=$((16 * 1024 * 1024))
t_big_file "$size" big.bin
t_download big.bin 1M 120
# short connections all along, in bursts of 50, until the commits end;
# every one must succeed. Not their spread: vm22's weight flips under
# them, so no one set of weights is theirs to fit (a burst of 50 with
# 30 on vm22 once failed a chi-square against 1,1,1,1 in CI).
short_bursts() {
	local i=0
	while [ ! -e "$LAB_DIR/commits.done" ]; do
		t_burst 50 "" --no-spread >"$LAB_DIR/burst.$i.out" 2>&1 ||
			echo "burst $i failed" >>"$LAB_DIR/bursts.failed"
		i=$((i + 1))
	done
	echo "$i" >"$LAB_DIR/bursts.count"
}
# t_bg, not `wait PID`: the 1000 sluicectl calls below take tens of
# thousands of pids (docs/reliability.md, Found 23)
t_bg "$LAB_DIR/bursts.rc" short_bursts
# what the mux and agents counted, before and after: every packet forwarded
counters() {
	t_py -c 'import json, sys; from sluicetest.lab import snapshot
print(json.dumps(snapshot(sys.argv[1], sys.argv[2], sys.argv[3].split(","))))' \
		"$LAB_NS_CLIENT" "${LAB_PREFIX[mux]}" "${LAB_PREFIX[1]},${LAB_PREFIX[2]}"
}
counters >"$LAB_DIR/before.json"
t0=$SECONDS
failed=0
for i in $(seq 1 1000); do
	# vm22's weight (1) goes 2, 1, 2, 1 ...: each a new Maglev table everywhere
	lab_ctl backend set "$T_SVC" "${LAB_VM_DIP[vm22]}:$LAB_BE_PORT" --weight $((1 + i % 2)) \
		>/dev/null 2>>"$LAB_DIR/commits.err" || failed=$((failed + 1))
done
touch "$LAB_DIR/commits.done"
took=$((SECONDS - t0))
counters >"$LAB_DIR/after.json"
read -r mux_fwd mux_drops agent_drops < <(t_py -c '
import json, sys; from sluicetest.lab import delta
b, a = (json.load(open(f)) for f in sys.argv[1:3])
d = delta(a, b)
print(d["mux.fwd_pkts"], d["mux.drops"], d["agent.drops"])' "$LAB_DIR/before.json" "$LAB_DIR/after.json")
echo "# over the 1000 commits: the mux forwarded $mux_fwd packets, dropped $mux_drops; the agents dropped $agent_drops"
check "no packet dropped by the mux or the agents through 1000 commits ($mux_fwd forwarded)" \
	bash -c "[ $mux_fwd -gt 0 ] && [ $mux_drops -eq 0 ] && [ $agent_drops -eq 0 ]"
v1=$(t_committed)
echo "# 1000 changes in $took s; committed version $v1"
check "1000 changes each committed (none refused or aborted): $failed failed" test "$failed" -eq 0
check "they are 1000 versions: $v0 -> $v1" test "$v1" -eq $((v0 + 1000))
check "all three members run version $v1" lab_poll members_at "$v1"
bursts_rc=$(t_rc "$LAB_DIR/bursts.rc")
check "the bursts ended with the commits (exit $bursts_rc)" test "$bursts_rc" -eq 0
check "every short connection meanwhile succeeded ($(cat "$LAB_DIR/bursts.count" 2>/dev/null) bursts of 50)" \
	test ! -e "$LAB_DIR/bursts.failed"
[ -e "$LAB_DIR/bursts.failed" ] && head -3 "$LAB_DIR/bursts.failed"
dl_rc=$(t_download_rc big.bin)
check "the download completes (curl exit $dl_rc: $(cat "$LAB_DIR/big.bin.out"))" \
	bash -c "[ $dl_rc -eq 0 ] && [[ \"\$(cat '$LAB_DIR/big.bin.out')\" == '200 $size 1 '* ]]"
check "every byte arrived intact (sha256)" t_intact big.bin

# 3. kill -9 the manager in the middle of a stream of changes
stream_changes() {
	local i
	for i in $(seq 1 200); do
		lab_ctl --no-wait backend set "$T_SVC" "${LAB_VM_DIP[vm21]}:$LAB_BE_PORT" \
			--weight $((1 + i % 3)) >/dev/null 2>&1 ||
			echo "$i" >>"$LAB_DIR/stream.unsent" # the manager is down: expected
	done
}
t_bg "$LAB_DIR/stream.rc" stream_changes
# kill it once the stream is under way (some of it committed)
streaming() { [ "$(t_committed)" -ge $((v1 + 3)) ]; }
lab_poll streaming
kill -KILL "$(lab_pid manager)"
lab_kill manager
stream_rc=$(t_rc "$LAB_DIR/stream.rc")
check "the stream of 200 changes ran to its end (exit $stream_rc)" test "$stream_rc" -eq 0
echo "# $(wc -l <"$LAB_DIR/stream.unsent" 2>/dev/null || echo 0) of 200 changes found no manager"
lab_manager_start
v2=$(t_committed)
echo "# the manager restarted at version $v2"
check "it restarted at a version at least the one before the stream ($v2 >= $v1)" \
	test "$v2" -ge "$v1"
converged() { v=$(t_committed) && members_at "$v"; }
check "every member converges on the manager's version" lab_poll converged
lab_ctl --json history >"$LAB_DIR/history.json"
check "the history has every version from 1 to $(t_committed), no gap" \
	t_py -c '
import json, sys
h = json.load(open(sys.argv[1]))
vs = sorted(v["version"] for v in h["versions"])
missing = sorted(set(range(1, vs[-1] + 1)) - set(vs))
if missing or len(vs) != len(set(vs)):
    print(f"missing {missing[:20]}, {len(vs) - len(set(vs))} duplicates, last {vs[-1]}")
    sys.exit(1)' "$LAB_DIR/history.json"
# the stream left vm21 at some weight of 1..3: back to the even pool
check "vm21's weight back to 1" lab_ctl backend set "$T_SVC" "${LAB_VM_DIP[vm21]}:$LAB_BE_PORT" --weight 1
converged_after() { [ "$(t_committed)" -ge "$1" ] && members_at "$(t_committed)"; }
check "every member runs it" lab_poll converged_after "$v2"
check "requests through the VIP still succeed" t_burst 100

# 4. kill -9 the mux: it restarts empty and is resynced from a snapshot
kill -KILL "$(lab_pid mux)"
lab_kill mux
rm -rf "/var/run/dpdk/${LAB_PREFIX[mux]}"
lab_mux_start
v3=$(t_committed)
check "the restarted mux is resynced to version $v3" lab_poll members_at "$v3"
check "requests through the VIP succeed again" t_burst 100
check "the mux's log says it applied a snapshot" grep -q "snapshot of version $v3 applied" "$LAB_DIR/mux.log"

t_end
t_check_clean
t_finish
