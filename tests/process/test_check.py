#!/usr/bin/python3
"""--check, like nginx -t and haproxy -c: sluice-mux, sluice-agent and
sluice-manager validate a configuration and every file it names, then
exit, without starting EAL, opening a database or binding a socket.

A good file prints "FILE: ok" and exits 0; a bad one prints its first
error as "FILE:LINE: field: message" on stderr and exits 1. Each row of
CASES makes one mistake in a good file (a string replacement) and names
the line, the field and the message that must come back. --check never
creates a DPDK run folder, and binds nothing: it passes while another
socket holds the metrics port it names, and the manager's database is
never created.
"""
import os
import shutil
import socket
import subprocess
import tempfile

from scapy.all import IP, TCP, Ether, wrpcap

from sluicetest.checks import Checks
from sluicetest.config import AgentConfig, AgentVM, Backend, MuxConfig, Service
from sluicetest.procs import required_args, rundir, test_prefix

SERVICE = Service("192.0.2.10", "tcp", 80, [Backend("10.1.0.11", 8080, "10.0.1.1")])
VM = AgentVM("vm11", "10.1.0.11", "02:00:00:01:01:11")
VM2 = AgentVM("vm12", "10.1.0.12", "02:00:00:01:01:12")
MANAGER = ('manager = { url = "tls+tcp://127.0.0.1:7400"; id = "%s"; ca = "ca.pem"; '
           'cert = "%s.pem"; key = "%s.key"; };')

# (daemon, file, description, (old, new), field, message)
# file: "standalone" (the flow table in the file) or "managed" (over TLS);
# the manager's "services": its services file, named by its good file.
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
    ("agent", "standalone", "two VMs of one name (it labels their metrics)",
     ('name = "vm12"', 'name  = "vm11"'), "vms[1].name", "same name as vms[0]"),
    ("agent", "standalone", "an unknown field in metrics",
     ('listen = "127.0.0.1:9541";', 'listen = "127.0.0.1:9541"; path = "/m";'), "metrics.path",
     "unknown field"),
    ("agent", "managed", "a certificate that is not there", ('cert = "host1.pem"', 'cert = "no.pem"'),
     "manager.cert", "{dir}/no.pem: No such file or directory"),
    ("manager", "manager", "plain tcp:// for the members", ('listen = "tls+tcp://', 'listen = "tcp://'),
     "manager.listen", '"tcp://127.0.0.1:7400": plain tcp:// is refused'),
    ("manager", "manager", "a key that is not the certificate's",
     ('key = "sluice-manager.key"', 'key = "other.key"'), "manager.tls.key",
     "{dir}/other.key is not the key of {dir}/sluice-manager.pem"),
    ("manager", "manager", "a CA that is no certificate", ('ca = "ca.pem"', 'ca = "ca.key"'),
     "manager.tls.ca", None),
    ("manager", "manager", "a database where no folder can be made",
     ('database = "{dir}/db/manager.db"', 'database = "{dir}/in.pcap/db/manager.db"'),
     "manager.database", "cannot create {dir}/in.pcap/db/manager.db: {dir}/in.pcap is not a folder"),
    ("manager", "manager", "a metrics address with a host name", ("127.0.0.1:9542", "localhost:9542"),
     "metrics.listen", '"localhost:9542": not a numeric IPv4 or [IPv6] address'),
    ("manager", "services", "a services file whose weight is out of range",
     ("port = 8080;", "port = 8080; weight = 70000;"),
     "flow_table.services[0].backends[0].weight", "70000 is out of range 0..65535"),
    # The first entry is all defaults: it leaves no pool behind, yet it is one.
    ("manager", "services", "a services file with two pools for one service",
     ("flow_table = {", 'pools = ( { vip = "192.0.2.10"; port = 80; probe = "tcp"; }, '
      '{ vip = "192.0.2.10"; port = 80; interval = 5; } ); flow_table = {'),
     "pools[1]", "tcp 192.0.2.10:80 has a pool already"),
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
    os.mkdir(os.path.join(tmp, "db"))
    texts = {
        ("mux", "standalone"): mux.render(
            devargs=f"net_pcap0,rx_pcap={tmp}/in.pcap,tx_pcap={tmp}/out.pcap",
            file_prefix=prefix, metrics="127.0.0.1:9540"),
        ("mux", "managed"): MuxConfig(None).render(
            devargs="net_af_packet0,iface=eth9", file_prefix=prefix) +
        MANAGER % ("mux1", "mux1", "mux1") + "\n",
        ("agent", "standalone"): AgentConfig("10.0.1.1", ["10.255.0.1"], [VM, VM2],
                                             [SERVICE]).render(
            {"uplink": f"net_pcap0,rx_pcap={tmp}/up.pcap", "vm11": f"net_pcap1,rx_pcap={tmp}/vm.pcap",
             "vm12": f"net_pcap2,rx_pcap={tmp}/vm.pcap"},
            file_prefix=prefix, metrics="127.0.0.1:9541"),
    }
    managed_agent = texts[("agent", "standalone")].split("flow_table = {")[0]
    texts[("agent", "managed")] = managed_agent + MANAGER % ("host1", "host1", "host1") + "\n"
    # the manager, with a services file (the mux's flow table)
    flow_table = "flow_table = {" + texts[("mux", "standalone")].split("flow_table = {")[1]
    with open(os.path.join(tmp, "services.cfg"), "w") as f:
        f.write(flow_table)
    texts[("manager", "manager")] = f"""manager = {{
	listen = "tls+tcp://127.0.0.1:7400";
	ctl = "ipc://{tmp}/ctl.sock";
	tls = {{ ca = "ca.pem"; cert = "sluice-manager.pem"; key = "sluice-manager.key"; }};
	database = "{tmp}/db/manager.db";
	services_file = "services.cfg";
}};
metrics = {{ listen = "127.0.0.1:9542"; }};
"""
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
    args = required_args("mux", "agent", "manager", "certs").parse_args()
    check = Checks()
    binary = {"mux": args.mux, "agent": args.agent, "manager": args.manager}
    with tempfile.TemporaryDirectory() as tmp:
        good, prefix = files(tmp, args.certs)
        # The metrics ports the good files name are taken: --check binds nothing.
        held = []
        for port in (9540, 9541, 9542):
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
            if kind == "services":
                path = os.path.join(tmp, "services.cfg")
            else:
                path = good[(daemon, kind)]
            text = open(path).read()
            old, new = old.replace("{dir}", tmp), new.replace("{dir}", tmp)
            if old not in text:
                check(False, f"{daemon}: {what}: the good file holds {old!r}")
                continue
            bad = text.replace(old, new, 1)
            lines = bad.split("\n")
            line = next(i + 1 for i, l in enumerate(lines) if (new or old) in l)
            bad_path = os.path.join(tmp, "bad.cfg")
            with open(bad_path, "w") as f:
                f.write(bad)
            if path.endswith("services.cfg"):
                # the services file, named by the good manager file
                shutil.copy(path, path + ".good")
                shutil.copy(bad_path, path)
                bad_path, run_path = path, good[("manager", "manager")]
            else:
                run_path = bad_path
            rc, out, err = run_check(binary[daemon], run_path)
            if path.endswith("services.cfg"):
                shutil.move(path + ".good", path)
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
        check(os.listdir(os.path.join(tmp, "db")) == [],
              "the manager's database was never created")
    raise SystemExit(check.report("check"))


if __name__ == "__main__":
    main()
