# SPDX-License-Identifier: BSD-3-Clause
"""agent: sluice-agent on net_pcap, an uplink and two VM ports (gen.py).

For every row of gen.py the expected output frame is built here from the
input frame and the row's expectation alone: the outer header stripped, or
the source rewritten to VIP:vport, the MSS lowered, an ICMP quote's address
and port changed, the inner ECN field set from the outer one, all checksums
recomputed by scapy. The agent's frame must
equal it byte for byte (a TCP/ICMP checksum of 0xffff may read 0x0000),
come out on the expected port, and be the only frame of its row; dropped
rows leave no frame anywhere and count under their reason. The JSON
counters must match both the table and what the output pcaps show.

Two runs: mss_clamp = 1400, then no mss_clamp (nothing is clamped).
"""
import struct

import gen
from sluicetest import pcap as sp


def row_tag(frame):
    """The row's tag: the IP id of its (outer) IPv4 header, or None."""
    l2 = 18 if frame[12:14] == b"\x81\x00" else 14
    if frame[l2 - 2:l2] != b"\x08\x00" or len(frame) < l2 + 6:
        return None
    return struct.unpack("!H", frame[l2 + 4:l2 + 6])[0]


def out_key(port, raw):
    """What traces an output frame back to its row (see gen.py)."""
    f = sp.Frame(raw)
    if f.type == sp.ETH_ARP:
        a = sp.Arp(raw, f.l2)
        return ("arp", port, a.spa, a.tpa) if a.ok else ("?", raw)
    if f.ip is not None:
        if f.ip.proto == sp.PROTO_ICMP and f.ip.payload[:1] == b"\0":
            return ("echo", struct.unpack("!H", f.ip.payload[4:6])[0])
        return ("ip", f.ip.id)
    return ("?", raw)


def tunnel_fragment(cfg, frame):
    """A sound outer fragment of IP-in-IP from a mux to our PA: what the
    agent takes for reassembly."""
    try:
        ip = sp.Frame(frame).ip
    except struct.error:  # the truncated rows
        return False
    return ip is not None and (ip.mf or ip.frag != 0) and ip.proto == 4 and \
        ip.dst == cfg.pa and ip.src in cfg.muxes and sp.ip_csum_ok(ip.header)


def row_key(port, frame, exp):
    if isinstance(exp, dict) and exp["kind"] == "arp":
        a = sp.Arp(frame, sp.Frame(frame).l2)
        return ("arp", exp["port"], exp["asked"], a.spa)
    if isinstance(exp, dict) and exp["kind"] == "echo":
        return ("echo", row_tag(frame))
    return ("ip", row_tag(frame))


