#!/usr/bin/python3
"""The netns lab's command line (scripts/lab.sh, scripts/netns-lab.sh and
tests/netns/*.sh call it): read a DPDK process's telemetry, a namespace's
SNMP counters, send HTTP requests through the VIP with curl and judge how
they spread over the backends. The code is the tests' harness
(tests/lib/sluicetest: lab, netns, procs); this file only parses arguments.

  lab_tool.py burst --ns NS --url URL -n N [--weights 1,2,3,4] [--check]
        N requests, one connection each (curl URL globbing against an HTTP/1.0
        server); prints the spread; with --check fails unless every request
        succeeded and the spread fits the weights (chi-square, p >= 1e-6);
        --no-spread: only that every request succeeded.
  lab_tool.py tel PREFIX COMMAND [FIELD]
        one telemetry command of the DPDK process with that --file-prefix;
        with FIELD, only that field of the reply (0 when absent).
  lab_tool.py dsr --client-ns NS --mux PREFIX --agents P1,P2
        who saw which packets, from live counters: the client's IP counters,
        the mux's and the agents' telemetry (direct server return at work).
  lab_tool.py snmp NS
        /proc/net/snmp of a namespace as JSON.
  lab_tool.py notify SOCKET LOG [--until PREFIX] [--timeout S]
        systemd's NOTIFY_SOCKET, as a Type=notify unit has it: binds SOCKET
        and writes every message the daemon sends to LOG, one line each;
        exits 0 once a line starts with PREFIX, 1 at the timeout (60 s).
"""
import argparse
import json
import os
import socket
import sys
import time

# The lab runs from a checkout without meson, which sets PYTHONPATH for the
# tests: find the harness beside this script.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from sluicetest.lab import (SPREAD_P_MIN, dsr_report, http_burst, snapshot,  # noqa: E402
                            spread_report)
from sluicetest.netns import snmp  # noqa: E402
from sluicetest.procs import telemetry  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("burst")
    b.add_argument("--ns", required=True)
    b.add_argument("--url", required=True)
    b.add_argument("-n", type=int, default=400)
    b.add_argument("--names", default="vm11,vm12,vm21,vm22")
    b.add_argument("--weights", default="1,1,1,1")
    b.add_argument("--check", action="store_true")
    b.add_argument("--no-spread", action="store_true",
                   help="with --check: every request must succeed; the spread is only printed "
                        "(for bursts while the weights change under them)")
    b.add_argument("--json", help="write the counts here")
    t = sub.add_parser("tel")
    t.add_argument("prefix")
    t.add_argument("command")
    t.add_argument("field", nargs="?")
    d = sub.add_parser("dsr")
    d.add_argument("--client-ns", required=True)
    d.add_argument("--mux", required=True)
    d.add_argument("--agents", required=True)
    n = sub.add_parser("snmp")
    n.add_argument("ns")
    s = sub.add_parser("notify")
    s.add_argument("socket")
    s.add_argument("log")
    s.add_argument("--until")
    s.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()

    if a.cmd == "notify":
        return notify(a.socket, a.log, a.until, a.timeout)

    if a.cmd == "dsr":
        print(dsr_report(snapshot(a.client_ns, a.mux, a.agents.split(","))))
        return 0
    if a.cmd == "snmp":
        print(json.dumps(snmp(a.ns)))
        return 0

    if a.cmd == "tel":
        reply = telemetry(a.prefix, a.command)
        print(json.dumps(reply) if a.field is None else reply.get(a.field, 0))
        return 0
    names = a.names.split(",")
    weights = [int(w) for w in a.weights.split(",")]
    counts, failures, _ = http_burst(a.ns, a.url, a.n)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"counts": counts, "failures": failures}, f)
    table, p = spread_report(counts, names, weights)
    print(f"{sum(counts.values())} of {a.n} requests answered by a backend, "
          f"{len(failures)} failed")
    print(table)
    if failures:
        print(f"  failures (curl http_code): {failures[:20]}")
    if a.check and (failures or (p < SPREAD_P_MIN and not a.no_spread)):
        return 1
    return 0


def notify(path, log, until, timeout):
    """Take the daemon's sd_notify messages on path into log, line by line."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(0.5)
    end = time.monotonic() + timeout
    with open(log, "w") as out:
        while time.monotonic() < end:
            try:
                lines = s.recv(4096).decode().split("\n")
            except socket.timeout:
                continue
            out.write("".join(ln + "\n" for ln in lines))
            out.flush()
            if until is not None and any(ln.startswith(until) for ln in lines):
                return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
