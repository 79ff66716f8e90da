# SPDX-License-Identifier: BSD-3-Clause
"""limits: admission rules on SYN trains (gen.py), with exact counts per
rule; the RST and the ICMP administratively prohibited checked field by
field; monitor forwards all; the top talkers of a service; a flooded service's entries stop at its quota
while another service still gets its own.
"""

import gen
from sluicetest import pcap as sp
from sluicetest.limits import check_rules, segment


def classify(fr):
    """(client, client port) an output answers or carries, and its kind."""
    f = sp.Frame(fr)
    ip = sp.inner_of(fr) or f.ip
    if ip.proto == sp.PROTO_ICMP:
        q = sp.IPv4(ip.payload[8:])
        return (q.src, q.ports()[0]), "icmp"
    if f.ip.proto == sp.PROTO_IPIP:
        return (ip.src, ip.ports()[0]), "fwd"
    return (ip.dst, ip.ports()[1]), "rst"


def rules_case(case):
    rows = gen.frames()
    cfg = sp.MuxConfig(gen.SERVICES)
    run = case.run(cfg, [[f for f, _ in rows]])
    counts = sp.check_verdicts(case, cfg, rows, run.outputs[0], classify,
                               {"rst": sp.check_rst_reply,
                                "icmp": lambda c, o, i, w: sp.check_icmp_reply(c, o, i, 13, w)})
    case.eq(counts.get("fwd"), gen.FORWARDED, "forwarded")
    case.eq(counts.get("rst"), gen.RSTS, "RSTs")
    case.eq(counts.get("icmp"), gen.ICMPS, "ICMP replies")
    case.drops_exactly(run, {"limit_refused": gen.DROPS}, "limits")
    case.eq(run.stats["limit_rst_sent"], gen.RSTS, "limit_rst_sent")
    case.eq(run.stats["limit_icmp_sent"], gen.ICMPS, "limit_icmp_sent")
    case.eq(run.stats["limit_denied"], gen.RSTS + gen.ICMPS + gen.DROPS, "limit_denied")
    case.eq(run.stats["limit_would_deny"], 15, "limit_would_deny")
    case.eq(run.stats["limit_checked"], sum(e[1][0] for e in gen.EXPECT.values()),
            "limit_checked")
    by_vip = check_rules(case, run.stats, gen.EXPECT)
    case.check("limits" not in by_vip[gen.FREE], "a service without rules reports none")
    top = [(t["src"], t["count"], t["err"]) for t in by_vip[gen.TOP].get("top", [])]
    case.eq(top[:3], [(s, n, 0) for s, n in gen.TALKERS],
            "TOP: the top talkers, exact counts, no error")
    case.check(len(top) == 5 and all(c - e <= 1 for _, c, e in top[3:]),
               "TOP: the others are one-connection clients within their error: %s", top[3:])
    case.eq((by_vip[gen.CONNS]["live"], by_vip[gen.CONNS]["held"]),
            (gen.CONNS_LIVE, gen.CONNS_HELD), "CONNS: (live, held): FIN releases")


def quota_case(case):
    """One service floods (30 new flows against a quota of 10 entries): its
    flows beyond the quota are forwarded without an entry, and another
    service still gets entries. Each flood flow then sends an ACK: those
    without an entry miss again, but they are not new flows."""
    rows = [sp.Frame(segment("100.70.0.%d" % (i + 1), gen.FREE, 47000 + i, "S")).raw
            for i in range(30)]
    rows += [segment("100.71.0.%d" % (i + 1), gen.RATE, 48000 + i, "S") for i in range(5)]
    rows += [segment("100.70.0.%d" % (i + 1), gen.FREE, 47000 + i, "A") for i in range(30)]
    cfg = sp.MuxConfig(gen.SERVICES, conn_table={"entries": 1024, "service_share": 1})
    run = case.run(cfg, [rows], tag="quota")
    case.eq(len(run.outputs[0]), 65, "quota: everything forwarded")
    for out, inp in zip(run.outputs[0], rows):
        sp.check_encap(case, cfg, out, inp, "quota")
    case.eq(run.stats["conn_quota"], 20, "quota: flows past the service's 10 entries")
    case.eq(run.stats["conn_new"], 35, "quota: all are new connections, counted once")
    case.eq(run.stats["conn_hit"], 10, "quota: the ACKs of the flows with an entry hit")
    case.eq(run.stats["conn_live"], 15, "quota: 10 entries of the flood, 5 of the other")
    by_vip = {s["vip"]: s for s in run.stats["services"]}
    case.eq(by_vip[gen.FREE]["held"], 10, "quota: flooded service holds its quota")
    case.eq(by_vip[gen.FREE]["new_conns"], 30, "quota: the flooded service's new connections")
    case.eq(by_vip[gen.RATE]["held"], 5, "quota: the other service got its entries")
    case.drops_exactly(run, {}, "quota")


def main():
    with sp.Case("limits") as case:
        rules_case(case)
        quota_case(case)


if __name__ == "__main__":
    main()
