# SPDX-License-Identifier: BSD-3-Clause
"""Input for the limits6 case: SYN trains against admission rules on IPv6
services (docs/protection.md), one block per service, in the order the mux
sees them; every backend behind an IPv4 PA (6in4).

    RATE   new_per_second 1/s, burst 10, intercept, refuse drop: 30 SYNs
           from 30 clients (10 pass)
    CONNS  max_connections 5, intercept, refuse rst: 12 SYNs (5 pass), the
           last carrying data (its RST acknowledges it too)
    SRC    per_source 1/s, burst 2, the default /64, intercept, refuse
           icmp: 6 SYNs from six addresses of one /64 (2 pass), 2 from
           another /64 (both pass)
    SRC128 per_source 1/s, burst 1, /128: one SYN from ATTACKER (passes),
           then 2 SYNs from each of 3 addresses of one /64 (one each
           passes): ATTACKER was made to share the first one's bucket
           under the fold of stop 33 (its key has no secret since)
    MON    new_per_second 1/s, burst 3, monitor: 8 SYNs, all forwarded, 5
           would have been refused

    /usr/bin/python3 gen.py DIR     writes DIR/limits6.pcap
"""
import os
import sys

from sluicetest import pcap as sp
from sluicetest.limits import services, train

RATE, CONNS, SRC, SRC128, MON = ("2001:db8::50", "2001:db8::51", "2001:db8::52",
                                 "2001:db8::53", "2001:db8::54")
# In another /64, with the interface id that solved the unkeyed fold for 2001:db8:c:5::1.
ATTACKER = "2001:db8:ffff:1:37d2:31f7:7f87:d145"

# the n-th service's backends: 2001:db8:5:n::1 on PA 10.0.60.n, 2001:db8:5:n::2 on 10.0.61.n
SERVICES = services(
    "2001:db8:5:%x::%d", ("10.0.60.%d", "10.0.61.%d"),
    (RATE, {"new_per_second": {"limit": 1, "burst": 10, "mode": "intercept"}}),
    (CONNS, {"max_connections": {"limit": 5, "mode": "intercept"}, "refuse": "rst"}),
    (SRC, {"per_source": {"limit": 1, "burst": 2, "mode": "intercept"}, "refuse": "icmp"}),
    (SRC128, {"per_source": {"limit": 1, "burst": 1, "prefix": 128, "mode": "intercept"}}),
    (MON, {"new_per_second": {"limit": 1, "burst": 3}}),
)

# (checked, passed, would_deny, denied) of each service's one rule
EXPECT = {
    RATE: ("new_per_second", (30, 10, 0, 20)),
    CONNS: ("max_connections", (12, 5, 0, 7)),
    SRC: ("per_source", (8, 4, 0, 4)),
    SRC128: ("per_source", (7, 4, 0, 3)),
    MON: ("new_per_second", (8, 3, 5, 0)),
}
FORWARDED = 10 + 5 + 4 + 4 + 8
RSTS, ICMPS, DROPS = 7, 4, 20 + 3


def frames():
    """[(frame, verdict)]: verdict "fwd", "drop", "rst" or "icmp"."""
    return (train(30, "2001:db8:c:1::%x", RATE, 40000, passed=10, refused="drop") +
            # the last carries data on its SYN: the RST acknowledges it too
            train(12, "2001:db8:c:2::%x", CONNS, 42000, passed=5, refused="rst", seq=7000,
                  last=b"hello") +
            train(6, "2001:db8:c:3::%x", SRC, 44000, passed=2, refused="icmp") +
            train(2, "2001:db8:c:4::%x", SRC, 44100) +
            train(1, lambda i: ATTACKER, SRC128, 45100) +
            # three addresses, two SYNs each
            train(6, lambda i: "2001:db8:c:5::%x" % (i % 3 + 1), SRC128, 45000, passed=3,
                  refused="drop") +
            train(8, "2001:db8:c:6::%x", MON, 46000))


if __name__ == "__main__":
    sp.write_pcap(os.path.join(sys.argv[1], "limits6.pcap"), [f for f, _ in frames()])
