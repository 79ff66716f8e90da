# SPDX-License-Identifier: BSD-3-Clause
"""The packet tests' harness (tests/pcap/<case>/test.py, and the process
test of backend states): pcap files, frames decoded byte by byte, expected
frames made by byte-level edits, runs of sluice-mux and sluice-agent over
net_pcap ports, and field-by-field checks.

A case builds its input frames with scapy (in the case's gen.py), runs
sluice-mux on them through net_pcap ports, and checks what came out, field by
field, against expectations computed here from the *input* and the
configuration, never from the mux's own algorithms: which backend a flow gets
is read from the output, and what is asserted is that the choice is one of the
service's backends, consistent, and weighted as configured.

    with Case("forward") as case:             # temp dir, checks, mux path
        cfg = MuxConfig(services=[...])
        run = case.run(cfg, [frames])         # one worker, --pcap IN:OUT
        for out, inp in zip(run.outputs[0], frames):
            check_encap(case, cfg, out, inp, "tcp syn")
    # exit status: non-zero if any check failed

The host agent's case (agent/) uses the same checks with AgentConfig and
Case.run_agent: one net_pcap port for the uplink and one per VM, each with
its own input and output pcap, --exit-on-eof. The configuration writers
(MuxConfig, AgentConfig, Service, Backend: sluicetest.config) are names of
this module too, since a case hands them to its runs and its checks.

Only /usr/bin/python3 has scapy (python3-scapy); meson runs the tests with it.
"""
import argparse
import ipaddress
import json
import os
import shutil
import struct
import subprocess
import tempfile
import traceback

from scapy.layers.inet import IP, in4_chksum
from scapy.utils import checksum as scapy_checksum

from . import ipv6 as v6  # noqa: F401 (also sp.v6 for the cases)
from .checks import CheckFailed, Checks
from .config import (DEFAULT_SEED, PROTO_NUM, AgentConfig, AgentVM, Backend,  # noqa: F401
                     MuxConfig, Service, pcap_port_mac)
from .procs import rundir
from .tcp import mss_clamp_all, mss_option

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DEFAULT_MUX = os.path.join(REPO, "build", "mux", "sluice-mux")
DEFAULT_AGENT = os.path.join(REPO, "build", "host_agent", "sluice-agent")


# The net_pcap PMD has no hardware: it reports the fixed locally administered
# address 02:70:63:61:70:00 ("\x02pcap\0") for its first port. The mux tests
# run one port, so this is the mux's own MAC in every reply and encapsulation.
PORT_MAC = pcap_port_mac(0)
# Addresses the inputs use on the wire; the mux runs promiscuous.
ROUTER_MAC = "02:00:00:00:00:01"    # dst of frames the "router" sends to the mux
CLIENT_MAC = "02:00:00:00:c1:01"    # src of client frames (replies go back here)

ETH_IPV4 = 0x0800
ETH_ARP = 0x0806
ETH_VLAN = 0x8100
PROTO_ICMP, PROTO_IPIP, PROTO_TCP, PROTO_UDP = 1, 4, 6, 17


# --------------------------------------------------------------------------
# pcap files, written and read here (no scapy) so nothing is reinterpreted


