# SPDX-License-Identifier: BSD-3-Clause
"""Network namespaces for the Python parts of the tests: a namespace made
and removed (Namespace), a raw socket on an interface inside one
(ns_socket), and a namespace's SNMP counters (snmp).

The netns suite builds its lab in shell (scripts/netns-lab.sh); the Python
checkers it runs use snmp(); tests/process/test_backend_state.py makes its
own namespace with Namespace and talks to the mux through ns_socket().
Every namespace a test makes carries the test's name and PID, and is gone
when the test ends, whichever way it ends (Namespace is a context manager;
its removal is best effort, as in a trap).
"""
import ctypes
import socket
import subprocess

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33
PACKET_OUTGOING = 4  # the sll_pkttype of a frame this host sent


def run(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


class Namespace:
    """A network namespace NAME with lo up and IPv6 off (no router
    solicitations, MLD or DAD in any count)."""

    def __init__(self, name):
        self.name = name
        self.made = False

    def create(self):
        run("ip", "netns", "add", self.name)
        self.made = True
        self.exec("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                  "net.ipv6.conf.default.disable_ipv6=1")
        self.ip("link", "set", "lo", "up")
        return self

    def __enter__(self):
        return self.create()

    def __exit__(self, *exc):
        self.delete()

    def ip(self, *args):
        """ip -n NAME ARGS..."""
        run("ip", "-n", self.name, *args)

    def exec(self, *argv):
        """Run argv inside the namespace, to its end."""
        run("ip", "netns", "exec", self.name, *argv)

    def argv(self, *argv):
        """argv as a command line that runs inside the namespace (ip netns
        exec execs it: the process keeps the pid Popen reports)."""
        return ["ip", "netns", "exec", self.name] + list(argv)

    def delete(self):
        if self.made:
            subprocess.run(["ip", "netns", "del", self.name], stderr=subprocess.DEVNULL)
            self.made = False


def ns_socket(ns, ifname, rcvbuf=64 << 20):
    """An AF_PACKET socket on ifname inside netns ns (this thread visits the
    namespace to make it; the socket stays there). Its receive buffer is
    forced to rcvbuf: no loss on our side."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/self/ns/net") as home, open("/var/run/netns/" + ns) as there:
        if libc.setns(there.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + ns)
        try:
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.bind((ifname, 0))
        finally:
            if libc.setns(home.fileno(), CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
    return s


def snmp6(ns):
    """/proc/net/snmp6 of a namespace as {"Ip6InReceives": n, ...} (empty
    when the namespace has IPv6 off)."""
    r = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp6"],
                       capture_output=True, text=True)
    return {k: int(v) for k, v in (ln.split() for ln in r.stdout.splitlines() if ln.strip())}


def snmp(ns):
    """/proc/net/snmp of a namespace as {"Ip": {...}, "Tcp": {...}, ...}."""
    text = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"],
                          check=True, capture_output=True, text=True).stdout
    out, lines = {}, text.splitlines()
    for head, vals in zip(lines[0::2], lines[1::2]):
        name, keys = head.split(":", 1)
        out[name] = dict(zip(keys.split(), (int(v) for v in vals.split(":", 1)[1].split())))
    return out
