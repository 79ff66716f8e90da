#!/usr/bin/env bash
# withdraw_below per VIP: when a VIP's healthy backends fall below it,
# every mux withdraws that VIP; the other VIPs stay announced.
#
# A managed PoP (LAB_MANAGED=1) with two VIPs: 192.0.2.10 (the lab's,
# four backends, HTTP probes of /health.html) and 192.0.2.11 (two of the
# same VMs, TCP probes). Both pools fail open never (min_healthy 0) and
# withdraw below 1 healthy backend.
#   0. An IPv6 VIP added: no mux announces it (BGP carries IPv4 VIPs), nor
#      a made-up IPv4 /32 of its first four bytes.
#   1. The rule: withdraw_below under min_healthy is refused naming both
#      fields, the committed version untouched.
#   2. /health.html disappears from every VM: all of 192.0.2.10's
#      backends fail their probes, the manager commits the VIP withdrawn,
#      both muxes withdraw it: the router loses its route. 192.0.2.11's
#      route stays, through both muxes.
#   3. The file is back: healthy again, announced again by both.
. "$(dirname "$0")/pop_lib.sh"
export LAB_MANAGED=1
pop_t_init
pop_up_all 2
echo "# managed PoP up in $((SECONDS - T_START)) s; router: $LAB_VIP via $(pop_nexthops)"
VIP2=192.0.2.11
nexthops_of() {
	ip -n "$LAB_NS_ROUTER" route show "$1/32" | grep -o 'via [0-9.]*' | awk '{print $2}' | sort | xargs
}
nexthops_of_are() { [ "$(nexthops_of "$1")" = "$2" ]; }
health_file() { local v; for v in "${LAB_VMS[@]}"; do "$@" "$LAB_DIR/www/$v/health.html"; done; }
health_file touch

check "vip add $VIP2:80" lab_ctl vip add "$VIP2:80"
for v in vm11 vm21; do
	check "backend add $VIP2:80 ${LAB_VM_DIP[$v]}:$LAB_BE_PORT" lab_ctl backend add "$VIP2:80" \
		"${LAB_VM_DIP[$v]}:$LAB_BE_PORT" --host "${LAB_HOST_PA[${LAB_VM_HOST[$v]}]}"
done
POOL=(--interval 1 --probe-timeout 1 --healthy 2 --unhealthy 2 --drain-delay 0 --min-healthy 0)
check "$T_SVC: HTTP probes of /health.html, withdraw below 1" lab_ctl vip set "$T_SVC" \
	--probe http --path /health.html --codes 200 "${POOL[@]}" --withdraw-below 1
check "$VIP2:80: TCP probes, withdraw below 1" lab_ctl vip set "$VIP2:80" --probe tcp \
	"${POOL[@]}" --withdraw-below 1

# 1. the rule
v0=$(t_committed)
rc=0
out=$(lab_ctl vip set "$T_SVC" --min-healthy 2 --withdraw-below 1 2>&1) || rc=$?
echo "# vip set --min-healthy 2 --withdraw-below 1: exit $rc: $out"
check "withdraw_below under min_healthy is refused (exit $rc), naming both fields" \
	bash -c "[ $rc -ne 0 ] && [[ '$out' == *withdraw_below* ]] && [[ '$out' == *min_healthy* ]]"
check "the committed version is untouched ($v0 -> $(t_committed))" test "$(t_committed)" -eq "$v0"

both="10.255.0.1 10.255.0.2"
check "the router routes $LAB_VIP through both muxes" lab_poll nexthops_of_are "$LAB_VIP" "$both"
check "and $VIP2 through both" lab_poll nexthops_of_are "$VIP2" "$both"

# An IPv6 VIP is not announced over BGP (IPv4 VIPs only): not as the IPv4
# /32 of its first four bytes either (2001:db8:: is 32.1.13.184).
check "vip add [2001:db8::10]:80" lab_ctl vip add "[2001:db8::10]:80"
muxes_say_v6() {
	grep -q "bgp: 1 IPv6 services: their VIPs are not announced" "$LAB_DIR/mux1.log" &&
		grep -q "bgp: 1 IPv6 services: their VIPs are not announced" "$LAB_DIR/mux2.log"
}
check "each mux runs it, and says its VIP is not announced" lab_poll muxes_say_v6
sleep 2 # announcements are made within a second of a new version
check "the router has no route for 32.1.13.184 (got: $(nexthops_of 32.1.13.184))" \
	nexthops_of_are 32.1.13.184 ""
check "vip del [2001:db8::10]:80" lab_ctl vip del "[2001:db8::10]:80"
check "the router still routes $LAB_VIP and $VIP2 through both muxes" \
	bash -c "[ '$(nexthops_of "$LAB_VIP")' = '$both' ] && [ '$(nexthops_of "$VIP2")' = '$both' ]"
all_healthy() { [ "$(lab_ctl --json vip list | jq "[.services[] | select(.vip == \"$LAB_VIP\") | .healthy] | .[0]")" = 4 ]; }
check "the four backends of $LAB_VIP are healthy" lab_poll all_healthy

# 2. every backend of the first VIP fails its probes
v0=$(t_committed)
t0=$(date +%s%3N)
health_file rm -f
check "$LAB_VIP's route leaves the router" lab_poll nexthops_of_are "$LAB_VIP" ""
echo "# $LAB_VIP withdrawn from the router $(($(date +%s%3N) - t0)) ms after its health file went"
check "$VIP2 stays announced through both muxes" nexthops_of_are "$VIP2" "$both"
withdrawn() { lab_ctl --json vip list | jq -r ".services[] | select(.vip == \"$1\") | .withdrawn"; }
check "vip list: $LAB_VIP withdrawn, $VIP2 not" \
	bash -c "[ '$(withdrawn "$LAB_VIP")' = true ] && [ '$(withdrawn "$VIP2")' = false ]"
check "the withdrawal is a committed version ($v0 -> $(t_committed))" test "$(t_committed)" -gt "$v0"
lab_ctl history --limit 3 | sed 's/^/# /'
# mux I's report of VIP in status: why it withholds it ("" when announced)
vip_reason() {
	lab_ctl --json status | jq -r ".members[] | select(.id == \"mux$1\") |
		.route.withheld[] | select(.vip == \"$2\") | .reason"
}
vip_held_by() { [ "$(vip_reason "$1" "$2")" = VIP_HELD ]; }
for i in 1 2; do
	check "mux$i reports $LAB_VIP withheld as VIP_HELD in status" lab_poll vip_held_by "$i" "$LAB_VIP"
	check "mux$i still announces $VIP2" test -z "$(vip_reason "$i" "$VIP2")"
done
lab_ctl status | grep -A3 '^  mux1 ' | sed 's/^/# /'

# 3. back
t0=$(date +%s%3N)
health_file touch
check "$LAB_VIP is announced again through both muxes" lab_poll nexthops_of_are "$LAB_VIP" "$both"
echo "# $LAB_VIP back in the router $(($(date +%s%3N) - t0)) ms after its health file came back"
check "vip list: $LAB_VIP no longer withdrawn" test "$(withdrawn "$LAB_VIP")" = false
check "requests through $LAB_VIP work again" lab_wait_vip

pop_stop_muxes
t_check_stopped mux1 mux2
t_check_clean
t_finish
