#!/usr/bin/python3
"""`sluicectl stats` and the manager's metrics over two managed muxes with
traffic. Each mux runs on a net_tap port (a kernel tap in the root
namespace, made by DPDK); the test writes SYNs to the VIP into the taps,
three to mux1 for every one to mux2, at the same pace.

  - a managed mux says READY=1 to systemd (NOTIFY_SOCKET) only once it is
    in sync with the manager: mux2 starts before the manager and stays not
    ready until the manager is up; the manager says READY=1 once it has
    recovered (its database open, its sockets listening);
  - while the traffic flows, stats shows packet and connection rates above
    zero for the service, summed over both muxes;
  - once it stops, the counters add up exactly: 400 packets and 400 new
    connections for the service, the same split over its two backends,
    2 muxes reporting; --json has the documented shape, the text the table;
  - while the traffic flows, the manager's metrics say each mux's share of
    the VIP's new connections (about 3/4 and 1/4; the first reports may
    hold one mux's only, so read until it settles);
  - after it, the metrics (promtool lints nothing) say the expected 1/2,
    every member's applied version is the committed one, and the sync delay
    of each mux was observed;
  - an admission rule is divided among the muxes in sync (SHARES): with
    max_connections 2 on a second VIP, each of the two muxes admits 1, so of
    three SYNs into mux2's tap one is forwarded and two are refused;
  - a service added after one was deleted does not inherit the deleted
    one's connections (its stable id is held while they live): with the
    first VIP deleted (100 connections on mux2) and a third added with
    max_connections 2, mux2 admits its SYN.
Needs root (the taps); skipped (77) without.
"""
import os
import subprocess
import sys
import threading
import time

from scapy.all import IP, TCP, Ether, sendp

from sluicetest.manager import ManagerLab, manager_test_args, run_in_lab
from sluicetest.metrics import promtool_check, scrape, url_in_log
from sluicetest.procs import poll, telemetry
from sluicetest.systemd import Notify

VIP = "192.0.2.10"
SVC = f"{VIP}:80"
VIP2 = "192.0.2.11"
VIP3 = "192.0.2.12"
BACKENDS = ["10.1.1.11:8080", "10.1.1.12:8080"]
N = {"mux1": 300, "mux2": 100}
TRAFFIC_S = 6  # seconds of traffic: longer than the rates' window of 5 s


class Lab(ManagerLab):
    TAG = "sta"
    LOGS = ("manager", "mux1", "mux2")
    CERTS = ("sluice-manager", "mux1", "mux2")
    MANAGER = dict(batch_ms=20, vip_probe_interval_ms=0)

    def __init__(self, args, tmp, check):
        super().__init__(args, tmp, check)
        with open(self.manager_cfg, "a") as f:
            f.write('metrics = { listen = "127.0.0.1:0"; };\n')
        self.tap = {m: f"sst{os.getpid() % 100000}{m[-1]}" for m in N}

    def start_tap_mux(self, name, env=None):
        return self.start_mux(name, devargs=f"net_tap_{name},iface={self.tap[name]}", env=env)


def tap_up(name):
    r = subprocess.run(["ip", "-o", "link", "show", "dev", name], capture_output=True, text=True)
    return r.returncode == 0 and ",UP" in r.stdout


