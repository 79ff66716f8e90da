#!/usr/bin/python3
"""Admission rules as desired state (docs/protection.md): sluice-manager
with two real sluice-mux members, driven by sluicectl limit set|del|list.

  - a rule set on a service commits as a version that both muxes run: their
    STATUS reports its counters, and limit list counts two muxes;
  - bad rules are refused naming the field (exit 1 from the manager, exit 2
    for what sluicectl itself can tell), and the committed version stays;
  - a rule's mode switches live at one version; history shows each change;
  - config export carries the rules and config apply brings them back;
  - the mux-wide cap; limit del removes one rule, then all (of the mux, only
    its new_per_second rule);
  - the muxes in sync are told their share of the limits (SHARES), and told
    again when one leaves.
"""
import json
import os
import re

from sluicetest.config import TEST_SEED
from sluicetest.manager import ManagerLab, manager_test_args, run_in_lab

VIP = "192.0.2.10"


class Lab(ManagerLab):
    TAG = "lim"
    LOGS = ("manager", "mux1", "mux2")
    CERTS = ("sluice-manager", "mux1", "mux2")
    MANAGER = dict(vote_timeout_ms=2000, batch_ms=20, hash_seed=TEST_SEED, maglev_size=65537)


def rules(lab):
    return {(r["service"], r["rule"]): r for r in lab.json_ctl("limit", "list")["rules"]}


