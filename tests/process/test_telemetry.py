#!/usr/bin/python3
"""A running sluice-mux answers its read-only telemetry commands, stops
cleanly on SIGTERM with its summary, and leaves no DPDK runtime folder.

The mux reads a pcap without --exit-on-eof, so it keeps running after the
input is consumed; the test waits on the telemetry counters, not on a timer,
then sends SIGTERM.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from proclib import Checks, telemetry  # noqa: E402
from scapy.all import IP, TCP, UDP, Ether, wrpcap

CFG = """
mux = {{ tunnel_address = "10.255.0.1"; next_hop_mac = "02:00:00:00:00:fe"; }};
ports = ( {{ devargs = "net_pcap0,rx_pcap={inp},tx_pcap={out}"; }} );
flow_table = {{
	hash_seed = "00112233445566778899aabbccddeeff";
	services = (
		{{ vip = "192.0.2.10"; port = 80; backends = (
			{{ dip = "10.1.0.1"; port = 8080; host = "10.0.1.1"; }},
			{{ dip = "10.1.0.2"; port = 8080; host = "10.0.1.2"; }} ); }}
	);
}};
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mux", required=True)
    args = ap.parse_args()
    check = Checks()

    with tempfile.TemporaryDirectory() as tmp:
        inp, out, cfg = (os.path.join(tmp, n) for n in ("in.pcap", "out.pcap", "mux.cfg"))
        pkts = [Ether(src="02:00:00:00:00:fe", dst="02:00:00:00:00:01") / IP(src=f"198.51.100.{i % 200 + 1}", dst="192.0.2.10") /
                TCP(sport=1000 + i, dport=80, flags="S") for i in range(300)]
        pkts += [Ether(src="02:00:00:00:00:fe", dst="02:00:00:00:00:01") / IP(src="198.51.100.1", dst="192.0.2.10") / UDP(dport=53)] * 7
        wrpcap(inp, pkts)
        with open(cfg, "w") as f:
            f.write(CFG.format(inp=inp, out=out))
        prefix = f"sluice-test-tel-{os.getpid()}"
        with open(cfg, "a") as f:
            f.write(f'eal = [ "--no-huge", "-m", "256", "--no-pci", "--file-prefix={prefix}" ];\n')
        rundir = f"/var/run/dpdk/{prefix}"
        sock = os.path.join(rundir, "dpdk_telemetry.v2")
        mux = subprocess.Popen([args.mux, "-c", cfg], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        try:
            stats = None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if os.path.exists(sock):
                    try:
                        # null until the mux has registered its commands
                        stats = telemetry(sock, "/sluice/stats")
                        if stats is not None and stats["rx_pkts"] == len(pkts):
                            break
                    except (OSError, json.JSONDecodeError):
                        pass
                if mux.poll() is not None:
                    break
                time.sleep(0.05)
            check(stats is not None and stats["rx_pkts"] == len(pkts),
                  f"/sluice/stats rx_pkts reaches {len(pkts)}: {stats and stats['rx_pkts']}")
            check(stats is not None and stats["fwd_pkts"] == 300,
                  f"/sluice/stats fwd_pkts == 300: {stats and stats['fwd_pkts']}")
            drops = telemetry(sock, "/sluice/drops")
            check(drops.get("no_service") == 7, f"/sluice/drops no_service == 7: {drops.get('no_service')}")
            svcs = telemetry(sock, "/sluice/services,0")
            check(svcs.get("services") == 1 and svcs["192_0_2_10_80_tcp"][0] == 300,
                  f"/sluice/services lists 192.0.2.10:80/tcp with 300 packets")
            bes = telemetry(sock, "/sluice/backends,0")
            total = sum(b[2] for b in bes.values())  # [pkts, bytes, new_conns, host, wz]
            check(len(bes) == 2 and total == 300, f"/sluice/backends,0: 2 backends, 300 new: {total}")
            ft = telemetry(sock, "/sluice/flow_table")
            check(ft == {"version": 1, "services": 1, "backends": 2, "maglev_size": 65537},
                  f"/sluice/flow_table: {ft}")
        finally:
            mux.send_signal(signal.SIGTERM)
            try:
                so, se = mux.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                mux.kill()
                so, se = mux.communicate()
        check(mux.returncode == 0, f"exit status 0 after SIGTERM: {mux.returncode} {se[-300:]}")
        check("service 192.0.2.10:80/tcp  packets 300" in so, "summary printed on SIGTERM")
        check(not os.path.exists(rundir), f"runtime folder {rundir} removed")
        if os.path.exists(rundir):
            shutil.rmtree(rundir)
    print(f"telemetry: {len(check.failures)} failed")
    sys.exit(1 if check.failures else 0)


if __name__ == "__main__":
    main()
