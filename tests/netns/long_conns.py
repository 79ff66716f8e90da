#!/usr/bin/python3
"""Long-lived TCP connections through the VIP, for tests/netns/remove_backend.sh.

  long_conns.py serve --name vm11 --port 9090
        in a VM's namespace: every line received on a connection is answered
        with "<name> <line>", the connection stays open until the client
        closes it.
  long_conns.py client --host VIP --port 9090 -n 40 --dir DIR
        in the client's namespace: opens n connections, sends one line on
        each and reads the answer (which backend it landed on), writes
        DIR/round.0.json, then keeps them open. For k = 1, 2, ... it waits for
        DIR/go.k and does what it says:
          "exchange"  one more line on every connection of round 0 that was
                      answered: DIR/round.k.json, per connection "ok" with
                      the name that answered, or "reset", "eof", "timeout"
          "new M"     M new connections, one line each, then closed:
                      DIR/round.k.json lists the names that answered
        DIR/stop (or go.k waited for longer than --idle seconds) ends it.
Every round.k.json is written whole (rename), so a reader never sees half.

        --at-once sends every SYN at once (tests/netns/pop_credits.sh).

        --stats FILE: the kernel's count of established connections on the port,
        sampled every 2 ms, and the highest seen, as JSON (bench/credit_overshoot.sh).

  long_conns.py churn --host VIP --port 9091 --parallel 16 --seconds 10 --hold-ms 50
        in the client's namespace: each of --parallel threads connects,
        exchanges a line, holds the connection --hold-ms, closes, again until
        --seconds; prints {"ok": n, "refused": n, "other": n} as JSON.

  long_conns.py burst --host VIP --port 9090 -n 20
        in the client's namespace: n short connections, one line each, then
        closed; prints {name: how many it answered, ..., "failed": n} as JSON
        (tests/netns/steer.sh).

  long_conns.py judge --dir DIR --round k [--removed vm12] [--kind start|exchange|new]
        prints what round k shows and exits 1 if it breaks the rule of its kind:
        start     every connection answered (and, with --removed, at least
                  one of them on that backend: otherwise removing it tests
                  nothing)
        exchange  every connection of round 0 on a backend other than
                  --removed answered again by that same backend; none of
                  those on --removed was answered by it
        new       every new connection answered, none by --removed
"""
import argparse
import errno
import json
import os
import select
import socket
import socketserver
import sys
import threading
import time


def serve(a):
    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            try:
                for line in self.rfile:
                    self.wfile.write(f"{a.name} {line.decode(errors='replace').strip()}\n"
                                     .encode())
                    self.wfile.flush()
            except OSError:
                pass

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True
        request_queue_size = 128

    if a.stats:
        threading.Thread(target=sample_established, args=(a.port, a.stats),
                         daemon=True).start()
    with Server(("0.0.0.0", a.port), Handler) as srv:
        srv.serve_forever()


def established(port):
    """Established TCP connections on local port: the kernel's count (/proc/net/tcp)."""
    n = 0
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                n += 1
    return n


def sample_established(port, path):
    """Every 2 ms, the kernel's count; the highest seen written to path as JSON."""
    high, last = 0, 0.0
    while True:
        n = established(port)
        high = max(high, n)
        if time.monotonic() - last > 0.1:
            write_json(path, {"now": n, "max": high})
            last = time.monotonic()
        time.sleep(0.002)