def to_bytes(p):
    return p if isinstance(p, (bytes, bytearray)) else bytes(p)


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            b = to_bytes(fr)
            f.write(struct.pack("<IIII", 1700000000 + i // 1000000, i % 1000000, len(b), len(b)))
            f.write(b)


def frames_by_port(rows):
    """Rows of (description, port, frame, ...) -> {port: frames}, in table order."""
    ports = {}
    for r in rows:
        ports.setdefault(r[1], []).append(r[2])
    return ports


def write_port_pcaps(rows, outdir):
    """One PORT.pcap per port in outdir, from rows as frames_by_port() takes them."""
    for port, frames in frames_by_port(rows).items():
        write_pcap(os.path.join(outdir, port + ".pcap"), frames)


def read_pcap(path):
    """Frames of a pcap file (either timestamp precision) as bytes."""
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        end = ">"
    else:
        raise ValueError("%s: not a pcap file" % path)
    frames, off = [], 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


# --------------------------------------------------------------------------
# Raw frame decoding (independent of the mux's parser and of scapy)


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def mac_str(b):
    return ":".join("%02x" % x for x in b)


def ip_str(b):
    return str(ipaddress.IPv4Address(bytes(b)))


def ip_bytes(s):
    return ipaddress.IPv4Address(s).packed


class Frame:
    """Ethernet (optionally one 802.1Q tag) and IPv4 or IPv6 fields of a raw
    frame: ip (IPv4) or ip6 (sluicetest.ipv6.IPv6), the other None."""

    def __init__(self, raw):
        self.raw = bytes(raw)
        b = self.raw
        self.dst, self.src = b[0:6], b[6:12]
        self.type = struct.unpack("!H", b[12:14])[0]
        self.vlan = None
        self.l2 = 14
        if self.type == ETH_VLAN:
            self.vlan = struct.unpack("!H", b[14:16])[0] & 0x0FFF
            self.type = struct.unpack("!H", b[16:18])[0]
            self.l2 = 18
        self.ip = self.ip6 = None
        if self.type == ETH_IPV4:
            self.ip = IPv4(b[self.l2:])
        elif self.type == v6.ETH_IPV6:
            self.ip6 = v6.IPv6(b[self.l2:])


class IPv4:
    """An IPv4 header and its datagram (trimmed to the total length)."""

    def __init__(self, b):
        self.version = b[0] >> 4
        self.ihl = b[0] & 0x0F
        self.hlen = self.ihl * 4
        self.tos = b[1]
        self.total = struct.unpack("!H", b[2:4])[0]
        self.id = struct.unpack("!H", b[4:6])[0]
        fo = struct.unpack("!H", b[6:8])[0]
        self.df = bool(fo & 0x4000)
        self.mf = bool(fo & 0x2000)
        self.frag = fo & 0x1FFF
        self.ttl = b[8]
        self.proto = b[9]
        self.csum = struct.unpack("!H", b[10:12])[0]
        self.src = ip_str(b[12:16])
        self.dst = ip_str(b[16:20])
        self.trailer = bytes(b[self.total:])  # Ethernet padding, or garbage
        self.data = bytes(b[:self.total])     # the datagram itself
        self.header = self.data[:self.hlen]
        self.payload = self.data[self.hlen:]

    def ports(self):
        return struct.unpack("!HH", self.payload[0:4])


def ip_csum_ok(header):
    """The IPv4 header checksum is right (scapy's Internet checksum)."""
    zeroed = header[:10] + b"\0\0" + header[12:]
    return scapy_checksum(zeroed) == struct.unpack("!H", header[10:12])[0]


def l4_csum_expected(ip_data, proto):
    """What the TCP/UDP/ICMP checksum of this datagram should be, recomputed
    by scapy over the bytes with the checksum field zeroed."""
    hl = (ip_data[0] & 0x0F) * 4
    l4 = bytearray(ip_data[hl:])
    if proto == PROTO_ICMP:
        l4[2:4] = b"\0\0"
        return scapy_checksum(bytes(l4))
    at = 16 if proto == PROTO_TCP else 6
    l4[at:at + 2] = b"\0\0"
    ck = in4_chksum(proto, IP(ip_data), bytes(l4))
    if proto == PROTO_UDP and ck == 0:
        ck = 0xFFFF  # RFC 768: a computed zero is sent as all ones
    return ck


def l4_csum(ip_data, proto):
    hl = (ip_data[0] & 0x0F) * 4
    at = {PROTO_TCP: 16, PROTO_UDP: 6, PROTO_ICMP: 2}[proto]
    return struct.unpack("!H", ip_data[hl + at:hl + at + 2])[0]


def l4_csum_ok(ip_data, proto):
    got, want = l4_csum(ip_data, proto), l4_csum_expected(ip_data, proto)
    # 0x0000 and 0xffff are the same number in one's complement (TCP, ICMP).
    return got == want or (proto != PROTO_UDP and {got, want} == {0, 0xFFFF})


class Arp:
    """An Ethernet/IPv4 ARP packet at offset off of a frame."""

    def __init__(self, raw, off):
        a = bytes(raw[off:off + 28])
        self.ok = len(a) == 28
        if not self.ok:
            return
        self.hrd, self.pro, self.hln, self.pln, self.op = struct.unpack("!HHBBH", a[:8])
        self.sha, self.spa = mac_str(a[8:14]), ip_str(a[14:18])
        self.tha, self.tpa = mac_str(a[18:24]), ip_str(a[24:28])


# --------------------------------------------------------------------------
# Expected packets: byte-level edits of an input datagram, checksums redone
# by scapy, so a test states what changes and everything else must not.


def ip_csum_fixed(data):
    """The datagram with its IPv4 header checksum recomputed."""
    d = bytearray(data)
    hl = (d[0] & 0x0F) * 4
    d[10:12] = b"\0\0"
    d[10:12] = struct.pack("!H", scapy_checksum(bytes(d[:hl])))
    return bytes(d)


def l4_csum_fixed(data):
    """The datagram with its TCP/UDP/ICMP checksum recomputed (a UDP
    checksum of zero, meaning none, stays zero)."""
    d = bytearray(data)
    proto = d[9]
    hl = (d[0] & 0x0F) * 4
    at = hl + {PROTO_TCP: 16, PROTO_UDP: 6, PROTO_ICMP: 2}[proto]
    if proto == PROTO_UDP and d[at:at + 2] == b"\0\0":
        return bytes(d)
    d[at:at + 2] = struct.pack("!H", l4_csum_expected(bytes(d), proto))
    return bytes(d)


def set_addrs_ports(d, src=None, dst=None, sport=None, dport=None):
    """In a bytearray holding an IPv4 header and the first 4 bytes of its
    L4 header: the addresses and ports given (checksums untouched)."""
    hl = (d[0] & 0x0F) * 4
    if src is not None:
        d[12:16] = ip_bytes(src)
    if dst is not None:
        d[16:20] = ip_bytes(dst)
    if sport is not None:
        d[hl:hl + 2] = struct.pack("!H", sport)
    if dport is not None:
        d[hl + 2:hl + 4] = struct.pack("!H", dport)


def ip_edit(data, src=None, dst=None, sport=None, dport=None):
    """The datagram with new addresses and/or TCP/UDP ports, checksums redone."""
    d = bytearray(data)
    set_addrs_ports(d, src, dst, sport, dport)
    d = ip_csum_fixed(bytes(d))
    if d[9] in (PROTO_TCP, PROTO_UDP):
        d = l4_csum_fixed(d)
    return d


def tcp_mss(data):
    """(offset in the datagram, value) of the MSS option of a TCP segment, or None."""
    return mss_option(data, (data[0] & 0x0F) * 4)


def tcp_mss_clamped(data, clamp):
    """The datagram with every MSS option above clamp lowered to it (TCP
    checksum redone), or unchanged."""
    d = bytearray(data)
    if not mss_clamp_all(d, (data[0] & 0x0F) * 4, clamp):
        return bytes(data)
    return l4_csum_fixed(bytes(d))


def icmp_quote_edit(data, src=None, sport=None, dst=None, dport=None):
    """An ICMP error with its quoted header's addresses/ports changed: quoted
    IPv4 checksum and ICMP checksum redone, the quoted L4 checksum left as it
    is (quotes are often truncated; nobody checks it)."""
    hl = (data[0] & 0x0F) * 4
    q = data[hl + 8:]
    qhl = (q[0] & 0x0F) * 4
    head = bytearray(q[:qhl + 4])
    set_addrs_ports(head, src, dst, sport, dport)
    head = ip_csum_fixed(bytes(head[:qhl])) + bytes(head[qhl:])
    d = bytes(data[:hl + 8]) + head + bytes(q[qhl + 4:])
    return l4_csum_fixed(d)


def eth_frame(dst, src, ethertype, payload):
    return mac_bytes(dst) + mac_bytes(src) + struct.pack("!H", ethertype) + bytes(payload)


def frame_diff(got, want):
    """None if the frames are equal (a TCP/ICMP checksum of 0x0000 equals
    0xffff), else a short description of the first difference."""
    def norm(b):
        b = bytearray(b)
        f = Frame(bytes(b))
        if f.ip is not None and f.ip.proto in (PROTO_TCP, PROTO_ICMP) and f.ip.frag == 0:
            at = f.l2 + f.ip.hlen + (16 if f.ip.proto == PROTO_TCP else 2)
            if b[at:at + 2] == b"\0\0":
                b[at:at + 2] = b"\xff\xff"
        return bytes(b)
    g, w = norm(got), norm(want)
    if g == w:
        return None
    for i in range(min(len(g), len(w))):
        if g[i] != w[i]:
            return "first difference at byte %d: got %s, want %s (lengths %d, %d)" % (
                i, g[i:i + 8].hex(), w[i:i + 8].hex(), len(g), len(w))
    return "lengths differ: got %d, want %d" % (len(g), len(w))


# --------------------------------------------------------------------------
# The run


class MuxRun:
    def __init__(self, rc, stdout, stderr, outputs, stats, pid):
        self.rc, self.stdout, self.stderr = rc, stdout, stderr
        self.outputs, self.stats, self.pid = outputs, stats, pid

    def drops(self):
        return self.stats.get("drops", {}) if self.stats else {}


class Case(Checks):
    """One test case: argument parsing, a temp dir, the checks (quiet: only
    failures print), the mux (or the host agent).

    Checks do not stop the case: each failure is printed and counted, and
    the process exits 1 at the end if there was any (require() stops).
    """

    MAX_PRINTED = 40

    def __init__(self, name, argv=None):
        super().__init__(quiet=True, max_printed=self.MAX_PRINTED)
        ap = argparse.ArgumentParser(description="sluice packet test: " + name)
        ap.add_argument("--mux", default=DEFAULT_MUX, help="path of sluice-mux")
        ap.add_argument("--agent", default=DEFAULT_AGENT, help="path of sluice-agent")
        ap.add_argument("--keep", action="store_true", help="keep the temp dir")
        self.args = ap.parse_args(argv)
        self.name = name
        self.mux = self.args.mux
        self.agent = self.args.agent
        self.pids = []
        self.rundirs = []  # EAL runtime dirs of the processes run (file prefix prog-pid)
        self.tmp = None
        self.runs = 0
        self.agent_runs = 0

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="sluice-pcap-%s-" % self.name)
        return self

    def __exit__(self, et, ev, tb):
        if et is not None and not issubclass(et, CheckFailed):
            traceback.print_exception(et, ev, tb)
            self.failures.append("%s: %s" % (et.__name__, ev))
        for d in self.rundirs:
            self.check(not os.path.exists(d), "%s left its runtime dir behind",
                       os.path.basename(d))
            if os.path.exists(d):
                shutil.rmtree(d, ignore_errors=True)
        if self.args.keep:
            print("%s: kept %s" % (self.name, self.tmp))
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
        print("%s: %s (%d %s runs)" % (self.name, "FAILED" if self.failures else "ok",
                                      self.runs, "agent" if self.agent_runs else "mux"))
        raise SystemExit(self.report(self.name))

    def path(self, name):
        return os.path.join(self.tmp, name)

    # -- running the mux

    def run(self, cfg, inputs, tag=None, timeout=60, extra_args=()):
        """Run sluice-mux over inputs (a list of frame lists, one per RX queue
        and worker) and return a MuxRun with the frames each worker sent.

        One input uses --pcap IN:OUT; several use a ports = () entry with one
        rx_pcap and one tx_pcap per worker and --exit-on-eof. The mux must exit
        0 within the timeout and write its JSON summary.
        """
        tag = tag or "run%d" % (self.runs + 1)
        d = self.path(tag)
        os.makedirs(d)
        ins = [os.path.join(d, "in%d.pcap" % i) for i in range(len(inputs))]
        outs = [os.path.join(d, "out%d.pcap" % i) for i in range(len(inputs))]
        for p, frames in zip(ins, inputs):
            write_pcap(p, frames)
        stats = os.path.join(d, "stats.json")
        cfgp = os.path.join(d, "mux.cfg")
        argv = [self.mux, "-c", cfgp, "--stats-json", stats, "-q"]
        if len(inputs) == 1:
            text = cfg.render()
            argv += ["--pcap", "%s:%s" % (ins[0], outs[0])]
        else:
            dev = "net_pcap0," + ",".join(
                ["rx_pcap=" + p for p in ins] + ["tx_pcap=" + p for p in outs])
            text = cfg.render(devargs=dev, workers=len(inputs))
            argv += ["--exit-on-eof"]
        with open(cfgp, "w") as f:
            f.write(text)
        res = self.spawn(argv + list(extra_args), timeout)
        if not self.check(res.rc == 0, "%s: sluice-mux exited %s\n%s", tag, res.rc, res.stderr):
            raise CheckFailed("mux run failed")
        with open(stats) as f:
            res.stats = json.load(f)
        res.outputs = [read_pcap(p) for p in outs]
        sent = sum(len(o) for o in res.outputs)
        self.eq(res.stats["tx_pkts"], sent, "%s: tx_pkts vs frames in the output pcaps" % tag)
        self.eq(res.stats["rx_pkts"], sum(len(i) for i in inputs),
                "%s: rx_pkts vs frames in the input pcaps" % tag)
        return res

    def spawn(self, argv, timeout=60):
        """Run a mux (or agent) command line; returns a MuxRun with rc, stdout,
        stderr. Its EAL runtime dir (file prefix <program>-<pid>) must be gone
        when the case ends."""
        self.runs += 1
        prog = os.path.basename(argv[0])
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=self.tmp)
        self.pids.append(p.pid)
        self.rundirs.append(rundir("%s-%d" % (prog, p.pid)))
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            self.check(False, "%s did not exit within %d s: %s", prog, timeout, " ".join(argv))
            raise CheckFailed("timeout")
        return MuxRun(p.returncode, out, err, [], None, p.pid)

    def run_agent(self, cfg, inputs, tag=None, timeout=60, extra_args=()):
        """Run sluice-agent over inputs (port name -> frame list; ports without
        input get an empty pcap) with --exit-on-eof, and return a MuxRun whose
        outputs map each port name to the frames sent on it. The agent must
        exit 0 within the timeout and write its JSON summary; tx, uplink_rx
        and vm_rx must match the pcaps.
        """
        tag = tag or "run%d" % (self.runs + 1)
        d = self.path(tag)
        os.makedirs(d)
        unknown = set(inputs) - set(cfg.ports())
        self.require(not unknown, "%s: test bug: inputs for unknown ports %s", tag, unknown)
        ins, outs, dev = {}, {}, {}
        for i, name in enumerate(cfg.ports()):
            ins[name] = os.path.join(d, "%s-in.pcap" % name)
            outs[name] = os.path.join(d, "%s-out.pcap" % name)
            write_pcap(ins[name], inputs.get(name, []))
            dev[name] = "net_pcap%d,rx_pcap=%s,tx_pcap=%s" % (i, ins[name], outs[name])
        stats = os.path.join(d, "stats.json")
        cfgp = os.path.join(d, "agent.cfg")
        with open(cfgp, "w") as f:
            f.write(cfg.render(dev))
        self.agent_runs += 1
        res = self.spawn([self.agent, "-c", cfgp, "--exit-on-eof", "--stats-json", stats, "-q"]
                         + list(extra_args), timeout)
        if not self.check(res.rc == 0, "%s: sluice-agent exited %s\n%s", tag, res.rc, res.stderr):
            raise CheckFailed("agent run failed")
        with open(stats) as f:
            res.stats = json.load(f)
        res.outputs = {name: read_pcap(outs[name]) for name in cfg.ports()}
        n_in = {name: len(inputs.get(name, [])) for name in cfg.ports()}
        self.eq(res.stats["tx"], sum(len(o) for o in res.outputs.values()),
                "%s: tx vs frames in the output pcaps" % tag)
        self.eq(res.stats["uplink_rx"], n_in["uplink"], "%s: uplink_rx vs uplink input" % tag)
        self.eq(res.stats["vm_rx"], sum(n_in.values()) - n_in["uplink"],
                "%s: vm_rx vs VM inputs" % tag)
        for v in res.stats.get("vms", []):
            self.eq(v.get("from_vm"), n_in.get(v.get("name")),
                    "%s: vms[%s].from_vm vs its input" % (tag, v.get("name")))
        return res

    def drops_exactly(self, run, expected, what):
        """Every drop counter is as expected (absent reasons: zero)."""
        drops = run.drops()
        for reason in sorted(set(drops) | set(expected)):
            self.eq(drops.get(reason), expected.get(reason, 0),
                    "%s: drops[%s]" % (what, reason))


