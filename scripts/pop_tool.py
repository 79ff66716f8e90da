#!/usr/bin/python3
"""Failover timing in the PoP lab (scripts/netns-pop.sh): run it inside the
router's namespace (ip netns exec ROUTER pop_tool.py ...).

  pop_tool.py failover --vip V --pid P --signal KILL|STOP|CONT|TERM --want "A B"
          [--victim-if IF --survivor-if IF --survivor-ta T] [--timeout S]
        Send the signal to P, then time (a) until the kernel's route for V
        has exactly the next hops A B ("" = no route), from `ip monitor
        route` events, and, with the three optional interfaces, (b) until
        the first packet of a flow that went through the victim before the
        signal leaves the survivor encapsulated (IP-in-IP from T): the
        moved flow forwarded by the other mux. Prints one JSON object:
        {"signal", "route_ms", "moved_ms", "flows", "route"}; exits 1 if
        the route did not converge within the timeout.
  pop_tool.py nexthops --vip V
        The route's next hops, sorted, one line.
  pop_tool.py ports --vip V --if IF [--if IF ...] [--ms MS] [--enough N]
                    [--ports LO-HI] [--ready FILE]
        Which client source ports send TCP to V through each interface
        (a mux's bridge port: the mux ECMP gives them to), sniffed for MS
        ms or until N distinct ports (of LO-HI, when given) were seen and
        1 s more: one JSON object {IF: [ports]}. A port a flooding bridge showed on two
        interfaces goes to the one that saw most of its packets. FILE is
        created once the interfaces are sniffed: start the connections
        after it, and their SYNs are seen.

The flows of the victim are learnt by sniffing its bridge port (--victim-if,
the router's side of its data veth) for --learn-ms before the signal: every
TCP source port of a client packet to the VIP sent there.
"""
import argparse
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time

ETH_P_ALL = 0x0003


def nexthops(vip):
    out = subprocess.run(["ip", "-j", "route", "show", vip + "/32"],
                         capture_output=True, text=True, check=True).stdout
    routes = json.loads(out or "[]")
    hops = []
    for r in routes:
        if "gateway" in r:
            hops.append(r["gateway"])
        for nh in r.get("nexthops", []):
            if "gateway" in nh:
                hops.append(nh["gateway"])
    return sorted(hops, key=lambda a: socket.inet_aton(a))


