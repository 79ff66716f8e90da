#!/usr/bin/env bash
# The load host agents report (host_agent/ha_track.h), on real TCP through
# the managed lab, read with `sluicectl backend list`:
#   1. 24 long-lived connections to a second service, VIP:9090
#      (tests/netns/long_conns.py: each server answers with its VM's name):
#      every backend's ACTIVE and OPENED are exactly the connections that
#      landed on it, as its agent saw their SYNs; FAILED stays 0;
#   2. the client closes them (FIN): ACTIVE falls to 0 everywhere, OPENED
#      keeps them;
#   3. a third service, VIP:9091, whose one backend (vm11) has nothing
#      listening: 5 connections are refused by vm11's kernel (a RST to the
#      SYN), counted FAILED 5 by agent 1, ACTIVE 0.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
export LAB_MANAGED=1
t_init
t_up 1 1 1 1
port=9090
refused=9091
n=24

add_service() { # PORT VM...: a service of the VIP on PORT, the VMs' DIP:PORT its backends
	local p=$1 v
	shift
	lab_ctl vip add "$LAB_VIP:$p" >/dev/null || return 1
	for v; do
		lab_ctl backend add "$LAB_VIP:$p" "${LAB_VM_DIP[$v]}:$p" \
			--host "${LAB_HOST_PA[${LAB_VM_HOST[$v]}]}" >/dev/null || return 1
	done
}
check "a service on $port with the four VMs" add_service "$port" "${LAB_VMS[@]}"
check "a service on $refused with vm11, where nothing listens" add_service "$refused" vm11
check "every member runs it" lab_poll t_in_sync --count 3
check "the VMs serve long connections on $port" t_vm_servers conn "$port" \
	"$LAB_PY" "$LAB_SRC/tests/netns/long_conns.py" serve --name @VM@ --port "$port"

list() { lab_ctl --json backend list; }
# load_is PORT FIELD JSON: every backend of VIP:PORT has FIELD as JSON maps VM DIP -> value
load_is() {
	list | jq -e --arg svc "tcp $LAB_VIP:$1" --arg f "$2" --argjson want "$3" '
		[.backends[] | select(.service == $svc) | {(.dip): .[$f]}] | add == $want'
}
want_of() { # JSON: {DIP: connections of round 0 answered by its VM}
	t_py -c 'import json, sys
dips = dict(a.split("=") for a in sys.argv[2:])
want = {d: 0 for d in dips.values()}
for c in json.load(open(sys.argv[1])):
    if c["status"] == "ok":
        want[dips[c["backend"]]] += 1
print(json.dumps(want))' "$LAB_DIR/conns/round.0.json" "${pairs[@]}"
}
pairs=()
for v in "${LAB_VMS[@]}"; do pairs+=("$v=${LAB_VM_DIP[$v]}"); done
zeros=$(t_py -c 'import json, sys; print(json.dumps({d: 0 for d in sys.argv[1:]}))' \
	"${LAB_VM_DIP[@]}")

# 1. long connections
mkdir "$LAB_DIR/conns"
lab_spawn conns "$LAB_NS_CLIENT" "$LAB_PY" "$LAB_SRC/tests/netns/long_conns.py" client \
	--host "$LAB_VIP" --port "$port" -n "$n" --dir "$LAB_DIR/conns" --idle 120
check "$n long-lived connections are open" \
	lab_until_alive conns test -s "$LAB_DIR/conns/round.0.json"
answered() { test "$(jq '[.[] | select(.status == "ok")] | length' "$LAB_DIR/conns/round.0.json")" -eq "$n"; }
check "every one answered" answered
want=$(want_of)
echo "# connections per backend: $want"
check "ACTIVE per backend is the connections on it" lab_poll load_is "$port" active "$want"
check "OPENED per backend too" load_is "$port" opened "$want"
check "FAILED 0" load_is "$port" failed "$zeros"
lab_ctl backend list | sed 's/^/# /'

# 2. closed: FIN from the client
touch "$LAB_DIR/conns/stop"
gone() { ! lab_alive conns; }
check "the client closes them and exits" lab_poll gone
check "ACTIVE falls to 0 on every backend" lab_poll load_is "$port" active "$zeros"
check "OPENED keeps them" load_is "$port" opened "$want"

# 3. refused: vm11's kernel answers the SYNs with RSTs
connect_refused() {
	ip netns exec "$LAB_NS_CLIENT" timeout 5 bash -c \
		"! exec 3<>/dev/tcp/$LAB_VIP/$refused" 2>/dev/null
}
for i in 1 2 3 4 5; do
	check "connection $i to $refused is refused" connect_refused
done
failed_is() {
	list | jq -e --arg svc "tcp $LAB_VIP:$refused" --argjson n "$1" '
		[.backends[] | select(.service == $svc)] | length == 1 and .[0].failed == $n
		and .[0].active == 0 and .[0].opened == $n'
}
check "vm11 on $refused: FAILED 5, OPENED 5, ACTIVE 0" lab_poll failed_is 5
lab_ctl backend list | sed 's/^/# /'
check "backend list names the usage of a bad argument" bash -c \
	"! '$SLUICECTL' --manager 'ipc://$LAB_DIR/manager.sock' backend list extra 2>/dev/null"

t_finish
