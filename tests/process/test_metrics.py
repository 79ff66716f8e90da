#!/usr/bin/python3
"""Each data plane's Prometheus endpoint: a running sluice-mux and a
running sluice-agent (on pcap inputs, standalone) answer GET /metrics in
the text format with the counters they also print, promtool finds nothing
to lint in what they serve, and the endpoint stops with the daemon.

    mux    307 frames: 300 SYNs to 192.0.2.10:80 (two backends), 7 UDP
           datagrams to a port with no service
    agent  20 tunnel packets from the mux to a VM's DIP:8080 on the
           uplink, 5 replies from the VM (direct server return)

Each daemon listens on 127.0.0.1 port 0 (any free port) and logs the URL;
the test waits on the scraped counters, never on a timer.

Every family a daemon serves is a row of its table in docs/operations.md
("Metrics"), with that type and those labels. Not the reverse: a row may be
of a family only some configuration serves (the mux's sluice_bgp_* need a
bgp group, sluice_limit_mux_* a mux-wide cap).
"""
import os
import tempfile
import urllib.error
import urllib.request

from scapy.all import IP, TCP, UDP, Ether, wrpcap

from sluicetest.checks import Checks
from sluicetest.config import AgentConfig, AgentVM, Backend, MuxConfig, Service, pcap_port_mac
from sluicetest.metrics import (documented_families, promtool_check, scrape, scrape_until,
                                url_in_log)
from sluicetest.procs import Daemons, poll, required_args, test_prefix

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                   "operations.md")
VIP = "192.0.2.10"
# A monitor rule (counts, refuses nothing) and a mux-wide cap that never
# refuses: the forwarding below is what it is without them.
MUX_SERVICE = Service(VIP, "tcp", 80, [Backend("10.1.0.1", 8080, "10.0.1.1"),
                                       Backend("10.1.0.2", 8080, "10.0.1.2")],
                      limits={"new_per_second": {"limit": 100, "burst": 100}})
MUX_RATE = {"limit": 1000000, "mode": "intercept"}
# An IPv6 service whose two backends share a port: one series each.
VIP6 = "2001:db8::10"
MUX_SERVICE6 = Service(VIP6, "tcp", 80, [Backend("2001:db8:1::1", 8080, "10.0.1.1"),
                                         Backend("2001:db8:1::2", 8080, "10.0.1.2")])
PA, MUX, DIP, CLIENT = "10.0.1.1", "10.255.0.1", "10.1.0.11", "198.51.100.7"
VM = AgentVM("vm11", DIP, "02:00:00:01:01:11")
AGENT_SERVICE = Service(VIP, "tcp", 80, [Backend(DIP, 8080, PA)])


def served(check, daemons, name, what):
    """Wait for NAME's logged URL; check the endpoint answers. Returns the URL."""
    url = poll(lambda: url_in_log(daemons.log(name)), timeout=30,
               alive=lambda: daemons.running(name))
    check(url is not None, f"{what} logs the URL of its endpoint: {url}")
    return url


def start_plane(tmp, name, binary, cfg, text, prefix):
    """NAME (a mux or an agent) started from the configuration text, written to cfg."""
    with open(cfg, "w") as f:
        f.write(text)
    daemons = Daemons(tmp)
    daemons.start(name, [binary, "-c", cfg], prefix=prefix)
    return daemons


def settled_scrape(check, daemons, name, unsettled, what):
    """NAME's endpoint (served()) and its scrape in which no counter is off
    (unsettled(s) == []), checked with what it says, and common_checks()
    on it; after the timeout, one more scrape, so that the checks after it
    say what is off. (url, scrape), the scrape None if NAME stopped."""
    url = served(check, daemons, name, f"the {name}")
    s = scrape_until(url, lambda s: not unsettled(s), alive=lambda: daemons.running(name))
    check(s, what)
    if s is None and daemons.running(name):
        s = scrape(url)
        print(f"# not there: {unsettled(s)}")
    if s:
        common_checks(check, s, name)
    return url, s


