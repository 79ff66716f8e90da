#!/usr/bin/python3
"""HTTP requests through the VIP, and what every component counted meanwhile.

Counters are read live (the mux's and agents' telemetry, the client
namespace's /proc/net/snmp) before and after a burst of requests, with the
lab quiet on both sides, so each delta is exactly this burst's traffic:

  - every request gets a backend's page (HTTP 200);
  - the spread fits the weights: Pearson chi-square, p >= 1e-6 (a correct
    balancer fails one check in a million; a weight-0 backend must get nothing);
  - the mux's new connections per backend equal the connections the client
    made to that backend (a SYN reusing the five-tuple of a closed
    connection is a new connection);
  - the mux forwarded every packet the client sent, and received nothing
    else but ARP: none of the responses (direct server return);
  - the agents decapsulated every packet the mux forwarded, and every packet
    the client received is a reply they rewrote to the VIP's source (DSR).
"""
import argparse
import sys
import time

from sluicetest.checks import Checks
from sluicetest.lab import SPREAD_P_MIN, delta, http_burst, quiet_snapshot, snapshot, spread_report


def settled(d):
    return (d["mux.fwd_pkts"] == d["client.Ip.OutRequests"]
            and d["agent.decap"] == d["mux.fwd_pkts"]
            and d["client.Ip.InReceives"] == d["agent.dsr"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client-ns", required=True)
    ap.add_argument("--mux", required=True)
    ap.add_argument("--agents", required=True, type=lambda s: s.split(","))
    ap.add_argument("--url", required=True)
    ap.add_argument("-n", type=int, default=400)
    ap.add_argument("--backends", required=True,
                    help="name=dip,... in the order of --weights")
    ap.add_argument("--weights", required=True)
    args = ap.parse_args()
    names = [b.split("=")[0] for b in args.backends.split(",")]
    dips = [b.split("=")[1] for b in args.backends.split(",")]
    weights = [int(w) for w in args.weights.split(",")]
    check = Checks()
    comps = (args.client_ns, args.mux, args.agents)

    before = quiet_snapshot(*comps)
    t0 = time.monotonic()
    counts, failed, ports = http_burst(args.client_ns, args.url, args.n)
    took = time.monotonic() - t0
    # the last FIN and ACK may still be on their way: wait until the books
    # balance (bounded), then make sure nothing else moves
    end = time.monotonic() + 10
    while True:
        d = delta(snapshot(*comps), before)
        if settled(d) or time.monotonic() > end:
            break
        time.sleep(0.05)
    d = delta(quiet_snapshot(*comps), before)

    print(f"# {args.n} requests in {took:.2f} s")
    table, p = spread_report(counts, names, weights)
    print(table)
    check(not failed and sum(counts.values()) == args.n,
          f"all {args.n} requests answered with a backend's page "
          f"({sum(counts.values())} ok, failures {failed[:10]})")
    check(p >= SPREAD_P_MIN,
          f"spread follows weights {args.weights}: chi-square p = {p:.3g} >= {SPREAD_P_MIN:g}")
    # The client's kernel may reuse a source port within the burst; that
    # five-tuple is then a connection-table hit at the mux (same backend),
    # not a new connection. So the mux's new connections per backend equal
    # the distinct five-tuples the client saw answered by that backend,
    # less at most the entries already live before the burst.
    mux_new = {n: d.get("mux.new_conns." + dip, 0) for n, dip in zip(names, dips)}
    conns = {n: sum(1 for b, _ in ports if b == n) for n in names}
    tuples = {n: len({p for b, p in ports if b == n}) for n in names}
    live = before.get("mux.conn_live", 0)
    reused = sum(conns.values()) - sum(tuples.values())
    check(all(conns[n] - live <= mux_new[n] <= conns[n] for n in names),
          f"mux new connections per backend match the client's connections: "
          f"mux {mux_new}, client {conns} ({reused} source ports reused, "
          f"{live} entries live before)")
    print("# deltas: " + ", ".join(f"{k}={v}" for k, v in sorted(d.items()) if v))
    check(d["mux.fwd_pkts"] == d["client.Ip.OutRequests"] > 0,
          f"the mux forwarded every packet the client sent: "
          f"{d['mux.fwd_pkts']} == {d['client.Ip.OutRequests']}")
    check(d["mux.rx_pkts"] == d["mux.fwd_pkts"] + d["mux.arp_replies"],
          f"the mux received only client->VIP packets (and ARP): rx {d['mux.rx_pkts']} == "
          f"fwd {d['mux.fwd_pkts']} + arp {d['mux.arp_replies']}; "
          f"none of the {d['client.Ip.InReceives']} replies")
    check(d["mux.drops"] == 0, f"the mux dropped nothing: {d['mux.drops']}")
    check(d["agent.decap"] == d["mux.fwd_pkts"],
          f"the agents decapsulated every forwarded packet: {d['agent.decap']}")
    check(d["agent.dsr"] > 0 and d["client.Ip.InReceives"] == d["agent.dsr"],
          f"every packet the client received is an agent's DSR rewrite: "
          f"{d['client.Ip.InReceives']} == {d['agent.dsr']}")
    check(d["agent.drops"] == 0 and d["agent.passthrough"] == 0,
          f"the agents dropped {d['agent.drops']} and passed through "
          f"{d['agent.passthrough']} untouched (want 0, 0)")
    check(d["agent.mss_clamped"] > 0,
          f"the agents clamped the MSS of SYNs and SYN-ACKs: {d['agent.mss_clamped']}")
    return check.report("check_traffic")


if __name__ == "__main__":
    sys.exit(main())
