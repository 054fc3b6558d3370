#!/usr/bin/env python3
# Measures /healthz while N slowloris connections and 4 connections pushing 128 MiB bodies are
# held against a running dispatcher (docs/security.md): probes answered, their latency, and
# the dispatcher's RSS and threads.
#   tests/security/health_under_attack.py PORT DISPATCHER_PID N
import socket, sys, time, threading
port, pid, slow = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def status():
    d = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status"))
    return int(d["VmRSS"].split()[0]) // 1024, int(d["Threads"])
def probe():
    t = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=15)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = s.recv(100); s.close()
        ok = data.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return ok, time.monotonic() - t
print("before: RSS %d MiB, threads %d" % status())
stop = False
def slowloris():
    while not stop:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while not stop:
                s.sendall(b"X"); time.sleep(0.2)
        except OSError:
            time.sleep(0.05)
def large():
    while not stop:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /api/queues/x/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 134217728\r\n\r\n")
            chunk = b"x" * 65536
            for _ in range(2048):
                if stop: break
                s.sendall(chunk)
        except OSError:
            time.sleep(0.05)
threads = [threading.Thread(target=slowloris) for _ in range(slow)] + [threading.Thread(target=large) for _ in range(4)]
for t in threads: t.start()
time.sleep(1)
lat, oks, peak = [], 0, (0, 0)
end = time.monotonic() + 15
while time.monotonic() < end:
    ok, l = probe(); oks += ok; lat.append(l)
    peak = max(peak, status()); time.sleep(0.1)
stop = True
for t in threads: t.join()
lat.sort()
print("attack: %d slowloris + 4 x 128 MiB POST for 15 s; probes answered %d of %d; latency median %.1f ms, max %.1f ms"
      % (slow, oks, len(lat), 1000 * lat[len(lat) // 2], 1000 * lat[-1]))
print("peak during: RSS %d MiB, threads %d" % peak)
print("after: RSS %d MiB, threads %d" % status())
