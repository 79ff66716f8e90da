#!/usr/bin/python3
"""What systemd sees of the data planes, without systemd: a Type=notify
unit's NOTIFY_SOCKET (a datagram socket the test binds) and its journal
stream (JOURNAL_STREAM naming the daemon's stderr).

  - a standalone mux and agent say READY=1, with a status line, once they
    run; on SIGHUP RELOADING=1 then READY=1; STOPPING=1 on SIGTERM;
  - with JOURNAL_STREAM naming their stderr, every line they log (EAL's
    too) starts with a syslog priority and carries no program name, the
    journal's format; without it, the plain one.
"""
import os
import re
import signal
import subprocess
import tempfile

from scapy.all import IP, TCP, Ether, wrpcap

from sluicetest.checks import Checks
from sluicetest.config import AgentConfig, AgentVM, Backend, MuxConfig, Service
from sluicetest.procs import poll, required_args, stop, test_prefix
from sluicetest.systemd import Notify

SERVICE = Service("192.0.2.10", "tcp", 80, [Backend("10.1.0.11", 8080, "10.0.1.1")])
VM = AgentVM("vm11", "10.1.0.11", "02:00:00:01:01:11")
PRIO = re.compile(r"^<[0-7]>")


def configs(tmp):
    for n in ("in", "vm", "up"):
        wrpcap(os.path.join(tmp, n + ".pcap"), [Ether() / IP(dst="192.0.2.10") / TCP(dport=80)])
    mux = MuxConfig([SERVICE]).render(
        devargs=f"net_pcap0,rx_pcap={tmp}/in.pcap,tx_pcap={tmp}/out.pcap",
        file_prefix=test_prefix("sd", "mux"))
    agent = AgentConfig("10.0.1.1", ["10.255.0.1"], [VM], [SERVICE]).render(
        {"uplink": f"net_pcap0,rx_pcap={tmp}/up.pcap", "vm11": f"net_pcap1,rx_pcap={tmp}/vm.pcap"},
        file_prefix=test_prefix("sd", "agent"))
    out = {}
    for name, text in (("mux", mux), ("agent", agent)):
        out[name] = os.path.join(tmp, name + ".cfg")
        with open(out[name], "w") as f:
            f.write(text)
    return out


def lifecycle(check, name, binary, cfg, tmp, journal):
    """Start NAME under a NOTIFY_SOCKET (and the journal's stream, if
    journal): READY, a reload, a stop; its log lines."""
    notify = Notify(os.path.join(tmp, f"notify-{name}-{journal}"))
    log_path = os.path.join(tmp, f"{name}-{journal}.log")
    log = open(log_path, "w")
    st = os.fstat(log.fileno())
    env = dict(os.environ, NOTIFY_SOCKET=notify.path)
    env.pop("JOURNAL_STREAM", None)
    if journal:
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
    p = subprocess.Popen([binary, "-c", cfg, "-q"], stdout=log, stderr=log, env=env,
                         stdin=subprocess.DEVNULL)
    log.close()
    what = f"{name}{' (journal)' if journal else ''}"
    try:
        ready = poll(lambda: notify.has("READY=1") is not None, timeout=30,
                     alive=lambda: p.poll() is None)
        check(ready, f"{what} says READY=1: {notify.read()}")
        status = [m for m in notify.read() if "READY=1" in m]
        check(status and "STATUS=" in status[0], f"{what}: with a status line: {status[:1]}")
        n = len(notify.read())
        p.send_signal(signal.SIGHUP)
        reloaded = poll(lambda: [m for m in notify.read()[n:] if "READY=1" in m.split("\n")],
                        timeout=20, alive=lambda: p.poll() is None)
        after = notify.read()[n:]
        check(reloaded and "RELOADING=1" in after[0].split("\n"),
              f"{what}: SIGHUP: RELOADING=1, then READY=1: {after}")
    finally:
        rc = stop(p)
    check(rc == 0, f"{what} exits 0 on SIGTERM: {rc}")
    check(notify.has("STOPPING=1") is not None, f"{what} says STOPPING=1 at the end")
    with open(log_path) as f:
        return [l for l in f.read().splitlines() if l]


def main():
    args = required_args("mux", "agent").parse_args()
    check = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = configs(tmp)
        for name, binary in (("mux", args.mux), ("agent", args.agent)):
            lines = lifecycle(check, name, binary, cfg[name], tmp, journal=True)
            bad = [l for l in lines if not PRIO.match(l) or f"sluice-{name}:" in l]
            check(lines and not bad, f"{name} in the journal: all {len(lines)} lines '<N>message': "
                  f"{bad[:3]}")
            eal = [l for l in lines if "EAL:" in l]
            check(eal and all(re.match(r"^<[0-7]>EAL: ", l) for l in eal),
                  f"{name}: EAL's {len(eal)} lines get the prefix too: {eal[:2]}")
            check(any(l.startswith("<6>") and "reloaded" in l for l in lines),
                  f"{name}: the reload logged at info (<6>)")
            plain = lifecycle(check, name, binary, cfg[name], tmp, journal=False)
            check(plain and all(not PRIO.match(l) for l in plain) and
                  any(l.startswith(f"sluice-{name}: info: ") for l in plain),
                  f"{name} elsewhere: the plain format ({plain[:1]})")
    raise SystemExit(check.report("systemd"))


if __name__ == "__main__":
    main()
