#!/usr/bin/python3
"""DIP health under sluice-manager, with real backends and a real mux.

Backends are python3 http.server processes, each bound to its own loopback
address (127.0.77.1..4, port 18181..18184): those addresses are the DIPs of
the table. The manager probes them (HTTP GET /, every 1 s, timeout 1 s,
healthy 2, unhealthy 2, deregistration delay 3 s); one sluice-mux on
net_ring is its member over mutual TLS and runs the effective table.

  - a stopped server is unhealthy, and out of the table members run (maint),
    after the unhealthy threshold of failures in a row, with its reason; it
    is healthy and back after the healthy threshold once restarted;
  - a server stopped and started every second for 10 s makes at most 6
    versions: each change of health needs 2 probes in a row (2 s), so 10 s
    hold at most 5, plus the one that settles it afterwards;
  - minimum healthy 3 of 4: with two servers down the pool fails open
    (every backend active, status says FAIL-OPEN), and closes again when
    a third is healthy;
  - an HTTP probe of a missing path fails with "HTTP 404";
  - slow start 30 s: a backend back from the dead ramps up in steps;
  - backend del: the backend drains (state drain, time left shown), then
    leaves the table when the 3 s delay ends;
  - the manager killed (-9) and restarted makes no new version: backends
    keep the health the committed table shows.

Each of these is a phase of its own (PHASES), and every phase starts from
the same baseline, which reset() brings the lab back to whatever the phase
before it left (and says so, with a FAIL, when it cannot):

  - the manager running; servers 1..4 listening;
  - the service's pool as POOL: HTTP GET /, every 1 s, timeout 1 s, healthy
    2, unhealthy 2, deregistration delay 3 s, minimum healthy 1, no slow
    start;
  - backends 1..4 registered, healthy and active in the committed table;
    no round or change pending; the mux running the committed version.

A phase sets up what it needs beyond that and checks its own outcome; an
exception in one is a failure of that phase, and the next one goes on.
"""
import os
import signal
import socket
import time

from sluicetest.config import TEST_SEED
from sluicetest.procs import NOT_YET

from sluicetest.manager import ManagerLab, backend, manager_test_args, mux_version, run_in_lab

VIP = "192.0.2.30"
SVC = f"{VIP}:80"
BE = {i: (f"127.0.77.{i}", 18180 + i) for i in range(1, 5)}
INTERVAL, UNHEALTHY, HEALTHY = 1, 2, 2
HEALTH_BATCH_S = 0.3
DRAIN_DELAY = 3
# The baseline pool, as vip list shows it and as vip set puts it back.
POOL = {"probe": "http", "path": "/", "interval": INTERVAL, "timeout": 1, "healthy": HEALTHY,
        "unhealthy": UNHEALTHY, "drain_delay": DRAIN_DELAY, "min_healthy": 1,
        "slow_start": 0}
POOL_ARGS = ["--probe", "http", "--path", "/", "--interval", str(INTERVAL),
             "--probe-timeout", "1", "--healthy", str(HEALTHY), "--unhealthy", str(UNHEALTHY),
             "--drain-delay", str(DRAIN_DELAY)]


class Lab(ManagerLab):
    TAG = "health"
    LOG_TAIL = 6000
    CERTS = ("sluice-manager", "mux1")
    MANAGER = dict(batch_ms=50, health_batch_ms=int(HEALTH_BATCH_S * 1000), hash_seed=TEST_SEED)

    def __init__(self, args, tmp, check):
        super().__init__(args, tmp, check)
        for i in BE:
            self.web_folder(f"www{i}", f"backend {i}\n")

    def server_up(self, i):
        addr, port = BE[i]
        self.start(f"www{i}", ["/usr/bin/python3", "-m", "http.server", "--bind", addr,
                               str(port)], cwd=os.path.join(self.tmp, f"www{i}"))
        return self.wait(lambda: self.listening(i), f"server {i} to listen", timeout=10)

    def server_down(self, i):
        self.kill(f"www{i}")

    @staticmethod
    def listening(i):
        try:
            socket.create_connection(BE[i], timeout=0.5).close()
            return True
        except OSError:
            return False

    def backend(self, i):
        """Backend i as `vip list` shows it in the committed table."""
        return backend(self.json_ctl("vip", "list"), *BE[i])

    def backend_add(self, i):
        return self.ctl("backend", "add", SVC, f"{BE[i][0]}:{BE[i][1]}", "--host", "10.0.1.1")

    def service(self):
        return self.json_ctl("vip", "list")["services"][0]

    def history(self, n=20):
        return self.json_ctl("history", "--limit", str(n))["versions"]


def main():
    check, _ = run_in_lab(Lab, manager_test_args().parse_args(), run)
    return check.report("health")


