#!/usr/bin/python3
"""Live capture on the running lab (tests/netns/capture.sh starts it on
hugepages): dpdk-dumpcap attaches to the mux and to host agent 1 as a DPDK
secondary process, with the capture filter 'ip proto 4', while N requests
go through the VIP. Then:

  - the mux's capture holds exactly what it forwarded meanwhile (the
    delta of its fwd_pkts), each packet IP-in-IP from its tunnel address
    to a host's PA, carrying the client's packet to a backend's DIP:port;
  - agent 1's capture holds exactly the mux's packets for its PA, which
    it decapsulated (the delta of its decap), the same packets byte for
    byte from the outer IP header on.

The counters are read once they stop moving (steady), before the captures
stop, so no packet falls between a reading and a capture's end.
"""
import argparse
import os
import signal
import subprocess
import sys

from scapy.all import IP, TCP, rdpcap

from sluicetest.checks import Checks
from sluicetest.lab import http_burst, steady
from sluicetest.procs import poll, telemetry


class Capture:
    """dpdk-dumpcap on PORT of the process with PREFIX, into PATH."""

    def __init__(self, prefix, port, path, log):
        self.path, self.log = path, log
        with open(log, "w") as f:
            self.p = subprocess.Popen(
                # stdbuf: dumpcap says "Capturing on" on a buffered stdout
                ["stdbuf", "-oL", "dpdk-dumpcap", f"--file-prefix={prefix}", "-i", port,
                 "-f", "ip proto 4",
                 "-w", path], stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def text(self):
        with open(self.log) as f:
            return f.read()

    def capturing(self):
        return "Capturing on" in self.text()

    def stop(self):
        """SIGINT (dumpcap's Ctrl-C: it detaches and writes the file); its exit status."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            return self.p.wait(15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait()


def outer_ok(p, mux_ta, pas, dips, port):
    """IP-in-IP from the mux to a PA, inner to a DIP:port."""
    if IP not in p or p[IP].proto != 4 or not isinstance(p[IP].payload, IP):
        return False
    inner = p[IP].payload
    return (p[IP].src == mux_ta and p[IP].dst in pas and inner.dst in dips and
            TCP in inner and inner[TCP].dport == port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--client-ns", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--mux", required=True, help="the mux's file prefix")
    ap.add_argument("--mux-port", required=True)
    ap.add_argument("--agent", required=True, help="agent 1's file prefix")
    ap.add_argument("--agent-port", required=True)
    ap.add_argument("--mux-ta", required=True)
    ap.add_argument("--pa", required=True, help="agent 1's PA")
    ap.add_argument("--pas", required=True)
    ap.add_argument("--dips", required=True)
    ap.add_argument("--be-port", type=int, required=True)
    ap.add_argument("--client", required=True)
    a = ap.parse_args()
    check = Checks()
    pas, dips = set(a.pas.split(",")), set(a.dips.split(","))

    caps = {"mux": Capture(a.mux, a.mux_port, os.path.join(a.dir, "mux.pcapng"),
                           os.path.join(a.dir, "dumpcap-mux.log")),
            "agent1": Capture(a.agent, a.agent_port, os.path.join(a.dir, "agent1.pcapng"),
                              os.path.join(a.dir, "dumpcap-agent1.log"))}
    try:
        for name, c in caps.items():
            ok = poll(c.capturing, timeout=20, alive=lambda: c.p.poll() is None)
            check(ok, f"dpdk-dumpcap attaches to the running {name}: "
                  f"{c.text().strip()[-200:] if not ok else 'capturing'}")
        if check.failures:
            return check.report("capture")

        def counters():
            return (telemetry(a.mux, "/sluice/stats")["fwd_pkts"],
                    telemetry(a.agent, "/sluice/agent/stats")["decap"])

        before = steady(counters)
        burst = http_burst(a.client_ns, a.url, a.n)
        check(not burst.failures, f"{a.n} requests through the VIP while capturing: "
              f"{len(burst.failures)} failed")
        after = steady(counters, timeout=20)
        check(before is not None and after is not None, "the counters settle")
    finally:
        status = {name: c.stop() for name, c in caps.items()}
    for name, st in status.items():
        last = (caps[name].text().strip().splitlines() or [""])[-1]
        check(st == 0, f"dumpcap on the {name} stops on SIGINT: exit {st}, {last[-120:]}")
    if before is None or after is None:
        return check.report("capture")
    fwd, decap = after[0] - before[0], after[1] - before[1]
    mux_pkts = rdpcap(caps["mux"].path)
    agent_pkts = rdpcap(caps["agent1"].path)
    print(f"# forwarded {fwd}, captured {len(mux_pkts)} at the mux; "
          f"agent 1 decapsulated {decap}, captured {len(agent_pkts)}")
    check(fwd >= 5 * a.n, f"the mux forwarded the requests' packets: {fwd}")
    check(len(mux_pkts) == fwd,
          f"the mux's capture holds what it forwarded: {len(mux_pkts)} packets, fwd_pkts +{fwd}")
    bad = [p for p in mux_pkts if not outer_ok(p, a.mux_ta, pas, dips, a.be_port)]
    check(not bad, f"each is IP-in-IP {a.mux_ta} -> a PA, inner to a DIP:{a.be_port}: "
          f"{len(bad)} are not")
    check(all(p[IP].payload.src == a.client for p in mux_pkts if IP in p),
          f"each carries a packet of the client {a.client}")
    to_pa = [bytes(p[IP].payload) for p in mux_pkts if IP in p and p[IP].dst == a.pa]
    check(len(agent_pkts) == decap == len(to_pa),
          f"agent 1's capture holds what it decapsulated, the mux's packets to {a.pa}: "
          f"{len(agent_pkts)} captured, decap +{decap}, {len(to_pa)} sent to it")
    check(sorted(bytes(p[IP].payload) for p in agent_pkts if IP in p) == sorted(to_pa),
          "byte for byte the inner packets the mux sent it")
    return check.report("capture")


if __name__ == "__main__":
    sys.exit(main())
