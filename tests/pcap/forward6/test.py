# SPDX-License-Identifier: BSD-3-Clause
"""forward6: the four tunnel forms at the mux, every field checked
(sp.check_encap): the outer header follows the backend's PA (4in4, 4in6,
6in4, 6in6), traffic class and ECN are copied, the outer hop limit is
tunnel_ttl, an outer IPv6 header carries a flow label that stays the same
for every packet of a flow; the inner packet changes only in destination,
hop limit or TTL and the checksums over it. ICMP and ICMPv6 errors about a
flow go to that flow's backend, quote untouched. Drops are counted by name.

Run twice: with the default IPv4 next hop for both families, then with a
next_hop_mac6 of its own and another tunnel TTL.
"""
import gen
from sluicetest import pcap as sp
from sluicetest import ipv6 as v6


def form(fr):
    f = sp.Frame(fr)
    outer6 = f.ip6 is not None
    inner6 = isinstance(sp.inner_of(fr), v6.IPv6)
    return "%sin%s" % ("6" if inner6 else "4", "6" if outer6 else "4")


def quote_flow(inp):
    """The client flow an error is about: (client, client port, proto)."""
    f = sp.Frame(inp)
    if f.ip6 is not None:
        q = v6.IPv6(f.ip6.l4[8:] + b"\0" * 64)
        return (q.dst, q.ports()[1], q.upper)
    q = sp.IPv4(f.ip.payload[8:] + b"\0" * 64)
    return (q.dst, q.ports()[1], q.proto)


def one_run(case, cfg, rows, tag):
    run = case.run(cfg, [[f for _, f, _ in rows]], tag=tag)
    by_flow, errors = {}, {}
    for fr in run.outputs[0]:
        inner = sp.inner_of(fr)
        if not case.check(inner is not None, "%s: output is no tunnel packet: %s", tag,
                          fr.hex()[:80]):
            continue
        k = sp.flow_of(inner)
        if k is None:
            # An error: the flow it is about is in its quote, turned around.
            q = inner.l4[8:] if isinstance(inner, v6.IPv6) else inner.payload[8:]
            qi = v6.IPv6(q + b"\0" * 64) if isinstance(inner, v6.IPv6) else sp.IPv4(q + b"\0" * 64)
            proto = qi.upper if isinstance(qi, v6.IPv6) else qi.proto
            errors.setdefault((qi.dst, qi.ports()[1], proto), []).append(fr)
        else:
            by_flow.setdefault(k, []).append(fr)
    forms, labels, backend_of = set(), {}, {}
    expect, n_fwd = {}, 0
    used = {}
    for desc, f, want in rows:
        fi = sp.Frame(f)
        what = "%s: %s" % (tag, desc)
        if want in ("fwd", "twice"):
            k = sp.flow_of(fi.ip6 if fi.ip6 is not None else fi.ip)
            got = by_flow.get(k, [])
            i = used.get(k, 0)
            used[k] = i + 1
            if not case.check(len(got) > i, "%s: packet %d of the flow not forwarded", what, i):
                continue
            be = sp.check_encap(case, cfg, got[i], f, what)
            n_fwd += 1
            forms.add(form(got[i]))
            o = sp.Frame(got[i])
            if want == "twice":
                case.eq(be, backend_of.get(k), what + ": the backend of its first packet")
                if o.ip6 is not None:
                    case.eq(o.ip6.flow, labels.get(k), what + ": the outer flow label of its "
                            "first packet")
            else:
                backend_of[k] = be
                if o.ip6 is not None:
                    labels[k] = o.ip6.flow
        elif want == "err":
            k = quote_flow(f)
            got = errors.get(k, [])
            if case.eq(len(got), 1, what + ": forwarded copies"):
                be = sp.check_encap(case, cfg, got[0], f, what)
                case.eq(be, backend_of.get(k), what + ": the backend of the flow it is about")
                forms.add(form(got[0]))
                n_fwd += 1
        else:
            expect[want] = expect.get(want, 0) + 1
    case.eq(forms, gen.FORMS, tag + ": tunnel forms seen")
    st = run.stats
    case.eq(len(run.outputs[0]), n_fwd, tag + ": frames out")
    case.eq(st["fwd_pkts"], n_fwd, tag + ": fwd_pkts")
    case.eq(st["fwd6_pkts"], sum(1 for _, f, w in rows
                                 if w in ("fwd", "twice", "err") and sp.Frame(f).ip6),
            tag + ": fwd6_pkts")
    case.eq(st["icmp_err_fwd"], sum(1 for r in rows if r[2] == "err"), tag + ": icmp_err_fwd")
    case.eq(st["conn_new"], sum(1 for r in rows if r[2] == "fwd"), tag + ": conn_new")
    case.eq(st["conn_hit"], sum(1 for r in rows if r[2] in ("twice", "err")),
            tag + ": conn_hit (second packets; errors follow their flow's entry)")
    case.drops_exactly(run, expect, tag)
    return forms


def main():
    rows = gen.rows()
    with sp.Case("forward6") as case:
        cfg = sp.MuxConfig(gen.SERVICES, tunnel_address6=gen.TUNNEL6)
        one_run(case, cfg, rows, "default")
        cfg2 = sp.MuxConfig(gen.SERVICES, tunnel_address6=gen.TUNNEL6, tunnel_ttl=23,
                            next_hop_mac6="0a:00:00:00:06:06")
        one_run(case, cfg2, rows, "nh6")
        print("forward6: %d packets x 2 configs; forms %s; errors followed their flows" % (
            len(rows), ", ".join(sorted(gen.FORMS))))


if __name__ == "__main__":
    main()
