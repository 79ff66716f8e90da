# SPDX-License-Identifier: BSD-3-Clause
"""affinity: every packet of a flow reaches the same backend, across the two
workers of one mux (each with its own connection table, each seeing part of
every flow) and across two separate mux processes with the same flow table.

The backend of a flow is read from the output; what is asserted is that it
is the same for every packet, on both workers and in both runs. A third run
on one worker, with each flow's packets back to back, must agree with the
first and count every flow once in conn_new and the backends' new_conns.
"""

import gen
from sluicetest import pcap as sp


def flow_map(case, cfg, run, inputs, tag):
    """{flow: {backend}} and {flow: set of output files it appeared in}."""
    by_in = {}
    for q in inputs:
        for f in q:
            ip = sp.Frame(f).ip
            by_in[(sp.flow_of(ip), ip.id)] = f
    backends, files, count = {}, {}, {}
    for qi, out in enumerate(run.outputs):
        for fr in out:
            inner = sp.inner_of(fr)
            if not case.check(inner is not None, "%s: not IP-in-IP: %s", tag, fr.hex()[:80]):
                continue
            fl = sp.flow_of(inner)
            src = by_in.get((fl, inner.id))
            if not case.check(src is not None, "%s: output %s matches no input", tag, fl):
                continue
            be = sp.check_encap(case, cfg, fr, src, "%s: flow %s" % (tag, fl))
            backends.setdefault(fl, set()).add(be)
            files.setdefault(fl, set()).add(qi)
            count[fl] = count.get(fl, 0) + 1
    return backends, files, count


def outer_ids(case, run, tag):
    """The outer ids of the non-DF frames each worker sent: worker i gives the
    ids equal to i modulo 2 (its step: the power of two at least the number
    of workers), so the two never give one id."""
    n = len(run.outputs)
    for qi, out in enumerate(run.outputs):
        ids = [sp.Frame(fr).ip.id for fr in out if not sp.Frame(fr).ip.df]
        case.check(len(ids) > 0, "%s: worker %d sent no non-DF frame", tag, qi)
        odd = [i for i in ids if i % n != qi]
        case.check(not odd, "%s: worker %d gave outer ids of another worker, e.g. %s", tag,
                   qi, odd[:5])
        case.eq(len(set(ids)), len(ids), "%s: worker %d's outer ids are distinct" % (tag, qi))


def main():
    inputs, flows = gen.queues()
    total = sum(len(q) for q in inputs)
    with sp.Case("affinity") as case:
        cfg = sp.MuxConfig(gen.SERVICES)
        maps = []
        for tag in ("run1", "run2"):
            run = case.run(cfg, inputs, tag=tag)
            case.eq(run.stats["workers"], 2, tag + ": workers")
            case.eq(run.stats["per_worker_rx"], [len(q) for q in inputs],
                    tag + ": each worker read its own queue")
            case.eq(run.stats["fwd_pkts"], total, tag + ": fwd_pkts")
            case.drops_exactly(run, {}, tag)
            outer_ids(case, run, tag)
            backends, files, count = flow_map(case, cfg, run, inputs, tag)
            split = [f for f in flows if len(backends.get(f, ())) != 1]
            case.check(not split, "%s: %d flows reached more than one backend, e.g. %s",
                       tag, len(split), split[:3] and {f: backends.get(f) for f in split[:3]})
            both = sum(1 for f in flows if files.get(f) == {0, 1})
            case.eq(both, len(flows), tag + ": flows seen by both workers")
            short = [f for f in flows if count.get(f) != gen.PER_FLOW]
            case.check(not short, "%s: %d flows lost packets, e.g. %s", tag, len(short),
                       short[:3])
            maps.append({f: next(iter(b)) for f, b in backends.items() if len(b) == 1})
        same = sum(1 for f in flows if f in maps[0] and maps[0].get(f) == maps[1].get(f))
        case.eq(same, len(flows), "flows with the same backend in both runs")

        # Run 3: one worker, each flow's packets back to back, so a new
        # flow's later packets arrive in the same receive burst as its first.
        # Same backends again, and each flow counted as one new connection.
        b2b = gen.back_to_back()
        run = case.run(cfg, [b2b], tag="run3")
        backends, _, count = flow_map(case, cfg, run, [b2b], "run3")
        same3 = sum(1 for f in flows if backends.get(f) == {maps[0].get(f)})
        case.eq(same3, len(flows), "run3 (1 worker, back to back): flows on their run-1 backend")
        case.eq(run.stats["conn_new"], len(flows), "run3: conn_new = flows")
        case.eq(run.stats["conn_hit"], len(b2b) - len(flows), "run3: conn_hit = later packets")
        per_be = {}
        for f, b in backends.items():
            for be in b:
                k = (f[2], be[0], be[1])
                per_be[k] = per_be.get(k, 0) + 1
        for s in gen.SERVICES:
            proto = sp.PROTO_NUM[s.proto]
            js = {(b["dip"], b["port"]): b for sv in run.stats["services"]
                  if sv["protocol"] == s.proto and sv["port"] == s.port for b in sv["backends"]}
            for b in s.backends:
                case.eq(js[(b.dip, b.port)]["new_conns"], per_be.get((proto, b.dip, b.port), 0),
                        "run3: %s backend %s:%d new_conns vs flows seen" % (s.proto, b.dip, b.port))
        used = {s.proto: len({maps[0][f] for f in flows if f in maps[0] and
                              f[2] == sp.PROTO_NUM[s.proto]}) for s in gen.SERVICES}
        for s in gen.SERVICES:
            case.eq(used[s.proto], len(s.backends), "backends used by %s flows" % s.proto)
        print("affinity: %d flows x %d packets on 2 workers (%d+%d pkts), %d flows on one "
              "backend, %d/%d seen by both workers, run 2 same backend for %d/%d; "
              "backends used tcp %d/%d udp %d/%d; back to back on 1 worker: same backend %d/%d, "
              "conn_new %d" % (
                  len(flows), gen.PER_FLOW, len(inputs[0]), len(inputs[1]),
                  len(flows) - len(split), both, len(flows), same, len(flows),
                  used["tcp"], len(gen.SERVICES[0].backends),
                  used["udp"], len(gen.SERVICES[1].backends), same3, len(flows),
                  run.stats["conn_new"]))


if __name__ == "__main__":
    main()