def common_checks(check, s, what):
    """What every data plane's scrape must show."""
    check(s.content_type == "text/plain; version=0.0.4; charset=utf-8",
          f"{what}: content type of the text format 0.0.4: {s.content_type}")
    rc, out = promtool_check(s.text)
    check(rc == 0, f"{what}: promtool check metrics finds nothing: {rc} {out[:300]}")
    counters = [n for n, t in s.families.items() if t == "counter"]
    check(all(n.startswith("sluice_") for n in s.names()),
          f"{what}: every name in the sluice_ namespace")
    check(len(counters) > 10 and all(f"{n}_total" in s.names() for n in counters),
          f"{what}: {len(counters)} counters, each named ..._total")
    check(s.value("sluice_flow_table_version") == 1 and s.value("sluice_managed") == 0,
          f"{what}: flow table version 1, standalone")
    documented(check, s, what)


def documented(check, s, what):
    """Every family of scrape s is in the table of sluice-WHAT in
    docs/operations.md, with the type and (when it has samples) the labels
    the table gives it."""
    doc = documented_families(DOC, f"sluice-{what}")
    served = s.served()
    missing = sorted(set(served) - set(doc))
    check(not missing, f"{what}: every family served is in docs/operations.md's table of "
          f"sluice-{what} ({len(served)} served); not there: {missing}")
    unlike = [f"{n}: {t} {sorted(l or ())}, the doc's {doc[n][0]} {sorted(doc[n][1])}"
              for n, (t, l) in sorted(served.items())
              if n in doc and (t != doc[n][0] or (l is not None and l != doc[n][1]))]
    check(not unlike, f"{what}: the table gives each family its type and labels: {unlike}")


def mux_settled(s):
    """The counters test_mux checks that are not at their final value in
    scrape s: [(name, value)] ([]: all are)."""
    svc = dict(vip=VIP, port=80, proto="tcp")
    rule = dict(svc, rule="new_per_second")
    want = [("sluice_received_packets_total", s.value("sluice_received_packets_total"), 307),
            ("sluice_forwarded_packets_total", s.value("sluice_forwarded_packets_total"), 300),
            ("sluice_drops_total", s.total("sluice_drops_total"), 7),
            ("sluice_service_packets_total",
             s.value("sluice_service_packets_total", **svc), 300),
            ("sluice_service_new_connections_total",
             s.value("sluice_service_new_connections_total", **svc), 300),
            ("sluice_backend_new_connections_total",
             s.total("sluice_backend_new_connections_total", **svc), 300),
            ("sluice_conn_table_entries", s.value("sluice_conn_table_entries"), 300),
            ("sluice_limit_rule_checks_total",
             s.value("sluice_limit_rule_checks_total", **rule), 300),
            ("sluice_limit_rule_passed+would_deny",
             (s.value("sluice_limit_rule_passed_total", **rule) or 0) +
             (s.value("sluice_limit_rule_would_deny_total", **rule) or 0), 300),
            ("sluice_limit_mux_checks_total", s.value("sluice_limit_mux_checks_total"), 300),
            ("sluice_limit_mux_passed_total", s.value("sluice_limit_mux_passed_total"), 300)]
    return [(n, v) for n, v, w in want if v != w]


def agent_settled(s):
    """The same of test_agent's counters."""
    want = [("sluice_uplink_received_packets_total",
             s.value("sluice_uplink_received_packets_total"), 20),
            ("sluice_vm_received_packets_total", s.value("sluice_vm_received_packets_total"), 5),
            ("sluice_decapsulated_packets_total",
             s.value("sluice_decapsulated_packets_total"), 20),
            ("sluice_dsr_packets_total", s.value("sluice_dsr_packets_total"), 5),
            ("to_vm", s.value("sluice_vm_packets_total", vm="vm11", dip=DIP, direction="to_vm"), 20),
            ("from_vm", s.value("sluice_vm_packets_total", vm="vm11", direction="from_vm"), 5)]
    return [(n, v) for n, v, w in want if v != w]


