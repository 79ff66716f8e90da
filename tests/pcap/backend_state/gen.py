# SPDX-License-Identifier: BSD-3-Clause
"""Input for the backend_state case: new flows to services whose backends
are active, draining ("drain") or in maintenance ("maint").

    tcp/80   A active, B drain, C maint (all weight 1): 1,000 flows, a SYN
             each, then a second round of ACKs on the same flows
    tcp/443  two active backends weighted 1 and 3, a draining and a
             maintained one weighted 4: 8,000 SYNs of distinct flows
    udp/53   drain, maint, and an active one of weight 0: 500 datagrams,
             which no backend may take

Random client addresses and ports (fixed seed); the IP id is the frame's
index, so the test matches outputs to inputs.

    /usr/bin/python3 gen.py DIR     writes DIR/backend_state.pcap
"""
import os
import random
import struct
import sys

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import checksum

from sluicetest import pcap as sp

VIP = "192.0.2.50"
N_WEB, N_TLS, N_DNS = 1000, 8000, 500

SERVICES = [
    sp.Service(VIP, "tcp", 80, [
        sp.Backend("10.5.0.1", 8080, "10.0.50.1"),
        sp.Backend("10.5.0.2", 8080, "10.0.50.2", state="drain"),
        sp.Backend("10.5.0.3", 8080, "10.0.50.3", state="maint"),
    ]),
    sp.Service(VIP, "tcp", 443, [
        sp.Backend("10.5.1.1", 8443, "10.0.51.1", weight=1, state="active"),
        sp.Backend("10.5.1.2", 8443, "10.0.51.2", weight=3),
        sp.Backend("10.5.1.3", 8443, "10.0.51.3", weight=4, state="drain"),
        sp.Backend("10.5.1.4", 8443, "10.0.51.4", weight=4, state="maint"),
    ]),
    sp.Service(VIP, "udp", 53, [
        sp.Backend("10.5.2.1", 53, "10.0.52.1", state="drain"),
        sp.Backend("10.5.2.2", 53, "10.0.52.2", state="maint"),
        sp.Backend("10.5.2.3", 53, "10.0.52.3", weight=0),
    ]),
]


def clients(n, rnd, seen):
    """n (address, port) pairs not in seen."""
    out = []
    while len(out) < n:
        c = ("%d.%d.%d.%d" % (rnd.choice([100, 172, 198, 203]), rnd.randint(0, 255),
                              rnd.randint(0, 255), rnd.randint(1, 254)),
             rnd.randint(1024, 65535))
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


def patched(tmpl, src, sport, ipid):
    """A copy of a template frame (Ethernet, IPv4 without options, TCP or
    UDP) with client address, port and IP id set, checksums recomputed
    (scapy builds the template; building every frame in scapy takes
    seconds)."""
    f = bytearray(tmpl)
    f[18:20] = struct.pack("!H", ipid)
    f[26:30] = sp.ip_bytes(src)
    f[24:26] = b"\0\0"
    f[24:26] = struct.pack("!H", checksum(bytes(f[14:34])))
    f[34:36] = struct.pack("!H", sport)
    at = 34 + (16 if f[23] == sp.PROTO_TCP else 6)
    f[at:at + 2] = b"\0\0"
    pseudo = bytes(f[26:34]) + struct.pack("!BBH", 0, f[23], len(f) - 34)
    ck = checksum(pseudo + bytes(f[34:]))
    f[at:at + 2] = struct.pack("!H", ck if ck != 0 or f[23] == sp.PROTO_TCP else 0xFFFF)
    return bytes(f)


def template(dport, l4):
    return bytes(Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) /
                 IP(src="0.0.0.0", dst=VIP, flags="DF") / l4)


def frames():
    """[(frame, service port, flow)]: the input in order."""
    rnd = random.Random(5050)
    seen = set()
    syn80 = template(80, TCP(sport=1, dport=80, flags="S", seq=1))
    ack80 = template(80, TCP(sport=1, dport=80, flags="A", seq=2, ack=1))
    syn443 = template(443, TCP(sport=1, dport=443, flags="S", seq=1))
    dns = template(53, UDP(sport=1, dport=53) / Raw(b"\x12\x34\x01\x00" + b"\0" * 8))
    out = []

    def add(tmpl, port, c):
        out.append((patched(tmpl, c[0], c[1], len(out)), port, c))

    web = clients(N_WEB, rnd, seen)
    for c in web:
        add(syn80, 80, c)
    for c in clients(N_TLS, rnd, seen):
        add(syn443, 443, c)
    for c in clients(N_DNS, rnd, seen):
        add(dns, 53, c)
    for c in web:
        add(ack80, 80, c)
    return out


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(out, "backend_state.pcap"), [f for f, _, _ in frames()])
