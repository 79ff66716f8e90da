#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""DIP probes at scale: N backends probed every S seconds by one sluice-manager.

    bench/probe_bench.py --manager build/manager/sluice-manager \\
        --ctl build/sluicectl/sluicectl [--backends 10000] [--interval 5] \\
        [--seconds 60] [--probe tcp|http] [--fail 1000]

The backends are N listening sockets on loopback addresses (127.1.0.1,
127.1.0.2, ... port 18080) in one helper process that accepts, answers
"HTTP/1.0 200 OK" for --probe http, and closes; the descriptor limit is
raised for it and for the manager. The manager has no members (a round
with none commits at once), ten services of N/10 backends, probe timeout 2 s.

Measured, once every backend is healthy, over --seconds:
  - probes run and how late each started after its due time (the manager's
    own histogram, status JSON "probes"), so "without falling behind" is a
    number: the 99th percentile and the worst lateness;
  - the manager's CPU (utime + stime from /proc) over the window;
  - versions committed meanwhile (none expected: nothing changed).
Then --fail backends stop listening at once: how long until all are out of
the effective table, and how many versions that took (health_batch_ms
batches them; the probes are spread over the interval, so the failures are
seen over one interval).
"""
import argparse
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time

PORT = 18080
EDGES = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]


def addr(i):
    return f"127.1.{i // 250}.{i % 250 + 1}"


def serve(n, http, ready_fd, stop_first):
    """The backends: n listeners; SIGUSR1 closes `stop_first` of them, spread over the services."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    lsocks = []
    for i in range(n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr(i), PORT))
        s.listen(64)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, "listen")
        lsocks.append(s)
    stop = []
    signal.signal(signal.SIGUSR1, lambda *_: stop.append(True))
    os.write(ready_fd, b"ready\n")
    os.close(ready_fd)
    reply = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"
    while True:
        if stop:
            stop.clear()
            # every k-th: each service loses the same share (not all of one, which fails open)
            for s in lsocks[::max(1, n // stop_first)][:stop_first]:
                sel.unregister(s)
                s.close()
        for key, _ in sel.select(timeout=0.5):
            if key.data == "listen":
                try:
                    c, _ = key.fileobj.accept()
                except OSError:
                    continue
                if http:
                    c.setblocking(False)
                    sel.register(c, selectors.EVENT_READ, "conn")
                else:
                    c.close()
            else:
                c = key.fileobj
                try:
                    data = c.recv(4096)
                    if data:
                        c.send(reply)
                except OSError:
                    pass
                sel.unregister(c)
                c.close()


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(hist, q):
    total = sum(hist)
    if total == 0:
        return 0
    acc = 0
    for i, c in enumerate(hist):
        acc += c
        if acc >= q * total:
            return f"< {EDGES[i]} ms" if i < len(EDGES) else f">= {EDGES[-1]} ms"
    return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--manager", required=True)
    ap.add_argument("--ctl", required=True)
    ap.add_argument("--backends", type=int, default=10000)
    ap.add_argument("--interval", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--probe", choices=("tcp", "http"), default="tcp")
    ap.add_argument("--fail", type=int, default=1000)
    ap.add_argument("--health-batch-ms", type=int, default=1000)
    a = ap.parse_args()
    n = a.backends
    per = max(1, n // 10)

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < n + 1000:
        sys.exit(f"RLIMIT_NOFILE hard limit {hard} is below {n + 1000}: raise it")
    tmp = tempfile.mkdtemp(prefix="sluice-probe-bench-")
    r_fd, w_fd = os.pipe()
    srv = os.fork()
    if srv == 0:
        os.close(r_fd)
        try:
            serve(n, a.probe == "http", w_fd, a.fail)
        finally:
            os._exit(0)
    os.close(w_fd)
    if os.read(r_fd, 16) != b"ready\n":
        sys.exit("the backend process did not start")
    os.close(r_fd)

    ctl_url = f"ipc://{tmp}/ctl.sock"
    with open(f"{tmp}/manager.cfg", "w") as f:
        f.write(f"""manager = {{ listen = "ipc://{tmp}/members.sock"; ctl = "{ctl_url}";
	database = "{tmp}/manager.db"; batch_ms = 50; health_batch_ms = {a.health_batch_ms}; }};
""")
    services, pools = [], []
    for s in range(10):
        bes = ",\n".join(f'{{ dip = "{addr(i)}"; port = {PORT}; host = "10.0.1.1"; }}'
                         for i in range(s * per, min(n, (s + 1) * per)))
        services.append(f'{{ vip = "10.0.0.{s + 1}"; port = 80; backends = ( {bes} ); }}')
        pools.append(f'{{ vip = "10.0.0.{s + 1}"; port = 80; probe = "{a.probe}"; '
                     f'interval = {a.interval}; timeout = 2; healthy = 2; unhealthy = 2; }}')
    with open(f"{tmp}/services.cfg", "w") as f:
        f.write(f"flow_table = {{ services = ( {', '.join(services)} ); }};\n"
                f"pools = ( {', '.join(pools)} );\n")
    log = open(f"{tmp}/manager.log", "w")
    mgr = subprocess.Popen([a.manager, "-c", f"{tmp}/manager.cfg"], stdout=log, stderr=log)

    def ctl(*args):
        return subprocess.run([a.ctl, "--manager", ctl_url, "--timeout", "30"] + list(args),
                              capture_output=True, text=True)

    def status():
        return json.loads(ctl("--json", "status").stdout)

    def healthy():
        vl = json.loads(ctl("--json", "vip", "list").stdout)
        return sum(s["healthy"] for s in vl["services"]), vl["version"]

    def out_of_table():
        """Backends the committed table (what members run) has in maint."""
        vl = json.loads(ctl("--json", "vip", "list").stdout)
        return sum(b["state"] == "maint" for s in vl["services"] for b in s["backends"])

    try:
        end = time.monotonic() + 10
        while ctl("status").returncode != 0:
            if time.monotonic() > end:
                sys.exit("the manager does not answer")
            time.sleep(0.1)
        t0 = time.monotonic()
        r = ctl("config", "apply", f"{tmp}/services.cfg")
        if r.returncode != 0:
            sys.exit(f"config apply: {r.stderr}")
        print(f"# {n} backends ({a.probe}, every {a.interval} s) applied in "
              f"{time.monotonic() - t0:.2f} s: {r.stdout.strip()}")
        while healthy()[0] < n:
            if time.monotonic() > t0 + 3 * a.interval + 30:
                sys.exit(f"only {healthy()[0]} of {n} healthy")
            time.sleep(0.5)
        print(f"# all {n} healthy {time.monotonic() - t0:.2f} s after the apply")
        # one full interval more, so the window starts in the steady state
        time.sleep(a.interval)

        # status only in the window: a `vip list` of 10,000 backends is work for the loop
        s0, c0, w0 = status(), cpu_s(mgr.pid), time.monotonic()
        time.sleep(a.seconds)
        s1, c1, w1 = status(), cpu_s(mgr.pid), time.monotonic()
        v0, v1 = s0["committed"]["version"], s1["committed"]["version"]
        p0, p1 = s0["probes"], s1["probes"]
        hist = [y - x for x, y in zip(p0["late_hist"]["count"], p1["late_hist"]["count"])]
        started = p1["started"] - p0["started"]
        wall = w1 - w0
        print(f"window            {wall:.1f} s")
        print(f"probes run        {started} ({started / wall:.0f}/s; expected "
              f"{n / a.interval:.0f}/s)")
        print(f"succeeded/failed  {p1['up'] - p0['up']} / {p1['down'] - p0['down']}")
        print(f"lateness p50      {percentile(hist, 0.50)}")
        print(f"lateness p99      {percentile(hist, 0.99)}")
        print(f"lateness p99.9    {percentile(hist, 0.999)}")
        print(f"lateness max      {p1['late_max_ms']} ms (since the manager started)")
        print(f"lateness hist     {dict(zip([f'<{e}' for e in EDGES] + ['more'], hist))}")
        print(f"in flight (end)   {p1['in_flight']}")
        print(f"manager CPU       {c1 - c0:.2f} s in {wall:.1f} s = "
              f"{100 * (c1 - c0) / wall:.1f}% of one core")
        print(f"versions          {v1 - v0} (nothing changed)")

        if a.fail > 0:
            v0 = healthy()[1]
            t0 = time.monotonic()
            os.kill(srv, signal.SIGUSR1)
            while True:
                out = out_of_table()
                if out >= a.fail:
                    break
                if time.monotonic() > t0 + 4 * a.interval + 30:
                    print(f"# only {out} of {a.fail} out after {time.monotonic() - t0:.0f} s")
                    break
                time.sleep(0.2)
            took = time.monotonic() - t0
            # the last batch may still be committing
            end = time.monotonic() + 5
            while status()["pending"] is not None and time.monotonic() < end:
                time.sleep(0.1)
            v1 = healthy()[1]
            print(f"mass failure      {a.fail} backends stopped at once: all out of the "
                  f"table {took:.1f} s later, in {v1 - v0} versions "
                  f"(health_batch_ms {a.health_batch_ms})")
    finally:
        mgr.send_signal(signal.SIGTERM)
        mgr.wait(10)
        os.kill(srv, signal.SIGKILL)
        os.waitpid(srv, 0)
        subprocess.run(["rm", "-rf", tmp], check=True)


if __name__ == "__main__":
    main()
