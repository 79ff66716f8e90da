#!/usr/bin/python3
"""IPv6 in the control plane: sluice-manager, one sluice-mux with an IPv6
tunnel address, sluicectl, and a scripted agent (rawpeer) saying hello
with its PAs and DIPs.

  - an IPv6 service and its backends are added with sluicectl in the form
    ipvsadm and HAProxy use ([2001:db8::10]:80), hosts of either family
    (6in6, 6in4, and an IPv4 service behind an IPv6 PA: 4in6); the mux
    runs the version; `vip list` shows RFC 5952 text (also for an address
    typed in another form), --json the same with the family;
  - refused, exit non-zero, the message naming the field, the committed
    version untouched: an IPv6 backend in an IPv4 service, a malformed,
    scoped, prefixed, unbracketed or bracketed-IPv4 address; an IPv6 host
    for a DIP whose agent has no IPv6 PA, a host that is not the agent's;
  - export, apply of the export (no change), export again: the same text;
    an IPv6 services file applied makes the history's text; a file with an
    IPv6 DIP in an IPv4 service is refused naming file, line and field;
  - a host refused in a file names its line; an undrain of an unknown mux
    is refused, of a member not drained is no change;
  - DIP probes over IPv6: an HTTP server on [::1] is healthy, a port
    nothing listens on is unhealthy with "connection refused";
  - the manager restarted reads the same tables and pools back from SQLite.
"""
import os
import subprocess

from sluicetest.config import TEST_SEED
from sluicetest.manager import ManagerLab, manager_test_args, mux_version, run_in_lab
from sluicetest.procs import free_port

SVC6 = "[2001:db8::10]:80"
SVC4 = "192.0.2.10:80"


class Lab(ManagerLab):
    TAG = "v6ctl"
    LOGS = ("manager", "mux1", "host1")
    CERTS = ("sluice-manager", "mux1", "host1")
    MANAGER = dict(vote_timeout_ms=2000, batch_ms=50, hash_seed=TEST_SEED, maglev_size=65537)

    def __init__(self, args, tmp, check):
        super().__init__(args, tmp, check)
        self.www = self.web_folder("www", "backend 6\n")

    def agent_hello(self, ident, pas, dips):
        """An agent's hello with its PAs and DIPs, over mutual TLS; it leaves
        after the WELCOME (the manager remembers its addresses)."""
        return subprocess.run([self.args.rawpeer, "--ca", f"{self.pki}/ca.pem", "--cert",
                               f"{self.pki}/{ident}.pem", "--key", f"{self.pki}/{ident}.key",
                               "--agent-pas", pas, "--agent-dips", dips, "--quiet-status",
                               self.url, f"hello:{ident}:0", "expect:WELCOME:5000"],
                              capture_output=True, text=True, timeout=30)

    def service(self, vip):
        return next((s for s in self.json_ctl("vip", "list")["services"] if s["vip"] == vip),
                    None)


def main():
    ap = manager_test_args("rawpeer")
    check, _ = run_in_lab(Lab, ap.parse_args(), run)
    return check.report("ipv6_ctl")


def committed(lab, what, r):
    return r.returncode == 0 and "committed as version" in r.stdout, \
        f"{what}: {r.stdout.strip()} {r.stderr.strip()}"


def refused(lab, check, argv, code, words, what):
    """sluicectl argv exits code with every one of words in its message,
    and the committed version does not move."""
    v = lab.committed()
    r = lab.ctl(*argv)
    msg = (r.stdout + r.stderr).strip()
    check(r.returncode == code and all(w in msg for w in words) and lab.committed() == v,
          f"{what}: exit {r.returncode}, {msg!r}, version stays {v}")


