#!/usr/bin/python3
"""SIGHUP makes a running sluice-mux apply its configuration file's new flow
table: a backend added keeps the counters of the others (stable ids), the
version goes up by one; a bad file or a changed hash seed is refused with
the file, line and field, and the running table stays as it was.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from proclib import Checks, telemetry  # noqa: E402
from scapy.all import IP, TCP, Ether, wrpcap

SEED = "00112233445566778899aabbccddeeff"
BACKEND = '{{ dip = "10.1.0.{n}"; port = 8080; host = "10.0.1.{n}"; weight = {w}; }}'


def config(inp, out, prefix, backends, seed=SEED):
    bes = ",\n\t\t\t".join(BACKEND.format(n=n, w=w) for n, w in backends)
    return f"""eal = [ "--no-huge", "-m", "256", "--no-pci", "--file-prefix={prefix}" ];
mux = {{ tunnel_address = "10.255.0.1"; next_hop_mac = "02:00:00:00:00:fe"; }};
ports = ( {{ devargs = "net_pcap0,rx_pcap={inp},tx_pcap={out}"; }} );
flow_table = {{
	hash_seed = "{seed}";
	services = (
		{{ vip = "192.0.2.10"; port = 80; backends = (
			{bes} ); }}
	);
}};
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mux", required=True)
    args = ap.parse_args()
    check = Checks()

    def wait_for(pred, what, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                v = pred()
                if v:
                    return v
            except (OSError, ValueError, KeyError, TypeError):
                pass
            time.sleep(0.05)
        check(False, "timed out waiting for " + what)
        return None

    with tempfile.TemporaryDirectory() as tmp:
        inp, out, cfg, log = (os.path.join(tmp, n) for n in
                              ("in.pcap", "out.pcap", "mux.cfg", "mux.log"))
        wrpcap(inp, [Ether(src="02:00:00:00:00:fe", dst="02:00:00:00:00:01") /
                     IP(src=f"198.51.100.{i % 200 + 1}", dst="192.0.2.10") /
                     TCP(sport=1000 + i, dport=80, flags="S") for i in range(300)])
        prefix = f"sluice-test-reload-{os.getpid()}"
        rundir = f"/var/run/dpdk/{prefix}"
        sock = os.path.join(rundir, "dpdk_telemetry.v2")
        with open(cfg, "w") as f:
            f.write(config(inp, out, prefix, [(1, 1), (2, 1)]))
        logf = open(log, "w")
        mux = subprocess.Popen([args.mux, "-c", cfg], stdout=subprocess.PIPE,
                               stderr=logf, text=True)

        def log_has(text):
            with open(log) as f:
                return text in f.read()

        try:
            wait_for(lambda: telemetry(sock, "/sluice/stats")["rx_pkts"] == 300,
                     "the input to be read")
            before = telemetry(sock, "/sluice/backends,0")
            check(sum(b[2] for b in before.values()) == 300,
                  f"300 new connections over 2 backends: {before}")

            # Add a backend: version 2, the old ones keep their counters.
            with open(cfg, "w") as f:
                f.write(config(inp, out, prefix, [(1, 1), (2, 1), (3, 2)]))
            mux.send_signal(signal.SIGHUP)
            wait_for(lambda: log_has("reloaded flow table: version 2"), "the reload line")
            ft = telemetry(sock, "/sluice/flow_table")
            check(ft["version"] == 2 and ft["backends"] == 3, f"version 2, 3 backends: {ft}")
            after = telemetry(sock, "/sluice/backends,0")
            check(len(after) == 3, f"3 backends listed: {list(after)}")
            for k, v in before.items():
                check(after.get(k, [None] * 3)[2] == v[2],
                      f"{k} keeps its {v[2]} new connections across the reload")

            # Swap a backend for a newcomer: it starts from zero, whatever id it gets.
            with open(cfg, "w") as f:
                f.write(config(inp, out, prefix, [(1, 1), (3, 2), (4, 1)]))
            mux.send_signal(signal.SIGHUP)
            wait_for(lambda: log_has("reloaded flow table: version 3"), "the second reload")
            after = telemetry(sock, "/sluice/backends,0")
            check(sorted(after) == ["10_1_0_1_8080", "10_1_0_3_8080", "10_1_0_4_8080"],
                  f"10.1.0.2 gone, 10.1.0.4 listed: {sorted(after)}")
            check(after.get("10_1_0_4_8080", [None] * 3)[2] == 0,
                  f"the newcomer reports no connections of its own yet: {after}")
            check(after.get("10_1_0_1_8080", [None] * 3)[2] == before["10_1_0_1_8080"][2],
                  "10.1.0.1 keeps its counters through both reloads")

            # A bad file: refused, named, nothing changes.
            with open(cfg, "w") as f:
                f.write(config(inp, out, prefix, [(1, 1), (2, 70000)]))
            mux.send_signal(signal.SIGHUP)
            wait_for(lambda: log_has("reload refused"), "the refusal")
            with open(log) as f:
                text = f.read()
            check("mux.cfg:" in text and "backends[1].weight" in text and "70000" in text,
                  "the refusal names file, line and field")
            ft = telemetry(sock, "/sluice/flow_table")
            check(ft["version"] == 3 and ft["backends"] == 3, f"still version 3: {ft}")

            # A new seed: refused (connection tables are keyed by the old one).
            with open(cfg, "w") as f:
                f.write(config(inp, out, prefix, [(1, 1)], seed="f" * 32))
            mux.send_signal(signal.SIGHUP)
            wait_for(lambda: log_has("changing the seed needs a restart"), "the seed refusal")
            check(telemetry(sock, "/sluice/flow_table")["version"] == 3, "still version 3")
        finally:
            mux.send_signal(signal.SIGTERM)
            try:
                so, _ = mux.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                mux.kill()
                so, _ = mux.communicate()
            logf.close()
        check(mux.returncode == 0, f"exit status 0: {mux.returncode}")
        check("flow table version 3" in so and "10.1.0.4:8080" in so,
              "the summary shows version 3 and the added backend")
        check(not os.path.exists(rundir), f"runtime folder {rundir} removed")
        if os.path.exists(rundir):
            shutil.rmtree(rundir)
    print(f"reload: {len(check.failures)} failed")
    sys.exit(1 if check.failures else 0)


if __name__ == "__main__":
    main()
