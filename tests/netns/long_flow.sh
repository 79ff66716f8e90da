#!/usr/bin/env bash
# A long-lived TCP transfer through the VIP (24 MiB at 4 MiB/s, about 6 s)
# keeps going, byte for byte, while
#   1. 200 short connections come and go beside it, and
#   2. the mux is restarted under it: the new process starts with an empty
#      connection table, the flow's next packets miss it, and Maglev over the
#      same flow table sends them to the same backend (losing the table must
#      never be fatal), then 100 more short connections.
# Adding a backend to a live mux waits for the manager (docs/lab.md): with
# static configs the only way to change a pool is a restart, which this
# test shows is survivable only when the pool stays the same.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
t_init
t_up 1 1 1 1

size=$((24 * 1024 * 1024))
t_big_file "$size" big.bin

dl_start=$SECONDS
t_download big.bin 4M 60
check "the download is under way (1 MiB in)" lab_poll t_under_way big.bin

# which backend serves it: its http.server logged the request
lab_poll t_served_by /big.bin
server=$(t_served_by /big.bin)
echo "# served by $server"

check "200 short connections beside the transfer all succeed" t_burst 200

# Restart the mux under the transfer.
lab_kill mux
check "the transfer is still running when the mux restarts" t_download_running big.bin
restart_at=$SECONDS
lab_mux_start
# the flow's next packets reach the new, empty mux: it picks a backend again
flow_back() { [ "$(t_tel "${LAB_PREFIX[mux]}" /sluice/stats conn_new)" -ge 1 ]; }
check "the flow reaches the restarted mux" lab_poll flow_back
dip_of_server=${LAB_VM_DIP[$server]}
new_conns=$(t_tel "${LAB_PREFIX[mux]}" /sluice/backends,0 |
	t_py -c 'import json,sys; b=json.load(sys.stdin); print(" ".join(f"{k}={v[2]}" for k, v in b.items()))')
echo "# restarted mux, new connections per backend: $new_conns"
# (late packets of the short connections may add entries of their own)
check "the restarted mux sends the flow to the same backend ($server)" \
	bash -c "[[ ' $new_conns ' != *' ${dip_of_server//./_}_8080=0 '* ]]"
check "100 short connections after the restart all succeed" t_burst 100

dl_done() { t_download_ended big.bin; }
LAB_WAIT=60 wait_or_note dl_done
dl_rc=$(t_download_rc big.bin)
dl_end=$SECONDS
echo "# download: $(cat "$LAB_DIR/big.bin.out") in $((dl_end - dl_start)) s, mux restarted at +$((restart_at - dl_start)) s"
check "the transfer completes (curl exit 0, HTTP 200, one connection)" \
	bash -c "[ $dl_rc -eq 0 ] && [[ \"\$(cat '$LAB_DIR/big.bin.out')\" == '200 $size 1 '* ]]"
check "every byte arrived intact (sha256)" t_intact big.bin
check "it was long-lived: it spanned the restart" test "$dl_end" -gt "$restart_at"
requests=$(grep -c 'GET /big.bin' "$LAB_DIR"/http-vm*.log | awk -F: '{s += $2} END {print s}')
check "one request for the file in all backends' logs (no retry elsewhere): $requests" \
	test "$requests" -eq 1

t_end
t_check_clean
t_finish
