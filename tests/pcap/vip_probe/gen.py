# SPDX-License-Identifier: BSD-3-Clause
"""Input for the vip_probe case: the manager's VIP probes, IP-in-IP to the
mux's tunnel address with an ICMP echo request to a VIP inside (payload:
16-byte magic "SLUICE-VIPPROBE\\0", 8-byte nonce, 8 bytes the mux fills with
its version), and IP-in-IP that looks like one but is not to be answered.

The same over IPv6, where the mux has an IPv6 tunnel address: the outer
header of either family to the tunnel address of its family, from a prober
of that family, around an IPv4 probe (protocol 4) or an ICMPv6 one (41) to
a VIP of the inner family: 6in6, 4in6 and 6in4.

Rows are (description, frame, expected with mux.probers set, expected
without); an expectation is "answer" or a drop reason. Each row's inner
source is its own address, so an answer (sent to it) names its row.

    /usr/bin/python3 gen.py DIR     writes DIR/vip_probe.pcap
"""
import os
import random
import sys

from scapy.layers.inet import ICMP, IP, TCP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

TUNNEL = "10.255.0.1"
PROBER = "10.255.0.254"
STRANGER = "10.255.0.253"
NEXT_HOP = "02:00:00:00:fe:01"
VIP = "192.0.2.80"
VIP2 = "192.0.2.81"
TUNNEL6 = "2001:db8:ff::1"
PROBER6 = "2001:db8:ff::254"
NEXT_HOP6 = "02:00:00:00:fe:06"
VIP6 = "2001:db8::80"
SERVICES = [
    sp.Service(VIP, "tcp", 80, [sp.Backend("10.8.0.1", 8080, "10.0.80.1")]),
    sp.Service(VIP2, "udp", 53, [sp.Backend("10.8.0.2", 53, "10.0.80.2")]),
    sp.Service(VIP6, "tcp", 80, [sp.Backend("2001:db8:8::1", 80, "2001:db8:ff::8")]),
]
MAGIC = b"SLUICE-VIPPROBE\x00"