def sniffer(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    s.setblocking(False)
    return s


def ipv4(frame):
    """The IPv4 packet of an untagged Ethernet frame, or None."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return None
    return frame[14:]


def tcp_sport(ip, dst=None):
    """(src, sport) of a TCP packet (optionally only to dst), or None."""
    if len(ip) < 20 or ip[9] != 6:
        return None
    if dst is not None and ip[16:20] != dst:
        return None
    ihl = (ip[0] & 15) * 4
    if len(ip) < ihl + 4:
        return None
    return ip[12:16], struct.unpack("!H", ip[ihl:ihl + 2])[0]


def learn_ports(socks, vip, ms, enough, settle_ms=1000, ports=None):
    """Which socket of socks (socket -> name) each client port's packets
    to the VIP pass: {name: sorted ports}. Sniffs for ms, or until enough
    distinct ports were seen and settle_ms more; ports (a range), when
    given, are the only ones counted, so that no other connection's
    packets make up the number early. A bridge floods a frame
    whose destination it has not learned yet to every port, so a port can
    show on two sockets at first: it goes to the one that saw the most of
    its packets."""
    count, end = {}, time.monotonic() + ms / 1000
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if enough is not None and len(count) >= enough:
            end = min(end, now + settle_ms / 1000)
            enough = None
        for sock in select.select(list(socks), [], [], end - now)[0]:
            while True:
                try:
                    frame = sock.recv(65535)
                except BlockingIOError:
                    break
                ip = ipv4(frame)
                t = ip and tcp_sport(ip, vip)
                if t and (ports is None or t[1] in ports):
                    per = count.setdefault(t[1], {})
                    per[socks[sock]] = per.get(socks[sock], 0) + 1
    seen = {n: [] for n in socks.values()}
    for port, per in sorted(count.items()):
        seen[max(per, key=per.get)].append(port)
    return seen


def learn(sock, vip, ms):
    """Client source ports of TCP packets to the VIP seen on sock for ms."""
    return set(learn_ports({sock: 0}, vip, ms, None)[0])


def moved_packet(frame, ta, flows):
    """An IP-in-IP packet from the survivor ta carrying one of the flows."""
    outer = ipv4(frame)
    if outer is None or outer[9] != 4 or outer[12:16] != ta:
        return False
    inner = outer[(outer[0] & 15) * 4:]
    t = tcp_sport(inner)
    return bool(t) and t[1] in flows


def failover(a):
    want = sorted(a.want.split(), key=lambda x: socket.inet_aton(x))
    vip = socket.inet_aton(a.vip)
    flows, surv = set(), None
    if a.victim_if:
        vs = sniffer(a.victim_if)
        flows = learn(vs, vip, a.learn_ms)
        vs.close()
        surv = sniffer(a.survivor_if)
        ta = socket.inet_aton(a.survivor_ta)
    mon = subprocess.Popen(["ip", "-o", "monitor", "route"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, bufsize=0)
    time.sleep(0.05)  # the monitor subscribed
    t0 = time.monotonic()
    os.kill(a.pid, getattr(signal, "SIG" + a.signal))
    route_ms = moved_ms = None
    hops = nexthops(a.vip)
    if hops == want:
        route_ms = 0.0
    last_check = t0
    end = t0 + a.timeout
    while time.monotonic() < end:
        if route_ms is not None and (surv is None or moved_ms is not None or not flows):
            break
        rd = [mon.stdout] + ([surv] if surv is not None and moved_ms is None else [])
        ready = select.select(rd, [], [], 0.05)[0]
        now = time.monotonic()
        if mon.stdout in ready:
            os.read(mon.stdout.fileno(), 65536)
        if route_ms is None and (mon.stdout in ready or now - last_check > 0.1):
            last_check = now
            hops = nexthops(a.vip)
            if hops == want:
                route_ms = (now - t0) * 1000
        if surv is not None and surv in ready:
            while moved_ms is None:
                try:
                    frame = surv.recv(65535)
                except BlockingIOError:
                    break
                if moved_packet(frame, ta, flows):
                    moved_ms = (time.monotonic() - t0) * 1000
    mon.kill()
    mon.wait()
    out = {"signal": a.signal, "route_ms": None if route_ms is None else round(route_ms, 1),
           "moved_ms": None if moved_ms is None else round(moved_ms, 1),
           "flows": len(flows), "route": " ".join(hops)}
    print(json.dumps(out))
    return 0 if route_ms is not None else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("failover")
    f.add_argument("--vip", required=True)
    f.add_argument("--pid", type=int, required=True)
    f.add_argument("--signal", required=True, choices=["KILL", "STOP", "CONT", "TERM"])
    f.add_argument("--want", required=True, help='next hops expected after, e.g. "10.255.0.2"')
    f.add_argument("--victim-if")
    f.add_argument("--survivor-if")
    f.add_argument("--survivor-ta")
    f.add_argument("--learn-ms", type=int, default=500)
    f.add_argument("--timeout", type=float, default=10.0)
    n = sub.add_parser("nexthops")
    n.add_argument("--vip", required=True)
    o = sub.add_parser("ports")
    o.add_argument("--vip", required=True)
    o.add_argument("--if", dest="ifs", action="append", required=True)
    o.add_argument("--ms", type=int, default=1000)
    o.add_argument("--enough", type=int, help="stop once this many ports were seen")
    o.add_argument("--ports", help="LO-HI: count only client ports in this range")
    o.add_argument("--ready", help="a file created once the interfaces are sniffed")
    a = p.parse_args()
    if a.cmd == "nexthops":
        print(" ".join(nexthops(a.vip)))
        return 0
    if a.cmd == "ports":
        lo, _, hi = (a.ports or "").partition("-")
        socks = {sniffer(i): i for i in a.ifs}
        if a.ready:
            open(a.ready, "w").close()
        seen = learn_ports(socks, socket.inet_aton(a.vip), a.ms, a.enough,
                           ports=range(int(lo), int(hi) + 1) if a.ports else None)
        print(json.dumps(seen))
        return 0
    if bool(a.victim_if) != bool(a.survivor_if) or bool(a.survivor_if) != bool(a.survivor_ta):
        p.error("--victim-if, --survivor-if and --survivor-ta go together")
    return failover(a)


if __name__ == "__main__":
    sys.exit(main())
