# SPDX-License-Identifier: BSD-3-Clause
"""What the process tests share: DPDK telemetry queries and a check list."""
import json
import socket


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


class Checks:
    """ok/FAIL lines; failed() says how many failed."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)
        return cond
