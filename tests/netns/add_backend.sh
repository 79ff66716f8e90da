#!/usr/bin/env bash
# Adding a backend to a running lab (SIGHUP: the mux and the agents re-read
# their flow table) while long-lived transfers run through the VIP.
#   1. The flow table lists three of the four VMs (vm22 is left out; agent 2
#      still has its port). 100 requests: none reaches vm22.
#   2. Two downloads of 24 MiB at 2 MiB/s (about 12 s each), one connection
#      each, start from source ports that the *new* table sends to vm22
#      (tests/netns/predict_ports.py asks sluice-mux itself, over a pcap of
#      SYNs, with the new configuration): only the mux's connection table
#      can keep them on their backends across the reload.
#   3. vm22 joins the flow table of the mux and both agents; SIGHUP all
#      three, wait for their "reloaded flow table" lines.
#   4. 300 short requests: vm22 now gets its share (the spread fits weights
#      1,1,1,1; vm22 within 5 binomial standard deviations of 1/4).
#   5. Each download completes byte for byte on its one connection to its
#      one backend: the mux's connection table keeps an established flow on
#      its backend although the new Maglev table sends its tuple to vm22.
#      Afterwards a new connection from each download's source port reaches
#      vm22: the reloaded table is the one predicted (the one a mux started
#      with the new file has).
#   6. The mux counted one reload: its JSON says version 2.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init

n_dl=2
all4="vm11=1 vm12=1 vm21=1 vm22=1"
lab_topology_up
lab_configs 1 1 1 1
lab_flow_table "$LAB_VIP_PORT:$LAB_BE_PORT" "vm11=1 vm12=1 vm21=1"
lab_flow_table_apply
lab_start_all 1 1 1 1
echo "# lab up in $((SECONDS - T_START)) s"

check "100 requests before: none to vm22 (weights 1,1,1,0)" t_burst 100 1,1,1,0

# source ports whose tuples the new table (all four) sends to vm22
cp "$LAB_DIR/mux.cfg" "$LAB_DIR/mux-next.cfg"
lab_flow_table "$LAB_VIP_PORT:$LAB_BE_PORT" "$all4"
lab_flow_table_apply mux-next
LAB_PREFIX["pred"]=${LAB_NSP}pred # lab_down removes it if left
names=$(for v in "${LAB_VMS[@]}"; do printf '%s=%s,' "$v" "${LAB_VM_DIP[$v]}"; done)
ip netns exec "$LAB_NS_MUX" "$LAB_PY" "$LAB_SRC/tests/netns/predict_ports.py" \
	--mux "$SLUICE_MUX" --cfg "$LAB_DIR/mux-next.cfg" --prefix "${LAB_PREFIX[pred]}" \
	--work "$LAB_DIR/predict" --client "$LAB_CLIENT_IP" --vip "$LAB_VIP" \
	--vport "$LAB_VIP_PORT" --ports 20000-20199 --names "${names%,}" >"$LAB_DIR/predict.out"
mapfile -t ports < <(awk '$2 == "vm22" {print $1}' "$LAB_DIR/predict.out" | head -n "$n_dl")
echo "# the new table sends $(grep -c ' vm22$' "$LAB_DIR/predict.out") of 200 source ports to vm22; downloads from ${ports[*]}"
check "$n_dl source ports that the new table sends to vm22" test "${#ports[@]}" -eq "$n_dl"

size=$((24 * 1024 * 1024))
t_big_file "$size" $(for ((i = 1; i <= n_dl; i++)); do echo "big$i.bin"; done)

dl_start=$SECONDS
for ((i = 1; i <= n_dl; i++)); do
	t_download "big$i.bin" 2M 60 --local-port "${ports[$((i - 1))]}"
done
for ((i = 1; i <= n_dl; i++)); do
	check "download $i is under way (1 MiB in)" lab_poll t_under_way "big$i.bin"
done
# which backend serves each: its http.server logged the request
declare -A server=()
for ((i = 1; i <= n_dl; i++)); do
	wait_or_note t_served_by "/big$i.bin"
	server[$i]=$(t_served_by "/big$i.bin") || server[$i]=
	echo "# download $i served by ${server[$i]:-?}"
done

# vm22 joins (DIR/flow_table.cfg is the table with all four)
lab_flow_table_apply
reload_at=$SECONDS
check "mux and agents reload the table with vm22 (SIGHUP)" lab_reload mux agent1 agent2
grep -h 'reloaded flow table' "$LAB_DIR"/mux.log "$LAB_DIR"/agent*.log | sed 's/^/# /'
running() { local i; for ((i = 1; i <= n_dl; i++)); do t_download_running "big$i.bin" || return 1; done; }
check "the downloads are still running after the reload" running

check "300 requests after: all answered, spread fits weights 1,1,1,1" \
	t_burst 300 1,1,1,1 --json "$LAB_DIR/after.json"
vm22=$(t_py -c 'import json,sys; print(json.load(open(sys.argv[1]))["counts"].get("vm22", 0))' \
	"$LAB_DIR/after.json")
# 300 * 1/4 = 75, binomial sd = sqrt(300 * 1/4 * 3/4) = 7.5: 75 +- 37
check "vm22 answered $vm22 of 300 (> 0, within 38..112)" test "$vm22" -ge 38 -a "$vm22" -le 112
check "the downloads are still running after the burst" running
burst_done=$SECONDS

dl_done() { local i; for ((i = 1; i <= n_dl; i++)); do t_download_ended "big$i.bin" || return 1; done; }
LAB_WAIT=60 wait_or_note dl_done
dl_end=$SECONDS
for ((i = 1; i <= n_dl; i++)); do
	rc=$(t_download_rc "big$i.bin")
	out=$(cat "$LAB_DIR/big$i.bin.out")
	echo "# download $i: $out (code size connects port time), exit $rc"
	check "download $i completes (curl exit 0, HTTP 200, one connection)" \
		bash -c "[ $rc -eq 0 ] && [[ '$out' == '200 $size 1 '* ]]"
	check "download $i arrived intact (sha256)" t_intact "big$i.bin"
	requests=$(count_lines "GET /big$i.bin" "$LAB_DIR"/http-vm*.log)
	check "download $i: one request in all backends' logs (no retry elsewhere): $requests" \
		test "$requests" -eq 1
done
echo "# downloads: +$((reload_at - dl_start)) s reload, +$((burst_done - dl_start)) s burst done, +$((dl_end - dl_start)) s all done"
check "they were long-lived: they outlasted the reload and the burst" test "$dl_end" -ge "$burst_done"

# Each download's tuple in the new table: its connection is closed, so a
# SYN from the same source port is a new connection, hashed again.
for ((i = 1; i <= n_dl; i++)); do
	port=${ports[$((i - 1))]}
	if ! now=$(ip netns exec "$LAB_NS_CLIENT" curl -s --max-time 2 --local-port "$port" \
		"http://$LAB_VIP/" | sed -n 's/served by \([^ ]*\) .*/\1/p'); then
		now="" # no answer: the check below fails
	fi
	check "download $i's tuple (port $port) now goes to vm22 (it went to ${server[$i]:-?}): ${now:-no answer}" \
		test "$now" = vm22
done

t_end
check "mux JSON: version 2 (one reload)" test "$(t_json mux version)" = 2
check "agents' JSON: version 2" \
	test "$(t_json agent1 version)" = 2 -a "$(t_json agent2 version)" = 2
t_check_clean
t_finish
