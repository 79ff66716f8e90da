# SPDX-License-Identifier: BSD-3-Clause
"""spread: new flows are shared among backends by weight.

10,000 distinct flows to backends weighted 1/1/2/4. Each flow is an
independent draw, so a backend's count is binomial(n, p) with p its weight
share; each share must lie within 4 standard deviations, sqrt(p(1-p)/n), of
p. The per-backend new_conns and pkts of the JSON summary must equal what the
output pcap shows, and every output goes to the host of the DIP it carries.
"""
import math

import gen
from sluicetest import pcap as sp

SIGMAS = 4


def main():
    frames = gen.frames()
    svc = gen.SERVICES[0]
    host_of = {b.dip: b.host for b in svc.backends}
    with sp.Case("spread") as case:
        cfg = sp.MuxConfig(gen.SERVICES)
        run = case.run(cfg, [frames])
        out = run.outputs[0]
        case.eq(len(out), len(frames), "frames out")
        counts = {b.dip: 0 for b in svc.backends}
        flows = set()
        for k, fr in enumerate(out):
            f = sp.Frame(fr)
            inner = sp.inner_of(fr)
            if not case.check(inner is not None and inner.dst in counts,
                              "output %d is not an encapsulation to a backend", k):
                continue
            counts[inner.dst] += 1
            flows.add(sp.flow_of(inner))
            case.eq(f.ip.dst, host_of[inner.dst], "output %d: outer dst = host of %s" % (
                k, inner.dst))
            if k % 100 == 0:  # every field, on a sample
                sp.check_encap(case, cfg, fr, frames[inner.id], "flow %d" % inner.id)
        case.eq(len(flows), len(frames), "distinct flows in the output")
        n = sum(counts.values())
        wsum = sum(b.weight for b in svc.backends)
        tols = []
        for b in svc.backends:
            p = b.weight / wsum
            tol = SIGMAS * math.sqrt(p * (1 - p) / n)
            tols.append(tol)
            share = counts[b.dip] / n if n else 0
            case.check(abs(share - p) <= tol, "backend %s (weight %d): share %.4f, want %.4f "
                       "+- %.4f", b.dip, b.weight, share, p, tol)
        js = {b["dip"]: b for s in run.stats["services"] for b in s["backends"]}
        for b in svc.backends:
            case.eq(js[b.dip]["new_conns"], counts[b.dip], "JSON new_conns of %s" % b.dip)
            case.eq(js[b.dip]["pkts"], counts[b.dip], "JSON pkts of %s" % b.dip)
        case.eq(run.stats["services"][0]["new_conns"], len(frames), "JSON service new_conns")
        case.eq(run.stats["conn_new"], len(frames), "conn_new")
        case.drops_exactly(run, {}, "spread")
        got, want = sp.shares_line([counts[b.dip] for b in svc.backends],
                                   [b.weight for b in svc.backends])
        print("spread: %d flows, shares %s vs %s, tol %s (%d sigma)" % (
            n, got, want, "/".join("%.3f" % t for t in tols), SIGMAS))


if __name__ == "__main__":
    main()
