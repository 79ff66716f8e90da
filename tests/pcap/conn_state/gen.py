# SPDX-License-Identifier: BSD-3-Clause
"""Input for the conn_state case: TCP connections through their life, one
after another on the same five-tuple, as a client that reuses its port does.

Per flow: SYN, ACK, FIN, ACK (the client's half of a close), then a new SYN
on the same tuple, ACK, RST. The connection table must see two connections
per flow (the SYN after the close starts a new one), and every other packet
must hit the flow's entry.

    /usr/bin/python3 gen.py DIR     writes DIR/conn_state.pcap
"""
import os
import sys

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from sluicetest import pcap as sp

VIP = "192.0.2.40"
N_FLOWS = 50
LIFE = ["S", "A", "FA", "A", "S", "A", "R"]
NEW_PER_FLOW = 2

SERVICES = [
    sp.Service(VIP, "tcp", 80, [
        sp.Backend("10.4.0.1", 8080, "10.0.40.1"),
        sp.Backend("10.4.0.2", 8080, "10.0.40.2"),
        sp.Backend("10.4.0.3", 8080, "10.0.40.3"),
    ]),
]


def frames():
    out = []
    for step, flags in enumerate(LIFE):
        for f in range(N_FLOWS):
            out.append(bytes(Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) /
                             IP(src="198.51.100.%d" % (f + 1), dst=VIP, id=step * 1000 + f) /
                             TCP(sport=30000 + f, dport=80, flags=flags, seq=step)))
    return out


if __name__ == "__main__":
    sp.write_pcap(os.path.join(sys.argv[1], "conn_state.pcap"), frames())