# --------------------------------------------------------------------------
# Field-by-field checks


def _check_outer(case, cfg, o, orig, inner6, what):
    """The outer header of encapsulated frame o (Frame) of packet orig
    (IPv4 or IPv6): the form follows the PA, the fields the tunnel RFCs
    (sluice's mux_encap.h). Returns (outer, inner datagram bytes) or None."""
    c = case
    tos = orig.tclass if inner6 else orig.tos
    proto = 41 if inner6 else PROTO_IPIP
    if o.ip6 is not None:
        outer = o.ip6
        c.eq(mac_str(o.dst), cfg.next_hop_mac6 or cfg.next_hop_mac,
             what + ": ethernet dst = next_hop_mac6")
        c.eq(outer.version, 6, what + ": outer version")
        if not c.eq(outer.nh, proto, what + ": outer next header (4in6 4, 6in6 41)"):
            return None
        c.eq(outer.src, cfg.tunnel_address6, what + ": outer src = tunnel_address6")
        c.eq(outer.hlim, cfg.ttl, what + ": outer hop limit = tunnel_ttl")
        c.eq(outer.tclass, tos, what + ": outer traffic class (DSCP+ECN) copied from inner")
        c.check(outer.flow != 0, "%s: outer flow label 0 (RFC 6438 wants the flow's)", what)
        c.eq(outer.plen, orig.total, what + ": outer payload length = inner datagram")
        c.eq(len(o.raw), 14 + outer.total, what + ": frame length (no padding)")
        return outer, outer.payload
    outer = o.ip
    c.eq(mac_str(o.dst), cfg.next_hop_mac, what + ": ethernet dst = next_hop_mac")
    c.eq(outer.version, 4, what + ": outer version")
    c.eq(outer.ihl, 5, what + ": outer IHL")
    if not c.eq(outer.proto, proto, what + ": outer protocol (4in4 4, 6in4 41)"):
        return None
    c.eq(outer.src, cfg.tunnel_address, what + ": outer src = tunnel_address")
    c.eq(outer.ttl, cfg.ttl, what + ": outer TTL = tunnel_ttl")
    c.eq(outer.tos, tos, what + ": outer TOS (DSCP+ECN) copied from inner")
    # 4in4 copies the client's DF; 6in4 leaves it clear (RFC 4213 3.2.1).
    c.eq(outer.df, False if inner6 else orig.df, what + ": outer DF (4in4 copied, 6in4 clear)")
    c.check(not outer.mf and outer.frag == 0, "%s: outer is a fragment", what)
    c.eq(outer.total, orig.total + 20, what + ": outer total length = inner + 20")
    c.eq(len(o.raw), 14 + outer.total, what + ": frame length = 14 + outer total (no padding)")
    c.check(ip_csum_ok(outer.header), "%s: outer header checksum invalid (%#06x)", what,
            outer.csum)
    return outer, outer.payload