def state_is(lab, i, state, health):
    b = lab.backend(i)
    return b is not None and b["state"] == state and b["health"] == health


def all_healthy(lab):
    return all(state_is(lab, i, "active", "healthy") for i in BE)


def mux_runs_committed(lab, prefix):
    v = lab.committed()
    return lab.wait(lambda: lab.in_sync(["mux1"], v) and mux_version(prefix) == v,
                    f"the mux to run version {v}")


def seconds_until(lab, action, i, state, health, what):
    """action(i), then the seconds until backend i is in state and health
    (a FAIL after 30 s). The seconds are a figure: how fast is the
    thresholds' business (counted probes), not the wall clock's."""
    t0 = time.monotonic()
    action(i)
    lab.wait(lambda: state_is(lab, i, state, health), what, timeout=30)
    return time.monotonic() - t0


def quiet(lab):
    st = lab.status()
    return st["round"] is None and st["pending"] is None


def setup(lab, check):
    """The lab of the baseline, built as an operator would: servers, the
    manager, the mux, the service with its pool, four backends. Returns the
    mux's DPDK file prefix, or None if there is no lab to test."""
    for i in BE:
        if not check(lab.server_up(i), f"backend server {i} listens on {BE[i][0]}:{BE[i][1]}"):
            return None
    check(lab.start_manager(), "the manager starts")
    prefix = lab.start_mux("mux1")
    check(lab.wait(lambda: lab.in_sync(["mux1"], 0), "mux1 in sync"), "mux1 joins at version 0")

    r = lab.ctl("vip", "add", SVC, *POOL_ARGS)
    check(r.returncode == 0, f"vip add with pool options: {r.stdout.strip()} {r.stderr.strip()}")
    for i in BE:
        r = lab.backend_add(i)
        check(r.returncode == 0, f"backend add {i}: {r.stdout.strip()} {r.stderr.strip()}")
    check(lab.wait(lambda: all_healthy(lab), "four healthy backends"),
          "all four backends healthy and active")
    pool = lab.service()["pool"]
    check(pool["probe"] == "http" and pool["interval"] == 1 and pool["drain_delay"] == 3,
          f"vip list shows the pool: {pool}")
    check(mux_runs_committed(lab, prefix), "the mux runs the committed version")
    return None if check.failures else prefix


def reset(lab, check, prefix, phase):
    """Bring the lab back to the baseline (the module's docstring) from
    wherever the phase before left it. True once there; False (with the
    FAIL lines of what did not come back) if it cannot."""
    what = f"{phase}: the baseline"
    if not lab.manager_running() and not lab.start_manager():
        return False
    for i in BE:
        if not lab.listening(i) and not lab.server_up(i):
            return False
    pool = lab.service()["pool"]
    if any(pool[k] != v for k, v in POOL.items()):
        r = lab.ctl("vip", "set", SVC, *POOL_ARGS, "--min-healthy", "1", "--slow-start", "0")
        if not check(r.returncode == 0, f"{what}: vip set puts the pool back: {r.stderr.strip()}"):
            return False
    for i in BE:
        # a backend deleted and still draining leaves when its delay ends
        if not lab.wait(lambda: (lab.backend(i) or {}).get("admin_state") != "deregistered",
                        f"{what}: backend {i} to finish draining", timeout=DRAIN_DELAY + 5):
            return False
        if lab.backend(i) is None:
            r = lab.backend_add(i)
            if not check(r.returncode == 0, f"{what}: backend add {i}: {r.stderr.strip()}"):
                return False
    return (lab.wait(lambda: all_healthy(lab), f"{what}: four healthy, active backends") and
            lab.wait(lambda: quiet(lab), f"{what}: no round or change pending") and
            mux_runs_committed(lab, prefix))


def phase_down(lab, check, prefix):
    """A server stops: unhealthy, out of the members' table, in time."""
    v0 = lab.committed()
    took = seconds_until(lab, lab.server_down, 2, "maint", "unhealthy", "backend 2 unhealthy")
    b = lab.backend(2)
    print(f"# backend 2 out of the table {took:.2f} s after its server stopped "
          f"(interval x unhealthy = {INTERVAL * UNHEALTHY} s)")
    check(b["failures"] >= UNHEALTHY and b["successes"] == 0,
          f"out after the unhealthy threshold of failures in a row: {b['failures']} "
          f"(threshold {UNHEALTHY})")
    check(b["admin_state"] == "active" and "connection refused" in b["last_failure"] and
          b["why"].startswith("unhealthy: connect: connection refused"),
          f"its JSON says why: health {b['health']}, last_failure {b['last_failure']!r}, "
          f"why {b['why']!r}")
    v1 = lab.committed()
    check(v1 == v0 + 1, f"one version for it: {v0} -> {v1}")
    check(any("127.0.77.2:18182" in h["summary"] and "(unhealthy: connect: connection refused)"
              in h["summary"] for h in lab.history(3)),
          f"history says why: {lab.history(1)[0]['summary']}")
    check(mux_runs_committed(lab, prefix), f"the mux runs version {v1}, backend 2 in maint")


