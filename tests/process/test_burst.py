#!/usr/bin/python3
"""sluicetest.lab.http_burst makes each request a new TCP connection, also
against a server that keeps connections open.

scripts/lab.sh and the netns tests count how a burst of requests spreads
over the backends; the spread means something only if every request is a
new connection (a new five-tuple for the mux to hash). curl, given many
URLs, keeps one connection for them all where the server allows it: with
the VMs on nginx (LAB_HTTPD=nginx) every request of the lab's burst went to
one backend. Here a python http.server speaking HTTP/1.1 (keep-alive) in a
namespace of its own answers a burst of 20; the test first shows that curl
without "Connection: close" reuses the connection against it (the premise),
then that http_burst's 20 requests leave from 20 source ports.

Needs root (a namespace); exits 77 (skipped) without it.
"""
import os
import subprocess
import sys
import tempfile

from sluicetest.checks import Checks
from sluicetest.lab import http_burst
from sluicetest.netns import Namespace
from sluicetest.procs import poll

N = 20
PORT = 8080


def listening(ns):
    out = subprocess.run(["ip", "netns", "exec", ns.name, "ss", "-Hltn", f"sport = :{PORT}"],
                         capture_output=True, text=True).stdout
    return "LISTEN" in out


def main():
    if os.geteuid() != 0:
        print("needs root (a network namespace): skipped")
        return 77
    c = Checks()
    url = f"http://127.0.0.1:{PORT}/"
    with tempfile.TemporaryDirectory() as www, Namespace(f"sl-burst-{os.getpid()}") as ns:
        with open(os.path.join(www, "index.html"), "w") as f:
            f.write("served by vm99 (127.0.0.1)\n")
        srv = subprocess.Popen(ns.argv(sys.executable, "-m", "http.server", str(PORT),
                                       "--bind", "127.0.0.1", "--protocol", "HTTP/1.1",
                                       "--directory", www),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            c.require(poll(lambda: listening(ns), 10), "an HTTP/1.1 server listens in %s",
                      ns.name)
            # the premise: curl alone keeps one connection for several URLs
            plain = subprocess.run(ns.argv("curl", "-s", "--max-time", "5",
                                           "-w", "%{local_port}\\n",
                                           *(["-o", "/dev/null", url] * 3)),
                                   capture_output=True, text=True).stdout.split()
            c(len(plain) == 3 and len(set(plain)) == 1,
              "the server keeps the connection: curl sends 3 requests from one port "
              "without 'Connection: close' (ports %s)", plain)
            b = http_burst(ns.name, url, N)
            c.eq(b.counts, {"vm99": N}, "every request of the burst answered")
            c.eq(b.failures, [], "no request failed")
            ports = [p for _, p in b.ports]
            c.eq(len(set(ports)), N, "each request its own connection (distinct source ports)")
        finally:
            srv.terminate()
            srv.wait(timeout=10)
    return c.report("burst")


if __name__ == "__main__":
    sys.exit(main())
