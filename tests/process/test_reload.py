#!/usr/bin/python3
"""SIGHUP makes a running sluice-mux apply its configuration file's new flow
table: a backend added keeps the counters of the others (stable ids), the
version goes up by one; a bad file or a changed hash seed is refused with
the file, line and field, and the running table stays as it was; a setting
read at start only (a connection table's service share, a zone) changed
with it is named as needing a restart. A second mux: a service given the
stable id of one removed before starts its rule counters from zero.
"""
import json
import os
import signal
import tempfile
import time

from scapy.all import IP, TCP, Ether, wrpcap

from sluicetest.checks import Checks
from sluicetest.config import Backend, MuxConfig, Service, TEST_SEED
from sluicetest.procs import Daemons, poll, required_args, rundir, telemetry, test_prefix



def config(inp, out, prefix, backends, seed=TEST_SEED, **settings):
    """The mux's file: one pcap port, the VIP with backends [(n, weight)];
    settings: more of MuxConfig's."""
    svc = Service("192.0.2.10", "tcp", 80, [Backend(f"10.1.0.{n}", 8080, f"10.0.1.{n}", w)
                                           for n, w in backends])
    m = MuxConfig([svc], hash_seed=seed)
    for k, v in settings.items():
        setattr(m, k, v)
    return m.render(
        devargs=f"net_pcap0,rx_pcap={inp},tx_pcap={out}", file_prefix=prefix, port_name=None)


def sid_reuse(args, check, tmp):
    """A new service under the stable id of a removed one (given again once
    the removed one's connections can no longer live): its rule counters
    start from zero. Before Found 57 they showed the old service's counts,
    then went back as each worker met the newcomer: a false reset, and a
    false rate, to Prometheus."""
    inp, out, cfg, js = (os.path.join(tmp, n) for n in ("in2.pcap", "out2.pcap", "mux2.cfg",
                                                         "mux2.json"))
    wrpcap(inp, [Ether(src="02:00:00:00:00:fe", dst="02:00:00:00:00:01") /
                 IP(src=f"198.51.100.{i + 1}", dst="192.0.2.10") /
                 TCP(sport=2000 + i, dport=80, flags="S") for i in range(50)])
    rule = {"new_per_second": {"limit": 1000000}}
    a, b, c = (Service(vip, "tcp", 80, [Backend("10.1.0.1", 8080, "10.0.1.1")],
                       limits=lim)
               for vip, lim in (("192.0.2.10", rule), ("192.0.2.20", rule), ("192.0.2.30", None)))
    prefix = test_prefix("reload-sid")

    def write(services):
        with open(cfg, "w") as f:
            f.write(MuxConfig(services, hash_seed=TEST_SEED,
                              conn_table={"tcp_timeout": 1, "tcp_fin_timeout": 1,
                                          "udp_timeout": 1}).render(
                devargs=f"net_pcap0,rx_pcap={inp},tx_pcap={out}", file_prefix=prefix,
                port_name=None))

    def reload(services, version):
        write(services)
        mux.send_signal(signal.SIGHUP)
        return poll(lambda: telemetry(prefix, "/sluice/flow_table")["version"] == version, 20)

    daemons = Daemons(tmp)
    write([a, c])
    mux = daemons.start("mux2", [args.mux, "-c", cfg, "--stats-json", js], prefix=prefix)
    try:
        check(poll(lambda: telemetry(prefix, "/sluice/stats")["rx_pkts"] == 50, 20),
              "the 50 SYNs to 192.0.2.10 are read")
        check(reload([c], 2), "192.0.2.10 removed: version 2")
        time.sleep(2)  # its id is held for the longest connection timeout, 1 s
        check(reload([c, b], 3), "192.0.2.20 added: version 3")
    finally:
        status, log, _ = daemons.end("mux2")
    check(status == 0, f"the second mux exits 0: {status}")
    with open(js) as f:
        svcs = {s["vip"]: s for s in json.load(f)["services"]}
    got = svcs.get("192.0.2.20", {}).get("limits", {}).get("new_per_second")
    check(got is not None and got["checked"] == 0 and got["passed"] == 0,
          f"192.0.2.20's new_per_second counters start from zero: {got}")


