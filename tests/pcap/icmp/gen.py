# SPDX-License-Identifier: BSD-3-Clause
"""Input for the icmp case: ICMP errors about flows to a VIP.

A router on the way back to a client (client <- VIP traffic comes from the
backends by DSR) sends its error to the VIP, quoting the VIP -> client packet.
The mux must deliver it to the backend that owns the flow.

run1_frames(): the first packet of every "seen" flow, then, shuffled:
  - errors about every seen flow (frag-needed with an MTU, host unreachable,
    time exceeded; port unreachable for UDP), with quotes of several lengths;
  - errors about "unseen" flows, whose own packets never come;
  - errors quoting a source that is not a VIP, or a VIP port with no service;
  - errors quoting too little (the IP header only, or the header and 2 bytes)
    or quoting an ICMP packet.
run2_frames(): the first packets of the unseen flows, for a second mux.

    /usr/bin/python3 gen.py DIR     writes DIR/icmp_run1.pcap, DIR/icmp_run2.pcap
"""
import os
import random
import sys

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from sluicetest import pcap as sp

VIP = "192.0.2.40"
NOT_VIP = "192.0.2.99"
SERVICES = [
    sp.Service(VIP, "tcp", 80, [
        sp.Backend("10.4.0.1", 8080, "10.0.40.1"),
        sp.Backend("10.4.0.2", 8080, "10.0.40.2"),
        sp.Backend("10.4.0.3", 8081, "10.0.40.3"),
    ]),
    sp.Service(VIP, "udp", 53, [
        sp.Backend("10.4.0.1", 5353, "10.0.40.1"),
        sp.Backend("10.4.0.4", 53, "10.0.40.4"),
    ]),
]
PORT = {sp.PROTO_TCP: 80, sp.PROTO_UDP: 53}

# (type, code, mtu) of the errors; UDP flows also get port unreachable.
FRAG_NEEDED = (3, 4, 1400)
HOST_UNREACH = (3, 1, 0)
PORT_UNREACH = (3, 3, 0)
TIME_EXCEEDED = (11, 0, 0)
QUOTE_LENS = [28, 40, 68, 548]   # header + 8 bytes (RFC 792) ... RFC 1812 576-byte error

N_SEEN_TCP, N_SEEN_UDP, N_UNSEEN_TCP, N_UNSEEN_UDP = 40, 10, 30, 8


def eth():
    return Ether(src="02:00:00:00:0e:01", dst=sp.ROUTER_MAC)


def flows(rnd):
    out, seen = [], set()
    for n, proto in ((N_SEEN_TCP, sp.PROTO_TCP), (N_SEEN_UDP, sp.PROTO_UDP),
                     (N_UNSEEN_TCP, sp.PROTO_TCP), (N_UNSEEN_UDP, sp.PROTO_UDP)):
        k = 0
        while k < n:
            f = ("198.51.100.%d" % rnd.randint(1, 254), rnd.randint(1024, 65535), proto)
            if f not in seen:
                seen.add(f)
                out.append(f)
                k += 1
    a = N_SEEN_TCP + N_SEEN_UDP
    return out[:a], out[a:]


def first_packet(f, ident):
    client, cport, proto = f
    ip = IP(src=client, dst=VIP, id=ident, flags="DF")
    l4 = TCP(sport=cport, dport=80, flags="S") if proto == sp.PROTO_TCP else \
        UDP(sport=cport, dport=53) / Raw(b"query")
    return bytes(eth() / ip / l4)


def quoted(client, cport, proto, qlen, src=VIP, sport=None, qproto=None):
    """The start of a VIP -> client packet, as a router quotes it."""
    sport = PORT[proto] if sport is None else sport
    ip = IP(src=src, dst=client, ttl=1, id=7, flags="DF")
    if qproto == sp.PROTO_ICMP:
        l4 = ICMP(type=0)
    elif proto == sp.PROTO_TCP:
        l4 = TCP(sport=sport, dport=cport, flags="PA", seq=123456)
    else:
        l4 = UDP(sport=sport, dport=cport)
    return bytes(ip / l4 / Raw(b"\xab" * 1400))[:qlen]


def error(router, kind, quote, ident, dst=VIP):
    t, c, mtu = kind
    icmp = ICMP(type=t, code=c, nexthopmtu=mtu) if (t, c) == (3, 4) else ICMP(type=t, code=c)
    return bytes(eth() / IP(src=router, dst=dst, id=ident, ttl=60) / icmp / Raw(quote))


def build():
    """Returns a dict: run1 (frames), run2 (frames), and, for the test,
    seen/unseen flow lists, errors [(flow, frame)], bad [(reason, frame)]."""
    rnd = random.Random(4040)
    seen, unseen = flows(rnd)
    ident = iter(range(1, 60000))
    run1 = [first_packet(f, next(ident)) for f in seen]
    errors, bad, late = [], [], []
    for fi, f in enumerate(seen + unseen):
        client, cport, proto = f
        kinds = [FRAG_NEEDED, HOST_UNREACH, TIME_EXCEEDED]
        if proto == sp.PROTO_UDP:
            kinds.append(PORT_UNREACH)
        if f in unseen:
            kinds = [kinds[fi % len(kinds)]]
        for ki, kind in enumerate(kinds):
            q = quoted(client, cport, proto, QUOTE_LENS[(fi + ki) % len(QUOTE_LENS)])
            errors.append((f, error("203.0.113.%d" % (1 + fi % 50), kind, q, next(ident))))
    for k in range(5):
        client, cport, proto = seen[k]
        bad.append(("no_service", error("203.0.113.200", HOST_UNREACH,
                                         quoted(client, cport, proto, 40, src=NOT_VIP),
                                         next(ident), dst=NOT_VIP)))
    # Forged: sent to the VIP but quoting a packet the VIP did not send.
    for k in range(3):
        client, cport, proto = seen[k]
        bad.append(("icmp_quote", error("203.0.113.204", HOST_UNREACH,
                                        quoted(client, cport, proto, 40, src=NOT_VIP),
                                        next(ident))))
    for k in range(2):
        client, cport, proto = seen[k]
        bad.append(("no_service", error("203.0.113.201", FRAG_NEEDED,
                                         quoted(client, cport, proto, 40, sport=8080),
                                         next(ident))))
    for k, qlen in enumerate([20, 20, 20, 22]):
        client, cport, proto = seen[k]
        bad.append(("icmp_quote", error("203.0.113.202", TIME_EXCEEDED,
                                        quoted(client, cport, proto, qlen), next(ident))))
    client, cport, proto = seen[5]
    bad.append(("icmp_quote", error("203.0.113.203", HOST_UNREACH,
                                    quoted(client, cport, proto, 28, qproto=sp.PROTO_ICMP),
                                    next(ident))))
    late = [fr for _, fr in errors] + [fr for _, fr in bad]
    rnd.shuffle(late)
    run1 += late
    run2 = [first_packet(f, 50000 + i) for i, f in enumerate(unseen)]
    return {"run1": run1, "run2": run2, "seen": seen, "unseen": unseen,
            "errors": errors, "bad": bad}


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    b = build()
    sp.write_pcap(os.path.join(out, "icmp_run1.pcap"), b["run1"])
    sp.write_pcap(os.path.join(out, "icmp_run2.pcap"), b["run2"])
