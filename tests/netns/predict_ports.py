#!/usr/bin/python3
"""Which backend a mux configuration sends each client source port to, for
tests/netns/add_backend.sh: the test wants long transfers whose tuples the
*next* flow table (read from a config file, not yet loaded by the running
mux) sends to the new backend, so that only the connection table keeps them
on their backend across the reload.

  predict_ports.py --mux BIN --cfg FILE --prefix P --work DIR \
      --client 198.51.100.10 --vip 192.0.2.10 --vport 80 --ports 20000-20199 \
      --names vm11=10.1.1.11,vm12=10.1.1.12,...

runs BIN -c FILE (its EAL file prefix replaced by P) with --pcap over one
SYN per source port, reads the DIP of each IP-in-IP packet it sends and
prints "PORT NAME" per port. The mux's own code decides, not a model of it.
"""
import argparse
import os
import re
import subprocess
import sys

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap, wrpcap


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mux", required=True)
    ap.add_argument("--cfg", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--vip", required=True)
    ap.add_argument("--vport", type=int, default=80)
    ap.add_argument("--ports", default="20000-20199")
    ap.add_argument("--names", required=True)
    a = ap.parse_args()

    names = dict(reversed(kv.split("=")) for kv in a.names.split(","))
    lo, hi = (int(x) for x in a.ports.split("-"))
    ports = list(range(lo, hi + 1))
    os.makedirs(a.work, exist_ok=True)
    cfg = os.path.join(a.work, "predict.cfg")
    with open(a.cfg) as f:
        text = f.read()
    text, n = re.subn(r'--file-prefix=[^"]*', "--file-prefix=" + a.prefix, text)
    if n != 1:
        print(f"predict_ports: no single --file-prefix in {a.cfg}", file=sys.stderr)
        return 1
    with open(cfg, "w") as f:
        f.write(text)
    pin, pout = os.path.join(a.work, "predict-in.pcap"), os.path.join(a.work, "predict-out.pcap")
    wrpcap(pin, [Ether(src="02:00:00:00:c1:01", dst="02:00:00:00:c1:02")
                 / IP(src=a.client, dst=a.vip) / TCP(sport=p, dport=a.vport, flags="S", seq=1)
                 for p in ports])
    p = subprocess.run([a.mux, "-c", cfg, "-q", "--pcap", f"{pin}:{pout}"],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        print(f"predict_ports: {a.mux} exited {p.returncode}:\n{p.stderr}", file=sys.stderr)
        return 1
    got = {}
    for fr in rdpcap(pout):
        if IP in fr and fr[IP].proto == 4:
            inner = IP(bytes(fr[IP].payload))
            if TCP in inner:
                got[inner[TCP].sport] = names.get(inner.dst, inner.dst)
    for port in ports:
        print(port, got.get(port, "-"))
    return 0 if len(got) == len(ports) else 1


if __name__ == "__main__":
    sys.exit(main())