def expected_frame(cfg, port, frame, exp, got):
    """The frame the agent should send for this row (got: the frame it did
    send, for the fields an echo reply may choose freely)."""
    f = sp.Frame(frame)
    kind = exp["kind"]
    if kind == "to_vm":
        # The whole outer payload: the inner datagram, as sent (or reassembled).
        d = exp["whole"] if exp.get("whole") is not None else f.ip.payload
        if exp["mss"] is not None:
            before, d = d, sp.tcp_mss_clamped(d, exp["mss"])
            assert d != bytes(before), "test bug: nothing to clamp"
        if exp["quote_src"] is not None:
            d = sp.icmp_quote_edit(d, src=exp["quote_src"][0], sport=exp["quote_src"][1])
        if exp.get("ecn") is not None:
            d = bytearray(d)
            d[1] = (d[1] & 0xFC) | exp["ecn"]
            d = sp.ip_csum_fixed(bytes(d))
        vm = cfg.vm(exp["port"])
        return sp.eth_frame(vm.mac, cfg.port_mac(vm.name), sp.ETH_IPV4, d)
    if kind == "probe_in":
        vm = cfg.vm(exp["port"])
        return sp.eth_frame(vm.mac, cfg.port_mac(vm.name), sp.ETH_IPV4, f.ip.data)
    if kind in ("dsr", "pass", "probe_out"):
        d = f.ip.data
        if kind == "dsr":
            if exp["quote_dst"] is not None:
                d = sp.icmp_quote_edit(d, dst=exp["quote_dst"][0], dport=exp["quote_dst"][1])
            d = sp.ip_edit(d, src=exp["src"], sport=exp["sport"])
            if exp["mss"] is not None:
                before, d = d, sp.tcp_mss_clamped(d, exp["mss"])
                assert d != bytes(before), "test bug: nothing to clamp"
        return sp.eth_frame(cfg.next_hop_mac, cfg.port_mac("uplink"), sp.ETH_IPV4, d)
    if kind == "arp":
        a = sp.Arp(frame, f.l2)
        arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 2) + sp.mac_bytes(cfg.port_mac(port)) + \
            sp.ip_bytes(exp["asked"]) + sp.mac_bytes(a.sha) + sp.ip_bytes(a.spa)
        return sp.eth_frame(sp.mac_str(f.src), cfg.port_mac(port), sp.ETH_ARP, arp)
    if kind == "echo":
        d = bytearray(sp.ip_edit(f.ip.data, src=f.ip.dst, dst=f.ip.src))
        g = sp.Frame(got)
        if g.ip is not None:  # the reply's TTL and IP id are the agent's to pick
            d[4:6] = struct.pack("!H", g.ip.id)
            d[8] = g.ip.ttl
        d[f.ip.hlen] = 0  # echo reply
        d = sp.l4_csum_fixed(sp.ip_csum_fixed(bytes(d)))
        return sp.eth_frame(sp.mac_str(f.src), cfg.port_mac("uplink"), sp.ETH_IPV4, d)
    raise ValueError(kind)


def check_frame(case, cfg, what, port, frame, exp, got):
    """Field checks for readable failures, then the whole frame."""
    g = sp.Frame(got)
    want = expected_frame(cfg, port, frame, exp, got)
    w = sp.Frame(want)
    case.eq(sp.mac_str(g.dst), sp.mac_str(w.dst), what + ": ethernet dst")
    case.eq(sp.mac_str(g.src), sp.mac_str(w.src), what + ": ethernet src")
    case.eq((g.type, g.vlan), (w.type, None), what + ": ethertype, untagged")
    if exp["kind"] == "arp":
        a = sp.Arp(got, g.l2)
        if case.check(a.ok, "%s: ARP reply too short", what):
            case.eq(a.op, 2, what + ": ARP op")
            case.eq(a.sha, cfg.port_mac(port), what + ": ARP sha = port MAC")
            case.eq(a.spa, exp["asked"], what + ": ARP spa = address asked for")
        # The reply may keep the request's padding.
        case.check(len(got) in (42, len(frame)), "%s: ARP reply is %d bytes", what, len(got))
        got = got[:42]
    elif g.ip is not None and w.ip is not None:
        ip = g.ip
        case.eq(len(got), 14 + ip.total, what + ": frame length = 14 + IP total (no padding)")
        case.eq((ip.src, ip.dst), (w.ip.src, w.ip.dst), what + ": IP addresses")
        case.check(sp.ip_csum_ok(ip.header), "%s: IP checksum invalid (%#06x)", what, ip.csum)
        if ip.frag == 0 and not ip.mf and ip.proto in (sp.PROTO_TCP, sp.PROTO_UDP):
            case.eq(ip.ports(), w.ip.ports(), what + ": ports")
            if ip.proto == sp.PROTO_UDP and sp.l4_csum(w.ip.data, sp.PROTO_UDP) == 0:
                case.eq(sp.l4_csum(ip.data, sp.PROTO_UDP), 0, what + ": UDP checksum 0 stays 0")
            else:
                case.check(sp.l4_csum_ok(ip.data, ip.proto), "%s: L4 checksum %#06x, want %#06x",
                           what, sp.l4_csum(ip.data, ip.proto),
                           sp.l4_csum_expected(ip.data, ip.proto))
        if ip.proto == sp.PROTO_TCP and ip.frag == 0 and not ip.mf:
            case.eq(sp.tcp_mss(ip.data), sp.tcp_mss(w.ip.data), what + ": MSS option")
        if ip.proto == sp.PROTO_ICMP:
            case.check(sp.l4_csum_ok(ip.data, sp.PROTO_ICMP), "%s: ICMP checksum invalid", what)
            if ip.payload[0] in (3, 11) and len(ip.payload) >= 36:
                q, wq = sp.IPv4(ip.payload[8:]), sp.IPv4(w.ip.payload[8:])
                case.eq((q.src, q.dst), (wq.src, wq.dst), what + ": quoted addresses")
                case.eq(ip.payload[8 + q.hlen:12 + q.hlen], w.ip.payload[8 + wq.hlen:12 + wq.hlen],
                        what + ": quoted ports")
                case.check(sp.ip_csum_ok(q.header), "%s: quoted IP checksum invalid", what)
    diff = sp.frame_diff(got, want)
    case.check(diff is None, "%s: frame differs from the expected one: %s", what, diff)


