#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Control-plane figures: commit latency and snapshot sync.

    bench/commit_bench.py --manager build/manager/sluice-manager \\
        --mux build/mux/sluice-mux --ctl build/sluicectl/sluicectl \\
        --certs scripts/make-certs.sh [--commits 300] [--backends 100000]

One sluice-manager and three managed sluice-mux members on this machine,
over mutual TLS on loopback (net_ring ports: no traffic, the members only
build and publish generations).

1. Commit latency, operator command to every member committed: `sluicectl
   backend set --weight` of one backend, --commits times in a row. sluicectl
   waits for the commit (it polls WAIT), so its wall time is the operator's
   latency; it includes starting the sluicectl process, so `sluicectl
   status` (one request, no commit) is timed the same way as the floor.
   The manager commits only when every member has voted yes after building
   the new generation, and sends COMMIT right after making it durable; the
   members' telemetry is then checked to run the last version.
2. Snapshot sync: the manager's table is made --backends backends (1000
   services of backends/1000 each, one config apply), then a fresh fourth
   mux is started; the time from its start to its telemetry answering, and
   to its telemetry showing the committed version, is measured; the
   difference is the snapshot sync (hello, chunks, validation, digest,
   building the generation, publishing).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "lib"))
from sluicetest.procs import free_port, telemetry  # noqa: E402

SEED = "00112233445566778899aabbccddeeff"


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


