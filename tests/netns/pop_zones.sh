#!/usr/bin/env bash
# withdraw_below per zone (docs/routing.md, "Per zone"): with cross_zone
# off, a zone whose healthy backends fall below the pool's withdraw_below
# has its muxes withdraw the VIP, the other zones keep it; when every zone
# is below, the VIP is announced everywhere (as ALB sends to every zone
# when all are unhealthy).
#
# A managed PoP (LAB_MANAGED=1) with mux 1 in zone a and mux 2 in zone b
# (POP_ZONES="a b"); the lab's VIP over vm11, vm12 (host 1, zone a) and
# vm21, vm22 (host 2, zone b), cross_zone = false, HTTP probes of
# /health.html, fail-open never (min_healthy 0), withdraw below 1.
#   1. all healthy: both muxes announce.
#   2. zone a's two VMs lose /health.html: the manager withdraws the VIP in
#      zone a; the router keeps only mux 2's next hop, mux 1 says why,
#      requests still succeed (through mux 2, to zone b).
#   3. zone b's too: every zone is below: both announce again.
#   4. every file back: both announce, nothing withdrawn.
. "$(dirname "$0")/pop_lib.sh"
export LAB_MANAGED=1 POP_ZONES="a b"
pop_t_init
pop_t_up 2
both="10.255.0.1 10.255.0.2"
health_file() { # touch|rm VM...: its /health.html
	local op=$1 v
	shift
	for v in "$@"; do
		if [ "$op" = touch ]; then touch "$LAB_DIR/www/$v/health.html"; else rm -f "$LAB_DIR/www/$v/health.html"; fi
	done
}
health_file touch "${LAB_VMS[@]}"
# Zones and cross_zone off: the operator's way to them (export, edit, apply).
lab_ctl config export >"$LAB_DIR/services.cfg"
t_py - "$LAB_DIR/services.cfg" "$LAB_VIP_PORT" <<'PY'
import re, sys
path, port = sys.argv[1], sys.argv[2]
text = open(path).read()
def zone(m):
    z = "a" if m.group(2).startswith("10.1.") else "b"
    return m.group(1) + ' zone = "%s";' % z + m.group(3)
text, n = re.subn(r'(\{ dip = "(10\.[12]\.1\.\d+)"; port = 8080;[^}]*?)( \})', zone, text)
assert n == 4, text
text = text.replace("port = %s;\n" % port, "port = %s;\n\t\t\tcross_zone = false;\n" % port, 1)
open(path, "w").write(text)
PY
grep -n 'zone' "$LAB_DIR/services.cfg" | sed 's/^/# /'
check "zones and cross_zone = false (config apply)" lab_ctl config apply "$LAB_DIR/services.cfg"
check "$T_SVC: HTTP probes of /health.html, withdraw below 1" lab_ctl vip set "$T_SVC" \
	--probe http --path /health.html --codes 200 --interval 1 --probe-timeout 1 --healthy 2 \
	--unhealthy 2 --drain-delay 0 --min-healthy 0 --withdraw-below 1
healthy_all() { [ "$(lab_ctl --json vip list | jq "[.services[] | select(.vip == \"$LAB_VIP\") | .healthy] | .[0]")" = 4 ]; }
check "the four backends are healthy" lab_poll healthy_all
check "1. both muxes announce the VIP" lab_poll pop_nexthops_are "$both"

# 2. zone a below
t0=$(date +%s%3N)
health_file rm vm11 vm12
check "2. zone a below: the router keeps mux 2 (zone b) alone" lab_poll pop_nexthops_are 10.255.0.2
echo "# withdrawn from zone a $(($(date +%s%3N) - t0)) ms after its health files went"
reason() { pop_tel 1 /sluice/route | jq -r '[.. | strings | select(test("zone"))] | .[0] // ""'; }
zone_reason() { reason | grep -q "in this mux's zone"; }
check "mux 1 says it is withdrawn in its zone" lab_poll zone_reason
echo "# mux 1: $(reason)"
check "the manager said so" lab_poll grep -q "WITHDRAW $LAB_VIP in zone a" "$LAB_DIR/manager.log"
wz() { lab_ctl --json vip list | jq -c "[.services[] | select(.vip == \"$LAB_VIP\") | .withdrawn_zones][0]"; }
wz_is() { test "$(wz)" = "$1"; }
check "vip list: withdrawn in zone a" lab_poll wz_is '["a"]'
lab_ctl vip list | sed -n '/WITHDRAWN/s/^/# /p'
check "requests through the VIP still succeed (mux 2, zone b)" lab_wait_vip

# 3. every zone below
health_file rm vm21 vm22
check "3. every zone below: both muxes announce again" lab_poll pop_nexthops_are "$both"
check "the manager said so" lab_poll grep -q "$LAB_VIP: announced in every zone again" "$LAB_DIR/manager.log"
check "vip list: withdrawn in no zone" lab_poll wz_is '[]'

# 4. back
health_file touch "${LAB_VMS[@]}"
check "4. all healthy again" lab_poll healthy_all
check "both muxes announce" pop_nexthops_are "$both"
check "requests through the VIP work" lab_wait_vip

pop_stop_muxes
t_check_stopped mux1 mux2
t_check_clean
t_finish