def rows():
    rnd = random.Random(8080)
    out = []
    n = [0]

    def src():
        n[0] += 1
        return "10.99.0.%d" % n[0]

    def payload(extra=0, magic=MAGIC):
        return magic + bytes(rnd.getrandbits(8) for _ in range(8)) + bytes(8) + \
            bytes(rnd.getrandbits(8) for _ in range(extra))

    def inner_echo(dst, pl, csum=None):
        ip = IP(src=src(), dst=dst, id=n[0], ttl=64)
        if csum is not None:
            ip.chksum = csum
        return ip / ICMP(type=8, id=rnd.getrandbits(16), seq=rnd.getrandbits(16)) / Raw(pl)

    def tunnel(inner, outer_src=PROBER, outer_dst=TUNNEL, vlan=None, proto=4):
        e = Ether(src=sp.ROUTER_MAC, dst=sp.PORT_MAC)
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        return bytes(e / IP(src=outer_src, dst=outer_dst, proto=proto, ttl=64) / inner)

    def inner_echo6(dst, pl):
        return IPv6(src="2001:db8:99::%x" % (n[0] + 1), dst=dst, hlim=64) / \
            ICMPv6EchoRequest(id=rnd.getrandbits(16), seq=rnd.getrandbits(16)) / Raw(pl)

    def tunnel6(inner, outer_src=PROBER6, outer_dst=TUNNEL6, vlan=None):
        n[0] += 1
        e = Ether(src=sp.ROUTER_MAC, dst=sp.PORT_MAC)
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        return bytes(e / IPv6(src=outer_src, dst=outer_dst, hlim=64) / inner)

    out.append(("probe for VIP", tunnel(inner_echo(VIP, payload())), "answer", "tunnel_inbound"))
    out.append(("probe for second VIP", tunnel(inner_echo(VIP2, payload())), "answer",
                "tunnel_inbound"))
    out.append(("probe for VIP, 802.1Q vlan 9", tunnel(inner_echo(VIP, payload()), vlan=9),
                "answer", "tunnel_inbound"))
    out.append(("probe for VIP, 100 bytes after the probe payload",
                tunnel(inner_echo(VIP, payload(100))), "answer", "tunnel_inbound"))
    out.append(("probe for an address that is no VIP", tunnel(inner_echo("192.0.2.89", payload())),
                "no_service", "tunnel_inbound"))
    out.append(("probe from a source that is not a prober",
                tunnel(inner_echo(VIP, payload()), outer_src=STRANGER), "tunnel_inbound",
                "tunnel_inbound"))
    out.append(("probe to an address that is not the tunnel address",
                tunnel(inner_echo(VIP, payload()), outer_dst="10.255.0.2"), "tunnel_inbound",
                "tunnel_inbound"))
    out.append(("echo inside without the magic",
                tunnel(inner_echo(VIP, payload(magic=b"NOT-A-VIPPROBE\x00\x00"))),
                "tunnel_inbound", "tunnel_inbound"))
    out.append(("probe payload cut short (20 bytes)",
                tunnel(inner_echo(VIP, MAGIC + b"1234")), "tunnel_inbound", "tunnel_inbound"))
    out.append(("inner IPv4 checksum wrong", tunnel(inner_echo(VIP, payload(), csum=0x1234)),
                "tunnel_inbound", "tunnel_inbound"))
    out.append(("TCP inside", tunnel(IP(src=src(), dst=VIP) / TCP(dport=80, flags="S")),
                "tunnel_inbound", "tunnel_inbound"))
    out.append(("IPv6 in IPv4 from the prober, no probe inside",
                tunnel(IPv6(src="2001:db8::%d" % n[0], dst="2001:db8::1") / Raw(MAGIC), proto=41),
                "tunnel_inbound", "tunnel_inbound"))
    # IPv6: 6in6, 4in6, 6in4.
    out.append(("6in6 probe for the IPv6 VIP", tunnel6(inner_echo6(VIP6, payload())), "answer",
                "tunnel_inbound"))
    out.append(("6in6 probe, 802.1Q vlan 9", tunnel6(inner_echo6(VIP6, payload(30)), vlan=9),
                "answer", "tunnel_inbound"))
    out.append(("4in6 probe for the IPv4 VIP", tunnel6(inner_echo(VIP, payload())), "answer",
                "tunnel_inbound"))
    out.append(("6in4 probe for the IPv6 VIP",
                tunnel(inner_echo6(VIP6, payload()), proto=41), "answer", "tunnel_inbound"))
    n[0] += 1
    out.append(("6in6 probe for an address that is no VIP",
                tunnel6(inner_echo6("2001:db8::89", payload())), "no_service", "tunnel_inbound"))
    out.append(("6in6 probe from a source that is not a prober",
                tunnel6(inner_echo6(VIP6, payload()), outer_src="2001:db8:ff::253"),
                "tunnel_inbound", "tunnel_inbound"))
    out.append(("6in6 probe to an address that is not the tunnel address",
                tunnel6(inner_echo6(VIP6, payload()), outer_dst="2001:db8:ff::2"),
                "tunnel_inbound", "tunnel_inbound"))
    out.append(("6in6 echo without the magic",
                tunnel6(inner_echo6(VIP6, payload(magic=b"NOT-A-VIPPROBE\x00\x00"))),
                "tunnel_inbound", "tunnel_inbound"))
    out.append(("IPv4 prober's probe to the IPv6 tunnel address",
                tunnel6(inner_echo6(VIP6, payload()), outer_src="::ffff:10.255.0.254"),
                "tunnel_inbound", "tunnel_inbound"))
    return out


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(out, "vip_probe.pcap"), [f for _, f, _, _ in rows()])
