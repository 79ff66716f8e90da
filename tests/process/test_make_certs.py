#!/usr/bin/python3
"""scripts/make-certs.sh as an operator runs it over time:

  - a CA and a pair per name; the pairs verify against the CA, keys are
    mode 0600; run again, everything is kept;
  - the CA's key taken offline (ca.pem alone): a run with the names that
    exist checks and keeps them (exit 0); a run with a new name stops at
    it (exit 1) naming ca.key, makes nothing, and the CA is untouched;
  - the key back: the new name is made, signed by the same CA;
  - ca.key without ca.pem, and a pair half there: refused (exit 1), with
    nothing remade and no advice to remove the CA;
  - a name that is no DNS name: exit 2.
"""
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile

from sluicetest.checks import Checks
from sluicetest.procs import required_args


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    args = required_args("certs").parse_args()
    check = Checks()

    def certs(d, *names):
        return subprocess.run([args.certs, d] + list(names), capture_output=True, text=True,
                              timeout=60)

    def verifies(d, name):
        return subprocess.run(["openssl", "verify", "-CAfile", f"{d}/ca.pem", f"{d}/{name}.pem"],
                              capture_output=True).returncode == 0

    with tempfile.TemporaryDirectory() as tmp:
        d, vault = os.path.join(tmp, "pki"), os.path.join(tmp, "vault")
        os.mkdir(vault)
        r = certs(d, "sluice-manager", "mux1")
        check(r.returncode == 0 and verifies(d, "sluice-manager") and verifies(d, "mux1"),
              f"a CA and two pairs that verify against it: {r.returncode} {r.stderr.strip()}")
        check(all(stat.S_IMODE(os.stat(f"{d}/{n}.key").st_mode) == 0o600
                  for n in ("ca", "sluice-manager", "mux1")), "every key is mode 0600")
        ca = digest(f"{d}/ca.pem")
        r = certs(d, "sluice-manager", "mux1")
        check(r.returncode == 0 and r.stdout.count("kept") == 3, f"run again: all kept: {r.stdout}")

        # the CA's key offline
        shutil.move(f"{d}/ca.key", f"{vault}/ca.key")
        r = certs(d, "sluice-manager", "mux1")
        check(r.returncode == 0 and "kept" in r.stdout,
              f"ca.key offline, names that exist: checked and kept (exit {r.returncode}): "
              f"{(r.stdout + r.stderr).strip()}")
        r = certs(d, "mux1", "mux2")
        check(r.returncode == 1 and "ca.key" in r.stderr and "remove" not in r.stderr,
              f"ca.key offline, a new name: stops naming ca.key (exit {r.returncode}): "
              f"{r.stderr.strip()}")
        check(not os.path.exists(f"{d}/mux2.pem") and not os.path.exists(f"{d}/mux2.key") and
              digest(f"{d}/ca.pem") == ca, "nothing made, the CA untouched")

        # the key back
        shutil.move(f"{vault}/ca.key", f"{d}/ca.key")
        r = certs(d, "mux2")
        check(r.returncode == 0 and verifies(d, "mux2") and digest(f"{d}/ca.pem") == ca,
              f"the key back: mux2 made by the same CA: {r.returncode} {r.stderr.strip()}")

        # ca.key without ca.pem
        shutil.move(f"{d}/ca.pem", f"{vault}/ca.pem")
        r = certs(d, "mux1")
        check(r.returncode == 1 and "ca.pem" in r.stderr and "remove" not in r.stderr and
              not os.path.exists(f"{d}/ca.pem"),
              f"ca.key without ca.pem: refused, no new CA: {r.stderr.strip()}")
        shutil.move(f"{vault}/ca.pem", f"{d}/ca.pem")

        # a pair half there
        os.remove(f"{d}/mux2.key")
        r = certs(d, "mux2")
        check(r.returncode == 1 and "mux2" in r.stderr and not os.path.exists(f"{d}/mux2.key"),
              f"a pair half there: refused, not remade: {r.stderr.strip()}")

        r = certs(d, "not a name")
        check(r.returncode == 2 and "not a usable name" in r.stderr,
              f"a name that is no DNS name: exit 2: {r.stderr.strip()}")
    raise SystemExit(check.report("make_certs"))


if __name__ == "__main__":
    main()