def main():
    ap = argparse.ArgumentParser()
    for a in ("manager", "mux", "ctl", "certs"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--backends", type=int, default=100000)
    a = ap.parse_args()
    procs, prefixes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        pki = os.path.join(tmp, "pki")
        names = ["mux1", "mux2", "mux3", "mux4"]
        subprocess.run([a.certs, pki, "sluice-manager"] + names, check=True,
                       stdout=subprocess.DEVNULL)
        port = free_port()
        ctl_url = f"ipc://{tmp}/ctl.sock"
        with open(f"{tmp}/manager.cfg", "w") as f:
            f.write(f"""manager = {{ listen = "tls+tcp://127.0.0.1:{port}"; ctl = "{ctl_url}";
	tls = {{ ca = "{pki}/ca.pem"; cert = "{pki}/sluice-manager.pem"; key = "{pki}/sluice-manager.key"; }};
	database = "{tmp}/m.db"; batch_ms = 0; hash_seed = "{SEED}"; maglev_size = 2003; }};
""")

        def ctl(*argv):
            return subprocess.run([a.ctl, "--manager", ctl_url] + list(argv),
                                  capture_output=True, text=True)

        def start_mux(name):
            prefix = f"sluice-bench-{name}-{os.getpid()}"
            prefixes.append(prefix)
            with open(f"{tmp}/{name}.cfg", "w") as f:
                f.write(f"""eal = [ "--no-huge", "-m", "1024", "--no-pci", "--file-prefix={prefix}" ];
mux = {{ tunnel_address = "10.255.0.1"; next_hop_mac = "02:00:00:00:00:fe"; idle_sleep_us = 1000;
	capacity = {{ services = 2048; backends = {2 * a.backends}; }}; }};
ports = ( {{ devargs = "net_ring_{name}"; }} );
manager = {{ url = "tls+tcp://127.0.0.1:{port}"; id = "{name}"; ca = "{pki}/ca.pem";
	cert = "{pki}/{name}.pem"; key = "{pki}/{name}.key"; }};
""")
            log = open(f"{tmp}/{name}.log", "w")
            procs.append(subprocess.Popen([a.mux, "-c", f"{tmp}/{name}.cfg"], stdout=log,
                                          stderr=log))
            return prefix

        def version(prefix):
            try:
                return telemetry(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2",
                                 "/sluice/stats")["version"]
            except (OSError, ValueError, KeyError, TypeError):
                return None  # not up yet

        def wait(pred, timeout=60):
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                if pred():
                    return True
                time.sleep(0.002)
            raise SystemExit("timed out")

        try:
            log = open(f"{tmp}/manager.log", "w")
            procs.append(subprocess.Popen([a.manager, "-c", f"{tmp}/manager.cfg"],
                                          stdout=log, stderr=log))
            wait(lambda: ctl("status").returncode == 0)
            pf = [start_mux(n) for n in names[:3]]

            def in_sync(n):
                s = json.loads(ctl("--json", "status").stdout)
                return sum(1 for m in s["members"] if m["state"] == "in-sync") == n
            wait(lambda: in_sync(3))
            ctl("vip", "add", "192.0.2.10:80", "--probe", "none")
            ctl("backend", "add", "192.0.2.10:80", "10.1.1.11:8080", "--host", "10.0.1.1")

            floor, lat = [], []
            for i in range(50):
                t = time.monotonic()
                ctl("status")
                floor.append((time.monotonic() - t) * 1000)
            for i in range(a.commits):
                t = time.monotonic()
                r = ctl("backend", "set", "192.0.2.10:80", "10.1.1.11:8080",
                        "--weight", str(2 + i % 2))
                lat.append((time.monotonic() - t) * 1000)
                if r.returncode != 0:
                    raise SystemExit(f"commit {i}: {r.stderr}")
            last = json.loads(ctl("--json", "status").stdout)["committed"]["version"]
            wait(lambda: all(version(p) == last for p in pf), 10)
            print(f"commit latency, sluicectl backend set -> committed on 3 muxes, "
                  f"{a.commits} commits:")
            print(f"  p50 {pct(lat, 50):.1f} ms  p90 {pct(lat, 90):.1f} ms  "
                  f"p99 {pct(lat, 99):.1f} ms  max {max(lat):.1f} ms")
            print(f"  floor (sluicectl status, no commit): p50 {pct(floor, 50):.1f} ms  "
                  f"p99 {pct(floor, 99):.1f} ms")
            print(f"  => commit itself, p50 {pct(lat, 50) - pct(floor, 50):.1f} ms")

            # snapshot sync
            per = a.backends // 1000
            cfg = [f'flow_table = {{ hash_seed = "{SEED}"; maglev_size = 2003; services = (']
            for s in range(1000):
                bes = ", ".join(
                    f'{{ dip = "10.{s // 250}.{s % 250}.{b % 250}"; port = {8000 + b // 250}; '
                    f'host = "10.200.{s // 250}.{s % 250}"; }}' for b in range(per))
                cfg.append(f'{"," if s else ""}{{ vip = "192.0.{2 + s // 250}.{s % 250}"; '
                           f'port = 80; backends = ( {bes} ); }}')
            cfg.append("); };\npools = ();\n")
            with open(f"{tmp}/big.cfg", "w") as f:
                f.write("\n".join(cfg))
            t = time.monotonic()
            r = ctl("--timeout", "120", "config", "apply", f"{tmp}/big.cfg")
            took = time.monotonic() - t
            if r.returncode != 0:
                raise SystemExit(f"apply: {r.stdout} {r.stderr}")
            big = json.loads(ctl("--json", "status").stdout)["committed"]["version"]
            print(f"config apply of {1000 * per} backends, committed on 3 muxes: {took:.2f} s")
            t0 = time.monotonic()
            p4 = start_mux("mux4")
            wait(lambda: version(p4) is not None)
            t1 = time.monotonic()
            wait(lambda: version(p4) == big)
            t2 = time.monotonic()
            print(f"fresh mux: telemetry up after {(t1 - t0) * 1000:.0f} ms (EAL start), "
                  f"version {big} ({1000 * per} backends) running after "
                  f"{(t2 - t0) * 1000:.0f} ms: snapshot sync <= {(t2 - t1) * 1000:.0f} ms")
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
            for p in prefixes:
                subprocess.run(["rm", "-rf", f"/var/run/dpdk/{p}"], check=True)


if __name__ == "__main__":
    main()
