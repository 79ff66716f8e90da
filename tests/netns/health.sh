#!/usr/bin/env bash
# Health probes and target-group semantics with real backends: the lab
# under sluice-manager, which probes every VM's http.server through its
# host agent (agent.probers), 1 s apart, 2 results to change state.
#   1. A backend whose server stops leaves the pool (expected: interval x
#      unhealthy threshold + one interval, 3 s; the time is printed, the
#      check's bound has 5 s more for a loaded machine); no request goes to it.
#   2. Restarted, it is back (interval x healthy threshold + one interval,
#      the same bound), and gets its share again.
#   3. A flapping backend (its server stopped and started every 0.7 s for
#      8 s) makes a bounded number of versions: one change per two probes
#      at most, over the time it flapped.
#   4. backend del drains: a long download on that backend keeps flowing
#      while new connections avoid it from the start; when the
#      deregistration delay (6 s) runs out the backend is gone from the
#      table and the download with it.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
export LAB_MANAGED=1
t_init
t_up 1 1 1 1

INTERVAL=1
# The bound of a state change's time: interval x (threshold + 1), the
# expected figure, and 5 s more, for a loaded CI machine (the manager's
# batch, the commit, sluicectl's polling under ASan): the checks below are
# that it happens; the times are printed.
BOUND_MS=$(((INTERVAL * (2 + 1) + 5) * 1000))
check "the pool probes by HTTP every $INTERVAL s, thresholds 2 and 2, drain delay 6 s" \
	lab_ctl vip set "$T_SVC" --probe http --path / --interval "$INTERVAL" --probe-timeout 1 \
	--healthy 2 --unhealthy 2 --drain-delay 6

be() { t_backend "$@"; } # backend DIP's FIELD in the committed table, "-" when absent
members_on() { t_in_sync --count 3; } # all three members run the committed version
all_healthy() {
	local v
	for v in "${LAB_VMS[@]}"; do
		[ "$(be "${LAB_VM_DIP[$v]}" health)" = healthy ] || return 1
	done
}
now_ms() { date +%s%3N; }
server_stop() { lab_kill "http-$1"; }
server_start() {
	lab_spawn "http-$1" "$(lab_ns_vm "$1")" \
		"$LAB_PY" -m http.server "$LAB_BE_PORT" --directory "$LAB_DIR/www/$1"
	lab_poll lab_listening "$(lab_ns_vm "$1")"
}

check "all four backends are healthy (probed through the agents)" lab_poll all_healthy
check "all three members run the committed version" lab_poll members_on

# Poll FN from now: POLL_OK 1 if it came true, TOOK the milliseconds it took.
timed_poll() {
	local t0
	t0=$(now_ms)
	POLL_OK=0
	lab_poll "$1" && POLL_OK=1
	TOOK=$(($(now_ms) - t0))
}

# 1. stop vm12's server
dip12=${LAB_VM_DIP[vm12]}
v0=$(t_committed)
server_stop vm12
out12() { [ "$(be "$dip12" state)" = maint ] && members_on; }
timed_poll out12
out_ok=$POLL_OK took=$TOOK
echo "# vm12 out of the pool after $took ms (expected about $((INTERVAL * 3000))): $(be "$dip12" health), $(be "$dip12" last_failure)"
check "vm12 leaves the pool, on every member, within $BOUND_MS ms ($took ms)" \
	bash -c "[ $out_ok = 1 ] && [ $took -le $BOUND_MS ]"
check "it is unhealthy, the reason says why: $(be "$dip12" last_failure)" \
	bash -c "[ '$(be "$dip12" health)' = unhealthy ] && [[ '$(be "$dip12" last_failure)' == *refused* ]]"
check "one version took it out ($v0 -> $(t_committed))" test "$(t_committed)" -eq $((v0 + 1))
check "200 requests all answered, none by vm12" t_burst 200 1,0,1,1

