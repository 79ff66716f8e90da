# SPDX-License-Identifier: BSD-3-Clause
"""choice: how a service picks a backend beyond the five-tuple (gen.py).

run1 (two workers, mux in zone a): every connection of a client to an
affinity "client" service goes to one backend, the same for its TCP and UDP
services (same pool, same key); "client_protocol" keeps one backend per
client and protocol; the five-tuple spreads a client's connections; a
service with cross_zone off sends only to the mux's zone.

run2 (a fresh process, one worker): every flow of every service goes
where it went in run1: the keys are stateless, so muxes agree.

run3 (one worker, mux in zone b, one backend in maintenance): clients of the
other backends keep theirs; the clients of the one down move (redistribute)
or get a RST or an ICMP port unreachable from the VIP (reject), each checked
field by field, and an established segment a RST from its ack; zone b takes
ZONE's flows, and ZONE2, whose zone b is down, opens to zone a.
"""
import struct

import gen
from sluicetest import pcap as sp

ZONE_A, ZONE_B = {"10.6.0.1", "10.6.0.2"}, {"10.6.0.3", "10.6.0.4"}


def outcomes(case, cfg, run, rows, tag):
    """{row key: ("fwd", dip) | ("rst", frame) | ("icmp", frame)}."""
    by_id = {sp.Frame(f).ip.id: (f, k) for f, k in rows}
    got = {}
    for q in run.outputs:
        for fr in q:
            o = sp.Frame(fr)
            inner = sp.inner_of(fr)
            if inner is not None:
                f, key = by_id[inner.id]
                be = sp.check_encap(case, cfg, fr, f, "%s %s" % (tag, key))
                got[key] = ("fwd", be and be[0])
            elif o.ip.proto == sp.PROTO_TCP:
                dport = o.ip.ports()[1]
                got[(o.ip.src, "tcp", o.ip.dst, dport)] = ("rst", fr)
            else:
                q4 = sp.IPv4(o.ip.payload[8:])
                got[(q4.dst, "udp", q4.src, q4.ports()[0])] = ("icmp", fr)
    return got


def per_client(got, vips_protos):
    """{client: {dip}} over the flows of the given (vip, proto)s."""
    out = {}
    for (vip, proto, cl, _), (kind, dip) in got.items():
        if (vip, proto) in vips_protos and kind == "fwd":
            out.setdefault(cl, set()).add(dip)
    return out


def run1_checks(case, got, rows):
    case.eq(len(got), len(rows), "run1: every frame came out once")
    case.check(all(k == "fwd" for k, _ in got.values()), "run1: all forwarded")
    both = per_client(got, {(gen.CLIENT, "tcp"), (gen.CLIENT, "udp")})
    case.eq(sorted(c for c, d in both.items() if len(d) != 1), [],
            "run1: client affinity: clients on more than one backend (TCP and UDP together)")
    case.check(len({next(iter(d)) for d in both.values()}) == 4,
               "run1: client affinity still uses the whole pool")
    tcp = per_client(got, {(gen.CPROTO, "tcp")})
    udp = per_client(got, {(gen.CPROTO, "udp")})
    case.eq(sorted(c for c in tcp if len(tcp[c]) != 1 or len(udp[c]) != 1), [],
            "run1: client_protocol: clients on more than one backend in one protocol")
    case.check(any(tcp[c] != udp[c] for c in tcp),
               "run1: client_protocol: the protocol is part of the key (no client differs)")
    spread = per_client(got, {(gen.TUPLE, "tcp")})
    case.check(sum(1 for d in spread.values() if len(d) > 1) >= gen.CLIENTS // 2,
               "run1: the five-tuple spreads a client's connections: %s",
               sorted(len(d) for d in spread.values()))
    for vip in (gen.ZONE, gen.ZONE2):
        dips = set().union(*per_client(got, {(vip, "tcp")}).values())
        case.eq(dips, ZONE_A, "run1: %s (cross_zone off): the backends used" % vip)


