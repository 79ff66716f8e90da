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
        expect = sp.check_table_dropped(case, cfg, run, goods, gen.TABLE,
                                        lambda g: sp.Frame(g).ip.src, "malformed")
        print("malformed: %d bad frames under %d reasons all dropped and counted, %d good "
              "packets interleaved all forwarded" % (len(gen.TABLE), len(expect), len(goods)))


if __name__ == "__main__":
    main()