def run(lab, check):
    check(lab.start_manager(), "the manager starts and answers sluicectl")
    prefix = lab.start_mux("mux1", tunnel_address6="2001:db8:ff::1")
    check(lab.wait(lambda: lab.in_sync(["mux1"], 0), "mux1 in sync"), "mux1 registers")
    check(*committed(lab, "vip add of an IPv6 service commits",
                     lab.ctl("vip", "add", SVC6, "--probe", "none")))
    check(*committed(lab, "an IPv6 backend behind an IPv6 PA (6in6)",
                     lab.ctl("backend", "add", SVC6, "[2001:db8:1::11]:8080", "--host",
                             "2001:db8:99::3", "--weight", "2")))
    check(*committed(lab, "an IPv6 backend behind an IPv4 PA (6in4), typed long-hand",
                     lab.ctl("backend", "add", SVC6, "[2001:0DB8:0001:0000:0000::0012]:8080",
                             "--host", "10.99.0.4")))
    check(*committed(lab, "an IPv4 service behind an IPv6 PA (4in6)",
                     lab.ctl("vip", "add", SVC4, "--probe", "none")))
    r = lab.ctl("backend", "add", SVC4, "10.1.1.11:8080", "--host", "2001:db8:99::3")
    check(*committed(lab, "its backend", r))
    v = lab.committed()
    check(lab.wait(lambda: mux_version(prefix) == v, f"mux1 to run version {v}"),
          f"mux1 runs version {v}, tunnels of both families")

    s6 = lab.service("2001:db8::10")
    check(s6 is not None and s6["family"] == 6 and s6["port"] == 80 and
          [(b["dip"], b["host"], b["weight"]) for b in s6["backends"]] ==
          [("2001:db8:1::11", "2001:db8:99::3", 2), ("2001:db8:1::12", "10.99.0.4", 1)],
          f"--json vip list: the IPv6 service in RFC 5952 text: {s6}")
    s4 = lab.service("192.0.2.10")
    check(s4 is not None and s4["family"] == 4 and s4["backends"][0]["host"] == "2001:db8:99::3",
          f"--json vip list: the IPv4 service, its IPv6 host: {s4}")
    text = lab.ctl("vip", "list").stdout
    check("tcp [2001:db8::10]:80" in text and "[2001:db8:1::12]:8080" in text and
          "host 2001:db8:99::3" in text, "vip list: [v6]:port for services and backends, "
          "plain hosts")
    hist = lab.ctl("history").stdout
    check("+backend [2001:db8:1::11]:8080 on tcp [2001:db8::10]:80" in hist,
          "history names the IPv6 backend and service")

    # refusals: the field named, nothing applied
    refused(lab, check, ["backend", "add", SVC4, "[2001:db8:1::13]:8080", "--host",
                         "10.99.0.4"], 2, ["dip", "IPv6 backend in an IPv4 service"],
            "an IPv6 backend in an IPv4 service")
    refused(lab, check, ["backend", "add", SVC6, "10.1.1.13:8080", "--host", "10.99.0.4"], 2,
            ["dip", "IPv4 backend in an IPv6 service"], "an IPv4 backend in an IPv6 service")
    refused(lab, check, ["vip", "add", "[2001:db8::zz]:80"], 2,
            ['vip "2001:db8::zz"', "not an IPv4 or IPv6 address"], "a malformed address")
    refused(lab, check, ["backend", "add", SVC6, "[2001:db8:1::13]:8080", "--host",
                         "fe80::1%eth0"], 2, ["--host", "scoped address"], "a scoped host")
    refused(lab, check, ["backend", "add", SVC6, "[2001:db8:1::13]:8080", "--host",
                         "2001:db8:99::/64"], 2, ["--host", "is a prefix"], "a prefix as host")
    refused(lab, check, ["vip", "add", "[2001:db8::/64]:80"], 2, ["vip", "is a prefix"],
            "a prefix as VIP")
    refused(lab, check, ["vip", "add", "2001:db8::20:80"], 2, ["vip", "in brackets"],
            "an IPv6 address and port without brackets")
    refused(lab, check, ["vip", "add", "[192.0.2.20]:80"], 2, ["vip", "brackets are for IPv6"],
            "an IPv4 address in brackets")
    refused(lab, check, ["top", "[192.0.2.20]"], 2, ["vip", "brackets are for IPv6"],
            "an IPv4 VIP alone in brackets (top)")
    refused(lab, check, ["vip", "add", "[fe80::10]:80"], 2, ["vip", "link-local"],
            "a link-local VIP")

    # the agents' PAs: an IPv6 host for an agent without an IPv6 PA
    r = lab.agent_hello("host1", "10.99.0.5", "10.1.1.20,2001:db8:1::20")
    check(r.returncode == 0, f"agent host1 says hello with its PAs and DIPs: {r.stdout[-300:]}")
    refused(lab, check, ["backend", "add", SVC6, "[2001:db8:1::20]:8080", "--host",
                         "2001:db8:99::5"], 1,
            ["2001:db8:99::5 is an IPv6 PA", "agent host1", "no IPv6 PA (pa6)"],
            "an IPv6 host on a host whose agent has none")
    refused(lab, check, ["backend", "add", SVC4, "10.1.1.20:8080", "--host", "10.99.0.6"], 1,
            ["10.99.0.6 is not a PA of agent host1", "10.99.0.5"],
            "a host that is not the DIP's agent's")
    # the same in a file: the refusal names the host's line
    wrong_host = os.path.join(lab.tmp, "wrong_host.cfg")
    with open(wrong_host, "w") as f:
        f.write('flow_table = {\n  services = (\n    { vip = "192.0.2.10"; port = 80;\n'
                '      backends = (\n        { dip = "10.1.1.20"; port = 8080;\n'
                '          host = "10.99.0.6"; } ); } );\n};\n')
    refused(lab, check, ["config", "apply", wrong_host], 1,
            ["<apply>:6: flow_table.services[0].backends[0].host",
             "10.99.0.6 is not a PA of agent host1"],
            "config apply of a host that is not the DIP's agent's names its line")
    check(*committed(lab, "the agent's own PA is taken (6in4)",
                     lab.ctl("backend", "add", SVC6, "[2001:db8:1::20]:8080", "--host",
                             "10.99.0.5")))
    check(*committed(lab, "a DIP no agent has told of is taken as given",
                     lab.ctl("backend", "add", SVC6, "[2001:db8:1::30]:8080", "--host",
                             "2001:db8:99::30")))

    # A drain is about a mux, not a service: a services file applied keeps
    # it (the export carries no drains), so export and apply stay no change.
    check(*committed(lab, "a mux drained", lab.ctl("mux", "drain", "mux9")))

    # export, apply, export: the same text
    e1 = lab.ctl("config", "export")
    check(e1.returncode == 0 and 'vip = "2001:db8::10"' in e1.stdout and
          'host = "2001:db8:99::3"' in e1.stdout, "config export writes IPv6 in canonical text")
    path = os.path.join(lab.tmp, "services.cfg")
    with open(path, "w") as f:
        f.write(e1.stdout)
    v = lab.committed()
    r = lab.ctl("config", "apply", path)
    check(r.returncode == 0 and f"committed as version {v}" in r.stdout and
          lab.committed() == v,
          f"the export applied back is no change, version stays {v}: {r.stdout.strip()} "
          f"{r.stderr.strip()}")
    e2 = lab.ctl("config", "export")
    strip = (lambda t: [ln for ln in t.splitlines() if not ln.startswith("#")])
    check(e2.returncode == 0 and strip(e1.stdout) == strip(e2.stdout),
          "export, apply, export: the same file")
    check(*committed(lab, "the drain kept through the apply is undone",
                     lab.ctl("mux", "undrain", "mux9")))
    check(lab.committed() == v + 1, f"the undrain is a version of its own ({v} -> "
          f"{lab.committed()})")
    refused(lab, check, ["mux", "undrain", "mux9"], 1,
            ["mux undrain mux9: no such mux is drained or a member"],
            "an undrain of an id neither drained nor a member (a typo) is refused")
    r = lab.ctl("mux", "undrain", "mux1")
    check(r.returncode == 0 and lab.committed() == v + 1,
          f"an undrain of a member not drained is no change: {r.stdout.strip()} "
          f"{r.stderr.strip()}")

    changed = e1.stdout.replace(
        'dip = "2001:db8:1::11"; port = 8080; weight = 2;',
        'dip = "2001:db8:1::11"; port = 8080; weight = 5;')
    with open(path, "w") as f:
        f.write(changed)
    check(changed != e1.stdout, "the file's IPv6 backend has its weight changed")
    check(*committed(lab, "an IPv6 services file applied", lab.ctl("config", "apply", path,
                                                                  )))
    hist = lab.ctl("history", "--limit", "1").stdout
    check("~backend [2001:db8:1::11]:8080 on tcp [2001:db8::10]:80: weight 2->5" in hist,
          f"the history says what the file changed: {hist.strip()}")

    bad = changed.replace('dip = "10.1.1.11";', 'dip = "2001:db8:1::99";')
    with open(path, "w") as f:
        f.write(bad)
    v = lab.committed()
    r = lab.ctl("config", "apply", path)
    msg = r.stdout + r.stderr
    check(r.returncode != 0 and "dip" in msg and ":" in msg.split("dip")[0] and
          lab.committed() == v,
          f"a file with an IPv6 DIP in an IPv4 service is refused, version stays {v}: "
          f"{msg.strip()}")

    # DIP probes over IPv6
    port = free_port("::1")
    lab.start("www6", ["/usr/bin/python3", "-m", "http.server", "--bind", "::1", str(port)],
              cwd=lab.www)
    dead = free_port("::1")
    check(*committed(lab, "an IPv6 service probed by HTTP",
                     lab.ctl("vip", "add", "[::1]:80", "--probe", "http", "--path", "/",
                             "--interval", "1", "--probe-timeout", "1", "--healthy", "1",
                             "--unhealthy", "1")))
    for p in (port, dead):
        check(*committed(lab, f"backend [::1]:{p}",
                         lab.ctl("backend", "add", "[::1]:80", f"[::1]:{p}", "--host",
                                 "2001:db8:99::3")))

    def health():
        s = lab.service("::1")
        return {b["port"]: (b.get("health"), b.get("last_failure", "")) for b in s["backends"]}
    check(lab.wait(lambda: health()[port][0] == "healthy" and health()[dead][0] == "unhealthy",
                   "the IPv6 probes' verdicts", timeout=20) and
          "connection refused" in health()[dead][1],
          f"DIP probes over IPv6: HTTP GET to [::1]:{port} healthy, [::1]:{dead} refused: "
          f"{health()}")
    lab.kill("www6")

    # the store: the same tables and pools after a restart
    before = lab.json_ctl("vip", "list")
    lab.kill("manager")
    check(lab.start_manager(), "the manager restarts")
    after = lab.json_ctl("vip", "list")
    key = (lambda j: [(s["vip"], s["family"], s["port"], s["pool"],
                       [(b["dip"], b["port"], b["host"], b["weight"]) for b in s["backends"]])
                      for s in j["services"]])
    check(after is not None and key(before) == key(after),
          "after a restart the manager reads IPv6 services, backends, hosts and pools back")


if __name__ == "__main__":
    raise SystemExit(main())
