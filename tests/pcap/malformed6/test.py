# SPDX-License-Identifier: BSD-3-Clause
"""malformed6: every IPv6 frame of the table in gen.py is dropped and
counted under its reason, never forwarded; the good IPv6 packets around
them all pass, each a correct 6in6 encapsulation.
"""
import gen
from sluicetest import pcap as sp


def main():
    frames, goods = gen.frames()
    with sp.Case("malformed6") as case:
        cfg = sp.MuxConfig(gen.SERVICES, tunnel_address6=gen.TUNNEL6)
        run = case.run(cfg, [frames])
        by_src = {sp.Frame(g).ip6.src: g for g in goods}
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
        case.drops_exactly(run, expect, "malformed6")
        case.eq(run.stats["fwd_pkts"], len(goods), "fwd_pkts")
        print("malformed6: %d bad IPv6 frames under %d reasons all dropped and counted, %d good "
              "packets interleaved all forwarded" % (len(gen.TABLE), len(expect), len(goods)))


if __name__ == "__main__":
    main()
