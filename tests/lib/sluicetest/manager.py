# SPDX-License-Identifier: BSD-3-Clause
"""sluice-manager and sluicectl: a lab of a manager and its muxes for the
process tests (ManagerLab), and readings of sluicectl's JSON that the
process tests and the netns tests share.

The readings take what `sluicectl --json status` or `--json vip list`
printed, parsed; the shell tests reach them through this module's command
line, which reads that JSON on stdin:

    lab_ctl --json status   | python3 -m sluicetest.manager committed
    lab_ctl --json status   | python3 -m sluicetest.manager in-sync --count 3
    lab_ctl --json status   | python3 -m sluicetest.manager in-sync --ids mux,agent1 --version 7
    lab_ctl --json status   | python3 -m sluicetest.manager member mux vip_probe.answered
    lab_ctl --json vip list | python3 -m sluicetest.manager backend 10.1.1.12 state
    lab_ctl --json vip list | python3 -m sluicetest.manager states 10.1.1.11 10.1.1.12

(in-sync exits 0 or 1; the others print the value, "-" when absent).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from .checks import Checks
from .config import MuxConfig
from .procs import Daemons, free_port, poll, required_args, telemetry, test_prefix


# --------------------------------------------------------------------------
# Readings of sluicectl's JSON


def committed_version(status):
    return status["committed"]["version"]


def in_sync(status, ids=None, count=None, version=None):
    """Members in sync (state in-sync) on version (default: the committed
    one): every one of ids, or exactly count of them."""
    v = committed_version(status) if version is None else version
    ms = {m["id"]: m for m in status["members"]}
    on = {i for i, m in ms.items() if m["state"] == "in-sync" and m["applied"] == v}
    if ids is not None:
        return set(ids) <= on
    return len(on) == count


def field(obj, path):
    """obj's field at a dotted path; None where a step is absent."""
    for k in path.split("."):
        obj = obj.get(k) if isinstance(obj, dict) else None
    return obj


def member(status, ident):
    return next((m for m in status["members"] if m["id"] == ident), None)


def backends(vip_list):
    """Every backend of the committed table, each with its service."""
    return [(s, b) for s in vip_list["services"] for b in s["backends"]]


def backend(vip_list, dip, port=None):
    """The backend with that DIP (and port) in the committed table, or None."""
    return next((b for _, b in backends(vip_list)
                 if b["dip"] == dip and (port is None or b["port"] == port)), None)


def _show(v):
    return "-" if v is None else str(v)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m sluicetest.manager",
                                 description="read sluicectl --json output on stdin")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("committed", help="the committed version (status)")
    s = sub.add_parser("in-sync", help="exit 0 if the members are in sync (status)")
    s.add_argument("--ids", type=lambda a: a.split(","))
    s.add_argument("--count", type=int)
    s.add_argument("--version", type=int)
    s = sub.add_parser("member", help="a member's field (status)")
    s.add_argument("id")
    s.add_argument("field", help="dotted: vip_probe.answered")
    s = sub.add_parser("backend", help="a backend's field (vip list)")
    s.add_argument("dip")
    s.add_argument("field")
    s = sub.add_parser("states", help="the state of each backend (vip list)")
    s.add_argument("dips", nargs="+")
    a = ap.parse_args(argv)
    j = json.load(sys.stdin)
    if a.cmd == "committed":
        print(committed_version(j))
    elif a.cmd == "in-sync":
        if (a.ids is None) == (a.count is None):
            ap.error("in-sync: give --ids or --count")
        return 0 if in_sync(j, a.ids, a.count, a.version) else 1
    elif a.cmd == "member":
        m = member(j, a.id)
        print(_show(None if m is None else field(m, a.field)))
    elif a.cmd == "backend":
        b = backend(j, a.dip)
        print(_show(None if b is None else b.get(a.field)))
    else:
        print(" ".join(_show((backend(j, d) or {}).get("state")) for d in a.dips))
    return 0


# --------------------------------------------------------------------------
# A manager and its muxes


