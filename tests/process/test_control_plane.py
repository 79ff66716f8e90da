#!/usr/bin/python3
"""The control plane under attack: sluice-manager, one real sluice-mux, and
rawpeer (tests/process/rawpeer.c) sending what no honest peer sends.

    sluicectl --ipc-------------+           +-- mux1 (net_ring, managed, tls)
    rawpeer --ctl (ipc, tls) ---+ manager --+
    python ssl, sluicectl (tls)-+   :port   +-- rawpeer (member socket: tls,
                                            |   a certificate of the CA or none
                                            |   or another CA's)
    rawpeer --listen (plays the manager) <--- mux2 (dials the fake manager)

A version is committed first. Then each case attacks, and after it:
  (a) it was refused cleanly: the handshake or connection was dropped, or
      REFUSED came back naming both protocol versions, or the message was
      ignored and counted (status counters: malformed, refused, unexpected);
  (b) the manager still serves `sluicectl status`, quickly;
  (c) the committed version and digest are unchanged, and mux1 is in sync
      on it (the manager says so, and so does mux1's own telemetry);
  (d) a legitimate change still commits, and mux1 runs it.
Each case ends with a line `case NAME: held` or `case NAME: FAILED`.

A case listed in KNOWN_BUGS is a bug found by this test and reported, not
yet fixed: its checks print `xfail` instead of failing, and `XPASS` (a
failure) once the bug is gone, so that the entry is removed.
"""
import os
import random
import re
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import time

from sluicetest.config import TEST_SEED
from sluicetest.manager import ManagerLab, flow_table, manager_test_args, run_in_lab
from sluicetest.procs import free_port

VIP = "192.0.2.10"
DIP = "10.1.1.11:8080"

# Bugs this test found, while they are open (none now; "ctl-noread", a
# client that never reads its replies and so held the manager's one thread
# for 1 s per request, is fixed: such a client is dropped after 50 ms).
KNOWN_BUGS = set()


class Lab(ManagerLab):
    TAG = "cp"
    LOGS = ("manager", "mux1", "mux2", "mux3")

    def __init__(self, args, tmp, check):
        super().__init__(args, tmp, check)
        self.ctl_port, self.fake_port = free_port(), free_port()
        self.other = os.path.join(tmp, "other")
        # A member over TLS proves its id with a certificate naming it: the
        # peers that must be welcomed have their own.
        self.make_certs(self.pki, "sluice-manager", "mux1", "mux2", "peer1", "ops", "oop-peer",
                        "flood-peer", "late-peer", "lost-peer")
        self.make_certs(self.other, "peer9")
        self.ctl_tls_url = f"tls+tcp://127.0.0.1:{self.ctl_port}"
        self.write_manager_cfg(f"{tmp}/db/manager.db", ctl_tls=self.ctl_tls_url,
                               vote_timeout_ms=2000, batch_ms=100, hash_seed=TEST_SEED,
                               maglev_size=65537)

    def counters(self):
        return self.status()["counters"]

    def rawpeer_argv(self, steps, cert="peer1", pki=None, ident=None, ctl=False, url=None):
        """rawpeer's command line: to the members' socket (ctl: the ctl
        socket; or url), with pki's CERT certificate (None: none) over TLS."""
        argv = [self.args.rawpeer]
        pki = pki or self.pki
        url = url or (self.ctl_url if ctl else self.url)
        if url.startswith("tls+tcp://"):
            argv += ["--ca", f"{self.pki}/ca.pem"]
            if cert:
                argv += ["--cert", f"{pki}/{cert}.pem", "--key", f"{pki}/{cert}.key"]
        if ident:
            argv += ["--id", ident]
        if ctl:
            argv.append("--ctl")
        return argv + ["--quiet-status", url] + list(steps)

    def rawpeer(self, *steps, timeout=120, **how):
        """Run rawpeer to the end: (exit status, its output)."""
        r = subprocess.run(self.rawpeer_argv(steps, **how), capture_output=True, text=True,
                           timeout=timeout)
        return r.returncode, r.stdout + r.stderr

    def rawpeer_bg(self, name, *steps, **how):
        return self.start(name, self.rawpeer_argv(steps, **how))

    def ctl_tls(self, cert, *argv, pki=None, timeout=5):
        """sluicectl over ctl_tls with pki's CERT certificate."""
        pki = pki or self.pki
        return subprocess.run([self.args.ctl, "--manager", self.ctl_tls_url, "--ca",
                               f"{self.pki}/ca.pem", "--cert", f"{pki}/{cert}.pem", "--key",
                               f"{pki}/{cert}.key", "--timeout", str(timeout)] + list(argv),
                              capture_output=True, text=True)


