# SPDX-License-Identifier: BSD-3-Clause
"""What the process tests share: DPDK telemetry queries, a check list, and
a lab of sluice-manager with its sluice-mux members (ManagerLab)."""
import argparse
import json
import os
import signal
import socket
import subprocess
import tempfile
import time


def telemetry(path, cmd):
    """The reply to one telemetry command on the socket at path."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    json.loads(s.recv(16384))  # greeting: version, pid, max_output_len
    s.send(cmd.encode())
    reply = json.loads(s.recv(65536))
    s.close()
    return reply[cmd.split(",")[0]]


def mux_telemetry(prefix, cmd):
    """The reply to cmd from the sluice-mux running with DPDK file prefix."""
    return telemetry(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2", cmd)


def mux_version(prefix):
    """The flow table version that mux runs, by its own telemetry."""
    return mux_telemetry(prefix, "/sluice/stats")["version"]


def flow_table(prefix):
    """That mux's /sluice/flow_table: version, services, backends."""
    return mux_telemetry(prefix, "/sluice/flow_table")


class Checks:
    """ok/FAIL lines; failed() says how many failed."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)
        return cond


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on just now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cfg_value(v):
    return str(v) if isinstance(v, int) else json.dumps(v)


class ManagerLab:
    """sluice-manager and its processes in the temporary folder tmp.

    The manager listens for members on tls+tcp://127.0.0.1:port (url), with
    the certificates under tmp/pki that the test makes, and for sluicectl on
    ipc://tmp/ctl.sock (ctl_url). Every process started logs to tmp/NAME.log;
    muxes run with the DPDK file prefix sluice-test-TAG-NAME-PID (TAG: the
    subclass's), each recorded in prefixes for stop_all() to clean up.
    After a failed check, dump_logs() shows the end (LOG_TAIL characters)
    of the logs of LOGS.
    """

    TAG = "lab"
    LOGS = ("manager", "mux1")
    LOG_TAIL = 4000

    def __init__(self, args, tmp, check):
        self.args, self.tmp, self.check = args, tmp, check
        self.port = free_port()
        self.url = f"tls+tcp://127.0.0.1:{self.port}"
        self.ctl_url = f"ipc://{tmp}/ctl.sock"
        self.pki = os.path.join(tmp, "pki")
        self.manager_cfg = os.path.join(tmp, "manager.cfg")
        self.procs = {}
        self.prefixes = []

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

    def start(self, name, argv, cwd=None):
        log = open(os.path.join(self.tmp, name + ".log"), "a")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=log,
                                            stdin=subprocess.DEVNULL, cwd=cwd)
        log.close()
        return self.procs[name]

    def start_manager(self, cfg_path=None):
        """Start the manager; True once it answers sluicectl status."""
        self.start("manager", [self.args.manager, "-c", cfg_path or self.manager_cfg])
        return self.wait(lambda: self.ctl("status").returncode == 0, "the manager to answer")

    def start_mux(self, name, port=None, pki=None, extra=""):
        """Start sluice-mux NAME (net_ring, member NAME of the manager on
        port, with pki's NAME certificate; extra: more of its config).
        Returns its DPDK file prefix."""
        prefix = f"sluice-test-{self.TAG}-{name}-{os.getpid()}"
        pki = pki or self.pki
        path = os.path.join(self.tmp, name + ".cfg")
        with open(path, "w") as f:
            f.write(f"""eal = [ "--no-huge", "-m", "256", "--no-pci", "--file-prefix={prefix}" ];
mux = {{ tunnel_address = "10.255.0.1"; next_hop_mac = "02:00:00:00:00:fe"; idle_sleep_us = 1000; }};
ports = ( {{ devargs = "net_ring_{name}"; }} );
manager = {{ url = "tls+tcp://127.0.0.1:{port or self.port}"; id = "{name}";
	ca = "{pki}/ca.pem"; cert = "{pki}/{name}.pem"; key = "{pki}/{name}.key";
	heartbeat_ms = 300; }};
{extra}""")
        if prefix not in self.prefixes:
            self.prefixes.append(prefix)
        self.start(name, [self.args.mux, "-c", path])
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
        return self.status()["committed"]["version"]

    def members(self):
        return {m["id"]: m for m in self.status()["members"]}

    def in_sync(self, names, version):
        """Every member of names in sync, having applied version."""
        ms = self.members()
        return all(ms.get(n, {}).get("state") == "in-sync" and ms[n]["applied"] == version
                   for n in names)

    def wait(self, pred, what=None, timeout=20, quiet=False):
        """Poll pred every 50 ms until it holds (True) or timeout seconds
        pass (False: a FAIL line "timed out waiting for WHAT", unless there
        is no what or quiet). An exception in pred counts as not yet."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if pred():
                    return True
            except (OSError, ValueError, KeyError, TypeError, IndexError):
                pass
            time.sleep(0.05)
        if what is not None and not quiet:
            self.check(False, "timed out waiting for " + what)
        return False

    def kill(self, name, sig=signal.SIGTERM):
        """Signal NAME and reap it: its exit status (None if not running)."""
        p = self.procs.pop(name, None)
        if p is None:
            return None
        p.send_signal(sig)
        try:
            return p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            return p.wait()

    def log(self, name):
        with open(os.path.join(self.tmp, name + ".log")) as f:
            return f.read()

    def stop_all(self):
        """Kill (-9) what still runs; remove the muxes' DPDK runtime folders."""
        for n in list(self.procs):
            self.kill(n, signal.SIGKILL)
        for p in self.prefixes:
            subprocess.run(["rm", "-rf", f"/var/run/dpdk/{p}"], check=True)

    def dump_logs(self):
        """After a failed check: the end of each log of LOGS."""
        if not self.check.failures:
            return
        for n in self.LOGS:
            if os.path.exists(os.path.join(self.tmp, n + ".log")):
                print(f"--- {n}.log")
                print(self.log(n)[-self.LOG_TAIL:])


def manager_test_args(*more):
    """The command line of a ManagerLab test: --mux, --manager, --ctl,
    --certs and each of more, all required paths."""
    ap = argparse.ArgumentParser()
    for a in ("mux", "manager", "ctl", "certs") + more:
        ap.add_argument("--" + a, required=True)
    return ap


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
            # Last, so that a log's tail (CI shows the last 100 lines) has them.
            for f in check.failures:
                print("failed: " + f)