def check_rst_of_ack(case, out, inp, what):
    """RFC 793's reset for a segment with ACK: seq = its ack, RST alone."""
    o, i = sp.Frame(out), sp.Frame(inp)
    ip, orig = o.ip, i.ip
    case.eq((ip.src, ip.dst, ip.total), (orig.dst, orig.src, 40), what + ": VIP to client, 40 B")
    sport, dport, seq, ack, off, flags = struct.unpack("!HHIIBB", ip.payload[:14])
    oack = struct.unpack("!I", orig.payload[8:12])[0]
    case.eq((sport, dport), orig.ports()[::-1], what + ": ports turned around")
    case.eq((seq, ack, off >> 4, flags), (oack, 0, 5, 0x04), what + ": seq = its ack, RST alone")
    case.check(sp.ip_csum_ok(ip.header) and sp.l4_csum_ok(ip.data, sp.PROTO_TCP),
               "%s: checksums", what)


def run3_checks(case, cfg, got, rows, first, ack_row):
    by_key = {k: f for f, k in rows}
    rsts = icmps = 0
    for (vip, proto, cl, sport), f in by_key.items():
        key = (vip, proto, cl, sport)
        kind, val = got.get(key, (None, None))
        was = first[key][1]
        what = "run3 %s" % (key,)
        if vip in (gen.CLIENT, gen.REJECT, gen.CPROTO, gen.TUPLE):
            if was != gen.DOWN:
                case.eq((kind, val), ("fwd", was), what + ": keeps its backend")
            elif vip == gen.REJECT and proto == "tcp":
                if case.eq(kind, "rst", what + ": rejected with a RST"):
                    sp.check_rst_reply(case, val, f, what)
                    rsts += 1
            elif vip == gen.REJECT:
                if case.eq(kind, "icmp", what + ": rejected with ICMP port unreachable"):
                    sp.check_icmp_reply(case, val, f, 3, what)
                    icmps += 1
            else:
                case.check(kind == "fwd" and val != gen.DOWN,
                           "%s: moved off the backend down: %s %s", what, kind, val)
        elif vip == gen.ZONE:
            case.check(kind == "fwd" and val in ZONE_B, "%s: zone b: %s %s", what, kind, val)
        else:
            case.check(kind == "fwd" and val in ZONE_A, "%s: zone b down, opens to a: %s %s",
                       what, kind, val)
    both = per_client(got, {(gen.CLIENT, "tcp"), (gen.CLIENT, "udp")})
    case.eq(sorted(c for c, d in both.items() if len(d) != 1), [],
            "run3: client affinity after the move: clients on more than one backend")
    f, key = ack_row
    kind, val = got.get(key, (None, None))
    if case.eq(kind, "rst", "run3: an established segment of a rejected client"):
        check_rst_of_ack(case, val, f, "run3 ack")
        rsts += 1
    case.check(rsts > 1 and icmps > 1, "run3: rejections happened (rst %d, icmp %d)", rsts, icmps)
    return rsts, icmps


def main():
    rows = gen.frames()
    with sp.Case("choice") as case:
        cfg = sp.MuxConfig(gen.services(), zone="a")
        frames = [f for f, _ in rows]
        run = case.run(cfg, [frames[0::2], frames[1::2]], tag="run1")
        case.eq(run.stats["workers"], 2, "run1: workers")
        case.drops_exactly(run, {}, "run1")
        first = outcomes(case, cfg, run, rows, "run1")
        run1_checks(case, first, rows)

        run = case.run(cfg, [frames], tag="run2")
        case.drops_exactly(run, {}, "run2")
        again = outcomes(case, cfg, run, rows, "run2")
        case.eq(sorted(k for k in first if again.get(k) != first[k]), [],
                "run2: flows that went elsewhere on a fresh process")

        down = sp.MuxConfig(gen.services(down=True), zone="b")
        victim = sorted(c for (v, p, c, _), (_, d) in first.items()
                        if v == gen.REJECT and p == "tcp" and d == gen.DOWN)[0]
        ack_key = (gen.REJECT, "tcp", victim, 30000)
        ack_row = (gen.frame(victim, gen.REJECT, "tcp", 30000, 60000, flags="A", seq=5000,
                             ack=777777), ack_key)
        run = case.run(down, [frames + [ack_row[0]]], tag="run3")
        got = outcomes(case, down, run, rows + [ack_row], "run3")
        rsts, icmps = run3_checks(case, down, got, rows, first, ack_row)
        case.drops_exactly(run, {}, "run3")
        case.eq((run.stats["unusable_rejected"], run.stats["unusable_rst_sent"],
                 run.stats["unusable_icmp_sent"]), (rsts + icmps, rsts, icmps),
                "run3: (unusable_rejected, rst sent, icmp sent)")


if __name__ == "__main__":
    main()
