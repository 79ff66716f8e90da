# SPDX-License-Identifier: BSD-3-Clause
"""Input for the forward case: one packet per way a forwarded packet can look.

Each row is (description, frame). Every frame goes to a service and must come
out encapsulated; rows differ in what the mux must carry over faithfully
(DF, DSCP/ECN, IP options, TTL, checksums, VLAN tags and Ethernet padding).
Every row has its own (client address, source port, protocol), which is how
test.py matches outputs to inputs.

    /usr/bin/python3 gen.py DIR     writes DIR/forward.pcap for inspection
"""
import os
import random
import struct
import sys

from scapy.layers.inet import IP, TCP, UDP, IPOption_Router_Alert, IPOption_RR, in4_chksum
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

VIP = "192.0.2.10"
VIP_ZERO = "192.0.2.11"   # one backend: lets us aim a checksum at zero

SERVICES = [
    sp.Service(VIP, "tcp", 80, [
        sp.Backend("10.1.0.11", 8080, "10.0.1.1"),
        sp.Backend("10.1.0.12", 8080, "10.0.1.2"),
        sp.Backend("10.1.0.21", 8081, "10.0.2.1"),
    ]),
    sp.Service(VIP, "udp", 53, [
        sp.Backend("10.1.0.31", 5353, "10.0.3.1"),
        sp.Backend("10.1.0.32", 53, "10.0.3.2"),
    ]),
    sp.Service(VIP_ZERO, "udp", 4789, [
        sp.Backend("10.1.0.41", 4000, "10.0.4.1"),
    ]),
]


def eth():
    return Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC)


def pad(frame, to, byte):
    b = bytes(frame)
    return b + bytes([byte]) * (to - len(b))


def ocsum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def udp_rewritten_to_zero(src, sport):
    """A UDP datagram to VIP_ZERO whose checksum, once the mux has rewritten
    it to the only backend (10.1.0.41:4000), computes to zero and so must be
    sent as 0xffff. Two payload bytes are chosen to make the sum all ones."""
    be = SERVICES[2].backends[0]
    body = bytearray(b"\0\0zero-checksum-probe")
    ulen = 8 + len(body)
    pseudo = sp.ip_bytes(src) + sp.ip_bytes(be.dip) + struct.pack("!BBH", 0, 17, ulen)
    hdr = struct.pack("!HHHH", sport, be.port, ulen, 0)
    s = ocsum(pseudo + hdr + bytes(body))
    body[0:2] = struct.pack("!H", 0xFFFF - s)
    rewritten = IP(src=src, dst=be.dip) / UDP(sport=sport, dport=be.port) / Raw(bytes(body))
    assert in4_chksum(17, rewritten[IP], bytes(rewritten[UDP])[:6] + b"\0\0" + bytes(body)) == 0
    p = eth() / IP(src=src, dst=VIP_ZERO, id=211, flags="DF") / UDP(sport=sport, dport=4789) / \
        Raw(bytes(body))
    assert IP(bytes(p[IP]))[UDP].chksum not in (0, 0xFFFF)
    return p


