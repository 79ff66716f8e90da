# SPDX-License-Identifier: BSD-3-Clause
"""too_big: a DF packet that no longer fits the MTU once encapsulated gets an
ICMP fragmentation-needed back to the client, never silent loss.

With mux.mtu = 1500, every DF packet of 1481..1500 bytes must produce exactly
one reply and no encapsulation: back to the client's MAC (and VLAN), from the
VIP to the client, type 3 code 4, next-hop MTU 1480, quoting the start of the
original datagram (at most 548 bytes, so the reply stays within 576), with
valid IP and ICMP checksums. 1480 bytes fits and is forwarded. An oversize
packet without DF is forwarded too, its OUTER datagram in fragments (RFC
2003; the agent reassembles): each fragment within the MTU, every one but
the last a multiple of 8 bytes with MF set, one id for the datagram, valid
header checksums; put back together they must be exactly the encapsulation
check_encap() expects (outer DF clear, as the client's).
"""
import struct

import gen
from sluicetest import pcap as sp

QUOTE_MAX = 576 - 20 - 8


def check_reply(case, out, inp, what):
    o, i = sp.Frame(out), sp.Frame(inp)
    orig = i.ip
    case.eq(sp.mac_str(o.dst), sp.mac_str(i.src), what + ": ethernet dst = client frame's src")
    case.eq(sp.mac_str(o.src), sp.PORT_MAC, what + ": ethernet src = port MAC")
    case.eq(o.vlan, i.vlan, what + ": VLAN tag as received")
    if not case.check(o.ip is not None, "%s: reply is not IPv4", what):
        return
    ip = o.ip
    quote = min(orig.total, QUOTE_MAX)
    case.eq((ip.version, ip.ihl, ip.proto), (4, 5, sp.PROTO_ICMP), what + ": IPv4/ICMP header")
    case.eq(ip.src, orig.dst, what + ": IP src = VIP")
    case.eq(ip.dst, orig.src, what + ": IP dst = client")
    case.eq(ip.total, 28 + quote, what + ": IP total length")
    case.eq(len(out), o.l2 + ip.total, what + ": frame length (no trailing bytes)")
    case.check(ip.ttl > 0 and not ip.mf and ip.frag == 0, "%s: TTL 0 or fragment", what)
    case.check(sp.ip_csum_ok(ip.header), "%s: IP checksum invalid", what)
    icmp = ip.payload
    case.eq((icmp[0], icmp[1]), (3, 4), what + ": ICMP type/code (frag needed)")
    case.eq(struct.unpack("!H", icmp[4:6])[0], 0, what + ": ICMP unused field")
    case.eq(struct.unpack("!H", icmp[6:8])[0], gen.MTU - 20, what + ": next-hop MTU")
    case.check(sp.l4_csum_ok(ip.data, sp.PROTO_ICMP), "%s: ICMP checksum invalid", what)
    case.eq(len(icmp) - 8, quote, what + ": quote length")
    case.check(icmp[8:] == orig.data[:quote], "%s: quote is not the start of the original", what)


def main():
    rows = gen.rows()
    with sp.Case("too_big") as case:
        cfg = sp.MuxConfig(gen.SERVICES, mtu=gen.MTU)
        run = case.run(cfg, [[f for _, f, _ in rows]])
        replies, encaps, frags = {}, {}, {}
        for fr in run.outputs[0]:
            f = sp.Frame(fr)
            if f.ip is not None and f.ip.proto == sp.PROTO_IPIP and (f.ip.mf or f.ip.frag):
                frags.setdefault(f.ip.id, []).append(fr)
            elif f.ip is not None and f.ip.proto == sp.PROTO_IPIP:
                encaps.setdefault(sp.inner_of(fr).src, []).append(fr)
            elif f.ip is not None and f.ip.proto == sp.PROTO_ICMP:
                replies.setdefault(f.ip.dst, []).append(fr)
            else:
                case.check(False, "unexpected output frame %s", fr.hex()[:80])
        # The fragments of each datagram, put back together, as the agent does.
        n_frags = sum(len(v) for v in frags.values())
        for fid, fl in sorted(frags.items()):
            for fr in fl:
                fo = sp.Frame(fr)
                case.check(fo.ip.total <= gen.MTU, "fragment id %d: %d bytes > MTU", fid,
                           fo.ip.total)
                case.check(sp.ip_csum_ok(fo.ip.header), "fragment id %d: bad checksum", fid)
                case.check(not fo.ip.df and fo.vlan is None, "fragment id %d: DF or tag", fid)
                case.eq(len(fr), 14 + fo.ip.total, "fragment id %d: frame length" % fid)
            try:
                whole = fl[0][:14] + sp.ipv4_reassemble(fl)
            except ValueError as e:
                case.check(False, "fragments of id %d do not reassemble: %s", fid, e)
                continue
            encaps.setdefault(sp.inner_of(whole).src, []).append(whole)
        expect = {}
        sizes = []
        for desc, fr, want in rows:
            client = sp.Frame(fr).ip.src
            r, e = replies.get(client, []), encaps.get(client, [])
            if want == "icmp":
                if case.eq((len(r), len(e)), (1, 0), desc + ": (replies, encapsulations)"):
                    check_reply(case, r[0], fr, desc)
                    sizes.append(sp.Frame(fr).ip.total)
                expect["too_big"] = expect.get("too_big", 0) + 1
            elif want in ("fwd", "frag"):
                if case.eq((len(r), len(e)), (0, 1), desc + ": (replies, encapsulations)"):
                    sp.check_encap(case, cfg, e[0], fr, desc)
                    big = sp.Frame(e[0]).ip.total > gen.MTU
                    case.eq(big, want == "frag", desc + ": sent as outer fragments")
            else:
                case.eq((len(r), len(e)), (0, 0), desc + ": (replies, encapsulations)")
                expect[want] = expect.get(want, 0) + 1
        case.drops_exactly(run, expect, "too_big")
        case.eq(run.stats["too_big_sent"], expect["too_big"], "too_big_sent")
        n_split = sum(1 for r in rows if r[2] == "frag")
        case.eq(run.stats["fwd_pkts"], sum(1 for r in rows if r[2] in ("fwd", "frag")),
                "fwd_pkts")
        case.eq(run.stats["frag_out"], n_split, "frag_out")
        case.eq(run.stats["frag_out_pkts"], n_frags, "frag_out_pkts")
        case.eq(len(frags), n_split, "fragmented datagrams (distinct ids)")
        print("too_big: mtu %d, %d frag-needed replies (inner %d..%d bytes, mtu field %d, quote "
              "<= %d), %d without DF sent in %d outer fragments that reassemble to the "
              "encapsulation" % (gen.MTU, len(sizes), min(sizes or [0]), max(sizes or [0]),
                                 gen.MTU - 20, QUOTE_MAX, n_split, n_frags))


if __name__ == "__main__":
    main()
