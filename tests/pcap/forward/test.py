# SPDX-License-Identifier: BSD-3-Clause
"""forward: every kind of forwardable packet comes out encapsulated, with
every outer and inner field as the design fixes it (see sp.check_encap).

Two runs: the default mux settings, and one with another tunnel address,
next-hop MAC and tunnel TTL, so those fields are shown to come from the
configuration.
"""
import struct

import gen
from sluicetest import pcap as sp


def key(ipdata):
    return sp.flow_of(ipdata)


def one_run(case, cfg, rows, tag):
    run = case.run(cfg, [[f for _, f in rows]], tag=tag)
    out = run.outputs[0]
    case.eq(len(out), len(rows), tag + ": frames out")
    byflow = {}
    for fr in out:
        inner = sp.inner_of(fr)
        if case.check(inner is not None, "%s: output frame is not IP-in-IP: %s", tag, fr.hex()):
            byflow.setdefault(key(inner), []).append(fr)
    backends = set()
    for desc, f in rows:
        k = key(sp.Frame(f).ip)
        got = byflow.get(k, [])
        if not case.eq(len(got), 1, "%s: %s: encapsulated copies" % (tag, desc)):
            continue
        be = sp.check_encap(case, cfg, got[0], f, "%s: %s" % (tag, desc))
        if be:
            backends.add(be)
        if desc.startswith("udp whose rewritten checksum"):
            inner = sp.inner_of(got[0])
            case.eq(struct.unpack("!H", inner.payload[6:8])[0], 0xFFFF,
                    desc + ": UDP checksum field")
    st = run.stats
    case.eq(st["fwd_pkts"], len(rows), tag + ": fwd_pkts")
    case.eq(st["conn_new"], len(rows), tag + ": conn_new (one packet per flow)")
    case.drops_exactly(run, {}, tag)
    return backends


def main():
    rows = gen.frames()
    with sp.Case("forward") as case:
        cfg = sp.MuxConfig(gen.SERVICES)
        b1 = one_run(case, cfg, rows, "default")
        cfg2 = sp.MuxConfig(gen.SERVICES, tunnel_address="10.255.7.9",
                            next_hop_mac="0a:bb:cc:dd:ee:0f", tunnel_ttl=17)
        b2 = one_run(case, cfg2, rows, "ttl17")
        n_be = sum(len(s.backends) for s in gen.SERVICES)
        print("forward: %d packets x 2 configs, every field checked; %d/%d backends used, "
              "tunnel TTL 64 and 17" % (len(rows), len(b1 | b2), n_be))


if __name__ == "__main__":
    main()
