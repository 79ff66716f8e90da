# SPDX-License-Identifier: BSD-3-Clause
"""Input for the malformed case: a table of frames the mux must not forward,
each with the drop reason it must be counted under (common/lb_drop.h names).

To add a case, append one row to TABLE:
    ("what is wrong with it", frame (scapy or bytes), "drop_reason"),

frames() interleaves the table with good packets (one before each row and
one at the end), so every bad frame sits between packets that must pass.

    /usr/bin/python3 gen.py DIR     writes DIR/malformed.pcap
"""
import os
import struct
import sys

from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import checksum

from sluicetest import pcap as sp

VIP = "192.0.2.60"
TUNNEL = "10.255.0.1"
CLIENT = "198.51.100.7"
SERVICES = [
    sp.Service(VIP, "tcp", 80, [sp.Backend("10.6.0.1", 8080, "10.0.60.1"),
                                sp.Backend("10.6.0.2", 8080, "10.0.60.2")]),
    sp.Service(VIP, "udp", 53, [sp.Backend("10.6.0.3", 53, "10.0.60.3")]),
]


def E(**kw):
    kw.setdefault("src", sp.CLIENT_MAC)
    kw.setdefault("dst", sp.ROUTER_MAC)
    return Ether(**kw)


def tcp(**kw):
    return E() / IP(src=CLIENT, dst=VIP, **kw) / TCP(sport=1234, dport=80, flags="S")


def mangle(frame, l2=14, ver_ihl=None, total=None, cut=None, bad_csum=False):
    """Edit the IPv4 header of a frame and recompute its checksum (unless
    bad_csum); cut= keeps only that many bytes of the datagram."""
    b = bytearray(bytes(frame))
    if cut is not None:
        b = b[:l2 + cut]
    if ver_ihl is not None:
        b[l2] = ver_ihl
    if total is not None:
        b[l2 + 2:l2 + 4] = struct.pack("!H", total)
    b[l2 + 10:l2 + 12] = b"\0\0"
    ck = checksum(bytes(b[l2:l2 + 20]))
    if bad_csum:
        ck ^= 0x1234
    b[l2 + 10:l2 + 12] = struct.pack("!H", ck)
    return bytes(b)


def cut_l4(l4, keep):
    """A datagram whose IP total length ends `keep` bytes into the L4 header."""
    return mangle(E() / IP(src=CLIENT, dst=VIP) / l4, cut=20 + keep, total=20 + keep)


def quote_error(qlen):
    q = bytes(IP(src=VIP, dst=CLIENT) / TCP(sport=80, dport=1234))[:qlen]
    return E() / IP(src="203.0.113.9", dst=VIP) / ICMP(type=3, code=1) / Raw(q)


def arp_hwtype(hw):
    """A who-has for the tunnel address, but for another hardware type."""
    b = bytearray(bytes(E(dst="ff:ff:ff:ff:ff:ff") /
                        ARP(op=1, hwsrc=sp.CLIENT_MAC, psrc=CLIENT, pdst=TUNNEL)))
    b[14:16] = struct.pack("!H", hw)
    return bytes(b)