# 2. start it again
server_start vm12
back12() { [ "$(be "$dip12" state)" = active ] && members_on; }
timed_poll back12
back_ok=$POLL_OK took=$TOOK
echo "# vm12 back in the pool after $took ms (expected about $((INTERVAL * 3000)))"
check "vm12 is back, on every member, within $BOUND_MS ms ($took ms)" \
	bash -c "[ $back_ok = 1 ] && [ $took -le $BOUND_MS ]"
check "200 requests spread over all four again" t_burst 200 1,1,1,1

# 3. flapping vm21: every state change needs 2 results in a row, 1 s apart
v1=$(t_committed)
t0=$(now_ms)
end=$((SECONDS + 8))
while [ "$SECONDS" -lt "$end" ]; do
	server_stop vm21
	sleep 0.7
	server_start vm21
	sleep 0.7
done
flaps=$(($(t_committed) - v1))
flapped=$(($(now_ms) - t0))
# A change takes 2 results in a row, 1 interval apart, and the next one 2
# more: at most one per 2 intervals over the time between the two readings
# of the version (8 to 10 s; more when a server's start was slow), +1 in
# flight. Without the thresholds (a change per result) it would be one per
# interval.
max_flaps=$((flapped / (2 * INTERVAL * 1000) + 1))
echo "# $flapped ms of flapping: $flaps versions (at most $max_flaps)"
check "flapping makes at most one version per 2 intervals, +1: $flaps in $flapped ms (<= $max_flaps)" \
	test "$flaps" -le "$max_flaps"
check "vm21 settles healthy once its server stays up" lab_poll all_healthy

# 4. drain: a long download on a backend, then backend del
size=$((24 * 1024 * 1024))
t_big_file "$size" big.bin
t_download big.bin 2M 60
lab_poll t_served_by /big.bin
server=$(t_served_by /big.bin)
dip=${LAB_VM_DIP[$server]}
echo "# the download is served by $server ($dip)"
got() { t_bytes "$LAB_DIR/big.bin.got"; }
del_at=$(now_ms)
check "backend del $dip" lab_ctl backend del "$T_SVC" "$dip:$LAB_BE_PORT"
b1=$(got)
check "it is draining (state drain, deregistered), time left: $(be "$dip" draining)" \
	bash -c "[ '$(be "$dip" state)' = drain ] && [ '$(be "$dip" deregistered)' = True ]"
weights=
for v in "${LAB_VMS[@]}"; do weights+=$([ "$v" = "$server" ] && echo 0 || echo 1),; done
check "new connections avoid it from the start: 100 requests, none to $server" \
	t_burst 100 "${weights%,}"
# 4 MiB more than right after the del: 16 times the client's receive
# buffer (256 KiB, scripts/netns-lab.sh), so it came over the path after the
# del (a late start, curl's rate limit lets it catch up at full speed)
flowing() { [ "$(got)" -ge $((b1 + 4 * 1024 * 1024)) ]; }
flow_ok=0
lab_poll flowing && flow_ok=1
b2=$(got)
check "the download keeps flowing while it drains: $b1 -> $b2 bytes by +$(($(now_ms) - del_at)) ms (4 MiB more)" \
	test "$flow_ok" = 1
gone() { [ "$(be "$dip" state)" = - ]; }
gone_ok=0
lab_poll gone && gone_ok=1
took=$(($(now_ms) - del_at))
echo "# the backend left the table $took ms after the del (the delay: 6000 ms); $(got) bytes had come by then"
check "the backend is gone when the delay ends (6 s), not before, within 5 s more: after $took ms" \
	bash -c "[ $gone_ok = 1 ] && [ $took -ge 6000 ] && [ $took -le 11000 ]"
dl_rc=$(t_download_rc big.bin)
echo "# download: curl exit $dl_rc, $(cat "$LAB_DIR/big.bin.out"), $(got) of $size bytes"
check "and the download ended with it, unfinished (curl exit $dl_rc)" \
	bash -c "[ $dl_rc -ne 0 ] && [ $(got) -lt $size ]"

t_end
t_check_clean
t_finish
