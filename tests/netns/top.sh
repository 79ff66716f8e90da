#!/usr/bin/env bash
# sluicectl top (docs/protection.md, "Top talkers"), on real packets
# through the managed lab: a monitor rule makes the mux check, and count
# the sources of, the VIP's new connections; hping3 sends SYNs from five
# fixed (spoofed) sources, 300, 200, 100, 20 and 10 of them, each a new
# connection (hping3 moves the source port every packet). The mux's
# STATUS carries its summary, the manager merges it:
#   - the five counts exactly, with error 0 (fewer sources than the
#     summary's counters), largest first;
#   - while a sixth source sends 600 SYNs at 100 a second its rate shows,
#     and falls to 0 once it stops; its count then holds all it sent, and
#     the smallest source leaves the list (a mux reports its five largest);
#   - `sluicectl top VIP` merges the VIP's services: a second service's
#     SYNs from one of the sources add to its count.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
command -v hping3 >/dev/null || { echo "# no hping3 (scripts/install-deps.sh)"; exit 77; }
export LAB_MANAGED=1
t_init
t_up 1 1 1 1
svc="$LAB_VIP:$LAB_VIP_PORT"

check "a monitor rule on $svc commits (it counts, refuses nothing)" \
	lab_ctl limit set "$svc" new_per_second 1000000 --mode monitor
check "the mux runs it" lab_poll t_in_sync --ids mux

# syns SRC N [GAP_US] [PORT]: N SYNs from SRC to the VIP. hping3 exits 1 when
# nothing answered, as here (the SYN-ACKs go to SRC); what left is read
# from its summary.
syns() {
	local rc=0
	ip netns exec "$LAB_NS_CLIENT" hping3 -S -a "$1" -c "$2" -i "u${3:-1000}" \
		-p "${4:-$LAB_VIP_PORT}" "$LAB_VIP" >"$LAB_DIR/hping3-$1.log" 2>&1 || rc=$?
	[ "$rc" -le 1 ] && grep -q "^$2 packets transmitted" "$LAB_DIR/hping3-$1.log"
}
declare -A sent=([100.80.0.1]=300 [100.80.0.2]=200 [100.80.0.3]=100 [100.80.0.4]=20
	[100.80.0.5]=10)
for src in "${!sent[@]}"; do
	check "hping3 sends ${sent[$src]} SYNs from $src" syns "$src" "${sent[$src]}"
done

top_json() { lab_ctl --json top "$svc"; }
# counts_are SRC=N...: each SRC's count in top is N, with error 0
counts_are() {
	local kv want=
	for kv; do want+="\"${kv%=*}\":${kv#*=},"; done
	top_json | jq -e --argjson want "{${want%,}}" '
		[.top[] | select(.err == 0) | {(.src): .count}] | add as $got
		| all($want | to_entries[]; $got[.key] == .value)'
}
first=()
for src in "${!sent[@]}"; do first+=("$src=${sent[$src]}"); done
check "top counts each source exactly (300 200 100 20 10, error 0)" \
	lab_poll counts_are "${first[@]}"
lab_ctl top "$svc" | sed 's/^/# /'
largest_first() {
	top_json | jq -e '[.top[] | .src][0:3] == ["100.80.0.1", "100.80.0.2", "100.80.0.3"]'
}
check "the three largest lead, largest first" largest_first
check "one mux reports" test "$(top_json | jq .muxes)" -eq 1
check "top of a service that does not exist fails" bash -c \
	"! '$SLUICECTL' --manager 'ipc://$LAB_DIR/manager.sock' top 192.0.2.99:80 2>/dev/null"

# rates: 600 SYNs from a sixth source at 100 a second, in the background (a
# source of its own: another run from 100.80.0.1 could reuse source ports
# of its first, which are established flows, not new connections)
# (t_bg, not `wait PID`: the sluicectl calls meanwhile take pids, Found 23)
t_bg "$LAB_DIR/syns6.rc" syns 100.80.0.6 600 10000
rate_of_6() { top_json | jq -r '.top[] | select(.src == "100.80.0.6") | .rate'; }
rate_above() { test "$(rate_of_6 | cut -d. -f1)" -ge "$1"; }
check "while it sends 100 a second, its rate shows (over 20 a second)" lab_poll rate_above 20
echo "# rate of 100.80.0.6 while it sends: $(rate_of_6) per second"
syns6_rc=$(t_rc "$LAB_DIR/syns6.rc")
check "hping3 sent the 600 (exit $syns6_rc)" test "$syns6_rc" -eq 0
rate_zero() { test "$(rate_of_6)" = 0; }
check "once it stops, its rate falls to 0" lab_poll rate_zero
check "its count holds all it sent (600), the next four theirs" lab_poll counts_are \
	100.80.0.6=600 100.80.0.1=300 100.80.0.2=200 100.80.0.3=100 100.80.0.4=20
leads() { test "$(top_json | jq -r '[.top[].src] | .[0], length' | xargs)" = "100.80.0.6 5"; }
check "it leads, and a mux reports its five largest: 100.80.0.5's 10 left the list" leads
lab_ctl top "$svc" | sed 's/^/# /'

# a VIP's top talkers over its services: a second service of the VIP, with
# its own rule, gets 50 SYNs from 100.80.0.1 (vm11 answers them with RSTs)
svc2="$LAB_VIP:8081"
check "a second service of the VIP, with a backend and a monitor rule" bash -c "
	'$SLUICECTL' --manager 'ipc://$LAB_DIR/manager.sock' vip add $svc2 &&
	'$SLUICECTL' --manager 'ipc://$LAB_DIR/manager.sock' backend add $svc2 \
		${LAB_VM_DIP[vm11]}:8081 --host ${LAB_HOST_PA[1]} &&
	'$SLUICECTL' --manager 'ipc://$LAB_DIR/manager.sock' limit set $svc2 new_per_second \
		1000000 --mode monitor" >/dev/null
check "the mux runs it" lab_poll t_in_sync --ids mux
check "hping3 sends 50 SYNs from 100.80.0.1 to $svc2" syns 100.80.0.1 50 1000 8081
vip_has() { # SRC COUNT LISTS: in top VIP
	lab_ctl --json top "$LAB_VIP" | jq -e --arg s "$1" --argjson n "$2" --argjson l "$3" \
		'.services == 2 and ([.top[] | select(.src == $s and .count == $n and .lists == $l
		and .err == 0)] | length == 1)'
}
check "top $LAB_VIP merges its two services: 100.80.0.1 300 + 50, in two lists" \
	lab_poll vip_has 100.80.0.1 350 2
check "and the others of the first service as they were" vip_has 100.80.0.6 600 1
lab_ctl top "$LAB_VIP" | sed 's/^/# /'
check "top of an IPv4 address with no service fails" bash -c \
	"! '$SLUICECTL' --manager 'ipc://$LAB_DIR/manager.sock' top 192.0.2.99 2>/dev/null"

t_finish
