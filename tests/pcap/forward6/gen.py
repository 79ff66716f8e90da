# SPDX-License-Identifier: BSD-3-Clause
"""Input for the forward6 case: the four tunnel forms at the mux.

A service is one family; a backend's PA is of either, and the outer header
follows it: an IPv4 service on an IPv4 PA is 4in4, on an IPv6 PA 4in6; an
IPv6 service on an IPv4 PA is 6in4, on an IPv6 PA 6in6. Rows are
(description, frame, expected): "fwd" (encapsulated in the backend's
form), "err" (an ICMP or ICMPv6 error about a flow of an earlier row,
forwarded to that flow's backend), or a drop reason. Every flow has its own
(client, source port, protocol); "twice" rows send a flow's second packet,
which must take the same backend and carry the same outer flow label.

    /usr/bin/python3 gen.py DIR     writes DIR/forward6.pcap
"""
import os
import random
import sys

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6PacketTooBig, ICMPv6TimeExceeded, IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

VIP4 = "192.0.2.60"
VIP6 = "2001:db8::60"
ROUTER6 = "2001:db8:ff00::1"
SERVICES = [
    sp.Service(VIP6, "tcp", 80, [
        sp.Backend("2001:db8:1::1", 80, "2001:db8:ff::1"),     # 6in6
        sp.Backend("2001:db8:1::2", 80, "10.0.6.2"),           # 6in4
        sp.Backend("2001:db8:1::3", 8080, "2001:db8:ff::3"),   # 6in6, another port
    ]),
    sp.Service(VIP6, "udp", 53, [sp.Backend("2001:db8:1::5", 5353, "10.0.6.5")]),  # 6in4
    sp.Service(VIP4, "tcp", 80, [
        sp.Backend("10.6.0.1", 8080, "10.0.6.1"),              # 4in4
        sp.Backend("10.6.0.2", 8080, "2001:db8:ff::2"),        # 4in6
    ]),
    sp.Service(VIP4, "udp", 53, [sp.Backend("10.6.0.4", 53, "2001:db8:ff::4")]),  # 4in6
]
TUNNEL6 = "2001:db8:ff::100"
FORMS = {"4in4", "4in6", "6in4", "6in6"}


def rows():
    rnd = random.Random(6060)
    out = []
    n = [0]
    flows = []

    def client(v6):
        n[0] += 1
        k = n[0]
        return ("2001:db8:c::%x" % k) if v6 else ("198.51.100.%d" % k), 30000 + k

    def e(vlan=None):
        f = Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC)
        return f / Dot1Q(vlan=vlan) if vlan else f

    def body(k):
        return Raw(bytes(rnd.getrandbits(8) for _ in range(k)))

    def tcp6(src, sport, tc=0, hlim=64, ext=None, vlan=None, k=40, dport=80, flags="S"):
        ip = IPv6(src=src, dst=VIP6, tc=tc, hlim=hlim, fl=rnd.getrandbits(20))
        if ext is not None:
            ip = ip / ext
        return e(vlan) / ip / TCP(sport=sport, dport=dport, flags=flags,
                                  seq=rnd.getrandbits(32)) / body(k)

    def udp6(src, sport, k=30):
        return e() / IPv6(src=src, dst=VIP6, tc=0x22) / UDP(sport=sport, dport=53) / body(k)

    def tcp4(src, sport, tos=0, df=True, k=40):
        return e() / IP(src=src, dst=VIP4, tos=tos, flags="DF" if df else 0, id=n[0]) / \
            TCP(sport=sport, dport=80, flags="S", seq=rnd.getrandbits(32)) / body(k)

    def udp4(src, sport):
        return e() / IP(src=src, dst=VIP4, tos=0x10) / UDP(sport=sport, dport=53) / body(20)

    # Enough flows of each service that every backend, so every form, gets some.
    for i in range(24):
        src, sport = client(True)
        tc = [0, 0x28, 0xb9, 0x03][i % 4]  # DSCP and ECN (CE) copied outward
        out.append(("IPv6 TCP SYN, traffic class %#x" % tc, tcp6(src, sport, tc=tc), "fwd"))
        flows.append(("v6", src, sport))
    for i in range(6):
        src, sport = client(True)
        out.append(("IPv6 UDP", udp6(src, sport), "fwd"))
    for i in range(16):
        src, sport = client(False)
        tos = [0, 0x28, 0xb9, 0x03][i % 4]
        out.append(("IPv4 TCP SYN, TOS %#x, DF %s" % (tos, i % 2 == 0),
                    tcp4(src, sport, tos=tos, df=i % 2 == 0), "fwd"))
        flows.append(("v4", src, sport))
    for i in range(4):
        src, sport = client(False)
        out.append(("IPv4 UDP", udp4(src, sport), "fwd"))
    src, sport = client(True)
    out.append(("IPv6 TCP behind a hop-by-hop header",
                tcp6(src, sport, ext=IPv6ExtHdrHopByHop()), "fwd"))
    src, sport = client(True)
    out.append(("IPv6 TCP, 802.1Q vlan 12", tcp6(src, sport, vlan=12), "fwd"))
    src, sport = client(True)
    out.append(("IPv6 TCP, hop limit 2", tcp6(src, sport, hlim=2), "fwd"))
    src, sport = client(True)
    out.append(("IPv6 TCP, 1400 bytes", tcp6(src, sport, k=1400 - 60), "fwd"))
    # Second packets: same backend, same outer flow label.
    for fam, src, sport in flows[::5]:
        if fam == "v6":
            out.append(("IPv6 flow, second packet", tcp6(src, sport, flags="A"), "twice"))
        else:
            out.append(("IPv4 flow, second packet", tcp4(src, sport), "twice"))
    # Errors about VIP -> client packets of those flows, from routers on the way back.
    for fam, src, sport in flows[1:8:2]:
        if fam == "v6":
            quote = IPv6(src=VIP6, dst=src, hlim=50) / TCP(sport=80, dport=sport, flags="SA")
            err = e() / IPv6(src=ROUTER6, dst=VIP6) / ICMPv6PacketTooBig(mtu=1280) / \
                Raw(bytes(quote)[:48])
            out.append(("ICMPv6 packet too big about an IPv6 flow", err, "err"))
    for fam, src, sport in flows[24:32:3]:
        quote = IP(src=VIP4, dst=src) / TCP(sport=80, dport=sport, flags="SA")
        err = e() / IP(src="203.0.113.9", dst=VIP4) / ICMP(type=3, code=4, nexthopmtu=1400) / \
            Raw(bytes(quote)[:28])
        out.append(("ICMP frag needed about an IPv4 flow", err, "err"))
    # Drops.
    src, sport = client(True)
    out.append(("IPv6 TCP, hop limit 1", tcp6(src, sport, hlim=1), "ttl_expired"))
    src, sport = client(True)
    out.append(("IPv6 TCP to a port the VIP has not", tcp6(src, sport, dport=81), "no_service"))
    src, sport = client(True)
    out.append(("IPv6 TCP to an address that is no VIP",
                e() / IPv6(src=src, dst="2001:db8::61") / TCP(sport=sport, dport=80),
                "no_service"))
    quote = IPv6(src=VIP6, dst="2001:db8:c::1") / TCP(sport=80, dport=30001)
    out.append(("ICMPv6 error whose quote is not from the VIP it is sent to",
                e() / IPv6(src=ROUTER6, dst="2001:db8::61") / ICMPv6TimeExceeded() /
                Raw(bytes(quote)[:48]), "icmp_quote"))
    return out


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(d, "forward6.pcap"), [f for _, f, _ in rows()])
