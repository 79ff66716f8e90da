#!/usr/bin/python3
"""A real install: `meson install --destdir` of this build into a fresh
folder, then what an operator gets there is used as they would use it.

  - the daemons in sbin (sluicectl in bin), the systemd units, the example
    configurations, the man pages and the configuration folder the units
    read (/etc/sluice) are all there;
  - every installed binary runs: --help, and --check on the installed
    examples passes (the manager's example names certificates: they are
    made beside a copy of it with scripts/make-certs.sh);
  - every man page renders (man -l) and has no error for mandoc's lint;
  - every unit passes systemd-analyze verify, silently, once its paths
    point into the install folder (verify checks that the ExecStart=
    binaries exist, and man finds the Documentation= pages on MANPATH);
  - every folder a daemon writes by default (read from the sources: the
    manager's database and ctl socket, a member's last known good file, a
    mux's BIRD folder, DPDK's run folder) is writable under its unit's
    ProtectSystem=strict, and made before the sandbox is (this machine
    runs no systemd to start the units).
"""
import os
import re
import shutil
import subprocess
import tempfile

from sluicetest.checks import Checks
from sluicetest.procs import required_args

PREFIX_SBIN = ["sluice-mux", "sluice-agent", "sluice-manager"]
PREFIX_BIN = ["sluicectl"]
UNITS = ["sluice-mux@.service", "sluice-agent@.service", "sluice-manager.service"]
MAN = ["man8/sluice-mux.8", "man8/sluice-agent.8", "man8/sluice-manager.8", "man8/sluicectl.8",
       "man5/sluice.cfg.5"]
EXAMPLES = {"mux.cfg": "sluice-mux", "agent.cfg": "sluice-agent", "manager.cfg": "sluice-manager"}


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, **kw)


def meson_dirs(build):
    """prefix, sbindir, bindir, mandir, datadir of the build, from meson."""
    import json
    opts = json.loads(run(["meson", "introspect", "--buildoptions", build]).stdout)
    o = {x["name"]: x["value"] for x in opts}
    unitdir = o["systemdunitdir"] or os.path.join(o["prefix"], "lib/systemd/system")
    return {k: os.path.join(o["prefix"], o[k]) for k in ("sbindir", "bindir", "mandir",
                                                          "datadir")} | {
        "prefix": o["prefix"], "unitdir": unitdir,
        "confdir": os.path.join(o["prefix"], o["sysconfdir"], "sluice")}


SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def source_default(path, pattern):
    """The folder of a default path a source file names (pattern's group 1)."""
    with open(os.path.join(SRC, path)) as f:
        m = re.search(pattern, f.read())
    if m is None:
        raise SystemExit(f"test bug: {pattern!r} not found in {path}")
    return m.group(1)


def written_folders():
    """{unit: [(folder, what)]}: where each daemon writes by default."""
    state = source_default("proto/lb_member.h", r'#define LB_MEMBER_STATE_DIR "([^"]+)"')
    bird = source_default("mux/mux_route.c", r'"(/run/[^"%]+)/%s", prefix')
    db = os.path.dirname(source_default("manager/mgr_config.h",
                                        r'#define MGR_DEFAULT_DATABASE "([^"]+)"'))
    ctl = os.path.dirname(source_default("manager/mgr_config.h",
                                         r'#define MGR_DEFAULT_CTL "ipc://([^"]+)"'))
    dpdk = ("/run/dpdk", "DPDK's run folder (/var/run/dpdk for root)")
    return {"sluice-mux@.service": [dpdk, (state, "last known good table"),
                                    (bird, "BIRD's folder")],
            "sluice-agent@.service": [dpdk, (state, "last known good table")],
            "sluice-manager.service": [(db, "database"), (ctl, "ctl socket")]}


def unit_writes(text):
    """The folders a unit makes writable, and those it makes before its
    sandbox: {folder: made}."""
    out = {}
    for key, value in re.findall(r"^(\w+)=(.*)$", text, re.M):
        if key == "ReadWritePaths":
            for p in value.split():
                out[p.lstrip("-")] = out.get(p.lstrip("-"), False)
        elif key in ("StateDirectory", "RuntimeDirectory"):
            base = "/var/lib" if key == "StateDirectory" else "/run"
            for p in value.split():
                out[f"{base}/{p}"] = True
        elif key == "ExecStartPre" and value.startswith("+/bin/mkdir -p"):
            for p in value.split()[2:]:
                if p.startswith("/"):
                    out[p] = True
    return out


