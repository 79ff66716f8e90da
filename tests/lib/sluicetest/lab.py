# SPDX-License-Identifier: BSD-3-Clause
"""The namespace lab's traffic and counters (scripts/netns-lab.sh draws the
lab; scripts/lab.sh and tests/netns/ run it).

    burst = http_burst("sl-client", "http://192.0.2.10/", 400)
    table, p = spread_report(burst.counts, ["vm11", "vm12"], [1, 1])
    before = snapshot("sl-client", "sl-mux", ["sl-agent1", "sl-agent2"])

http_burst sends requests through the VIP with curl, each on its own
connection, and tells which backend answered each; spread_report judges
the spread against the weights (Pearson chi-square); snapshot reads every
component's live counters (the client's IP counters, the mux's and the
agents' telemetry) into one flat dict, and delta/dsr_report say what a
burst did: direct server return at work.
"""
import math
import re
import subprocess
import time
from collections import namedtuple

from .netns import snmp, snmp6
from .procs import telemetry

# A backend's index.html says "served by vm11 (10.1.1.11)".
BODY_RE = re.compile(r"served by (\S+) \(")
# Pearson chi-square threshold: a correct balancer fails 1 check in a million
# (a CI run makes about 25 such checks; at 1e-4 one run in 400 went red).
SPREAD_P_MIN = 1e-6

# counts: {backend: requests it answered}; failures: the curl status of each
# request that did not get 200 with a backend's page; ports: (backend, client
# source port) of each answered request, in order (the kernel may pick a port
# again, and the mux then finds that five-tuple in its connection table
# instead of counting a new connection).
Burst = namedtuple("Burst", "counts failures ports")


def http_burst(ns, url, n, max_time=5):
    """n GET requests from namespace ns, each on its own connection."""
    # curl runs the transfers one after the other and would keep one
    # connection for them all where the server keeps it open (nginx,
    # LAB_HTTPD=nginx: every request to one backend); "Connection: close"
    # makes each request a new TCP connection, whatever the server.
    sep = "&" if "?" in url else "?"
    cmd = ["ip", "netns", "exec", ns, "curl", "-s", "--max-time", str(max_time),
           "-H", "Connection: close",
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
    return Burst(counts, failures, ports)


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


# A worker's naps, and the frames that ended them: they go on by themselves.
NAP_COUNTERS = ("idle_sleeps", "idle_wakes")


def agent_counters(prefix):
    """An agent's /sluice/agent/stats, but its naps."""
    c = telemetry(prefix, "/sluice/agent/stats")
    return {k: v for k, v in c.items() if k not in NAP_COUNTERS}


def snapshot(client_ns, mux_prefix, agent_prefixes):
    """Live counters of every component, flat: {"client.Ip.OutRequests": n,
    "mux.fwd_pkts": n, "mux.drops": n, "agent.dsr": n (summed), ...}."""
    out = {}
    sn, sn6 = snmp(client_ns), snmp6(client_ns)
    for k in ("OutRequests", "InReceives", "InDelivers"):
        out[f"client.Ip.{k}"] = sn["Ip"][k]
        out[f"client.Ip6.{k}"] = sn6.get("Ip6" + k, 0)
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
        for k, v in agent_counters(p).items():
            out["agent." + (k if k in AGENT_COUNTERS else "drops")] += v
    return out


def delta(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items() if isinstance(v, int)}


def steady(read, key=None, timeout=10.0, interval=0.1, enough=None):
    """A reading of read() once two readings interval apart agree (in
    key(reading), when given) and enough(reading) holds; None if that does
    not happen within timeout seconds."""
    prev = None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        cur = read()
        k = cur if key is None else key(cur)
        if k == prev and (enough is None or enough(cur)):
            return cur
        prev = k
        time.sleep(interval)
    return None


def packet_counters(snap):
    """A snapshot without what moves by itself (connection sweeps, naps)."""
    return {k: v for k, v in snap.items()
            if not k.startswith("mux.conn_") and k not in {"mux." + n for n in NAP_COUNTERS}}


def quiet_snapshot(client_ns, mux_prefix, agent_prefixes, timeout=10.0):
    """A snapshot taken when two reads 100 ms apart agree (nothing in flight)."""
    s = steady(lambda: snapshot(client_ns, mux_prefix, agent_prefixes),
               key=packet_counters, timeout=timeout)
    if s is None:
        raise SystemExit("counters never settled")
    return s


def dsr_report(c):
    """Who saw what, from a snapshot or a delta of two."""
    other_mux = (c["mux.rx_pkts"] - c["mux.fwd_pkts"] - c["mux.arp_replies"]
                 - c["mux.echo_replies"] - c.get("mux.vip_probes", 0))
    # both families: the dual-stack lab's IPv6 VIP counts in snmp6
    c_in = c["client.Ip.InReceives"] + c.get("client.Ip6.InReceives", 0)
    c_out = c["client.Ip.OutRequests"] + c.get("client.Ip6.OutRequests", 0)
    other_client = c_in - c["agent.dsr"] - c["mux.echo_replies"]
    return "\n".join([
        f"client   sent {c_out} IP packets ({c.get('client.Ip6.OutRequests', 0)} IPv6), "
        f"received {c_in}",
        f"mux      received {c['mux.rx_pkts']}: forwarded {c['mux.fwd_pkts']} in tunnels, "
        f"answered {c['mux.arp_replies']} ARP, {c['mux.echo_replies']} pings and "
        f"{c.get('mux.vip_probes', 0)} VIP probes of the manager; "
        f"anything else: {other_mux} ({c['mux.drops']} dropped)",
        f"agents   decapsulated {c['agent.decap']} for the VMs; rewrote {c['agent.dsr']} "
        f"replies to the VIP's source and sent them straight to the router (DSR); "
        f"passed {c['agent.passthrough']} through; dropped {c['agent.drops']}",
        f"=> of the client's {c_in} packets in, {c['agent.dsr']} came "
        f"from the agents, {c['mux.echo_replies']} were the mux's ping replies, "
        f"{other_client} from elsewhere (the router); the mux saw no reply.",
    ])