def _default_svc_key(orig, inner6):
    """(vip, proto, port) of the service a client packet, or the ICMP error
    about one (by its quote, turned around), belongs to."""
    if inner6:
        if orig.upper == v6.PROTO_ICMPV6:
            q = v6.IPv6(orig.l4[8:] + b"\0" * 64)
            return (q.src, q.upper, q.ports()[0])
        return (orig.dst, orig.upper, orig.ports()[1])
    if orig.proto == PROTO_ICMP:
        q = IPv4(orig.payload[8:] + b"\0" * 64)
        return (q.src, q.proto, struct.unpack("!H", q.payload[0:2])[0])
    return (orig.dst, orig.proto, orig.ports()[1])


def _check_inner6(case, be, inner, orig, what):
    """An IPv6 packet after the mux: only the destination and the hop limit
    change, and the upper-layer checksum with them (over the pseudo-header)."""
    c = case
    c.eq(inner.dst, be.dip, what + ": inner dst = DIP")
    c.eq(inner.hlim, orig.hlim - 1, what + ": inner hop limit = original - 1")
    c.eq(inner.header[:7] + inner.header[8:24], orig.header[:7] + orig.header[8:24],
         what + ": inner IPv6 header (but dst/hop limit) unchanged")
    c.eq(inner.data[40:inner.l4_off], orig.data[40:orig.l4_off],
         what + ": extension headers unchanged")
    c.eq(len(inner.data), len(orig.data), what + ": inner length")
    if orig.upper in (PROTO_TCP, PROTO_UDP):
        c.eq(inner.ports(), (orig.ports()[0], be.port), what + ": ports")
        at = v6.csum_off(orig.upper)
        m = lambda p: p[:2] + p[4:at] + p[at + 2:]  # noqa: E731 (not dport, csum)
        c.eq(m(inner.l4), m(orig.l4), what + ": upper-layer header and payload unchanged")
    else:
        c.eq(inner.l4[:2] + inner.l4[4:], orig.l4[:2] + orig.l4[4:],
             what + ": ICMPv6 message (and quote) untouched but its checksum")
    c.eq(v6.l4_csum6(inner.data), v6.l4_csum6_expected(inner.data),
         what + ": upper-layer checksum over the new pseudo-header")


