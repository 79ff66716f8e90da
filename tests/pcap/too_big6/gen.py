# SPDX-License-Identifier: BSD-3-Clause
"""Input for the too_big6 case: path MTU with IPv6 in the picture.

The outer header follows the backend's PA: 20 bytes to an IPv4 PA, 40 to an
IPv6 one. Each service has one backend, so the form is known per row. Rows
are (description, frame, expected, mtu it must report): "ptb" (ICMPv6
packet too big back to the client), "icmp" (ICMP fragmentation needed),
"fwd" (encapsulated whole), "frag" (encapsulated, the outer datagram sent
as fragments), or a drop reason. Two configurations run the same rows:
mtu 1500, and mtu 1300, where an IPv6 packet of up to 1280 bytes (which
every IPv6 link must carry) no longer fits a 6in6 tunnel and is carried in
outer fragments instead of being refused.

    /usr/bin/python3 gen.py DIR     writes DIR/too_big6_<mtu>.pcap
"""
import os
import random
import sys

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

VIP6_66 = "2001:db8::66"   # 6in6
VIP6_64 = "2001:db8::64"   # 6in4
VIP4_46 = "192.0.2.46"     # 4in6
TUNNEL6 = "2001:db8:ff::100"
SERVICES = [
    sp.Service(VIP6_66, "tcp", 80, [sp.Backend("2001:db8:6::1", 80, "2001:db8:ff::6")]),
    sp.Service(VIP6_66, "udp", 53, [sp.Backend("2001:db8:6::1", 53, "2001:db8:ff::6")]),
    sp.Service(VIP6_64, "tcp", 80, [sp.Backend("2001:db8:6::2", 80, "10.0.64.2")]),
    sp.Service(VIP4_46, "tcp", 80, [sp.Backend("10.46.0.1", 80, "2001:db8:ff::46")]),
]
MTUS = (1500, 1300)


def expect_v6(total, outer, mtu):
    """What the mux does with an IPv6 packet of total bytes to a PA behind
    outer bytes of header: (verdict, the MTU a packet too big reports)."""
    room = mtu - outer
    if total <= room:
        return "fwd", None
    tell = max(room, 1280)
    return ("frag", None) if total <= tell else ("ptb", tell)


def rows(mtu):
    rnd = random.Random(mtu)
    out = []
    n = [0]

    def body(k):
        return Raw(bytes(rnd.getrandbits(8) for _ in range(k)))

    def tcp6(vip, total, proto="tcp"):
        n[0] += 1
        src = "2001:db8:c::%x" % n[0]
        e = Ether(src="02:00:00:00:c6:%02x" % n[0], dst=sp.ROUTER_MAC)
        if proto == "udp":
            return bytes(e / IPv6(src=src, dst=vip, tc=0x28) / UDP(sport=40000 + n[0], dport=53) /
                         body(total - 48))
        return bytes(e / IPv6(src=src, dst=vip, tc=0x28) /
                     TCP(sport=40000 + n[0], dport=80, flags="PA") / body(total - 60))

    def tcp4(total, df):
        n[0] += 1
        e = Ether(src="02:00:00:00:c6:%02x" % n[0], dst=sp.ROUTER_MAC)
        return bytes(e / IP(src="198.51.100.%d" % n[0], dst=VIP4_46, flags="DF" if df else 0,
                            id=n[0]) / TCP(sport=40000 + n[0], dport=80, flags="PA") /
                     body(total - 40))

    for total in sorted({1200, 1260, 1280, mtu - 41, mtu - 40, mtu - 39, mtu}):
        if total < 100:
            continue
        v, tell = expect_v6(total, 40, mtu)
        out.append(("6in6 TCP, %d bytes" % total, tcp6(VIP6_66, total), v, tell))
        v, tell = expect_v6(total, 20, mtu)
        out.append(("6in4 TCP, %d bytes" % total, tcp6(VIP6_64, total), v, tell))
    v, tell = expect_v6(mtu, 40, mtu)
    out.append(("6in6 UDP, %d bytes" % mtu, tcp6(VIP6_66, mtu, proto="udp"), v, tell))
    for total in (mtu - 40, mtu - 39, mtu):
        fits = total <= mtu - 40
        out.append(("4in6 TCP DF, %d bytes" % total, tcp4(total, True),
                    "fwd" if fits else "icmp", None if fits else mtu - 40))
        out.append(("4in6 TCP no DF, %d bytes" % total, tcp4(total, False),
                    "fwd" if fits else "frag", None))
    return out


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    for m in MTUS:
        sp.write_pcap(os.path.join(d, "too_big6_%d.pcap" % m), [r[1] for r in rows(m)])