def phase_back(lab, check, prefix):
    """A stopped server restarts: back after the healthy threshold."""
    lab.server_down(2)
    if not lab.wait(lambda: state_is(lab, 2, "maint", "unhealthy"), "backend 2 out first",
                    timeout=10):
        return
    took = seconds_until(lab, lab.server_up, 2, "active", "healthy", "backend 2 healthy")
    print(f"# backend 2 back {took:.2f} s after its server restarted "
          f"(interval x healthy = {INTERVAL * HEALTHY} s)")
    check(lab.backend(2)["successes"] >= HEALTHY, "after the healthy threshold of successes")
    check(mux_runs_committed(lab, prefix), "the mux runs it")


def phase_flapping(lab, check, prefix):
    """A server stopped and started every second: a bounded number of versions."""
    v0 = lab.committed()
    end = time.monotonic() + 10
    up = True
    while time.monotonic() < end:
        if up:
            lab.server_down(3)
        else:
            lab.server_up(3)
        up = not up
        time.sleep(1.0)
    if not up:
        lab.server_up(3)
    lab.wait(lambda: state_is(lab, 3, "active", "healthy"), "backend 3 to settle healthy")
    v1 = lab.committed()
    bound = 10 // (INTERVAL * min(HEALTHY, UNHEALTHY)) + 1
    check(v1 - v0 <= bound, f"10 s of flapping made {v1 - v0} versions (bound {bound})")
    check(mux_runs_committed(lab, prefix), "the mux runs the last one")


def phase_min_healthy(lab, check, prefix):
    """Minimum healthy 3 of 4: fail open below it, close again at 3."""
    r = lab.ctl("vip", "set", SVC, "--min-healthy", "3")
    check(r.returncode == 0, f"vip set --min-healthy 3: {r.stdout.strip()} {r.stderr.strip()}")
    lab.server_down(1)
    check(lab.wait(lambda: state_is(lab, 1, "maint", "unhealthy"), "backend 1 out"),
          "one down of four: 3 healthy, no fail-open, backend 1 out")
    lab.server_down(2)
    check(lab.wait(lambda: lab.status()["fail_open"] != [] and
                   state_is(lab, 1, "active", "unhealthy") and
                   state_is(lab, 2, "active", "unhealthy"), "fail-open"),
          "two down of four (2 < 3): the pool fails open, every backend active")
    st = lab.ctl("status").stdout
    fo = lab.status()["fail_open"]
    check(f"FAIL-OPEN   tcp {SVC}: 2 of 4 healthy, minimum 3" in st,
          f"status says so loudly: {[line for line in st.splitlines() if 'FAIL' in line]}")
    check(fo and fo[0]["healthy"] == 2 and fo[0]["registered"] == 4 and fo[0]["min_healthy"] == 3,
          f"and in JSON: {fo}")
    check(lab.service()["fail_open"], "vip list marks the service fail_open")
    check(mux_runs_committed(lab, prefix), "the mux runs the fail-open table")
    lab.server_up(1)
    check(lab.wait(lambda: lab.status()["fail_open"] == [] and
                   state_is(lab, 2, "maint", "unhealthy") and
                   state_is(lab, 1, "active", "healthy"), "fail-open to end"),
          "3 healthy again: fail-open ends, backend 2 out again")


def phase_http_status(lab, check, prefix):
    """An HTTP probe of a missing path fails with its status code."""
    r = lab.ctl("vip", "set", SVC, "--path", "/missing", "--min-healthy", "1")
    check(r.returncode == 0, "vip set --path /missing")
    check(lab.wait(lambda: all(lab.backend(i)["last_failure"] == "HTTP 404" and
                               lab.backend(i)["health"] == "unhealthy" for i in BE),
                   "HTTP 404 failures"),
          "an HTTP probe of a missing path fails with \"HTTP 404\"")
    check(lab.service()["fail_open"], "none healthy (0 < 1): the pool fails open")


