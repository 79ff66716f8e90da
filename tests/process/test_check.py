#!/usr/bin/python3
"""--check, like nginx -t and haproxy -c: sluice-mux and sluice-agent
validate a configuration and every file it names, then exit, without
starting EAL or binding a socket.

A good file prints "FILE: ok" and exits 0; a bad one prints its first
error as "FILE:LINE: field: message" on stderr and exits 1. Each row of
CASES makes one mistake in a good file (a string replacement) and names
the line, the field and the message that must come back. --check never
creates a DPDK run folder, and binds nothing: it passes while another
socket holds the metrics port it names.
"""
import argparse
import os
import socket
import subprocess
import tempfile

from scapy.all import IP, TCP, Ether, wrpcap

from sluicetest.checks import Checks
from sluicetest.config import AgentConfig, AgentVM, Backend, MuxConfig, Service
from sluicetest.procs import rundir, test_prefix

SERVICE = Service("192.0.2.10", "tcp", 80, [Backend("10.1.0.11", 8080, "10.0.1.1")])
VM = AgentVM("vm11", "10.1.0.11", "02:00:00:01:01:11")
MANAGER = ('manager = { url = "tls+tcp://127.0.0.1:7400"; id = "%s"; ca = "ca.pem"; '
           'cert = "%s.pem"; key = "%s.key"; };')

# (daemon, file, description, (old, new), field, message)
# file: "standalone" (the flow table in the file) or "managed" (over TLS).
# The mistake's line is the first line holding new (or old, when new is "").
CASES = [
    ("mux", "standalone", "a syntax error", ('tunnel_address = "10.255.0.1";',
     'tunnel_address = = "10.255.0.1";'), None, "syntax error"),
    ("mux", "standalone", "an unknown top-level group", ("metrics = {", "metric = {"),
     "metric", "unknown field"),
    ("mux", "standalone", "a host name where an address goes",
     ("127.0.0.1:9540", "localhost:9540"), "metrics.listen",
     '"localhost:9540": not a numeric IPv4 or [IPv6] address'),
    ("mux", "standalone", "a port out of range", ("127.0.0.1:9540", "127.0.0.1:95400"),
     "metrics.listen", '"127.0.0.1:95400": the port is 0..65535'),
    ("mux", "standalone", "metrics not a group",
     ('metrics = { listen = "127.0.0.1:9540"; };', 'metrics = "127.0.0.1:9540";'),
     "metrics", 'expected a group { listen = "ADDRESS:PORT"; }'),
    ("mux", "standalone", "a weight out of range", ("port = 8080;", "port = 8080; weight = 70000;"),
     "flow_table.services[0].backends[0].weight", "70000 is out of range 0..65535"),
    ("mux", "standalone", "an rx_pcap file that is not there", ("in.pcap", "gone.pcap"),
     "ports[0].devargs", "cannot read pcap file {dir}/gone.pcap"),
    ("mux", "managed", "a certificate that is not there", ('cert = "mux1.pem"', 'cert = "no.pem"'),
     "manager.cert", "{dir}/no.pem: No such file or directory"),
    ("mux", "managed", "a key that is not the certificate's", ('key = "mux1.key"', 'key = "other.key"'),
     "manager.key", "{dir}/other.key is not the key of {dir}/mux1.pem"),
    ("mux", "managed", "a CA that is no certificate", ('ca = "ca.pem"', 'ca = "ca.key"'),
     "manager.ca", None),
    ("mux", "managed", "a manager URL of another scheme", ("tls+tcp://", "tcp://"),
     "manager.url", '"tcp://127.0.0.1:7400": the manager is reached by tls+tcp:// (mutual TLS) or ipc://'),
    ("agent", "standalone", "a PA that is no address", ('pa = "10.0.1.1";', 'pa = "10.0.1";'),
     "agent.pa", None),
    ("agent", "standalone", "a VM's rx_pcap file that is not there", ("vm.pcap", "gone.pcap"),
     "vms[0].devargs", "cannot read pcap file {dir}/gone.pcap"),
    ("agent", "standalone", "an unknown field in metrics",
     ('listen = "127.0.0.1:9541";', 'listen = "127.0.0.1:9541"; path = "/m";'), "metrics.path",
     "unknown field"),
    ("agent", "managed", "a certificate that is not there", ('cert = "host1.pem"', 'cert = "no.pem"'),
     "manager.cert", "{dir}/no.pem: No such file or directory"),
]


