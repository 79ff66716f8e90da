# SPDX-License-Identifier: BSD-3-Clause
"""The admission-rule packet cases (tests/pcap/limits, limits6): their
services, the trains of segments they send, the rule counters they check.

A train is n segments to one VIP from clients numbered in turn, each with
the verdict the mux must reach: the first `passed` are forwarded, the
others refused (dropped, answered with a RST or an ICMP error). Either
family: a VIP with a colon is IPv6.

Needs scapy (/usr/bin/python3), as the generators do.
"""
from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from . import pcap as sp


def services(dip, pas, *rules):
    """A vip:80 TCP service for each (vip, limits) of rules, with its
    admission rules (None: none). The n-th (from 1) has a backend on port
    8080 for each PA format of pas: the k-th's DIP dip % (n, k), its PA
    pas[k - 1] % n."""
    return [sp.Service(vip, "tcp", 80,
                       [sp.Backend(dip % (n, k), 8080, pa % n) for k, pa in enumerate(pas, 1)],
                       limits=limits)
            for n, (vip, limits) in enumerate(rules, 1)]


def segment(src, vip, sport, flags, seq=1000, payload=b""):
    """A client's TCP segment to vip:80 as the router hands it to the mux
    (IPv4: DF, the IP id its port)."""
    if ":" in vip:
        ip = IPv6(src=src, dst=vip, hlim=64)
    else:
        ip = IP(src=src, dst=vip, id=sport & 0xffff, flags="DF")
    return bytes(Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) / ip /
                 TCP(sport=sport, dport=80, flags=flags, seq=seq) / payload)


def train(n, src, vip, sport, passed=None, refused=None, flags="S", seq=None, last=b""):
    """[(frame, verdict)]: n segments to vip, the i-th (from 0) from
    src % (i + 1) (src a format) or src(i) (a function), port sport + i,
    sequence number seq + i (None: 1000 for all); the last one carries the
    payload last. The first passed (None: all) are "fwd", the others
    refused."""
    addr = src if callable(src) else (lambda i: src % (i + 1))
    return [(segment(addr(i), vip, sport + i, flags, 1000 if seq is None else seq + i,
                     last if i == n - 1 else b""),
             "fwd" if passed is None or i < passed else refused)
            for i in range(n)]


def check_rules(case, stats, expect):
    """Each rule's counters in a mux's stats: expect is {vip: (rule,
    (checked, passed, would_deny, denied))}. Returns the stats' services
    by VIP."""
    by_vip = {s["vip"]: s for s in stats["services"]}
    for vip, (rule, want) in expect.items():
        c = by_vip[vip].get("limits", {}).get(rule, {})
        case.eq((c.get("checked"), c.get("passed"), c.get("would_deny"), c.get("denied")),
                want, "%s %s: (checked, passed, would_deny, denied)" % (vip, rule))
    return by_vip
