#!/usr/bin/env bash
# Removing a backend from a running lab (SIGHUP: the mux and the agents
# re-read their flow table) affects only the connections that were on it.
#   1. 40 long-lived TCP connections through the VIP to a second service,
#      192.0.2.10:9090 -> DIP:9090 (tests/netns/long_conns.py: each server
#      answers every line with its VM's name), so we know each one's backend.
#   2. vm12 leaves the flow table of the mux and both agents; SIGHUP all
#      three, wait for their "reloaded flow table" lines.
#   3. One more line on every connection: those on the other three backends
#      are answered by the same backend; those on vm12 are not answered by
#      vm12 (the mux sends their packets to a remaining backend by Maglev,
#      whose kernel resets them).
#   4. New connections never reach vm12: 40 on 9090, 100 HTTP requests on 80.
#   5. A broken flow table (weight 70000) and SIGHUP to the mux: it refuses
#      it, names the field, keeps its version and keeps forwarding.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init

removed=vm12
conn_port=9090
n_conns=40
all="vm11=1 vm12=1 vm21=1 vm22=1"
left="vm11=1 vm21=1 vm22=1"

lab_topology_up
lab_configs 1 1 1 1
lab_flow_table "$LAB_VIP_PORT:$LAB_BE_PORT $conn_port:$conn_port" "$all"
lab_flow_table_apply
lab_servers_start
t_vm_servers conn "$conn_port" \
	"$LAB_PY" "$LAB_SRC/tests/netns/long_conns.py" serve --name @VM@ --port "$conn_port"
lab_mux_start
lab_agent_start 1
lab_agent_start 2
lab_wait_vip
echo "# lab up in $((SECONDS - T_START)) s"

mux_version() { t_tel "${LAB_PREFIX[mux]}" /sluice/stats version; }
judge() { # judge ROUND KIND
	t_py "$LAB_SRC/tests/netns/long_conns.py" judge --dir "$LAB_DIR/conns" \
		--round "$1" --kind "$2" --removed "$removed"
}
round_k=0
round() { # round COMMAND...: the client's next round, waited for
	round_k=$((round_k + 1))
	echo "$*" >"$LAB_DIR/conns/go.$round_k"
	lab_until_alive conns test -s "$LAB_DIR/conns/round.$round_k.json"
}

# 1. the long-lived connections
mkdir "$LAB_DIR/conns"
lab_spawn conns "$LAB_NS_CLIENT" "$LAB_PY" "$LAB_SRC/tests/netns/long_conns.py" client \
	--host "$LAB_VIP" --port "$conn_port" -n "$n_conns" --dir "$LAB_DIR/conns"
check "$n_conns long-lived connections are open" \
	lab_until_alive conns test -s "$LAB_DIR/conns/round.0.json"
check "every connection answered, some by $removed" judge 0 start
check "mux flow table version 1 before the reload" test "$(mux_version)" = 1

# 2. vm12 leaves the flow table
lab_flow_table "$LAB_VIP_PORT:$LAB_BE_PORT $conn_port:$conn_port" "$left"
lab_flow_table_apply
reload_at=$SECONDS
check "mux and agents reload the table without $removed (SIGHUP)" lab_reload mux agent1 agent2
grep -h 'reloaded flow table' "$LAB_DIR"/mux.log "$LAB_DIR"/agent*.log | sed 's/^/# /'
check "mux logs version 2" grep -q 'reloaded flow table: version 2' "$LAB_DIR/mux.log"
check "mux flow table version 2 after the reload" test "$(mux_version)" = 2

# 3. every connection once more
round exchange
check "connections on the remaining backends answered by the same backend; none by $removed" \
	judge 1 exchange

# 4. new connections
round new 40
check "40 new connections on :$conn_port, none to $removed" judge 2 new
check "100 HTTP requests after the reload, none to $removed (weights 1,0,1,1)" \
	t_burst 100 1,0,1,1
echo "# removal checked $((SECONDS - reload_at)) s after the reload"

# 5. a broken table is refused: the mux keeps the one it has
lab_flow_table "$LAB_VIP_PORT:$LAB_BE_PORT $conn_port:$conn_port" "vm11=70000 vm21=1 vm22=1"
lab_flow_table_apply mux
refused_before=$(count_lines 'reload refused' "$LAB_DIR/mux.log")
# lab_reload fails on a refusal, which is what this step wants: judged below.
if lab_reload mux 2>/dev/null; then
	echo "# the mux accepted the broken table"
fi
refused_line=$(awk 'index($0, "reload refused") { l = $0 } END { print l }' "$LAB_DIR/mux.log")
echo "# $refused_line"
refused_named() {
	[ "$(count_lines 'reload refused' "$LAB_DIR/mux.log")" -gt "$refused_before" ] &&
		[[ $refused_line == *'reload refused: '*weight* ]]
}
check "the mux logs 'reload refused' naming the field (weight)" refused_named
check "the mux is still running" lab_alive mux
check "its flow table version is still 2" test "$(mux_version)" = 2
check "it still forwards: an HTTP request through the VIP" lab_http_ok
round exchange
check "the surviving connections still answered by their backend" judge 3 exchange
# put the good table back into the file (not reloaded: nothing changes)
lab_flow_table "$LAB_VIP_PORT:$LAB_BE_PORT $conn_port:$conn_port" "$left"
lab_flow_table_apply mux

touch "$LAB_DIR/conns/stop"
conns_gone() { ! lab_alive conns; }
wait_or_note conns_gone
lab_kill conns
check "the connection client exits 0" t_status_zero conns

t_end
check "mux JSON: version 2 (one reload counted, the refused one not)" \
	test "$(t_json mux version)" = 2
check "agents' JSON: version 2" \
	test "$(t_json agent1 version)" = 2 -a "$(t_json agent2 version)" = 2
t_check_clean
t_finish
