# SPDX-License-Identifier: BSD-3-Clause
"""Input for the config_errors case: a good configuration and a table of
one-line edits that each break it.

Each row is (description, old text, new text, expected substrings of the
error). The edit replaces the first occurrence of old with new; the error
must name the file and the line where new landed ("FILE:LINE:"), plus the
substrings (the field's path, the bad value).

    /usr/bin/python3 gen.py DIR     writes DIR/good.cfg and DIR/bad_<n>.cfg
"""
import os
import sys

from sluicetest import pcap as sp

SERVICES = [
    sp.Service("192.0.2.80", "tcp", 80, [sp.Backend("10.8.0.1", 8080, "10.0.80.1", weight=1),
                                         sp.Backend("10.8.0.2", 8080, "10.0.80.2", weight=3)]),
    sp.Service("192.0.2.80", "udp", 53, [sp.Backend("10.8.0.3", 53, "10.0.80.3")]),
]

B1 = 'dip = "10.8.0.2"; port = 8080; weight = 3;'
TABLE = [
    ("weight out of range", B1, 'dip = "10.8.0.2"; port = 8080; weight = 70000;',
     ["flow_table.services[0].backends[1].weight", "70000", "out of range"]),
    ("negative weight", B1, 'dip = "10.8.0.2"; port = 8080; weight = -1;',
     ["flow_table.services[0].backends[1].weight", "-1"]),
    ("bad IPv4 address for a DIP", 'dip = "10.8.0.1"', 'dip = "10.8.0.300"',
     ["flow_table.services[0].backends[0].dip", "10.8.0.300"]),
    ("bad IPv4 address for the tunnel", 'tunnel_address = "10.255.0.1"',
     'tunnel_address = "10.255.0"', ["mux.tunnel_address", "10.255.0"]),
    ("bad MAC address", 'next_hop_mac = "02:00:00:00:00:fe"', 'next_hop_mac = "02:00:00:00:fe"',
     ["mux.next_hop_mac", "02:00:00:00:fe"]),
    ("unknown field in mux", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; colour = "blue";', ["mux.colour", "unknown field"]),
    ("unknown field in a backend (misspelt weight)", B1, 'dip = "10.8.0.2"; port = 8080; wieght = 3;',
     ["flow_table.services[0].backends[1].wieght", "unknown field"]),
    ("mtu out of range", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; mtu = 100;', ["mux.mtu", "100"]),
    ("bad IPv4 address for a VIP prober", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; probers = [ "10.255.0.254", "10.255.0" ];',
     ["mux.probers[1]", "not an IPv4 or IPv6 address"]),
    # IPv6: a service is one family; addresses bare (no zone, no prefix); the
    # IPv6 fields take IPv6 only.
    ("an IPv6 backend in an IPv4 service", 'dip = "10.8.0.1"', 'dip = "2001:db8:8::1"',
     ["flow_table.services[0].backends[0].dip", "2001:db8:8::1",
      "is an IPv6 address in an IPv4 service", "one family"]),
    ("a prefix for a VIP", 'vip = "192.0.2.80"', 'vip = "192.0.2.0/24"',
     ["flow_table.services[0].vip", "192.0.2.0/24", "is a prefix"]),
    ("a scoped IPv6 tunnel address", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; tunnel_address6 = "fe80::1%eth0";',
     ["mux.tunnel_address6", "fe80::1%eth0", "scoped address"]),
    ("an IPv4 address for the IPv6 tunnel address", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; tunnel_address6 = "10.255.0.6";',
     ["mux.tunnel_address6", "10.255.0.6", "takes IPv6 only"]),
    ("an IPv6 address for the IPv4 tunnel address", 'tunnel_address = "10.255.0.1"',
     'tunnel_address = "2001:db8:ff::1"', ["mux.tunnel_address", "takes IPv4 only"]),
    ("a multicast IPv6 prober", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; probers = [ "ff02::1" ];',
     ["mux.probers[0]", "ff02::1", "multicast"]),
    ("nd_for_vips not a bool", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; nd_for_vips = 1;',
     ["mux.nd_for_vips", "expected true or false"]),
    ("bad next_hop_mac6", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; next_hop_mac6 = "02:00:00:00:00";',
     ["mux.next_hop_mac6", "not a MAC address"]),
    ("nine VIP probers", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; probers = [ %s ];'
     % ", ".join('"10.255.0.%d"' % i for i in range(9)), ["mux.probers", "between 0 and 8"]),
    ("unknown protocol", 'protocol = "udp"', 'protocol = "sctp"',
     ["flow_table.services[1].protocol", "sctp"]),
    ("port 0", 'port = 53;', 'port = 0;', ["flow_table.services[1].port"]),
    ("maglev_size not prime", 'hash_seed = "%s";' % sp.DEFAULT_SEED,
     'hash_seed = "%s"; maglev_size = 65536;' % sp.DEFAULT_SEED,
     ["flow_table.maglev_size", "65536", "prime"]),
    ("missing host", ' host = "10.0.80.3";', "", ["flow_table.services[1].backends[0].host",
                                                  "missing"]),
    ("syntax error: no '=' after a name", 'tunnel_address = "10.255.0.1";',
     'tunnel_address "10.255.0.1";', ["syntax error"]),
    # How a backend is chosen (lb_choice.h): names, zones, cross_zone's zones.
    ("an unknown affinity", 'port = 80;', 'port = 80; affinity = "sticky";',
     ["flow_table.services[0].affinity", '"sticky" is not an affinity',
      "five_tuple, client_protocol or client"]),
    ("an unknown failure policy", 'port = 80;', 'port = 80; on_unusable = "retry";',
     ["flow_table.services[0].on_unusable", '"retry" is not a failure policy']),
    ("an unknown balance", 'port = 80;', 'port = 80; balance = "round_robin";',
     ["flow_table.services[0].balance", '"round_robin" is not a balance',
      "weighted or least_connections"]),
    ("a bad zone name", B1, B1 + ' zone = "zone a";',
     ["flow_table.services[0].backends[1].zone", "not made of letters"]),
    ("a mux zone too long", 'next_hop_mac = "02:00:00:00:00:fe";',
     'next_hop_mac = "02:00:00:00:00:fe"; zone = "a-very-long-zone-name";',
     ["mux.zone", "longer than 15 characters"]),
    ("cross_zone off with a backend without a zone", 'port = 80;',
     'port = 80; cross_zone = false;',
     ["flow_table.services[0].cross_zone", "backends[0] has no zone"]),
    # Capacity credits: a backend's cap, and the channel's group.
    ("max_connections on a UDP backend", 'dip = "10.8.0.3"; port = 53;',
     'dip = "10.8.0.3"; port = 53; max_connections = 5;',
     ["flow_table.services[1].backends[0].max_connections", "needs a TCP service"]),
    ("max_connections out of range", B1, B1 + ' max_connections = 20000000;',
     ["flow_table.services[0].backends[1].max_connections", "20000000"]),
    ("credits over plain tcp", 'flow_table = {',
     'credits = { listen = "tcp://127.0.0.1:7500"; };\nflow_table = {',
     ["credits.listen", "tls+tcp:// (mutual TLS) or ipc://"]),
    ("credits over TLS without a CA", 'flow_table = {',
     'credits = { listen = "tls+tcp://127.0.0.1:7500"; };\nflow_table = {',
     ["credits.ca"]),
]


def good():
    return sp.MuxConfig(SERVICES).render()


def bad(row):
    """(text, line) of the broken configuration for a table row."""
    _, old, new, _ = row
    text = good()
    at = text.index(old)
    text = text[:at] + new + text[at + len(old):]
    return text, text[:at].count("\n") + 1


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    with open(os.path.join(out, "good.cfg"), "w") as f:
        f.write(good())
    for i, row in enumerate(TABLE):
        with open(os.path.join(out, "bad_%d.cfg" % i), "w") as f:
            f.write(bad(row)[0])
