# SPDX-License-Identifier: BSD-3-Clause
"""The rows a packet case with several ports writes (the host agent's
cases, tests/pcap/agent*/gen.py): (description, input port, frame,
expectation) in the order the daemon reads them, as
sluicetest.pcap.frames_by_port() and write_port_pcaps() take them.

Needs scapy (/usr/bin/python3), as the generators do.
"""
import itertools
import random

from scapy.packet import Raw


class Rows:
    """A case's rows being written (out), its random source seeded with
    seed (rnd), and the IP id or flow label of each row in turn from
    first_tag + 1 (next_tag())."""

    def __init__(self, seed, first_tag):
        self.rnd = random.Random(seed)
        self.out = []
        self.next_tag = itertools.count(first_tag + 1).__next__

    def payload(self, n):
        """n random bytes, as a scapy layer."""
        return Raw(bytes(self.rnd.getrandbits(8) for _ in range(n)))

    def row(self, desc, port, frame, expect):
        self.out.append((desc, port, bytes(frame), expect))
