#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of the fuzz harnesses: tests/fuzz/<harness>/seeds/.

Packets are built with scapy against the tables the harnesses set up
(fuzz_mux_burst.c, fuzz_agent.c): VIPs 10.0.0.1:80/TCP, 10.0.0.2:53/UDP and
[2001:db8::1]:80/TCP, mux tunnel addresses 10.255.0.1 and 2001:db8:ff::100,
agent PAs 172.16.0.2 and 2001:db8:ff::2 with VMs 10.1.0.1 / 2001:db8:1::1
and 10.1.0.2 / 2001:db8:1::2, IPv6 mux 2001:db8:ff::1. The first bytes of a mux or agent seed are the harness's control
bytes (see the harness's header comment). Control-protocol seeds are encoded
by hand from proto/sluice.proto (a few lines of protobuf wire format);
config seeds are the repository's own configuration files and fragments.

Run from anywhere: /usr/bin/python3 tests/fuzz/make_seeds.py
Rewrites the seeds/ folders; regressions/ are never touched.
"""
import glob
import os
import shutil
import socket
import struct

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, Raw)  # noqa: E402
from scapy.layers.inet6 import (ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6ND_NA,  # noqa: E402
                                ICMPv6ND_NS, ICMPv6ND_RS, ICMPv6NDOptSrcLLAddr,
                                ICMPv6PacketTooBig, IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment,
                                IPv6ExtHdrHopByHop, IPv6ExtHdrRouting)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CLIENT = "198.51.100.7"
VIP1, VIP2 = "10.0.0.1", "10.0.0.2"
VIP6 = "2001:db8::10"
MUX_ADDR, MUX2 = "10.255.0.1", "10.255.0.2"
PA = "172.16.0.2"
VM1, VM2 = "10.1.0.1", "10.1.0.2"
ETH = Ether(src="02:00:00:00:00:aa", dst="02:00:00:00:01:00")
CLIENT6, VIP6 = "2001:db8:c::7", "2001:db8::1"
TUNNEL6, PROBER6 = "2001:db8:ff::100", "2001:db8:ff::254"
PA6, MUX6 = "2001:db8:ff::2", "2001:db8:ff::1"
VM16, VM26 = "2001:db8:1::1", "2001:db8:1::2"
MAGIC = b"SLUICE-VIPPROBE\x00"


def write(harness, name, data):
    d = os.path.join(HERE, harness, "seeds")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def reset(harness):
    d = os.path.join(HERE, harness, "seeds")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)


def raw(p):
    return bytes(p)


# ---- frames a mux receives ----

def mux_frames():
    tcp = lambda fl="S", **kw: ETH / IP(src=CLIENT, dst=VIP1, **kw) / TCP(sport=40000, dport=80, flags=fl)
    f = {
        "tcp_syn": tcp("S"),
        "tcp_ack": tcp("A") / Raw(b"GET / HTTP/1.1\r\n\r\n"),
        "tcp_fin": tcp("FA"),
        "tcp_rst": tcp("R"),
        "tcp_opts": ETH / IP(src=CLIENT, dst=VIP1) / TCP(sport=40001, dport=80, flags="S",
                                                        options=[("MSS", 1460), ("WScale", 7), ("SAckOK", b"")]),
        "tcp_ttl1": tcp("S", ttl=1),
        "tcp_ip_options": ETH / IP(src=CLIENT, dst=VIP1, options=b"\x94\x04\x00\x00") / TCP(sport=40002, dport=80),
        "tcp_no_service": ETH / IP(src=CLIENT, dst=VIP1) / TCP(sport=40000, dport=81, flags="S"),
        "tcp_big_df": tcp("A", flags="DF") / Raw(b"x" * 1470),
        "tcp_big_nodf": tcp("A") / Raw(b"x" * 1470),
        "udp_dns": ETH / IP(src=CLIENT, dst=VIP2) / UDP(sport=5353, dport=53) / Raw(b"\x12\x34" + b"\0" * 10),
        "udp_nocsum": ETH / IP(src=CLIENT, dst=VIP2) / UDP(sport=5354, dport=53, chksum=0) / Raw(b"q"),
        "vlan_tcp": ETH / Dot1Q(vlan=7) / IP(src=CLIENT, dst=VIP1) / TCP(sport=40003, dport=80, flags="S"),
        "padded_udp": ETH / IP(src=CLIENT, dst=VIP2) / UDP(sport=1, dport=53) / Raw(b"a") / Raw(b"\0" * 20),
        "arp_tunnel": ETH / ARP(op=1, psrc="10.255.0.254", pdst=MUX_ADDR, hwsrc="02:00:00:00:00:aa"),
        "arp_vip": ETH / ARP(op=1, psrc="10.255.0.254", pdst=VIP1, hwsrc="02:00:00:00:00:aa"),
        "arp_reply": ETH / ARP(op=2, psrc="10.255.0.254", pdst=MUX_ADDR),
        "ping_vip": ETH / IP(src=CLIENT, dst=VIP1) / ICMP(type=8, id=7, seq=1) / Raw(b"ping"),
        "ping_tunnel": ETH / IP(src=CLIENT, dst=MUX_ADDR) / ICMP(type=8, id=8, seq=1),
        "ping_other": ETH / IP(src=CLIENT, dst="10.9.9.9") / ICMP(type=8),
        # An error about VIP -> client, from a router on the way: the quote is the VIP's packet.
        "icmp_unreach": ETH / IP(src="203.0.113.1", dst=VIP1) / ICMP(type=3, code=4, nexthopmtu=1400)
        / IP(src=VIP1, dst=CLIENT, flags="DF") / TCP(sport=80, dport=40000, flags="SA"),
        "icmp_time_exceeded_udp": ETH / IP(src="203.0.113.1", dst=VIP2) / ICMP(type=11)
        / IP(src=VIP2, dst=CLIENT) / UDP(sport=53, dport=5353),
        "icmp_param_problem": ETH / IP(src="203.0.113.1", dst=VIP1) / ICMP(type=12)
        / IP(src=VIP1, dst=CLIENT) / TCP(sport=80, dport=40000),
        # The quote stops two bytes into the ports.
        "icmp_quote_short": ETH / IP(src="203.0.113.1", dst=VIP1) / ICMP(type=3, code=1)
        / Raw(raw(IP(src=VIP1, dst=CLIENT) / TCP(sport=80, dport=40000))[:22]),
        "icmp_forged": ETH / IP(src="203.0.113.1", dst=VIP2) / ICMP(type=3, code=1)
        / IP(src=VIP1, dst=CLIENT) / TCP(sport=80, dport=40000),
        "icmp_no_flow": ETH / IP(src="203.0.113.1", dst=VIP1) / ICMP(type=3, code=1)
        / IP(src=VIP1, dst="192.0.2.99") / TCP(sport=80, dport=1),
        "ipip_inbound": ETH / IP(src=CLIENT, dst=VIP1) / IP(src=CLIENT, dst=VIP1) / TCP(dport=80),
        "fragment_first": ETH / IP(src=CLIENT, dst=VIP1, flags="MF") / TCP(sport=1, dport=80),
        "fragment_later": ETH / IP(src=CLIENT, dst=VIP1, frag=10) / Raw(b"x" * 16),
        "ipv6": Ether(type=0x86DD) / Raw(b"\x60" + b"\0" * 39),
        "qinq": ETH / Dot1Q(vlan=1) / Dot1Q(vlan=2) / IP(src=CLIENT, dst=VIP1) / TCP(dport=80),
        # IPv6: forwarding (6in6 and 6in4 backends), the chain, errors, ND, probes.
        "v6_syn": ETH / IPv6(src=CLIENT6, dst=VIP6) / TCP(sport=40000, dport=80, flags="S"),
        "v6_ack": ETH / IPv6(src=CLIENT6, dst=VIP6) / TCP(sport=40001, dport=80, flags="A") / Raw(b"GET"),
        "v6_fin": ETH / IPv6(src=CLIENT6, dst=VIP6) / TCP(sport=40002, dport=80, flags="FA"),
        "v6_ext_chain": ETH / IPv6(src=CLIENT6, dst=VIP6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
        / IPv6ExtHdrRouting() / TCP(sport=40003, dport=80),
        "v6_routed": ETH / IPv6(src=CLIENT6, dst=VIP6) / IPv6ExtHdrRouting(addresses=[VIP6], segleft=1)
        / TCP(dport=80),
        "v6_fragment": ETH / IPv6(src=CLIENT6, dst=VIP6) / IPv6ExtHdrFragment(m=1) / TCP(dport=80),
        "v6_hlim1": ETH / IPv6(src=CLIENT6, dst=VIP6, hlim=1) / TCP(dport=80),
        "v6_big": ETH / IPv6(src=CLIENT6, dst=VIP6, tc=0xb9) / TCP(sport=40004, dport=80, flags="A")
        / Raw(b"x" * 1450),
        "v6_1280": ETH / IPv6(src=CLIENT6, dst=VIP6) / TCP(sport=40005, dport=80, flags="A")
        / Raw(b"x" * 1220),
        "v6_ptb": ETH / IPv6(src="2001:db8:ff00::1", dst=VIP6) / ICMPv6PacketTooBig(mtu=1280)
        / Raw(raw(IPv6(src=VIP6, dst=CLIENT6) / TCP(sport=80, dport=40000, flags="SA"))),
        "v6_unreach_forged": ETH / IPv6(src="2001:db8:ff00::1", dst="2001:db8::9") / ICMPv6DestUnreach()
        / Raw(raw(IPv6(src=VIP6, dst=CLIENT6) / TCP(sport=80, dport=40000))),
        "v6_echo": ETH / IPv6(src=CLIENT6, dst=VIP6) / ICMPv6EchoRequest(id=1, seq=2) / Raw(b"ping"),
        "v6_echo_tunnel": ETH / IPv6(src=CLIENT6, dst=TUNNEL6) / ICMPv6EchoRequest(),
        "v6_ns_tunnel": Ether(src="02:00:00:00:00:aa", dst="33:33:ff:00:01:00")
        / IPv6(src="2001:db8:ff::9", dst="ff02::1:ff00:100", hlim=255) / ICMPv6ND_NS(tgt=TUNNEL6)
        / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:aa"),
        "v6_ns_dad": Ether(dst="33:33:ff:00:01:00") / IPv6(src="::", dst="ff02::1:ff00:100", hlim=255)
        / ICMPv6ND_NS(tgt=TUNNEL6),
        "v6_na": ETH / IPv6(src="2001:db8:ff::9", dst="ff02::1", hlim=255) / ICMPv6ND_NA(tgt=TUNNEL6),
        "v6_probe_6in6": ETH / IPv6(src=PROBER6, dst=TUNNEL6) / IPv6(src="2001:db8:ff::254", dst=VIP6)
        / ICMPv6EchoRequest(id=3) / Raw(MAGIC + bytes(16)),
        "v6_probe_4in6": ETH / IPv6(src=PROBER6, dst=TUNNEL6) / IP(src="10.255.0.254", dst=VIP1)
        / ICMP(type=8) / Raw(MAGIC + bytes(16)),
        "v6_probe_6in4": ETH / IP(src="10.255.0.254", dst=MUX_ADDR, proto=41)
        / IPv6(src="2001:db8:ff::254", dst=VIP6) / ICMPv6EchoRequest(id=4) / Raw(MAGIC + bytes(16)),
        # IPv4 to the 4in6 backend (10.1.0.2 on 2001:db8:ff::2), whole and past the MTU.
        "v4_to_v6_pa": ETH / IP(src="198.51.100.9", dst=VIP1) / TCP(sport=40100, dport=80, flags="S"),
        "v4_big_nodf_any": ETH / IP(src="198.51.100.10", dst=VIP1) / TCP(sport=40101, dport=80)
        / Raw(b"y" * 1460),
    }
    out = {k: raw(v) for k, v in f.items()}
    out["bad_csum"] = bytearray(out["tcp_syn"])
    out["bad_csum"][14 + 10] ^= 0xff
    out["ihl_4"] = bytearray(out["tcp_syn"])
    out["ihl_4"][14] = 0x44
    out["total_len_long"] = bytearray(out["tcp_syn"])
    out["total_len_long"][14 + 2:14 + 4] = struct.pack(">H", 200)
    out["truncated_eth"] = out["tcp_syn"][:10]
    out["truncated_ip"] = out["tcp_syn"][:14 + 12]
    out["truncated_tcp"] = out["tcp_syn"][:14 + 20 + 10]
    out["v6_truncated"] = out["v6_syn"][:14 + 40 + 10]
    out["v6_plen_long"] = bytearray(out["v6_syn"])
    out["v6_plen_long"][18:20] = struct.pack(">H", 300)
    return {k: bytes(v) for k, v in out.items()}


# ---- frames an agent receives ----

def agent_frames():
    up = Ether(src="02:00:00:00:00:fe", dst="02:00:00:00:01:00")
    vm1 = Ether(src="02:00:00:00:02:00", dst="02:00:00:00:01:01")
    vm2 = Ether(src="02:00:00:00:02:01", dst="02:00:00:00:01:02")

    def tunnel(inner, src=MUX_ADDR, dst=PA, **kw):
        return up / IP(src=src, dst=dst, proto=4, **kw) / inner

    uplink = {
        "tun_syn": tunnel(IP(src=CLIENT, dst=VM1, ttl=63) / TCP(sport=40000, dport=8080, flags="S",
                                                               options=[("MSS", 1460)])),
        "tun_ack": tunnel(IP(src=CLIENT, dst=VM2, ttl=63) / TCP(sport=40000, dport=8080, flags="A") / Raw(b"hi")),
        "tun_udp": tunnel(IP(src=CLIENT, dst=VM2) / UDP(sport=5000, dport=5353) / Raw(b"q")),
        "tun_mux2_df": tunnel(IP(src=CLIENT, dst=VM1, flags="DF") / TCP(dport=8080), src=MUX2, flags="DF"),
        "tun_icmp_err": tunnel(IP(src="203.0.113.1", dst=VM1) / ICMP(type=3, code=4)
                               / IP(src=VIP1, dst=CLIENT) / TCP(sport=80, dport=40000)),
        "tun_ping": tunnel(IP(src=CLIENT, dst=VM1) / ICMP(type=8)),
        "tun_unknown_mux": tunnel(IP(src=CLIENT, dst=VM1) / TCP(dport=8080), src="10.255.9.9"),
        "tun_other_pa": tunnel(IP(src=CLIENT, dst=VM1) / TCP(dport=8080), dst="172.16.0.9"),
        "tun_no_vm": tunnel(IP(src=CLIENT, dst="10.1.0.9") / TCP(dport=8080)),
        "tun_nested": tunnel(IP(src=MUX_ADDR, dst=PA, proto=4) / IP(src=CLIENT, dst=VM1) / TCP(dport=8080)),
        "tun_vlan": up / Dot1Q(vlan=3) / IP(src=MUX_ADDR, dst=PA, proto=4) / IP(src=CLIENT, dst=VM1) / TCP(dport=8080),
        "tun_outer_options": up / IP(src=MUX_ADDR, dst=PA, proto=4, options=b"\x01\x01\x01\x00")
        / IP(src=CLIENT, dst=VM1) / TCP(dport=8080),
        "tun_padded": raw(tunnel(IP(src=CLIENT, dst=VM1) / UDP(dport=9))) + b"\0" * 12,
        "arp_pa": up / ARP(op=1, psrc="172.16.0.254", pdst=PA),
        "ping_pa": up / IP(src="172.16.0.254", dst=PA) / ICMP(type=8),
        "plain_tcp": up / IP(src=CLIENT, dst=PA) / TCP(dport=22),
        "tun_6in4": up / IP(src=MUX_ADDR, dst=PA, proto=41) / Raw(b"\x60" + b"\0" * 39),
        "tun_6in4_syn": up / IP(src=MUX_ADDR, dst=PA, proto=41) / IPv6(src=CLIENT6, dst=VM26)
        / TCP(sport=40000, dport=8080, flags="S", options=[("MSS", 1460)]),
        "tun_6in6_syn": up / IPv6(src=MUX6, dst=PA6) / IPv6(src=CLIENT6, dst=VM16)
        / TCP(sport=40000, dport=8080, flags="S", options=[("MSS", 1460)]),
        "tun_4in6_udp": up / IPv6(src=MUX6, dst=PA6, nh=4) / IP(src=CLIENT, dst=VM2)
        / UDP(sport=5000, dport=5353) / Raw(b"q"),
        "tun_6in6_ptb": up / IPv6(src=MUX6, dst=PA6) / IPv6(src="2001:db8:ff00::1", dst=VM16)
        / ICMPv6PacketTooBig(mtu=1280) / Raw(raw(IPv6(src=VIP6, dst=CLIENT6) / TCP(sport=80, dport=40000))),
        "tun_6in6_unknown_mux": up / IPv6(src="2001:db8:ff::9", dst=PA6) / IPv6(src=CLIENT6, dst=VM16)
        / TCP(dport=8080),
        "tun_6in6_frag_first": up / IPv6(src=MUX6, dst=PA6) / IPv6ExtHdrFragment(nh=41, m=1, id=5)
        / Raw(raw(IPv6(src=CLIENT6, dst=VM16) / TCP(dport=8080) / Raw(b"x" * 40))[:48]),
        "tun_6in6_frag_last": up / IPv6(src=MUX6, dst=PA6) / IPv6ExtHdrFragment(nh=41, offset=6, id=5)
        / Raw(b"y" * 32),
        "ns_pa6": up / IPv6(src="2001:db8:ff::9", dst="ff02::1:ff00:2", hlim=255) / ICMPv6ND_NS(tgt=PA6)
        / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:fe"),
        "ping_pa6": up / IPv6(src="2001:db8:ff::9", dst=PA6) / ICMPv6EchoRequest(),
        "probe6": up / IPv6(src=PROBER6, dst=VM16) / TCP(sport=45000, dport=8080, flags="S"),
        # Outer fragments (held for reassembly; two copies of a first one: given up).
        "tun_frag_first": tunnel(Raw(raw(IP(src=CLIENT, dst=VM1) / TCP(dport=8080) / Raw(b"x" * 40))[:32]),
                                 flags="MF", id=7),
        "tun_frag_last": tunnel(Raw(b"y" * 16), frag=4, id=7),
        "frag_not_tunnel": up / IP(src=CLIENT, dst=PA, proto=6, flags="MF") / Raw(b"z" * 24),
    }
    vm = {
        "dsr_synack": vm1 / IP(src=VM1, dst=CLIENT) / TCP(sport=8080, dport=40000, flags="SA",
                                                          options=[("MSS", 1460)]),
        "dsr_udp": vm2 / IP(src=VM2, dst=CLIENT) / UDP(sport=5353, dport=5000) / Raw(b"a"),
        "dsr_icmp_err": vm1 / IP(src=VM1, dst=CLIENT) / ICMP(type=3, code=3)
        / IP(src=CLIENT, dst=VM1) / UDP(sport=5000, dport=8080),
        "vm_passthrough": vm1 / IP(src=VM1, dst="8.8.8.8") / TCP(sport=33333, dport=443),
        "vm_ping": vm1 / IP(src=VM1, dst="8.8.8.8") / ICMP(type=8),
        "vm_spoofed": vm1 / IP(src=VIP1, dst=CLIENT) / TCP(sport=80, dport=40000),
        "vm_ipip": vm1 / IP(src=VM1, dst=PA, proto=4) / IP(src=MUX_ADDR, dst=VM2) / TCP(),
        "vm_fragment": vm1 / IP(src=VM1, dst=CLIENT, flags="MF") / Raw(b"x" * 24),
        "vm_gre": vm1 / IP(src=VM1, dst=CLIENT, proto=47) / Raw(b"\0" * 8),
        "vm_arp_gw": vm1 / ARP(op=1, psrc=VM1, pdst="10.1.0.254"),
        "vm_arp_self": vm1 / ARP(op=1, psrc=VM1, pdst=VM1),
        "vm_vlan": vm1 / Dot1Q(vlan=5) / IP(src=VM1, dst=CLIENT) / TCP(sport=8080, dport=40000),
        "dsr6_synack": vm1 / IPv6(src=VM16, dst=CLIENT6) / TCP(sport=8080, dport=40000, flags="SA",
                                                              options=[("MSS", 1460)]),
        "dsr6_icmp_err": vm1 / IPv6(src=VM16, dst=CLIENT6) / ICMPv6DestUnreach(code=4)
        / Raw(raw(IPv6(src=CLIENT6, dst=VM16) / TCP(sport=40000, dport=8080))),
        "vm6_ns_gateway": vm1 / IPv6(src="fe80::1:1", dst="ff02::1:ff00:1", hlim=255)
        / ICMPv6ND_NS(tgt="fe80::1") / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:02:00"),
        "vm6_rs": vm1 / IPv6(src="fe80::1:1", dst="ff02::2", hlim=255) / ICMPv6ND_RS(),
        "vm6_spoofed": vm1 / IPv6(src=VIP6, dst=CLIENT6) / TCP(sport=80, dport=40000),
        "vm6_probe_out": vm1 / IPv6(src=VM16, dst=PROBER6) / TCP(sport=8080, dport=45000, flags="SA"),
    }
    out = {}
    for k, v in uplink.items():
        out["up_" + k] = bytes([0x04]) + raw(v)            # uplink, MSS clamp on
    out["up_tun_syn_x4"] = bytes([0x18]) + raw(uplink["tun_syn"])
    out["up_tun_ack_2seg"] = bytes([0x28]) + raw(uplink["tun_ack"])     # 2 copies, last in 2 segments
    out["up_tun_frag_first_x2"] = bytes([0x08]) + raw(uplink["tun_frag_first"])
    for k, v in vm.items():
        ctl = 0x01 | (0x02 if k in ("dsr_udp",) else 0) | 0x04
        out["vm_" + k] = bytes([ctl]) + raw(v)
    # Bit 6: the connection tracker, whose state carries from one input to
    # the next: a connection's life in the order the replay sorts them.
    for i, k in enumerate(("up_tun_syn", "vm_dsr_synack", "up_tun_ack", "up_tun_6in6_syn",
                           "vm_dsr6_synack", "up_tun_syn_x4")):
        out["track%d_%s" % (i + 1, k)] = bytes([out[k][0] | 0x40]) + out[k][1:]
    return out


# ---- control-protocol messages (protobuf wire format by hand) ----

def varint(n):
    b = bytearray()
    while True:
        c = n & 0x7F
        n >>= 7
        if n:
            b.append(c | 0x80)
        else:
            b.append(c)
            return bytes(b)


def fv(num, n):      # varint field
    return varint(num << 3) + varint(n)


def fb(num, data):   # length-delimited field
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def ip4(s):
    return bytes(int(x) for x in s.split("."))


def addr(s):         # 4 or 16 bytes: the family on the wire
    return socket.inet_pton(socket.AF_INET6, s) if ":" in s else ip4(s)


DIGEST = bytes(range(16))
SEED = bytes(range(0x10, 0x20))


def backend(i, dip, port=8080, weight=1, state=0, host=None):
    return fb(2, fv(1, i) + fb(2, addr(dip)) + fv(3, port) + fv(4, weight) + fb(5, addr(host or PA))
              + fv(6, state))


def key(vip=VIP1, proto=6, port=80):
    return fb(1, addr(vip)) + fv(2, proto) + fv(3, port)


def service6(n=2):   # an IPv6 service, its hosts IPv6 and IPv4 in turn (6in6, 6in4)
    return fb(1, key(VIP6, 6, 80)) + b"".join(
        backend(i, "2001:db8:1::%x" % (i + 1), host="2001:db8:a1::1" if i % 2 == 0 else PA)
        for i in range(n))


def service(vip=VIP1, proto=6, port=80, n=2):
    return fb(1, key(vip, proto, port)) + b"".join(backend(i, "10.1.0.%d" % (i + 1), weight=i + 1, state=i % 3)
                                                   for i in range(n))


def options(size=251):
    return fb(1, SEED) + fv(2, size)


def env(body_num, body, protocol=1, sender="manager"):
    return fv(1, protocol) + fb(2, sender) + fb(body_num, body)


def credit_msgs():
    """The credit channel's two messages (CreditGrant, CreditReport): no envelope."""
    grant = fv(1, 1) + fb(2, "agent1") + fv(3, 0x1234) + fv(4, 1000)
    return {
        "credit_grant": grant + fb(5, fv(1, 7) + fv(2, 3) + fv(3, 5) + fv(5, 12))
        + fb(5, fv(1, 9) + fv(4, 2) + fv(5, 4)),
        "credit_grant_twice": grant + fb(5, fv(1, 7) + fv(2, 3) + fv(3, 5)) + fb(5, fv(1, 7)),
        "credit_report": fv(1, 1) + fb(2, "mux1") + fv(3, 77) + fv(4, 0x1234)
        + fb(5, fv(1, 7) + fv(2, 10) + fv(3, 4) + fv(4, 1) + fv(5, 2) + fv(6, 9) + fv(7, 3) + fv(8, 10)),
        "credit_report_overspent": fv(1, 1) + fb(2, "mux1") + fv(3, 77)
        + fb(5, fv(1, 7) + fv(2, 1) + fv(3, 4)),
    }


def codec_msgs():
    m = {
        "hello_mux": env(10, fb(1, "mux-1") + fv(2, 1) + fv(3, 7) + fb(4, DIGEST), sender="mux-1"),
        "hello_agent_nodigest": env(10, fb(1, "agent-1") + fv(2, 2), sender="agent-1"),
        "hello_bad_role": env(10, fb(1, "x") + fv(2, 9)),
        # over TLS: the challenge, and a hello answering it (nonce, certificate, proof)
        "challenge": env(22, fb(1, bytes(range(32)))),
        "challenge_short_nonce": env(22, fb(1, bytes(31))),
        "hello_proven": env(10, fb(1, "mux-1") + fv(2, 1) + fv(3, 7) + fb(4, DIGEST) + fb(6, bytes(range(32)))
                            + fb(7, b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n\0")
                            + fb(8, bytes(70)), sender="mux-1"),
        "hello_cert_no_nul": env(10, fb(1, "mux-1") + fv(2, 1) + fb(6, bytes(32)) + fb(7, b"PEM")
                                 + fb(8, bytes(70)), sender="mux-1"),
        # operator requests; over ctl_tls with a proof of the name (11: name, 12: nonce,
        # 13: certificate, 14: proof), next to an apply's config (7)
        "ctl_status": env(20, fv(1, 1), sender="ctl:op@host"),
        "ctl_status_proven": env(20, fv(1, 1) + fb(11, "ops") + fb(12, bytes(range(32)))
                                 + fb(13, b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n\0")
                                 + fb(14, bytes(70)), sender="ctl:op@host"),
        "ctl_apply_proven": env(20, fv(1, 10) + fb(7, "services = ( );") + fb(11, "ops")
                                + fb(12, bytes(32)) + fb(13, b"PEM\0") + fb(14, bytes(64)),
                                sender="ctl:op@host"),
        "ctl_proof_no_cert": env(20, fv(1, 1) + fb(11, "ops") + fb(12, bytes(32)) + fb(14, bytes(64))),
        "welcome": env(11, fv(1, 7) + fv(2, 1)),
        "prepare": env(12, fv(1, 8) + fv(2, 7) + fb(3, fb(1, service()) + fb(1, service(VIP2, 17, 53, 1))
                                                      + fb(2, key(VIP1, 6, 443)) + fb(3, options()))
                       + fb(4, DIGEST)),
        "prepare_bad_base": env(12, fv(1, 9) + fv(2, 7) + fb(3, b"") + fb(4, DIGEST)),
        "prepare_no_delta": env(12, fv(1, 8) + fv(2, 7) + fb(4, DIGEST)),
        "prepare_ipv6": env(12, fv(1, 8) + fv(2, 7) + fb(3, fb(2, fb(1, bytes(16)) + fv(2, 6) + fv(3, 80)))
                            + fb(4, DIGEST)),
        # IPv6: a service of IPv6 DIPs behind both families of host, an IPv4 one behind an
        # IPv6 host (4in6), a DIP of the other family (refused), a mux's IPv6 probe address
        # (9), an agent's PAs (10) and DIPs (11), an operator's IPv6 backend
        "chunk0_ipv6": env(17, fv(1, 8) + fb(2, DIGEST) + fv(3, 0) + fv(4, 1) + fb(5, options(65537))
                           + fb(6, service6(3))
                           + fb(6, fb(1, key(VIP2, 6, 80)) + backend(0, "10.1.0.9", host="2001:db8:a1::1"))),
        "prepare_ipv6_mixed_family": env(12, fv(1, 8) + fv(2, 7) + fb(3, fb(1, fb(1, key(VIP6, 6, 80))
                                                                           + backend(0, "10.1.0.1")))
                                         + fb(4, DIGEST)),
        "hello_mux_ipv6": env(10, fb(1, "mux-1") + fv(2, 1) + fb(5, ip4("10.255.0.1"))
                              + fb(9, addr("2001:db8:ff::1")), sender="mux-1"),
        "hello_agent_addrs": env(10, fb(1, "agent-1") + fv(2, 2) + fb(10, ip4("10.0.1.1"))
                                 + fb(10, addr("2001:db8:a1::1")) + fb(11, ip4("10.1.1.11"))
                                 + fb(11, addr("2001:db8:1::11")), sender="agent-1"),
        "hello_probe6_of_ipv4": env(10, fb(1, "mux-1") + fv(2, 1) + fb(9, ip4("10.255.0.1"))),
        "ctl_backend_add_ipv6": env(20, fv(1, 5) + fb(2, key(VIP6, 6, 80))
                                    + fb(3, fv(1, 0) + fb(2, addr("2001:db8:1::11")) + fv(3, 8080)
                                         + fv(4, 1) + fb(5, ip4("10.0.1.1")))
                                    + fv(6, 1), sender="ctl:op@host"),
        "prepare_bad_maglev": env(12, fv(1, 8) + fv(2, 7) + fb(3, fb(3, options(250))) + fb(4, DIGEST)),
        "vote_yes": env(13, fv(1, 8) + fb(2, DIGEST) + fv(3, 1), sender="mux-1"),
        "vote_no": env(13, fv(1, 8) + fb(2, DIGEST) + fb(4, "digest mismatch"), sender="mux-1"),
        "commit": env(14, fv(1, 8) + fb(2, DIGEST)),
        "commit_short_digest": env(14, fv(1, 8) + fb(2, DIGEST[:5])),
        "abort": env(15, fv(1, 8) + fb(2, DIGEST) + fb(3, "a member voted no")),
        "snapshot_request": env(16, fv(1, 3), sender="agent-1"),
        "chunk0": env(17, fv(1, 8) + fb(2, DIGEST) + fv(3, 0) + fv(4, 2) + fb(5, options(65537))
                      + fb(6, service()) + fb(6, service(VIP2, 17, 53, 3))),
        "chunk1": env(17, fv(1, 8) + fb(2, DIGEST) + fv(3, 1) + fv(4, 2) + fb(6, service(VIP1, 6, 443, 1))),
        "chunk0_no_options": env(17, fv(1, 8) + fb(2, DIGEST) + fv(3, 0) + fv(4, 1)),
        "chunk_bad_index": env(17, fv(1, 8) + fb(2, DIGEST) + fv(3, 3) + fv(4, 2)),
        "status": env(18, fv(1, 8) + fb(2, fb(1, "rx_pkts") + fv(2, 1000)) + fb(2, fb(1, "drops") + fv(2, 3)),
                      sender="mux-1"),
        "refused": env(19, fb(1, "no certificate") + fv(2, 1)),
        "future_protocol": env(11, fv(1, 7), protocol=2),
        "no_body": fv(1, 1) + fb(2, "x"),
        "empty": b"",
        "garbage": b"\xff\xff\xff\xff",
    }
    return m


# ---- configuration text ----

def config_texts():
    out = {}
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "unit", "data", "*.cfg")))
    files += sorted(glob.glob(os.path.join(ROOT, "examples", "*.cfg")))
    for path in files:
        with open(path, "rb") as f:
            text = f.read()
        base = os.path.splitext(os.path.basename(path))[0]
        prefix = "ex_" if "/examples/" in path else ""
        # Both loaders: 0 = mux_config_load on the file, 1 = lb_ftable_load on flow_table.
        out["file_" + prefix + base] = b"\x00" + text
        out["table_" + prefix + base] = b"\x01" + text
    out["table_inline"] = b"\x01" + b"""flow_table = {
  hash_seed = "0x0123456789abcdef0123456789abcdef";
  maglev_size = 251;
  services = ( { vip = "10.0.0.1"; port = 80; proto = "tcp";
                 backends = ( { dip = "10.1.0.1"; host = "172.16.0.2"; port = 8080; weight = 2; } ); } );
};
"""
    out["syntax_error"] = b"\x00flow_table = { services = ( ; };"
    out["empty"] = b"\x00"
    return out


