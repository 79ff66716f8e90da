#!/usr/bin/python3
"""Traffic for the standalone lab, and a report of what came out.

  lab_traffic.py gen OUT.pcap     client traffic to the lab's VIPs
  lab_traffic.py report OUT.pcap  decode the mux's output: spread, a sample
"""
import collections
import random
import sys

from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, Raw, rdpcap, wrpcap

VIP = "192.0.2.10"
ROUTER = "02:00:00:00:00:fe"
MUX = "02:00:00:00:00:01"


def gen(path):
    rnd = random.Random(7)
    pkts = []
    # 2,000 TCP connections to VIP:80, three packets each, interleaved.
    flows = [(f"198.51.{rnd.randrange(100, 116)}.{rnd.randrange(1, 255)}",
              rnd.randrange(1024, 65535)) for _ in range(2000)]
    for step, flags in enumerate(("S", "A", "PA")):
        for src, sport in flows:
            p = Ether(src=ROUTER, dst=MUX) / IP(src=src, dst=VIP, flags="DF") / \
                TCP(sport=sport, dport=80, flags=flags, seq=1000 + step)
            if flags == "PA":
                p = p / Raw(b"GET / HTTP/1.1\r\nHost: vip\r\n\r\n")
            pkts.append(p)
    # 500 DNS-style UDP queries to VIP:53.
    for i in range(500):
        pkts.append(Ether(src=ROUTER, dst=MUX) /
                    IP(src=f"203.0.113.{i % 250 + 1}", dst=VIP) /
                    UDP(sport=20000 + i, dport=53) / Raw(b"\x12\x34query"))
    # What else reaches a mux on the internet.
    pkts.append(Ether(src=ROUTER, dst="ff:ff:ff:ff:ff:ff") /
                ARP(op=1, psrc="10.255.0.254", pdst="10.255.0.1", hwsrc=ROUTER))
    pkts.append(Ether(src=ROUTER, dst=MUX) / IP(src="198.51.100.7", dst=VIP) / ICMP(id=7, seq=1))
    pkts.append(Ether(src=ROUTER, dst=MUX) /
                IP(src="198.51.100.7", dst=VIP, flags="DF") / TCP(sport=4444, dport=80) /
                Raw(b"x" * 1470))
    pkts.append(Ether(src=ROUTER, dst=MUX) / IP(src="198.51.100.8", dst=VIP) / TCP(dport=22))
    pkts.append(Ether(src=ROUTER, dst=MUX) / IP(src="198.51.100.9", dst=VIP, ttl=1) / TCP(dport=80))
    pkts.append(Ether(src=ROUTER, dst=MUX) / IP(src="198.51.100.9", dst=VIP, frag=10) / Raw(b"y" * 16))
    bad = bytes(Ether(src=ROUTER, dst=MUX) / IP(src="198.51.100.9", dst=VIP) / TCP(dport=80))
    pkts.append(Ether(bad[:14 + 10] + b"\x00\x00" + bad[14 + 12:]))  # zeroed IP checksum
    wrpcap(path, pkts)
    print(f"lab: generated {len(pkts)} packets into {path}")


def report(path):
    out = rdpcap(path)
    spread = collections.Counter()
    replies = collections.Counter()
    sample = None
    for p in out:
        if IP in p and p[IP].proto == 4:
            inner = IP(bytes(p[IP].payload))
            l4 = inner[TCP] if TCP in inner else inner[UDP] if UDP in inner else None
            key = f"{inner.dst}:{l4.dport if l4 else '-'}/{'tcp' if TCP in inner else 'udp'}" \
                  f" via host {p[IP].dst}"
            spread[key] += 1
            if sample is None and TCP in inner:
                sample = p
        elif ARP in p:
            replies["arp reply"] += 1
        elif ICMP in p:
            replies[f"icmp type {p[ICMP].type} code {p[ICMP].code}"] += 1
    print(f"lab: {len(out)} packets left the mux")
    for k, v in sorted(spread.items()):
        print(f"  {v:6d}  encapsulated to {k}")
    for k, v in sorted(replies.items()):
        print(f"  {v:6d}  {k} (answered by the mux itself)")
    if sample is not None:
        print("lab: one encapsulated packet, decoded:")
        sample.show2()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gen", "report"):
        sys.exit(__doc__)
    (gen if sys.argv[1] == "gen" else report)(sys.argv[2])
