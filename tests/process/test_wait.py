#!/usr/bin/python3
"""WAIT for a change that changes nothing, while a round is held open and
health has moved the table since:

    sluicectl --ipc-- sluice-manager --tls-- rawpeer (member peer1: votes
                                              for version N+1 only when
                                              its script says so)

A backend deleted with a drain delay of 1 s makes version N+1 (the backend
draining); peer1 holds its vote for it. The drain ends meanwhile, so the
effective table moves again and the next version will be N+2, though no
change was told N+2. `config apply` of the current export changes nothing:
it is told N+2, and WAIT for N+2 answered "unknown" at once (exit 1). It
must wait, and say committed once the round that carries the desired table
commits (N+1); then peer1 votes for N+2 (the drain's end) too.

Then a change accepted, its round held, and the manager killed: restarted,
it has the change but no count of it, and a no-op is told "committed"
only once the version that carries the change is.
"""
import os
import re
import signal
import subprocess
import time

from sluicetest.config import TEST_SEED
from sluicetest.manager import ManagerLab, manager_test_args, run_in_lab

VIP = "192.0.2.10"
HOLD_MS = 8000  # peer1 holds its vote this long after the PREPARE


class Lab(ManagerLab):
    TAG = "wait"
    LOGS = ("manager", "peer1")
    CERTS = ("sluice-manager", "peer1")
    # No round may end by a vote timeout while peer1 holds its vote.
    MANAGER = dict(vote_timeout_ms=60000, batch_ms=100, hash_seed=TEST_SEED, maglev_size=65537)


def main():
    ap = manager_test_args("rawpeer")
    check, _ = run_in_lab(Lab, ap.parse_args(), run)
    return check.report("wait")


def ok(what, r):
    return r.returncode == 0 and "committed as version" in r.stdout, \
        f"{what}: {r.stdout.strip()} {r.stderr.strip()}"


def run(lab, check):
    check(lab.start_manager(), "the manager starts and answers sluicectl")
    check(*ok("a VIP, unprobed, whose deleted backends drain 1 s",
              lab.ctl("vip", "add", f"{VIP}:80", "--probe", "none", "--drain-delay", "1")))
    for dip in ("10.1.1.11:8080", "10.1.1.12:8080"):
        check(*ok(f"backend {dip}", lab.ctl("backend", "add", f"{VIP}:80", dip, "--host",
                                           "10.0.1.1")))
    st = lab.status()["committed"]
    v, digest = st["version"], st["digest"]
    peer = [lab.args.rawpeer, "--ca", f"{lab.pki}/ca.pem", "--cert", f"{lab.pki}/peer1.pem",
            "--key", f"{lab.pki}/peer1.key", "--quiet-status", lab.url,
            f"hello:peer1:{v}:{digest}", "expect:WELCOME:5000", "expect:PREPARE:30000",
            f"recv:{HOLD_MS}", f"vote:{v + 1}", "autovote", "expect:COMMIT:5000", "recv:5000"]
    lab.start("peer1", peer)
    check(lab.wait(lambda: lab.members()["peer1"]["state"] == "in-sync", "peer1 in sync"),
          f"peer1 says hello at version {v}: in sync")

    # The delete: version v + 1, held by peer1; its WAIT blocks meanwhile.
    t0 = time.monotonic()
    ctl = [lab.args.ctl, "--manager", lab.ctl_url, "--timeout", "60"]
    delete = subprocess.Popen(ctl + ["backend", "del", f"{VIP}:80", "10.1.1.12:8080"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def held_and_moved():
        s = lab.status()
        return (s.get("round") or {}).get("version") == v + 1 and \
            (s.get("pending") or {}).get("version") == v + 2

    check(lab.wait(held_and_moved, "round v+1 held, the drain's end pending as v+2",
                   timeout=10),
          f"round {v + 1} held by peer1 and, the drain over, version {v + 2} pending "
          f"({time.monotonic() - t0:.1f} s after the delete)")
    export = lab.ctl("config", "export")
    path = os.path.join(lab.tmp, "services.cfg")
    with open(path, "w") as f:
        f.write(export.stdout)
    t1 = time.monotonic()
    r = subprocess.run(ctl + ["config", "apply", path], capture_output=True, text=True)
    waited = time.monotonic() - t1
    check(export.returncode == 0 and r.returncode == 0 and
          f"committed as version {v + 1}" in r.stdout,
          f"the export applied during the round is no change, committed with version "
          f"{v + 1} (after {waited:.1f} s): {r.stdout.strip()} {r.stderr.strip()}")
    check(waited > 1.0, f"it waited for the held round ({waited:.1f} s), as told")
    out, err = delete.communicate(timeout=60)
    check(delete.returncode == 0 and f"committed as version {v + 1}" in out,
          f"the delete commits as version {v + 1}: {out.strip()} {err.strip()}")
    check(lab.wait(lambda: lab.committed() == v + 2, f"version {v + 2}"),
          f"then the drain's end commits as version {v + 2}")
    restarted(lab, check, ctl, v + 2)
    check(lab.kill("manager") == 0, "the manager exits 0 on SIGTERM")


def restarted(lab, check, ctl, v):
    """A change accepted, its round held by peer1, and the manager killed:
    the restarted one has the change in its desired table, not committed,
    and no count of it. A no-op then must not be told "committed" before
    the version that carries the change is (it was, at once, by a first
    version of the fix)."""
    digest = lab.status()["committed"]["digest"]
    lab.start("peer1b", [lab.args.rawpeer, "--ca", f"{lab.pki}/ca.pem", "--cert",
                         f"{lab.pki}/peer1.pem", "--key", f"{lab.pki}/peer1.key",
                         "--quiet-status", lab.url, f"hello:peer1:{v}:{digest}",
                         "expect:WELCOME:5000", "expect:PREPARE:30000", "recv:30000"])
    check(lab.wait(lambda: lab.members()["peer1"]["state"] == "in-sync", "peer1 again"),
          f"peer1 says hello again at version {v}")
    r = lab.ctl("backend", "add", f"{VIP}:80", "10.1.1.13:8080", "--host", "10.0.1.1",
                "--no-wait")
    check(r.returncode == 0 and lab.wait(
        lambda: (lab.status().get("round") or {}).get("version") == v + 1, "round v+1"),
        f"a backend added: round {v + 1} held by peer1 ({r.stdout.strip()})")
    lab.kill("manager", signal.SIGKILL)
    lab.kill("peer1b", signal.SIGKILL)
    check(lab.start_manager(), "the manager restarted (kill -9) answers")
    export = lab.ctl("config", "export")
    path = os.path.join(lab.tmp, "services2.cfg")
    with open(path, "w") as f:
        f.write(export.stdout)
    # Within the restart's grace (1 s) if the machine allows: no round yet.
    r = subprocess.run(ctl + ["config", "apply", path], capture_output=True, text=True)
    told = re.search(r"committed as version (\d+)", r.stdout)
    now = lab.committed()
    check(export.returncode == 0 and "10.1.1.13" in export.stdout and r.returncode == 0 and
          told is not None and int(told.group(1)) <= now,
          f"the export applied after the restart is no change, and told committed only once "
          f"it is (committed now {now}): {r.stdout.strip()} {r.stderr.strip()}")
    check(lab.wait(lambda: lab.committed() == v + 1, f"version {v + 1}"),
          f"the change from before the restart commits as version {v + 1}")


if __name__ == "__main__":
    raise SystemExit(main())
