# SPDX-License-Identifier: BSD-3-Clause
"""Input for the agent6 case: a dual-stack host agent (PA 10.0.1.1 and PA6
2001:db8:ff::11, gateway6 fe80::1) with two VMs.

    muxes 10.255.0.1, 2001:db8:ff::1 --- uplink (net_pcap0) --- sluice-agent
        vm61 10.1.0.61, 2001:db8:6::61 (net_pcap1) ----------------+   |
        vm62           2001:db8:6::62 (net_pcap2) ---------------------+

Each row is (description, input port, frame, expectation): a drop reason
(nothing comes out anywhere), or one of the expectations below. Every row
has a tag, which its packets carry where the agent leaves it alone: the
IPv6 flow label of an IPv6 packet (inner or plain), the IP id of an IPv4
one, the echo id of a ping; neighbor solicitations come from a MAC of the
row's own, and the advertisement goes back to it.

    to_vm(vm, mss=, quote_src=, whole=, ecn=)
                                          decapsulated to vm, as sent but
                                          the MSS clamped, the ICMPv6
                                          quote's source set to (dip, port)
                                          or the ECN field set to ecn (RFC
                                          6040: from the outer header's)
    HELD                                  an outer fragment kept for reassembly
    dsr(src, sport=, mss=, quote_dst=)    out the uplink as from VIP:vport
    PASS, PROBE_OUT                       out the uplink untouched
    probe_in(vm)                          a prober's plain packet to vm as sent
    na(port, target, router)              neighbor advertisement on port
    ECHO                                  echo reply out the uplink

    /usr/bin/python3 gen.py DIR     writes DIR/<port>.pcap
"""
import sys

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import (ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6MLReport2,
                                ICMPv6ND_NS, ICMPv6ND_RS, ICMPv6NDOptSrcLLAddr,
                                ICMPv6PacketTooBig, IPv6, IPv6ExtHdrFragment)
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from sluicetest import pcap as sp
from sluicetest.rows import Rows

PA = "10.0.1.1"
PA6 = "2001:db8:ff::11"
OTHER_PA6 = "2001:db8:ff::12"
MUX = "10.255.0.1"
MUX6 = "2001:db8:ff::1"
GATEWAY6 = "fe80::1"
VIP6 = "2001:db8::10"
VIP4 = "192.0.2.10"
CLIENT6 = "2001:db8:c::7"
CLIENT4 = "198.51.100.7"
ROUTER6 = "2001:db8:ff00::1"
PROBER6 = "2001:db8:ff::254"
CLAMP = 1400
CLAMP6 = CLAMP - 20 - 20   # the default: 20 for the IPv6 header, 20 more for a pa6
NEXT_HOP = "02:00:00:00:fe:11"
ROUTER_MAC = "02:00:00:00:fe:01"

VMS = [sp.AgentVM("vm61", "10.1.0.61", "02:00:00:01:01:61", dip6="2001:db8:6::61"),
       sp.AgentVM("vm62", None, "02:00:00:01:01:62", dip6="2001:db8:6::62")]
SERVICES = [
    sp.Service(VIP6, "tcp", 80, [sp.Backend("2001:db8:6::61", 8080, PA6),     # 6in6
                                 sp.Backend("2001:db8:6::62", 8080, PA),      # 6in4
                                 sp.Backend("2001:db8:6::71", 8080, OTHER_PA6)]),
    sp.Service(VIP6, "udp", 53, [sp.Backend("2001:db8:6::62", 5353, PA6)]),
    sp.Service(VIP4, "tcp", 80, [sp.Backend("10.1.0.61", 8080, PA6)]),        # 4in6
]


def config():
    return sp.AgentConfig(PA, [MUX, MUX6], VMS, SERVICES, next_hop_mac=NEXT_HOP, mss_clamp=CLAMP,
                          probers=[PROBER6], pa6=PA6, gateway6=GATEWAY6)


