#!/usr/bin/python3
"""sluice-manager with two real sluice-mux members over mutual TLS.

  - members register and are brought to the committed version; sluicectl
    changes become versions that every member runs (its telemetry says so);
  - a bad request is refused with a message naming the field, exit 1, and
    leaves the committed version as it was;
  - a burst of changes is batched into fewer versions than changes;
  - a member whose certificate another CA signed is refused: it never
    appears among the members;
  - a mux killed (-9) and restarted with a stale config comes back empty
    and is resynced from a snapshot of the manager's version;
  - the manager killed (-9) and restarted resumes at its last committed
    version from its database, with its history, and the members stay on it;
  - the database's disk full (a tmpfs of 8 MB filled up): a change is
    refused with the reason, the running version and the members are
    untouched; with room again the same change (5000 backends) commits.
"""
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import threading

from sluicetest.config import TEST_SEED
from sluicetest.manager import ManagerLab, manager_test_args, mux_version, run_in_lab
from sluicetest.procs import rundir, telemetry

VIP = "192.0.2.10"
# what a mux restarted with a stale config starts with
STALE_TABLE = f"""flow_table = {{ hash_seed = "{TEST_SEED}"; services = (
	{{ vip = "{VIP}"; port = 80; backends = (
		{{ dip = "10.9.9.9"; port = 80; host = "10.0.9.1"; }} ); }} ); }};
"""


class Relay:
    """A TCP relay on loopback to port: what a member dials instead of the
    manager, so a test sees its connections (neither a mux nor the manager
    logs a TLS handshake refused). conns: one dict per connection, its bytes
    each way and who ended it ("manager" or "member"), once it has ended."""

    def __init__(self, port):
        self.target = port
        self.conns = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self.pump, args=(c,), daemon=True).start()

    def pump(self, c):
        rec = {"to_manager": 0, "to_member": 0, "ended_by": None}
        with self.lock:
            self.conns.append(rec)
        try:
            u = socket.create_connection(("127.0.0.1", self.target), timeout=5)
        except OSError:
            c.close()
            rec["ended_by"] = "no manager"
            return
        while rec["ended_by"] is None:
            r, _, _ = select.select([u, c], [], [], 1)
            for s, to, key in ((u, c, "to_member"), (c, u, "to_manager")):
                if s not in r:
                    continue
                try:
                    data = s.recv(65536)
                    if data:
                        to.sendall(data)
                except OSError:
                    data = b""
                if not data:
                    rec["ended_by"] = "manager" if s is u else "member"
                    break
                rec[key] += len(data)
        u.close()
        c.close()

    def ended(self):
        with self.lock:
            return [dict(r) for r in self.conns if r["ended_by"]]

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


class Lab(ManagerLab):
    TAG = "mgr"
    LOGS = ("manager", "mux1", "mux2", "mux9")

    def __init__(self, args, tmp, check):
        super().__init__(args, tmp, check)
        self.rogue = os.path.join(tmp, "rogue")
        self.make_certs(self.pki, "sluice-manager", "mux1", "mux2", "ops")
        self.make_certs(self.rogue, "mux9")
        # the database on a tmpfs of its own, small enough to fill
        dbdir = os.path.join(tmp, "db")
        os.mkdir(dbdir)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "sluice-test", dbdir],
                       check=True)
        self.dbdir = dbdir
        self.db = os.path.join(dbdir, "manager.db")
        self.write_manager_cfg(self.db, vote_timeout_ms=2000, batch_ms=100, hash_seed=TEST_SEED,
                               maglev_size=65537)

    def stop_all(self):
        super().stop_all()
        subprocess.run(["umount", self.dbdir], check=True)


def main():
    check, _ = run_in_lab(Lab, manager_test_args().parse_args(), run)
    return check.report("manager")