TABLE = [
    # Truncated at each header boundary.
    ("runt: 10 bytes, no whole Ethernet header", bytes(tcp())[:10], "truncated"),
    ("Ethernet header only (IPv4 type)", bytes(tcp())[:14], "truncated"),
    ("802.1Q tag cut after 2 bytes", bytes(E() / Dot1Q(vlan=5) / IP())[:16], "truncated"),
    ("IPv4 header cut at 19 bytes", bytes(tcp())[:14 + 19], "truncated"),
    ("802.1Q then IPv4 header cut at 12 bytes",
     bytes(E() / Dot1Q(vlan=5) / IP(src=CLIENT, dst=VIP) / TCP())[:18 + 12], "truncated"),
    ("ARP cut at 20 bytes", bytes(E(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=TUNNEL))[:14 + 20],
     "truncated"),
    ("TCP header cut at 10 bytes (IP length says so)", cut_l4(TCP(sport=1234, dport=80), 10),
     "l4_truncated"),
    ("TCP header cut at 19 bytes", cut_l4(TCP(sport=1234, dport=80), 19), "l4_truncated"),
    ("UDP header cut at 4 bytes", cut_l4(UDP(sport=1234, dport=53), 4), "l4_truncated"),
    ("ICMP header cut at 4 bytes", cut_l4(ICMP(type=8), 4), "l4_truncated"),
    # IPv4 header lies.
    ("IHL 4 (16-byte header)", mangle(tcp(), ver_ihl=0x44), "ip_ihl"),
    ("IHL 0", mangle(tcp(), ver_ihl=0x40), "ip_ihl"),
    ("IHL 15 runs past the frame", mangle(tcp(), ver_ihl=0x4F), "ip_ihl"),
    ("total length 10 past the frame", mangle(tcp(), total=50), "ip_len"),
    ("total length 19, below the header", mangle(tcp(), total=19), "ip_len"),
    ("total length 0", mangle(tcp(), total=0), "ip_len"),
    ("bad IPv4 header checksum", mangle(tcp(), bad_csum=True), "ip_csum"),
    ("version 6 under the IPv4 ethertype", mangle(tcp(), ver_ihl=0x65), "ip_version"),
    ("version 0 under the IPv4 ethertype", mangle(tcp(), ver_ihl=0x05), "ip_version"),
    ("first fragment (MF, offset 0)", tcp(flags="MF"), "fragment"),
    ("later fragment (offset 185, MF)", tcp(flags="MF", frag=185), "fragment"),
    ("last fragment (offset 370, no MF)", tcp(frag=370), "fragment"),
    ("TTL 0 to a service", tcp(ttl=0), "ttl_expired"),
    ("TTL 1 to a service", tcp(ttl=1), "ttl_expired"),
    ("TTL 1 UDP to a service", E() / IP(src=CLIENT, dst=VIP, ttl=1) / UDP(sport=9, dport=53),
     "ttl_expired"),
    # Protocols a mux does not balance.
    ("IP-in-IP arriving at the tunnel address",
     E() / IP(src="10.255.0.2", dst=TUNNEL, proto=4) / IP(src=CLIENT, dst=VIP) / TCP(dport=80),
     "tunnel_inbound"),
    ("IPv6-in-IPv4 (protocol 41) to the VIP",
     E() / IP(src=CLIENT, dst=VIP, proto=41) / IPv6() / TCP(dport=80), "tunnel_inbound"),
    ("GRE to the VIP", E() / IP(src=CLIENT, dst=VIP) / GRE() / IP() / TCP(), "proto"),
    ("SCTP (protocol 132) to the VIP", E() / IP(src=CLIENT, dst=VIP, proto=132) / Raw(b"x" * 16),
     "proto"),
    # L4 header lies.
    ("TCP data offset 4", E() / IP(src=CLIENT, dst=VIP) / TCP(sport=1, dport=80, dataofs=4),
     "l4_len"),
    ("TCP data offset 15 past the segment",
     E() / IP(src=CLIENT, dst=VIP) / TCP(sport=1, dport=80, dataofs=15) / Raw(b"0123456789"),
     "l4_len"),
    ("UDP length 7", E() / IP(src=CLIENT, dst=VIP) / UDP(sport=1, dport=53, len=7), "l4_len"),
    ("UDP length past the datagram",
     E() / IP(src=CLIENT, dst=VIP) / UDP(sport=1, dport=53, len=100) / Raw(b"0123456789"),
     "l4_len"),
    # Link layer.
    ("stacked 802.1Q tags", E() / Dot1Q(vlan=10) / Dot1Q(vlan=20) / IP(src=CLIENT, dst=VIP) /
     TCP(dport=80), "vlan_stacked"),
    ("802.1ad (0x88a8) outer tag", E(type=0x88A8) / Dot1Q(vlan=20) / IP(src=CLIENT, dst=VIP) /
     TCP(dport=80), "vlan_stacked"),
    # IPv6 is parsed (malformed6/ has its lies); to no VIP of ours it is no service.
    ("IPv6 to an address that is no VIP", E() / IPv6(src="2001:db8::1", dst="2001:db8::2") /
     TCP(dport=80), "no_service"),
    ("802.1Q tagged IPv6 to ::1", E() / Dot1Q(vlan=3) / IPv6() / UDP(dport=53), "no_service"),
    ("unknown ethertype (LLDP 0x88cc)", E(type=0x88CC) / Raw(b"\x02\x07" + b"\0" * 40),
     "ethertype"),
    ("ARP who-has an address that is not ours",
     E(dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=sp.CLIENT_MAC, psrc=CLIENT, pdst="10.9.9.9"),
     "arp_ignored"),
    ("ARP reply (gratuitous)",
     E(dst="ff:ff:ff:ff:ff:ff") / ARP(op=2, hwsrc=sp.CLIENT_MAC, psrc=CLIENT, pdst=CLIENT),
     "arp_ignored"),
    ("ARP with hardware type 6 (IEEE 802)",
     arp_hwtype(6), "arp_malformed"),
    # ICMP the mux does not handle.
    ("ICMP echo reply to the VIP", E() / IP(src=CLIENT, dst=VIP) / ICMP(type=0), "icmp_type"),
    ("ICMP redirect to the VIP", E() / IP(src=CLIENT, dst=VIP) / ICMP(type=5) / Raw(b"\0" * 28),
     "icmp_type"),
    ("ICMP error quoting only an IP header", quote_error(20), "icmp_quote"),
    ("ICMP error quoting IP header + 3 bytes", quote_error(23), "icmp_quote"),
    # Nothing to balance it to.
    ("TCP to the VIP on a port with no service", E() / IP(src=CLIENT, dst=VIP) /
     TCP(sport=5, dport=81), "no_service"),
    ("UDP to the VIP's TCP-only port", E() / IP(src=CLIENT, dst=VIP) / UDP(sport=5, dport=80),
     "no_service"),
    ("TCP to an address that is no VIP", E() / IP(src=CLIENT, dst="192.0.2.61") /
     TCP(sport=5, dport=80), "no_service"),
    ("ICMP echo to an address that is not ours", E() / IP(src=CLIENT, dst="192.0.2.61") /
     ICMP(type=8), "no_service"),
]


def good(i):
    return bytes(E() / IP(src="198.18.0.%d" % (i + 1), dst=VIP, id=1000 + i, flags="DF") /
                 TCP(sport=50000 + i, dport=80, flags="S"))


def frames():
    """(frames, goods, bad rows): a good packet before every bad one and at the end."""
    out, goods = [], []
    for i, (_, bad, _) in enumerate(TABLE):
        goods.append(good(i))
        out += [goods[-1], sp.to_bytes(bad)]
    goods.append(good(len(TABLE)))
    out.append(goods[-1])
    return out, goods


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    sp.write_pcap(os.path.join(out, "malformed.pcap"), frames()[0])
