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
		pid=$(lab_pid "mux$i") && kill -TERM "$pid" 2>/dev/null || true
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
