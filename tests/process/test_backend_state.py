#!/usr/bin/python3
"""Backend states through reloads of a running sluice-mux: established
connections stay on a draining backend and move off one in maintenance, new
ones go to active backends only, and a pool with no active backend drops new
flows while its draining backends keep theirs.

The mux must keep a connection table across flow-table versions, so this
runs one mux on a live port (a pcap port reads its file once, at start) and
feeds it real frames between SIGHUP reloads:

    netns sluice-bs-PID (IPv6 off: nothing but this test's frames)
    +--------------------------------------------------------------+
    |  sluice-mux                                                  |
    |  net_af_packet0 on bs-mux (MAC 02:70:63:61:70:00)            |
    |      |                                                       |
    |    bs-mux ===== veth ===== bs-drv <- AF_PACKET socket of     |
    |                                      this script (setns)     |
    +--------------------------------------------------------------+

Service 192.0.2.60:80/TCP, backends A1 A2 B C (weight 1):

    v1  all active                 400 SYNs (flows F), pinned A1/A2/B/C
    v2  B drain, C maint           F's ACKs: A1/A2/B flows stay, C flows move
                                   to A1/A2; 300 new SYNs (G) on A1/A2 only
    v3  all active again           F+G's ACKs: every flow where v2 put it (a
                                   flow moved off C stays moved: its entry was
                                   rewritten, it does not go back to C)
    v4  A1 B drain, A2 C maint     F+G's ACKs: A1/B flows still flow, A2 flows
                                   and 100 new SYNs (H) dropped no_backend

Each phase is paced (a batch waits until the mux has read it), every output
frame is checked field by field (sluicetest.pcap.check_encap), and the counters'
deltas (conn_new, conn_hit, per-backend new_conns and pkts, drops) must match
what the frames show. Needs root (namespaces); exits 77 (skipped) without it.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import ARP, Ether

from sluicetest import pcap as sp
from sluicetest.netns import PACKET_OUTGOING, Namespace, ns_socket
from sluicetest.procs import poll, required_args, rundir, stop, telemetry

VIP, PORT = "192.0.2.60", 80
A1, A2, B, C = "10.6.0.1", "10.6.0.2", "10.6.0.3", "10.6.0.4"
ALL = (A1, A2, B, C)
DRV_MAC = "02:00:00:00:c1:02"
N_F, N_G, N_H = 400, 300, 100
BATCH = 64
WAIT = 20  # seconds any one condition may take


def table(states):
    """A MuxConfig for {dip: state}: rendered for the mux, and what
    check_encap checks outputs against."""
    return sp.MuxConfig([sp.Service(VIP, "tcp", PORT, [
        sp.Backend(d, 8080, "10.0.60.%s" % d.split(".")[-1], 1, states[d]) for d in ALL])])


class Rig:
    """The namespace, the mux in it, the socket, and the checks."""

    def __init__(self, case, mux):
        self.case, self.mux_path = case, mux
        self.ns = Namespace("sluice-bs-%d" % os.getpid())
        self.proc = None
        self.sock = None
        self.ip_id = 0
        self.sent = {}  # IP id -> input frame
        self.version = 1

    def up(self, cfg):
        ns = self.ns.create()
        ns.ip("link", "add", "bs-mux", "address", sp.PORT_MAC,
              "type", "veth", "peer", "name", "bs-drv", "address", DRV_MAC)
        for d in ("bs-mux", "bs-drv"):
            ns.ip("link", "set", d, "up")
        self.sock = ns_socket(ns.name, "bs-drv")
        self.cfg_path = self.case.path("mux.cfg")
        self.log_path = self.case.path("mux.log")
        self.json_path = self.case.path("mux.json")
        self.write_cfg(cfg)
        self.log = open(self.log_path, "w")
        self.case.runs += 1
        self.proc = subprocess.Popen(
            self.ns.argv(self.mux_path, "-c", self.cfg_path, "--stats-json", self.json_path),
            stdout=self.log, stderr=subprocess.STDOUT, cwd=self.case.tmp)
        # ip netns exec execs the mux: same pid, so its EAL file prefix is known.
        self.prefix = "sluice-mux-%d" % self.proc.pid
        self.rundir = rundir(self.prefix)
        self.case.require(self.wait(self.arp_answered, "the mux to answer ARP"),
                          "the mux runs: %s", self.log_text()[-2000:])
        self.recv_all(0.3)  # replies to the other ARP requests

    def write_cfg(self, cfg):
        with open(self.cfg_path, "w") as f:
            f.write(cfg.render() + 'ports = ( { name = "veth"; '
                    'devargs = "net_af_packet0,iface=bs-mux"; } );\n')

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()

    def wait(self, pred, what, timeout=WAIT):
        v = poll(pred, timeout, interval=0.02, alive=lambda: self.proc.poll() is None)
        if v is None and self.proc.poll() is not None:
            self.case.check(False, "the mux exited (%s) while waiting for %s" % (
                self.proc.returncode, what))
        elif v is None:
            self.case.check(False, "timed out waiting for " + what)
        return v

    def arp_answered(self):
        self.sock.send(bytes(Ether(src=DRV_MAC, dst="ff:ff:ff:ff:ff:ff") /
                             ARP(op=1, hwsrc=DRV_MAC, psrc="10.255.0.9",
                                 pdst="10.255.0.1")))
        return any(sp.Frame(f).type == sp.ETH_ARP for f in self.recv_all(0.1))

    def recv_all(self, quiet):
        """Frames the mux sent, until none came for `quiet` seconds."""
        out = []
        self.sock.settimeout(quiet)
        while True:
            try:
                data, addr = self.sock.recvfrom(65535)
            except (socket.timeout, BlockingIOError):
                return out
            if addr[2] != PACKET_OUTGOING:
                out.append(data)

    def stats(self):
        st = telemetry(self.prefix, "/sluice/stats")
        st["backends"] = {k.split("_8080")[0].replace("_", "."): v for k, v in
                          telemetry(self.prefix, "/sluice/backends,0").items()}
        st["drops"] = telemetry(self.prefix, "/sluice/drops")
        return st

    def reload(self, cfg):
        self.write_cfg(cfg)
        self.version += 1
        self.proc.send_signal(signal.SIGHUP)
        line = "reloaded flow table: version %d" % self.version
        self.case.require(self.wait(lambda: line in self.log_text(), line),
                          "reload to version %d: %s", self.version, self.log_text()[-2000:])

    def frame(self, client, flags):
        src, sport = client
        self.ip_id += 1
        f = bytes(Ether(src=DRV_MAC, dst=sp.PORT_MAC) /
                  IP(src=src, dst=VIP, id=self.ip_id, flags="DF") /
                  TCP(sport=sport, dport=PORT, flags=flags, seq=1000))
        self.sent[self.ip_id] = f
        return f

    def phase(self, cfg, tag, packets):
        """Send [(client, flags)] in paced batches; return ({client:
        backend dip} of what came out, counter deltas)."""
        before = self.stats()
        rx0, tx0 = before["rx_pkts"], before["tx_pkts"]
        drops0 = sum(before["drops"].values())
        frames = [self.frame(c, fl) for c, fl in packets]
        got = []
        for i in range(0, len(frames), BATCH):
            for f in frames[i:i + BATCH]:
                self.sock.send(f)
            n = rx0 + min(i + BATCH, len(frames))
            self.case.require(self.wait(lambda: self.stats()["rx_pkts"] >= n,
                                        "%s: the mux to read %d frames" % (tag, n)),
                              "%s: frames read", tag)
            got += self.recv_all(0.0)

        # Each frame is either sent on (tx_pkts) or dropped under a reason.
        def finished():
            s = self.stats()
            return s if (s["tx_pkts"] - tx0 + sum(s["drops"].values()) - drops0 >=
                         len(frames)) else None

        after = self.wait(finished, "%s: every frame forwarded or dropped" % tag)
        self.case.require(after is not None, "%s: the mux handled every frame", tag)
        sent_on = after["tx_pkts"] - tx0

        def received():
            got.extend(self.recv_all(0.01))
            return len(got) >= sent_on

        self.wait(received, "%s: %d frames to arrive" % (tag, sent_on))
        got += self.recv_all(0.2)  # and no more than that
        self.case.eq(after["rx_pkts"] - rx0, len(frames), tag + ": rx_pkts delta")
        self.case.eq(len(got), sent_on, tag + ": frames received = tx_pkts delta")
        where = {}
        for k, out in enumerate(got):
            inner = sp.inner_of(out)
            if not self.case.check(inner is not None and inner.id in self.sent,
                                   "%s: output %d is not an encapsulated input", tag, k):
                continue
            be = sp.check_encap(self.case, cfg, out, self.sent[inner.id],
                                "%s: input %d" % (tag, inner.id))
            if be is None:
                continue
            fl = (inner.src, inner.ports()[0])
            self.case.check(fl not in where, "%s: flow %s forwarded twice", tag, fl)
            where[fl] = be[0]
        d = {"conn_new": after["conn_new"] - before["conn_new"],
             "conn_hit": after["conn_hit"] - before["conn_hit"],
             "drops": {r: v - before["drops"].get(r, 0) for r, v in after["drops"].items()
                       if v != before["drops"].get(r, 0)}}
        for dip in ALL:
            a, b = after["backends"][dip], before["backends"][dip]
            d[dip] = {"pkts": a[0] - b[0], "new": a[2] - b[2]}
        return where, d

    def down(self):
        if self.proc is not None:
            stop(self.proc, timeout=30)
            self.case.eq(self.proc.returncode, 0, "the mux exits 0 on SIGTERM")
            self.case.check(not os.path.exists(self.rundir), "runtime folder %s removed",
                            self.rundir)
            shutil.rmtree(self.rundir, ignore_errors=True)
            self.log.close()
        if self.sock is not None:
            self.sock.close()
        self.ns.delete()


def clients(n, rnd, seen):
    out = []
    while len(out) < n:
        c = ("198.51.%d.%d" % (rnd.randint(0, 255), rnd.randint(1, 254)),
             rnd.randint(1024, 65535))
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


def expect_same(case, tag, where, pinned, flows):
    moved = [f for f in flows if where.get(f) != pinned[f]]
    case.check(not moved, "%s: %d of %d flows not on their backend, e.g. %s", tag, len(moved),
               len(flows), [(f, pinned[f], where.get(f)) for f in moved[:3]])


def run(case, mux):
    rnd = random.Random(6060)
    seen = set()
    F, G, H = clients(N_F, rnd, seen), clients(N_G, rnd, seen), clients(N_H, rnd, seen)
    v1 = table({A1: "active", A2: "active", B: "active", C: "active"})
    v2 = table({A1: "active", A2: "active", B: "drain", C: "maint"})
    v3 = v1
    v4 = table({A1: "drain", A2: "maint", B: "drain", C: "maint"})
    rig = Rig(case, mux)
    try:
        rig.up(v1)

        # v1: every backend takes new flows.
        pin, d = rig.phase(v1, "v1", [(c, "S") for c in F])
        case.eq(len(pin), N_F, "v1: every SYN forwarded")
        on = {be: [f for f in F if pin.get(f) == be] for be in ALL}
        case.require(all(on[be] for be in ALL), "v1: flows on every backend: %s",
                     {be: len(v) for be, v in on.items()})
        case.eq(d["conn_new"], N_F, "v1: conn_new")

        # v2: B drains, C goes into maintenance.
        rig.reload(v2)
        where, d = rig.phase(v2, "v2", [(c, "A") for c in F] + [(c, "S") for c in G])
        expect_same(case, "v2: A1/A2/B (B draining) flows", where, pin,
                    on[A1] + on[A2] + on[B])
        bad = [f for f in on[C] if where.get(f) not in (A1, A2)]
        case.check(not bad, "v2: %d of %d flows of C (maint) not moved to A1/A2, e.g. %s",
                   len(bad), len(on[C]), [(f, where.get(f)) for f in bad[:3]])
        bad = [f for f in G if where.get(f) not in (A1, A2)]
        case.check(not bad, "v2: %d of %d new flows not on A1/A2, e.g. %s", len(bad), N_G,
                   [(f, where.get(f)) for f in bad[:3]])
        case.check({where.get(f) for f in G} == {A1, A2}, "v2: new flows on both A1 and A2")
        case.eq(d["conn_new"], len(on[C]) + N_G, "v2: conn_new = C's moved flows + new flows")
        case.eq(d["conn_hit"], N_F - len(on[C]), "v2: conn_hit = flows of A1, A2, B")
        case.eq(d[B], {"pkts": len(on[B]), "new": 0}, "v2: B (drain): its flows' packets only")
        case.eq(d[C], {"pkts": 0, "new": 0}, "v2: C (maint): nothing")
        case.eq(d[A1]["new"] + d[A2]["new"], len(on[C]) + N_G, "v2: A1+A2 new_conns")
        case.eq(d["drops"], {}, "v2: no drops")
        for f in F + G:
            pin[f] = where.get(f)

        # v3: all active again; nobody moves back.
        rig.reload(v3)
        where, d = rig.phase(v3, "v3", [(c, "A") for c in F + G])
        expect_same(case, "v3: every flow", where, pin, F + G)
        case.eq(sum(1 for f in on[C] if where.get(f) == C), 0,
                "v3: flows moved off C stay moved (entries rewritten)")
        case.eq(d["conn_new"], 0, "v3: conn_new")
        case.eq(d["conn_hit"], N_F + N_G, "v3: conn_hit")
        case.eq(d["drops"], {}, "v3: no drops")

        # v4: nothing active: A1 and B drain, A2 and C in maintenance.
        rig.reload(v4)
        where, d = rig.phase(v4, "v4", [(c, "A") for c in F + G] + [(c, "S") for c in H])
        keep = [f for f in F + G if pin[f] in (A1, B)]
        lost = [f for f in F + G if pin[f] in (A2, C)]
        expect_same(case, "v4: A1/B (drain) flows", where, pin, keep)
        case.eq(len(where), len(keep), "v4: only the draining backends' flows forwarded")
        case.eq(d["drops"], {"no_backend": len(lost) + N_H},
                "v4: A2's flows and the new SYNs dropped no_backend")
        case.eq(d["conn_new"], 0, "v4: conn_new")
        case.eq(d["conn_hit"], len(keep), "v4: conn_hit")
        for be in ALL:
            case.eq(d[be]["new"], 0, "v4: %s new_conns" % be)
        print("backend_state (process): flows on A1/A2/B/C %s at v1; v2 moves C's, sends "
              "%d new to A1/A2; v4 keeps %d draining flows and drops %d (no_backend)" % (
                  "/".join(str(len(on[be])) for be in ALL), N_G, len(keep), len(lost) + N_H))
    finally:
        rig.down()


def main():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        print("backend_state: needs root and iproute2 (network namespaces): skipped")
        sys.exit(77)
    mux = os.path.abspath(required_args("mux").parse_known_args()[0].mux)
    # A test runner's SIGTERM (timeout) still removes the namespace and the mux.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    with sp.Case("backend_state_reload") as case:
        run(case, mux)


if __name__ == "__main__":
    main()
