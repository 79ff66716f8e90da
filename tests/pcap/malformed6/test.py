# SPDX-License-Identifier: BSD-3-Clause
"""malformed6: every IPv6 frame of the table in gen.py is dropped and
counted under its reason, never forwarded; the good IPv6 packets around
them all pass, each a correct 6in6 encapsulation.
"""
import gen
from sluicetest import pcap as sp


def main():
    cfg = sp.MuxConfig(gen.SERVICES, tunnel_address6=gen.TUNNEL6)
    sp.run_table_dropped("malformed6", gen, cfg, lambda g: sp.Frame(g).ip6.src, "bad IPv6 frames")


if __name__ == "__main__":
    main()
