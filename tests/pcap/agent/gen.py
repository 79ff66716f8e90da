# SPDX-License-Identifier: BSD-3-Clause
"""Input for the agent case: one host agent (PA 10.0.1.1) with two VMs.

    router, muxes --- uplink (net_pcap0, 02:70:63:61:70:00) --- sluice-agent
                                                                 |       |
        vm11 10.1.0.11 (net_pcap1, 02:70:63:61:70:01) -----------+       |
        vm12 10.1.0.12 (net_pcap2, 02:70:63:61:70:02) -------------------+

Each row is (description, input port, frame, expectation). The expectation
is a drop reason (nothing may come out anywhere) or one of:

    to_vm(vm, mss=, quote_src=, whole=, ecn=)
                                  decapsulated to vm: the inner datagram as
                                  sent (whole: as given, for the last of a
                                  datagram's outer fragments), but the MSS
                                  clamped / the ICMP quote's source set to
                                  (dip, port) / its ECN field set to ecn
                                  (RFC 6040: from the outer header's)
    HELD                          an outer fragment the agent keeps for
                                  reassembly: nothing comes out for it
    dsr(src, sport=, mss=, quote_dst=)
                                  out the uplink to next_hop_mac with the
                                  source (and port) rewritten to the VIP's
    PASS                          out the uplink, datagram untouched
    PROBE_OUT                     out the uplink, untouched: a VM's answer to
                                  a health prober (never rewritten to the VIP)
    probe_in(vm)                  a prober's plain packet delivered to vm
                                  as sent (no tunnel)
    arp_reply(port, asked)        ARP reply on port for the address asked
    ECHO                          echo reply out the uplink

Every IPv4 packet a row builds (outer and inner) carries the row's tag as
its IP id, and echo requests carry it as ICMP id, so any output frame is
traced back to its row.

    /usr/bin/python3 gen.py DIR     writes DIR/<port>.pcap
"""
import sys

from scapy.layers.inet import ICMP, IP, TCP, UDP, fragment
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

from sluicetest import pcap as sp
from sluicetest.rows import Rows

PA = "10.0.1.1"
OTHER_PA = "10.0.2.1"
MUX = "10.255.0.1"
VIP = "192.0.2.10"
CLIENT = "198.51.100.7"
ROUTER = "203.0.113.1"
GATEWAY = "10.1.0.1"
CLAMP = 1400
PROBER = "10.0.1.254"             # the manager's health probes come from here
NEXT_HOP = "02:00:00:00:fe:11"
ROUTER_MAC = "02:00:00:00:fe:01"   # src of what arrives on the uplink
BCAST = "ff:ff:ff:ff:ff:ff"

VMS = [sp.AgentVM("vm11", "10.1.0.11", "02:00:00:01:01:11"),
       sp.AgentVM("vm12", "10.1.0.12", "02:00:00:01:01:12")]
SERVICES = [
    sp.Service(VIP, "tcp", 80, [sp.Backend("10.1.0.11", 8080, PA),
                                sp.Backend("10.1.0.12", 8080, PA),
                                sp.Backend("10.1.0.21", 8080, OTHER_PA)]),
    sp.Service(VIP, "udp", 53, [sp.Backend("10.1.0.11", 5353, PA)]),
]


def config():
    return sp.AgentConfig(PA, [MUX], VMS, SERVICES, next_hop_mac=NEXT_HOP, mss_clamp=CLAMP,
                          probers=[PROBER])


def to_vm(vm, mss=None, quote_src=None, whole=None, ecn=None):
    """whole: the inner datagram, when the row's frame holds only its last
    outer fragment; ecn: the ECN field the inner header leaves with, when
    not the one it was sent with."""
    return {"kind": "to_vm", "port": vm, "mss": mss, "quote_src": quote_src, "whole": whole,
            "ecn": ecn}


def dsr(src, sport=None, mss=None, quote_dst=None):
    return {"kind": "dsr", "port": "uplink", "src": src, "sport": sport, "mss": mss,
            "quote_dst": quote_dst}


def arp_reply(port, asked):
    return {"kind": "arp", "port": port, "asked": asked}


def probe_in(vm):
    return {"kind": "probe_in", "port": vm}