def run(lab, check):
    check(lab.start_manager(), "the manager starts and answers sluicectl over ipc://")
    check(lab.committed() == 0, "a new manager is at version 0")
    p1 = lab.start_mux("mux1")
    p2 = lab.start_mux("mux2")
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], 0), "both muxes in sync"),
          "both muxes register over mutual TLS, in sync at version 0")

    # changes become versions every member runs
    r = lab.ctl("vip", "add", f"{VIP}:80")
    check(r.returncode == 0 and "committed as version 1" in r.stdout,
          f"vip add commits version 1: {r.stdout.strip()} {r.stderr.strip()}")
    for n in (11, 12, 13):
        r = lab.ctl("backend", "add", f"{VIP}:80", f"10.1.1.{n}:8080", "--host", "10.0.1.1")
        check(r.returncode == 0, f"backend add 10.1.1.{n}: {r.stdout.strip()} {r.stderr.strip()}")
    v = lab.committed()
    check(v == 4, f"four changes, four versions: {v}")
    check(lab.wait(lambda: mux_version(p1) == 4 and mux_version(p2) == 4, "muxes at 4"),
          "both muxes' telemetry shows version 4")
    check(lab.in_sync(["mux1", "mux2"], 4), "status: both in sync at version 4")

    # refused changes name the field and change nothing
    r = lab.ctl("backend", "add", "192.0.2.99:80", "10.1.1.20:8080", "--host", "10.0.1.1")
    check(r.returncode == 1 and "192.0.2.99:80" in r.stderr,
          f"a backend for an unknown VIP is refused, exit 1: {r.stderr.strip()}")
    r = lab.ctl("backend", "add", f"{VIP}:80", "10.1.1.11:8080", "--host", "10.0.1.1")
    check(r.returncode == 1 and "10.1.1.11:8080" in r.stderr,
          f"a duplicate backend is refused: {r.stderr.strip()}")
    r = lab.ctl("backend", "add", f"{VIP}:80", "10.1.1.300:8080", "--host", "10.0.1.1")
    check(r.returncode == 2 and "10.1.1.300" in r.stderr,
          f"a malformed address is a usage error, exit 2: {r.stderr.strip()}")
    check(lab.committed() == 4, "the committed version is still 4")
    # a flag given a value is named (getopt gives such a flag's value as optopt)
    for flag in ("--json=1", "--help=x"):
        r = lab.ctl(flag, "status")
        check(r.returncode == 2 and f"{flag}: this option takes no value" in r.stderr,
              f"{flag} is a usage error that names it, exit 2: {r.stderr.strip()!r}")
    r = lab.ctl("--json", "-Zq", "status")
    check(r.returncode == 2 and "-Z: unknown option" in r.stderr,
          f"an unknown letter in a cluster is named by its letter: {r.stderr.strip()!r}")
    # a file's seed against manager.hash_seed: a restart would put it back
    other = os.path.join(lab.tmp, "other_seed.cfg")
    with open(other, "w") as f:
        f.write('flow_table = {\n  hash_seed = "ffeeddccbbaa99887766554433221100";\n'
                f'  services = ( {{ vip = "{VIP}"; port = 80; backends = ( {{ '
                'dip = "10.1.1.11"; port = 8080; host = "10.0.1.1"; } ); } );\n};\n')
    r = lab.ctl("config", "apply", other)
    check(r.returncode == 1 and "<apply>:2: flow_table.hash_seed: differs from "
          "manager.hash_seed" in r.stderr and lab.committed() == 4,
          f"config apply of another hash_seed is refused, naming its line: "
          f"{r.stderr.strip()}")

    # a burst of changes is batched
    procs = [subprocess.Popen([lab.args.ctl, "--manager", lab.ctl_url, "backend", "add",
                               f"{VIP}:80", f"10.1.2.{n}:8080", "--host", "10.0.1.1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(1, 41)]
    rcs = [p.wait(30) for p in procs]
    v = lab.committed()
    check(all(rc == 0 for rc in rcs), f"40 concurrent backend adds all commit: {rcs.count(0)}")
    check(4 < v < 4 + 40, f"batched: 40 changes became {v - 4} versions")
    vl = json.loads(lab.ctl("--json", "vip", "list").stdout)
    check(json.dumps(vl).count("10.1.2.") >= 40, "vip list shows all 40 new backends")
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v), "muxes in sync"),
          f"both muxes in sync at version {v}")

    # a member with a certificate from another CA is refused. No log says
    # so: it dials through a relay, which shows its connections reaching the
    # manager and ending in the handshake, a redial after each (mux9 trusts
    # its own CA only, so it turns down the manager's certificate as well)
    relay = Relay(lab.port)
    p9 = lab.start_mux("mux9", port=relay.port, pki=lab.rogue)
    lab.wait(lambda: mux_version(p9) == 0, "mux9 to run")
    tried = lab.wait(lambda: len(relay.ended()) >= 3, "mux9's connections to end")
    ended = relay.ended()
    print(f"# mux9's connections through the relay, ended: {len(ended)} "
          f"(by {sorted(set(r['ended_by'] for r in ended))}), bytes to the manager "
          f"{[r['to_manager'] for r in ended]}, back {[r['to_member'] for r in ended]}")
    check(tried and all(r["to_manager"] > 0 and r["to_member"] > 0 for r in ended),
          f"mux9 dials the manager, which answers, and each connection ends: {len(ended)}")
    check("mux9" not in lab.members(), "a mux with a foreign CA's certificate never registers")
    check(telemetry(p9, "/sluice/stats")["manager_connected"] == 0,
          "mux9's telemetry: not connected to the manager")
    lab.kill("mux9")
    relay.close()

    # kill -9 a mux; restart it with a stale config: resynced from a snapshot
    lab.kill("mux2", signal.SIGKILL)
    shutil.rmtree(rundir(p2), ignore_errors=True)
    lab.ctl("backend", "set", f"{VIP}:80", "10.1.1.11:8080", "--weight", "5")
    v = lab.committed()
    lab.start_mux("mux2", extra=STALE_TABLE)
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v) and mux_version(p2) == v,
                   "mux2 resynced"),
          f"mux2, killed and restarted with a stale table, is resynced to version {v}")
    check(f"snapshot of version {v} applied" in lab.log("mux2"),
          "mux2's log says it applied the manager's snapshot")

    # kill -9 the manager: it resumes from its database
    hist_before = json.loads(lab.ctl("--json", "history").stdout)
    lab.kill("manager", signal.SIGKILL)
    check(lab.start_manager(), "the manager restarts after kill -9")
    check(lab.committed() == v, f"it resumes at version {v}")
    hist_after = json.loads(lab.ctl("--json", "history").stdout)
    check(hist_after["versions"] == hist_before["versions"], "its history is intact")
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v), "members back"),
          "both muxes reconnect, in sync, with no resync needed")
    r = lab.ctl("backend", "del", f"{VIP}:80", "10.1.1.13:8080")
    check(r.returncode == 0 and f"committed as version {v + 1}" in r.stdout,
          f"and commits the next version: {r.stdout.strip()} {r.stderr.strip()}")
    v += 1

    # the database's disk full: a change is refused, nothing changes
    big = os.path.join(lab.tmp, "big.cfg")
    with open(big, "w") as f:
        bes = ",\n".join(f'{{ dip = "10.{3 + i // 250}.{i % 250}.1"; port = 8080; '
                          f'host = "10.0.1.1"; }}' for i in range(5000))
        f.write(f'flow_table = {{ hash_seed = "{TEST_SEED}"; maglev_size = 65537; '
                f'services = ( {{ vip = "{VIP}"; port = 80; '
                f'backends = ( {bes} ); }} ); }};\n')
    filler = os.path.join(os.path.dirname(lab.db), "filler")
    # unbuffered: a short write at the end of the space must not wait for close()
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass  # ENOSPC: the point
    r = lab.ctl("config", "apply", big)
    check(r.returncode == 1 and r.stderr.strip() != "",
          f"with the database's disk full, a change is refused: {r.stderr.strip()}")
    check(lab.committed() == v and lab.in_sync(["mux1", "mux2"], v),
          f"the running version stays {v} everywhere")
    check(lab.ctl("status").returncode == 0, "the manager still serves status")
    os.unlink(filler)
    r = lab.ctl("config", "apply", big)
    check(r.returncode == 0 and f"committed as version {v + 1}" in r.stdout,
          f"with room again, the change commits: {r.stdout.strip()} {r.stderr.strip()}")
    v += 1
    check(lab.wait(lambda: lab.in_sync(["mux1", "mux2"], v), "members on the big table"),
          f"both muxes run the 5000-backend version {v}")

    for n in ("mux1", "mux2"):
        check(lab.kill(n) == 0, f"{n} exits 0 on SIGTERM")
    check(lab.kill("manager") == 0, "the manager exits 0 on SIGTERM")


if __name__ == "__main__":
    raise SystemExit(main())