def check_encap(case, cfg, out, inp, what, svc_key=None):
    """Check that frame `out` is the mux's encapsulation of input frame `inp`,
    in the form the backend's PA asks for (4in4, 4in6, 6in4, 6in6).

    Returns (dip, dport, host) of the backend the packet went to (read from
    the output), or None if the frame is not even an encapsulation.
    svc_key = (vip, proto, port) names the service; by default it is the
    input's destination (TCP/UDP) or the quoted source (ICMP errors).
    """
    c = case
    o = Frame(out)
    i = Frame(inp)
    inner6 = i.ip6 is not None
    orig = i.ip6 if inner6 else i.ip
    if not c.check(o.vlan is None and (o.ip is not None or o.ip6 is not None),
                   "%s: output is not an untagged IP frame (type %#x, vlan %s)",
                   what, o.type, o.vlan):
        return None
    c.eq(mac_str(o.src), PORT_MAC, what + ": ethernet src = port MAC")
    got = _check_outer(case, cfg, o, orig, inner6, what)
    if got is None:
        return None
    outer, inner_bytes = got
    inner = v6.IPv6(inner_bytes) if inner6 else IPv4(inner_bytes)
    c.eq(len(inner.data), len(orig.data), what + ": inner length")
    c.eq(inner.trailer, b"", what + ": nothing after the inner datagram")

    # Which service, and so which backends are acceptable.
    svc = cfg.service(*(svc_key or _default_svc_key(orig, inner6)))
    if not c.check(svc is not None, "%s: test bug: no service %s", what, svc_key):
        return None
    l4 = (inner.upper if inner6 else orig.proto) in (PROTO_TCP, PROTO_UDP)
    dport = inner.ports()[1] if l4 else None
    be = [b for b in svc.backends
          if b.dip == inner.dst and (dport is None or b.port == dport)]
    if not c.check(len(be) == 1, "%s: inner dst %s:%s is no backend of %s:%d/%s", what,
                   inner.dst, dport, svc.vip, svc.port, svc.proto):
        return None
    be = be[0]
    c.eq(outer.dst, be.host, what + ": outer dst = host PA of backend %s" % be.dip)
    if inner6:
        _check_inner6(case, be, inner, orig, what)
        return (be.dip, be.port, be.host)

    # Inner IPv4: only dst, TTL and the checksum change.
    c.eq(inner.dst, be.dip, what + ": inner dst = DIP")
    c.eq(inner.ttl, orig.ttl - 1, what + ": inner TTL = original - 1")
    c.check(ip_csum_ok(inner.header), "%s: inner IP checksum invalid (%#06x)", what,
            inner.csum)
    mask = lambda h: h[:8] + h[9:10] + h[12:16] + h[20:]  # noqa: E731 (not ttl/csum/dst)
    c.eq(mask(inner.header), mask(orig.header),
         what + ": inner IP header (but dst/ttl/csum) incl. options unchanged")

    # Inner L4.
    if orig.proto == PROTO_TCP:
        c.eq(inner.ports(), (orig.ports()[0], be.port), what + ": TCP ports")
        c.check(l4_csum_ok(inner.data, PROTO_TCP), "%s: TCP checksum %#06x, want %#06x",
                what, l4_csum(inner.data, PROTO_TCP), l4_csum_expected(inner.data, PROTO_TCP))
        m = lambda p: p[:2] + p[4:16] + p[18:]  # noqa: E731
        c.eq(m(inner.payload), m(orig.payload), what + ": TCP header/options/payload unchanged")
    elif orig.proto == PROTO_UDP:
        c.eq(inner.ports(), (orig.ports()[0], be.port), what + ": UDP ports")
        if l4_csum(orig.data, PROTO_UDP) == 0:
            c.eq(l4_csum(inner.data, PROTO_UDP), 0, what + ": UDP checksum 0 stays 0")
        else:
            c.eq(l4_csum(inner.data, PROTO_UDP), l4_csum_expected(inner.data, PROTO_UDP),
                 what + ": UDP checksum")
        m = lambda p: p[:2] + p[4:6] + p[8:]  # noqa: E731
        c.eq(m(inner.payload), m(orig.payload), what + ": UDP length/payload unchanged")
    else:
        c.eq(inner.payload, orig.payload, what + ": ICMP message (and quote) untouched")
        c.check(l4_csum_ok(inner.data, PROTO_ICMP), "%s: ICMP checksum invalid", what)
    return (be.dip, be.port, be.host)


