# SPDX-License-Identifier: BSD-3-Clause
"""Input for the affinity case: 300 flows (200 TCP, 100 UDP) of 5 packets
each, interleaved round by round in a shuffled order, and split over two RX
queues so that every flow has packets on both (packet k of flow f goes to
queue (f + k) % 2). Each worker reads one queue and keeps its own connection
table, so only a consistent backend choice keeps a flow on one backend.
back_to_back() gives the same packets on one queue, flow after flow.

    /usr/bin/python3 gen.py DIR     writes DIR/affinity0.pcap, DIR/affinity1.pcap
"""
import os
import random
import sys

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

VIP = "192.0.2.20"
N_TCP, N_UDP, PER_FLOW = 200, 100, 5

SERVICES = [
    sp.Service(VIP, "tcp", 443, [
        sp.Backend("10.2.0.1", 8443, "10.0.20.1"),
        sp.Backend("10.2.0.2", 8443, "10.0.20.1"),
        sp.Backend("10.2.0.3", 8443, "10.0.20.2", weight=2),
        sp.Backend("10.2.0.4", 9443, "10.0.20.3"),
    ]),
    sp.Service(VIP, "udp", 443, [
        sp.Backend("10.2.0.1", 4433, "10.0.20.1"),
        sp.Backend("10.2.0.5", 4433, "10.0.20.4"),
        sp.Backend("10.2.0.6", 4433, "10.0.20.5"),
    ]),
]

TCP_FLAGS = ["S", "A", "PA", "PA", "FA"]


def flows():
    """[(client, sport, proto)], distinct."""
    rnd = random.Random(300)
    seen, out = set(), []
    while len(out) < N_TCP + N_UDP:
        proto = sp.PROTO_TCP if len(out) < N_TCP else sp.PROTO_UDP
        f = ("100.%d.%d.%d" % (rnd.randint(64, 127), rnd.randint(0, 255), rnd.randint(1, 254)),
             rnd.randint(1024, 65535), proto)
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out


def packet(f, fi, k, rnd):
    src, sport, proto = f
    # A unique IP id per packet lets the test match outputs to inputs. The
    # UDP packets leave DF clear: their outer headers take the workers' ids.
    ip = IP(src=src, dst=VIP, flags="DF" if proto == sp.PROTO_TCP else 0, id=fi * PER_FLOW + k)
    if proto == sp.PROTO_TCP:
        body = b"" if k in (0, 1, 4) else bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 200)))
        l4 = TCP(sport=sport, dport=443, flags=TCP_FLAGS[k], seq=1000 + k)
    else:
        body = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(20, 300)))
        l4 = UDP(sport=sport, dport=443)
    return bytes(Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) / ip / l4 / Raw(body))


def queues():
    """Two frame lists, one per RX queue, and the flow list."""
    rnd = random.Random(301)
    fl = flows()
    q = [[], []]
    for k in range(PER_FLOW):
        order = list(range(len(fl)))
        rnd.shuffle(order)
        for fi in order:
            q[(fi + k) % 2].append(packet(fl[fi], fi, k, rnd))
    return q, fl


def back_to_back():
    """The same packets on one queue, each flow's five in a row: new flows
    whose later packets share a receive burst with their first."""
    rnd = random.Random(301)
    fl = flows()
    return [packet(f, fi, k, rnd) for fi, f in enumerate(fl) for k in range(PER_FLOW)]


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    q, _ = queues()
    for i, frames in enumerate(q):
        sp.write_pcap(os.path.join(out, "affinity%d.pcap" % i), frames)
