# SPDX-License-Identifier: BSD-3-Clause
"""An etcd cluster on loopback for the HA tests (Debian's etcd-server 3.4):
N members on free ports, each with its data folder under the test's
temporary folder, logging to FOLDER/etcdI.log; and the few v3 gateway calls
the tests make to look at what the managers wrote (base64 keys, JSON)."""
import base64
import json
import os
import shutil
import urllib.request

from .procs import Daemons, free_port, poll

ETCD = shutil.which("etcd") or "/usr/bin/etcd"


def b64(s):
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def unb64(s):
    return base64.b64decode(s).decode(errors="replace")


class EtcdCluster(Daemons):
    def __init__(self, folder, n=3):
        super().__init__(folder)
        self.n = n
        self.client = [f"http://127.0.0.1:{free_port()}" for _ in range(n)]
        self.peer = [f"http://127.0.0.1:{free_port()}" for _ in range(n)]

    def name(self, i):
        return f"etcd{i}"

    def start_all(self):
        """Start every member; True once each answers /health."""
        initial = ",".join(f"{self.name(i)}={self.peer[i]}" for i in range(self.n))
        for i in range(self.n):
            self.start(self.name(i), [
                ETCD, "--name", self.name(i),
                "--data-dir", os.path.join(self.folder, self.name(i) + ".data"),
                "--listen-client-urls", self.client[i], "--advertise-client-urls", self.client[i],
                "--listen-peer-urls", self.peer[i], "--initial-advertise-peer-urls", self.peer[i],
                "--initial-cluster", initial, "--initial-cluster-state", "new",
                "--initial-cluster-token", f"sluice-test-{os.getpid()}"])
        return all(poll(lambda i=i: self.healthy(i), 30) for i in range(self.n))

    def healthy(self, i):
        try:
            with urllib.request.urlopen(self.client[i] + "/health", timeout=1) as r:
                return json.load(r).get("health") == "true"
        except OSError:
            return False

    def call(self, path, body, i=None):
        """POST body (JSON) to the gateway's path on member i (default: the
        first that answers); the answer's JSON."""
        for c in ([self.client[i]] if i is not None else self.client):
            try:
                req = urllib.request.Request(c + path, data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=2) as r:
                    return json.load(r)
            except OSError:
                continue
        raise OSError(f"no etcd member answers {path}")

    def put(self, key, value):
        self.call("/v3/kv/put", {"key": b64(key), "value": b64(value)})

    def get(self, key):
        """(value, create_revision) of key, or None."""
        kvs = self.call("/v3/kv/range", {"key": b64(key)}).get("kvs", [])
        if not kvs:
            return None
        return unb64(kvs[0].get("value", "")), int(kvs[0].get("create_revision", 0))