def ipv4_reassemble(frames):
    """The IPv4 datagram the fragments in frames (raw Ethernet frames, in any
    order, all of one datagram) make, as RFC 791 puts it back together: the
    first fragment's header with MF and the offset cleared, total length
    and checksum redone, the pieces in offset order. Raises ValueError on
    a gap, an overlap, a missing last fragment, ids that differ or a
    non-final fragment whose payload is not a multiple of 8 bytes."""
    pieces = []
    for fr in frames:
        ip = Frame(fr).ip
        pieces.append((ip.frag * 8, ip.mf, ip))
    pieces.sort(key=lambda p: p[0])
    if len({p[2].id for p in pieces}) != 1:
        raise ValueError("fragment ids differ")
    at, body = 0, b""
    for off, mf, ip in pieces:
        if off != at:
            raise ValueError("fragment at %d, want %d" % (off, at))
        if mf and len(ip.payload) % 8:
            raise ValueError("non-final fragment of %d bytes" % len(ip.payload))
        body += ip.payload
        at += len(ip.payload)
    if pieces[-1][1]:
        raise ValueError("no last fragment")
    first = pieces[0][2]
    h = bytearray(first.header)
    h[2:4] = struct.pack("!H", len(h) + len(body))
    h[6:8] = struct.pack("!H", (struct.unpack("!H", h[6:8])[0] & 0x4000))
    return ip_csum_fixed(bytes(h)) + body


