#!/usr/bin/env bash
# What breaks when a connection moves to another mux after its pool changed.
#
# Every mux picks the same backend for a flow (same seed, same Maglev
# table, same version), so a flow ECMP moves to another mux keeps its
# backend: netns_pop_kill and netns_pop_mux_drain show it. But a mux keeps
# a connection on its backend across table versions through its own
# connection table; the mux a flow moves to has no entry for it and asks
# the current Maglev table, whose slot for the flow may have changed since
# the connection started. Here, in a managed PoP (LAB_MANAGED=1):
#   1. 40 rate-limited downloads, each on a known client port: the
#      router's ECMP choice for each (sniffed on its bridge ports) says
#      which mux carries it, the VMs' sockets which backend serves it.
#   2. vm22's weight goes 1 -> 4: a new Maglev table on both muxes
#      (the downloads keep their backends through the connection tables).
#   3. mux 1 is drained: its flows move to mux 2.
# Every download that stayed on mux 2 (or ended before the drain)
# completes; of those that moved, the
# ones whose Maglev slot changed meet another backend and are reset. The
# fraction reset is printed (docs/routing.md has the figures) and each
# reset download was one that moved.
. "$(dirname "$0")/pop_lib.sh"
export LAB_MANAGED=1
pop_t_init
pop_up_all 2
echo "# managed PoP up in $((SECONDS - T_START)) s; router: $LAB_VIP via $(pop_nexthops)"

# A small receive buffer: each download keeps sending ACKs and window
# updates at curl's rate, not only until the file sits in its socket.
ip netns exec "$LAB_NS_CLIENT" sysctl -qw net.ipv4.tcp_rmem="4096 16384 32768"
N=40
PORT0=31000
size=$((2 * 1024 * 1024))
want=$(pop_big_file big.bin "$size")
c1_0=$(pop_tel_field 1 /sluice/stats .conn_new)
# Which mux carries each download: the router's ECMP choice, sniffed on its
# bridge ports from the first SYN on (a download may end early: curl's rate
# limit is an average, and one that fell behind catches up at full speed).
# (t_bg, not `wait PID`: the downloads and sluicectl calls take pids,
# docs/reliability.md, Found 23)
t_bg "$LAB_DIR/sniff.rc" pop_tool ports --vip "$LAB_VIP" --if rt-mux --if rt-mux2 --ms 30000 \
	--enough "$N" --ports "$((PORT0 + 1))-$((PORT0 + N))" --ready "$LAB_DIR/sniffing" \
	>"$LAB_DIR/ports.json"
check "the router's bridge ports are sniffed" lab_poll test -e "$LAB_DIR/sniffing"
DL=()
for ((k = 1; k <= N; k++)); do
	t_bg "$LAB_DIR/dl$k.rc" ip netns exec "$LAB_NS_CLIENT" curl -s --max-time 60 \
		--limit-rate 160K --local-port $((PORT0 + k)) -o "$LAB_DIR/got$k.bin" \
		-w '%{http_code} %{size_download} %{num_connects}\n' \
		"http://$LAB_VIP/big.bin" >"$LAB_DIR/dl$k.out" 2>&1
	DL+=("$T_DL")
done
POP_DL=("${DL[@]}")
under_way() { pop_downloads_past 131072; }
check "all $N downloads are under way (128 KiB each)" lab_poll under_way

# Which mux (the sniff) and which backend (the VMs' sockets) carry each
# port. Any state but listening: a server that wrote the whole file into a
# large enough send buffer has closed its end (FIN-WAIT-1) while the
# rate-limited client still reads, and one whose download ended early is in
# TIME-WAIT.
declare -A MUX_OF BE_OF
sniff_rc=$(t_rc "$LAB_DIR/sniff.rc")
check "the sniff of the bridge ports ended well (exit $sniff_rc)" test "$sniff_rc" -eq 0
ports=$(cat "$LAB_DIR/ports.json")
for p in $(jq -r '."rt-mux"[]' <<<"$ports"); do MUX_OF[$((p - PORT0))]=10.255.0.1; done
for p in $(jq -r '."rt-mux2"[]' <<<"$ports"); do MUX_OF[$((p - PORT0))]=10.255.0.2; done
for v in "${LAB_VMS[@]}"; do
	for p in $(ip netns exec "$(lab_ns_vm "$v")" ss -Htn state connected "sport = :$LAB_BE_PORT" |
		awk '{print $NF}' | sed 's/.*://'); do
		if [ "$p" -gt "$PORT0" ] && [ "$p" -le $((PORT0 + N)) ]; then BE_OF[$((p - PORT0))]=$v; fi
	done
