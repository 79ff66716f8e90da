# SPDX-License-Identifier: BSD-3-Clause
"""Input for the too_big case (mux.mtu = 1500, so an inner packet may be at
most 1480 bytes once the 20-byte outer header is added).

Rows are (description, frame, expected): expected is "icmp" (an ICMP
fragmentation-needed reply to the client, nothing forwarded), "fwd"
(encapsulated), "frag" (encapsulated, and the outer datagram sent as
fragments: the client allowed it), or a drop reason. Every row has its own client address and
client MAC, so replies can be matched and their Ethernet dst checked.

    /usr/bin/python3 gen.py DIR     writes DIR/too_big.pcap
"""
import os
import random
import sys

from scapy.layers.inet import IP, TCP, UDP, IPOption_Router_Alert
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

VIP = "192.0.2.50"
MTU = 1500
SERVICES = [
    sp.Service(VIP, "tcp", 80, [
        sp.Backend("10.5.0.1", 8080, "10.0.50.1"),
        sp.Backend("10.5.0.2", 8080, "10.0.50.2"),
    ]),
    sp.Service(VIP, "udp", 53, [sp.Backend("10.5.0.3", 53, "10.0.50.3")]),
]


def rows():
    rnd = random.Random(1500)
    out = []
    n = [0]

    def pkt(total, proto="tcp", df=True, vlan=None, options=None):
        n[0] += 1
        k = n[0]
        mac = "02:00:00:00:c2:%02x" % k
        ip = IP(src="198.51.100.%d" % k, dst=VIP, id=k, flags="DF" if df else 0, tos=0x28,
                options=options or [])
        hl = len(ip)
        if proto == "tcp":
            l4 = TCP(sport=20000 + k, dport=80, flags="PA", seq=rnd.getrandbits(32))
            body = total - hl - 20
        else:
            l4 = UDP(sport=20000 + k, dport=53)
            body = total - hl - 8
        e = Ether(src=mac, dst=sp.ROUTER_MAC)
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        f = bytes(e / ip / l4 / Raw(bytes(rnd.getrandbits(8) for _ in range(body))))
        assert sp.Frame(f).ip.total == total
        return f

    for total in range(MTU - 19, MTU + 1):
        out.append(("tcp DF, %d bytes" % total, pkt(total), "icmp"))
    out.append(("tcp DF, 1480 bytes: fits exactly", pkt(MTU - 20), "fwd"))
    out.append(("tcp DF, 1000 bytes", pkt(1000), "fwd"))
    out.append(("tcp no DF, 1481 bytes", pkt(MTU - 19, df=False), "frag"))
    out.append(("tcp no DF, 1500 bytes", pkt(MTU, df=False), "frag"))
    out.append(("tcp no DF, 1500 bytes, 802.1Q vlan 7", pkt(MTU, df=False, vlan=7), "frag"))
    out.append(("tcp no DF, 1480 bytes: fits, not fragmented", pkt(MTU - 20, df=False), "fwd"))
    out.append(("udp DF, 1490 bytes", pkt(1490, proto="udp"), "icmp"))
    out.append(("udp no DF, 1490 bytes", pkt(1490, proto="udp", df=False), "frag"))
    out.append(("tcp DF, 1495 bytes, 802.1Q vlan 42", pkt(1495, vlan=42), "icmp"))
    out.append(("tcp DF, 1500 bytes with IP options", pkt(1500, options=[IPOption_Router_Alert()]),
                "icmp"))
    return out


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(out, "too_big.pcap"), [f for _, f, _ in rows()])
