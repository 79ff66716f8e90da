# SPDX-License-Identifier: BSD-3-Clause
"""conn_state: the connection table follows a TCP connection's life.

A SYN after the client's FIN starts a new connection on the reused tuple
(counted new, not a hit), every other packet hits its flow's entry, and all
packets of a flow go to one backend.
"""

import gen
from sluicetest import pcap as sp


def main():
    frames = gen.frames()
    with sp.Case("conn_state") as case:
        run = case.run(sp.MuxConfig(gen.SERVICES), [frames])
        out = run.outputs[0]
        case.eq(len(out), len(frames), "frames out")
        backend_of = {}
        for fr in out:
            inner = sp.inner_of(fr)
            flow = sp.flow_of(inner)
            backend_of.setdefault(flow, set()).add(inner.dst)
        case.eq(len(backend_of), gen.N_FLOWS, "flows")
        case.check(all(len(b) == 1 for b in backend_of.values()),
                   "every packet of a flow reaches one backend")
        new = gen.N_FLOWS * gen.NEW_PER_FLOW
        case.eq(run.stats["conn_new"], new, "conn_new: two connections per flow")
        case.eq(run.stats["conn_hit"], len(frames) - new, "conn_hit: every other packet")
        case.eq(run.stats["conn_live"], gen.N_FLOWS, "one entry per tuple")
        case.drops_exactly(run, {}, "conn_state")
        print("conn_state: %d flows x %d packets, new %d, hits %d" % (
            gen.N_FLOWS, len(gen.LIFE), run.stats["conn_new"], run.stats["conn_hit"]))


if __name__ == "__main__":
    main()
