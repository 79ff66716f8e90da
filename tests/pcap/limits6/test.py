# SPDX-License-Identifier: BSD-3-Clause
"""limits6: admission rules on IPv6 services (gen.py), with exact counts
per rule; per-source buckets by /64 (the default) and by /128; the IPv6 RST
and the ICMPv6 destination unreachable (administratively prohibited)
checked field by field; monitor forwards all.
"""

import gen
from sluicetest import ipv6 as v6
from sluicetest import pcap as sp
from sluicetest.limits import check_rules


def check_l2(case, o, i, what):
    case.eq(sp.mac_str(o.dst), sp.mac_str(i.src), what + ": ethernet dst = client's")
    case.eq(sp.mac_str(o.src), sp.PORT_MAC, what + ": ethernet src = port MAC")


def check_rst6(case, out, inp, what):
    o, i = sp.Frame(out), sp.Frame(inp)
    orig, ip = i.ip6, o.ip6
    check_l2(case, o, i, what)
    case.eq((ip.version, ip.nh, ip.plen, ip.hlim), (6, sp.PROTO_TCP, 20, 64),
            what + ": IPv6 header, TCP, 20 bytes, hop limit 64")
    case.eq((ip.src, ip.dst), (orig.dst, orig.src), what + ": from the VIP to the client")
    case.eq(len(out), 14 + 60, what + ": frame length")
    sp.check_rst_tcp(case, ip.l4, orig.l4, orig.total - orig.l4_off - (orig.l4[12] >> 4) * 4,
                     what)
    case.eq(v6.l4_csum6(ip.data), v6.l4_csum6_expected(ip.data), what + ": TCP checksum")


def check_icmp6(case, out, inp, what):
    o, i = sp.Frame(out), sp.Frame(inp)
    orig, ip = i.ip6, o.ip6
    check_l2(case, o, i, what)
    case.eq((ip.nh, ip.hlim), (v6.PROTO_ICMPV6, 64), what + ": ICMPv6, hop limit 64")
    case.eq((ip.src, ip.dst), (orig.dst, orig.src), what + ": from the VIP to the client")
    case.eq(ip.total, 48 + orig.total, what + ": quotes the whole SYN")
    case.eq(len(out), 14 + ip.total, what + ": frame length")
    case.eq((ip.l4[0], ip.l4[1]), (1, 1),
            what + ": type 1 code 1 (communication administratively prohibited)")
    case.eq(ip.l4[4:8], b"\0\0\0\0", what + ": unused word")
    case.eq(ip.l4[8:], orig.data, what + ": the quote is the client's packet")
    case.eq(v6.l4_csum6(ip.data), v6.l4_csum6_expected(ip.data), what + ": ICMPv6 checksum")


def classify(fr):
    """(client, client port) the output answers or carries, and its kind."""
    f = sp.Frame(fr)
    if f.ip is not None:  # 6in4: the client's packet inside
        inner = v6.IPv6(f.ip.payload)
        return (inner.src, inner.ports()[0]), "fwd"
    ip = f.ip6
    if ip.nh == v6.PROTO_ICMPV6:
        q = v6.IPv6(ip.l4[8:])
        return (q.src, q.ports()[0]), "icmp"
    return (ip.dst, ip.ports()[1]), "rst"


def main():
    with sp.Case("limits6") as case:
        rows = gen.frames()
        cfg = sp.MuxConfig(gen.SERVICES)
        run = case.run(cfg, [[f for f, _ in rows]])
        counts = sp.check_verdicts(case, cfg, rows, run.outputs[0], classify,
                                   {"rst": check_rst6, "icmp": check_icmp6})
        case.eq((counts.get("fwd"), counts.get("rst"), counts.get("icmp")),
                (gen.FORWARDED, gen.RSTS, gen.ICMPS), "(forwarded, RSTs, ICMPv6 replies)")
        case.drops_exactly(run, {"limit_refused": gen.DROPS}, "limits6")
        case.eq((run.stats["limit_rst_sent"], run.stats["limit_icmp_sent"]),
                (gen.RSTS, gen.ICMPS), "(limit_rst_sent, limit_icmp_sent)")
        case.eq(run.stats["limit_denied"], gen.RSTS + gen.ICMPS + gen.DROPS, "limit_denied")
        case.eq(run.stats["limit_would_deny"], 5, "limit_would_deny")
        by_vip = check_rules(case, run.stats, gen.EXPECT)
        case.eq((by_vip[gen.CONNS]["live"], by_vip[gen.CONNS]["held"]), (5, 5),
                "CONNS: 5 live entries, the refused ones none")
        held = sum(s["held"] for s in run.stats["services"])
        case.check(held > 0 and run.stats["conn_live"] == held,
                   "conn_live %d counts the IPv6 table's entries (the services hold %d)",
                   run.stats["conn_live"], held)


if __name__ == "__main__":
    main()