def main():
    sets = {
        "parse": {k: v for k, v in mux_frames().items()},
        "mux_burst": {},
        "agent": agent_frames(),
        "codec": {**codec_msgs(), **credit_msgs()},
        "config": config_texts(),
    }
    for k, v in mux_frames().items():
        ctl = 0x00
        if k.startswith("tcp_syn"):
            ctl = 0x13          # 4 copies, then one more 5 s later
        elif k in ("tcp_fin", "udp_dns"):
            ctl = 0x41          # 2 copies, then one 20 s later (past FIN / UDP timeouts)
        elif k == "arp_vip":
            ctl = 0x04          # ARP for VIPs on
        elif k == "vlan_tcp":
            ctl = 0x28          # port 1, then one 5 s later
        sets["mux_burst"][k] = bytes([ctl, 0x00]) + v
    # The second control byte: a frame in two segments; the smallest MTUs.
    sets["mux_burst"]["tcp_ack_2seg"] = bytes([0x01, 0x01]) + mux_frames()["tcp_ack"]
    mid = raw(ETH / IP(src=CLIENT, dst=VIP1, flags="DF") / TCP(sport=40004, dport=80, flags="A")
              / Raw(b"x" * 560))
    sets["mux_burst"]["tcp_df_600_mtu596"] = bytes([0x00, 0x02]) + mid
    sets["mux_burst"]["tcp_big_df_mtu2030"] = bytes([0x00, 0x0e]) + mux_frames()["tcp_big_df"]
    # Bit 7 with the plain generation: no mbuf left to reference the outer fragments.
    sets["mux_burst"]["tcp_big_nodf_no_mbuf"] = bytes([0x00, 0x80]) + mux_frames()["tcp_big_nodf"]
    # Its bits 4-7: the generations with admission rules (the whole share, a
    # share of zero), the choice beyond the five-tuple, capped backends (no
    # credit channel, a grant of 1, of 3); fuzz_mux_burst.c's enum variant.
    for k in ("tcp_syn", "udp_dns", "v6_syn"):
        for ctl2, what in ((0x10, "limits"), (0x50, "limits_zero_share"), (0x20, "choice"),
                           (0x30, "credits_none"), (0x70, "credits_1"), (0xf0, "credits_3")):
            seed = sets["mux_burst"][k]
            sets["mux_burst"][f"{k}_{what}"] = seed[:1] + bytes([ctl2]) + seed[2:]
    sets["parse"].update({"agent_" + k: v[1:] for k, v in agent_frames().items()
                          if not k.startswith("track")})
    for harness, seeds in sets.items():
        reset(harness)
        for name, data in sorted(seeds.items()):
            write(harness, name, data)
        print("%-10s %3d seeds" % (harness, len(seeds)))


if __name__ == "__main__":
    main()