def composition(cfg, outputs):
    """What the output pcaps show, in the JSON counters' terms."""
    vips = {s.vip for s in cfg.services}
    c = {"decap": 0, "dsr": 0, "passthrough": 0, "echo_replies": 0, "arp_replies": 0,
         "probe_in": 0, "probe_out": 0}
    for port, frames in outputs.items():
        for raw in frames:
            f = sp.Frame(raw)
            if f.type == sp.ETH_ARP:
                c["arp_replies"] += 1
            elif port != "uplink":
                c["probe_in" if f.ip is not None and f.ip.src in cfg.probers else "decap"] += 1
            elif f.ip is not None and f.ip.proto == sp.PROTO_ICMP and f.ip.src == cfg.pa \
                    and f.ip.payload[:1] == b"\0":
                c["echo_replies"] += 1
            elif f.ip is not None and f.ip.dst in cfg.probers:
                c["probe_out"] += 1
            elif f.ip is not None and f.ip.src in vips:
                c["dsr"] += 1
            else:
                c["passthrough"] += 1
    return c


def one_run(case, rows, clamp):
    tag = "clamp%d" % clamp if clamp else "noclamp"
    cfg = gen.config()
    cfg.mss_clamp = clamp
    if not clamp:  # nothing is clamped: drop the MSS edits from the table
        rows = [(d, p, f, dict(e, mss=None) if isinstance(e, dict) and "mss" in e else e)
                for d, p, f, e in rows]
    run = case.run_agent(cfg, sp.frames_by_port(rows), tag=tag)

    by_key = {}
    for port, frames in run.outputs.items():
        for raw in frames:
            by_key.setdefault(out_key(port, raw), []).append((port, raw))
    claimed = set()
    want = {k: 0 for k in ("decap", "dsr", "passthrough", "echo_replies", "arp_replies",
                           "mss_clamped", "icmp_translated", "probe_in", "probe_out",
                           "frags_in", "reassembled", "ecn_ce")}
    to_vm = {v.name: 0 for v in cfg.vms}
    drops = {}
    for desc, port, frame, exp in rows:
        what = "%s: %s [%s]" % (tag, desc, port)
        key = row_key(port, frame, exp)
        want["frags_in"] += port == "uplink" and tunnel_fragment(cfg, frame)
        if exp == gen.HELD:
            continue  # what it holds comes out with the row that completes it
        if isinstance(exp, str):
            drops[exp] = drops.get(exp, 0) + 1
            keys = [key] + ([("echo", key[1])] if key[0] == "ip" else [])
            for k in keys:
                if k[0] == "arp":
                    got = [x for kk, v in by_key.items() for x in v
                           if kk[0] == "arp" and kk[2:] == k[2:]]
                else:
                    got = by_key.get(k, []) if k[1] is not None else []
                case.eq(len(got), 0, what + ": frames out (want drop, %s)" % exp)
            continue
        got = by_key.get(key, [])
        claimed.add(key)
        if not case.eq([p for p, _ in got], [exp["port"]], what + ": output port(s)"):
            continue
        check_frame(case, cfg, what, port, frame, exp, got[0][1])
        k = exp["kind"]
        if k in ("to_vm", "probe_in"):
            want["decap" if k == "to_vm" else "probe_in"] += 1
            to_vm[exp["port"]] += 1
        else:
            want[{"dsr": "dsr", "pass": "passthrough", "echo": "echo_replies",
                  "arp": "arp_replies", "probe_out": "probe_out"}[k]] += 1
        want["reassembled"] += exp.get("whole") is not None
        want["mss_clamped"] += exp.get("mss") is not None
        want["ecn_ce"] += exp.get("ecn") == gen.CE  # an ECT inner header marked
        want["icmp_translated"] += exp.get("quote_src") is not None or \
            exp.get("quote_dst") is not None
    for k, v in by_key.items():
        if k not in claimed:
            for port, raw in v:
                case.check(False, "%s: unexpected frame on %s: %s", tag, port, raw[:64].hex())

    st = run.stats
    for name, n in want.items():
        case.eq(st.get(name), n, "%s: counter %s vs table" % (tag, name))
    n_out = sum(len(v) for v in run.outputs.values())
    case.eq(st.get("tx"), n_out, tag + ": tx")
    case.eq(n_out, sum(want[k] for k in ("decap", "dsr", "passthrough", "echo_replies",
                                          "arp_replies", "probe_in", "probe_out")),
            tag + ": frames out vs table")
    for name, n in composition(cfg, run.outputs).items():
        case.eq(st.get(name), n, "%s: counter %s vs output pcaps" % (tag, name))
    for v in st.get("vms", []):
        case.eq(v.get("to_vm"), to_vm.get(v.get("name")), "%s: vms[%s].to_vm" % (
            tag, v.get("name")))
        case.eq(v.get("to_vm"), sum(1 for raw in run.outputs[v["name"]]
                                    if sp.Frame(raw).type == sp.ETH_IPV4),
                "%s: vms[%s].to_vm vs its output pcap" % (tag, v.get("name")))
    case.eq(sorted(v.get("name") for v in st.get("vms", [])), sorted(to_vm),
            tag + ": vms in the summary")
    case.drops_exactly(run, drops, tag)
    return want, drops, n_out


