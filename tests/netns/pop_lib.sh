# shellcheck shell=bash
# Sourced by the PoP tests (tests/netns/pop_*.sh): lib.sh, the PoP's lab
# functions (scripts/netns-pop.sh, where the topology is drawn), and what
# those tests share: FRR and BIRD present, logs of every mux and of FRR on
# failure, timing through scripts/pop_tool.py.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$LAB_SRC/scripts/netns-pop.sh"

for _c in bird vtysh "$SLUICE_FRR_DIR/zebra" "$SLUICE_FRR_DIR/bgpd" jq; do
	command -v "$_c" >/dev/null ||
		{ echo "FAIL $T_NAME: $_c not installed (scripts/install-deps.sh)"; exit 1; }
done

pop_t_cleanup() {
	local rc=$? f
	lab_down
	if [ "$rc" -ne 0 ] || [ "$T_FAILED" -ne 0 ]; then
		for f in "$LAB_DIR"/mux[0-9]*.log "$LAB_DIR"/frr-*.log; do
			[ -e "$f" ] && { echo "--- $f"; grep -v '^EAL:\|multiq\|rte flow\|qdisc' "$f" | tail -60; }
		done
	fi
	(exit "$rc")
	t_cleanup
}

pop_t_init() {
	t_init
	trap pop_t_cleanup EXIT
}

# pop_up_all N, then say how long it took and check the N-way ECMP route.
pop_t_up() {
	pop_up_all "$1"
	echo "# PoP up in $((SECONDS - T_START)) s; router: $LAB_VIP via $(pop_nexthops)"
	check "the router holds a $1-way ECMP route for the VIP" pop_nexthops_are "$(pop_all_tas)"
}

# A field of mux ID's row in the manager's status --json (LAB_MANAGED=1).
pop_mux_json() { t_member "$1" "$2"; }

# pop_tool.py in the router's namespace.
pop_tool() { ip netns exec "$LAB_NS_ROUTER" "$LAB_PY" "$LAB_SRC/scripts/pop_tool.py" "$@"; }

# A JSON field of pop_tool's output: pop_field JSON KEY
pop_field() { jq -r ".$2" <<<"$1"; }

# Mux i's telemetry field: pop_tel_field I COMMAND JQ_PATH
pop_tel_field() { pop_tel "$1" "$2" | jq -r "$3"; }

# SIGTERM every mux at once, then wait for each (their drains overlap).
pop_stop_muxes() {
	local i pid
	for ((i = 1; i <= POP_N; i++)); do
		if pid=$(lab_pid "mux$i"); then kill -TERM "$pid" 2>/dev/null || true; fi
	done
	for ((i = 1; i <= POP_N; i++)); do lab_kill "mux$i"; done
}

# Files of SIZE bytes for every VM (hard links of one), and its sha256.
pop_big_file() {
	local name=$1 size=$2 v
	head -c "$size" /dev/urandom >"$LAB_DIR/$name"
	for v in "${LAB_VMS[@]}"; do ln -f "$LAB_DIR/$name" "$LAB_DIR/www/$v/$name"; done
	sha256sum <"$LAB_DIR/$name"
}

# N rate-limited downloads of DIR/big.bin through the VIP (pop_big_file
# first), each with t_bg: pids in POP_DL, DIR/got<k>.bin, curl's summary in
# DIR/dl<k>.out, its exit code in DIR/dl<k>.rc once it ends.
pop_downloads_start() {
	local n=$1 rate=$2 k
	POP_DL=()
	for ((k = 1; k <= n; k++)); do
		t_bg "$LAB_DIR/dl$k.rc" ip netns exec "$LAB_NS_CLIENT" curl -s --max-time 60 \
			--limit-rate "$rate" -o "$LAB_DIR/got$k.bin" \
			-w '%{http_code} %{size_download} %{num_connects} %{time_total}\n' \
			"http://$LAB_VIP/big.bin" >"$LAB_DIR/dl$k.out" 2>&1
		POP_DL+=("$T_DL")
	done
}