def mux_version(prefix):
    """The flow table version that mux runs, by its own telemetry."""
    return telemetry(prefix, "/sluice/stats")["version"]


def flow_table(prefix):
    """That mux's /sluice/flow_table: version, services, backends."""
    return telemetry(prefix, "/sluice/flow_table")


def _cfg_value(v):
    return str(v) if isinstance(v, int) else json.dumps(v)


class ManagerLab(Daemons):
    """sluice-manager and its processes in the temporary folder tmp.

    The manager listens for members on tls+tcp://127.0.0.1:port (url), with
    the certificates under tmp/pki that the test makes, and for sluicectl on
    ipc://tmp/ctl.sock (ctl_url). Every process started logs to tmp/NAME.log;
    muxes run with the DPDK file prefix sluice-test-TAG-NAME-PID (TAG: the
    subclass's), each recorded for stop_all() to clean up.
    A subclass names in CERTS who gets a certificate of the CA in pki
    (sluice-manager and the members), and in MANAGER the settings of the
    manager.cfg to write (its database tmp/manager.db); both are made when
    the lab is. After a failed check, dump_logs() shows the warnings and errors
    (LOG_WARNINGS lines) and the end (LOG_TAIL characters) of the logs of
    LOGS.
    """

    TAG = "lab"
    LOGS = ("manager", "mux1")
    CERTS = ()
    MANAGER = None
    LOG_TAIL = 4000
    LOG_WARNINGS = 200

    def __init__(self, args, tmp, check):
        super().__init__(tmp)
        self.args, self.tmp, self.check = args, tmp, check
        self.port = free_port()
        self.url = f"tls+tcp://127.0.0.1:{self.port}"
        self.ctl_url = f"ipc://{tmp}/ctl.sock"
        self.pki = os.path.join(tmp, "pki")
        self.manager_cfg = os.path.join(tmp, "manager.cfg")
        if self.CERTS:
            self.make_certs(self.pki, *self.CERTS)
        if self.MANAGER is not None:
            self.write_manager_cfg(os.path.join(tmp, "manager.db"), **self.MANAGER)

    def web_folder(self, name, text):
        """tmp/NAME holding an index.html of text, for a web server's
        folder (a backend's answer); returns its path."""
        path = os.path.join(self.tmp, name)
        os.mkdir(path)
        with open(os.path.join(path, "index.html"), "w") as f:
            f.write(text)
        return path

    def make_certs(self, pki, *names):
        """A CA in the folder pki and a certificate of its for each of names
        (the test's --certs script: scripts/make-certs.sh)."""
        subprocess.run([self.args.certs, pki] + list(names), check=True,
                       stdout=subprocess.DEVNULL)

    def write_manager_cfg(self, database, **settings):
        """manager.cfg: members on url, sluicectl on ctl_url, TLS from pki,
        the database, then each of settings (a string is quoted)."""
        extra = "".join(f"\t{k} = {_cfg_value(v)};\n" for k, v in settings.items())
        with open(self.manager_cfg, "w") as f:
            f.write(f"""manager = {{
	listen = "{self.url}";
	ctl = "{self.ctl_url}";
	tls = {{ ca = "{self.pki}/ca.pem"; cert = "{self.pki}/sluice-manager.pem";
		key = "{self.pki}/sluice-manager.key"; }};
	database = "{database}";
{extra}}};
""")

    def start_manager(self, cfg_path=None, env=None):
        """Start the manager (env: its environment); True once it answers
        sluicectl status."""
        self.start("manager", [self.args.manager, "-c", cfg_path or self.manager_cfg], env=env)
        return self.wait(lambda: self.ctl("status").returncode == 0, "the manager to answer")

    def manager_running(self):
        return self.running("manager")

    def start_mux(self, name, port=None, pki=None, extra="", member_extra="", urls=None,
                  devargs=None, env=None, **mux_opts):
        """Start sluice-mux NAME (on devargs, net_ring by default; member
        NAME of the manager on port, with pki's NAME certificate, its last
        known good table in tmp/NAME.lkg; member_extra: more of its manager
        group, extra: more of its config; urls: every manager's URL in place
        of the one on port; env: its environment; mux_opts: MuxConfig's,
        tunnel_address6 ...). Returns its DPDK file
        prefix."""
        prefix = test_prefix(self.TAG, name)
        pki = pki or self.pki
        path = os.path.join(self.tmp, name + ".cfg")
        with open(path, "w") as f:
            f.write(MuxConfig(None, idle_sleep_us=1000, **mux_opts).render(
                devargs=devargs or f"net_ring_{name}", file_prefix=prefix, port_name=None))
            where = (f'url = "tls+tcp://127.0.0.1:{port or self.port}"' if urls is None else
                     "urls = [ " + ", ".join(f'"{u}"' for u in urls) + " ]")
            f.write(f"""manager = {{ {where}; id = "{name}";
	ca = "{pki}/ca.pem"; cert = "{pki}/{name}.pem"; key = "{pki}/{name}.key";
	heartbeat_ms = 300; state_file = "{self.tmp}/{name}.lkg"; {member_extra}}};
{extra}""")
        self.start(name, [self.args.mux, "-c", path], prefix=prefix, env=env)
        return prefix

    def ctl(self, *argv, timeout=10):
        return subprocess.run([self.args.ctl, "--manager", self.ctl_url, "--timeout",
                               str(timeout)] + list(argv), capture_output=True, text=True)

    def json_ctl(self, *argv):
        """sluicectl --json ARGV, parsed; None if it failed."""
        r = self.ctl("--json", *argv)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def status(self):
        return self.json_ctl("status")

    def committed(self):
        return committed_version(self.status())

    def members(self):
        return {m["id"]: m for m in self.status()["members"]}

    def in_sync(self, names, version):
        """Every member of names in sync, having applied version."""
        return in_sync(self.status(), ids=names, version=version)

    def wait(self, pred, what=None, timeout=20, quiet=False):
        """Poll pred every 50 ms until it holds (True) or timeout seconds
        pass (False: a FAIL line "timed out waiting for WHAT", unless there
        is no what or quiet). An exception in pred counts as not yet."""
        if poll(pred, timeout) is not None:
            return True
        if what is not None and not quiet:
            self.check(False, "timed out waiting for " + what)
        return False

    def dump_logs(self):
        """After a failed check: each log of LOGS, its warnings and errors
        from the start (at most LOG_WARNINGS lines: a CI failure's cause is
        often long before the end), then its end (LOG_TAIL characters)."""
        if not self.check.failures:
            return
        for n in self.LOGS:
            if os.path.exists(self.log_path(n)):
                text = self.log(n)
                bad = [line for line in text.splitlines()
                       if ": warning: " in line or ": error: " in line]
                print(f"--- {n}.log: {len(bad)} warnings and errors")
                print("\n".join(bad[:self.LOG_WARNINGS]))
                print(f"--- {n}.log: the end")
                print(text[-self.LOG_TAIL:])


def manager_test_args(*more):
    """The command line of a ManagerLab test: --mux, --manager, --ctl,
    --certs and each of more, all required paths."""
    return required_args("mux", "manager", "ctl", "certs", *more)


def run_in_lab(lab_class, args, run, *run_args):
    """run(lab, check, *run_args) with a new lab_class in a temporary folder;
    then, whatever happened, lab.stop_all() and lab.dump_logs().
    Returns the Checks and what run returned."""
    check = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        lab = lab_class(args, tmp, check)
        try:
            return check, run(lab, check, *run_args)
        finally:
            lab.stop_all()
            lab.dump_logs()
            # SLUICE_TEST_KEEP=DIR: a failed run's folder (every log whole) is kept there
            keep = os.environ.get("SLUICE_TEST_KEEP")
            if keep and check.failures:
                shutil.copytree(tmp, os.path.join(keep, os.path.basename(tmp)),
                                ignore=shutil.ignore_patterns("*.sock", "*.ctl"))


if __name__ == "__main__":
    sys.exit(main())
