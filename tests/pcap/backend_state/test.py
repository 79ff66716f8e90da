# SPDX-License-Identifier: BSD-3-Clause
"""backend_state: only active backends get new connections.

A draining ("drain") or maintained ("maint") backend gets no new flow; the
active ones share the new flows by weight as if the others were not there;
a service with no active backend of non-zero weight drops new flows under
no_backend. Every forwarded frame is checked field by field (the tcp/443
ones on a sample), the second packet of each tcp/80 flow must follow its
first (a connection-table hit), and the JSON per-backend counters must equal
what the output shows. What happens to connections that were established
before a backend changed state is tests/process/test_backend_state.py.
"""
import math

import gen
from sluicetest import pcap as sp

SIGMAS = 5  # each share check fails a correct balancer with p < 1e-6


def main():
    inputs = gen.frames()
    frames = [f for f, _, _ in inputs]
    svc = {s.port: s for s in gen.SERVICES}
    with sp.Case("backend_state") as case:
        cfg = sp.MuxConfig(gen.SERVICES)
        run = case.run(cfg, [frames])
        out = run.outputs[0]
        n_fwd = 2 * gen.N_WEB + gen.N_TLS
        case.eq(len(out), n_fwd, "frames out: tcp/80 and tcp/443 forwarded, udp/53 not one")

        # (port, dip) -> frames, and the backend of each tcp/80 packet by flow.
        counts = {(p, b.dip): 0 for p, s in svc.items() for b in s.backends}
        web = {}
        for k, fr in enumerate(out):
            inner = sp.inner_of(fr)
            if not case.check(inner is not None and inner.id < len(inputs),
                              "output %d is not an encapsulation of an input", k):
                continue
            frame, port, client = inputs[inner.id]
            if port == 80 or inner.id % 20 == 0:
                be = sp.check_encap(case, cfg, fr, frame, "input %d (port %d)" % (
                    inner.id, port))
                if be is None:
                    continue
            if not case.check((port, inner.dst) in counts, "input %d (port %d): %s is no "
                              "backend of its service", inner.id, port, inner.dst):
                continue
            counts[(port, inner.dst)] += 1
            if port == 80:
                web.setdefault(client, []).append(inner.dst)

        for p, s in sorted(svc.items()):
            for b in s.backends:
                if not b.takes_new:
                    case.eq(counts[(p, b.dip)], 0, "%s/%d: %s (state %s, weight %s) gets no "
                            "new flow" % (s.proto, p, b.dip, b.state or "default",
                                          b.weight))

        # tcp/80: everything on A, and each flow's ACK where its SYN went.
        case.eq(counts[(80, "10.5.0.1")], 2 * gen.N_WEB, "tcp/80: every packet on A")
        case.eq(len(web), gen.N_WEB, "tcp/80: flows seen")
        split = [c for c, b in web.items() if len(b) != 2 or len(set(b)) != 1]
        case.check(not split, "tcp/80: %d flows not two packets on one backend, e.g. %s",
                   len(split), split[:3])

        # tcp/443: the active pair shares by weight, 1:3.
        act = [b for b in svc[443].backends if b.takes_new]
        n = sum(counts[(443, b.dip)] for b in act)
        case.eq(n, gen.N_TLS, "tcp/443: every SYN on an active backend")
        wsum = sum(b.weight for b in act)
        tols = []
        for b in act:
            p = b.weight / wsum
            tol = SIGMAS * math.sqrt(p * (1 - p) / max(n, 1))
            tols.append(tol)
            share = counts[(443, b.dip)] / n if n else 0
            case.check(abs(share - p) <= tol, "tcp/443: %s (weight %d): share %.4f, want "
                       "%.4f +- %.4f", b.dip, b.weight, share, p, tol)

        # The summary's counters say the same.
        for sv in run.stats["services"]:
            s = svc.get(sv["port"])
            if not case.check(s is not None and sv["protocol"] == s.proto,
                              "JSON: unexpected service %s/%s", sv["protocol"], sv["port"]):
                continue
            for jb in sv["backends"]:
                c = counts.get((sv["port"], jb["dip"]))
                case.eq(jb["pkts"], c, "JSON %s/%d %s pkts" % (s.proto, s.port, jb["dip"]))
                new = c // 2 if sv["port"] == 80 else c
                case.eq(jb["new_conns"], new, "JSON %s/%d %s new_conns" % (
                    s.proto, s.port, jb["dip"]))
        case.eq(run.stats["conn_new"], gen.N_WEB + gen.N_TLS, "conn_new: one per TCP flow")
        case.eq(run.stats["conn_hit"], gen.N_WEB, "conn_hit: the tcp/80 ACKs")
        case.drops_exactly(run, {"no_backend": gen.N_DNS}, "backend_state")

        got, want = sp.shares_line([counts[(443, b.dip)] for b in act],
                                   [b.weight for b in act])
        print("backend_state: tcp/80 %d flows x 2 on A, B/C (drain/maint) %d/%d; tcp/443 "
              "%d SYNs, active shares %s vs %s (tol %s, %d sigma), drain/maint %d/%d; "
              "udp/53 %d dropped no_backend" % (
                  len(web), counts[(80, "10.5.0.2")], counts[(80, "10.5.0.3")], n, got, want,
                  "/".join("%.3f" % t for t in tols), SIGMAS, counts[(443, "10.5.1.3")],
                  counts[(443, "10.5.1.4")], run.drops().get("no_backend", 0)))


if __name__ == "__main__":
    main()