def tls_handshake(port, ca, cert=None, key=None):
    """A plain TLS client (Python's ssl, OpenSSL): None if the handshake
    completed, else what the server's refusal looked like."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        try:
            with ctx.wrap_socket(s, server_hostname="sluice-manager") as t:
                # TLS 1.2: the client finishes after the server's Finished, so
                # a server that refused us has not sent it; read to be sure.
                t.sendall(b"\x00SP\x00\x00\x11\x00\x00")
                data = t.recv(8)
                return None if data else "closed after the handshake"
        except (ssl.SSLError, OSError) as e:
            return f"{type(e).__name__}: {e}"


def hello_reset(port):
    """A TLS ClientHello, then a reset while the server answers it (nng
    1.5.2 stops a listener when its write fails with EPIPE). False if the
    connection was refused or reset before the handshake (a listener
    between close and listen again)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
    except (ConnectionRefusedError, ConnectionResetError):
        return False  # the listening socket closed under a connect in its backlog
    s.setblocking(False)
    try:
        # wrap_socket() too: on a connection already reset it reads, and raises.
        t = ctx.wrap_socket(s, do_handshake_on_connect=False)
    except OSError:
        s.close()
        return False
    try:
        t.do_handshake()
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
        pass
    except (ssl.SSLError, OSError):
        t.close()  # closed by the other side (a listener closing for its restart)
        return False
    time.sleep(random.random() * 0.004)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    t.close()
    return True


def summary(out):
    """rawpeer's last line, `summary TYPE=N ... malformed=N closed=N`, as a dict."""
    for line in out.splitlines():
        if line.startswith("summary "):
            return {k: int(v) for k, v in (w.split("=") for w in line.split()[1:])}
    return {}


def delta(after, before):
    return {k: after[k] - before[k] for k in after}


