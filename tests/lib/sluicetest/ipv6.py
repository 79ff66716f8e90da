# SPDX-License-Identifier: BSD-3-Clause
"""IPv6 for the packet tests: the header decoded byte by byte (extension
headers walked as RFC 8200 lays them out), the upper-layer checksum over the
IPv6 pseudo-header recomputed independently of the data planes, and outer
fragments put back together as an agent would.

Nothing here uses the data planes' code; scapy's Internet checksum is the
reference, as for IPv4 (sluicetest.pcap).
"""
import ipaddress
import struct

from scapy.utils import checksum as scapy_checksum

from .tcp import mss_clamp_all

ETH_IPV6 = 0x86DD
PROTO_HOPOPTS, PROTO_ROUTING, PROTO_FRAGMENT, PROTO_DSTOPTS = 0, 43, 44, 60
PROTO_ICMPV6 = 58
EXT = (PROTO_HOPOPTS, PROTO_ROUTING, PROTO_DSTOPTS)


def ip6_str(b):
    return str(ipaddress.IPv6Address(bytes(b)))


def ip6_bytes(s):
    return ipaddress.IPv6Address(s).packed


def is_v6(addr):
    return ":" in addr


def addr_bytes(s):
    """4 or 16 bytes of an address of either family."""
    return ip6_bytes(s) if is_v6(s) else ipaddress.IPv4Address(s).packed


class IPv6:
    """An IPv6 header, its extension headers and its datagram (trimmed to
    40 + the payload length)."""

    def __init__(self, b):
        b = bytes(b)
        vtc = struct.unpack("!I", b[0:4])[0]
        self.version = vtc >> 28
        self.tclass = (vtc >> 20) & 0xFF
        self.flow = vtc & 0xFFFFF
        self.plen = struct.unpack("!H", b[4:6])[0]
        self.nh = b[6]
        self.hlim = b[7]
        self.src = ip6_str(b[8:24])
        self.dst = ip6_str(b[24:40])
        self.total = 40 + self.plen
        self.data = b[:self.total]
        self.trailer = b[self.total:]
        self.header = self.data[:40]
        self.payload = self.data[40:]
        # The chain: hop-by-hop, routing, destination options; a fragment header ends it.
        self.upper, self.l4_off, self.frag = self.nh, 40, None
        while self.upper in EXT and self.l4_off + 2 <= len(self.data):
            nxt, hl = self.data[self.l4_off], (self.data[self.l4_off + 1] + 1) * 8
            self.upper, self.l4_off = nxt, self.l4_off + hl
        if self.upper == PROTO_FRAGMENT and self.l4_off + 8 <= len(self.data):
            fh = self.data[self.l4_off:self.l4_off + 8]
            fo = struct.unpack("!H", fh[2:4])[0]
            self.frag = (self.l4_off, fh[0], fo & 0xFFF8, fo & 1,
                         struct.unpack("!I", fh[4:8])[0])
        self.l4 = self.data[self.l4_off:]

    def ports(self):
        return struct.unpack("!HH", self.l4[0:4])


def csum_off(proto):
    return {6: 16, 17: 6, PROTO_ICMPV6: 2}[proto]


def l4_csum6_expected(data, proto=None, l4_off=None):
    """The TCP/UDP/ICMPv6 checksum the IPv6 datagram data should carry,
    recomputed over the pseudo-header (RFC 8200 8.1) with the field zeroed."""
    ip = IPv6(data)
    proto = ip.upper if proto is None else proto
    off = ip.l4_off if l4_off is None else l4_off
    l4 = bytearray(ip.data[off:])
    at = csum_off(proto)
    l4[at:at + 2] = b"\0\0"
    pseudo = ip.data[8:40] + struct.pack("!I", len(l4)) + b"\0\0\0" + bytes([proto])
    ck = scapy_checksum(pseudo + bytes(l4))
    if proto == 17 and ck == 0:
        ck = 0xFFFF
    return ck


def l4_csum6(data):
    ip = IPv6(data)
    at = ip.l4_off + csum_off(ip.upper)
    return struct.unpack("!H", ip.data[at:at + 2])[0]


