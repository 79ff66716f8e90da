# SPDX-License-Identifier: BSD-3-Clause
"""Input for the nd_echo6 case: what the mux answers itself over IPv6.

Rows are (description, frame, expected with nd_for_vips off, expected with
it on); an expectation is "na" (a neighbor advertisement), "echo" (an
ICMPv6 echo reply) or a drop reason. Requesters use distinct MACs so
replies can be matched to requests.

    /usr/bin/python3 gen.py DIR     writes DIR/nd_echo6.pcap
"""
import os
import itertools
import random
import sys

from scapy.layers.inet6 import (ICMPv6EchoReply, ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,
                                ICMPv6NDOptSrcLLAddr, IPv6, IPv6ExtHdrHopByHop)
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

TUNNEL6 = "2001:db8:ff::100"
VIP6 = "2001:db8::70"
SERVICES = [
    sp.Service(VIP6, "tcp", 80, [sp.Backend("2001:db8:7::1", 80, "2001:db8:ff::7")]),
    sp.Service("192.0.2.70", "tcp", 80, [sp.Backend("10.7.0.1", 80, "10.0.70.1")]),
]


def snode(addr):
    """The solicited-node group of addr and its Ethernet address."""
    b = sp.v6.ip6_bytes(addr)
    grp = "ff02::1:ff%02x:%02x%02x" % (b[13], b[14], b[15])
    return grp, "33:33:ff:%02x:%02x:%02x" % (b[13], b[14], b[15])


def rows():
    rnd = random.Random(6600)
    out = []
    hosts = itertools.count(1)

    def who():
        n = next(hosts)
        return "02:00:00:00:b0:%02x" % n, "2001:db8:ff::%x" % (0x200 + n)

    def ns(target, vlan=None, hlim=255, src=None, opt=True, fix=None):
        mac, ip = who()
        grp, gmac = snode(target)
        e = Ether(src=mac, dst=gmac)
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        p = e / IPv6(src=src or ip, dst=grp, hlim=hlim) / ICMPv6ND_NS(tgt=target)
        if opt:
            p = p / ICMPv6NDOptSrcLLAddr(lladdr=mac)
        b = bytearray(bytes(p))
        if fix:
            fix(b)
        return bytes(b)

    def echo(dst, k, ext=False, vlan=None):
        mac, ip = who()
        e = Ether(src=mac, dst=sp.ROUTER_MAC)
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        ip6 = IPv6(src=ip, dst=dst, hlim=rnd.randint(2, 255))
        if ext:
            ip6 = ip6 / IPv6ExtHdrHopByHop()
        return bytes(e / ip6 / ICMPv6EchoRequest(id=rnd.getrandbits(16), seq=rnd.getrandbits(16)) /
                     Raw(bytes(rnd.getrandbits(8) for _ in range(k))))

    def bad_csum(b):
        b[-24 - 8 + 2] ^= 0x55  # the ICMPv6 checksum (24-byte NS, 8-byte option)

    out.append(("NS for the tunnel address", ns(TUNNEL6), "na", "na"))
    out.append(("NS for the tunnel address, 802.1Q vlan 6", ns(TUNNEL6, vlan=6), "na", "na"))
    out.append(("NS for the tunnel address, no option", ns(TUNNEL6, opt=False), "na", "na"))
    out.append(("DAD NS for the tunnel address (from ::)",
                ns(TUNNEL6, src="::", opt=False), "na", "na"))
    out.append(("NS for the VIP", ns(VIP6), "nd_ignored", "na"))
    out.append(("NS for an address not ours", ns("2001:db8:ff::999"), "nd_ignored", "nd_ignored"))
    out.append(("NS for the tunnel address, hop limit 254",
                ns(TUNNEL6, hlim=254), "nd_malformed", "nd_malformed"))
    out.append(("NS for the tunnel address, bad checksum",
                ns(TUNNEL6, fix=bad_csum), "nd_malformed", "nd_malformed"))
    mac, ip = who()
    out.append(("NA for the tunnel address", bytes(
        Ether(src=mac, dst="33:33:00:00:00:01") / IPv6(src=ip, dst="ff02::1", hlim=255) /
        ICMPv6ND_NA(tgt=TUNNEL6, R=0, S=0, O=1)), "nd_ignored", "nd_ignored"))
    out.append(("echo to the VIP, 56 bytes", echo(VIP6, 56), "echo", "echo"))
    out.append(("echo to the tunnel address, 33 bytes", echo(TUNNEL6, 33), "echo", "echo"))
    out.append(("echo to the VIP behind hop-by-hop options", echo(VIP6, 20, ext=True),
                "echo", "echo"))
    out.append(("echo to the VIP, 802.1Q vlan 6", echo(VIP6, 8, vlan=6), "echo", "echo"))
    out.append(("echo to an address not ours", echo("2001:db8::71", 8), "no_service",
                "no_service"))
    mac, ip = who()
    out.append(("echo reply to the VIP", bytes(
        Ether(src=mac, dst=sp.ROUTER_MAC) / IPv6(src=ip, dst=VIP6) / ICMPv6EchoReply()),
        "icmp_type", "icmp_type"))
    return out


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(d, "nd_echo6.pcap"), [r[1] for r in rows()])