def frames():
    rnd = random.Random(20240601)
    rows = []

    def c(n):
        return "198.51.100.%d" % n

    rows.append(("tcp syn, DF, TCP options", eth() /
                 IP(src=c(1), dst=VIP, id=101, flags="DF") /
                 TCP(sport=40001, dport=80, flags="S", seq=1000,
                     options=[("MSS", 1460), ("SAckOK", b""), ("WScale", 7)])))
    rows.append(("tcp data, no DF", eth() /
                 IP(src=c(2), dst=VIP, id=102, ttl=57) /
                 TCP(sport=40002, dport=80, flags="PA", seq=5, ack=9) /
                 Raw(bytes(rnd.getrandbits(8) for _ in range(300)))))
    rows.append(("tcp, DSCP EF + ECN ECT(0), DF", eth() /
                 IP(src=c(3), dst=VIP, id=103, tos=0xBA, flags="DF") /
                 TCP(sport=40003, dport=80, flags="A") / Raw(b"ef")))
    rows.append(("tcp, DSCP AF41 + ECN CE, no DF", eth() /
                 IP(src=c(4), dst=VIP, id=104, tos=0x8B) /
                 TCP(sport=40004, dport=80, flags="PA") / Raw(b"af41-ce" * 10)))
    rows.append(("tcp, IP option router alert (IHL 6)", eth() /
                 IP(src=c(5), dst=VIP, id=105, flags="DF", options=[IPOption_Router_Alert()]) /
                 TCP(sport=40005, dport=80, flags="PA") / Raw(b"options")))
    rows.append(("tcp, IP option record route (IHL 8)", eth() /
                 IP(src=c(6), dst=VIP, id=106,
                    options=[IPOption_RR(routers=["0.0.0.0", "0.0.0.0"])]) /
                 TCP(sport=40006, dport=80, flags="S")))
    rows.append(("tcp fin, TTL 2 (leaves with 1)", eth() /
                 IP(src=c(7), dst=VIP, id=107, ttl=2) /
                 TCP(sport=40007, dport=80, flags="FA")))
    rows.append(("tcp rst, TTL 255", eth() /
                 IP(src=c(8), dst=VIP, id=108, ttl=255, flags="DF") /
                 TCP(sport=40008, dport=80, flags="R")))
    rows.append(("tcp 1400-byte payload, DF", eth() /
                 IP(src=c(9), dst=VIP, id=109, flags="DF") /
                 TCP(sport=40009, dport=80, flags="PA") /
                 Raw(bytes(rnd.getrandbits(8) for _ in range(1400)))))
    rows.append(("udp with checksum", eth() /
                 IP(src=c(20), dst=VIP, id=120) /
                 UDP(sport=40020, dport=53) / Raw(b"\x12\x34\x01\x00\x00\x01" + b"q" * 30)))
    rows.append(("udp checksum 0 (none computed)", eth() /
                 IP(src=c(21), dst=VIP, id=121, flags="DF") /
                 UDP(sport=40021, dport=53, chksum=0) / Raw(b"no checksum here")))
    rows.append(("udp empty payload", eth() /
                 IP(src=c(22), dst=VIP, id=122) / UDP(sport=40022, dport=53)))
    rows.append(("udp whose rewritten checksum is 0 (must be 0xffff)",
                 udp_rewritten_to_zero(c(23), 40023)))
    rows.append(("802.1Q vlan 100 pcp 3, tcp (output untagged)",
                 Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) / Dot1Q(vlan=100, prio=3) /
                 IP(src=c(30), dst=VIP, id=130, flags="DF") /
                 TCP(sport=40030, dport=80, flags="PA") / Raw(b"tagged")))
    rows.append(("802.1Q vlan 4094, udp", Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) /
                 Dot1Q(vlan=4094) / IP(src=c(31), dst=VIP, id=131) /
                 UDP(sport=40031, dport=53) / Raw(b"tagged udp")))
    rows.append(("60-byte frame: 54-byte tcp syn + 6 bytes padding",
                 pad(eth() / IP(src=c(40), dst=VIP, id=140) /
                     TCP(sport=40040, dport=80, flags="S"), 60, 0xAA)))
    rows.append(("60-byte frame: 44-byte udp + 16 bytes padding",
                 pad(eth() / IP(src=c(41), dst=VIP, id=141) /
                     UDP(sport=40041, dport=53) / Raw(b"hi"), 60, 0x55)))
    rows.append(("64-byte tagged frame: udp + padding",
                 pad(Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) / Dot1Q(vlan=7) /
                     IP(src=c(42), dst=VIP, id=142) / UDP(sport=40042, dport=53, chksum=0) /
                     Raw(b"x"), 64, 0xEE)))

    # A spread of ordinary packets with random header fields and sizes.
    for k in range(40):
        src = "203.0.113.%d" % (k + 1)
        tos = rnd.choice([0, 0x10, 0x28, 0xB8, 0x01, 0x02, 0x03, 0xFF])
        flags = "DF" if rnd.random() < 0.5 else 0
        ttl = rnd.randint(2, 255)
        body = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 1200)))
        ip = IP(src=src, dst=VIP, id=rnd.randint(0, 65535), tos=tos, flags=flags, ttl=ttl)
        if k % 3 == 2:
            l4 = UDP(sport=rnd.randint(1024, 65535), dport=53,
                     chksum=0 if k % 2 else None)
        else:
            l4 = TCP(sport=rnd.randint(1024, 65535), dport=80, flags=rnd.choice(["S", "A", "PA"]),
                     seq=rnd.getrandbits(32), ack=rnd.getrandbits(32),
                     window=rnd.getrandbits(16))
        rows.append(("random #%d" % k, eth() / ip / l4 / Raw(body)))
    return [(d, sp.to_bytes(f)) for d, f in rows]


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(out, "forward.pcap"), [f for _, f in frames()])