def files(tmp, certs):
    """The good files: {(daemon, kind): path}."""
    subprocess.run([certs, tmp, "sluice-manager", "mux1", "host1", "other"], check=True,
                   capture_output=True)
    for n in ("in", "vm", "up"):
        wrpcap(os.path.join(tmp, n + ".pcap"),
               [Ether() / IP(dst="192.0.2.10") / TCP(dport=80)])
    mux = MuxConfig([SERVICE])
    out = {}
    prefix = test_prefix("chk")
    texts = {
        ("mux", "standalone"): mux.render(
            devargs=f"net_pcap0,rx_pcap={tmp}/in.pcap,tx_pcap={tmp}/out.pcap",
            file_prefix=prefix, metrics="127.0.0.1:9540"),
        ("mux", "managed"): MuxConfig(None).render(
            devargs="net_af_packet0,iface=eth9", file_prefix=prefix) +
        MANAGER % ("mux1", "mux1", "mux1") + "\n",
        ("agent", "standalone"): AgentConfig("10.0.1.1", ["10.255.0.1"], [VM], [SERVICE]).render(
            {"uplink": f"net_pcap0,rx_pcap={tmp}/up.pcap", "vm11": f"net_pcap1,rx_pcap={tmp}/vm.pcap"},
            file_prefix=prefix, metrics="127.0.0.1:9541"),
    }
    managed_agent = texts[("agent", "standalone")].split("flow_table = {")[0]
    texts[("agent", "managed")] = managed_agent + MANAGER % ("host1", "host1", "host1") + "\n"
    for (daemon, kind), text in texts.items():
        path = os.path.join(tmp, f"{daemon}-{kind}.cfg")
        with open(path, "w") as f:
            f.write(text)
        out[(daemon, kind)] = path
    return out, prefix


def run_check(binary, path):
    r = subprocess.run([binary, "--check", "-c", path], capture_output=True, text=True,
                       timeout=30)
    return r.returncode, r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mux", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--certs", required=True)
    args = ap.parse_args()
    check = Checks()
    binary = {"mux": args.mux, "agent": args.agent}
    with tempfile.TemporaryDirectory() as tmp:
        good, prefix = files(tmp, args.certs)
        # The metrics ports the good files name are taken: --check binds nothing.
        held = []
        for port in (9540, 9541):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
                s.listen()
                held.append(s)
            except OSError:
                s.close()  # someone else holds it: just as good
        for (daemon, kind), path in sorted(good.items()):
            rc, out, err = run_check(binary[daemon], path)
            check(rc == 0 and out == f"{path}: ok\n" and err == "",
                  f"{daemon} --check on a good {kind} file: {rc} {out.strip()} {err.strip()[:200]}")
        for daemon, kind, what, (old, new), field, msg in CASES:
            path = good[(daemon, kind)]
            text = open(path).read()
            if old not in text:
                check(False, f"{daemon}: {what}: the good file holds {old!r}")
                continue
            bad = text.replace(old, new, 1)
            lines = bad.split("\n")
            line = next(i + 1 for i, l in enumerate(lines) if (new or old) in l)
            bad_path = os.path.join(tmp, "bad.cfg")
            with open(bad_path, "w") as f:
                f.write(bad)
            rc, out, err = run_check(binary[daemon], bad_path)
            if field is None:  # a syntax error names no field
                want = f"{bad_path}:{line}: {msg}"
                ok = err.startswith(want)
            else:
                want = f"{bad_path}:{line}: {field}: " + (msg or "").replace("{dir}", tmp)
                ok = err.startswith(want) and err.count("\n") == 1
            check(rc == 1 and out == "" and ok,
                  f"{daemon} --check, {what}: exit {rc}, {err.strip()!r} (want {want!r}...)")
        for s in held:
            s.close()
        check(not os.path.exists(rundir(prefix)), "no DPDK run folder: EAL never started")
    raise SystemExit(check.report("check"))


if __name__ == "__main__":
    main()
