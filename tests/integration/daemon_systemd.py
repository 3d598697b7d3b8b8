#!/usr/bin/env python3
"""systemd integration (issue 17, point 5), without systemd: the daemon started as systemd
would start it. Socket activation — a listening socket passed as fd 3 with LISTEN_FDS=1 and
LISTEN_PID — is served (no `listen` configured) and connections made before the daemon is up
are answered once it is (nothing refused across a restart). The watchdog — WATCHDOG_USEC and a
NOTIFY_SOCKET — gets WATCHDOG=1 pings at about half the interval while the loops turn, after
READY=1. Usage: tests/integration/daemon_systemd.py BIN ROOT"""
import os
import socket
import subprocess
import sys
import tempfile
import time

from lanced_it import Checks, start

BIN, ROOT = sys.argv[1], sys.argv[2]
T = Checks("systemd")
check = T.check


def get(port, path):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    return data


# ---- socket activation ---------------------------------------------------------------------
ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.bind(("127.0.0.1", 0))
ls.listen(64)
port = ls.getsockname()[1]
early = socket.create_connection(("127.0.0.1", port))  # queued before the daemon exists
early.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")


def as_systemd():
    os.dup2(ls.fileno(), 3)
    os.environ["LISTEN_FDS"] = "1"
    os.environ["LISTEN_PID"] = str(os.getpid())


p, _, log = start(BIN, ROOT, "--workers", "1", listen=False, preexec_fn=as_systemd, pass_fds=(ls.fileno(),))
check("passed by systemd" in "".join(log), "socket activation: the daemon uses the socket it was given (no listen address)")
early.settimeout(5)
got = b""
try:
    while chunk := early.recv(65536):
        got += chunk
except OSError:
    pass
check(got.startswith(b"HTTP/1.1 200"), f"a connection made before the daemon started is answered ({got[:20]!r})")
r = get(port, "/files/sample.lance/rows?ids=1&columns=i64")
check(r.startswith(b"HTTP/1.1 200") and b'"num_rows":1' in r, "rows are served on the activated socket")
p.terminate()
p.wait()
# The socket outlives the daemon (systemd keeps it): a connection made now waits for the next.
try:
    late = socket.create_connection(("127.0.0.1", port), timeout=2)
    late.close()
    queued = True
except OSError:
    queued = False
check(queued, "after the daemon stopped, the socket still accepts connections (queued for the next start)")
ls.close()

# ---- watchdog --------------------------------------------------------------------------------
d = tempfile.mkdtemp()
ns_path = os.path.join(d, "notify.sock")
ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
ns.bind(ns_path)
ns.settimeout(0.2)
env = dict(os.environ, NOTIFY_SOCKET=ns_path, WATCHDOG_USEC="400000")
env.pop("WATCHDOG_PID", None)
p = subprocess.Popen([f"{BIN}/lanced", "--root", ROOT, "--listen", "127.0.0.1:0", "--workers", "2"], env=env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
msgs, t0 = [], time.time()
while time.time() - t0 < 2.5:
    try:
        msgs.append(ns.recv(4096).decode())
    except socket.timeout:
        pass
p.terminate()
p.wait()
ready = next((i for i, m in enumerate(msgs) if m.startswith("READY=1")), None)
pings = [m for m in msgs[(ready or 0):] if m == "WATCHDOG=1"]
check(ready is not None, "READY=1 sent (libsystemd sd_notify)")
# 400 ms interval: a ping every 200 ms, so ~10 in 2 s after start-up; allow a slow machine.
check(len(pings) >= 5, f"WATCHDOG=1 pinged while the loops turn: {len(pings)} pings in ~2 s at WatchdogSec=0.4s")
ns.close()
os.unlink(ns_path)
os.rmdir(d)
T.finish()
