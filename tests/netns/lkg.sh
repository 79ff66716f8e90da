#!/usr/bin/env bash
# A member's last known good table, on real TCP (docs/manager.md, "What a
# member serves without a manager"): the manager owns the flow table, the
# mux and both agents are its members, each keeping its table in
# LAB_DIR/NAME.lkg (scripts/netns-lab.sh).
#   1. Every manager down, the mux killed (-9) and restarted: after
#      lkg_wait_ms with no manager it runs its last known good table (its
#      telemetry: the version, lkg 1, lkg_announce 1), tells systemd it is
#      ready (READY=1 on its NOTIFY_SOCKET), and 200 requests through the
#      VIP all succeed and spread evenly.
#   2. The file corrupted (one byte of the table flipped), the mux
#      restarted: the file is refused, logged with the reason, and the mux
#      starts empty (version 0), waiting for a manager.
#   3. The manager back: the mux is resynced to the committed version by a
#      snapshot, serves the VIP again, and keeps a good file again.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
export LAB_MANAGED=1
t_init
t_up 1 1 1 1

members_at() { t_in_sync --ids mux,agent1,agent2 --version "$1"; } # all three on VERSION
mux_tel() { t_tel "${LAB_PREFIX[mux]}" /sluice/stats "$1"; }      # FIELD of /sluice/stats
mux_at() { [ "$(mux_tel version)" = "$1" ]; }
lkg=$LAB_DIR/mux.lkg

v0=$(t_committed)
check "all three members run version $v0" lab_poll members_at "$v0"
check "the mux kept version $v0 as its last known good table" test -s "$lkg"
check "while the manager holds it in sync the mux is not serving last known good" \
	test "$(mux_tel lkg)" = 0
cp "$lkg" "$LAB_DIR/good.lkg"

# 1. every manager down, the mux restarted: its last known good table
kill -KILL "$(lab_pid manager)"
lab_kill manager
kill -KILL "$(lab_pid mux)"
lab_kill mux
rm -rf "/var/run/dpdk/${LAB_PREFIX[mux]}"
t0=$SECONDS
# systemd's NOTIFY_SOCKET, as a Type=notify unit has it: what the mux says there
notify=$LAB_DIR/mux.notify
t_bg "$LAB_DIR/notify.rc" t_py "$LAB_SRC/scripts/lab_tool.py" notify "$notify" \
	"$LAB_DIR/notify.log" --until READY=1
lab_poll test -S "$notify"
NOTIFY_SOCKET=$notify lab_mux_start
check "with no manager the restarted mux runs version $v0 from its file" lab_poll mux_at "$v0"
notify_rc=$(t_rc "$LAB_DIR/notify.rc")
check "and tells systemd it is ready ($(grep -x 'STATUS=.*' "$LAB_DIR/notify.log"))" \
	test "$notify_rc" = 0 -a -n "$(grep -x READY=1 "$LAB_DIR/notify.log")"
echo "# the mux forwarded from its last known good table $((SECONDS - t0)) s after its start"
check "its telemetry says it serves last known good (lkg 1)" test "$(mux_tel lkg)" = 1
check "and that it announces meanwhile (lkg_announce 1: $(mux_tel lkg_why))" \
	test "$(mux_tel lkg_announce)" = 1
check "its log says so" grep -q "forwarding from the last known good table .*version $v0" \
	"$LAB_DIR/mux.log"
check "200 requests through the VIP all succeed, even spread" t_burst 200

# 2. a corrupt file: refused, the mux starts empty
lab_kill mux
rm -rf "/var/run/dpdk/${LAB_PREFIX[mux]}"
size=$(stat -c %s "$lkg")
t_py -c '
import sys
p, at = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read())
b[at] ^= 0x40
open(p, "wb").write(b)' "$lkg" $((size - 20))
lab_mux_start
ignored() { grep -q "last known good table $lkg is ignored" "$LAB_DIR/mux.log"; }
check "the corrupt file is refused, with the reason in the log" lab_poll ignored
echo "# $(grep -o "is ignored: .*" "$LAB_DIR/mux.log" | head -1)"
check "the mux starts empty (version 0)" mux_at 0
check "and does not announce an empty table (lkg_announce 0: $(mux_tel lkg_why))" \
	test "$(mux_tel lkg_announce)" = 0

# 3. the manager back: resynced
lab_manager_start
check "the manager is back at version $v0" test "$(t_committed)" = "$v0"
check "the mux is resynced to version $v0" lab_poll members_at "$v0"
check "the mux's log says it applied a snapshot" \
	grep -q "snapshot of version $v0 applied" "$LAB_DIR/mux.log"
check "it no longer serves last known good (lkg 0)" test "$(mux_tel lkg)" = 0
check "requests through the VIP succeed again" t_burst 100
check "its last known good file is whole again (the same bytes as before)" \
	cmp -s "$lkg" "$LAB_DIR/good.lkg"

t_end
t_check_clean
t_finish
