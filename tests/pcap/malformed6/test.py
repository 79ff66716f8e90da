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
        expect = sp.check_table_dropped(case, cfg, run, goods, gen.TABLE,
                                        lambda g: sp.Frame(g).ip6.src, "malformed6")
        print("malformed6: %d bad IPv6 frames under %d reasons all dropped and counted, %d good "
              "packets interleaved all forwarded" % (len(gen.TABLE), len(expect), len(goods)))


if __name__ == "__main__":
    main()