def send(lab, name, n, seconds, vip=VIP):
    """n SYNs to vip, from distinct ports, into mux NAME's tap over about seconds."""
    iface = lab.tap[name]
    pkts = [Ether(dst="ff:ff:ff:ff:ff:ff") / IP(src=f"198.51.100.{1 + i % 200}", dst=vip) /
            TCP(sport=20000 + i, dport=80, flags="S") for i in range(n)]
    step = max(1, n // 20)
    for i in range(0, n, step):
        sendp(pkts[i:i + step], iface=iface, verbose=False)
        time.sleep(seconds / 20)


def run(lab, check):
    notify = {m: Notify(os.path.join(lab.tmp, f"notify-{m}")) for m in list(N) + ["manager"]}
    env = {m: dict(os.environ, NOTIFY_SOCKET=notify[m].path) for m in notify}
    # mux2 first: no manager to sync with yet
    p2 = lab.start_tap_mux("mux2", env["mux2"])
    running = poll(lambda: telemetry(p2, "/sluice/stats") is not None, timeout=30,
                   alive=lambda: lab.running("mux2"))
    check(running and notify["mux2"].has("READY=1") is None,
          "a managed mux without its manager runs, and is not ready (no READY=1)")
    check(lab.start_manager(env=env["manager"]), "the manager starts")
    ready = [m for m in notify["manager"].read() if "READY=1" in m.split("\n")]
    check(ready and "STATUS=running: version 0" in ready[0],
          f"the manager says READY=1 once it answers: {notify['manager'].read()}")
    murl = poll(lambda: url_in_log(lab.log("manager")), timeout=10)
    check(murl, f"the manager serves its metrics: {murl}")
    check(lab.wait(lambda: notify["mux2"].has("READY=1") is not None, "mux2's READY=1"),
          "once in sync with the manager it says READY=1: %s" % notify["mux2"].read())
    lab.start_tap_mux("mux1", env["mux1"])
    for m in N:
        check(lab.wait(lambda: tap_up(lab.tap[m]), f"{m}'s tap"), f"{m} runs on its tap")
        subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{lab.tap[m]}.disable_ipv6=1"])
    r = lab.ctl("vip", "add", SVC, "--probe", "none")
    check(r.returncode == 0, f"vip add {SVC} --probe none: {r.stderr.strip()}")
    for be in BACKENDS:
        r = lab.ctl("backend", "add", SVC, be, "--host", "10.0.1.1")
        check(r.returncode == 0, f"backend add {be}: {r.stderr.strip()}")
    v = lab.committed()
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v), "both muxes on the pool"),
          f"both muxes run version {v}")

    # traffic, 3:1, at the same pace
    senders = [threading.Thread(target=send, args=(lab, m, N[m], TRAFFIC_S)) for m in N]
    for t in senders:
        t.start()
    during = poll(lambda: (lambda j: j and j["services"] and j["services"][0]["pps"] > 0 and
                           j["services"][0]["muxes"] == 2 and j)(lab.json_ctl("stats")),
                  timeout=20)
    svc = dict(vip=VIP, port=80, proto="tcp")

    def shares():
        # the rates' window is 5 to 10 s: read the shares while the traffic flows
        s = scrape(murl)
        share = s and {m: s.value("sluice_vip_mux_new_connections_share", mux=m, **svc)
                       for m in N}
        if share and None not in share.values():
            last[0] = share
            return share if abs(share["mux1"] - 0.75) < 0.15 else None
        return None
    # the first reports after the traffic starts may hold one mux's only
    last = [None]
    share = poll(shares, timeout=TRAFFIC_S) if murl else None
    share = share or last[0]
    for t in senders:
        t.join()
    print(f"# shares {share}")
    check(share and abs(share["mux1"] - 0.75) < 0.15 and
          abs(share["mux1"] + share["mux2"] - 1) < 1e-6,
          f"mux1 took about 3/4 of the VIP's new connections, mux2 the rest: {share}")
    check(during, "during the traffic: the service's packet rate is above zero, over 2 muxes: "
          f"{during and during['services'][0]}")
    check(during and during["services"][0]["cps"] > 0, "and its new connections per second")

    def settled():
        j = lab.json_ctl("stats")
        return j if j and j["services"] and j["services"][0]["packets"] == 400 else None
    j = poll(settled, timeout=20)
    check(j, f"the counters reach 400 packets, summed over both muxes: {j}")
    if j:
        s = j["services"][0]
        check(s["new_connections"] == 400 and s["service"] == f"tcp {SVC}" and s["vip"] == VIP
              and s["port"] == 80 and s["protocol"] == "tcp" and s["muxes"] == 2,
              f"the service: 400 new connections, 2 muxes: {s}")
        bes = s["backends"]
        check(sorted(b["backend"] for b in bes) == BACKENDS and
              sum(b["packets"] for b in bes) == 400 and
              sum(b["new_connections"] for b in bes) == 400 and
              all(b["packets"] > 0 for b in bes),
              f"its two backends share the 400: {[(b['backend'], b['packets']) for b in bes]}")
        keys = {"version", "muxes", "window_ms", "services"}
        skeys = {"service", "vip", "port", "protocol", "muxes", "pps", "bps", "cps", "packets",
                 "bytes", "new_connections", "backends"}
        bkeys = {"backend", "dip", "port", "muxes", "pps", "bps", "cps", "packets", "bytes",
                 "new_connections"}
        check(set(j) == keys and set(s) == skeys and all(set(b) == bkeys for b in bes) and
              j["muxes"] == 2 and j["version"] == v,
              f"--json shape: {sorted(j)}, {sorted(s)}, {sorted(bes[0])}")
    r = lab.ctl("stats", "--once")
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and lines[0].startswith("stats ") and "PKT/S" in lines[1] and
          any(l.startswith(f"tcp {SVC}") for l in lines) and
          sum(l.startswith("  10.1.1.1") for l in lines) == 2,
          "stats --once prints the table: " + " | ".join(lines[:4]))

    # the manager's metrics: hash deviation, versions, sync delay
    s = scrape(murl) if murl else None
    if s is not None:
        rc, out = promtool_check(s.text)
        check(rc == 0, f"promtool check metrics on the manager's: {rc} {out[:300]}")
        expect = {m: s.value("sluice_vip_mux_expected_share", mux=m, **svc) for m in N}
        check(expect == {"mux1": 0.5, "mux2": 0.5}, f"each mux's expected share is 1/2: {expect}")
        applied = s.matching("sluice_member_applied_version")
        check(applied == [v, v] and s.value("sluice_committed_version") == v,
              f"every member's applied version is the committed {v}: {applied}")
        for m in N:
            n = s.value("sluice_member_sync_delay_seconds_count", member=m, role="mux")
            check(n is not None and n >= 1, f"{m}'s sync delay observed: {n} versions")
    for n in notify.values():
        n.close()
    shared_limit(lab, check)
    new_service(lab, check)