# Every download has more than BYTES.
pop_downloads_past() {
	local k
	for ((k = 1; k <= ${#POP_DL[@]}; k++)); do
		[ "$(stat -c %s "$LAB_DIR/got$k.bin" 2>/dev/null || echo 0)" -gt "$1" ] || return 1
	done
}

# How many downloads still run.
pop_downloads_running() {
	local k n=0
	for ((k = 1; k <= ${#POP_DL[@]}; k++)); do
		t_ended "$LAB_DIR/dl$k.rc" || n=$((n + 1))
	done
	echo "$n"
}

# pop_downloads_spread N SIZE RATE PAST: N downloads (pop_downloads_start)
# of a SIZE-byte big.bin (pop_big_file, its sha256 in POP_WANT, the
# client's TCP resets so far in POP_RESETS0); checks that each is past PAST
# bytes and that both muxes carry some (their conn_new in POP_C1, POP_C2).
pop_downloads_spread() {
	local n=$1 size=$2 rate=$3 past=$4
	POP_WANT=$(pop_big_file big.bin "$size")
	POP_RESETS0=$(pop_client_resets)
	pop_downloads_start "$n" "$rate"
	check "all $n downloads are under way ($((past / 1024)) KiB each)" lab_poll pop_downloads_past "$past"
	POP_C1=$(pop_tel_field 1 /sluice/stats .conn_new)
	POP_C2=$(pop_tel_field 2 /sluice/stats .conn_new)
	echo "# new connections so far: mux1 $POP_C1, mux2 $POP_C2"
	check "both muxes carry some downloads (mux1 $POP_C1, mux2 $POP_C2)" \
		test "$POP_C1" -ge 1 -a "$POP_C2" -ge 1
}

# The client's TCP EstabResets counter.
pop_client_resets() { t_py "$LAB_SRC/scripts/lab_tool.py" snmp "$LAB_NS_CLIENT" | jq .Tcp.EstabResets; }

# Wait for every download; check each completed on its one connection
# (curl exit 0, HTTP 200, SIZE bytes) and matches the sha256 WANT.
pop_downloads_check() {
	local size=$1 want=$2 k rc fails=0 bad=0
	for ((k = 1; k <= ${#POP_DL[@]}; k++)); do
		rc=$(t_rc "$LAB_DIR/dl$k.rc")
		if [ "$rc" -ne 0 ] || [[ "$(cat "$LAB_DIR/dl$k.out")" != "200 $size 1 "* ]]; then
			echo "# download $k: curl exit $rc, $(cat "$LAB_DIR/dl$k.out")"
			fails=$((fails + 1))
		fi
		[ "$(sha256sum <"$LAB_DIR/got$k.bin")" = "$want" ] || bad=$((bad + 1))
	done
	echo "# download times (s): $(awk '{print $4}' "$LAB_DIR"/dl*.out | sort -n | xargs)"
	check "every download completed on its one connection (curl exit 0, HTTP 200, $size bytes): $fails failed" \
		test "$fails" -eq 0
	check "every download is intact (sha256): $bad differ" test "$bad" -eq 0
}

# pop_downloads_check of pop_downloads_spread's downloads (SIZE bytes),
# then no connection of the client reset since they started and one
# request each in the servers' logs (none retried).
pop_downloads_check_clean() {
	local size=$1 resets requests
	pop_downloads_check "$size" "$POP_WANT"
	resets=$(($(pop_client_resets) - POP_RESETS0))
	check "no connection was reset (client's TCP EstabResets +$resets)" test "$resets" -eq 0
	requests=$(cat "$LAB_DIR"/http-vm*.log | awk '/GET \/big\.bin/ { n++ } END { print n + 0 }')
	check "${#POP_DL[@]} requests for the file in the servers' logs, no retry ($requests)" \
		test "$requests" -eq "${#POP_DL[@]}"
}

# The manager's VIP probes to mux I fail (pop_block_probes) or pass again
# (pop_unblock_probes): a policy rule in the router, where the manager
# runs, refuses its IP-in-IP toward mux I's tunnel address (a failed send
# counts as an unanswered probe). The clients' traffic to the VIP, BGP and
# the members' channel are untouched: only the probes fail.
pop_block_probes() {
	ip -n "$LAB_NS_ROUTER" rule add pref 100 to "${POP_TA[$1]}/32" ipproto 4 prohibit
}
pop_unblock_probes() {
	ip -n "$LAB_NS_ROUTER" rule del pref 100 to "${POP_TA[$1]}/32" ipproto 4 prohibit
}

# Is mux I's BGP session established at the router?
pop_session_up() {
	[ "$(pop_vtysh "show bgp neighbor ${POP_MG[$1]} json" |
		jq -r ".\"${POP_MG[$1]}\".bgpState")" = Established ]
}

# pop_sampler_start: the router's route for the VIP, every 0.1 s, into
# LAB_DIR/nexthops.log ("<ms> <next hops>"), until pop_sampler_stop MIN,
# which first lets it take MIN samples in all (a window of known length,
# however fast the checks between were).
pop_sampler_start() {
	: >"$LAB_DIR/nexthops.log"
	(
		while :; do
			echo "$(date +%s%3N) $(pop_nexthops)" >>"$LAB_DIR/nexthops.log"
			sleep 0.1
		done
	) &
	POP_SAMPLER=$!
}
pop_sampler_samples() { [ "$(wc -l <"$LAB_DIR/nexthops.log")" -ge "$1" ]; }
pop_sampler_stop() {
	lab_poll pop_sampler_samples "$1"
	kill "$POP_SAMPLER"
	# it ends by the signal: its status (143) is not a failure
	wait "$POP_SAMPLER" 2>/dev/null || [ $? -eq 143 ]
}

# pop_kill_mux1: kill -9 of mux 1; checks that the router routes through
# mux 2 only, then waits for mux 1's BGP session to be down at the router.
pop_kill_mux1() {
	kill -KILL "$(lab_pid mux1)"
	pop_wait_nexthops 10.255.0.2
	lab_kill mux1
	check "mux 1 killed: the router routes through mux 2 only" pop_nexthops_are 10.255.0.2
	lab_poll pop_session_down 1
}
pop_session_down() { ! pop_session_up "$1"; }