def main():
    args = required_args("mux").parse_args()
    check = Checks()

    def wait_for(pred, what, timeout=20):
        v = poll(pred, timeout)
        if v is None:
            check(False, "timed out waiting for " + what)
        return v

    with tempfile.TemporaryDirectory() as tmp:
        inp, out, cfg = (os.path.join(tmp, n) for n in ("in.pcap", "out.pcap", "mux.cfg"))
        wrpcap(inp, [Ether(src="02:00:00:00:00:fe", dst="02:00:00:00:00:01") /
                     IP(src=f"198.51.100.{i % 200 + 1}", dst="192.0.2.10") /
                     TCP(sport=1000 + i, dport=80, flags="S") for i in range(300)])
        prefix = test_prefix("reload")
        with open(cfg, "w") as f:
            f.write(config(inp, out, prefix, [(1, 1), (2, 1)]))
        daemons = Daemons(tmp)
        mux = daemons.start("mux", [args.mux, "-c", cfg], prefix=prefix)

        def outcomes():
            """The mux's reload outcomes so far: lines "reloaded flow table"
            and "reload refused" (each reload logs one, last)."""
            text = daemons.log("mux")
            return text.count("reloaded flow table") + text.count("reload refused")

        def reload(backends, line, what, seed=TEST_SEED, **settings):
            """The file with these backends, SIGHUP, until the log has one
            outcome more than before the signal (a line already in the log,
            from an earlier reload, would not do); then check that the new
            part of the log has line."""
            n, seen = outcomes(), len(daemons.log("mux"))
            with open(cfg, "w") as f:
                f.write(config(inp, out, prefix, backends, seed, **settings))
            mux.send_signal(signal.SIGHUP)
            wait_for(lambda: outcomes() > n, what)
            check(line in daemons.log("mux")[seen:], f"{what}: the log says {line!r}")

        v_end = 3
        try:
            # rx_pkts counts a burst when it is taken, the backends' counters
            # as it is forwarded: wait for both (docs/reliability.md, Found 18)
            wait_for(lambda: telemetry(prefix, "/sluice/stats")["rx_pkts"] == 300 and
                     sum(b[2] for b in telemetry(prefix, "/sluice/backends,0").values()) == 300,
                     "the input to be read and forwarded")
            before = telemetry(prefix, "/sluice/backends,0")
            check(sum(b[2] for b in before.values()) == 300,
                  f"300 new connections over 2 backends: {before}")

            # Add a backend: version 2, the old ones keep their counters.
            reload([(1, 1), (2, 1), (3, 2)], "reloaded flow table: version 2", "the reload line")
            ft = telemetry(prefix, "/sluice/flow_table")
            check(ft["version"] == 2 and ft["backends"] == 3, f"version 2, 3 backends: {ft}")
            after = telemetry(prefix, "/sluice/backends,0")
            check(len(after) == 3, f"3 backends listed: {list(after)}")
            for k, v in before.items():
                check(after.get(k, [None] * 3)[2] == v[2],
                      f"{k} keeps its {v[2]} new connections across the reload")

            # Swap a backend for a newcomer: it starts from zero, whatever id it gets.
            reload([(1, 1), (3, 2), (4, 1)], "reloaded flow table: version 3",
                   "the second reload")
            after = telemetry(prefix, "/sluice/backends,0")
            check(sorted(after) == ["10_1_0_1_8080", "10_1_0_3_8080", "10_1_0_4_8080"],
                  f"10.1.0.2 gone, 10.1.0.4 listed: {sorted(after)}")
            check(after.get("10_1_0_4_8080", [None] * 3)[2] == 0,
                  f"the newcomer reports no connections of its own yet: {after}")
            check(after.get("10_1_0_1_8080", [None] * 3)[2] == before["10_1_0_1_8080"][2],
                  "10.1.0.1 keeps its counters through both reloads")

            # A bad file: refused, named, nothing changes.
            reload([(1, 1), (2, 70000)], "reload refused", "the refusal")
            text = daemons.log("mux")
            check("mux.cfg:" in text and "backends[1].weight" in text and "70000" in text,
                  "the refusal names file, line and field")
            ft = telemetry(prefix, "/sluice/flow_table")
            check(ft["version"] == 3 and ft["backends"] == 3, f"still version 3: {ft}")

            # A new seed: refused (connection tables are keyed by the old one).
            reload([(1, 1)], "changing the seed needs a restart", "the seed refusal",
                   seed="f" * 32)
            check(telemetry(prefix, "/sluice/flow_table")["version"] == 3, "still version 3")

            # Settings read at start only: the reload says they need a restart.
            # Each still applies the flow table: versions 4 and 5. The warning
            # comes before the outcome line that reload() waits for.
            for v, (what, settings) in enumerate((("conn_table.service_share",
                                                   {"conn_table": {"service_share": 40}}),
                                                  ("mux.zone", {"zone": "az1"})), 4):
                n = daemons.log("mux").count("restart to apply")
                reload([(1, 1), (3, 2), (4, 1)], f"reloaded flow table: version {v}", what,
                       **settings)
                check(daemons.log("mux").count("restart to apply") > n,
                      f"a reload with {what} changed says it needs a restart")
            v_end = telemetry(prefix, "/sluice/flow_table")["version"]
            check(v_end == 5, f"the last reload runs: version 5: {v_end}")
        finally:
            status, log, left = daemons.end("mux")
        check(status == 0, f"exit status 0: {status}")
        check(f"flow table version {v_end}" in log and "10.1.0.4:8080" in log,
              f"the summary shows version {v_end} and the added backend")
        check(not left, f"runtime folder {rundir(prefix)} removed")
        sid_reuse(args, check, tmp)
    raise SystemExit(check.report("reload"))


if __name__ == "__main__":
    main()
