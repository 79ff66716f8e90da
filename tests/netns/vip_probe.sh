#!/usr/bin/env bash
# VIP probes: the lab under sluice-manager, which probes the VIP through the
# mux every second (IP-in-IP from the router's 10.255.0.254 to the mux's
# tunnel address; mux.probers lets it answer), 3 unanswered in a row fence.
#   1. status shows the mux answering with the committed version.
#   2. SIGSTOP the mux: at the third unanswered interval (about 3 s) it
#      is fenced, the reason naming the VIP, the mux and the count ("VIP
#      probe: no answer for 192.0.2.10 through 10.255.0.1 (3 in a row)").
#   3. SIGCONT: it takes its snapshot, says hello at the committed version,
#      is in sync again and answers its probes again.
#   4. A commit after that reaches it (it takes part in rounds again).
#   5. 400 more VIPs (the answers outnumber what a raw socket's buffer
#      holds, so the probes go out in batches): the mux is never fenced,
#      and every VIP answers.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
export LAB_MANAGED=1
t_init
t_up 1 1 1 1

INTERVAL_MS=1000
FAILURES=3
now_ms() { date +%s%3N; }
mux() { t_member mux "$1"; } # FIELD of the mux's row in status (vip_probe.FIELD with a dot)
answers_current() { # in sync, answered within two intervals, with the committed version
	lab_ctl --json status | t_py -c '
import json, sys
s = json.load(sys.stdin)
m = [m for m in s["members"] if m["id"] == "mux"][0]
p = m["vip_probe"]
ok = (m["state"] == "in-sync" and p is not None and p["last_answer_ms"] is not None
      and p["last_answer_ms"] < 2 * int(sys.argv[1]) and p["version"] == s["committed"]["version"]
      and p["failures"] == 0)
sys.exit(0 if ok else 1)' "$INTERVAL_MS"
}
fenced_by_probe() { [ "$(mux state)" = fenced ] && [ "$(mux vip_probe.fenced_by_probe)" = True ]; }

status_has() { lab_ctl status | grep -q -- "$1"; }
check "status: VIP probes are on" status_has "^vip probes  every $INTERVAL_MS ms"
check "the mux answers VIP probes with the committed version ($(t_committed))" lab_poll answers_current
lab_ctl status | sed -n '/^vip probes/p;/^  mux /,+1p' | sed 's/^/# /'
probes0=$(mux vip_probe.answered)
n=$(t_tel "${LAB_PREFIX[mux]}" /sluice/stats vip_probes)
check "the mux counts them under vip_probes in /sluice/stats ($n)" test "$n" -gt 0

# 2. freeze the mux
pid=$(lab_pid mux)
kill -STOP "$pid"
t0=$(now_ms)
lab_poll fenced_by_probe
took=$(($(now_ms) - t0))
why=$(mux why)
echo "# mux fenced $took ms after SIGSTOP: $why"
# The fence comes at the FAILURES-th unanswered interval, which the reason
# records (a member is fenced once, from in sync); the time is a figure
# (about interval x failures, more on a loaded host), not a verdict.
check "fenced by the VIP probes after $FAILURES unanswered intervals in a row ($took ms): $why" \
	test "$why" = "VIP probe: no answer for $LAB_VIP through 10.255.0.1 ($FAILURES in a row)"
check "status says it loudly" status_has 'FENCED by VIP probe'
lab_ctl status | sed -n '/^  mux /,+1p' | sed 's/^/# /'

# 3. thaw it
kill -CONT "$pid"
t0=$(now_ms)
lab_poll answers_current
took=$(($(now_ms) - t0))
echo "# mux back in sync and answering $took ms after SIGCONT"
check "back in sync and answering at the committed version ($took ms after SIGCONT)" answers_current
check "its answers count went on ($probes0 -> $(mux vip_probe.answered))" \
	test "$(mux vip_probe.answered)" -gt "$probes0"

# 4. it takes part in rounds again
v0=$(t_committed)
check "a weight change commits" lab_ctl backend set "$T_SVC" \
	"${LAB_VM_DIP[vm11]}:$LAB_BE_PORT" --weight 2
applied_past() { [ "$(mux applied)" -gt "$1" ]; }
check "the mux applies it (version $((v0 + 1)))" lab_poll applied_past "$v0"
lab_poll answers_current
check "and answers its probes with version $(t_committed)" answers_current
lab_wait_vip

# 5. Many VIPs: 400 more, each probed through the mux every interval. A raw
#    socket's buffer holds a few hundred answers; the manager sends the
#    probes in batches over a quarter of the interval and reads the answers
#    after each, so the mux is never fenced for answers it gave.
N_MORE=400
lab_ctl config export >"$LAB_DIR/services.cfg"
t_py - "$LAB_DIR/services.cfg" "$N_MORE" "${LAB_VM_DIP[vm11]}" "$LAB_BE_PORT" \
	"${LAB_HOST_PA[${LAB_VM_HOST[vm11]}]}" <<'PY'
import sys
path, n, dip, port, host = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
text = open(path).read()
more = "".join('{ vip = "198.18.%d.%d"; protocol = "tcp"; port = 80; backends = ( '
               '{ dip = "%s"; port = %s; host = "%s"; } ); },\n' % (1 + i // 200, 1 + i % 200,
                                                                   dip, port, host)
               for i in range(n))
assert "services = (" in text
open(path, "w").write(text.replace("services = (", "services = (\n" + more, 1))
PY
n_fenced() { awk '/fenced mux: VIP probe/ {n++} END {print n + 0}' "$LAB_DIR/manager.log"; }
f0=$(n_fenced)
check "config apply: $N_MORE more VIPs" lab_ctl config apply "$LAB_DIR/services.cfg"
probed_all() { [ "$(mux vip_probe.vips)" -gt "$N_MORE" ]; }
check "the mux is probed for every VIP" lab_poll probed_all
sleep $((INTERVAL_MS * (FAILURES + 2) / 1000))
check "not fenced by its probes in $((FAILURES + 2)) intervals ($f0 -> $(n_fenced) fences)" \
	test "$(n_fenced)" -eq "$f0"
check "an interval in which every VIP answered, in sync at the committed version" \
	lab_poll answers_current

t_end
t_check_clean
t_finish
