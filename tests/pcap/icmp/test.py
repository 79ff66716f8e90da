# SPDX-License-Identifier: BSD-3-Clause
"""icmp: ICMP errors about a flow follow the flow.

Run 1: each seen flow's first packet picks a backend (read from the output);
every error quoting that flow (VIP:port -> client:port) must reach the same
DIP on the same host, with only the outer destination (VIP -> DIP) and TTL
changed and the quote untouched. Errors about flows never seen are forwarded
too; run 2, a separate mux, then gets those flows' first packets, which must
land where the errors went. Errors quoting a non-VIP source or a port with no
service count as no_service; quotes too short to hold the ports, and errors
sent to the VIP quoting a packet the VIP did not send (forged), as icmp_quote.
"""

import gen
from sluicetest import pcap as sp


def by_ip_id(frames):
    return {sp.Frame(f).ip.id: f for f in frames}


def main():
    b = gen.build()
    seen, unseen, errors, bad = b["seen"], b["unseen"], b["errors"], b["bad"]
    with sp.Case("icmp") as case:
        cfg = sp.MuxConfig(gen.SERVICES)
        run = case.run(cfg, [b["run1"]], tag="run1")
        inputs = by_ip_id(b["run1"])
        n_err = len(errors)
        case.eq(len(run.outputs[0]), len(seen) + n_err, "run1: frames out")
        got = {}  # IP id -> backend
        for fr in run.outputs[0]:
            inner = sp.inner_of(fr)
            if not case.check(inner is not None, "run1: output not IP-in-IP"):
                continue
            src = inputs.get(inner.id)
            if not case.check(src is not None, "run1: output id %d matches no input", inner.id):
                continue
            got[inner.id] = sp.check_encap(case, cfg, fr, src, "run1: id %d (%s)" % (
                inner.id, "icmp error" if inner.proto == sp.PROTO_ICMP else "flow"))
        flow_be = {}
        for f, fr in zip(seen, b["run1"]):
            flow_be[f] = got.get(sp.Frame(fr).ip.id)
            case.check(flow_be[f] is not None, "run1: first packet of %s not forwarded", f)
        same, err_be = 0, {}
        for f, fr in errors:
            i = sp.Frame(fr).ip.id
            if not case.check(i in got, "run1: error about %s (id %d) not forwarded", f, i):
                continue
            if f in flow_be:
                if case.eq(got[i], flow_be[f], "run1: error about seen flow %s: backend" % (f,)):
                    same += 1
            else:
                err_be[f] = got[i]
        for reason, fr in bad:
            case.check(sp.Frame(fr).ip.id not in got, "run1: %s error was forwarded", reason)
        expect = {}
        for reason, _ in bad:
            expect[reason] = expect.get(reason, 0) + 1
        case.drops_exactly(run, expect, "run1")
        st = run.stats
        case.eq(st["icmp_err_fwd"], n_err, "run1: icmp_err_fwd")
        case.eq(st["conn_new"], len(seen), "run1: conn_new (errors start no connection)")
        case.eq(st["conn_live"], len(seen), "run1: conn_live")

        run2 = case.run(cfg, [b["run2"]], tag="run2")
        in2 = by_ip_id(b["run2"])
        later = 0
        for fr in run2.outputs[0]:
            inner = sp.inner_of(fr)
            src = in2.get(inner.id) if inner else None
            if not case.check(src is not None, "run2: unexpected output"):
                continue
            be = sp.check_encap(case, cfg, fr, src, "run2: id %d" % inner.id)
            f = sp.flow_of(sp.Frame(src).ip)
            if case.eq(be, err_be.get(f), "run2: flow %s vs its earlier error" % (f,)):
                later += 1
        case.eq(len(run2.outputs[0]), len(unseen), "run2: frames out")
        case.drops_exactly(run2, {}, "run2")
        n_seen_err = n_err - len(unseen)
        print("icmp: %d errors about %d seen flows on the flow's backend %d/%d; %d errors about "
              "unseen flows, later SYN agreed %d/%d; dropped no_service %d, icmp_quote %d" % (
                  n_seen_err, len(seen), same, n_seen_err, len(unseen), later, len(unseen),
                  run.drops().get("no_service", -1), run.drops().get("icmp_quote", -1)))


if __name__ == "__main__":
    main()
