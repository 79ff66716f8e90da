# SPDX-License-Identifier: BSD-3-Clause
"""malformed: every frame of the table in gen.py is dropped and counted under
its reason; the good packets around them all pass.

Checks: the output holds exactly the good packets (each one a correct
encapsulation), and the summary's drops equal, reason by reason, the sum over
the table (every other reason zero).
"""

import gen
from sluicetest import pcap as sp


def main():
    frames, goods = gen.frames()
    with sp.Case("malformed") as case:
        cfg = sp.MuxConfig(gen.SERVICES, tunnel_address=gen.TUNNEL)
        run = case.run(cfg, [frames])
        by_src = {sp.Frame(g).ip.src: g for g in goods}
        seen = set()
        for fr in run.outputs[0]:
            inner = sp.inner_of(fr)
            src = inner.src if inner else None
            if not case.check(src in by_src, "forwarded a frame that is not a good packet: %s",
                              fr.hex()[:120]):
                continue
            case.check(src not in seen, "good packet from %s forwarded twice", src)
            seen.add(src)
            sp.check_encap(case, cfg, fr, by_src[src], "good packet from %s" % src)
        case.eq(len(seen), len(goods), "good packets forwarded")
        expect = {}
        for _, _, reason in gen.TABLE:
            expect[reason] = expect.get(reason, 0) + 1
        unknown = set(expect) - set(run.drops())
        case.check(not unknown, "test table names unknown drop reasons %s", sorted(unknown))
        case.drops_exactly(run, expect, "malformed")
        case.eq(run.stats["fwd_pkts"], len(goods), "fwd_pkts")
        print("malformed: %d bad frames under %d reasons all dropped and counted, %d good "
              "packets interleaved all forwarded" % (len(gen.TABLE), len(expect), len(goods)))


if __name__ == "__main__":
    main()
