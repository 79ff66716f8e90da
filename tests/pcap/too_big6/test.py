# SPDX-License-Identifier: BSD-3-Clause
"""too_big6: path MTU once the outer header's size depends on the PA.

ICMPv6 packet too big (RFC 4443 3.2): to the client's MAC, from the VIP to
the client, type 2 code 0, the MTU the tunnel leaves (mtu - 40 to an IPv6
PA, mtu - 20 to an IPv4 one) but never below 1280, quoting the start of the
packet so that the error stays within 1280 bytes, checksum over the
pseudo-header. ICMP fragmentation needed for an IPv4 DF packet to an IPv6
PA reports mtu - 40. Outer fragments: IPv6 fragments (an IPv6 PA) or IPv4
ones (6in4), each within the MTU, one identification per datagram, put back
together exactly the encapsulation sp.check_encap() expects.
"""
import struct

import gen
from sluicetest import ipv6 as v6
from sluicetest import pcap as sp


def check_ptb(case, out, inp, tell, what):
    o, i = sp.Frame(out), sp.Frame(inp)
    orig = i.ip6
    case.eq(sp.mac_str(o.dst), sp.mac_str(i.src), what + ": ethernet dst = client frame's src")
    case.eq(sp.mac_str(o.src), sp.PORT_MAC, what + ": ethernet src = port MAC")
    if not case.check(o.ip6 is not None, "%s: reply is not IPv6", what):
        return
    ip = o.ip6
    quote = min(orig.total, 1280 - 48)
    case.eq((ip.src, ip.dst), (orig.dst, orig.src), what + ": from the VIP to the client")
    case.eq(ip.nh, v6.PROTO_ICMPV6, what + ": ICMPv6, no extension headers")
    case.eq(ip.total, 48 + quote, what + ": within 1280 bytes")
    case.eq(len(out), o.l2 + ip.total, what + ": frame length")
    case.eq((ip.l4[0], ip.l4[1]), (2, 0), what + ": type/code packet too big")
    case.eq(struct.unpack("!I", ip.l4[4:8])[0], tell, what + ": MTU")
    case.eq(ip.l4[8:], orig.data[:quote], what + ": the quote is the start of the packet")
    case.eq(v6.l4_csum6(ip.data), v6.l4_csum6_expected(ip.data), what + ": ICMPv6 checksum")


def check_icmp(case, out, inp, tell, what):
    o, i = sp.Frame(out), sp.Frame(inp)
    if not case.check(o.ip is not None and o.ip.proto == sp.PROTO_ICMP, "%s: not ICMP", what):
        return
    icmp = o.ip.payload
    case.eq((o.ip.src, o.ip.dst), (i.ip.dst, i.ip.src), what + ": from the VIP to the client")
    case.eq((icmp[0], icmp[1]), (3, 4), what + ": fragmentation needed")
    case.eq(struct.unpack("!H", icmp[6:8])[0], tell, what + ": next-hop MTU")
    case.eq(sp.l4_csum(o.ip.data, sp.PROTO_ICMP), sp.l4_csum_expected(o.ip.data, sp.PROTO_ICMP),
            what + ": ICMP checksum")


def reassemble(case, frags, mtu, tag):
    """Outer fragments (by family and id) put back together: frames of whole tunnel packets."""
    whole = []
    for (fam, fid), fl in sorted(frags.items()):
        for fr in fl:
            f = sp.Frame(fr)
            total = f.ip6.total if f.ip6 is not None else f.ip.total
            case.check(total <= mtu, "%s: fragment %s/%d of %d bytes > MTU", tag, fam, fid, total)
            if f.ip is not None:
                case.check(sp.ip_csum_ok(f.ip.header), "%s: fragment checksum", tag)
        try:
            dg = v6.ipv6_reassemble(fl) if fam == 6 else sp.ipv4_reassemble(fl)
        except ValueError as e:
            case.check(False, "%s: fragments %s/%d do not reassemble: %s", tag, fam, fid, e)
            continue
        whole.append(fl[0][:12] + (b"\x86\xdd" if fam == 6 else b"\x08\x00") + dg)
    return whole


def one_run(case, mtu):
    tag = "mtu%d" % mtu
    rows = gen.rows(mtu)
    cfg = sp.MuxConfig(gen.SERVICES, tunnel_address6=gen.TUNNEL6, mtu=mtu)
    run = case.run(cfg, [[r[1] for r in rows]], tag=tag)
    replies, encaps, frags = {}, {}, {}
    for fr in run.outputs[0]:
        f = sp.Frame(fr)
        if f.ip6 is not None and f.ip6.nh == v6.PROTO_FRAGMENT:
            frags.setdefault((6, f.ip6.frag[4]), []).append(fr)
        elif f.ip is not None and f.ip.proto in (4, 41) and (f.ip.mf or f.ip.frag):
            frags.setdefault((4, f.ip.id), []).append(fr)
        elif sp.inner_of(fr) is not None:
            encaps.setdefault(sp.inner_of(fr).src, []).append(fr)
        else:
            dst = f.ip6.dst if f.ip6 is not None else f.ip.dst
            replies.setdefault(dst, []).append(fr)
    n_frags = sum(len(v) for v in frags.values())
    for fr in reassemble(case, frags, mtu, tag):
        encaps.setdefault(sp.inner_of(fr).src, []).append(("frag", fr))
    expect, split = {}, 0
    for desc, fr, want, tell in rows:
        f = sp.Frame(fr)
        client = f.ip6.src if f.ip6 is not None else f.ip.src
        r, e = replies.get(client, []), encaps.get(client, [])
        what = "%s: %s" % (tag, desc)
        if want in ("ptb", "icmp"):
            if case.eq((len(r), len(e)), (1, 0), what + ": (replies, encapsulations)"):
                (check_ptb if want == "ptb" else check_icmp)(case, r[0], fr, tell, what)
            expect["too_big"] = expect.get("too_big", 0) + 1
            continue
        if not case.eq((len(r), len(e)), (0, 1), what + ": (replies, encapsulations)"):
            continue
        got = e[0]
        was_split = isinstance(got, tuple)
        case.eq(was_split, want == "frag", what + ": sent as outer fragments")
        split += was_split
        sp.check_encap(case, cfg, got[1] if was_split else got, fr, what)
    case.drops_exactly(run, expect, tag)
    case.eq(run.stats["ptb_sent"], sum(1 for r in rows if r[2] == "ptb"), tag + ": ptb_sent")
    case.eq(run.stats["too_big_sent"], sum(1 for r in rows if r[2] == "icmp"),
            tag + ": too_big_sent")
    case.eq(run.stats["frag_out"], split, tag + ": frag_out")
    case.eq(run.stats["frag_out_pkts"], n_frags, tag + ": frag_out_pkts")
    return {w: sum(1 for r in rows if r[2] == w) for w in ("fwd", "frag", "ptb", "icmp")}


def main():
    with sp.Case("too_big6") as case:
        for mtu in gen.MTUS:
            c = one_run(case, mtu)
            print("too_big6: mtu %d: %d forwarded whole, %d in outer fragments, %d packet too "
                  "big, %d frag needed" % (mtu, c["fwd"], c["frag"], c["ptb"], c["icmp"]))


if __name__ == "__main__":
    main()