def inner_of(out):
    """The inner datagram of an encapsulated frame of any form: an IPv4 or
    an sluicetest.ipv6.IPv6, or None if out is no tunnel packet."""
    f = Frame(out)
    outer = f.ip if f.ip is not None else f.ip6
    proto = None if outer is None else (f.ip.proto if f.ip is not None else outer.nh)
    if proto == PROTO_IPIP:
        return IPv4(outer.payload)
    if proto == 41:
        return v6.IPv6(outer.payload)
    return None


def flow_of(ip):
    """(src, sport, proto) of a client packet or of an encapsulated one (IPv4 or IPv6)."""
    proto = ip.upper if isinstance(ip, v6.IPv6) else ip.proto
    if proto in (PROTO_TCP, PROTO_UDP):
        return (ip.src, ip.ports()[0], proto)
    return None


def run_table_dropped(name, gen, cfg, src_of, bad):
    """The malformed cases (both families): gen.frames() gives the frames
    and the good packets among them, gen.TABLE ((name, frame, reason), ...)
    the bad ones. run's only output must be the good packets, each once and
    a correct encapsulation (matched by src_of(frame), the client's
    address), and the drops equal, reason by reason, the count of rows of
    the table under each. bad names the bad frames in the summary line."""
    frames, goods = gen.frames()
    with Case(name) as case:
        run = case.run(cfg, [frames])
        by_src = {src_of(g): g for g in goods}
        seen = set()
        for fr in run.outputs[0]:
            inner = inner_of(fr)
            src = inner.src if inner else None
            if not case.check(src in by_src, "forwarded a frame that is not a good packet: %s",
                              fr.hex()[:120]):
                continue
            case.check(src not in seen, "good packet from %s forwarded twice", src)
            seen.add(src)
            check_encap(case, cfg, fr, by_src[src], "good packet from %s" % src)
        case.eq(len(seen), len(goods), "good packets forwarded")
        expect = {}
        for _, _, reason in gen.TABLE:
            expect[reason] = expect.get(reason, 0) + 1
        unknown = set(expect) - set(run.drops())
        case.check(not unknown, "test table names unknown drop reasons %s", sorted(unknown))
        case.drops_exactly(run, expect, name)
        case.eq(run.stats["fwd_pkts"], len(goods), "fwd_pkts")
        print("%s: %d %s under %d reasons all dropped and counted, %d good packets "
              "interleaved all forwarded" % (name, len(gen.TABLE), bad, len(expect), len(goods)))


def _to_requester(fr):
    return mac_str(fr[0:6])


def _from_requester(fr, want):
    return mac_str(fr[6:12])


def run_replies(case, services, mux, option, rows, checks, stats, reply_key=_to_requester,
                request_key=_from_requester):
    """The reply cases (arp_echo, nd_echo6): the frames of rows of (desc,
    frame, expected with option unset, expected with it true) through a mux
    of services and the settings mux (MuxConfig's), twice: its option
    (arp_for_vips, nd_for_vips) unset, then true. A row's expectation names
    the reply it wants (a key of checks) or the drop reason it is counted
    under. A reply goes to its requester, matched by reply_key(reply) ==
    request_key(request, want) (by default the requester's MAC, unique per
    row); checks[kind](case, reply, request, what) checks it and the counter
    stats[kind] counts that kind. Returns the replies of each kind, of each
    run."""
    counts = []
    for col, value in ((2, None), (3, True)):
        tag = "%s=%s" % (option, value)
        cfg = MuxConfig(services, **mux, **{option: value})
        run = case.run(cfg, [[r[1] for r in rows]], tag=tag.replace("=", "_"))
        by_key = {}
        for fr in run.outputs[0]:
            by_key.setdefault(reply_key(fr), []).append(fr)
        expect, n = {}, dict.fromkeys(checks, 0)
        for r in rows:
            desc, fr, want = r[0], r[1], r[col]
            got = by_key.get(request_key(fr, want), [])
            what = "%s: %s" % (tag, desc)
            if want in checks:
                if case.eq(len(got), 1, what + ": replies"):
                    checks[want](case, got[0], fr, what)
                n[want] += 1
            else:
                case.eq(len(got), 0, what + ": replies")
                expect[want] = expect.get(want, 0) + 1
        case.eq(len(run.outputs[0]), sum(n.values()), tag + ": frames out")
        for kind, counter in stats.items():
            case.eq(run.stats[counter], n[kind], tag + ": " + counter)
        case.drops_exactly(run, expect, tag)
        counts.append(n)
    return counts


