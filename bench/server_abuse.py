#!/usr/bin/env python3
"""Attack benchmark of `perfgate serve` (not a test): how fast other clients are served while
attackers run, and how much memory the server needs meanwhile.

Phases, each SECONDS long, with one well-behaved client (127.0.0.1) timing GET /healthz and GET /
back to back, and one ingest writer POSTing a stored run (a duplicate: 200) in a loop:
  baseline   no attacker
  slowloris  SLOW connections from 127.0.0.2-9, each sending a header line every 3-9 s and
             reconnecting when the server closes it
  bigbody    4 clients from 127.0.0.10-13 streaming unauthenticated chunked POSTs of BIG_MIB
             (256) MiB each to /api/v1/runs, reconnecting when refused
Each phase reports the client's p50/p99/max latency, its failures (no answer within 10 s), the
writer's posts and p99, and the server's resident memory (VmHWM grows only; VmRSS at the end).

Usage: bench/server_abuse.py [--build build] [--peer OTHER_PERFGATE] [--seconds 20] [--slow 64]
                            [--big-mib 256]
--peer runs the same phases against another perfgate binary (e.g. an older build) in the same run.
Needs the perfgate and web_seed targets built.
"""
import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def request(port, raw, timeout=10.0, source="127.0.0.1"):
    """Sends raw bytes, returns (status, seconds) or (0, seconds) on no answer."""
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                      source_address=(source, 0)) as s:
            s.sendall(raw)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
            # Read the rest (Connection: close) so the timing covers the whole response.
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
    except (OSError, ValueError):
        status = 0
    return status, time.monotonic() - t0


def pct(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def mem_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Phase:
    def __init__(self):
        self.stop = threading.Event()
        self.lat, self.fail = [], 0
        self.posts, self.post_lat, self.post_fail = 0, [], 0


def victim(port, ph):
    reqs = [b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]
    i = 0
    while not ph.stop.is_set():
        st, dt = request(port, reqs[i % 2])
        i += 1
        if st == 200:
            ph.lat.append(dt)
        else:
            ph.fail += 1


def writer(port, token, doc, ph):
    head = (f"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(doc)}\r\n\r\n").encode()
    while not ph.stop.is_set():
        st, dt = request(port, head + doc, timeout=30)
        if st in (200, 201):
            ph.posts += 1
            ph.post_lat.append(dt)
        else:
            ph.post_fail += 1


def slowloris(port, source, ph):
    rng = random.Random(source)
    while not ph.stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            n = 0
            while not ph.stop.wait(rng.uniform(3, 9)):
                n += 1
                s.sendall(f"X-Slow-{n}: {n}\r\n".encode())
            s.close()
        except OSError:
            ph.stop.wait(0.2)  # closed or refused by the server: come back


def bigbody(port, source, ph, mib):
    chunk = b"100000\r\n" + b"x" * 0x100000 + b"\r\n"
    head = (b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: application/json\r\n\r\n")
    while not ph.stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5,
                                          source_address=(source, 0)) as s:
                s.sendall(head)
                for _ in range(mib):
                    if ph.stop.is_set():
                        break
                    s.sendall(chunk)
                s.sendall(b"0\r\n\r\n")
                s.recv(4096)
        except OSError:
            ph.stop.wait(0.05)


def run_phase(name, port, pid, token, doc, seconds, attackers):
    ph = Phase()
    threads = [threading.Thread(target=victim, args=(port, ph)),
               threading.Thread(target=writer, args=(port, token, doc, ph))]
    threads += [threading.Thread(target=fn, args=(port, src, ph, *extra))
                for fn, src, *extra in attackers]
    for t in threads[2:]:
        t.daemon = True
        t.start()
    time.sleep(min(5, seconds / 4))  # let the attackers settle in before measuring
    for t in threads[:2]:
        t.start()
    time.sleep(seconds)
    ph.stop.set()
    for t in threads[:2]:
        t.join()
    ms = lambda v: f"{v * 1000:.1f}"
    print(f"| {name} | {len(ph.lat)} | {ph.fail} | {ms(pct(ph.lat, .5))} | {ms(pct(ph.lat, .99))} | "
          f"{ms(max(ph.lat) if ph.lat else float('nan'))} | {ph.posts} ({ph.post_fail} failed) | "
          f"{ms(pct(ph.post_lat, .99))} | {mem_kib(pid, 'VmHWM') // 1024} | "
          f"{mem_kib(pid, 'VmRSS') // 1024} |", flush=True)
    for t in threads[2:]:
        t.join(timeout=15)


def bench(binary, db, token_file, token, doc, args):
    port = free_port()
    log = open(os.path.join(os.path.dirname(db), "serve.log"), "w")
    p = subprocess.Popen([binary, "serve", "--db", db, "--port", str(port), "--quiet",
                          "--token-file", token_file], stderr=log)
    try:
        for _ in range(600):
            if request(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                       timeout=1)[0] == 200:
                break
            time.sleep(0.1)
        print(f"\n{binary} ({subprocess.run([binary, '--version'], capture_output=True, text=True).stdout.strip()})\n")
        print("| phase | client requests | client failures | p50 ms | p99 ms | max ms | "
              "ingest posts | ingest p99 ms | VmHWM MiB | VmRSS MiB |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        run_phase("baseline", port, p.pid, token, doc, args.seconds, [])
        slow = [(slowloris, f"127.0.0.{2 + i % 8}") for i in range(args.slow)]
        run_phase(f"slowloris ({args.slow} conns)", port, p.pid, token, doc, args.seconds, slow)
        big = [(bigbody, f"127.0.0.{10 + i}", args.big_mib) for i in range(4)]
        run_phase(f"bigbody (4 x {args.big_mib} MiB chunked, no token)", port, p.pid, token, doc, args.seconds,
                  big)
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            print("(server did not stop within 10 s of SIGTERM; killed)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--peer", help="another perfgate binary to run the same phases against")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--slow", type=int, default=64, help="slowloris connections")
    ap.add_argument("--big-mib", type=int, default=256, help="size of each big unauthenticated body")
    args = ap.parse_args()
    perfgate = os.path.join(args.build, "perfgate")
    seed = os.path.join(args.build, "tests", "web", "web_seed")
    for b in (perfgate, seed):
        if not os.access(b, os.X_OK):
            sys.exit(f"server_abuse: {b} not built (cmake --build build --target perfgate web_seed)")
    with tempfile.TemporaryDirectory(prefix="perfgate-abuse-") as work:
        db = os.path.join(work, "abuse.db")
        subprocess.run([seed, "--db", db, "--commits", "40"], check=True, stdout=subprocess.DEVNULL)
        token = "abuse-bench-token-0123456789abcdef"
        token_file = os.path.join(work, "token")
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, token.encode())
        os.close(fd)
        doc = subprocess.run([perfgate, "export", "--db", db, "--format", "json", "--run", "1"],
                             capture_output=True, check=True).stdout
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
        print(f"# perfgate serve under attack, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
        print(f"machine: {os.cpu_count()} cores, {cpu}, load average "
              f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
        print(f"command: {' '.join(sys.argv)}; {args.seconds:g} s per phase; ingest document "
              f"{len(doc)} bytes")
        for binary in [perfgate] + ([args.peer] if args.peer else []):
            bench(binary, db, token_file, token, doc, args)


if __name__ == "__main__":
    main()
