#!/usr/bin/python3
"""Helpers of the netns lab (scripts/lab.sh, tests/netns/): read a DPDK
process's telemetry, a namespace's SNMP counters, send HTTP requests through
the VIP with curl and judge how they spread over the backends.

Importable (tests/netns/*.py) and a command line:

  lab_tool.py burst --ns NS --url URL -n N [--weights 1,2,3,4] [--check]
        N requests, one connection each (curl URL globbing against an HTTP/1.0
        server); prints the spread; with --check fails unless every request
        succeeded and the spread fits the weights (chi-square, p >= 1e-6).
  lab_tool.py tel PREFIX COMMAND
        one telemetry command of the DPDK process with that --file-prefix.
  lab_tool.py dsr --client-ns NS --mux PREFIX --agents P1,P2
        who saw which packets, from live counters: the client's IP counters,
        the mux's and the agents' telemetry (direct server return at work).
  lab_tool.py snmp NS
        /proc/net/snmp of a namespace as JSON.
"""
import argparse
import json
import math
import re
import socket
import subprocess
import sys

# A backend's index.html says "served by vm11 (10.1.1.11)".
BODY_RE = re.compile(r"served by (\S+) \(")
# Pearson chi-square threshold: a correct balancer fails 1 check in a million
# (a CI run makes about 25 such checks; at 1e-4 one run in 400 went red).
SPREAD_P_MIN = 1e-6


def telemetry(prefix, cmd, timeout=5.0):
    """The reply to one telemetry command; None while it is not registered."""
    path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(path)
        json.loads(s.recv(16384))  # greeting: version, pid, max_output_len
        s.send(cmd.encode())
        reply = json.loads(s.recv(65536))
    finally:
        s.close()
    return reply.get(cmd.split(",")[0])


def snmp(ns):
    """/proc/net/snmp of a namespace as {"Ip": {...}, "Tcp": {...}, ...}."""
    text = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"],
                          check=True, capture_output=True, text=True).stdout
    out, lines = {}, text.splitlines()
    for head, vals in zip(lines[0::2], lines[1::2]):
        name, keys = head.split(":", 1)
        out[name] = dict(zip(keys.split(), (int(v) for v in vals.split(":", 1)[1].split())))
    return out