def check_rst_tcp(case, tcp, orig, payload, what):
    """A refused SYN's RST (tcp: its TCP header) against the SYN's TCP
    header (orig) with payload bytes of data: ports turned around, seq 0,
    ack = seq + SYN + data, RST|ACK, no options, window and urgent 0."""
    sport, dport, seq, ack, off, flags, win, _, urg = struct.unpack("!HHIIBBHHH", tcp[:20])
    osport, odport, oseq = struct.unpack("!HHI", orig[:8])
    case.eq((sport, dport), (odport, osport), what + ": ports turned around")
    case.eq(seq, 0, what + ": seq 0")
    case.eq(ack, (oseq + 1 + payload) & 0xffffffff, what + ": ack = client seq + SYN + data")
    case.eq((off >> 4, flags), (5, 0x14), what + ": no options, RST|ACK")
    case.eq((win, urg), (0, 0), what + ": window and urgent pointer 0")


def check_rst_reply(case, out, inp, what):
    """The mux's RST from the VIP for a refused SYN (inp), out checked field by field."""
    o, i = Frame(out), Frame(inp)
    orig = i.ip
    case.eq(mac_str(o.dst), mac_str(i.src), what + ": ethernet dst = client's")
    case.eq(mac_str(o.src), PORT_MAC, what + ": ethernet src = port MAC")
    ip = o.ip
    case.eq((ip.version, ip.ihl, ip.proto, ip.total), (4, 5, PROTO_TCP, 40),
            what + ": IPv4 header, TCP, 40 bytes")
    case.eq((ip.src, ip.dst), (orig.dst, orig.src), what + ": from the VIP to the client")
    case.eq((ip.ttl, ip.id, ip.df, ip.mf, ip.frag), (64, 0, True, False, 0),
            what + ": TTL 64, id 0, DF")
    case.eq(len(out), 14 + 40, what + ": frame length")
    case.check(ip_csum_ok(ip.header), "%s: IP checksum", what)
    check_rst_tcp(case, ip.payload, orig.payload,
                  orig.total - orig.hlen - (orig.payload[12] >> 4) * 4, what)
    case.check(l4_csum_ok(ip.data, PROTO_TCP), "%s: TCP checksum", what)


def check_icmp_reply(case, out, inp, code, what):
    """The mux's ICMP destination unreachable (type 3, code) from the VIP
    quoting the refused datagram inp whole."""
    o, i = Frame(out), Frame(inp)
    orig = i.ip
    case.eq(mac_str(o.dst), mac_str(i.src), what + ": ethernet dst = client's")
    case.eq(mac_str(o.src), PORT_MAC, what + ": ethernet src = port MAC")
    ip = o.ip
    case.eq((ip.version, ip.ihl, ip.proto), (4, 5, PROTO_ICMP), what + ": IPv4/ICMP")
    case.eq((ip.src, ip.dst), (orig.dst, orig.src), what + ": from the VIP to the client")
    case.eq(ip.total, 28 + orig.total, what + ": quotes the whole datagram")
    case.eq(len(out), 14 + ip.total, what + ": frame length")
    case.eq((ip.ttl, ip.mf, ip.frag), (64, False, 0), what + ": TTL 64, no fragment")
    case.check(ip_csum_ok(ip.header), "%s: IP checksum", what)
    icmp = ip.payload
    case.eq((icmp[0], icmp[1]), (3, code), what + ": type 3 code %d" % code)
    case.eq(icmp[4:8], b"\0\0\0\0", what + ": unused word")
    case.eq(icmp[8:], orig.data, what + ": the quote is the client's datagram")
    case.check(l4_csum_ok(ip.data, PROTO_ICMP), "%s: ICMP checksum", what)


def check_verdicts(case, cfg, rows, outputs, classify, checks):
    """The admission cases (limits, limits6): rows of (frame, verdict), the
    verdict "fwd", "drop" or a key of checks. classify(output) gives the
    (client, client port) an output answers or carries, and its kind. A
    "drop" row has no output; any other has one of its kind (a flow whose
    SYN passed and whose FIN follows has two), checked by check_encap()
    ("fwd") or checks[kind](case, output, frame, what). No output may be
    left over. Returns {kind: how many}."""
    got = {}
    for fr in outputs:
        key, kind = classify(fr)
        got.setdefault(key, []).append((kind, fr))
    counts = {}
    for fr, want in rows:
        f = Frame(fr)
        ip = f.ip or f.ip6
        key = (ip.src, ip.ports()[0])
        what = "%s:%d -> %s %s" % (ip.src, key[1], ip.dst, want)
        outs = got.get(key, [])
        kinds = [k for k, _ in outs]
        if want == "drop":
            case.eq(kinds, [], what + ": nothing comes out")
            continue
        if not case.check(want in kinds, "%s: got %s", what, kinds):
            continue
        _, out = outs.pop(kinds.index(want))
        counts[want] = counts.get(want, 0) + 1
        if want == "fwd":
            check_encap(case, cfg, out, fr, what)
        else:
            checks[want](case, out, fr, what)
    case.eq(sum(len(v) for v in got.values()), 0, "no output beyond the expected")
    return counts


def shares_line(counts, weights):
    tot = sum(counts)
    wsum = sum(weights)
    return "/".join("%.3f" % (x / tot) for x in counts), "/".join(
        "%.3f" % (w / wsum) for w in weights)
