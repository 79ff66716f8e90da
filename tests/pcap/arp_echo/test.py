# SPDX-License-Identifier: BSD-3-Clause
"""arp_echo: the mux answers ARP for its tunnel address (and for VIPs only
when arp_for_vips = true) and pings to its VIPs and tunnel address.

ARP reply: op 2 to the requester's MAC, sha = port MAC, spa = the address
asked for, tha/tpa = the requester. Echo reply: to the requester's MAC, IP
addresses swapped, type 0, same id, sequence and payload, checksums computed
whole (an all-zero request's reply carries 0xffff, not an update's 0x0000).
Run twice: arp_for_vips unset, then true.
"""
import struct

import gen
from sluicetest import pcap as sp


def check_arp(case, out, inp, what):
    o, i = sp.Frame(out), sp.Frame(inp)
    case.eq(sp.mac_str(o.dst), sp.mac_str(i.src), what + ": ethernet dst = requester")
    case.eq(sp.mac_str(o.src), sp.PORT_MAC, what + ": ethernet src = port MAC")
    case.eq(o.vlan, i.vlan, what + ": VLAN tag as received")
    case.eq(o.type, sp.ETH_ARP, what + ": ethertype")
    a, r = out[o.l2:o.l2 + 28], inp[i.l2:i.l2 + 28]
    if not case.eq(len(a), 28, what + ": ARP length"):
        return
    hrd, pro, hln, pln, op = struct.unpack("!HHBBH", a[:8])
    case.eq((hrd, pro, hln, pln), (1, 0x0800, 6, 4), what + ": ARP hrd/pro/hln/pln")
    case.eq(op, 2, what + ": ARP op = reply")
    case.eq(sp.mac_str(a[8:14]), sp.PORT_MAC, what + ": sha = port MAC")
    case.eq(sp.ip_str(a[14:18]), sp.ip_str(r[24:28]), what + ": spa = address asked for")
    case.eq(sp.mac_str(a[18:24]), sp.mac_str(r[8:14]), what + ": tha = requester sha")
    case.eq(sp.ip_str(a[24:28]), sp.ip_str(r[14:18]), what + ": tpa = requester spa")


def check_echo(case, out, inp, what):
    o, i = sp.Frame(out), sp.Frame(inp)
    case.eq(sp.mac_str(o.dst), sp.mac_str(i.src), what + ": ethernet dst = requester")
    case.eq(sp.mac_str(o.src), sp.PORT_MAC, what + ": ethernet src = port MAC")
    case.eq(o.vlan, i.vlan, what + ": VLAN tag as received")
    if not case.check(o.ip is not None and o.ip.proto == sp.PROTO_ICMP, "%s: not ICMP", what):
        return
    ip, q = o.ip, i.ip
    case.eq((ip.src, ip.dst), (q.dst, q.src), what + ": addresses swapped")
    case.eq(ip.total, q.total, what + ": IP total length")
    case.eq(len(out), o.l2 + ip.total, what + ": frame length (no padding)")
    case.check(ip.ttl > 0, "%s: TTL 0", what)
    case.check(sp.ip_csum_ok(ip.header), "%s: IP checksum invalid", what)
    case.eq((ip.payload[0], ip.payload[1]), (0, 0), what + ": ICMP type/code = echo reply")
    case.eq(ip.payload[4:8], q.payload[4:8], what + ": id and sequence")
    case.eq(ip.payload[8:], q.payload[8:], what + ": payload")
    # Exactly the checksum a whole computation gives: for an all-zero message
    # 0xffff, never the 0x0000 that receivers reject (RFC 1624 5).
    case.eq(sp.l4_csum(ip.data, sp.PROTO_ICMP), sp.l4_csum_expected(ip.data, sp.PROTO_ICMP),
            what + ": ICMP checksum")


def main():
    rows = gen.rows()
    with sp.Case("arp_echo") as case:
        a, b = sp.run_replies(case, gen.SERVICES, {"tunnel_address": gen.TUNNEL}, "arp_for_vips",
                              rows, {"arp": check_arp, "echo": check_echo},
                              {"arp": "arp_replies", "echo": "echo_replies"})
        print("arp_echo: default: %d ARP replies, %d echo replies; arp_for_vips: %d ARP "
              "replies (VIPs too), %d echo replies" % (a["arp"], a["echo"], b["arp"], b["echo"]))


if __name__ == "__main__":
    main()
