# SPDX-License-Identifier: BSD-3-Clause
"""Input for the arp_echo case: what the mux answers itself.

Rows are (description, frame, expected with arp_for_vips off, expected with
it on); an expectation is "arp" (an ARP reply), "echo" (an echo reply) or a
drop reason. Requesters use distinct MACs and addresses so replies can be
matched to requests.

    /usr/bin/python3 gen.py DIR     writes DIR/arp_echo.pcap
"""
import os
import random
import sys

from scapy.layers.inet import ICMP, IP
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

TUNNEL = "10.255.0.1"
VIP = "192.0.2.70"
VIP2 = "192.0.2.71"
SERVICES = [
    sp.Service(VIP, "tcp", 80, [sp.Backend("10.7.0.1", 8080, "10.0.70.1")]),
    sp.Service(VIP2, "udp", 53, [sp.Backend("10.7.0.2", 53, "10.0.70.2")]),
]
BCAST = "ff:ff:ff:ff:ff:ff"


def rows():
    rnd = random.Random(7070)
    out = []
    n = [0]

    def who(vlan=None):
        n[0] += 1
        mac = "02:00:00:00:a0:%02x" % n[0]
        ip = "10.255.0.%d" % (100 + n[0])
        return mac, ip, vlan

    def arp(target, op=1, vlan=None):
        mac, ip, _ = who()
        e = Ether(src=mac, dst=BCAST)
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        return bytes(e / ARP(op=op, hwsrc=mac, psrc=ip, hwdst="00:00:00:00:00:00", pdst=target))

    def ping(dst, payload, vlan=None, pad_to=None, zero=False):
        mac, ip, _ = who()
        e = Ether(src=mac, dst=sp.ROUTER_MAC)
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        ident, seq = (0, 0) if zero else (rnd.getrandbits(16), rnd.getrandbits(16))
        b = bytes(e / IP(src=ip, dst=dst, id=n[0], ttl=rnd.randint(2, 255), tos=0x10) /
                  ICMP(type=8, id=ident, seq=seq) / Raw(payload))
        if pad_to:
            b += b"\x5a" * (pad_to - len(b))
        return b

    def rbytes(k):
        return bytes(rnd.getrandbits(8) for _ in range(k))

    out.append(("ARP who-has tunnel address", arp(TUNNEL), "arp", "arp"))
    out.append(("ARP who-has tunnel address, 802.1Q vlan 9", arp(TUNNEL, vlan=9), "arp", "arp"))
    out.append(("ARP who-has VIP", arp(VIP), "arp_ignored", "arp"))
    out.append(("ARP who-has second VIP", arp(VIP2), "arp_ignored", "arp"))
    out.append(("ARP who-has an address not ours", arp("10.255.0.2"), "arp_ignored",
                "arp_ignored"))
    out.append(("ARP reply for the tunnel address", arp(TUNNEL, op=2), "arp_ignored",
                "arp_ignored"))
    out.append(("echo to VIP, 56 bytes", ping(VIP, rbytes(56)), "echo", "echo"))
    out.append(("echo to second VIP, 1000 bytes", ping(VIP2, rbytes(1000)), "echo", "echo"))
    out.append(("echo to tunnel address, 33 bytes (odd)", ping(TUNNEL, rbytes(33)), "echo",
                "echo"))
    out.append(("echo to VIP, 802.1Q vlan 9", ping(VIP, rbytes(20), vlan=9), "echo", "echo"))
    out.append(("echo to VIP, 4 bytes in a padded 60-byte frame",
                ping(VIP, b"ping", pad_to=60), "echo", "echo"))
    # Type 0 and nothing else: the reply's sum is zero, its checksum 0xffff. An
    # update of the request's (RFC 1624 eqn. 3) would give 0x0000 (5 there).
    out.append(("echo to VIP, all zero (id, sequence, 16 bytes of payload)",
                ping(VIP, bytes(16), zero=True), "echo", "echo"))
    out.append(("echo to an address not ours", ping("192.0.2.79", rbytes(56)), "no_service",
                "no_service"))
    return out


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(out, "arp_echo.pcap"), [f for _, f, _, _ in rows()])
