# SPDX-License-Identifier: BSD-3-Clause
"""agent6: sluice-agent with both families (gen.py): the four tunnel forms
decapsulated to the VM owning the inner DIP, outer IPv6 fragments put back
together, ICMPv6 quotes translated, MSS clamped by the inner family, a CE
mark on the outer header carried to the inner one (RFC 6040); DSR of
IPv6 replies and ICMPv6 errors with every checksum over the new
pseudo-header; neighbor advertisements for PA6 on the uplink (router flag
clear) and for gateway6 to the VMs (set); the VMs' link-scope IPv6 (from
or to a link-local address, to a multicast group) kept off the uplink;
every other row dropped under its reason.

Frames the agent forwards are compared byte by byte with the expected
frame, which is built here from the input and the row's expectation
(addresses, ports, MSS, quotes, ECN edited; checksums redone independently).
Advertisements and echo replies are checked field by field.
"""
import struct

import gen
from sluicetest import ipv6 as v6
from sluicetest import pcap as sp


def inner_of_row(frame):
    """The packet a row is about: the inner packet of a tunnel, or the frame's own."""
    f = sp.Frame(frame)
    if f.ip6 is not None:
        if f.ip6.nh in (4, 41):
            b = f.ip6.payload
            return sp.IPv4(b) if f.ip6.nh == 4 else v6.IPv6(b)
        return f.ip6
    if f.ip is not None and f.ip.proto in (4, 41):
        return sp.IPv4(f.ip.payload) if f.ip.proto == 4 else v6.IPv6(f.ip.payload)
    return f.ip


def tag_of(pkt):
    return ("fl", pkt.flow) if isinstance(pkt, v6.IPv6) else ("id", pkt.id)


def row_key(frame, exp):
    f = sp.Frame(frame)
    if exp["kind"] == "na":
        return ("na", sp.mac_str(f.src))
    if exp["kind"] == "echo":
        return ("echo", struct.unpack("!H", f.ip6.l4[4:6])[0])
    if exp.get("whole") is not None:
        return tag_of(v6.IPv6(exp["whole"]))
    return tag_of(inner_of_row(frame))


def out_key(raw):
    f = sp.Frame(raw)
    if f.ip6 is not None and f.ip6.upper == v6.PROTO_ICMPV6 and f.ip6.l4[:1] == b"\x88":
        return ("na", sp.mac_str(f.dst))
    if f.ip6 is not None and f.ip6.upper == v6.PROTO_ICMPV6 and f.ip6.l4[:1] == b"\x81":
        return ("echo", struct.unpack("!H", f.ip6.l4[4:6])[0])
    if f.ip6 is not None:
        return ("fl", f.ip6.flow)
    if f.ip is not None:
        return ("id", f.ip.id)
    return ("?", raw)


def with_ecn(d, ecn):
    """The IPv4 or IPv6 datagram d with its ECN field set to ecn (IPv4: the
    header checksum redone)."""
    d = bytearray(d)
    if d[0] >> 4 == 6:
        vtc = struct.unpack("!I", d[0:4])[0] & ~(3 << 20) | ecn << 20
        d[0:4] = struct.pack("!I", vtc)
        return bytes(d)
    d[1] = (d[1] & 0xFC) | ecn
    return sp.ip_csum_fixed(bytes(d))


def expected(cfg, frame, exp):
    """The whole frame the agent must send for a forwarding row."""
    kind = exp["kind"]
    pkt = inner_of_row(frame)
    is6 = isinstance(pkt, v6.IPv6)
    d = exp["whole"] if exp.get("whole") is not None else pkt.data
    clamp = v6.tcp_mss_clamped6 if is6 else sp.tcp_mss_clamped
    if kind == "to_vm":
        if exp["mss"] is not None:
            d = clamp(d, exp["mss"])
        if exp["quote_src"] is not None:
            d = v6.icmp6_quote_edit(d, src=exp["quote_src"][0], sport=exp["quote_src"][1])
        if exp.get("ecn") is not None:
            d = with_ecn(d, exp["ecn"])
    if kind == "dsr":
        if exp["quote_dst"] is not None:
            d = v6.icmp6_quote_edit(d, dst=exp["quote_dst"][0], dport=exp["quote_dst"][1])
            d = v6.ip6_edit(d, src=exp["src"])
        elif is6:
            d = v6.ip6_edit(d, src=exp["src"], sport=exp["sport"])
        else:
            d = sp.ip_edit(d, src=exp["src"], sport=exp["sport"])
        if exp["mss"] is not None:
            d = clamp(d, exp["mss"])
    etype = v6.ETH_IPV6 if is6 else sp.ETH_IPV4
    if kind in ("to_vm", "probe_in"):
        vm = cfg.vm(exp["port"])
        return sp.eth_frame(vm.mac, cfg.port_mac(vm.name), etype, d)
    return sp.eth_frame(cfg.next_hop_mac, cfg.port_mac("uplink"), etype, d)