def test_mux(check, args, tmp):
    inp, out, cfg = (os.path.join(tmp, n) for n in ("in.pcap", "out.pcap", "mux.cfg"))
    client = Ether(src="02:00:00:00:00:fe", dst="02:00:00:00:00:01")
    pkts = [client / IP(src=f"198.51.100.{i % 200 + 1}", dst=VIP) /
            TCP(sport=1000 + i, dport=80, flags="S") for i in range(300)]
    pkts += [client / IP(src="198.51.100.1", dst=VIP) / UDP(dport=53)] * 7
    wrpcap(inp, pkts)
    prefix = test_prefix("met", "mux")
    daemons = start_plane(tmp, "mux", args.mux, cfg, MuxConfig(
        [MUX_SERVICE, MUX_SERVICE6], mux_rate=MUX_RATE).render(
            devargs=f"net_pcap0,rx_pcap={inp},tx_pcap={out}", file_prefix=prefix,
            metrics="127.0.0.1:0"), prefix)
    try:
        # The mux counts a burst's packets received when it takes the burst,
        # the rest as it forwards them: a scrape in the middle of the last
        # burst sees 307 received and part of the rest (docs/reliability.md,
        # Found 18). Wait for every counter checked below, then check them
        # all on that scrape (or, after the timeout, on the last one).
        url, s = settled_scrape(check, daemons, "mux", mux_settled,
                                "the mux's counters reach theirs: 307 received, 300 "
                                "forwarded, 7 dropped ...")
        if s:
            check(s.value("sluice_forwarded_packets_total") == 300,
                  "sluice_forwarded_packets_total 300: %s", s.value("sluice_forwarded_packets_total"))
            check(s.value("sluice_drops_total", reason="no_service") == 7 and
                  s.total("sluice_drops_total") == 7,
                  "sluice_drops_total{reason=no_service} 7, no other drop")
            svc = dict(vip=VIP, port=80, proto="tcp")
            check(s.value("sluice_service_packets_total", **svc) == 300 and
                  s.value("sluice_service_new_connections_total", **svc) == 300,
                  "the service's packets and new connections: 300 each")
            bes = s.matching("sluice_backend_new_connections_total", **svc)
            check(len(bes) == 2 and sum(bes) == 300 and min(bes) > 0,
                  f"both backends got new connections, 300 together: {bes}")
            check(s.value("sluice_backend_bytes_total", backend="10.1.0.1:8080", **svc) ==
                  40 * s.value("sluice_backend_packets_total", backend="10.1.0.1:8080", **svc),
                  "a backend's bytes: 40 per SYN (inner IP bytes)")
            svc6 = dict(vip=VIP6, port=80, proto="tcp")
            b6 = {b: s.value("sluice_backend_packets_total", backend=b, **svc6)
                  for b in ("[2001:db8:1::1]:8080", "[2001:db8:1::2]:8080")}
            check(b6 == {b: 0 for b in b6} and
                  len(s.matching("sluice_backend_packets_total", **svc6)) == 2,
                  f"the IPv6 backends: one series each, labelled [DIP]:port: {b6}")
            check(s.value("sluice_conn_table_entries") == 300 and
                  s.value("sluice_conn_table_capacity") >= 65536,
                  "connection tables: 300 entries of at least 65536")
            check(s.total("sluice_worker_loops_total") > 0, "the worker's loops are counted")
            rule = dict(svc, rule="new_per_second")
            lim = {n: s.value(f"sluice_limit_rule_{n}_total", **rule)
                   for n in ("checks", "passed", "would_deny", "denied")}
            check(lim["checks"] == 300 and lim["denied"] == 0 and 0 < lim["would_deny"] < 300
                  and lim["passed"] + lim["would_deny"] == 300,
                  f"the monitor rule's counters: 300 SYNs checked, a bucket of 100 "
                  f"passes some, the rest would be denied, none is: {lim}")
            check(s.value("sluice_limit_would_deny_total") == lim["would_deny"],
                  "the total limit_would_deny matches the rule's")
            mux = {n: s.value(f"sluice_limit_mux_{n}_total")
                   for n in ("checks", "passed", "denied")}
            check(mux == {"checks": 300, "passed": 300, "denied": 0},
                  f"the mux-wide cap checked the 300 SYNs and passed them: {mux}")
        try:
            urllib.request.urlopen(url.replace("/metrics", "/other"), timeout=5)
            check(False, "another path is not found (404)")
        except urllib.error.HTTPError as e:
            check(e.code == 404, f"another path is not found: {e.code}")
    finally:
        status, log, left = daemons.end("mux")
    check(status == 0 and not left, f"the mux exits 0 on SIGTERM, run folder gone: {status}")
    try:
        urllib.request.urlopen(url, timeout=2)
        check(False, "the endpoint is gone with the mux")
    except (OSError, TypeError):
        check(True, "the endpoint is gone with the mux")