def rule_counted(lab, svc, n):
    """svc's max_connections rule once its counters show n checks, or None."""
    for r in (lab.json_ctl("limit", "list") or {}).get("rules", []):
        if r["service"] == f"tcp {svc}" and r["checked"] == n:
            return r
    return None


def new_service(lab, check):
    """VIP deleted (100 live connections on mux2), VIP3 added with max_connections 2."""
    svc3 = f"{VIP3}:80"
    for argv in (("vip", "del", SVC),
                 ("vip", "add", svc3, "--probe", "none"),
                 ("backend", "add", svc3, "10.1.1.14:8080", "--host", "10.0.1.1"),
                 ("limit", "set", svc3, "max_connections", "2", "--mode", "intercept")):
        r = lab.ctl(*argv)
        check(r.returncode == 0, f"{' '.join(argv)}: {r.stderr.strip()}")
    v = lab.committed()
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v), "both muxes on VIP3"),
          f"both muxes run version {v}")
    send(lab, "mux2", 1, 0.1, vip=VIP3)
    r = poll(lambda: rule_counted(lab, svc3, 1), timeout=20)
    check(r and (r["passed"], r["denied"]) == (1, 0),
          f"a new service starts with no connections: mux2 admits its SYN: {r}")


def shared_limit(lab, check):
    """max_connections 2 on VIP2, shared by the two muxes: mux2 admits 1 of 3."""
    svc2 = f"{VIP2}:80"
    for argv in (("vip", "add", svc2, "--probe", "none"),
                 ("backend", "add", svc2, "10.1.1.13:8080", "--host", "10.0.1.1"),
                 ("limit", "set", svc2, "max_connections", "2", "--mode", "intercept",
                  "--refuse", "rst")):
        r = lab.ctl(*argv)
        check(r.returncode == 0, f"{' '.join(argv)}: {r.stderr.strip()}")
    v = lab.committed()
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v), "both muxes on the rule"),
          f"both muxes run the rule's version {v}")
    check(lab.wait(lambda: "admission limits shared by 2 muxes" in lab.log("mux2"),
                   "mux2's SHARES"), "mux2 is told the limits are shared by 2 muxes")
    send(lab, "mux2", 3, 0.2, vip=VIP2)

    r = poll(lambda: rule_counted(lab, svc2, 3), timeout=20)
    check(r and (r["passed"], r["denied"], r["would_deny"]) == (1, 2, 0),
          f"mux2 admits its share of max_connections 2 (1) and refuses the rest: {r}")


def main():
    if os.geteuid() != 0:
        print("SKIP stats: needs root (net_tap)")
        return 77
    check, _ = run_in_lab(Lab, manager_test_args().parse_args(), run)
    return check.report("stats")


if __name__ == "__main__":
    sys.exit(main())