def churn(a):
    """--parallel clients, each connecting, exchanging a line, holding, closing, for --seconds."""
    end = time.monotonic() + a.seconds
    lock = threading.Lock()
    out = {"ok": 0, "refused": 0, "other": 0}

    def one():
        while time.monotonic() < end:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(a.timeout)
            try:
                s.connect((a.host, a.port))
                s.sendall(b"c\n")
                got = s.recv(64)
                key = "ok" if got.endswith(b" c\n") else "other"
                time.sleep(a.hold_ms / 1000.0)
            except ConnectionRefusedError:
                key = "refused"
            except OSError:
                key = "other"
            finally:
                s.close()
            with lock:
                out[key] += 1
            if key != "ok":
                time.sleep(0.01)

    threads = [threading.Thread(target=one) for _ in range(a.parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["seconds"] = a.seconds
    print(json.dumps(out))
    return 0


def write_json(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.rename(path + ".tmp", path)


def exchange(socks, msg, timeout):
    """Send msg on every socket of socks {i: sock}; return {i: (status, name)}."""
    out, bufs, waiting = {}, {}, {}
    for i, s in socks.items():
        try:
            s.sendall(msg.encode() + b"\n")
            waiting[s.fileno()] = i
            bufs[i] = b""
        except ConnectionResetError:
            out[i] = ("reset", None)
        except OSError as e:
            out[i] = (errno.errorcode.get(e.errno, str(e)), None)
    end = time.monotonic() + timeout
    while waiting:
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select(list(waiting), [], [], left)
        for fd in r:
            i = waiting[fd]
            try:
                data = socks[i].recv(4096)
            except ConnectionResetError:
                out[i] = ("reset", None)
                del waiting[fd]
                continue
            except OSError as e:
                out[i] = (errno.errorcode.get(e.errno, str(e)), None)
                del waiting[fd]
                continue
            if not data:
                out[i] = ("eof", None)
                del waiting[fd]
                continue
            bufs[i] += data
            if b"\n" in bufs[i]:
                line = bufs[i].split(b"\n", 1)[0].decode(errors="replace").split()
                ok = len(line) == 2 and line[1] == msg
                out[i] = ("ok" if ok else "garbled", line[0] if line else None)
                del waiting[fd]
    for i in waiting.values():
        out[i] = ("timeout", None)
    return out


def connect_all(host, port, n, timeout):
    socks, failed = {}, {}
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect((host, port))
            s.setblocking(False)
            socks[i] = s
        except OSError as e:
            failed[i] = ("connect " + (errno.errorcode.get(e.errno, "") or str(e)), None)
            s.close()
    return socks, failed


def connect_at_once(host, port, n, timeout):
    """connect_all, but every SYN leaves at once: a burst of new connections."""
    pending, socks, failed = {}, {}, {}
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        rc = s.connect_ex((host, port))
        if rc not in (0, errno.EINPROGRESS):
            failed[i] = ("connect " + errno.errorcode.get(rc, str(rc)), None)
            s.close()
            continue
        pending[s.fileno()] = (i, s)
    end = time.monotonic() + timeout
    while pending and time.monotonic() < end:
        _, w, _ = select.select([], list(pending), [], end - time.monotonic())
        for fd in w:
            i, s = pending.pop(fd)
            rc = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if rc == 0:
                socks[i] = s
            else:
                failed[i] = ("connect " + errno.errorcode.get(rc, str(rc)), None)
                s.close()
    for i, s in pending.values():
        failed[i] = ("connect timeout", None)
        s.close()
    return socks, failed


def client(a):
    connect = connect_at_once if a.at_once else connect_all
    socks, res = connect(a.host, a.port, a.n, a.timeout)
    res.update(exchange(socks, "r0", a.timeout))
    conns = [{"i": i, "port": socks[i].getsockname()[1] if i in socks else None,
              "status": res[i][0], "backend": res[i][1]} for i in range(a.n)]
    write_json(os.path.join(a.dir, "round.0.json"), conns)
    live = {i: socks[i] for i in socks if res[i][0] == "ok"}
    k = 1
    while True:
        go = os.path.join(a.dir, f"go.{k}")
        end = time.monotonic() + a.idle
        while not os.path.exists(go) and not os.path.exists(os.path.join(a.dir, "stop")):
            if time.monotonic() > end:
                print(f"long_conns: no {go} within {a.idle} s", file=sys.stderr)
                return 1
            time.sleep(0.05)
        if not os.path.exists(go):
            break
        with open(go) as f:
            cmd = f.read().split()
        if cmd[:1] == ["exchange"]:
            r = exchange(live, f"r{k}", a.timeout)
            out = [{"i": i, "status": r[i][0], "backend": r[i][1]} for i in sorted(r)]
            for i, (st, _) in r.items():
                if st != "ok":  # gone: not part of later rounds
                    live.pop(i).close()
        elif cmd[:1] == ["new"]:
            ns, failed = connect_all(a.host, a.port, int(cmd[1]), a.timeout)
            r = exchange(ns, f"r{k}", a.timeout)
            r.update(failed)
            out = [{"i": i, "status": r[i][0], "backend": r[i][1]} for i in sorted(r)]
            for s in ns.values():
                s.close()
        else:
            print(f"long_conns: {go}: unknown command {cmd}", file=sys.stderr)
            return 1
        write_json(os.path.join(a.dir, f"round.{k}.json"), out)
        k += 1
    for s in live.values():
        s.close()
    return 0


def burst(a):
    socks, res = connect_all(a.host, a.port, a.n, a.timeout)
    res.update(exchange(socks, "b", a.timeout))
    for s in socks.values():
        s.close()
    out = {"failed": 0}
    for st, name in res.values():
        if st == "ok":
            out[name] = out.get(name, 0) + 1
        else:
            out["failed"] += 1
    print(json.dumps(out))
    return 0


def load(d, k):
    with open(os.path.join(d, f"round.{k}.json")) as f:
        return json.load(f)


def judge(a):
    cur = load(a.dir, a.round)
    tally = {}
    for c in cur:
        key = c["backend"] if c["status"] == "ok" else c["status"]
        tally[key] = tally.get(key, 0) + 1
    print(f"round {a.round} ({a.kind}): {len(cur)} connections: "
          + ", ".join(f"{k} {v}" for k, v in sorted(tally.items(), key=str)))
    bad = []
    if a.kind == "start":
        bad = [c for c in cur if c["status"] != "ok"]
        if a.removed and not any(c["backend"] == a.removed for c in cur):
            print(f"  no connection landed on {a.removed}")
            return 1
    elif a.kind == "new":
        bad = [c for c in cur if c["status"] != "ok" or c["backend"] == a.removed]
    else:
        first = {c["i"]: c["backend"] for c in load(a.dir, 0) if c["status"] == "ok"}
        on_removed = {"ok": 0}
        for c in cur:
            was = first.get(c["i"])
            if was == a.removed:
                st = c["status"] if c["status"] != "ok" else "answered by " + c["backend"]
                on_removed[st] = on_removed.get(st, 0) + 1
                if c["status"] == "ok" and c["backend"] == a.removed:
                    bad.append(c)
            elif c["status"] != "ok" or c["backend"] != was:
                bad.append(dict(c, was=was))
        del on_removed["ok"]
        if a.removed and on_removed:
            print(f"  the {sum(on_removed.values())} that were on {a.removed}: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(on_removed.items())))
    for c in bad[:10]:
        print(f"  bad: {c}")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--name", required=True)
    s.add_argument("--port", type=int, default=9090)
    s.add_argument("--stats", help="write the kernel's established count here, and its highest")
    ch = sub.add_parser("churn")
    ch.add_argument("--host", required=True)
    ch.add_argument("--port", type=int, default=9090)
    ch.add_argument("--parallel", type=int, default=16)
    ch.add_argument("--seconds", type=float, default=10.0)
    ch.add_argument("--hold-ms", type=float, default=50.0)
    ch.add_argument("--timeout", type=float, default=3.0)
    c = sub.add_parser("client")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, default=9090)
    c.add_argument("-n", type=int, default=40)
    c.add_argument("--dir", required=True)
    c.add_argument("--timeout", type=float, default=3.0)
    c.add_argument("--idle", type=float, default=60.0)
    c.add_argument("--at-once", action="store_true",
                   help="every SYN at once (a burst), not one connection after another")
    b = sub.add_parser("burst")
    b.add_argument("--host", required=True)
    b.add_argument("--port", type=int, default=9090)
    b.add_argument("-n", type=int, default=20)
    b.add_argument("--timeout", type=float, default=3.0)
    j = sub.add_parser("judge")
    j.add_argument("--dir", required=True)
    j.add_argument("--round", type=int, required=True)
    j.add_argument("--kind", choices=("start", "exchange", "new"), required=True)
    j.add_argument("--removed")
    a = ap.parse_args()
    return {"serve": serve, "client": client, "burst": burst, "judge": judge,
            "churn": churn}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