def to_vm(vm, mss=None, quote_src=None, whole=None, ecn=None):
    return {"kind": "to_vm", "port": vm, "mss": mss, "quote_src": quote_src, "whole": whole,
            "ecn": ecn}


def dsr(src, sport=None, mss=None, quote_dst=None):
    return {"kind": "dsr", "port": "uplink", "src": src, "sport": sport, "mss": mss,
            "quote_dst": quote_dst}


def na(port, target, router):
    return {"kind": "na", "port": port, "target": target, "router": router}


def probe_in(vm):
    return {"kind": "probe_in", "port": vm}


PASS = {"kind": "pass", "port": "uplink"}
HELD = {"kind": "held"}
NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3  # the ECN field (RFC 3168 5)
PROBE_OUT = {"kind": "probe_out", "port": "uplink"}
ECHO = {"kind": "echo", "port": "uplink"}
SYN_OPTS = [("MSS", 1460), ("SAckOK", b""), ("WScale", 7)]


def rows():
    rs = Rows(0x6a6e, 0x600)
    rnd, next_tag, body, row = rs.rnd, rs.next_tag, rs.payload, rs.row

    def up(p):
        return Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) / p

    def t6(inner, src=MUX6, dst=PA6, tc=0):
        return up(IPv6(src=src, dst=dst, hlim=63, tc=tc, nh=41 if inner.version == 6 else 4) /
                  inner)

    def t4(inner, src=MUX, dst=PA, tos=0):
        return up(IP(src=src, dst=dst, proto=41 if inner.version == 6 else 4, ttl=63, tos=tos) /
                  inner)

    def syn6(dip, t, dport=8080):
        return IPv6(src=CLIENT6, dst=dip, fl=t, hlim=60) / TCP(
            sport=40000 + t % 1000, dport=dport, flags="S", seq=rnd.getrandbits(32),
            options=SYN_OPTS)

    def syn4(dip, t):
        return IP(src=CLIENT4, dst=dip, id=t, ttl=60) / TCP(
            sport=40000 + t % 1000, dport=8080, flags="S", options=SYN_OPTS)

    # -- Decapsulation, all four forms, MSS clamped by the inner family.
    t = next_tag()
    row("6in6 SYN to vm61's DIP6", "uplink", t6(syn6("2001:db8:6::61", t)),
        to_vm("vm61", mss=CLAMP6))
    t = next_tag()
    row("6in4 SYN to vm62's DIP6", "uplink", t4(syn6("2001:db8:6::62", t)),
        to_vm("vm62", mss=CLAMP6))
    t = next_tag()
    row("4in6 SYN to vm61's DIP", "uplink", t6(syn4("10.1.0.61", t)), to_vm("vm61", mss=CLAMP))
    t = next_tag()
    row("4in4 SYN to vm61's DIP", "uplink", t4(syn4("10.1.0.61", t)), to_vm("vm61", mss=CLAMP))
    t = next_tag()
    row("6in6 UDP to vm62", "uplink", t6(IPv6(src=CLIENT6, dst="2001:db8:6::62", fl=t) /
                                          UDP(sport=999, dport=5353) / body(30)),
        to_vm("vm62"))
    t = next_tag()
    row("6in6 ACK with data, 1200 bytes", "uplink",
        t6(IPv6(src=CLIENT6, dst="2001:db8:6::61", fl=t) / TCP(sport=40001, dport=8080,
                                                              flags="A") / body(1140)),
        to_vm("vm61"))
    # -- Refused tunnels.
    t = next_tag()
    row("6in6 from a mux not listed", "uplink", t6(syn6("2001:db8:6::61", t),
                                                    src="2001:db8:ff::9"), "unknown_mux")
    t = next_tag()
    row("6in6 to another PA6", "uplink", t6(syn6("2001:db8:6::61", t), dst=OTHER_PA6),
        "not_our_pa")
    t = next_tag()
    row("6in6 from the IPv4 mux's address family's twin: not a listed IPv6 mux", "uplink",
        t6(syn6("2001:db8:6::61", t), src="::ffff:10.255.0.1"), "unknown_mux")
    t = next_tag()
    row("6in6 to a DIP6 no VM has", "uplink", t6(syn6("2001:db8:6::71", t)), "no_local_dip")
    t = next_tag()
    row("6in6, the inner packet cut short", "uplink",
        up(IPv6(src=MUX6, dst=PA6, nh=41) / Raw(bytes(syn6("2001:db8:6::61", t))[:50])),
        "inner_malformed")
    t = next_tag()
    row("4in6 holding an IPv6 packet", "uplink",
        up(IPv6(src=MUX6, dst=PA6, nh=4) / syn6("2001:db8:6::61", t)), "inner_malformed")
    t = next_tag()
    row("plain IPv6 to vm61 from no prober", "uplink", up(syn6("2001:db8:6::61", t)),
        "not_tunnel")
    # -- Outer IPv6 fragments: the first held, the last brings the whole.
    t = next_tag()
    inner = IPv6(src=CLIENT6, dst="2001:db8:6::61", fl=t) / TCP(sport=40002, dport=8080,
                                                               flags="A") / body(1300)
    outer = IPv6(src=MUX6, dst=PA6, nh=44) / IPv6ExtHdrFragment(nh=41, id=0x777, m=1, offset=0)
    raw = bytes(inner)
    cut = 1232
    row("6in6 outer fragment 1 of 2", "uplink",
        up(outer / Raw(raw[:cut])), HELD)
    last = IPv6(src=MUX6, dst=PA6, nh=44) / IPv6ExtHdrFragment(nh=41, id=0x777, m=0,
                                                               offset=cut // 8)
    row("6in6 outer fragment 2 of 2", "uplink", up(last / Raw(raw[cut:])),
        to_vm("vm61", whole=raw))
    # -- ECN (RFC 6040 4.2): a CE mark a router put on the outer header (IPv6
    # traffic class, IPv4 TOS) goes on to the inner one (traffic class, or
    # TOS with its checksum updated); over a Not-ECT inner header the packet
    # is dropped. DSCP AF41 (0x88), copied by the mux, stays.
    def udp6(dip, t, ecn, n=30):
        return IPv6(src=CLIENT6, dst=dip, fl=t, tc=0x88 | ecn) / UDP(sport=999, dport=5353) / \
            body(n)

    t = next_tag()
    row("ECN: 6in6, outer CE over inner ECT(0): vm62 gets CE", "uplink",
        t6(udp6("2001:db8:6::62", t, ECT0), tc=0x88 | CE), to_vm("vm62", ecn=CE))
    t = next_tag()
    row("ECN: 4in6, outer CE over inner ECT(1): vm61 gets CE, IPv4 checksum updated", "uplink",
        t6(IP(src=CLIENT4, dst="10.1.0.61", id=t, ttl=60, tos=0x88 | ECT1) /
           TCP(sport=40000 + t % 1000, dport=8080, flags="A") / body(20), tc=0x88 | CE),
        to_vm("vm61", ecn=CE))
    t = next_tag()
    row("ECN: 6in4, outer CE over inner Not-ECT: dropped", "uplink",
        t4(udp6("2001:db8:6::62", t, NOT_ECT), tos=0x88 | CE), "ecn_not_ect")
    t = next_tag()
    row("ECN: 6in6, outer CE over inner Not-ECT: dropped", "uplink",
        t6(udp6("2001:db8:6::62", t, NOT_ECT), tc=0x88 | CE), "ecn_not_ect")
    t = next_tag()
    row("ECN: 6in6, outer ECT(0) over inner ECT(0): unchanged", "uplink",
        t6(udp6("2001:db8:6::62", t, ECT0), tc=0x88 | ECT0), to_vm("vm62"))
    t = next_tag()
    row("ECN: 6in4, outer CE over inner ECT(0): vm62 gets CE", "uplink",
        t4(udp6("2001:db8:6::62", t, ECT0), tos=0x88 | CE), to_vm("vm62", ecn=CE))
    # Outer IPv6 fragments: the mark on the second is not lost (RFC 3168 5.3).
    t = next_tag()
    raw = bytes(udp6("2001:db8:6::62", t, ECT0, n=1300))
    for i, (a, b, m, tc) in enumerate([(0, cut, 1, 0x88 | ECT0), (cut, None, 0, 0x88 | CE)]):
        f = IPv6(src=MUX6, dst=PA6, nh=44, tc=tc) / IPv6ExtHdrFragment(
            nh=41, id=0x778, m=m, offset=a // 8) / Raw(raw[a:b])
        row("ECN: 6in6 outer fragment %d of 2, %s" % (i + 1, "ECT(0)" if m else "CE"), "uplink",
            up(f), HELD if m else to_vm("vm62", whole=raw, ecn=CE))
    # -- ICMPv6 errors a router sends about VIP6 -> client, forwarded by a mux.
    t = next_tag()
    quote = IPv6(src=VIP6, dst=CLIENT6, hlim=50) / TCP(sport=80, dport=40100, flags="SA")
    err = IPv6(src=ROUTER6, dst="2001:db8:6::61", fl=t) / ICMPv6PacketTooBig(mtu=1280) / \
        Raw(bytes(quote)[:48])
    row("ICMPv6 packet too big about VIP6:80 -> client, to vm61", "uplink", t6(err),
        to_vm("vm61", quote_src=("2001:db8:6::61", 8080)))
    # -- For the agent itself on the uplink.
    n = [0]

    def ns(port_name, target, src=None, dst=None, opt=True):
        n[0] += 1
        mac = "02:00:00:00:d6:%02x" % n[0]
        b = sp.v6.ip6_bytes(target)
        grp = "ff02::1:ff%02x:%02x%02x" % (b[13], b[14], b[15])
        p = Ether(src=mac, dst="33:33:ff:%02x:%02x:%02x" % (b[13], b[14], b[15])) / \
            IPv6(src=src or ("2001:db8:ff::%x" % (0x300 + n[0])), dst=dst or grp, hlim=255) / \
            ICMPv6ND_NS(tgt=target)
        if opt:
            p = p / ICMPv6NDOptSrcLLAddr(lladdr=mac)
        return p

    row("NS on the uplink for PA6", "uplink", ns("uplink", PA6), na("uplink", PA6, False))
    row("NS on the uplink for another address", "uplink", ns("uplink", "2001:db8:ff::99"),
        "nd_ignored")
    row("NS on the uplink for the VMs' gateway6", "uplink", ns("uplink", GATEWAY6),
        "nd_ignored")
    t = next_tag()
    row("echo to PA6", "uplink", up(IPv6(src=ROUTER6, dst=PA6) / ICMPv6EchoRequest(id=t) /
                                   body(24)), ECHO)
    t = next_tag()
    row("health probe: plain IPv6 SYN from the prober to vm61's DIP6", "uplink",
        up(IPv6(src=PROBER6, dst="2001:db8:6::61", fl=t) / TCP(sport=45000, dport=8080,
                                                              flags="S")), probe_in("vm61"))

    # -- From the VMs.
    def from_vm(desc, name, p, expect):
        """A row of p sent by VM name, on its port."""
        row(desc, name, Ether(src=[v.mac for v in VMS if v.name == name][0],
                              dst=sp.pcap_port_mac(1 + ["vm61", "vm62"].index(name))) / p,
            expect)

    def tagged(src, dst):
        """The IP header of a row from a VM, carrying the next tag: the flow
        label of IPv6, the id of IPv4 (by the family of src)."""
        t = next_tag()
        return IPv6(src=src, dst=dst, fl=t) if sp.v6.is_v6(src) else IP(src=src, dst=dst, id=t)

    row("vm61 solicits its gateway6", "vm61", ns("vm61", GATEWAY6, src="fe80::61"),
        na("vm61", GATEWAY6, True))
    row("vm62 solicits its gateway6 from its DIP6, no option", "vm62",
        ns("vm62", GATEWAY6, src="2001:db8:6::62", opt=False), na("vm62", GATEWAY6, True))
    row("vm61's duplicate address detection for its own DIP6", "vm61",
        ns("vm61", "2001:db8:6::61", src="::", opt=False), "nd_ignored")
    from_vm("vm61's router solicitation", "vm61",
            IPv6(src="fe80::61", dst="ff02::2", hlim=255) / ICMPv6ND_RS(), "vm_link_local")
    from_vm("vm61's MLDv2 report", "vm61",
            IPv6(src="fe80::61", dst="ff02::16", hlim=1) / ICMPv6MLReport2(), "vm_link_local")
    from_vm("vm61's SYN from its DIP6 to its gateway6 fe80::1: kept on its link", "vm61",
            tagged("2001:db8:6::61", GATEWAY6) / TCP(sport=5001, dport=22, flags="S"),
            "vm_link_local")
    from_vm("vm62's UDP from its DIP6 to febf::9 (the top of fe80::/10): kept on its link",
            "vm62", tagged("2001:db8:6::62", "febf::9") / UDP(sport=5, dport=6), "vm_link_local")
    from_vm("vm61's SYN-ACK from DIP6:8080: DSR as VIP6:80, MSS clamped", "vm61",
            tagged("2001:db8:6::61", CLIENT6) /
            TCP(sport=8080, dport=40000, flags="SA", options=SYN_OPTS),
            dsr(VIP6, sport=80, mss=CLAMP6))
    from_vm("vm62's UDP reply from DIP6:5353: DSR as VIP6:53", "vm62",
            tagged("2001:db8:6::62", CLIENT6) / UDP(sport=5353, dport=999) / body(40),
            dsr(VIP6, sport=53))
    from_vm("vm61's IPv4 SYN-ACK from 10.1.0.61:8080: DSR as VIP4:80 (its PA is IPv6)", "vm61",
            tagged("10.1.0.61", CLIENT4) /
            TCP(sport=8080, dport=40000, flags="SA", options=SYN_OPTS),
            dsr(VIP4, sport=80, mss=CLAMP))
    quote = IPv6(src=CLIENT6, dst="2001:db8:6::62", hlim=60) / UDP(sport=999, dport=5353)
    from_vm("vm62's port unreachable about client -> DIP6:5353", "vm62",
            tagged("2001:db8:6::62", CLIENT6) / ICMPv6DestUnreach(code=4) / Raw(bytes(quote)),
            dsr(VIP6, quote_dst=(VIP6, 53)))
    from_vm("vm61 sending from another address", "vm61",
            tagged("2001:db8:6::99", CLIENT6) / UDP(sport=5, dport=6), "spoofed_src")
    from_vm("vm62 sending IPv4 (it has no IPv4 DIP)", "vm62",
            tagged("10.1.0.62", CLIENT4) / UDP(sport=5, dport=6), "spoofed_src")
    from_vm("vm61 answering the IPv6 prober", "vm61",
            tagged("2001:db8:6::61", PROBER6) / TCP(sport=8080, dport=45000, flags="SA"),
            PROBE_OUT)
    from_vm("vm61's own IPv6 traffic, from a port no service has", "vm61",
            tagged("2001:db8:6::61", "2001:db8:e::1") / TCP(sport=5000, dport=443, flags="S"),
            PASS)
    return rs.out


if __name__ == "__main__":
    sp.write_port_pcaps(rows(), sys.argv[1] if len(sys.argv) > 1 else ".")