done
check "each download's mux is known (${#MUX_OF[@]} of $N)" test "${#MUX_OF[@]}" -eq "$N"
on1=0
for ((k = 1; k <= N; k++)); do
	if [ "${MUX_OF[$k]:-}" = 10.255.0.1 ]; then on1=$((on1 + 1)); fi
done
c1=$(($(pop_tel_field 1 /sluice/stats .conn_new) - c1_0))
echo "# by the ports on its bridge port, mux1 carries $on1 of $N downloads (its conn_new: +$c1)"
check "the ports seen on mux1's port agree with its connection count ($on1, $c1)" test "$on1" -eq "$c1"
check "each download's backend is known (${#BE_OF[@]} of $N)" test "${#BE_OF[@]}" -eq "$N"

# The pool changes under them, then mux 1's flows move to mux 2.
check "vm22's weight 1 -> 4 commits" lab_ctl backend set "$T_SVC" \
	"${LAB_VM_DIP[vm22]}:$LAB_BE_PORT" --weight 4
check "both muxes run it" lab_poll t_in_sync --ids mux1,mux2
resets0=$(pop_client_resets)
declare -A RUNNING=()
for ((k = 1; k <= N; k++)); do
	if ! t_ended "$LAB_DIR/dl$k.rc"; then RUNNING[$k]=1; fi
done
check "sluicectl mux drain mux1 commits" lab_ctl mux drain mux1
pop_wait_nexthops 10.255.0.2

moved=0 moved_reset=0 stayed=0 stayed_bad=0 early=0
declare -A LOST_BY=()
for ((k = 1; k <= N; k++)); do
	rc=$(t_rc "$LAB_DIR/dl$k.rc")
	ok=0
	[ "$rc" -eq 0 ] && [[ "$(cat "$LAB_DIR/dl$k.out")" == "200 $size 1"* ]] &&
		[ "$(sha256sum <"$LAB_DIR/got$k.bin")" = "$want" ] && ok=1
	if [ -z "${RUNNING[$k]:-}" ]; then
		# it ended before the drain: it moved nowhere (it must be intact)
		early=$((early + 1))
		[ "$ok" = 1 ] || stayed_bad=$((stayed_bad + 1))
	elif [ "${MUX_OF[$k]:-}" = 10.255.0.1 ]; then
		moved=$((moved + 1))
		if [ "$ok" = 0 ]; then
			moved_reset=$((moved_reset + 1))
			b=${BE_OF[$k]:-unknown}
			LOST_BY[$b]=$((${LOST_BY[$b]:-0} + 1))
		fi
	else
		stayed=$((stayed + 1))
		[ "$ok" = 1 ] || stayed_bad=$((stayed_bad + 1))
	fi
done
resets=$(($(pop_client_resets) - resets0))
pct=$(t_py -c "print(f'{100 * $moved_reset / max($moved, 1):.0f}')")
echo "# RESET FRACTION: $moved_reset of $moved connections moved from mux1 to mux2 after the pool" \
	"changed were reset ($pct %); $stayed stayed on mux2 and $early had ended before the" \
	"drain, $stayed_bad of those broke"
echo "# reset connections by their old backend: $(for v in "${!LOST_BY[@]}"; do echo -n "$v=${LOST_BY[$v]} "; done)"
echo "# the client's TCP counted $resets resets; vm22's share went 1/4 -> 4/7, so at least" \
	"$(t_py -c 'print(f"{100 * (4 / 7 - 1 / 4):.0f}")') % of the Maglev slots changed backend"
check "every download that stayed on mux 2 or ended before the drain completed intact ($stayed_bad of $((stayed + early)) broke)" \
	test "$stayed_bad" -eq 0
check "some downloads moved ($moved)" test "$moved" -ge 1
check "the client's resets are the moved downloads that broke ($resets, $moved_reset)" \
	test "$resets" -eq "$moved_reset"
check "none reset on vm22, which only gained slots (${LOST_BY[vm22]:-0})" test "${LOST_BY[vm22]:-0}" -eq 0

pop_stop_muxes
t_check_stopped mux1 mux2
t_check_clean
t_finish