def http_burst(ns, url, n, max_time=5):
    """n GET requests from namespace ns, each on its own connection.

    Returns (per-backend counts, failures) where failures lists the curl
    status of each request that did not return 200 with a backend's body.
    """
    # curl runs the transfers one after the other; the backends speak
    # HTTP/1.0 and close, so every request is a new TCP connection.
    sep = "&" if "?" in url else "?"
    cmd = ["ip", "netns", "exec", ns, "curl", "-s", "--max-time", str(max_time),
           "-w", "\\n@@ %{http_code} %{local_port}\\n", f"{url}{sep}req=[1-{n}]"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    counts, failures, body, ports = {}, [], [], []
    for line in p.stdout.splitlines():
        if line.startswith("@@ "):
            code, port = (line[3:].split() + [""])[:2]
            m = BODY_RE.search("\n".join(body))
            if code == "200" and m:
                counts[m.group(1)] = counts.get(m.group(1), 0) + 1
                ports.append((m.group(1), port))
            else:
                failures.append(code)
            body = []
        else:
            body.append(line)
    missing = n - sum(counts.values()) - len(failures)
    failures += ["none"] * missing
    # (backend, client source port) of each answered request, in order: the
    # kernel may pick a port again, and the mux then finds that five-tuple
    # in its connection table instead of counting a new connection
    http_burst.ports = ports
    return counts, failures


def chi2_sf(x, df):
    """P(X >= x) for a chi-square variable with df degrees of freedom."""
    if df <= 0:
        return 1.0
    if df % 2 == 0:
        term = total = 1.0
        for i in range(1, df // 2):
            term *= (x / 2) / i
            total += term
        return math.exp(-x / 2) * total
    total, term = 0.0, math.sqrt(2 * x / math.pi) * math.exp(-x / 2)
    for k in range(1, (df - 1) // 2 + 1):
        total += term
        term *= x / (2 * k + 1)
    return math.erfc(math.sqrt(x / 2)) + total


def spread_report(counts, names, weights):
    """Table of observed vs expected per backend, the chi-square p-value."""
    n = sum(counts.values())
    wsum = sum(weights)
    rows, chi, df = [], 0.0, -1
    for name, w in zip(names, weights):
        exp = n * w / wsum
        obs = counts.get(name, 0)
        rows.append(f"  {name:6} weight {w:3}  {obs:5} requests  "
                    f"(expected {exp:7.1f}, {100.0 * obs / n if n else 0:5.1f}%)")
        if w > 0:
            chi += (obs - exp) ** 2 / exp
            df += 1
        elif obs:
            chi = math.inf  # a weight-0 backend got new connections
    stray = {k: v for k, v in counts.items() if k not in names}
    if stray:
        rows.append(f"  unexpected backends: {stray}")
        chi = math.inf
    p = chi2_sf(chi, df) if math.isfinite(chi) else 0.0
    rows.append(f"  chi-square {chi:.2f} on {df} degrees of freedom: p = {p:.3g} "
                f"(fails below {SPREAD_P_MIN:g})")
    return "\n".join(rows), p


# Agent counters that are not drop reasons (/sluice/agent/stats lists
# non-zero drops beside them).
AGENT_COUNTERS = ("uplink_rx", "decap", "vm_rx", "dsr", "passthrough", "probe_in",
                  "probe_out", "icmp_translated", "mss_clamped", "arp_replies",
                  "echo_replies", "tx")


def snapshot(client_ns, mux_prefix, agent_prefixes):
    """Live counters of every component, flat: {"client.Ip.OutRequests": n,
    "mux.fwd_pkts": n, "mux.drops": n, "agent.dsr": n (summed), ...}."""
    out = {}
    sn = snmp(client_ns)
    for k in ("OutRequests", "InReceives", "InDelivers"):
        out[f"client.Ip.{k}"] = sn["Ip"][k]
    st = telemetry(mux_prefix, "/sluice/stats")
    for k, v in st.items():
        out[f"mux.{k}"] = v
    out["mux.drops"] = sum(telemetry(mux_prefix, "/sluice/drops").values())
    bes = telemetry(mux_prefix, "/sluice/backends,0")
    for k, v in bes.items():  # "10_1_1_11_8080": [pkts, bytes, new_conns, host, wz]
        out["mux.new_conns." + ".".join(k.split("_")[:4])] = v[2]
    for k in AGENT_COUNTERS + ("drops",):
        out[f"agent.{k}"] = 0
    for p in agent_prefixes:
        for k, v in telemetry(p, "/sluice/agent/stats").items():
            out["agent." + (k if k in AGENT_COUNTERS else "drops")] += v
    return out


def delta(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items() if isinstance(v, int)}


def dsr_report(c):
    """Who saw what, from a snapshot or a delta of two."""
    other_mux = (c["mux.rx_pkts"] - c["mux.fwd_pkts"] - c["mux.arp_replies"]
                 - c["mux.echo_replies"] - c.get("mux.vip_probes", 0))
    other_client = c["client.Ip.InReceives"] - c["agent.dsr"] - c["mux.echo_replies"]
    return "\n".join([
        f"client   sent {c['client.Ip.OutRequests']} IP packets, "
        f"received {c['client.Ip.InReceives']}",
        f"mux      received {c['mux.rx_pkts']}: forwarded {c['mux.fwd_pkts']} in IP-in-IP, "
        f"answered {c['mux.arp_replies']} ARP, {c['mux.echo_replies']} pings and "
        f"{c.get('mux.vip_probes', 0)} VIP probes of the manager; "
        f"anything else: {other_mux} ({c['mux.drops']} dropped)",
        f"agents   decapsulated {c['agent.decap']} for the VMs; rewrote {c['agent.dsr']} "
        f"replies to the VIP's source and sent them straight to the router (DSR); "
        f"passed {c['agent.passthrough']} through; dropped {c['agent.drops']}",
        f"=> of the client's {c['client.Ip.InReceives']} packets in, {c['agent.dsr']} came "
        f"from the agents, {c['mux.echo_replies']} were the mux's ping replies, "
        f"{other_client} from elsewhere (the router); the mux saw no reply.",
    ])


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("burst")
    b.add_argument("--ns", required=True)
    b.add_argument("--url", required=True)
    b.add_argument("-n", type=int, default=400)
    b.add_argument("--names", default="vm11,vm12,vm21,vm22")
    b.add_argument("--weights", default="1,1,1,1")
    b.add_argument("--check", action="store_true")
    b.add_argument("--json", help="write the counts here")
    t = sub.add_parser("tel")
    t.add_argument("prefix")
    t.add_argument("command")
    d = sub.add_parser("dsr")
    d.add_argument("--client-ns", required=True)
    d.add_argument("--mux", required=True)
    d.add_argument("--agents", required=True)
    n = sub.add_parser("snmp")
    n.add_argument("ns")
    a = ap.parse_args()

    if a.cmd == "dsr":
        print(dsr_report(snapshot(a.client_ns, a.mux, a.agents.split(","))))
        return 0
    if a.cmd == "snmp":
        print(json.dumps(snmp(a.ns)))
        return 0

    if a.cmd == "tel":
        print(json.dumps(telemetry(a.prefix, a.command)))
        return 0
    names = a.names.split(",")
    weights = [int(w) for w in a.weights.split(",")]
    counts, failures = http_burst(a.ns, a.url, a.n)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"counts": counts, "failures": failures}, f)
    table, p = spread_report(counts, names, weights)
    print(f"{sum(counts.values())} of {a.n} requests answered by a backend, "
          f"{len(failures)} failed")
    print(table)
    if failures:
        print(f"  failures (curl http_code): {failures[:20]}")
    if a.check and (failures or p < SPREAD_P_MIN):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
