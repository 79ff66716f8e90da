# SPDX-License-Identifier: BSD-3-Clause
"""Input for the limits case: SYN trains against admission rules
(docs/protection.md), one block per service, in the order the mux sees them.

    RATE  new_per_second 1/s, burst 20, intercept, refuse drop: 60 SYNs from
          60 clients (20 pass), then 5 ACKs of connections the mux has no
          entry for (established: never checked, never cut)
    CONNS max_connections 10, intercept, refuse rst: 30 SYNs (10 pass), FIN
          from 5 of those that passed (5 released), 8 more SYNs (5 pass)
    SRC   per_source 1/s, burst 3, /24, intercept, refuse icmp: 10 SYNs from
          one /24 (3 pass), 2 from another /24 (both pass)
    MON   new_per_second 1/s, burst 5, monitor: 20 SYNs, all forwarded,
          15 would have been refused
    FREE  no rules: 10 SYNs
    TOP   new_per_second 100000/s, monitor (never refuses): 30 SYNs from one
          client, 20 from a second, 12 from a third, then 40 from 40 others;
          the top talkers name the three with their exact counts

The rates are 1/s with bursts far above what a second's refill adds, so the
counts are exact however fast the mux reads the file (well within a
second).

    /usr/bin/python3 gen.py DIR     writes DIR/limits.pcap
"""
import os
import sys

from sluicetest import pcap as sp
from sluicetest.limits import services, train

RATE, CONNS, SRC, MON, FREE, TOP = ("192.0.2.50", "192.0.2.51", "192.0.2.52", "192.0.2.53",
                                    "192.0.2.54", "192.0.2.55")

# the n-th service's backends: 10.5.n.1 on PA 10.0.50.n, 10.5.n.2 on 10.0.51.n
SERVICES = services(
    "10.5.%d.%d", ("10.0.50.%d", "10.0.51.%d"),
    (RATE, {"new_per_second": {"limit": 1, "burst": 20, "mode": "intercept"}}),
    (CONNS, {"max_connections": {"limit": 10, "mode": "intercept"}, "refuse": "rst"}),
    (SRC, {"per_source": {"limit": 1, "burst": 3, "prefix": 24, "mode": "intercept"},
           "refuse": "icmp"}),
    (MON, {"new_per_second": {"limit": 1, "burst": 5}}),
    (FREE, None),
    (TOP, {"new_per_second": {"limit": 100000}}),
)

# What the rules should make of it: (checked, passed, would_deny, denied).
EXPECT = {
    RATE: ("new_per_second", (60, 20, 0, 40)),
    CONNS: ("max_connections", (38, 15, 0, 23)),
    SRC: ("per_source", (12, 5, 0, 7)),
    MON: ("new_per_second", (20, 5, 15, 0)),
    TOP: ("new_per_second", (102, 102, 0, 0)),
}
TALKERS = [("100.80.0.1", 30), ("100.80.0.2", 20), ("100.80.0.3", 12)]
FORWARDED = (20 + 5) + (10 + 5 + 5) + (3 + 2) + 20 + 10 + 102
RSTS, ICMPS, DROPS = 23, 7, 40
CONNS_LIVE, CONNS_HELD = 10, 15


def frames():
    """[(frame, verdict)]: verdict "fwd", "drop", "rst" or "icmp"."""
    out = train(60, "198.51.100.%d", RATE, 40000, passed=20, refused="drop")
    out += train(5, "198.51.101.%d", RATE, 41000, flags="A")
    out += train(30, "203.0.113.%d", CONNS, 42000, passed=10, refused="rst", seq=7000)
    out += train(5, "203.0.113.%d", CONNS, 42000, flags="FA", seq=7001)
    # The last carries data on its SYN: the RST acknowledges it too.
    out += train(8, lambda i: "203.0.113.%d" % (101 + i), CONNS, 43000, passed=5,
                 refused="rst", seq=9000, last=b"hello")
    out += train(10, "198.18.0.%d", SRC, 44000, passed=3, refused="icmp")
    out += train(2, "198.18.1.%d", SRC, 44100)
    out += train(20, "100.64.0.%d", MON, 45000)
    out += train(10, "100.65.0.%d", FREE, 46000)
    sport = 50000
    for src, n in TALKERS:
        out += train(n, lambda i: src, TOP, sport)
        sport += n
    return out + train(40, "100.81.0.%d", TOP, sport)


if __name__ == "__main__":
    sp.write_pcap(os.path.join(sys.argv[1], "limits.pcap"), [f for f, _ in frames()])