PASS = {"kind": "pass", "port": "uplink"}
HELD = {"kind": "held"}  # an outer fragment, kept until its datagram is whole
NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3  # the ECN field (RFC 3168 5)
PROBE_OUT = {"kind": "probe_out", "port": "uplink"}
ECHO = {"kind": "echo", "port": "uplink"}

LINUX_SYN_OPTS = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (12345, 0)), ("NOP", None),
                  ("WScale", 7)]


def rows():
    rs = Rows(0x5a1ce, 0x100)
    rnd, next_tag, payload, row = rs.rnd, rs.next_tag, rs.payload, rs.row

    def vm_mac(name):
        return [v.mac for v in VMS if v.name == name][0]

    def tunnel(inner, src=MUX, dst=PA, t=None, vlan=None, options=None, outer_fix=None, tos=0):
        """inner: a scapy IP packet or raw bytes; t: the tag (IP ids); tos:
        the outer TOS."""
        e = Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0))
        if vlan is not None:
            e = e / Dot1Q(vlan=vlan)
        o = IP(src=src, dst=dst, proto=4, id=t, ttl=63, flags="DF", tos=tos)
        if options is not None:
            o.options = options
        b = bytearray(bytes(e / o / Raw(bytes(inner))))
        if outer_fix:
            outer_fix(b, len(bytes(e)))
        return bytes(b)

    # -- 1, 2. Decapsulation to the VM owning the DIP; MSS clamping of SYNs.
    def syn(dip, opts, flags="S", n=0, sport=None):
        t = next_tag()
        return t, IP(src=CLIENT, dst=dip, id=t, ttl=rnd.randint(30, 120)) / TCP(
            sport=sport or rnd.randint(1024, 65535), dport=8080, flags=flags,
            seq=rnd.getrandbits(32), window=rnd.randint(1000, 65535), options=opts) / payload(n)

    for desc, dip, vm, opts, mss in [
            ("SYN MSS 1460 to vm11, clamped", "10.1.0.11", "vm11", [("MSS", 1460)], CLAMP),
            ("SYN MSS 1300 to vm11, not clamped", "10.1.0.11", "vm11", [("MSS", 1300)], None),
            ("SYN MSS 1400 (= clamp) to vm11", "10.1.0.11", "vm11", [("MSS", 1400)], None),
            ("SYN NOP + MSS 1460 (odd offset) to vm11, clamped", "10.1.0.11", "vm11",
             [("NOP", None), ("MSS", 1460)], CLAMP),
            ("SYN 3 NOPs + MSS 9000 (odd offset) to vm12, clamped", "10.1.0.12", "vm12",
             [("NOP", None)] * 3 + [("MSS", 9000)], CLAMP),
            ("SYN no options to vm12", "10.1.0.12", "vm12", [], None),
            ("SYN Linux options (MSS 1460 first) to vm12, clamped", "10.1.0.12", "vm12",
             LINUX_SYN_OPTS, CLAMP),
            ("SYN timestamp then MSS 65535 to vm11, clamped", "10.1.0.11", "vm11",
             [("Timestamp", (1, 2)), ("MSS", 65535)], CLAMP),
            ("SYN MSS 1300 then NOP + MSS 9000 (repeated) to vm12, the second clamped",
             "10.1.0.12", "vm12", [("MSS", 1300), ("NOP", None), ("MSS", 9000)], CLAMP)]:
        t, p = syn(dip, opts)
        row("decap: " + desc, "uplink", tunnel(p, t=t), to_vm(vm, mss=mss))

    t, p = syn("10.1.0.11", [("MSS", 1460)], flags="SA")
    row("decap: SYN-ACK (SYN set) MSS 1460 to vm11, clamped", "uplink", tunnel(p, t=t),
        to_vm("vm11", mss=CLAMP))
    for dip, vm, n in [("10.1.0.11", "vm11", 0), ("10.1.0.11", "vm11", 1),
                       ("10.1.0.12", "vm12", 1000), ("10.1.0.12", "vm12", 1399)]:
        t, p = syn(dip, [("NOP", None), ("NOP", None), ("Timestamp", (7, 9))], flags="PA", n=n)
        row("decap: TCP data (%d bytes) to %s" % (n, vm), "uplink", tunnel(p, t=t), to_vm(vm))

    def udp(dip, dport, n, csum=None):
        t = next_tag()
        u = UDP(sport=rnd.randint(1024, 65535), dport=dport)
        if csum is not None:
            u.chksum = csum
        return t, IP(src=CLIENT, dst=dip, id=t, ttl=57) / u / payload(n)

    t, p = udp("10.1.0.11", 5353, 33)
    row("decap: UDP 33 bytes to vm11:5353", "uplink", tunnel(p, t=t), to_vm("vm11"))
    t, p = udp("10.1.0.11", 5353, 12, csum=0)
    row("decap: UDP checksum 0 to vm11:5353", "uplink", tunnel(p, t=t), to_vm("vm11"))
    t, p = udp("10.1.0.12", 8080, 0)
    row("decap: UDP empty to vm12 (delivered by DIP alone)", "uplink", tunnel(p, t=t),
        to_vm("vm12"))
    t, p = syn("10.1.0.11", [("MSS", 1460)])
    row("decap: outer 802.1Q tag 5, SYN to vm11 (clamped, delivered untagged)", "uplink",
        tunnel(p, t=t, vlan=5), to_vm("vm11", mss=CLAMP))
    t, p = syn("10.1.0.12", [], flags="A", n=10)
    row("decap: outer IP options (IHL 6) to vm12", "uplink",
        tunnel(p, t=t, options=b"\x01\x01\x01\x00"), to_vm("vm12"))
    t, p = syn("10.1.0.11", [], flags="A", n=3)
    row("decap: Ethernet padding after the outer datagram (trimmed)", "uplink",
        tunnel(p, t=t) + b"\0" * 18, to_vm("vm11"))
    t = next_tag()
    p = IP(src=CLIENT, dst="10.1.0.11", id=t, ttl=50, options=b"\x94\x04\x00\x00") / TCP(
        sport=40010, dport=8080, flags="S", options=[("MSS", 1460)])
    row("decap: inner IP options, SYN MSS 1460 to vm11, clamped", "uplink", tunnel(p, t=t),
        to_vm("vm11", mss=CLAMP))

    # -- 7a. ICMP errors a mux forwarded: the quote shows VIP:vport -> client.
    def icmp_err(dip, qsrc, qsport, proto, typ=3, code=4, qlen=8):
        t = next_tag()
        if proto == "tcp":
            ql4 = TCP(sport=qsport, dport=40000, flags="SA", seq=rnd.getrandbits(32))
        else:
            ql4 = UDP(sport=qsport, dport=40001) / payload(20)
        quote = bytes(IP(src=qsrc, dst=CLIENT, id=rnd.getrandbits(16), ttl=61) / ql4)
        quote = quote[:20 + qlen]
        return t, IP(src=ROUTER, dst=dip, id=t, ttl=250) / ICMP(
            type=typ, code=code, nexthopmtu=1300 if (typ, code) == (3, 4) else 0) / Raw(quote)

    t, p = icmp_err("10.1.0.11", VIP, 80, "tcp")
    row("decap: ICMP frag-needed quoting VIP:80 -> client, to vm11, quote src -> DIP:8080",
        "uplink", tunnel(p, t=t), to_vm("vm11", quote_src=("10.1.0.11", 8080)))
    t, p = icmp_err("10.1.0.12", VIP, 80, "tcp", qlen=20)
    row("decap: ICMP frag-needed quoting VIP:80 (full TCP header), to vm12, -> 10.1.0.12:8080",
        "uplink", tunnel(p, t=t), to_vm("vm12", quote_src=("10.1.0.12", 8080)))
    t, p = icmp_err("10.1.0.11", VIP, 53, "udp", code=3, qlen=28)
    row("decap: ICMP port-unreachable quoting VIP:53/udp, to vm11, -> 10.1.0.11:5353",
        "uplink", tunnel(p, t=t), to_vm("vm11", quote_src=("10.1.0.11", 5353)))
    t, p = icmp_err("10.1.0.11", VIP, 80, "tcp", typ=11, code=0)
    row("decap: ICMP time-exceeded quoting VIP:80, to vm11, translated", "uplink",
        tunnel(p, t=t), to_vm("vm11", quote_src=("10.1.0.11", 8080)))
    t, p = icmp_err("10.1.0.11", "10.1.0.11", 22, "tcp")
    row("decap: ICMP error quoting a non-balanced flow (10.1.0.11:22), untouched", "uplink",
        tunnel(p, t=t), to_vm("vm11"))

    # -- 4. The agent's own address on the uplink.
    n = [0]

    def arp_req(target, op=1, pad=False, spa=None, sha=None):
        n[0] += 1
        sha = sha or "02:00:00:00:a0:%02x" % n[0]
        spa = spa or "10.0.1.%d" % (100 + n[0])
        dst = BCAST if op == 1 else sp.pcap_port_mac(0)
        b = bytes(Ether(src=sha, dst=dst) / ARP(op=op, hwsrc=sha, psrc=spa,
                                                hwdst="00:00:00:00:00:00", pdst=target))
        return b + (b"\0" * (60 - len(b)) if pad else b"")

    row("ARP who-has PA", "uplink", arp_req(PA), arp_reply("uplink", PA))
    row("ARP who-has PA, padded to 60 bytes", "uplink", arp_req(PA, pad=True),
        arp_reply("uplink", PA))
    row("ARP who-has another address on the uplink", "uplink", arp_req("10.0.1.2"),
        "arp_ignored")
    row("ARP who-has a VM's DIP on the uplink", "uplink", arp_req("10.1.0.11"), "arp_ignored")
    row("ARP reply (op 2) for PA on the uplink", "uplink", arp_req(PA, op=2), "arp_ignored")

    def ping(dst, k, src="10.0.1.254"):
        t = next_tag()
        return t, bytes(Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) /
                        IP(src=src, dst=dst, id=t, ttl=64) /
                        ICMP(type=8, id=t, seq=rnd.getrandbits(16)) / payload(k))

    t, f = ping(PA, 56)
    row("echo to PA, 56 bytes", "uplink", f, ECHO)
    t, f = ping(PA, 3, src="198.51.100.99")
    row("echo to PA, 3 bytes (odd) padded to 60", "uplink", f + b"\x5a" * (60 - len(f)), ECHO)
    t, f = ping("10.0.1.2", 56)
    row("echo to another address on the uplink", "uplink", f, "not_tunnel")

    # -- 2b. Outer fragments: a router between mux and host split a tunnel
    # packet whose client allowed fragmentation (the mux copies DF, here
    # clear). Held until the datagram is whole, then delivered as any other.
    def tunnel_frags(inner, t, size, src=MUX, dst=PA, proto=4):
        o = IP(src=src, dst=dst, proto=proto, id=t, ttl=63) / Raw(bytes(inner))
        return [bytes(Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) / f)
                for f in fragment(o, fragsize=size)]

    t, p = syn("10.1.0.11", [("NOP", None), ("NOP", None), ("Timestamp", (7, 9))],
               flags="PA", n=1300)
    fr = tunnel_frags(p, t, 800)
    assert len(fr) == 2
    row("outer fragments in order: first of 2, held", "uplink", fr[0], HELD)
    row("outer fragments in order: last of 2, whole: TCP 1300 bytes to vm11", "uplink",
        fr[1], to_vm("vm11", whole=bytes(p)))
    t, p = syn("10.1.0.12", [("MSS", 1460)], n=1000)
    fr = tunnel_frags(p, t, 400)
    assert len(fr) == 3
    row("outer fragments out of order: last of 3, held", "uplink", fr[2], HELD)
    row("outer fragments out of order: first of 3, held", "uplink", fr[0], HELD)
    row("outer fragments out of order: middle of 3, whole: SYN with 1000 bytes to vm12, "
        "clamped", "uplink", fr[1], to_vm("vm12", mss=CLAMP, whole=bytes(p)))
    t, p = syn("10.1.0.11", [], flags="PA", n=600)
    fr = tunnel_frags(p, t, 304)
    # DPDK's reassembly gives up on a datagram whose first fragment comes twice.
    row("outer fragments: first of 3 (then duplicated: given up)", "uplink", fr[0],
        "reassembly_failed")
    row("outer fragments: the same first fragment again", "uplink", fr[0], "reassembly_failed")
    t, p = syn("10.1.0.11", [], flags="PA", n=600)
    row("outer fragment of a tunnel from an unknown source", "uplink",
        tunnel_frags(p, t, 304, src="10.255.0.9")[0], "unknown_mux")
    t, p = syn("10.1.0.11", [], flags="PA", n=600)
    row("outer fragment of a tunnel to another PA", "uplink",
        tunnel_frags(p, t, 304, dst=OTHER_PA)[0], "not_our_pa")
    t, p = syn(PA, [], flags="PA", n=600)
    row("plain TCP fragment to the PA (not a tunnel: never reassembled)", "uplink",
        bytes(Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) /
              fragment(p, fragsize=304)[1]), "fragment")

    # -- 2c. ECN (RFC 6040 4.2): the mux copies the inner ECN field into the
    # outer header; a router on the way may mark the outer one CE, and the
    # agent carries the mark on to the inner header (its checksum updated)
    # or, over a Not-ECT inner header, drops the packet. DSCP AF41 (0x88)
    # in both headers, as the mux copies it, must stay.
    def ecn_udp(ecn, dip="10.1.0.11", n=20):
        t = next_tag()
        return t, IP(src=CLIENT, dst=dip, id=t, ttl=57, tos=0x88 | ecn) / UDP(
            sport=rnd.randint(1024, 65535), dport=5353) / payload(n)

    for desc, outer, inner, exp in [
            ("outer CE over inner ECT(0): the VM gets CE", CE, ECT0, to_vm("vm11", ecn=CE)),
            ("outer CE over inner ECT(1): the VM gets CE", CE, ECT1, to_vm("vm11", ecn=CE)),
            ("outer CE over inner CE: unchanged", CE, CE, to_vm("vm11")),
            ("outer CE over inner Not-ECT: dropped", CE, NOT_ECT, "ecn_not_ect"),
            ("outer ECT(0) over inner ECT(0): unchanged", ECT0, ECT0, to_vm("vm11")),
            ("outer ECT(1) over inner ECT(0): the VM gets ECT(1)", ECT1, ECT0,
             to_vm("vm11", ecn=ECT1)),
            ("outer ECT(0) over inner Not-ECT (an unused combination): unchanged", ECT0,
             NOT_ECT, to_vm("vm11"))]:
        t, p = ecn_udp(inner)
        row("decap ECN: " + desc, "uplink", tunnel(p, t=t, tos=0x88 | outer), exp)
    t, p = syn("10.1.0.12", [("MSS", 1460)])
    p.tos = ECT0
    row("decap ECN: outer CE over a SYN ECT(0) to vm12: CE, and clamped", "uplink",
        tunnel(p, t=t, tos=CE), to_vm("vm12", mss=CLAMP, ecn=CE))

    # A fragment keeps its own outer ECN field, and reassembly must not
    # lose a mark on any of them (RFC 3168 5.3), though DPDK keeps only the
    # first fragment's header; CE with a Not-ECT fragment beside it may not
    # be set, and the datagram is dropped.
    def with_tos(frame, tos):
        b = bytearray(frame)
        b[15] = tos
        return bytes(b[:14]) + sp.ip_csum_fixed(bytes(b[14:]))

    t, p = ecn_udp(ECT0, dip="10.1.0.12", n=1000)
    fr = tunnel_frags(p, t, 600)
    assert len(fr) == 2
    row("outer fragments, ECN: first of 2, ECT(0), held", "uplink", with_tos(fr[0], 0x8a), HELD)
    row("outer fragments, ECN: last of 2, marked CE: the VM gets CE", "uplink",
        with_tos(fr[1], 0x8b), to_vm("vm12", whole=bytes(p), ecn=CE))
    t, p = ecn_udp(ECT0, dip="10.1.0.12", n=1000)
    fr = tunnel_frags(p, t, 600)
    row("outer fragments, ECN: first of 2, Not-ECT, held", "uplink", with_tos(fr[0], 0x88),
        HELD)
    row("outer fragments, ECN: last of 2, CE beside a Not-ECT one: dropped", "uplink",
        with_tos(fr[1], 0x8b), "ecn_not_ect")

    # -- 3. What the uplink refuses.
    t, p = syn("10.1.0.11", [("MSS", 1460)])
    row("IP-in-IP to another PA", "uplink", tunnel(p, t=t, dst=OTHER_PA), "not_our_pa")
    t, p = syn("10.1.0.11", [("MSS", 1460)])
    row("IP-in-IP from an unknown source", "uplink", tunnel(p, t=t, src="10.255.0.9"),
        "unknown_mux")
    t, p = syn("10.1.0.11", [], flags="PA", n=100)
    row("IP-in-IP, inner truncated (inner total 140, 60 bytes present)", "uplink",
        tunnel(bytes(p)[:60], t=t), "inner_malformed")
    t, p = syn("10.1.0.11", [], flags="PA", n=10)
    bad = bytearray(bytes(p))
    bad[10] ^= 0x5a
    row("IP-in-IP, bad inner IP checksum", "uplink", tunnel(bad, t=t), "inner_malformed")
    t = next_tag()
    v6 = bytes(IPv6(src="2001:db8::7", dst="2001:db8::11") / UDP(sport=1, dport=2) / payload(8))
    row("IP-in-IP, inner version 6", "uplink", tunnel(v6, t=t), "inner_malformed")
    t = next_tag()
    row("IP-in-IP, only 10 bytes inside", "uplink", tunnel(b"\x45" + b"\0" * 9, t=t),
        "inner_malformed")
    t, p = syn("10.1.0.21", [("MSS", 1460)])
    row("IP-in-IP to a DIP on another host (10.1.0.21)", "uplink", tunnel(p, t=t),
        "no_local_dip")
    t, p = syn("10.1.0.99", [("MSS", 1460)])
    row("IP-in-IP to an unknown DIP", "uplink", tunnel(p, t=t), "no_local_dip")
    t, p = syn(PA, [("MSS", 1460)])
    row("plain TCP to the PA", "uplink",
        Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) / p, "not_tunnel")
    t, p = syn("10.1.0.11", [("MSS", 1460)])
    row("plain TCP to a DIP", "uplink",
        Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) / p, "not_tunnel")
    t = next_tag()
    p = IP(src=PROBER, dst="10.1.0.11", id=t, ttl=64) / TCP(
        sport=45000, dport=8080, flags="S", seq=rnd.getrandbits(32), options=[("MSS", 1460)])
    row("health probe: plain SYN from the prober to vm11's DIP:8080, delivered as sent",
        "uplink", Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) / p, probe_in("vm11"))
    t = next_tag()
    p = IP(src=PROBER, dst="10.1.0.12", id=t, ttl=64) / TCP(sport=45001, dport=8080, flags="A")
    row("health probe: plain ACK from the prober to vm12's DIP:8080, with Ethernet padding",
        "uplink", Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) / p / Raw(b"\0" * 6),
        probe_in("vm12"))
    t = next_tag()
    p = IP(src=PROBER, dst="10.1.0.21", id=t, ttl=64) / TCP(sport=45002, dport=8080, flags="S")
    row("health probe to a DIP on another host", "uplink",
        Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) / p, "not_tunnel")
    t, p = udp("10.1.0.11", 5353, 8)
    row("plain UDP to a DIP", "uplink",
        Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) / p, "not_tunnel")
    t = next_tag()
    row("IPv6-in-IPv4 (proto 41) to the PA, for a DIP no VM has", "uplink",
        Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0)) /
        IP(src=MUX, dst=PA, proto=41, id=t) / Raw(v6), "no_local_dip")

    def bad_csum(b, l2):
        b[l2 + 10] ^= 0xff
    t, p = syn("10.1.0.11", [("MSS", 1460)])
    row("IP-in-IP, bad outer checksum", "uplink", tunnel(p, t=t, outer_fix=bad_csum),
        "ip_csum")
    t, p = syn("10.1.0.11", [("MSS", 1460)])
    row("IP-in-IP cut inside the outer header (24 bytes)", "uplink",
        tunnel(p, t=t)[:24], "truncated")
    t, p = syn("10.1.0.11", [("MSS", 1460)])
    row("IP-in-IP, outer total length beyond the frame", "uplink",
        tunnel(p, t=t)[:14 + 20 + 30], "ip_len")
    row("plain IPv6 on the uplink, from no prober", "uplink",
        Ether(src=ROUTER_MAC, dst=sp.pcap_port_mac(0), type=0x86DD) / Raw(v6),
        "not_tunnel")

    # -- 5. VM -> uplink: direct server return.
    def vm_frame(vm, ip):
        return Ether(src=vm_mac(vm), dst=sp.pcap_port_mac(1 + ["vm11", "vm12"].index(vm))) / ip

    def reply(vm, src, sport, opts=(), flags="SA", n=0, dport=40000):
        t = next_tag()
        return vm_frame(vm, IP(src=src, dst=CLIENT, id=t, ttl=64, flags="DF") / TCP(
            sport=sport, dport=dport, flags=flags, seq=rnd.getrandbits(32),
            ack=rnd.getrandbits(32), options=list(opts)) / payload(n))

    row("DSR: SYN-ACK 10.1.0.11:8080 MSS 1460 -> VIP:80, clamped", "vm11",
        reply("vm11", "10.1.0.11", 8080, [("MSS", 1460)]), dsr(VIP, 80, mss=CLAMP))
    row("DSR: SYN-ACK 10.1.0.11:8080 NOP+MSS 1460 (odd offset) -> VIP:80, clamped", "vm11",
        reply("vm11", "10.1.0.11", 8080, [("NOP", None), ("MSS", 1460)]),
        dsr(VIP, 80, mss=CLAMP))
    row("DSR: SYN-ACK 10.1.0.11:8080 MSS 9000 then MSS 1460 (repeated) -> VIP:80, both "
        "clamped", "vm11", reply("vm11", "10.1.0.11", 8080, [("MSS", 9000), ("MSS", 1460)]),
        dsr(VIP, 80, mss=CLAMP))
    row("DSR: SYN-ACK 10.1.0.11:8080 MSS 1300 -> VIP:80", "vm11",
        reply("vm11", "10.1.0.11", 8080, [("MSS", 1300)]), dsr(VIP, 80))
    row("DSR: SYN-ACK 10.1.0.11:8080 Linux options -> VIP:80, clamped", "vm11",
        reply("vm11", "10.1.0.11", 8080, LINUX_SYN_OPTS), dsr(VIP, 80, mss=CLAMP))
    row("DSR: data 10.1.0.11:8080, 1200 bytes -> VIP:80", "vm11",
        reply("vm11", "10.1.0.11", 8080, flags="PA", n=1200), dsr(VIP, 80))
    row("DSR: FIN 10.1.0.11:8080 -> VIP:80", "vm11",
        reply("vm11", "10.1.0.11", 8080, flags="FA", dport=40123), dsr(VIP, 80))
    row("DSR: SYN-ACK 10.1.0.12:8080 (vm12) MSS 1460 -> VIP:80, clamped", "vm12",
        reply("vm12", "10.1.0.12", 8080, [("MSS", 1460)]), dsr(VIP, 80, mss=CLAMP))
    row("DSR: data 10.1.0.12:8080 (vm12), 1 byte -> VIP:80", "vm12",
        reply("vm12", "10.1.0.12", 8080, flags="PA", n=1), dsr(VIP, 80))

    def vm_udp(vm, src, sport, n, csum=None):
        t = next_tag()
        u = UDP(sport=sport, dport=40001)
        if csum is not None:
            u.chksum = csum
        return vm_frame(vm, IP(src=src, dst=CLIENT, id=t, ttl=64) / u / payload(n))

    row("DSR: UDP 10.1.0.11:5353 -> VIP:53", "vm11", vm_udp("vm11", "10.1.0.11", 5353, 77),
        dsr(VIP, 53))
    row("DSR: UDP 10.1.0.11:5353 checksum 0 -> VIP:53, stays 0", "vm11",
        vm_udp("vm11", "10.1.0.11", 5353, 40, csum=0), dsr(VIP, 53))
    t = next_tag()
    row("probe answer: SYN-ACK 10.1.0.11:8080 -> the prober, untouched (not DSR)", "vm11",
        vm_frame("vm11", IP(src="10.1.0.11", dst=PROBER, id=t, ttl=64, flags="DF") /
                 TCP(sport=8080, dport=45000, flags="SA", seq=rnd.getrandbits(32),
                     ack=rnd.getrandbits(32), options=[("MSS", 1460)])), PROBE_OUT)
    row("pass: TCP 10.1.0.11:22 (not balanced)", "vm11",
        reply("vm11", "10.1.0.11", 22, [("MSS", 1460)]), PASS)
    row("pass: UDP 10.1.0.11:8080 (only TCP is balanced there)", "vm11",
        vm_udp("vm11", "10.1.0.11", 8080, 9), PASS)
    row("pass: UDP 10.1.0.12:5353 from vm12 (5353/udp balanced on vm11 only)", "vm12",
        vm_udp("vm12", "10.1.0.12", 5353, 9), PASS)
    row("drop: spoofed source 10.1.0.12:8080 on vm11's port", "vm11",
        reply("vm11", "10.1.0.12", 8080, [("MSS", 1460)]), "spoofed_src")
    t = next_tag()
    row("drop: IP-in-IP from vm11 posing as the mux", "vm11",
        vm_frame("vm11", IP(src="10.1.0.11", dst="10.0.2.1", id=t, proto=4) /
                 IP(src=CLIENT, dst="10.1.0.21", id=t) / TCP(sport=40000, dport=8080)),
        "tunnel_inbound")
    t = next_tag()
    row("pass: ICMP echo request from vm11 (clients are not balanced)", "vm11",
        vm_frame("vm11", IP(src="10.1.0.11", dst="8.8.8.8", id=t) / ICMP(type=8, id=t) /
                 payload(16)), PASS)
    t = next_tag()
    row("pass: first fragment from vm11:8080, untouched", "vm11",
        vm_frame("vm11", IP(src="10.1.0.11", dst=CLIENT, id=t, flags="MF") /
                 TCP(sport=8080, dport=40000, flags="PA") / payload(64)), PASS)
    bad = bytearray(bytes(reply("vm11", "10.1.0.11", 8080, [("MSS", 1460)])))
    bad[14 + 10] ^= 0x33
    row("VM frame with a bad IP checksum", "vm11", bad, "ip_csum")

    # -- 7b. ICMP error from a VM about a client's datagram to DIP:dport.
    t = next_tag()
    q = bytes(IP(src=CLIENT, dst="10.1.0.11", id=rnd.getrandbits(16), ttl=55) /
              UDP(sport=40001, dport=5353) / payload(24))
    row("DSR: ICMP port-unreachable from vm11 quoting client -> 10.1.0.11:5353, "
        "-> src VIP, quote dst VIP:53", "vm11",
        vm_frame("vm11", IP(src="10.1.0.11", dst=CLIENT, id=t, ttl=64) /
                 ICMP(type=3, code=3) / Raw(q)),
        dsr(VIP, quote_dst=(VIP, 53)))
    t = next_tag()
    q = bytes(IP(src=CLIENT, dst="10.1.0.11", id=rnd.getrandbits(16), ttl=55) /
              TCP(sport=40002, dport=8080, flags="A"))[:28]
    row("DSR: ICMP frag-needed from vm11 quoting client -> 10.1.0.11:8080 (8 bytes), "
        "-> src VIP, quote dst VIP:80", "vm11",
        vm_frame("vm11", IP(src="10.1.0.11", dst=CLIENT, id=t, ttl=64) /
                 ICMP(type=3, code=4, nexthopmtu=1280) / Raw(q)),
        dsr(VIP, quote_dst=(VIP, 80)))
    t = next_tag()
    q = bytes(IP(src=CLIENT, dst="10.1.0.11", id=rnd.getrandbits(16), ttl=55) /
              UDP(sport=40001, dport=9999) / payload(4))
    row("pass: ICMP port-unreachable from vm11 about a non-balanced port", "vm11",
        vm_frame("vm11", IP(src="10.1.0.11", dst=CLIENT, id=t, ttl=64) /
                 ICMP(type=3, code=3) / Raw(q)), PASS)

    # -- 6. Proxy ARP on the VM ports: the agent is every VM's gateway.
    row("vm11: ARP who-has gateway", "vm11",
        arp_req(GATEWAY, spa="10.1.0.11", sha=vm_mac("vm11")),
        arp_reply("vm11", GATEWAY))
    row("vm11: ARP who-has vm12's DIP (answered: all traffic via the agent)", "vm11",
        arp_req("10.1.0.12", spa="10.1.0.11", sha=vm_mac("vm11")),
        arp_reply("vm11", "10.1.0.12"))
    row("vm11: ARP who-has its own DIP (duplicate address probe)", "vm11",
        arp_req("10.1.0.11", spa="0.0.0.0", sha=vm_mac("vm11")), "arp_ignored")
    row("vm12: ARP who-has gateway, padded to 60 bytes", "vm12",
        arp_req(GATEWAY, spa="10.1.0.12", sha=vm_mac("vm12"), pad=True),
        arp_reply("vm12", GATEWAY))
    row("vm12: ARP reply (op 2) from the VM", "vm12",
        arp_req(GATEWAY, op=2, spa="10.1.0.12", sha=vm_mac("vm12")),
        "arp_ignored")
    return rs.out


if __name__ == "__main__":
    sp.write_port_pcaps(rows(), sys.argv[1] if len(sys.argv) > 1 else ".")