class Cases:
    """Each case attacks; `held` then checks (b), (c), (d)."""

    def __init__(self, lab, check, prefix):
        self.lab, self.check, self.prefix = lab, check, prefix
        self.weight = 1
        self.base = None
        self.results = []

    def known(self, case, cond, what):
        """A check of a known, reported bug: xfail while it fails."""
        if case not in KNOWN_BUGS:
            return self.check(cond, what)
        if cond:
            return self.check(False, f"XPASS {what} (fixed? remove {case} from KNOWN_BUGS)")
        print(f"xfail {what}")
        return True

    def committed(self):
        st = self.lab.status()
        return {k: st["committed"][k] for k in ("version", "digest", "services", "backends")}

    def mux_on(self, c):
        """mux1 in sync on c, by the manager's account and its own."""
        m = self.lab.members()["mux1"]
        ft = flow_table(self.prefix)
        return (m["state"] == "in-sync" and m["connected"] and m["applied"] == c["version"]
                and ft["version"] == c["version"] and ft["services"] == c["services"]
                and ft["backends"] == c["backends"])

    def change(self, case):
        """(d): a legitimate change commits as the next version, mux1 runs it."""
        v = self.base["version"]
        self.weight = self.weight % 9 + 1
        r = self.lab.ctl("backend", "set", f"{VIP}:80", DIP, "--weight", str(self.weight))
        self.check(r.returncode == 0 and f"committed as version {v + 1}" in r.stdout,
                   f"{case}: a legitimate change still commits as version {v + 1}: "
                   f"{r.stdout.strip()} {r.stderr.strip()}")
        self.base = self.committed()
        self.check(self.lab.wait(lambda: self.mux_on(self.base)),
                   f"{case}: mux1 runs version {self.base['version']}")

    def held(self, case, base=None):
        """(b), (c), (d) after an attack."""
        base = base or self.base
        self.check(self.lab.procs["manager"].poll() is None, f"{case}: the manager is running")
        t0 = time.monotonic()
        r = self.lab.ctl("status", timeout=5)  # the CLI's bound, not a speed target
        dt = time.monotonic() - t0
        self.check(r.returncode == 0,
                   f"{case}: the manager serves status ({dt * 1000:.0f} ms)")
        c = self.committed()
        self.check(c == base, f"{case}: committed version {base['version']} and digest "
                              f"{base['digest'][:12]} unchanged: {c}")
        self.check(self.lab.wait(lambda: self.mux_on(base)),
                   f"{case}: mux1 in sync on version {base['version']} (manager and telemetry)")
        self.change(case)

    def rawpeer(self, *steps, **how):
        """lab.rawpeer(*steps, **how), and how the manager's counters moved
        meanwhile: (rc, out, delta)."""
        before = self.lab.counters()
        rc, out = self.lab.rawpeer(*steps, **how)
        return rc, out, delta(self.lab.counters(), before)

    def run(self, name, fn):
        n = len(self.check.failures)
        print(f"--- {name}")
        try:
            restarts = self.lab.counters()["listener_restarts"]
            fn(name)
            # The guard restarts a listener only when nng has stopped it.
            if name != "handshake-reset":
                now = self.lab.counters()["listener_restarts"]
                self.check(now == restarts, f"{name}: no listener restarted ({now - restarts})")
        except (subprocess.TimeoutExpired, OSError, ValueError, KeyError, TypeError) as e:
            self.check(False, f"{name}: {type(e).__name__}: {e}")
        ok = len(self.check.failures) == n
        print(f"case {name}: {'held' if ok else 'FAILED'}")
        self.results.append((name, ok))

    def refused_at_tls(self, case, cert, pki, who, why=None):
        """Both TLS listeners (members, ctl_tls) refuse a client with pki's
        CERT certificate (None: none) in the handshake (why: in its error),
        and rawpeer with it cannot connect."""
        lab = self.lab
        files = (f"{pki}/{cert}.pem", f"{pki}/{cert}.key") if cert else ()
        for what, port, url in (("members", lab.port, lab.url),
                                ("ctl_tls", lab.ctl_port, lab.ctl_tls_url)):
            e = tls_handshake(port, f"{lab.pki}/ca.pem", *files)
            # The server refuses the certificate after the client sent its
            # Finished (TLS 1.2) and closes with the client's last records
            # unread: its alert can then be lost to the close, and the
            # client sees the connection end inside the handshake instead
            # (seen once, in a CI run of stop 23). Either is a refusal in the handshake.
            lost = e is not None and ("EOF" in e or "Reset" in e) and "after the handshake" not in e
            self.check(e is not None and (why is None or why in e.upper() or lost),
                       f"{case}: {what}: a TLS client with {who} is refused in the handshake"
                       f"{f' ({why})' if why else ''}: {e}")
            rc, out = lab.rawpeer(f"hello:{cert or 'nocert'}:0", cert=cert, pki=pki, url=url,
                                  ctl=what == "ctl_tls")
            self.check(rc == 3 and "dial-failed" in out,
                       f"{case}: {what}: rawpeer with {who} cannot connect: "
                       f"{out.splitlines()[0]}")

    def kept_out(self, case, ident, before, ours):
        """After a peer refused in the TLS handshake: of the operator
        requests since the counters before, only the test's own (ours, the
        status reading the counters now among them) reached the manager,
        ident registered no member, and (b), (c), (d) hold."""
        got = self.lab.counters()["ctl_requests"] - before["ctl_requests"]
        self.check(got == ours, f"{case}: operator requests that reached the manager: {got}, "
                                f"the test's own {ours}")
        self.check(ident not in self.lab.members(), f"{case}: no member registered")
        self.held(case)

    # ---- the cases ----

    def no_cert(self, case):
        lab = self.lab
        before = lab.counters()
        self.refused_at_tls(case, None, lab.pki, "no certificate")
        self.kept_out(case, "nocert", before, 1)

    def foreign_ca(self, case):
        lab = self.lab
        before = lab.counters()
        self.refused_at_tls(case, "peer9", lab.other, "another CA's certificate", "UNKNOWN_CA")
        r = lab.ctl_tls("peer9", "vip", "add", "192.0.2.99:80", pki=lab.other)
        self.check(r.returncode == 3, f"{case}: sluicectl with it: exit 3: {r.stderr.strip()}")
        r = lab.ctl_tls("ops", "status")
        self.check(r.returncode == 0, f"{case}: (control) sluicectl with the CA's 'ops' "
                                      f"certificate is served over ctl_tls")
        self.kept_out(case, "peer9", before, 2)  # the other: the 'ops' status above

    def garbage(self, case):
        lab = self.lab
        rc, out, d = self.rawpeer("garbage:1:20", "garbage:2:20", "garbage:100:20",
                                  "garbage:4096:5", "garbage:1000000:1", "recv:300",
                                  ident="garbage-peer")
        bad = sum(int(m) for m in re.findall(r"sent garbage .*: (\d+) malformed", out))
        proto = sum(int(m) for m in re.findall(r"(\d+) another protocol", out))
        print(f"{case}: rawpeer's own decoder: {bad} malformed, {proto} another protocol")
        self.check(rc == 0 and bad + proto == 66, f"{case}: 66 garbage messages sent")
        self.check(d["malformed"] == bad and d["refused"] == proto,
                   f"{case}: the manager counted {d['malformed']} malformed, "
                   f"{d['refused']} refused (expected {bad}, {proto})")
        self.check(summary(out).get("REFUSED") == proto and summary(out).get("closed") == 0,
                   f"{case}: REFUSED for each undecodable-version one, the connection kept")
        self.check("garbage-peer" not in lab.members(), f"{case}: no member registered")
        self.held(case)

    def truncated(self, case):
        lab = self.lab
        rc, out, d = self.rawpeer("truncate", "recv:300", ident="trunc-peer")
        m = re.search(r"sent truncate (\d+) prefixes of a (\d+)-byte HELLO, (\d+) undecodable",
                      out)
        self.check(rc == 0 and m and m.group(1) == m.group(3),
                   f"{case}: every prefix of a HELLO sent: {m and m.group(0)}")
        self.check(m and d["malformed"] == int(m.group(3)) and d["refused"] == 0,
                   f"{case}: each counted malformed ({d['malformed']})")
        self.check("trunc-peer" not in lab.members(),
                   f"{case}: no truncated HELLO registered a member")
        self.held(case)

    def oversize(self, case):
        # The control first: 63 MB, under the limit, is read and reaches the
        # decoder; the REFUSED to what follows it shows the manager has read
        # it. First, because the 65 MB drop below sets off the listener
        # guard's check (an "other" error), and judged while nng reads 63 MB
        # under ASan on a loaded machine, a live listener's accept can come
        # later than the guard waits (docs/manager.md, "The listener
        # guard"). This case is about the sizes, not that race.
        rc, out, d = self.rawpeer("oversize:63", "future:2", "expect:REFUSED:60000",
                                  ident="big-peer")
        self.check(rc == 0 and d["malformed"] == 1 and d["refused"] == 1,
                   f"{case}: (control) 63 MB, under the limit, is read and counted "
                   f"malformed: {d['malformed']}")
        t0 = time.monotonic()
        rc, out, d = self.rawpeer("oversize:65", "expect-close:20000", ident="big-peer")
        self.check(rc == 0 and "expect ok: the connection dropped" in out,
                   f"{case}: a 65 MB message: nng drops the connection "
                   f"({time.monotonic() - t0:.1f} s)")
        self.check(d["malformed"] == 0, f"{case}: it never reached the decoder")
        self.held(case)

    def future(self, case):
        rc, out, d = self.rawpeer("future:2", "expect:REFUSED:5000", "future:99",
                                  "expect:REFUSED:5000", ident="future-peer")
        texts = re.findall(r'recv REFUSED .*text="([^"]*)"', out)
        self.check(rc == 0 and len(texts) == 2, f"{case}: both HELLOs answered REFUSED")
        self.check(texts[:1] == ["peer speaks protocol 2, this build speaks 1"] and
                   texts[1:] == ["peer speaks protocol 99, this build speaks 1"],
                   f"{case}: the text names both versions: {texts}")
        self.check(d["refused"] == 2, f"{case}: counted refused")
        self.check("future-peer" not in self.lab.members(), f"{case}: no member registered")
        self.held(case)

    def out_of_place(self, case):
        lab = self.lab
        v = self.base["version"]
        rc, out, d = self.rawpeer(
            # before any hello
            f"vote:{v + 1}:-", f"commit:{v + 1}:-", f"prepare:{v + 1}",
            # a member (fenced: it says it runs version 0)
            "hello:oop-peer:0", "expect:WELCOME:5000",
            f"vote:{v + 7}:-", f"vote:{v + 1}:-:no", f"vote:{v}:{self.base['digest']}",
            f"commit:{v + 1}:-", f"prepare:{v + 1}", f"abort:{v + 1}:-", f"welcome:{v}",
            "recv:500", ident="oop-peer", cert="oop-peer")
        self.check(rc == 0, f"{case}: rawpeer ran its script")
        self.check(d["unexpected"] == 7, f"{case}: 3 messages before hello and 4 a member "
                                         f"never sends counted unexpected: {d['unexpected']}")
        m = lab.members().get("oop-peer", {})
        self.check(m.get("bad_messages") == 4 and m.get("state") == "fenced",
                   f"{case}: the peer is a fenced member with 4 bad messages: "
                   f"{m.get('state')} {m.get('bad_messages')}")
        self.check(d["aborted"] == 0,
                   f"{case}: votes for versions not in flight (yes and no) aborted nothing")
        self.held(case)

    def snapshot_flood(self, case):
        lab = self.lab
        t0 = time.monotonic()
        rc, out = lab.rawpeer("hello:flood-peer:0", "expect:WELCOME:5000", "snapreq:10000",
                              "recv:2500", ident="flood-peer", cert="flood-peer")
        s = summary(out)
        self.check(rc == 0 and "sent 10000 SNAPSHOT_REQUEST" in out,
                   f"{case}: 10000 snapshot requests sent")
        # one per second at most (and one for the WELCOME's resync)
        limit = 2 + int(time.monotonic() - t0)
        self.check(1 <= s.get("SNAPSHOT_CHUNK", 0) <= limit,
                   f"{case}: {s.get('SNAPSHOT_CHUNK')} snapshots sent (at most {limit})")
        self.held(case)

    def lost_commit(self, case):
        """A member that voted yes and then never ran the COMMIT (a raw
        peer runs what it says it runs) reports the version before, between
        rounds: a vote timeout (2 s here) after its first such report, the
        manager fences it and sends it a snapshot of the committed version
        (before, it stayed in sync a version behind until the next round)."""
        lab = self.lab
        v, digest = self.base["version"], self.base["digest"]
        fake = lab.rawpeer_bg(case, "autovote", f"hello:lost-peer:{v}:{digest}",
                              "expect:WELCOME:5000", "recv:4000", f"status:{v}", "recv:2500",
                              f"status:{v}", "expect:SNAPSHOT_CHUNK:5000", "recv:500",
                              ident="lost-peer", cert="lost-peer")
        self.check(lab.wait(lambda: lab.members().get("lost-peer", {}).get("state") ==
                            "in-sync", timeout=10),
                   f"{case}: the peer says hello at version {v}: in sync")
        self.change(case)  # the peer votes yes to it, and never applies it
        rc = fake.wait(30)
        lab.procs.pop(case, None)
        out, log = lab.log(case), lab.log("manager")
        self.check("sent VOTE" in out and "recv COMMIT" in out,
                   f"{case}: the peer voted for version {v + 1} and was sent its COMMIT")
        self.check(rc == 0 and "expect ok: SNAPSHOT_CHUNK" in out,
                   f"{case}: reporting version {v} for 2.5 s, it gets a snapshot "
                   f"(rawpeer {rc}): {out[-800:]}")
        fenced = re.findall(r"fenced lost-peer: (reports version \d+ for \d+ ms, committed is "
                            r"\d+)", log)
        self.check(len(fenced) == 1 and fenced[0].startswith(f"reports version {v} for ") and
                   fenced[0].endswith(f"committed is {v + 1}"),
                   f"{case}: the manager says why it fenced it: {fenced}")
        self.held(case)

    def fake_manager(self, case):
        """mux2 dials rawpeer, which plays the manager."""
        lab = self.lab
        url = f"tls+tcp://127.0.0.1:{lab.fake_port}"
        argv = [lab.args.rawpeer, "--listen", "--ca", f"{lab.pki}/ca.pem", "--cert",
                f"{lab.pki}/sluice-manager.pem", "--key", f"{lab.pki}/sluice-manager.key",
                "--id", "manager", "--quiet-status", url,
                "expect:HELLO:30000", "welcome:0", "snapshot:5", "expect:HELLO:5000",
                # the right base: a yes (the member works), then ABORT
                "prepare:6:5", "expect:VOTE:5000", "abort:6",
                # 8 on base 7: not current+1
                "prepare:8:7", "expect:VOTE:5000", "expect:SNAPSHOT_REQUEST:5000",
                # 11 on base 5: not base+1, refused by the decoder
                "prepare:11:5", "expect-none:VOTE:1500",
                # COMMIT of the aborted 6: never prepared
                "commit:6", "expect:SNAPSHOT_REQUEST:5000"]
        fake = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        prefix = lab.start_mux("mux2", lab.fake_port)
        try:
            out, _ = fake.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            fake.kill()
            out, _ = fake.communicate()
        print("\n".join("  fake: " + ln for ln in out.splitlines() if not ln.startswith("step")))
        self.check(fake.returncode == 0, f"{case}: every expectation of the fake manager held")
        votes = re.findall(r"recv VOTE version=(\d+) .*flag=(\d) .*text=\"([^\"]*)\"", out)
        self.check(len(votes) == 2 and votes[0][:2] == ("6", "1"),
                   f"{case}: (control) PREPARE 6 on base 5 gets a yes: {votes[:1]}")
        self.check(len(votes) == 2 and votes[1][:2] == ("8", "0") and
                   "mux2 runs version 5, not the base 7" in votes[1][2],
                   f"{case}: PREPARE 8 on base 7 gets a no naming the versions: {votes[1:]}")
        self.check(re.search(r"recv SNAPSHOT_REQUEST version=5", out) is not None,
                   f"{case}: and mux2 asks for a snapshot from version 5")
        self.check(lab.wait(lambda: "message refused: prepare 11 on base 5" in lab.log("mux2"),
                            timeout=5),
                   f"{case}: PREPARE 11 on base 5 is refused by mux2's decoder, logged")
        ft = flow_table(prefix)
        self.check(ft["version"] == 5 and ft["services"] == 1,
                   f"{case}: mux2 stays on version 5 with its 1 service: {ft}")
        self.check(lab.kill("mux2") == 0, f"{case}: mux2 exits 0 on SIGTERM")
        self.held(case)

    def ctl_flood(self, case):
        lab = self.lab
        before = lab.counters()
        argv = [lab.args.rawpeer, "--ctl", lab.ctl_url, "ctl-status:10000",
                "ctl-malformed:1000", "ctl-parallel:10000:8"]
        flood = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
        took, failed = [], 0
        while flood.poll() is None:
            t0 = time.monotonic()
            r = lab.ctl("status")
            took.append(time.monotonic() - t0)
            failed += r.returncode != 0
            time.sleep(0.1)
        out = flood.stdout.read()
        flood.stdout.close()
        print("\n".join("  " + ln for ln in out.splitlines() if ln.startswith("ctl-")))
        self.check(flood.returncode == 0, f"{case}: rawpeer ran its flood")
        # A loaded 2-core machine runs the flood, 8 clients and sluicectl (under
        # ASan too): the point is that the operator is answered at all, and
        # soon; before Found 1 one client held the only thread for minutes.
        took.sort()
        med = took[len(took) // 2] if took else 99
        self.check(took and failed == 0 and med < 1.0 and took[-1] < 5.0,
                   f"{case}: {len(took)} sluicectl status during the flood, {failed} failed, "
                   f"the median {med * 1000:.0f} ms, the slowest "
                   f"{(took[-1] if took else 99) * 1000:.0f} ms")

        def tally(what):
            m = re.search(what + r" requests=(\d+) ok=(\d+) failed=(\d+) malformed=(\d+) "
                          r"refused=(\d+) other=(\d+) noreply=(\d+)", out)
            return [int(x) for x in m.groups()] if m else [0] * 7

        st, mal, par = tally("ctl-status"), tally("ctl-malformed"), tally("ctl-parallel")
        self.check(st[:2] == [10000, 10000] and par[:2] == [10000, 10000],
                   f"{case}: 10000 sequential and 10000 from 8 clients at once: all answered")
        self.check(mal[0] == 1000 and mal[3] + mal[4] == 1000,
                   f"{case}: 1000 malformed requests: {mal[3]} 'malformed request', "
                   f"{mal[4]} REFUSED (another protocol), none else")
        d = delta(lab.counters(), before)
        self.check(d["malformed"] == mal[3] and d["refused"] == mal[4] and
                   d["ctl_requests"] >= 20000,
                   f"{case}: counted: malformed +{d['malformed']}, refused +{d['refused']}, "
                   f"ctl_requests +{d['ctl_requests']}")
        self.held(case)

    def ctl_noread(self, case):
        """A ctl client that sends requests and never reads the replies."""
        lab = self.lab
        lab.rawpeer_bg("noread", "ctl-noread:2000", "sleep:120000", ctl=True)
        self.check(lab.wait(lambda: "ctl-noread sent=" in lab.log("noread"), timeout=30),
                   f"{case}: rawpeer queued its requests: " +
                   "".join(ln for ln in lab.log("noread").splitlines()
                           if ln.startswith("ctl-noread sent=")))
        # blocked, the manager would answer only once the client is gone
        # (120 s); the bound is the CLI's timeout, not a speed target
        t0 = time.monotonic()
        r = lab.ctl("status", timeout=5)
        dt = time.monotonic() - t0
        self.known(case, r.returncode == 0,
                   f"{case}: status while it is connected ({dt * 1000:.0f} ms)")
        v = self.base["version"]
        self.weight = self.weight % 9 + 1
        t0 = time.monotonic()
        r = lab.ctl("backend", "set", f"{VIP}:80", DIP, "--weight", str(self.weight), timeout=5)
        self.known(case, r.returncode == 0,
                   f"{case}: a change commits while it is connected "
                   f"({time.monotonic() - t0:.1f} s): {r.stdout.strip()} {r.stderr.strip()}")
        lab.kill("noread", signal.SIGKILL)
        # Once it is gone, the change commits and everything is as before.
        self.check(lab.wait(lambda: self.committed()["version"] == v + 1, timeout=30),
                   f"{case}: once the client is gone, the change commits as version {v + 1}")
        self.base = self.committed()
        self.held(case)

    def handshake_reset(self, case):
        """Connections that reset in the middle of their handshake, on the
        members' port, on ctl_tls and (connect, close) on the ctl socket.
        nng 1.5.2 stops a listener for good on one of them; the manager's
        guard must see it and listen again (docs/manager.md)."""
        lab = self.lab
        before = lab.counters()
        restarts = before["listener_restarts"]
        for what, port in (("members", lab.port), ("ctl_tls", lab.ctl_port)):
            n = 0
            while n < 3000 and lab.counters()["listener_restarts"] == restarts:
                for _ in range(50):
                    hello_reset(port)
                n += 50
            now = lab.counters()["listener_restarts"]
            print(f"{case}: {what}: {n} handshakes reset; the listener was restarted "
                  f"{now - restarts} times")
            restarts = now
        path = lab.ctl_url[len("ipc://"):]
        for _ in range(500):
            with socket.socket(socket.AF_UNIX) as u:
                try:
                    u.connect(path)
                except (ConnectionRefusedError, FileNotFoundError):
                    pass  # between close and listen again
        # The guard restarts a stopped listener in one cycle of about 10 s
        # (a check, 4 s; again 1 s later, 4 s). A client that gives up in
        # the handshake just as the new listener starts stops it again
        # (nng 1.5.2), and that costs another cycle: seen once in about 25
        # rounds of this case in a loop, and in stop 23's CI at 21 s
        # (docs/reliability.md, Found 13). 60 s is three cycles.
        ok = lab.wait(lambda: lab.ctl("status", timeout=2).returncode == 0, timeout=60)
        self.check(ok, f"{case}: sluicectl is served on the ctl socket after 500 connections "
                       f"that closed at once")

        def joins():
            rc, _ = lab.rawpeer("hello:late-peer:0", "expect:WELCOME:2000", ident="late-peer",
                                cert="late-peer")
            return rc == 0

        t0 = time.monotonic()
        self.check(lab.wait(joins, timeout=30),
                   f"{case}: a new member is welcomed ({time.monotonic() - t0:.1f} s)")
        t0 = time.monotonic()
        self.check(lab.wait(lambda: lab.ctl_tls("ops", "status", timeout=2).returncode == 0,
                            timeout=30),
            f"{case}: sluicectl over ctl_tls is served ({time.monotonic() - t0:.1f} s)")
        d = delta(lab.counters(), before)
        print(f"{case}: listener restarts in all: {d['listener_restarts']}")
        self.held(case)

    def impersonate(self, case, frozen):
        """A peer with a certificate of the CA (peer1's) says hello as mux1
        at the committed version and digest, ready to vote yes to every
        PREPARE. The manager challenges it to prove the id mux1 with its
        key; peer1's certificate does not name mux1, so it is refused and
        never votes. Frozen: the real mux1 is stopped (SIGSTOP) meanwhile, so
        a change can only commit without it (fenced), never by the impostor."""
        lab = self.lab
        v, digest = self.base["version"], self.base["digest"]
        before = lab.counters()
        takeovers = lab.log("manager").count("member mux1: hello on a new connection")
        mux = lab.procs["mux1"]
        if frozen:
            mux.send_signal(signal.SIGSTOP)
        try:
            fake = lab.rawpeer_bg(case, "autovote", f"hello:mux1:{v}:{digest}",
                                  "expect:REFUSED:5000", "recv:3000", ident="mux1")
            self.check(lab.wait(lambda: "recv REFUSED" in lab.log(case), timeout=10),
                       f"{case}: the impostor is refused")
            texts = re.findall(r'recv REFUSED .*text="([^"]*)"', lab.log(case))
            self.check(texts[:1] == ["hello as mux1 refused: the certificate names peer1, "
                                     "not mux1"],
                       f"{case}: the refusal names both: {texts[:1]}")
            self.weight = self.weight % 9 + 1
            r = lab.ctl("backend", "set", f"{VIP}:80", DIP, "--weight", str(self.weight))
            self.check(lab.wait(lambda: self.committed()["version"] == v + 1, timeout=30),
                       f"{case}: a change made meanwhile commits as {v + 1}: "
                       f"{r.stdout.strip()} {r.stderr.strip()}")
            fake.wait(30)
            lab.procs.pop(case, None)
        finally:
            if frozen:
                mux.send_signal(signal.SIGCONT)
        out = lab.log(case)
        self.check("sent HELLO id=mux1 with a proof" in out and "recv WELCOME" not in out and
                   "sent VOTE" not in out,
                   f"{case}: the impostor answered the challenge, was never welcomed, never voted")
        d = delta(lab.counters(), before)
        self.check(d["unproven"] == 1 and d["challenges"] >= 1,
                   f"{case}: counted: challenges +{d['challenges']}, unproven +{d['unproven']}")
        if not frozen:
            self.check(lab.log("manager").count("member mux1: hello on a new connection") ==
                       takeovers, f"{case}: the real mux1 kept its connection")
        self.base = self.committed()
        self.check(self.base["version"] == v + 1, f"{case}: committed version {v + 1}")
        self.check(lab.wait(lambda: self.mux_on(self.base)),
                   f"{case}: the real mux1 ends in sync on version {v + 1} (its telemetry too)")
        self.held(case)

    def operator_name(self, case):
        """Over ctl_tls an operator proves the name on its certificate (its
        CN): the manager challenges the first request of each connection,
        sluicectl answers with a signature, and history names the change by
        the certificate. A proof for a name the certificate does not carry
        is refused, whatever the client says it is."""
        lab = self.lab
        v = self.base["version"]
        before = lab.counters()
        self.weight = self.weight % 9 + 1
        r = lab.ctl_tls("ops", "backend", "set", f"{VIP}:80", DIP, "--weight", str(self.weight),
                        timeout=10)
        self.check(r.returncode == 0 and f"committed as version {v + 1}" in r.stdout,
                   f"{case}: a change over ctl_tls with the 'ops' certificate commits as "
                   f"{v + 1}: {r.stdout.strip()} {r.stderr.strip()}")
        h = lab.ctl("history", "--limit", "1")
        self.check("(certificate ops)" in h.stdout,
                   f"{case}: history names the operator by its certificate: "
                   f"{h.stdout.strip()[:200]}")
        rc, out = lab.rawpeer("ctl-as:ops", ctl=True, url=lab.ctl_tls_url, cert="peer1")
        self.check("ctl-as ops: not served: refused: operator ops: the certificate names "
                   "peer1, not ops" in out,
                   f"{case}: peer1's certificate proving the name ops is refused: "
                   f"{out.strip()[-200:]}")
        rc, out = lab.rawpeer("ctl-as:peer1", ctl=True, url=lab.ctl_tls_url, cert="peer1")
        self.check("ctl-as peer1: served" in out,
                   f"{case}: (control) the same client proving peer1 is served: "
                   f"{out.strip()[-200:]}")
        d = delta(lab.counters(), before)
        self.check(d["challenges"] >= 3 and d["unproven"] == 1,
                   f"{case}: counted: challenges +{d['challenges']}, unproven +{d['unproven']}")
        self.base = self.committed()
        self.check(lab.wait(lambda: self.mux_on(self.base)),
                   f"{case}: mux1 runs version {self.base['version']}")
        self.held(case)

    def wrong_name(self, case):
        """A real mux whose certificate names another member: id mux3 with
        mux2's certificate and key. It is challenged, proves with mux2's key,
        is refused with the reason, and asks again only after 30 s."""
        lab = self.lab
        before = lab.counters()
        for ext in ("pem", "key"):
            shutil.copy(f"{lab.pki}/mux2.{ext}", f"{lab.pki}/mux3.{ext}")
        lab.start_mux("mux3")
        why = "hello as mux3 refused: the certificate names mux2, not mux3"
        self.check(lab.wait(lambda: why in lab.log("mux3"), timeout=20),
                   f"{case}: mux3 logs the refusal and why")
        self.check(why in lab.log("manager"), f"{case}: so does the manager")
        time.sleep(3)
        d = delta(lab.counters(), before)
        self.check(d["unproven"] == 1,
                   f"{case}: one refusal in the first 3 s (it waits 30 s before asking "
                   f"again): unproven +{d['unproven']}")
        self.check("mux3" not in lab.members(), f"{case}: mux3 is not a member")
        self.check(lab.kill("mux3") == 0, f"{case}: mux3 exits 0 on SIGTERM")
        self.held(case)

    def impersonation(self, case):
        self.impersonate(case, False)

    def impersonation_frozen(self, case):
        self.impersonate(case, True)


def main():
    ap = manager_test_args("rawpeer")
    ap.add_argument("--only", help="comma-separated case names")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("skip: needs root (DPDK runtime folders under /var/run/dpdk)")
        return 77
    check, results = run_in_lab(Lab, args, run, args.only)
    print("cases: " + " ".join(f"{n}={'held' if ok else 'FAILED'}" for n, ok in results))
    return check.report("control_plane")


def run(lab, check, only):
    lab.start("manager", [lab.args.manager, "-c", lab.manager_cfg])
    check(lab.wait(lambda: lab.ctl("status").returncode == 0),
          "the manager starts and answers sluicectl")
    prefix = lab.start_mux("mux1", lab.port)
    check(lab.wait(lambda: lab.members()["mux1"]["state"] == "in-sync"),
          "mux1 registers over mutual TLS")
    r1 = lab.ctl("vip", "add", f"{VIP}:80")
    r2 = lab.ctl("backend", "add", f"{VIP}:80", DIP, "--host", "10.0.1.1")
    check(r1.returncode == 0 and r2.returncode == 0 and "committed as version 2" in r2.stdout,
          f"versions 1 and 2 commit: {r2.stdout.strip()} {r2.stderr.strip()}")
    cases = Cases(lab, check, prefix)
    cases.base = cases.committed()
    check(lab.wait(lambda: cases.mux_on(cases.base)), "mux1 runs version 2")
    # Quiet: the guard checks each of its 3 listeners once per 10 s, and once
    # more when a connection closes (nng counts it as the listener's error):
    # here the sluicectl that reads p0. Its own checks must not set it off.
    p0 = lab.counters()["listener_checks"]
    time.sleep(5)
    p1 = lab.counters()["listener_checks"]
    check(p1 >= 3 and p1 - p0 <= 4,
          f"the listener guard checked {p1} times since start, {p1 - p0} in a quiet 5 s")
    if check.failures:
        return []
    todo = [("no-cert", cases.no_cert), ("foreign-ca", cases.foreign_ca),
            ("garbage", cases.garbage), ("truncated", cases.truncated),
            ("oversize", cases.oversize), ("future-protocol", cases.future),
            ("out-of-place", cases.out_of_place), ("snapshot-flood", cases.snapshot_flood),
            ("lost-commit", cases.lost_commit),
            ("fake-manager", cases.fake_manager), ("ctl-flood", cases.ctl_flood),
            ("ctl-noread", cases.ctl_noread), ("handshake-reset", cases.handshake_reset),
            ("impersonation", cases.impersonation), ("wrong-name", cases.wrong_name),
            ("operator-name", cases.operator_name),
            ("impersonation-frozen", cases.impersonation_frozen)]
    for name, fn in todo:
        if only is None or name in only.split(","):
            cases.run(name, fn)
    check(lab.kill("mux1") == 0, "mux1 exits 0 on SIGTERM")
    check(lab.kill("manager") == 0, "the manager exits 0 on SIGTERM")
    return cases.results


if __name__ == "__main__":
    raise SystemExit(main())
