# SPDX-License-Identifier: BSD-3-Clause
"""Input for the limits6 case: SYN trains against admission rules on IPv6
services (docs/protection.md), one block per service, in the order the mux
sees them; every backend behind an IPv4 PA (6in4).

    RATE   new_per_second 1/s, burst 10, intercept, refuse drop: 30 SYNs
           from 30 clients (10 pass)
    CONNS  max_connections 5, intercept, refuse rst: 12 SYNs (5 pass), the
           last carrying data (its RST acknowledges it too)
    SRC    per_source 1/s, burst 2, the default /64, intercept, refuse
           icmp: 6 SYNs from six addresses of one /64 (2 pass), 2 from
           another /64 (both pass)
    SRC128 per_source 1/s, burst 1, /128: 2 SYNs from each of 3 addresses
           of one /64 (one each passes)
    MON    new_per_second 1/s, burst 3, monitor: 8 SYNs, all forwarded, 5
           would have been refused

    /usr/bin/python3 gen.py DIR     writes DIR/limits6.pcap
"""
import os
import sys

from scapy.layers.inet import TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from sluicetest import pcap as sp

RATE, CONNS, SRC, SRC128, MON = ("2001:db8::50", "2001:db8::51", "2001:db8::52",
                                 "2001:db8::53", "2001:db8::54")


def _svc(vip, n, limits):
    return sp.Service(vip, "tcp", 80, [
        sp.Backend("2001:db8:5:%x::1" % n, 8080, "10.0.60.%d" % n),
        sp.Backend("2001:db8:5:%x::2" % n, 8080, "10.0.61.%d" % n),
    ], limits=limits)


SERVICES = [
    _svc(RATE, 1, {"new_per_second": {"limit": 1, "burst": 10, "mode": "intercept"}}),
    _svc(CONNS, 2, {"max_connections": {"limit": 5, "mode": "intercept"}, "refuse": "rst"}),
    _svc(SRC, 3, {"per_source": {"limit": 1, "burst": 2, "mode": "intercept"},
                  "refuse": "icmp"}),
    _svc(SRC128, 4, {"per_source": {"limit": 1, "burst": 1, "prefix": 128,
                                    "mode": "intercept"}}),
    _svc(MON, 5, {"new_per_second": {"limit": 1, "burst": 3}}),
]

# (checked, passed, would_deny, denied) of each service's one rule
EXPECT = {
    RATE: ("new_per_second", (30, 10, 0, 20)),
    CONNS: ("max_connections", (12, 5, 0, 7)),
    SRC: ("per_source", (8, 4, 0, 4)),
    SRC128: ("per_source", (6, 3, 0, 3)),
    MON: ("new_per_second", (8, 3, 5, 0)),
}
FORWARDED = 10 + 5 + 4 + 3 + 8
RSTS, ICMPS, DROPS = 7, 4, 20 + 3


def tcp(src, vip, sport, flags, seq=1000, payload=b""):
    return bytes(Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) /
                 IPv6(src=src, dst=vip, hlim=64) /
                 TCP(sport=sport, dport=80, flags=flags, seq=seq) / payload)


def frames():
    """[(frame, verdict)]: verdict "fwd", "drop", "rst" or "icmp"."""
    out = []
    for i in range(30):
        out.append((tcp("2001:db8:c:1::%x" % (i + 1), RATE, 40000 + i, "S"),
                    "fwd" if i < 10 else "drop"))
    for i in range(12):
        out.append((tcp("2001:db8:c:2::%x" % (i + 1), CONNS, 42000 + i, "S", seq=7000 + i,
                        payload=b"hello" if i == 11 else b""),
                    "fwd" if i < 5 else "rst"))
    for i in range(6):
        out.append((tcp("2001:db8:c:3::%x" % (i + 1), SRC, 44000 + i, "S"),
                    "fwd" if i < 2 else "icmp"))
    for i in range(2):
        out.append((tcp("2001:db8:c:4::%x" % (i + 1), SRC, 44100 + i, "S"), "fwd"))
    for i in range(6):
        out.append((tcp("2001:db8:c:5::%x" % (i % 3 + 1), SRC128, 45000 + i, "S"),
                    "fwd" if i < 3 else "drop"))
    for i in range(8):
        out.append((tcp("2001:db8:c:6::%x" % (i + 1), MON, 46000 + i, "S"), "fwd"))
    return out


if __name__ == "__main__":
    sp.write_pcap(os.path.join(sys.argv[1], "limits6.pcap"), [f for f, _ in frames()])