def main():
    args = required_args("build", "certs").parse_args()
    check = Checks()
    with tempfile.TemporaryDirectory() as dest:
        r = run(["meson", "install", "-C", args.build, "--destdir", dest, "--no-rebuild",
                 "--quiet"])
        check(r.returncode == 0, f"meson install --destdir: {r.returncode} {r.stderr[-300:]}")
        d = meson_dirs(args.build)
        at = lambda p: dest + p  # noqa: E731 (a path under the install folder)
        for b in PREFIX_SBIN:
            check(os.access(at(f"{d['sbindir']}/{b}"), os.X_OK), f"{d['sbindir']}/{b} installed")
        for b in PREFIX_BIN:
            check(os.access(at(f"{d['bindir']}/{b}"), os.X_OK), f"{d['bindir']}/{b} installed")
        check(os.path.isdir(at(d["confdir"])),
              f"{d['confdir']}, where the units read their files, is made")
        binary = {b: at(f"{d['sbindir']}/{b}") for b in PREFIX_SBIN}
        binary |= {b: at(f"{d['bindir']}/{b}") for b in PREFIX_BIN}
        for b, path in sorted(binary.items()):
            r = run([path, "--help"])
            check(r.returncode == 0 and r.stdout.startswith("usage:"),
                  f"installed {b} --help: exit {r.returncode}, {r.stdout[:40]!r}")

        ex = at(f"{d['datadir']}/doc/sluice/examples")
        with tempfile.TemporaryDirectory() as tmp:
            for name, daemon in sorted(EXAMPLES.items()):
                src = os.path.join(ex, name)
                if not check(os.path.exists(src), f"example {name} installed"):
                    continue
                # a copy, so the certificates the manager's example names can sit beside it
                cfg = os.path.join(tmp, name)
                shutil.copy(src, cfg)
                if daemon == "sluice-manager":
                    run([args.certs, os.path.join(tmp, "pki"), "sluice-manager"], check=True)
                r = run([binary[daemon], "--check", "-c", cfg])
                check(r.returncode == 0 and r.stdout == f"{cfg}: ok\n",
                      f"installed {daemon} --check on the installed {name}: "
                      f"{r.returncode} {(r.stdout + r.stderr).strip()[:300]}")

        mandir = at(d["mandir"])
        for page in MAN:
            path = os.path.join(mandir, page)
            if not check(os.path.exists(path), f"man page {page} installed"):
                continue
            r = run(["mandoc", "-T", "lint", "-W", "error", path])
            check(r.returncode == 0 and r.stdout == "",
                  f"mandoc -T lint finds no error in {page}: {r.stdout.strip()[:200]}")
            r = run(["man", "-l", path], env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING=""))
            name = os.path.basename(page).rsplit(".", 1)[0]
            check(r.returncode == 0 and "NAME" in r.stdout and f"{name} -" in r.stdout,
                  f"man -l renders {page} ({len(r.stdout.splitlines())} lines)")

        with tempfile.TemporaryDirectory() as units:
            for u in UNITS:
                src = at(f"{d['unitdir']}/{u}")
                if not check(os.path.exists(src), f"unit {d['unitdir']}/{u} installed"):
                    continue
                text = open(src).read()
                check(f"ExecStart={d['sbindir']}/" in text, f"{u} runs the installed binary")
                with open(os.path.join(units, u), "w") as f:
                    f.write(text.replace(f"{d['sbindir']}/", at(f"{d['sbindir']}/")))
                r = run(["systemd-analyze", "verify", os.path.join(units, u)],
                        env=dict(os.environ, MANPATH=mandir))
                out = (r.stdout + r.stderr).strip()
                check(r.returncode == 0 and out == "",
                      f"systemd-analyze verify {u}: exit {r.returncode} {out[:400]}")
                w = unit_writes(text)
                for folder, what in written_folders()[u]:
                    under = [p for p in w if folder == p or folder.startswith(p + "/")]
                    check(any(w[p] for p in under),
                          f"{u}: {folder} ({what}) is writable and made before start: "
                          f"{sorted(w.items())}")
    raise SystemExit(check.report("install"))


if __name__ == "__main__":
    main()