def phase_slow_start(lab, check, prefix):
    """Slow start 30 s: back from the dead, the weight ramps up in steps."""
    r = lab.ctl("vip", "set", SVC, "--slow-start", "30")
    check(r.returncode == 0, f"vip set --slow-start 30: {r.stderr.strip()}")
    lab.server_down(4)
    lab.wait(lambda: state_is(lab, 4, "maint", "unhealthy"), "backend 4 out")
    lab.server_up(4)
    lab.wait(lambda: state_is(lab, 4, "active", "healthy"), "backend 4 back")
    t0 = time.monotonic()
    weights, others = [], set()
    while time.monotonic() < t0 + 12:
        b = lab.backend(4)
        if b["slow_start"] is not None and (not weights or weights[-1] != b["weight"]):
            weights.append(b["weight"])
            others.add(lab.backend(1)["weight"])
        time.sleep(0.2)
    b = lab.backend(4)
    check(len(weights) >= 3 and weights == sorted(weights) and weights[-1] < 10,
          f"its committed weight rises in steps: {weights} (of 10: the pool's weights "
          f"are x10 while a weight-1 backend ramps, others {sorted(others)})")
    check(b["slow_start"] is not None and 0 < b["slow_start"]["share"] < 0.25,
          f"vip list shows its share: {b['slow_start']}")
    check(mux_runs_committed(lab, prefix), "the mux runs each step")
    check(lab.wait(lambda: lab.backend(4)["slow_start"] is None and
                   all(lab.backend(i)["weight"] == 1 for i in BE), "the ramp to end",
                   timeout=30),
          "after 30 s the ramp ends: every weight back to 1")


def phase_drain(lab, check, prefix):
    """backend del drains, then the backend goes when the delay ends."""
    t0 = time.monotonic()  # before the drain can start
    r = lab.ctl("backend", "del", SVC, f"{BE[3][0]}:{BE[3][1]}")
    check(r.returncode == 0, f"backend del: {r.stdout.strip()} {r.stderr.strip()}")
    b = lab.backend(3)
    check(b is not None and b["state"] == "drain" and b["admin_state"] == "deregistered" and
          b["draining"] is not None and 0 < b["draining"]["left_ms"] <= DRAIN_DELAY * 1000,
          f"it drains, with time left: state {b and b['state']}, draining "
          f"{b and b['draining']}")
    check("deregistered, draining: " in lab.ctl("vip", "list").stdout, "vip list says so")
    check(lab.wait(lambda: lab.backend(3) is None, "backend 3 to go", timeout=30),
          "it leaves the table")
    took = time.monotonic() - t0
    # not before the delay ends (how long after is a figure)
    check(took >= DRAIN_DELAY,
          f"when the {DRAIN_DELAY} s delay ends, not before ({took:.2f} s after)")
    check("(deregistration delay over)" in lab.history(1)[0]["summary"],
          f"history says why: {lab.history(1)[0]['summary']}")
    check(mux_runs_committed(lab, prefix), "the mux runs it")


def phase_restart(lab, check, prefix):
    """The manager killed (-9) and restarted changes nothing."""
    lab.server_down(1)
    lab.wait(lambda: state_is(lab, 1, "maint", "unhealthy"), "backend 1 out")
    mux_runs_committed(lab, prefix)
    v0 = lab.committed()
    lab.kill("manager", signal.SIGKILL)
    check(lab.start_manager(), "the manager restarts after kill -9")
    # two probes of every backend at least: any churn they caused would show
    lab.wait(lambda: lab.status()["probes"]["up"] + lab.status()["probes"]["down"]
             >= 2 * len(BE), "probes after the restart")
    lab.wait(lambda: quiet(lab), "no round or change pending")
    check(lab.committed() == v0, f"no new version after the restart: {lab.committed()} == {v0}")
    check(state_is(lab, 1, "maint", "unhealthy") and state_is(lab, 2, "active", "healthy"),
          "backend 1 still out, the others still in")
    pool = lab.service()["pool"]
    check(pool["probe"] == "http" and pool["min_healthy"] == 1, "the pool options survived")
    lab.server_up(1)
    check(lab.wait(lambda: state_is(lab, 1, "active", "healthy"), "backend 1 back"),
          "and backend 1 comes back")
    check(mux_runs_committed(lab, prefix), "the mux runs the last version")


PHASES = [
    ("1. down", phase_down),
    ("2. back", phase_back),
    ("3. flapping", phase_flapping),
    ("4. minimum healthy", phase_min_healthy),
    ("5. HTTP status", phase_http_status),
    ("6. slow start", phase_slow_start),
    ("7. drain", phase_drain),
    ("8. manager restart", phase_restart),
]


def run(lab, check):
    prefix = setup(lab, check)
    if prefix is None:
        return
    for name, phase in PHASES:
        print(f"--- phase {name}: {phase.__doc__}")
        try:
            if not reset(lab, check, prefix, name):
                check(False, f"phase {name}: not run, the lab is not at its baseline")
                continue
            phase(lab, check, prefix)
        except NOT_YET as e:
            check(False, f"phase {name}: {type(e).__name__}: {e}")
    check(lab.kill("mux1") == 0, "mux1 exits 0 on SIGTERM")
    check(lab.kill("manager") == 0, "the manager exits 0 on SIGTERM")


if __name__ == "__main__":
    raise SystemExit(main())