def run(lab, check):
    check(lab.start_manager(), "the manager starts")
    lab.start_mux("mux1")
    lab.start_mux("mux2")
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], 0), "both muxes in sync"),
          "both muxes in sync at version 0")
    for argv in (("vip", "add", f"{VIP}:80"), ("vip", "add", f"{VIP}:53", "--proto", "udp"),
                 ("backend", "add", f"{VIP}:80", "10.1.1.1:8080", "--host", "10.0.1.1")):
        r = lab.ctl(*argv)
        check(r.returncode == 0, f"{' '.join(argv)}: {r.stdout.strip()} {r.stderr.strip()}")

    svc = f"tcp {VIP}:80"
    r = lab.ctl("limit", "set", f"{VIP}:80", "new_per_second", "100", "--burst", "200",
                "--mode", "intercept", "--refuse", "rst")
    m = re.search(r"committed as version (\d+)", r.stdout)
    check(r.returncode == 0 and m, f"limit set commits: {r.stdout.strip()} {r.stderr.strip()}")
    v = int(m.group(1)) if m else -1
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v), "muxes at the rule's version"),
          f"both muxes run version {v}")
    check(lab.wait(lambda: rules(lab)[(svc, "new_per_second")]["muxes"] == 2,
                   "both muxes to report the rule's counters"),
          "limit list: both muxes report the rule's counters in STATUS")
    r0 = rules(lab)[(svc, "new_per_second")]
    check((r0["limit"], r0["burst"], r0["mode"], r0["refuse"], r0["checked"]) ==
          (100, 200, "intercept", "rst", 0), f"limit list shows the rule: {r0}")
    text = lab.ctl("limit", "list").stdout
    check(svc in text and "new_per_second" in text and "intercept" in text,
          f"limit list's table: {text.strip()}")

    # refusals name the field; the version stays
    for argv, rc, want in (
            (("max_connections", "5", "--burst", "3"), 1, "burst: a connection limit has none"),
            (("per_source", "5", "--prefix", "33"), 1, "prefix: /33 is out of range 1..32"),
            (("per_source", "5", "--prefix", "129"), 2, "--prefix 129: must be 1..128"),
            (("new_per_second", "0"), 2, "the limit must be 1.."),
            (("new_per_second", "--mode", "enforce"), 2, "--mode enforce"),
            (("max_connections", "--mode", "intercept"), 1, "the rule does not exist yet"),
            (("frob", "5"), 2, "frob: not a rule")):
        r = lab.ctl("limit", "set", f"{VIP}:80", *argv)
        check(r.returncode == rc and want in r.stderr,
              f"limit set {' '.join(argv)}: exit {r.returncode} (want {rc}): {r.stderr.strip()}")
    r = lab.ctl("limit", "set", "192.0.2.99:80", "new_per_second", "5")
    check(r.returncode == 1 and "no service tcp 192.0.2.99:80" in r.stderr,
          f"a rule on a service that does not exist is refused: {r.stderr.strip()}")
    r = lab.ctl("limit", "set", f"{VIP}:53", "--proto", "udp", "new_per_second", "5",
                "--refuse", "rst")
    check(r.returncode == 1 and "limits.refuse: rst needs a TCP service" in r.stderr,
          f"RST for UDP is refused naming the field: {r.stderr.strip()}")
    check(lab.committed() == v, f"the committed version is still {v}")

    # a live switch of mode, at one version
    r = lab.ctl("limit", "set", f"{VIP}:80", "new_per_second", "--mode", "monitor")
    m = re.search(r"committed as version (\d+)", r.stdout)
    check(r.returncode == 0 and m, f"mode switch commits: {r.stdout.strip()} {r.stderr.strip()}")
    v2 = int(m.group(1)) if m else -1
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v2), "muxes at the switch"),
          f"both muxes switch at version {v2}")
    r1 = rules(lab)[(svc, "new_per_second")]
    check((r1["limit"], r1["burst"], r1["mode"]) == (100, 200, "monitor"),
          f"only the mode changed: {r1}")
    hist = lab.ctl("history").stdout
    check(f"~limits {svc}: new_per_second=100 burst=200 intercept; refuse=rst" in hist and
          f"~limits {svc}: new_per_second=100 burst=200 monitor; refuse=rst" in hist,
          f"history shows both changes: {hist.strip()}")

    # config export and apply carry the rules
    exp = os.path.join(lab.tmp, "export.cfg")
    r = lab.ctl("config", "export", exp)
    text = open(exp).read() if r.returncode == 0 else ""
    check('new_per_second = { limit = 100; burst = 200; mode = "monitor"; };' in text and
          'refuse = "rst";' in text, f"config export writes the rules: {text}")
    with open(exp, "w") as f:
        f.write(text.replace("limit = 100;", "limit = 300;"))
    r = lab.ctl("config", "apply", exp)
    check(r.returncode == 0, f"config apply: {r.stdout.strip()} {r.stderr.strip()}")
    check(rules(lab)[(svc, "new_per_second")]["limit"] == 300,
          "config apply changed the rule from the file")

    # the mux-wide cap
    r = lab.ctl("limit", "set", "mux", "new_per_second", "50000", "--mode", "intercept")
    check(r.returncode == 0, f"the mux-wide cap: {r.stdout.strip()} {r.stderr.strip()}")
    mr = rules(lab).get(("mux", "mux_new_per_second"))
    check(mr is not None and (mr["limit"], mr["mode"]) == (50000, "intercept"),
          f"limit list shows the mux-wide cap: {mr}")

    # del
    r = lab.ctl("limit", "del", f"{VIP}:80", "new_per_second")
    check(r.returncode == 0 and (svc, "new_per_second") not in rules(lab),
          f"limit del removes the rule: {r.stdout.strip()} {r.stderr.strip()}")
    r = lab.ctl("limit", "del", f"{VIP}:80")
    check(r.returncode == 0, f"limit del of the rest (refuse=rst alone): {r.stderr.strip()}")
    r = lab.ctl("limit", "del", f"{VIP}:80")
    check(r.returncode == 1 and "has no" in r.stderr,
          f"deleting what is not there is refused: {r.stderr.strip()}")
    r = lab.ctl("limit", "del", "mux", "max_connections")
    check(r.returncode == 1 and "new_per_second rule" in r.stderr and
          ("mux", "mux_new_per_second") in rules(lab),
          f"limit del mux of another rule is refused, the cap kept: {r.stderr.strip()}")
    r = lab.ctl("limit", "del", "mux")
    check(r.returncode == 0 and not rules(lab), f"the mux-wide cap removed: {r.stderr.strip()}")
    st = lab.status()
    check(all(not any(k.startswith("limit.") for k in m["counters"]) for m in st["members"])
          or lab.wait(lambda: all(not any(k.startswith("limit.") for k in m["counters"])
                                  for m in lab.status()["members"]), "counters to go"),
          "with no rules, no mux reports rule counters")

    # the limits are divided among the muxes in sync: each is told its place
    def shared(name, n):
        return re.findall(r"admission limits shared by %d muxes, this one (\d+)" % n,
                          lab.log(name))
    check(lab.wait(lambda: shared("mux1", 2) and shared("mux2", 2), "SHARES to both"),
          "each mux is told the limits are shared by 2 muxes")
    places = {shared("mux1", 2)[-1], shared("mux2", 2)[-1]}
    check(places == {"0", "1"}, f"the two muxes have places 0 and 1: {places}")
    lab.kill("mux2")
    check(lab.wait(lambda: shared("mux1", 1), "SHARES after mux2 left"),
          "with mux2 gone, mux1 is told it carries the whole limit")
    print(json.dumps(lab.json_ctl("limit", "list")))


def main():
    check, _ = run_in_lab(Lab, manager_test_args().parse_args(), run)
    return check.report("limits")


if __name__ == "__main__":
    raise SystemExit(main())