def two_ports_one_dip(case):
    """vm11 behind the TCP service on two ports: an ICMP error quotes
    VIP:80, which cannot say which, and the agent says so at start."""
    cfg = gen.config()
    cfg.services = [sp.Service(gen.VIP, "tcp", 80, [sp.Backend("10.1.0.11", 8080, gen.PA),
                                                    sp.Backend("10.1.0.11", 8081, gen.PA)])]
    run = case.run_agent(cfg, {}, tag="two_ports")
    case.check("10.1.0.11 serves 192.0.2.10 port 80 on several ports" in run.stderr,
               "two ports of one DIP: the agent warns: %r", run.stderr.strip()[-400:])


def main():
    rows = gen.rows()
    with sp.Case("agent") as case:
        want, drops, n_out = one_run(case, rows, gen.CLAMP)
        one_run(case, rows, 0)
        two_ports_one_dip(case)
        print("agent: %d rows, %d frames out: %d decapsulated, %d DSR, %d passed through, "
              "%d ARP and %d echo replies, %d MSS clamped, %d ICMP quotes translated; "
              "%d dropped under %d reasons" % (
                  len(rows), n_out, want["decap"], want["dsr"], want["passthrough"],
                  want["arp_replies"], want["echo_replies"], want["mss_clamped"],
                  want["icmp_translated"], sum(drops.values()), len(drops)))


if __name__ == "__main__":
    main()
