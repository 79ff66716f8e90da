#!/usr/bin/env bash
# A real Prometheus (Debian's prometheus) scrapes the lab under its manager:
# the manager on the router's loopback, the mux and both agents on their
# management links (LAB_METRICS=1, scripts/netns-lab.sh). The test writes
# Prometheus' configuration (the jobs sluice-mux, sluice-agent,
# sluice-manager, scraped every second), starts it in the router's
# namespace, and asks its HTTP API for series (tests/netns/check_prometheus.py):
# the targets are up, promtool lints nothing, the Grafana dashboard names
# only exported metrics, forwarded packets have a rate during traffic,
# every member runs the committed version, and a stopped backend is down.
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || { echo "FAIL $T_NAME: no prometheus (scripts/install-deps.sh)"; exit 1; }
export LAB_MANAGED=1 LAB_METRICS=1
t_init
t_up 1 1 1 1

# health probes every second, so a stopped server is noticed in ~2 s
check "the pool probes by TCP every second" \
	lab_ctl vip set "$T_SVC" --probe tcp --interval 1 --probe-timeout 1 --healthy 2 --unhealthy 2
PROM=127.0.0.1:9090
t_py -c 'import sys; from sluicetest.metrics import prometheus_config as c
c(sys.argv[1], {"sluice-mux": [sys.argv[2]], "sluice-agent": [sys.argv[3], sys.argv[4]],
   "sluice-manager": [sys.argv[5]]})' "$LAB_DIR/prometheus.yml" \
	"$(lab_metrics_addr mux)" "$(lab_metrics_addr agent1)" "$(lab_metrics_addr agent2)" \
	"$(lab_metrics_addr manager)"
mkdir -p "$LAB_DIR/tsdb"
# shellcheck disable=SC2046 # the argv, one word each
lab_spawn prometheus "$LAB_NS_ROUTER" $(t_py -c 'import sys; from sluicetest.metrics import prometheus_argv
print(" ".join(prometheus_argv(*sys.argv[1:])))' "$LAB_DIR/prometheus.yml" "$LAB_DIR/tsdb" "$PROM")
ready() { ip netns exec "$LAB_NS_ROUTER" curl -sf "http://$PROM/-/ready" >/dev/null; }
check "Prometheus starts in the router's namespace" lab_until_alive prometheus ready

eps=sluice-mux=$(lab_metrics_url mux),sluice-agent=$(lab_metrics_url agent1)
eps+=,sluice-agent=$(lab_metrics_url agent2),sluice-manager=$(lab_metrics_url manager)
check "Prometheus' view of the lab (check_prometheus.py)" \
	ip netns exec "$LAB_NS_ROUTER" env PYTHONPATH="$PYTHONPATH" "$LAB_PY" \
	"$LAB_SRC/tests/netns/check_prometheus.py" --api "http://$PROM" --endpoints "$eps" \
	--dashboard "$LAB_SRC/deploy/grafana/sluice.json" --client-ns "$LAB_NS_CLIENT" \
	--url "http://$LAB_VIP/" --members 3 \
	--stop-server "kill $(lab_pid http-vm12)" --stopped "${LAB_VM_DIP[vm12]}:$LAB_BE_PORT"

lab_kill prometheus
t_end
t_check_clean
t_finish
