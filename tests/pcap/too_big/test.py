# SPDX-License-Identifier: BSD-3-Clause
"""too_big: a DF packet that no longer fits the MTU once encapsulated gets an
ICMP fragmentation-needed back to the client, never silent loss.

With mux.mtu = 1500, every DF packet of 1481..1500 bytes must produce exactly
one reply and no encapsulation: back to the client's MAC (and VLAN), from the
VIP to the client, type 3 code 4, next-hop MTU 1480, quoting the start of the
original datagram (at most 548 bytes, so the reply stays within 576), with
valid IP and ICMP checksums. 1480 bytes fits and is forwarded; an oversize
packet without DF is dropped as too_big_no_df.
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
        replies, encaps = {}, {}
        for fr in run.outputs[0]:
            f = sp.Frame(fr)
            if f.ip is not None and f.ip.proto == sp.PROTO_IPIP:
                encaps.setdefault(sp.inner_of(fr).src, []).append(fr)
            elif f.ip is not None and f.ip.proto == sp.PROTO_ICMP:
                replies.setdefault(f.ip.dst, []).append(fr)
            else:
                case.check(False, "unexpected output frame %s", fr.hex()[:80])
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
            elif want == "fwd":
                if case.eq((len(r), len(e)), (0, 1), desc + ": (replies, encapsulations)"):
                    sp.check_encap(case, cfg, e[0], fr, desc)
                    case.check(sp.Frame(e[0]).ip.total <= gen.MTU, "%s: outer %d > MTU", desc,
                               sp.Frame(e[0]).ip.total)
            else:
                case.eq((len(r), len(e)), (0, 0), desc + ": (replies, encapsulations)")
                expect[want] = expect.get(want, 0) + 1
        case.drops_exactly(run, expect, "too_big")
        case.eq(run.stats["too_big_sent"], expect["too_big"], "too_big_sent")
        case.eq(run.stats["fwd_pkts"], 2, "fwd_pkts")
        print("too_big: mtu %d, %d frag-needed replies (inner %d..%d bytes, mtu field %d, quote "
              "<= %d), 1480 forwarded, %d without DF dropped" % (
                  gen.MTU, len(sizes), min(sizes or [0]), max(sizes or [0]), gen.MTU - 20,
                  QUOTE_MAX, expect.get("too_big_no_df", 0)))


if __name__ == "__main__":
    main()
