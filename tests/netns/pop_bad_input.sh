#!/usr/bin/env bash
# Bad input never announces a mux that cannot serve; every error names its field.
#
# The PoP's topology (scripts/netns-pop.sh), each case from a known state:
#   config errors  a missing BIRD, BIRD not on PATH, a BIRD that fails
#                  ("bird -p" of the generated configuration), a bad AS, a
#                  bad neighbor AS or address, a local address that is not
#                  the host's, keepalive above hold_time / 3: sluice-mux
#                  exits 1 before EAL starts, naming FILE:LINE: bgp.FIELD,
#                  and leaves no runtime or run folder behind.
#   unreachable    mux 1's neighbor is an address nobody has: mux 1 runs
#                  (answers ping), the router never learns a route through
#                  it (mux 2's arrives), and /sluice/route says why.
#   BIRD dies      kill -9 of mux 1's BIRD: the session drops and the router
#                  loses mux 1 at once; the speaker restarts BIRD and mux 1
#                  is announced again; the error is counted and reported.
. "$(dirname "$0")/pop_lib.sh"
pop_t_init
pop_init 2
pop_topology_up
lab_configs 1 1 1 1
pop_configs
echo "# topology up in $((SECONDS - T_START)) s"

# DIR/NAME.cfg: mux1.cfg with the bgp group's line matching FROM replaced by TO.
variant() {
	local name=$1 from=$2 to=$3 f=$LAB_DIR/$1.cfg
	sed "s|$from|$to|" "$LAB_DIR/mux1.cfg" >"$f"
	grep -qF -- "$to" "$f" || { echo "# variant $name: no line matches '$from'"; return 1; }
}

# One refused configuration: exit status 1, the message (after "FILE:LINE: "
# for an error of the file; as is, with "bird" for BIRD's own check),
# nothing started.
refused() {
	local name=$1 from=$2 to=$3 msg=$4 f=$LAB_DIR/$1.cfg line rc=0
	variant "$name" "$from" "$to" || { check "$name: the variant exists" false; return; }
	line=$(grep -nF -- "$to" "$f" | cut -d: -f1)
	[ "${5:-}" = bird ] || msg="$f:$line: $msg"
	timeout 20 ip netns exec "${POP_NS[1]}" "$SLUICE_MUX" -c "$f" >"$LAB_DIR/$name.out" 2>&1 || rc=$?
	echo "# $name: exit $rc: $(head -1 "$LAB_DIR/$name.out")"
	check "$name: exit status 1" test "$rc" -eq 1
	check "$name: the error says $msg" grep -qF -- "$msg" "$LAB_DIR/$name.out"
	check "$name: refused before EAL, nothing left behind" \
		bash -c "! grep -q '^EAL:' '$LAB_DIR/$name.out' && [ ! -e /var/run/dpdk/${POP_PFX[1]} ] &&
			[ ! -e /run/sluice/${POP_PFX[1]} ]"
}

case_config_errors() {
	refused missing-bird 'bird = "bird";' 'bird = "/nonexistent/sluice-bird";' \
		'bgp.bird: /nonexistent/sluice-bird is not an executable file'
	refused bird-not-on-path 'bird = "bird";' 'bird = "sluice-no-such-bird";' \
		'bgp.bird: "sluice-no-such-bird" not found on PATH'
	refused as-trans 'local_as = 65001;' 'local_as = 23456;' \
		'bgp.local_as: 23456 is AS_TRANS'
	refused neighbor-as-zero 'as = 65000;' 'as = 0;' \
		'bgp.neighbors[0].as: 0 is not an AS number'
	refused neighbor-address 'address = "10.255.0.254";' 'address = "10.255.0.300";' \
		'bgp.neighbors[0].address: "10.255.0.300" is not an IPv4 address'
	refused local-not-here 'local_address = "10.255.0.101";' 'local_address = "10.255.0.99";' \
		'bgp.local_address: 10.255.0.99 is not an address of this host'
	refused keepalive 'keepalive = 1;' 'keepalive = 2;' \
		'bgp.keepalive: 2 is more than a third of hold_time 3'
	refused failing-bird 'bird = "bird";' 'bird = "/bin/false";' \
		"bgp.bird: /bin/false -p -c /run/sluice/${POP_PFX[1]}/bird.conf failed (exit status 1)" bird
}

route_has_mux1() { [[ " $(pop_nexthops) " == *" ${POP_TA[1]} "* ]]; }
mux1_no_session() {
	pop_tel 1 /sluice/route | jq -e '.status | startswith("announced to no router")' >/dev/null
}

no_route_via_mux1() { ! LAB_WAIT=3 lab_poll route_has_mux1; }

case_unreachable() {
	local status
	variant unreachable 'address = "10.255.0.254";' 'address = "10.255.0.77";' || return 1
	check "unreachable: mux 1 starts and answers ping" pop_mux_start 1 "$LAB_DIR/unreachable.cfg"
	check "unreachable: mux 2 (a good neighbor) starts" pop_mux_start 2
	check "unreachable: the router learns the VIP through mux 2" pop_wait_nexthops "${POP_TA[2]}"
	check "unreachable: mux 1 reports no session established" lab_poll mux1_no_session
	status=$(pop_tel_field 1 /sluice/route .status)
	echo "# unreachable: mux 1's /sluice/route status: $status"
	check "unreachable: its status names the neighbor" grep -qF "10.255.0.77" <<<"$status"
	check "unreachable: no route through mux 1 appears at the router (3 s)" no_route_via_mux1
	check "unreachable: mux 1 still runs" lab_alive mux1
	pop_stop_muxes
}

mux1_session_up() {
	pop_tel 1 /sluice/route | jq -e '.session_state == ["Established"]' >/dev/null
}

case_bird_dies() {
	local bird out ms back errors err
	check "BIRD dies: mux 1 starts" pop_mux_start 1
	check "BIRD dies: mux 2 starts" pop_mux_start 2
	check "BIRD dies: the router has both next hops" pop_wait_nexthops "$(pop_all_tas)"
	bird=$(pop_tel_field 1 /sluice/route .bird_pid)
	# the route figures below judge it; a non-zero exit is only reported
	if ! out=$(pop_tool failover --vip "$LAB_VIP" --pid "$bird" --signal KILL --want "${POP_TA[2]}" \
		--timeout 5); then
		echo "# pop_tool failover exited non-zero: $out"
	fi
	ms=$(pop_field "$out" route_ms)
	check "BIRD dies: the router dropped mux 1 within 1 s ($ms ms)" \
		t_py -c "import sys; sys.exit(not (0 <= float('$ms') < 1000))"
	back=$SECONDS
	check "BIRD dies: restarted, mux 1 is announced again" pop_wait_nexthops "$(pop_all_tas)"
	echo "# BIRD dies: route gone $ms ms after kill -9 of BIRD, back within $((SECONDS - back + 1)) s"
	errors=$(pop_tel_field 1 /sluice/route .speaker_errors)
	err=$(pop_tel_field 1 /sluice/route .last_error)
	echo "# BIRD dies: speaker_errors $errors, last error: $err"
	check "BIRD dies: the speaker counted it ($errors)" test "$errors" -ge 1
	check "BIRD dies: and says what happened" grep -qF "killed by signal 9" <<<"$err"
	check "BIRD dies: a new BIRD runs" test "$(pop_tel_field 1 /sluice/route .bird_pid)" -ne "$bird"
	check "BIRD dies: its session is reported established again" lab_poll mux1_session_up
	pop_stop_muxes
	t_check_stopped mux1 mux2
}

case_config_errors
pop_frr_start
case_unreachable
case_bird_dies
t_check_clean
t_finish
