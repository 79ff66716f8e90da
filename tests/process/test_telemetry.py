#!/usr/bin/python3
"""A running sluice-mux answers its read-only telemetry commands, stops
cleanly on SIGTERM with its summary, and leaves no DPDK runtime folder.

The mux reads a pcap without --exit-on-eof, so it keeps running after the
input is consumed; the test waits on the telemetry counters, not on a timer,
then sends SIGTERM.
"""
import os
import tempfile

from scapy.all import IP, TCP, UDP, Ether, wrpcap

from sluicetest.checks import Checks
from sluicetest.config import Backend, MuxConfig, Service, TEST_SEED
from sluicetest.procs import Daemons, poll, required_args, rundir, telemetry, test_prefix

SERVICE = Service("192.0.2.10", "tcp", 80, [Backend("10.1.0.1", 8080, "10.0.1.1"),
                                            Backend("10.1.0.2", 8080, "10.0.1.2")])


def main():
    args = required_args("mux").parse_args()
    check = Checks()

    with tempfile.TemporaryDirectory() as tmp:
        inp, out, cfg = (os.path.join(tmp, n) for n in ("in.pcap", "out.pcap", "mux.cfg"))
        client = Ether(src="02:00:00:00:00:fe", dst="02:00:00:00:00:01")
        pkts = [client / IP(src=f"198.51.100.{i % 200 + 1}", dst="192.0.2.10") /
                TCP(sport=1000 + i, dport=80, flags="S") for i in range(300)]
        pkts += [client / IP(src="198.51.100.1", dst="192.0.2.10") / UDP(dport=53)] * 7
        wrpcap(inp, pkts)
        prefix = test_prefix("tel")
        with open(cfg, "w") as f:
            f.write(MuxConfig([SERVICE], hash_seed=TEST_SEED).render(
                devargs=f"net_pcap0,rx_pcap={inp},tx_pcap={out}", file_prefix=prefix,
                port_name=None))
        daemons = Daemons(tmp)
        mux = daemons.start("mux", [args.mux, "-c", cfg], prefix=prefix)
        try:
            last = {}

            def read_all():
                # null until the mux has registered its commands. rx_pkts
                # counts a burst when it is taken, fwd_pkts each packet as
                # it goes: a read in the middle of a burst sees all of rx
                # and part of fwd. Wait for both to settle.
                last["stats"] = telemetry(prefix, "/sluice/stats")
                return (last["stats"]["rx_pkts"] == len(pkts) and
                        last["stats"]["fwd_pkts"] >= 300)

            poll(read_all, timeout=30, alive=lambda: mux.poll() is None)
            stats = last.get("stats")
            check(stats is not None and stats["rx_pkts"] == len(pkts),
                  f"/sluice/stats rx_pkts reaches {len(pkts)}: {stats and stats['rx_pkts']}")
            check(stats is not None and stats["fwd_pkts"] == 300,
                  f"/sluice/stats fwd_pkts == 300: {stats and stats['fwd_pkts']}")
            drops = telemetry(prefix, "/sluice/drops")
            check(drops.get("no_service") == 7, f"/sluice/drops no_service == 7: {drops.get('no_service')}")
            svcs = telemetry(prefix, "/sluice/services,0")
            check(svcs.get("services") == 1 and svcs["192_0_2_10_80_tcp"][0] == 300,
                  f"/sluice/services lists 192.0.2.10:80/tcp with 300 packets")
            bes = telemetry(prefix, "/sluice/backends,0")
            total = sum(b[2] for b in bes.values())  # [pkts, bytes, new_conns, host, wz]
            check(len(bes) == 2 and total == 300, f"/sluice/backends,0: 2 backends, 300 new: {total}")
            ft = telemetry(prefix, "/sluice/flow_table")
            check(ft == {"version": 1, "services": 1, "backends": 2, "maglev_size": 65537},
                  f"/sluice/flow_table: {ft}")
        finally:
            status, log, left = daemons.end("mux")
        check(status == 0, f"exit status 0 after SIGTERM: {status} {log[-300:]}")
        check("service 192.0.2.10:80/tcp  packets 300" in log, "summary printed on SIGTERM")
        check(not left, f"runtime folder {rundir(prefix)} removed")
    raise SystemExit(check.report("telemetry"))


if __name__ == "__main__":
    main()