def l4_csum6_fixed(data):
    """The datagram with its upper-layer checksum recomputed."""
    ip = IPv6(data)
    d = bytearray(ip.data)
    at = ip.l4_off + csum_off(ip.upper)
    d[at:at + 2] = struct.pack("!H", l4_csum6_expected(bytes(d)))
    return bytes(d)


def ip6_edit(data, src=None, dst=None, sport=None, dport=None, hlim=None):
    """The datagram with new addresses, ports (at the upper-layer header)
    or hop limit, the upper-layer checksum redone."""
    ip = IPv6(data)
    d = bytearray(ip.data)
    if src is not None:
        d[8:24] = ip6_bytes(src)
    if dst is not None:
        d[24:40] = ip6_bytes(dst)
    if hlim is not None:
        d[7] = hlim
    if sport is not None:
        d[ip.l4_off:ip.l4_off + 2] = struct.pack("!H", sport)
    if dport is not None:
        d[ip.l4_off + 2:ip.l4_off + 4] = struct.pack("!H", dport)
    return l4_csum6_fixed(bytes(d))


def ipv6_reassemble(frames, l2=14):
    """The IPv6 datagram the outer fragments in frames (raw frames, any
    order, one datagram, the fragment header right after the fixed one)
    make, as RFC 8200 4.5 puts it back: the first fragment's header with
    the next header from the fragment header, the payload length redone,
    the pieces in offset order. Raises ValueError on a gap, an overlap, a
    missing last fragment, ids that differ, or a non-final fragment whose
    payload is not a multiple of 8 bytes."""
    pieces = []
    for fr in frames:
        ip = IPv6(fr[l2:])
        if ip.nh != PROTO_FRAGMENT or ip.frag is None:
            raise ValueError("not a fragment (next header %d)" % ip.nh)
        off, nxt, fo, mf, fid = ip.frag
        pieces.append((fo, mf, nxt, fid, ip.data[off + 8:], ip))
    pieces.sort(key=lambda p: p[0])
    if len({p[3] for p in pieces}) != 1:
        raise ValueError("fragment ids differ: %s" % sorted({p[3] for p in pieces}))
    at, body = 0, b""
    for fo, mf, _, _, part, _ in pieces:
        if fo != at:
            raise ValueError("fragment at %d, want %d" % (fo, at))
        if mf and len(part) % 8:
            raise ValueError("non-final fragment of %d bytes" % len(part))
        body += part
        at += len(part)
    if pieces[-1][1]:
        raise ValueError("no last fragment")
    first = pieces[0][5]
    h = bytearray(first.header)
    h[4:6] = struct.pack("!H", len(body))
    h[6] = pieces[0][2]
    return bytes(h) + body


def tcp_mss_clamped6(data, clamp):
    """The IPv6 datagram with every TCP MSS option above clamp lowered to it
    (checksum redone), or unchanged."""
    ip = IPv6(data)
    d = bytearray(ip.data)
    if not mss_clamp_all(d, ip.l4_off, clamp):
        return bytes(d)
    return l4_csum6_fixed(bytes(d))


def icmp6_quote_edit(data, src=None, sport=None, dst=None, dport=None):
    """An ICMPv6 error with its quoted IPv6 header's addresses and ports
    changed, the ICMPv6 checksum redone (the quoted upper-layer checksum left
    as it is: quotes are often cut; nobody checks it)."""
    ip = IPv6(data)
    d = bytearray(ip.data)
    q = ip.l4_off + 8
    qip = IPv6(bytes(d[q:]) + b"\0" * 64)
    ql4 = q + qip.l4_off
    if src is not None:
        d[q + 8:q + 24] = ip6_bytes(src)
    if dst is not None:
        d[q + 24:q + 40] = ip6_bytes(dst)
    if sport is not None:
        d[ql4:ql4 + 2] = struct.pack("!H", sport)
    if dport is not None:
        d[ql4 + 2:ql4 + 4] = struct.pack("!H", dport)
    return l4_csum6_fixed(bytes(d))