def test_agent(check, args, tmp):
    up_in, up_out, vm_in, vm_out, cfg = (os.path.join(tmp, n) for n in (
        "up.pcap", "up-out.pcap", "vm.pcap", "vm-out.pcap", "agent.cfg"))
    router = Ether(src="02:00:00:00:fe:01", dst=pcap_port_mac(0))
    wrpcap(up_in, [router / IP(src=MUX, dst=PA, proto=4) /
                   IP(src=CLIENT, dst=DIP) / TCP(sport=2000 + i, dport=8080, flags="S")
                   for i in range(20)])
    vm = Ether(src=VM.mac, dst=pcap_port_mac(1))
    wrpcap(vm_in, [vm / IP(src=DIP, dst=CLIENT) / TCP(sport=8080, dport=2000 + i, flags="SA")
                   for i in range(5)])
    prefix = test_prefix("met", "agent")
    acfg = AgentConfig(PA, [MUX], [VM], [AGENT_SERVICE])
    daemons = start_plane(tmp, "agent", args.agent, cfg, acfg.render(
        {"uplink": f"net_pcap0,rx_pcap={up_in},tx_pcap={up_out}",
         "vm11": f"net_pcap1,rx_pcap={vm_in},tx_pcap={vm_out}"},
        file_prefix=prefix, metrics="127.0.0.1:0"), prefix)
    try:
        # received counted before the packet is handled: wait for all of them
        url, s = settled_scrape(check, daemons, "agent", agent_settled,
                                "the agent's counters reach theirs: 20 from the uplink, 5 "
                                "from the VM ...")
        if s:
            check(s.value("sluice_decapsulated_packets_total") == 20 and
                  s.value("sluice_dsr_packets_total") == 5,
                  "20 decapsulated, 5 DSR rewrites")
            check(s.value("sluice_vm_packets_total", vm="vm11", dip=DIP, direction="to_vm") == 20
                  and s.value("sluice_vm_packets_total", vm="vm11", direction="from_vm") == 5,
                  "vm11's packets: 20 to it, 5 from it")
            check(s.value("sluice_lb_endpoints") == 1 and s.total("sluice_drops_total") == 0,
                  "one load-balanced endpoint, no drop")
    finally:
        status, log, left = daemons.end("agent")
    check(status == 0 and not left, f"the agent exits 0 on SIGTERM, run folder gone: {status}")


def main():
    args = required_args("mux", "agent").parse_args()
    check = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "mux"))
        os.mkdir(os.path.join(tmp, "agent"))
        test_mux(check, args, os.path.join(tmp, "mux"))
        test_agent(check, args, os.path.join(tmp, "agent"))
    raise SystemExit(check.report("metrics"))


if __name__ == "__main__":
    main()