def check_na(case, cfg, got, frame, exp, what):
    g, i = sp.Frame(got), sp.Frame(frame)
    ns = i.ip6
    case.eq(sp.mac_str(g.dst), sp.mac_str(i.src), what + ": ethernet dst = solicitor")
    case.eq(sp.mac_str(g.src), cfg.port_mac(exp["port"]), what + ": ethernet src = port MAC")
    ip = g.ip6
    case.eq((ip.src, ip.dst, ip.hlim), (exp["target"], ns.src, 255),
            what + ": from the target to the solicitor, hop limit 255")
    m = ip.l4
    case.eq((m[0], m[1]), (136, 0), what + ": neighbor advertisement")
    case.eq(struct.unpack("!I", m[4:8])[0], (0x80000000 if exp["router"] else 0) | 0x60000000,
            what + ": flags (R as the gateway; S, O)")
    case.eq(v6.ip6_str(m[8:24]), exp["target"], what + ": target")
    case.eq((m[24], m[25], sp.mac_str(m[26:32])), (2, 1, cfg.port_mac(exp["port"])),
            what + ": target link-layer option = port MAC")
    case.eq(v6.l4_csum6(ip.data), v6.l4_csum6_expected(ip.data), what + ": checksum")


def check_echo(case, cfg, got, frame, what):
    g, i = sp.Frame(got), sp.Frame(frame)
    case.eq(sp.mac_str(g.dst), sp.mac_str(i.src), what + ": ethernet dst = requester")
    case.eq((g.ip6.src, g.ip6.dst), (i.ip6.dst, i.ip6.src), what + ": addresses swapped")
    case.eq(g.ip6.l4[0], 129, what + ": echo reply")
    case.eq(g.ip6.l4[4:], i.ip6.l4[4:], what + ": id, sequence, payload")
    case.eq(v6.l4_csum6(g.ip6.data), v6.l4_csum6_expected(g.ip6.data), what + ": checksum")


def main():
    rows = gen.rows()
    with sp.Case("agent6") as case:
        cfg = gen.config()
        run = case.run_agent(cfg, sp.frames_by_port(rows))
        outs = {}
        for port, frames in run.outputs.items():
            for fr in frames:
                outs.setdefault(out_key(fr), []).append((port, fr))
        expect, n_out, used = {}, 0, set()
        for desc, port, frame, exp in rows:
            if isinstance(exp, str):
                expect[exp] = expect.get(exp, 0) + 1
                continue
            if exp["kind"] == "held":
                continue
            k = row_key(frame, exp)
            used.add(k)
            got = outs.get(k, [])
            if not case.eq(len(got), 1, desc + ": frames out"):
                continue
            n_out += 1
            oport, fr = got[0]
            case.eq(oport, exp["port"], desc + ": out port")
            if exp["kind"] == "na":
                check_na(case, cfg, fr, frame, exp, desc)
            elif exp["kind"] == "echo":
                check_echo(case, cfg, fr, frame, desc)
            else:
                diff = sp.frame_diff(fr, expected(cfg, frame, exp))
                case.check(diff is None, "%s: %s", desc, diff)
        stray = [k for k in outs if k not in used]
        case.check(not stray, "frames out no row expects: %s", stray[:4])
        case.eq(sum(len(v) for v in run.outputs.values()), n_out, "frames out")
        case.drops_exactly(run, expect, "agent6")
        st = run.stats
        kinds = [e["kind"] for _, _, _, e in rows if isinstance(e, dict)]
        case.eq(st["decap"], kinds.count("to_vm"), "decap")
        case.eq(st["dsr"], kinds.count("dsr"), "dsr")
        case.eq(st["nd_replies"], kinds.count("na"), "nd_replies")
        wholes = sum(1 for _, _, _, e in rows if isinstance(e, dict) and e.get("whole"))
        case.eq(st["frags_in"], kinds.count("held") + wholes, "frags_in")
        case.eq(st["reassembled"], wholes, "reassembled")
        # Each row's ecn=CE marks an ECT inner header CE.
        case.eq(st["ecn_ce"], sum(1 for _, _, _, e in rows
                                  if isinstance(e, dict) and e.get("ecn") == gen.CE), "ecn_ce")
        case.eq(st["icmp_translated"], 2, "icmp_translated")
        case.eq(st["mss_clamped"], 6, "mss_clamped")
        print("agent6: %d rows, %d frames out: %d decapsulated (4in4, 4in6, 6in4, 6in6), %d DSR, "
              "%d advertisements; %d dropped under %d reasons" % (
                  len(rows), n_out, kinds.count("to_vm"), kinds.count("dsr"),
                  kinds.count("na"), sum(expect.values()), len(expect)))


if __name__ == "__main__":
    main()
