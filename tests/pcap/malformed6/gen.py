# SPDX-License-Identifier: BSD-3-Clause
"""Input for the malformed6 case: IPv6 frames the mux must not forward, each
with the drop reason it must be counted under (common/lb_drop.h names):
lies of the fixed header, extension chains past their bound, out of order,
routed or cut, fragments, upper layers that lie, ICMPv6 the mux does not
take, neighbor discovery that RFC 4861 7.1 says to discard.

To add a case, append one row to TABLE:
    ("what is wrong with it", frame (scapy or bytes), "drop_reason"),

frames() interleaves the table with good IPv6 packets (one before each row
and one at the end), so every bad frame sits between packets that must pass.

    /usr/bin/python3 gen.py DIR     writes DIR/malformed6.pcap
"""
import os
import sys

from scapy.layers.inet import TCP, UDP
from scapy.layers.inet6 import (ICMPv6DestUnreach, ICMPv6MLReport2, ICMPv6ND_NS,
                                ICMPv6ND_RS, ICMPv6NDOptSrcLLAddr, IPv6, IPv6ExtHdrDestOpt,
                                IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting)
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

VIP6 = "2001:db8::6e"
TUNNEL6 = "2001:db8:ff::100"
CLIENT6 = "2001:db8:c::7"
SERVICES = [
    sp.Service(VIP6, "tcp", 80, [sp.Backend("2001:db8:6e::1", 80, "2001:db8:ff::6e")]),
    sp.Service(VIP6, "udp", 53, [sp.Backend("2001:db8:6e::2", 53, "2001:db8:ff::6e")]),
]


def E():
    return Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC)


def ip6(**kw):
    kw.setdefault("src", CLIENT6)
    kw.setdefault("dst", VIP6)
    return IPv6(**kw)


def raw(p, at, value):
    """The frame's bytes with byte at set to value."""
    b = bytearray(bytes(p))
    b[at] = value
    return bytes(b)


def plen(p, v):
    """The frame with the IPv6 payload length set to v."""
    b = bytearray(bytes(p))
    b[18:20] = v.to_bytes(2, "big")
    return bytes(b)


SYN = TCP(sport=1234, dport=80, flags="S")
DO = IPv6ExtHdrDestOpt
TABLE = [
    ("IPv6 cut inside its fixed header", bytes(E() / ip6() / SYN)[:14 + 30], "truncated"),
    ("version 4 under the IPv6 ethertype", raw(E() / ip6() / SYN, 14, 0x45), "ip_version"),
    ("payload length past the frame", plen(E() / ip6() / SYN, 200), "ip_len"),
    ("payload length 0 (a jumbogram's, never on Ethernet)", plen(E() / ip6() / SYN, 0), "ip_len"),
    ("first fragment", E() / ip6() / IPv6ExtHdrFragment(m=1, id=9) / SYN, "ipv6_fragment"),
    ("later fragment behind destination options",
     E() / ip6() / DO() / IPv6ExtHdrFragment(offset=100, id=9) / Raw(b"x" * 16),
     "ipv6_fragment"),
    ("routing header with a segment left",
     E() / ip6() / IPv6ExtHdrRouting(addresses=["2001:db8::99"], segleft=1) / SYN, "ipv6_ext"),
    ("five extension headers",
     E() / ip6() / IPv6ExtHdrHopByHop() / DO() / IPv6ExtHdrRouting() / DO() / DO() / SYN,
     "ipv6_ext"),
    ("hop-by-hop options after destination options",
     E() / ip6() / DO() / IPv6ExtHdrHopByHop() / SYN, "ipv6_ext"),
    ("extension header longer than the payload",
     raw(E() / ip6() / DO() / SYN, 14 + 40 + 1, 30), "ipv6_ext"),
    ("ESP", E() / ip6(nh=50) / Raw(b"\0" * 24), "proto"),
    ("no next header, 8 bytes after it", E() / ip6(nh=59) / Raw(b"\0" * 8), "proto"),
    ("TCP data offset 15 past the segment", E() / ip6() / TCP(dport=80, dataofs=15), "l4_len"),
    ("UDP length 7", E() / ip6() / UDP(dport=53, len=7), "l4_len"),
    ("a 10-byte TCP segment", E() / ip6(nh=6) / Raw(b"\0" * 10), "l4_truncated"),
    ("router solicitation", E() / ip6(hlim=255) / ICMPv6ND_RS(), "icmp_type"),
    ("MLDv2 report", E() / ip6() / ICMPv6MLReport2(), "icmp_type"),
    ("unreachable quoting 20 bytes of IPv6",
     E() / ip6(src="2001:db8:ff00::1") / ICMPv6DestUnreach() / Raw(bytes(ip6())[:20]),
     "icmp_quote"),
    ("neighbor solicitation with hop limit 64",
     E() / ip6(dst="ff02::1:ff00:100", hlim=64) / ICMPv6ND_NS(tgt=TUNNEL6), "nd_malformed"),
    ("neighbor solicitation with an option of length 0",
     E() / ip6(dst="ff02::1:ff00:100", hlim=255) / ICMPv6ND_NS(tgt=TUNNEL6) /
     ICMPv6NDOptSrcLLAddr(len=0, lladdr=sp.CLIENT_MAC), "nd_malformed"),
    ("IPv6 in IPv6 to the VIP (no probers)", E() / ip6() / ip6(src=CLIENT6) / SYN,
     "tunnel_inbound"),
    ("hop limit 1", E() / ip6(hlim=1) / SYN, "ttl_expired"),
]


def frames():
    """The table interleaved with good packets; returns (frames, goods)."""
    out, goods = [], []
    for i in range(len(TABLE) + 1):
        g = bytes(E() / ip6(src="2001:db8:c::1:%x" % (i + 1)) /
                  TCP(sport=2000 + i, dport=80, flags="S") / Raw(b"good"))
        goods.append(g)
        out.append(g)
        if i < len(TABLE):
            out.append(bytes(TABLE[i][1]))
    return out, goods


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(d, "malformed6.pcap"), frames()[0])
