# SPDX-License-Identifier: BSD-3-Clause
"""Input for the spread case: 10,000 TCP SYNs of distinct flows (random
client addresses and ports, fixed seed) to one service whose four backends
have weights 1, 1, 2 and 4.

    /usr/bin/python3 gen.py DIR     writes DIR/spread.pcap
"""
import os
import random
import struct
import sys

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.utils import checksum

from sluicetest import pcap as sp

VIP = "192.0.2.30"
N_FLOWS = 10000

SERVICES = [
    sp.Service(VIP, "tcp", 80, [
        sp.Backend("10.3.0.1", 8080, "10.0.30.1", weight=1),
        sp.Backend("10.3.0.2", 8080, "10.0.30.2", weight=1),
        sp.Backend("10.3.0.3", 8080, "10.0.30.3", weight=2),
        sp.Backend("10.3.0.4", 8080, "10.0.30.4", weight=4),
    ]),
]


def frames():
    """The SYNs. scapy builds one, the rest are copies with the client
    address, port, IP id and sequence number patched and both checksums
    recomputed (building 10,000 packets in scapy takes seconds)."""
    rnd = random.Random(10000)
    tmpl = bytearray(bytes(Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) /
                           IP(src="0.0.0.0", dst=VIP, flags="DF") /
                           TCP(sport=1, dport=80, flags="S")))
    seen, out = set(), []
    while len(out) < N_FLOWS:
        src = "%d.%d.%d.%d" % (rnd.choice([100, 172, 198, 203]), rnd.randint(0, 255),
                               rnd.randint(0, 255), rnd.randint(1, 254))
        sport = rnd.randint(1024, 65535)
        if (src, sport) in seen:
            continue
        seen.add((src, sport))
        f = bytearray(tmpl)
        f[18:20] = struct.pack("!H", len(out) & 0xFFFF)       # IP id: the flow's index
        f[26:30] = sp.ip_bytes(src)
        f[24:26] = b"\0\0"
        f[24:26] = struct.pack("!H", checksum(bytes(f[14:34])))
        f[34:36] = struct.pack("!H", sport)
        f[38:42] = struct.pack("!I", rnd.getrandbits(32))      # seq
        f[50:52] = b"\0\0"
        pseudo = bytes(f[26:34]) + struct.pack("!BBH", 0, 6, len(f) - 34)
        f[50:52] = struct.pack("!H", checksum(pseudo + bytes(f[34:])))
        out.append(bytes(f))
    return out


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(out, "spread.pcap"), frames())
