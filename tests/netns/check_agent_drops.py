#!/usr/bin/python3
"""Runs inside the router's namespace: sends hand-made frames to a host
agent's uplink and checks, through the agent's telemetry, that each was
delivered or dropped under the expected reason.

One row per case, as in Katran's packet tests: a description, the frame,
and the counter it must move. Add a case in one line. Every case is sent
REPEAT times; drop counters must move by exactly that much.
"""
import argparse
import sys

from scapy.all import ICMP, IP, TCP, UDP, Ether, IPv6, Raw, sendp

from sluicetest.checks import Checks
from sluicetest.lab import AGENT_COUNTERS, agent_counters, steady

REPEAT = 3
CLIENT = "198.51.100.10"


def cases(a):
    """(description, frame, counter) for agent a's PA, mux and VMs."""
    def outer(src=a.mux, dst=a.pa, **kw):
        return Ether(src=a.router_mac, dst=a.agent_mac) / IP(src=src, dst=dst, proto=4, **kw)

    def syn(dst=a.dip, sport=40000):
        return IP(src=CLIENT, dst=dst) / TCP(sport=sport, dport=8080, flags="S", seq=1)

    inner_ok = bytes(syn())
    bad_csum = bytearray(inner_ok)
    bad_csum[10] ^= 0xff  # inner IPv4 header checksum
    v6_nibble = bytearray(inner_ok)
    v6_nibble[0] = 0x65  # version 6 where protocol 4 promised IPv4
    return [
        # delivered: the VM answers an echo request from its own address,
        # which leaves untouched (not a load-balanced endpoint)
        ("valid: echo request to a local DIP from the mux",
         outer() / IP(src=CLIENT, dst=a.dip) / ICMP(id=7, seq=1), "decap"),
        ("outer destination is another host's PA",
         outer(dst=a.other_pa) / syn(), "not_our_pa"),
        ("outer destination is nobody's address",
         outer(dst="10.0.1.99") / syn(), "not_our_pa"),
        ("outer source is not a listed mux",
         outer(src="10.255.0.66") / syn(), "unknown_mux"),
        ("outer source is the client itself",
         outer(src=CLIENT) / syn(), "unknown_mux"),
        ("inner packet too short for an IPv4 header",
         outer() / Raw(inner_ok[:12]), "inner_malformed"),
        ("inner IPv4 header checksum wrong",
         outer() / Raw(bytes(bad_csum)), "inner_malformed"),
        ("inner version nibble is 6",
         outer() / Raw(bytes(v6_nibble)), "inner_malformed"),
        ("inner datagram cut short by the outer length",
         outer() / Raw(inner_ok[:28]), "inner_malformed"),
        ("inner TCP header shorter than 20 bytes",
         outer() / IP(src=CLIENT, dst=a.dip, proto=6) / Raw(b"\x9c\x40\x1f\x90" * 2),
         "inner_malformed"),
        ("inner total length past the outer datagram",
         outer() / IP(src=CLIENT, dst=a.dip, len=200) / TCP(dport=8080, flags="S"),
         "inner_malformed"),
        ("inner is a fragment",
         outer() / IP(src=CLIENT, dst=a.dip, flags="MF") / TCP(dport=8080, flags="S"),
         "inner_malformed"),
        ("inner destination is no DIP of this host",
         outer() / syn(dst="10.1.1.99"), "no_local_dip"),
        ("inner destination is a DIP of the other host",
         outer() / syn(dst=a.other_dip), "no_local_dip"),
        ("plain UDP to the PA, not a tunnel",
         Ether(src=a.router_mac, dst=a.agent_mac) / IP(src=a.mux, dst=a.pa) / UDP(dport=53),
         "not_tunnel"),
        ("plain TCP to the PA, not a tunnel",
         Ether(src=a.router_mac, dst=a.agent_mac) / IP(src=a.mux, dst=a.pa) /
         TCP(sport=40000, dport=22, flags="S"), "not_tunnel"),
        # 6in4 is a tunnel form (RFC 4213): decapsulated, but no VM here has
        # the inner IPv6 destination
        ("IPv6-in-IPv4 to an IPv6 address no VM here has",
         Ether(src=a.router_mac, dst=a.agent_mac) / IP(src=a.mux, dst=a.pa, proto=41) /
         IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(dport=53), "no_local_dip"),
        ("outer IPv4 checksum wrong",
         outer(chksum=0x1234) / syn(), "ip_csum"),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True, help="the router's end toward the agent")
    ap.add_argument("--router-mac", required=True)
    ap.add_argument("--agent-mac", required=True, help="the agent's uplink MAC")
    ap.add_argument("--prefix", required=True, help="the agent's DPDK file prefix")
    ap.add_argument("--pa", required=True)
    ap.add_argument("--other-pa", required=True)
    ap.add_argument("--mux", required=True)
    ap.add_argument("--dip", required=True, help="a DIP of this agent")
    ap.add_argument("--other-dip", required=True, help="a DIP of another agent")
    a = ap.parse_args()
    check = Checks()

    table = cases(a)
    expect = {}
    for _, _, counter in table:
        expect[counter] = expect.get(counter, 0) + REPEAT
    before = agent_counters(a.prefix)
    frames = [f for _, f, _ in table for _ in range(REPEAT)]
    sendp(frames, iface=a.iface, verbose=False)

    # wait (bounded) until the agent has read them all and answered what it
    # answers, then until its counters stand still
    steady(lambda: agent_counters(a.prefix), timeout=10,
           enough=lambda c: c.get("uplink_rx", 0) - before.get("uplink_rx", 0) >= len(frames))
    after = agent_counters(a.prefix)
    d = {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}
    print("# deltas: " + ", ".join(f"{k}={v}" for k, v in sorted(d.items()) if v))
    check(d.get("uplink_rx", 0) >= len(frames),
          f"the agent read all {len(frames)} frames: uplink_rx +{d.get('uplink_rx', 0)}")
    for desc, _, counter in table:
        print(f"#   {REPEAT} x {desc:52} -> {counter}")
    for counter, n in sorted(expect.items()):
        check(d.get(counter, 0) == n, f"{counter} +{d.get(counter, 0)}, want +{n}")
    drops = {k: v for k, v in d.items()
             if v and k not in AGENT_COUNTERS and k not in expect}
    check(not drops, f"no other drop reason moved: {drops}")
    # the valid echo requests reached the VM, whose replies passed through
    check(d.get("passthrough", 0) == REPEAT,
          f"the VM answered the {REPEAT} valid echo requests (passthrough "
          f"+{d.get('passthrough', 0)}) and nothing else reached a VM")
    return check.report("check_agent_drops")


if __name__ == "__main__":
    sys.exit(main())
