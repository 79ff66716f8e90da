#!/usr/bin/python3
"""Uploads through the VIP and the sinks that take them (frag.sh, pmtu.sh).

    uploads.py sink PORT            in a VM: read each connection to its end,
                                    answer "LENGTH SHA256\\n" (both families:
                                    it listens on ::, IPV6_V6ONLY off)
    uploads.py upload VIP N SIZE    on the client: N uploads of SIZE random
                                    bytes to VIP:80; prints each mismatch,
                                    then how many the sink saw whole
"""
import hashlib
import os
import socket
import sys


def sink(port):
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::", port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        h, n = hashlib.sha256(), 0
        while True:
            b = c.recv(65536)
            if not b:
                break
            h.update(b)
            n += len(b)
        c.sendall(b"%d %s\n" % (n, h.hexdigest().encode()))
        c.close()


def upload(vip, n, size):
    ok = 0
    for i in range(n):
        data = os.urandom(size)
        want = b"%d %s\n" % (size, hashlib.sha256(data).hexdigest().encode())
        with socket.create_connection((vip, 80), timeout=20) as s:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            got = b""
            while not got.endswith(b"\n"):
                b = s.recv(256)
                if not b:
                    break
                got += b
        ok += got == want
        if got != want:
            print("upload %d: sent %r, the sink saw %r" % (i, want.strip(), got.strip()))
    print(ok)


if __name__ == "__main__":
    if sys.argv[1] == "sink":
        sink(int(sys.argv[2]))
    else:
        upload(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
