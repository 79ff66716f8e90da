# SPDX-License-Identifier: BSD-3-Clause
"""nd_echo6: the mux answers neighbor solicitations for its IPv6 tunnel
address (and for IPv6 VIPs only with nd_for_vips) and ICMPv6 echo requests
to its IPv6 VIPs and tunnel address, every reply built whole.

Neighbor advertisement (RFC 4861 4.4, 7.2.4): to the requester's MAC, from
the port MAC, VLAN tag kept; from the target to the solicitor, or to all
nodes (ff02::1, 33:33:00:00:00:01) for duplicate address detection; hop
limit 255; type 136 code 0; flags R clear, S set (clear for DAD), O set;
the target; a target link-layer option naming the port MAC; the checksum
over the pseudo-header right. Echo reply: addresses swapped, type 129, id,
sequence and payload kept, no extension headers, checksum right. Run twice:
nd_for_vips unset, then true.
"""
import struct

import gen
from sluicetest import ipv6 as v6
from sluicetest import pcap as sp


def check_common(case, out, inp, what):
    o, i = sp.Frame(out), sp.Frame(inp)
    case.eq(sp.mac_str(o.src), sp.PORT_MAC, what + ": ethernet src = port MAC")
    case.eq(o.vlan, i.vlan, what + ": VLAN tag as received")
    if not case.check(o.ip6 is not None, "%s: reply is not IPv6", what):
        return None, None
    case.eq(len(out), o.l2 + o.ip6.total, what + ": frame length (no trailing bytes)")
    case.eq(o.ip6.nh, v6.PROTO_ICMPV6, what + ": next header ICMPv6, no extension headers")
    case.eq(v6.l4_csum6(o.ip6.data), v6.l4_csum6_expected(o.ip6.data),
            what + ": ICMPv6 checksum over the pseudo-header")
    return o, i


def check_na(case, out, inp, what):
    o, i = check_common(case, out, inp, what)
    if o is None:
        return
    ns = i.ip6
    dad = ns.src == "::"
    target = v6.ip6_str(ns.l4[8:24])
    case.eq(sp.mac_str(o.dst), "33:33:00:00:00:01" if dad else sp.mac_str(i.src),
            what + ": ethernet dst = the solicitor (all nodes for DAD)")
    ip = o.ip6
    case.eq((ip.src, ip.dst), (target, "ff02::1" if dad else ns.src),
            what + ": from the target to the solicitor")
    case.eq(ip.hlim, 255, what + ": hop limit 255")
    case.eq(ip.plen, 32, what + ": payload 24 + an 8-byte option")
    m = ip.l4
    case.eq((m[0], m[1]), (136, 0), what + ": type/code neighbor advertisement")
    flags = struct.unpack("!I", m[4:8])[0]
    case.eq(flags, 0x20000000 if dad else 0x60000000,
            what + ": flags R clear, S %s, O set" % ("clear" if dad else "set"))
    case.eq(v6.ip6_str(m[8:24]), target, what + ": target")
    case.eq((m[24], m[25]), (2, 1), what + ": target link-layer address option")
    case.eq(sp.mac_str(m[26:32]), sp.PORT_MAC, what + ": ... naming the port MAC")


def check_echo(case, out, inp, what):
    o, i = check_common(case, out, inp, what)
    if o is None:
        return
    case.eq(sp.mac_str(o.dst), sp.mac_str(i.src), what + ": ethernet dst = requester")
    ip, q = o.ip6, i.ip6
    case.eq((ip.src, ip.dst), (q.dst, q.src), what + ": addresses swapped")
    case.check(ip.hlim > 0, "%s: hop limit 0", what)
    case.eq((ip.l4[0], ip.l4[1]), (129, 0), what + ": type/code echo reply")
    case.eq(ip.l4[4:], q.l4[4:], what + ": id, sequence, payload")
    case.eq(ip.plen, len(q.l4), what + ": payload length = the message")


def reply_key(fr):
    """A reply's requester: its MAC, but a DAD answer goes to all nodes."""
    key = sp.mac_str(fr[0:6])
    return "dad" if key == "33:33:00:00:00:01" and sp.Frame(fr).ip6 is not None else key


def request_key(fr, want):
    dad = want == "na" and sp.Frame(fr).ip6.src == "::"
    return "dad" if dad else sp.mac_str(fr[6:12])


def main():
    rows = gen.rows()
    with sp.Case("nd_echo6") as case:
        a, b = sp.run_replies(case, gen.SERVICES, {"tunnel_address6": gen.TUNNEL6}, "nd_for_vips",
                              rows, {"na": check_na, "echo": check_echo},
                              {"na": "nd_replies", "echo": "echo_replies"}, reply_key, request_key)
        print("nd_echo6: default: %d advertisements, %d echo replies; nd_for_vips: %d "
              "advertisements (VIPs too), %d echo replies" % (a["na"], a["echo"], b["na"],
                                                               b["echo"]))


if __name__ == "__main__":
    main()
