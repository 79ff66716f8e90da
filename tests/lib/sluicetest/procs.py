# SPDX-License-Identifier: BSD-3-Clause
"""Processes: the daemons a test starts, their DPDK run folders, telemetry.

Every DPDK process runs with a file prefix; its run folder is
/var/run/dpdk/PREFIX, holding the telemetry socket (dpdk_telemetry.v2). A
daemon that stops cleanly removes that folder itself, so a test checks it
is gone and removes it only when it is not (a killed process leaves it).
A test names its prefixes sluice-test-TAG-NAME-PID (test_prefix()), so runs
never collide; a process started without one gets PROGRAM-PID from its own
EAL setup.

    d = Daemons(tmp)                        # logs in tmp/NAME.log
    d.start("mux1", [mux, "-c", cfg], prefix=p)
    poll(lambda: telemetry(p, "/sluice/stats")["rx_pkts"] == 300)
    d.kill("mux1")                          # SIGTERM, reaped: exit status
    d.stop_all()                            # SIGKILL the rest, run folders gone
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import time

DPDK_RUNDIR = "/var/run/dpdk"

# What a condition may raise while the thing it looks at is not there yet
# (a socket not bound, a reply without the field, a process not started).
NOT_YET = (OSError, ValueError, KeyError, TypeError, IndexError)


def required_args(*names):
    """A test's command line: --NAME for each name, each required (the
    paths meson passes: --mux, --agent, --certs ...)."""
    ap = argparse.ArgumentParser()
    for n in names:
        ap.add_argument("--" + n, required=True)
    return ap


def test_prefix(tag, name=None):
    """The DPDK file prefix of a test's process: sluice-test-TAG[-NAME]-PID."""
    return "-".join(["sluice-test", tag] + ([name] if name else []) + [str(os.getpid())])


def rundir(prefix):
    """The DPDK run folder of the process with that file prefix."""
    return os.path.join(DPDK_RUNDIR, prefix)


def telemetry(where, cmd, timeout=5.0):
    """The reply to one DPDK telemetry command. where is a file prefix or
    the socket's path; the reply is None while the process has not
    registered the command yet."""
    path = where if "/" in where else os.path.join(rundir(where), "dpdk_telemetry.v2")
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


_GIVEN = set()


def free_port(host="127.0.0.1"):
    """A TCP port on host that nothing listens on just now, and that
    this process was not given before: the kernel picks bind(0)'s port at
    random from about 14,000, so a test that asks for ten would otherwise
    be given one twice in about 0.3 % of runs (two daemons on one port)."""
    while True:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port


def poll(pred, timeout=20, interval=0.05, alive=None):
    """Call pred every interval seconds until it returns something true,
    and return that; None after timeout seconds, or as soon as alive() (if
    given) is false. An exception of NOT_YET in pred counts as not yet."""
    end = time.monotonic() + timeout
    while True:
        try:
            v = pred()
            if v:
                return v
        except NOT_YET:
            pass
        if alive is not None and not alive():
            return None
        if time.monotonic() >= end:
            return None
        time.sleep(interval)


def stop(proc, sig=signal.SIGTERM, timeout=15):
    """Signal a Popen and reap it (SIGKILL after timeout seconds): its exit
    status."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


class Daemons:
    """Named processes started by a test, each logging (stdout and stderr)
    to FOLDER/NAME.log, and the DPDK file prefixes they were given, whose
    run folders stop_all() removes."""

    def __init__(self, folder):
        self.folder = folder
        self.procs = {}
        self.prefixes = []
        self.prefix_of = {}

    def log_path(self, name):
        return os.path.join(self.folder, name + ".log")

    def start(self, name, argv, cwd=None, prefix=None, env=None):
        """Start argv as NAME (its log appended to); prefix: the DPDK file
        prefix it runs with, cleaned up by stop_all(); env: its environment
        (None: ours)."""
        if prefix is not None and prefix not in self.prefixes:
            self.prefixes.append(prefix)
        if prefix is not None:
            self.prefix_of[name] = prefix
        with open(self.log_path(name), "a") as log:
            self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=log,
                                                stdin=subprocess.DEVNULL, cwd=cwd, env=env)
        return self.procs[name]

    def running(self, name):
        p = self.procs.get(name)
        return p is not None and p.poll() is None

    def kill(self, name, sig=signal.SIGTERM):
        """Signal NAME and reap it: its exit status (None if not started)."""
        p = self.procs.pop(name, None)
        return None if p is None else stop(p, sig)

    def log(self, name):
        with open(self.log_path(name)) as f:
            return f.read()

    def end(self, name):
        """Stop NAME (SIGTERM) and then everything else (stop_all): its exit
        status, its log, and whether it left its DPDK run folder behind."""
        prefix = self.prefix_of.get(name)
        status = self.kill(name)
        left = prefix is not None and os.path.exists(rundir(prefix))
        log = self.log(name)
        self.stop_all()
        return status, log, left

    def stop_all(self):
        """Kill (-9) what still runs; remove the run folders of the prefixes."""
        for n in list(self.procs):
            self.kill(n, signal.SIGKILL)
        for p in self.prefixes:
            shutil.rmtree(rundir(p), ignore_errors=True)
