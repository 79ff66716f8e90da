# SPDX-License-Identifier: BSD-3-Clause
"""vip_probe: the mux answers the manager's VIP probes itself.

A probe is IP-in-IP from a configured prober (mux.probers) to the tunnel
address, around an ICMP echo request to a VIP with the probe payload. The
answer, checked field by field: not encapsulated; Ethernet to next_hop_mac
from the port MAC, VLAN tag as received; IPv4 from the VIP to the inner
source, total length of the inner packet, no padding, valid checksum; ICMP
echo reply with the request's id and sequence, the magic and nonce as sent,
then the mux's flow-table version (8 bytes, big-endian), then the rest of
the payload as sent; valid ICMP checksum. Anything else keeps its drop
reason (tunnel_inbound, or no_service for a VIP the mux does not have).
An IPv6 probe (inside 6in6, or 6in4) is answered the same way in ICMPv6:
to next_hop_mac6, from the IPv6 VIP, hop limit 64, type 129, the version in
the same place, the checksum over the pseudo-header.
Run twice: with probers of both families, then without (nothing is answered).
"""
import struct

import gen
from sluicetest import ipv6 as v6
from sluicetest import pcap as sp


def request_inner(fr):
    """The inner packet of a request frame: an IPv4 or an IPv6, or None."""
    f = sp.Frame(fr)
    outer = f.ip if f.ip is not None else f.ip6
    b = outer.payload
    if not b:
        return None
    return sp.IPv4(b) if b[0] >> 4 == 4 else v6.IPv6(b)


def check_answer(case, out, inp, version, what):
    o, i, q = sp.Frame(out), sp.Frame(inp), request_inner(inp)
    is6 = isinstance(q, v6.IPv6)
    case.eq(sp.mac_str(o.dst), gen.NEXT_HOP6 if is6 else gen.NEXT_HOP,
            what + ": ethernet dst = next hop (of the family)")
    case.eq(sp.mac_str(o.src), sp.PORT_MAC, what + ": ethernet src = port MAC")
    case.eq(o.vlan, i.vlan, what + ": VLAN tag as received")
    ip = o.ip6 if is6 else o.ip
    if not case.check(ip is not None and (ip.nh == v6.PROTO_ICMPV6 if is6
                                          else ip.proto == sp.PROTO_ICMP),
                      "%s: not plain ICMP or ICMPv6 (still encapsulated?)", what):
        return
    case.eq((ip.src, ip.dst), (q.dst, q.src), what + ": from the VIP to the inner source")
    case.eq(ip.total, q.total, what + ": IP length = the inner packet's")
    case.eq(len(out), o.l2 + ip.total, what + ": frame length (no padding)")
    if is6:
        case.eq(ip.hlim, 64, what + ": hop limit")
        a, r = ip.l4, q.l4
    else:
        case.eq(ip.ttl, 64, what + ": TTL")
        case.check(sp.ip_csum_ok(ip.header), "%s: IP checksum invalid", what)
        a, r = ip.payload, q.payload
    case.eq((a[0], a[1]), (129 if is6 else 0, 0), what + ": type/code = echo reply")
    case.eq(a[4:8], r[4:8], what + ": id and sequence")
    case.eq(a[8:32], r[8:32], what + ": magic and nonce as sent")
    case.eq(a[32:40], struct.pack("!Q", version), what + ": version bytes = %d" % version)
    case.eq(a[40:], r[40:], what + ": the rest of the payload")
    if is6:
        case.eq(v6.l4_csum6(ip.data), v6.l4_csum6_expected(ip.data),
                what + ": ICMPv6 checksum")
    else:
        case.check(sp.l4_csum_ok(ip.data, sp.PROTO_ICMP), "%s: ICMP checksum %#06x, want %#06x",
                   what, sp.l4_csum(ip.data, sp.PROTO_ICMP),
                   sp.l4_csum_expected(ip.data, sp.PROTO_ICMP))


def one_run(case, rows, probers, col):
    tag = "probers" if probers else "no_probers"
    cfg = sp.MuxConfig(gen.SERVICES, tunnel_address=gen.TUNNEL, next_hop_mac=gen.NEXT_HOP,
                       probers=probers, tunnel_address6=gen.TUNNEL6,
                       next_hop_mac6=gen.NEXT_HOP6)
    run = case.run(cfg, [[f for _, f, _, _ in rows]], tag=tag)
    version = run.stats["version"]
    by_dst = {}
    for fr in run.outputs[0]:
        f = sp.Frame(fr)
        if f.ip is not None or f.ip6 is not None:
            by_dst.setdefault((f.ip or f.ip6).dst, []).append(fr)
    expect, answers = {}, 0
    for r in rows:
        desc, fr, want = r[0], r[1], r[col]
        inner = request_inner(fr)
        got = by_dst.get(inner.src if inner is not None else None, [])
        what = "%s: %s" % (tag, desc)
        if want == "answer":
            if case.eq(len(got), 1, what + ": answers"):
                check_answer(case, got[0], fr, version, what)
            answers += 1
        else:
            case.eq(len(got), 0, what + ": answers")
            expect[want] = expect.get(want, 0) + 1
    case.eq(len(run.outputs[0]), answers, tag + ": frames out")
    case.eq(run.stats["vip_probes"], answers, tag + ": vip_probes")
    case.drops_exactly(run, expect, tag)
    return answers, version


def main():
    rows = gen.rows()
    with sp.Case("vip_probe") as case:
        a, v = one_run(case, rows, ["10.255.0.250", gen.PROBER, gen.PROBER6], 2)
        b, _ = one_run(case, rows, None, 3)
        print("vip_probe: %d of %d rows answered with version %d; without probers %d"
              % (a, len(rows), v, b))


if __name__ == "__main__":
    main()
