# SPDX-License-Identifier: BSD-3-Clause
"""Input for the choice case (lb_choice.h): services that choose a backend
by client, by client and protocol, by the five-tuple, with the reject policy,
and keeping flows in the mux's zone.

    CLIENT   192.0.2.60 tcp and udp, affinity "client", the same four backends
    CPROTO   192.0.2.61 tcp and udp, affinity "client_protocol"
    TUPLE    192.0.2.62 tcp, the five-tuple (the default): a client spreads
    REJECT   192.0.2.63 tcp, affinity "client", on_unusable "reject"
             192.0.2.63 udp, the five-tuple, on_unusable "reject"
    ZONE     192.0.2.64 tcp, cross_zone false: two backends in zone a, two in b
    ZONE2    192.0.2.65 tcp, cross_zone false, as ZONE; down(): its zone b
             backends are in maintenance, so a mux in zone b opens to zone a

CLIENTS clients each open CONNS TCP connections (a SYN each) to every TCP
service and send CONNS UDP flows to every UDP service; every frame has its
own IP id, so the test matches outputs to inputs.

    /usr/bin/python3 gen.py DIR     writes DIR/choice.pcap
"""
import os
import sys

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

CLIENT, CPROTO, TUPLE, REJECT, ZONE, ZONE2 = ("192.0.2.60", "192.0.2.61", "192.0.2.62",
                                              "192.0.2.63", "192.0.2.64", "192.0.2.65")
CLIENTS, CONNS = 40, 4
DOWN = "10.6.0.2"  # the backend down() puts in maintenance


def pool(zones=None):
    z = zones or [None] * 4
    return [sp.Backend("10.6.0.%d" % (i + 1), 8080, "10.0.60.%d" % (i + 1), zone=z[i])
            for i in range(4)]


def services(down=False):
    """The table; down: DOWN in maintenance, and ZONE2's zone b backends."""
    def pl(zones=None, maint=()):
        bs = pool(zones)
        for b in bs:
            if (down and b.dip == DOWN and zones is None) or b.dip in maint:
                b.state = "maint"
        return bs

    zb = ("10.6.0.3", "10.6.0.4") if down else ()
    zones = ["a", "a", "b", "b"]
    return [
        sp.Service(CLIENT, "tcp", 80, pl(), affinity="client"),
        sp.Service(CLIENT, "udp", 80, pl(), affinity="client"),
        sp.Service(CPROTO, "tcp", 80, pl(), affinity="client_protocol"),
        sp.Service(CPROTO, "udp", 80, pl(), affinity="client_protocol"),
        sp.Service(TUPLE, "tcp", 80, pl()),
        sp.Service(REJECT, "tcp", 80, pl(), affinity="client", on_unusable="reject"),
        sp.Service(REJECT, "udp", 80, pl(), on_unusable="reject"),
        sp.Service(ZONE, "tcp", 80, pl(zones), cross_zone=False),
        sp.Service(ZONE2, "tcp", 80, pl(zones, zb), cross_zone=False),
    ]


def client(i):
    return "198.51.100.%d" % (i + 1)


def frame(src, vip, proto, sport, ident, flags="S", seq=1000, ack=0):
    ip = IP(src=src, dst=vip, id=ident, flags="DF")
    if proto == "tcp":
        l4 = TCP(sport=sport, dport=80, flags=flags, seq=seq, ack=ack)
    else:
        l4 = UDP(sport=sport, dport=80) / Raw(b"choice %d" % ident)
    return bytes(Ether(src=sp.CLIENT_MAC, dst=sp.ROUTER_MAC) / ip / l4)


def frames():
    """[(frame, (vip, proto, client, sport))], every IP id distinct."""
    out, ident = [], 1
    for svc in services():
        for c in range(CLIENTS):
            for k in range(CONNS):
                sport = 20000 + c * CONNS + k
                out.append((frame(client(c), svc.vip, svc.proto, sport, ident),
                            (svc.vip, svc.proto, client(c), sport)))
                ident += 1
    return out


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(d, "choice.pcap"), [f for f, _ in frames()])


if __name__ == "__main__":
    main()
