#!/usr/bin/python3
"""A real Prometheus scrapes the lab (tests/netns/prometheus.sh); this
checks what it scraped through its HTTP API, and the endpoints directly.
It runs in the router's namespace, where Prometheus, the manager and the
data planes' management links all are.

  1. every target is up (the jobs the Grafana dashboard expects), and
     promtool lints nothing in what each endpoint serves;
  2. every metric name the dashboard's queries use is one a live endpoint
     exports;
  3. while requests go through the VIP, the rate of forwarded packets
     Prometheus computes is above zero;
  4. the applied version of every member equals the committed one;
  5. a backend whose server is stopped shows as down
     (sluice_backend_up == 0) once the manager's probes notice.
"""
import argparse
import subprocess
import sys
import threading

from sluicetest.checks import Checks
from sluicetest.lab import http_burst
from sluicetest.metrics import dashboard_metrics, promtool_check, query, scrape
from sluicetest.procs import poll


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", required=True, help="http://127.0.0.1:PORT of Prometheus")
    ap.add_argument("--endpoints", required=True, help="job=URL,... of every endpoint")
    ap.add_argument("--dashboard", required=True)
    ap.add_argument("--client-ns", required=True)
    ap.add_argument("--url", required=True, help="the VIP's URL")
    ap.add_argument("--stop-server", required=True,
                    help="a command that stops one backend's server")
    ap.add_argument("--stopped", required=True, help="that backend, DIP:port")
    ap.add_argument("--members", type=int, required=True)
    a = ap.parse_args()
    check = Checks()
    endpoints = [e.split("=", 1) for e in a.endpoints.split(",")]

    # 1. targets up, promtool
    want_up = len(endpoints)
    up = poll(lambda: (lambda r: len(r) == want_up and all(v == 1 for _, v in r) and r)(
        query(a.api, "up")), timeout=30)
    check(up, f"Prometheus scrapes all {want_up} targets, each up: {up}")
    names = set()
    for job, url in endpoints:
        s = scrape(url)
        names |= s.exported()
        rc, out = promtool_check(s.text)
        check(rc == 0, f"promtool check metrics on {job} ({url}): {rc} {out[:200]}")

    # 2. the dashboard names only exported metrics
    panels = dashboard_metrics(a.dashboard)
    missing = {t: sorted(m - names) for t, m in panels.items() if m - names}
    empty = [t for t, m in panels.items() if not m]
    check(len(panels) >= 10 and not missing and not empty,
          f"each of the dashboard's {len(panels)} panels queries only exported metrics: "
          f"missing {missing}, panels without a query {empty}")

    # 3. forwarding rate during traffic
    stop = threading.Event()

    def traffic():
        while not stop.is_set():
            http_burst(a.client_ns, a.url, 20)
    t = threading.Thread(target=traffic)
    t.start()
    try:
        expr = 'sum(rate(sluice_forwarded_packets_total{job="sluice-mux"}[5s]))'
        r = poll(lambda: (lambda r: r and r[0][1] > 0 and r)(query(a.api, expr)), timeout=30)
        check(r, f"{expr} > 0 during traffic: {r}")
        expr = 'sum(rate(sluice_decapsulated_packets_total{job="sluice-agent"}[5s]))'
        r = poll(lambda: (lambda r: r and r[0][1] > 0 and r)(query(a.api, expr)), timeout=30)
        check(r, f"{expr} > 0: the agents decapsulate it: {r}")
    finally:
        stop.set()
        t.join()

    # 4. every member on the committed version
    def versions():
        applied = query(a.api, "sluice_member_applied_version")
        committed = query(a.api, "sluice_committed_version")
        if len(applied) == a.members and committed and \
                all(v == committed[0][1] for _, v in applied):
            return applied, committed[0][1]
        return None
    v = poll(versions, timeout=20)
    check(v, f"each of the {a.members} members' applied version is the committed one: {v}")

    # 5. a stopped backend shows as down
    expr = f'sluice_backend_up{{backend="{a.stopped}"}}'
    r = query(a.api, expr)
    check(r and r[0][1] == 1, f"{expr} is 1 while its server runs: {r}")
    subprocess.run(a.stop_server, shell=True, check=True)
    r = poll(lambda: (lambda r: r and r[0][1] == 0 and r)(query(a.api, expr)), timeout=30)
    check(r, f"{expr} is 0 once its server stopped: {r}")
    return check.report("prometheus")


if __name__ == "__main__":
    sys.exit(main())
