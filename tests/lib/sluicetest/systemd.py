# SPDX-License-Identifier: BSD-3-Clause
"""What systemd sees of a daemon, without systemd: the NOTIFY_SOCKET of a
Type=notify unit, a datagram socket the test binds and names in the
daemon's environment.

    n = Notify(os.path.join(tmp, "notify"))
    env = dict(os.environ, NOTIFY_SOCKET=n.path)
    ...start the daemon with env...
    poll(lambda: n.has("READY=1") is not None)
"""
import socket


class Notify:
    """A NOTIFY_SOCKET: what the daemon sent, message by message."""

    def __init__(self, path):
        self.path = path
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(path)
        self.s.setblocking(False)
        self.got = []

    def read(self):
        """Every message so far."""
        while True:
            try:
                self.got.append(self.s.recv(4096).decode())
            except BlockingIOError:
                return self.got

    def has(self, state):
        """The index of the first message holding the line state, or None."""
        for i, m in enumerate(self.read()):
            if state in m.split("\n"):
                return i
        return None

    def close(self):
        self.s.close()
