# SPDX-License-Identifier: BSD-3-Clause
"""config_errors: a bad configuration or command line stops the mux with a
non-zero status and a message an operator can act on.

Every row of gen.TABLE must fail with "FILE:LINE:" of the broken line and
the field's path on stderr. The good configuration it is derived from must
run. A missing config file, a malformed --pcap argument and an unreadable
--pcap input must fail with a message naming the problem.
"""
import os

import gen
from sluicetest import pcap as sp


def main():
    with sp.Case("config_errors") as case:
        empty_in, out = case.path("empty.pcap"), case.path("out.pcap")
        sp.write_pcap(empty_in, [])
        pcap = ["--pcap", "%s:%s" % (empty_in, out), "-q"]

        good = case.path("good.cfg")
        with open(good, "w") as f:
            f.write(gen.good())
        r = case.spawn([case.mux, "-c", good] + pcap)
        case.eq(r.rc, 0, "the good configuration runs (stderr: %s)" % r.stderr.strip())

        for i, row in enumerate(gen.TABLE):
            desc, _, _, want = row
            text, line = gen.bad(row)
            path = case.path("bad_%d.cfg" % i)
            with open(path, "w") as f:
                f.write(text)
            r = case.spawn([case.mux, "-c", path] + pcap)
            case.check(r.rc != 0, "%s: exit status 0", desc)
            case.check("%s:%d:" % (path, line) in r.stderr, "%s: stderr does not name %s:%d: %r",
                       desc, os.path.basename(path), line, r.stderr.strip())
            for w in want:
                case.check(w in r.stderr, "%s: stderr lacks %r: %r", desc, w, r.stderr.strip())

        missing = case.path("no-such.cfg")
        r = case.spawn([case.mux, "-c", missing] + pcap)
        case.check(r.rc != 0, "missing config: exit status 0")
        case.check(missing in r.stderr, "missing config: stderr does not name it: %r",
                   r.stderr.strip())

        for arg in ("in-only.pcap", ":out.pcap", "in.pcap:"):
            r = case.spawn([case.mux, "-c", good, "--pcap", arg, "-q"])
            case.check(r.rc != 0, "--pcap %s: exit status 0", arg)
            case.check("--pcap" in r.stderr, "--pcap %s: stderr does not say what is wrong: %r",
                       arg, r.stderr.strip())

        nofile = case.path("no-such.pcap")
        r = case.spawn([case.mux, "-c", good, "--pcap", "%s:%s" % (nofile, out), "-q"])
        case.check(r.rc != 0, "--pcap with a missing input: exit status 0")
        case.check(nofile in r.stderr, "--pcap with a missing input: stderr does not name it: %r",
                   r.stderr.strip())
        print("config_errors: %d bad configs rejected with file:line and field, missing file, "
              "3 bad --pcap arguments and a missing --pcap input rejected" % len(gen.TABLE))


if __name__ == "__main__":
    main()
