#!/usr/bin/env bash
# Weights from the load the agents report (manager/core/mgr_load.h), on
# real TCP through the managed lab:
#   1. least_connections: vm11 alone serves VIP:9090 and takes 16 long-lived
#      connections (tests/netns/long_conns.py); vm12, vm21 and vm22 join, and
#      the service is given balance = "least_connections" (config export,
#      edit, config apply: how an operator sets it). The manager lowers
#      vm11's weight and raises the others' (backend list says why), and of
#      40 new connections vm11 gets at most 4, where its Maglev share alone
#      would be about 10;
#   2. mitigation: VIP:9092 (mitigate = true) over the four VMs, where vm11
#      has nothing listening: its kernel refuses every SYN, its agent counts
#      the failures, and the manager lowers its weight (never below the
#      floor: it still gets a few) and says why; once vm11 listens, its new
#      connections succeed and its weight comes back to the others'.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
export LAB_MANAGED=1
t_init
t_up 1 1 1 1
lc=9090
mit=9092

backend_add() { # PORT VM
	lab_ctl backend add "$LAB_VIP:$1" "${LAB_VM_DIP[$2]}:$1" \
		--host "${LAB_HOST_PA[${LAB_VM_HOST[$2]}]}" >/dev/null
}
listening() { ip netns exec "$(lab_ns_vm "$1")" ss -Hltn "sport = :$2" | grep -q LISTEN; }
serve_on() { # NAME VM PORT: a long_conns server
	lab_spawn "$1" "$(lab_ns_vm "$2")" "$LAB_PY" "$LAB_SRC/tests/netns/long_conns.py" serve \
		--name "$2" --port "$3"
	lab_until_alive "$1" listening "$2" "$3"
}
burst() { # PORT N: N short connections through the VIP, answered per VM (JSON)
	ip netns exec "$LAB_NS_CLIENT" "$LAB_PY" "$LAB_SRC/tests/netns/long_conns.py" burst \
		--host "$LAB_VIP" --port "$1" -n "$2"
}
list() { lab_ctl --json backend list; }
# be PORT VM FIELD: that field of the backend in backend list
be() {
	list | jq -r --arg svc "tcp $LAB_VIP:$1" --arg dip "${LAB_VM_DIP[$2]}" --arg f "$3" \
		'.backends[] | select(.service == $svc and .dip == $dip) | .[$f]'
}

# 1. least connections
check "VIP:$lc with vm11 alone (no probes: load alone steers)" lab_ctl vip add "$LAB_VIP:$lc" --probe none
check "vm11 its backend" backend_add "$lc" vm11
for v in "${LAB_VMS[@]}"; do check "$v serves $lc" serve_on "lc-$v" "$v" "$lc"; done
check "every member runs it" lab_poll t_in_sync --count 3
mkdir "$LAB_DIR/conns"
lab_spawn conns "$LAB_NS_CLIENT" "$LAB_PY" "$LAB_SRC/tests/netns/long_conns.py" client \
	--host "$LAB_VIP" --port "$lc" -n 16 --dir "$LAB_DIR/conns" --idle 120
check "16 long-lived connections are open" \
	lab_until_alive conns test -s "$LAB_DIR/conns/round.0.json"
on_vm11() { test "$(jq '[.[] | select(.status == "ok" and .backend == "vm11")] | length' \
	"$LAB_DIR/conns/round.0.json")" -eq 16; }
check "all 16 on vm11" on_vm11
counted() { test "$(be "$lc" vm11 active)" = 16; }
check "vm11's agent counts them" lab_poll counted
for v in vm12 vm21 vm22; do check "$v joins" backend_add "$lc" "$v"; done
# the operator's way to a service field: export, edit, apply
lab_ctl config export >"$LAB_DIR/services.cfg"
t_py - "$LAB_DIR/services.cfg" "$lc" "$mit" <<'PY'
import re, sys
path, lc, mit = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
text = text.replace("port = %s;\n" % lc, 'port = %s;\n\t\t\tbalance = "least_connections";\n' % lc, 1)
open(path, "w").write(text)
PY
check "balance = least_connections on VIP:$lc (config apply)" lab_ctl config apply "$LAB_DIR/services.cfg"
lowered() {
	local w11 w
	w11=$(be "$lc" vm11 weight)
	for v in vm12 vm21 vm22; do
		w=$(be "$lc" "$v" weight)
		[ "$((w11 * 8))" -le "$w" ] || return 1
	done
	be "$lc" vm11 why | grep -q "least connections"
}
check "the manager steers: vm11's weight at most an eighth of each other's" lab_poll lowered
lab_ctl backend list | grep ":$lc" | sed 's/^/# /'
echo "new 40" >"$LAB_DIR/conns/go.1"
check "40 new connections answered" lab_until_alive conns test -s "$LAB_DIR/conns/round.1.json"
new_ok() { test "$(jq '[.[] | select(.status == "ok")] | length' "$LAB_DIR/conns/round.1.json")" -eq 40; }
check "all 40 answered" new_ok
got=$(jq '[.[] | select(.backend == "vm11")] | length' "$LAB_DIR/conns/round.1.json")
echo "# of 40 new connections, vm11 (holding 16) got $got"
check "vm11 got at most 4 of them (Maglev alone: about 10)" test "$got" -le 4
touch "$LAB_DIR/conns/stop"

# 2. mitigation
check "VIP:$mit over the four VMs (no probes)" lab_ctl vip add "$LAB_VIP:$mit" --probe none
for v in "${LAB_VMS[@]}"; do check "$v its backend" backend_add "$mit" "$v"; done
for v in vm12 vm21 vm22; do check "$v serves $mit (vm11 does not)" serve_on "mit-$v" "$v" "$mit"; done
lab_ctl config export >"$LAB_DIR/services2.cfg"
t_py - "$LAB_DIR/services2.cfg" "$mit" <<'PY'
import sys
path, mit = sys.argv[1], sys.argv[2]
text = open(path).read()
text = text.replace("port = %s;\n" % mit, "port = %s;\n\t\t\tmitigate = true;\n" % mit, 1)
open(path, "w").write(text)
PY
check "mitigate = true on VIP:$mit (config apply)" lab_ctl config apply "$LAB_DIR/services2.cfg"
check "every member runs it" lab_poll t_in_sync --count 3
mitigated() {
	burst "$mit" 20 >>"$LAB_DIR/bursts.log"
	local w11 w
	w11=$(be "$mit" vm11 weight)
	w=$(be "$mit" vm12 weight)
	[ "$((w11 * 4))" -le "$w" ] && be "$mit" vm11 why | grep -q "mitigated"
}
check "vm11 refuses, and is mitigated: weight at most a quarter of vm12's" lab_poll mitigated
lab_ctl backend list | grep ":$mit" | sed 's/^/# /'
others_clean() { test "$(be "$mit" vm12 why)" = "" -a "$(be "$mit" vm21 why)" = ""; }
check "the others are not" others_clean
check "vm11 serves $mit now" serve_on "mit-vm11" vm11 "$mit"
restored() {
	burst "$mit" 20 >>"$LAB_DIR/bursts.log"
	test "$(be "$mit" vm11 weight)" = "$(be "$mit" vm12 weight)" &&
		! be "$mit" vm11 why | grep -q "mitigated"
}
poll_long() { local LAB_WAIT=40; lab_poll "$@"; }
check "its connections succeed: restored to the others' weight" poll_long restored
lab_ctl backend list | grep ":$mit" | sed 's/^/# /'
lab_ctl history --limit 40 | grep -m 3 -E "mitigated|least connections" | sed 's/^/# /'

t_finish
