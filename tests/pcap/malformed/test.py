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
    cfg = sp.MuxConfig(gen.SERVICES, tunnel_address=gen.TUNNEL)
    sp.run_table_dropped("malformed", gen, cfg, lambda g: sp.Frame(g).ip.src, "bad frames")


if __name__ == "__main__":
    main()
