#!/usr/bin/env python3
"""systemd integration (issue 17, point 5), without systemd: the daemon started as systemd
would start it. Socket activation — a listening socket passed as fd 3 with LISTEN_FDS=1 and
LISTEN_PID — is served (no `listen` configured) and connections made before the daemon is up
are answered once it is (nothing refused across a restart). The watchdog — WATCHDOG_USEC and a
NOTIFY_SOCKET — gets WATCHDOG=1 pings at about half the interval while the loops turn, after
READY=1. Usage: tests/integration/daemon_systemd.py BIN ROOT"""
import os
import re
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
# ---- journald priorities and the request log ----------------------------------------------
# stderr is the journal when $JOURNAL_STREAM names its device:inode (systemd.exec(5)): each line
# then carries its syslog priority, "<3>" for an error, so `journalctl -p err` finds errors.
# Anywhere else lines are plain. Request log lines carry an id and byte counts.
d = tempfile.mkdtemp()


def stderr_env(err, journal):
    """The environment with $JOURNAL_STREAM naming the file err (journal) or unset."""
    st = os.fstat(err.fileno())
    env = dict(os.environ)
    env.pop("JOURNAL_STREAM", None)
    if journal:
        env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
    return env


for journal in (True, False):
    path = os.path.join(d, "stderr-%d" % journal)
    with open(path, "w") as err:
        env = stderr_env(err, journal)
        p = subprocess.Popen([f"{BIN}/lanced", "--root", ROOT, "--listen", "127.0.0.1:0", "--workers", "1",
                              "--request-log", "on", "--config", "/nonexistent/lanced.conf"], env=env,
                             stdout=subprocess.DEVNULL, stderr=err)
        p.wait(timeout=10)  # a missing config file: an error, then exit
    first = open(path).read().splitlines()
    if journal:
        check(any(l.startswith("<3>lanced error: ") for l in first),
              f"stderr is the journal: an error line begins <3> ({first[:2]})")
    else:
        check(first and not any(l.startswith("<") for l in first), f"stderr is a file: no priority prefixes ({first[:2]})")
    path = os.path.join(d, "log-%d" % journal)
    with open(path, "w") as err:
        env = stderr_env(err, journal)
        ls = socket.socket()
        ls.bind(("127.0.0.1", 0))
        port = ls.getsockname()[1]
        ls.close()
        p = subprocess.Popen([f"{BIN}/lanced", "--root", ROOT, "--listen", f"127.0.0.1:{port}", "--workers", "1",
                              "--request-log", "on"], env=env, stdout=subprocess.DEVNULL, stderr=err)
        for _ in range(100):
            try:
                get(port, "/healthz")
                break
            except OSError:
                time.sleep(0.05)
        body = get(port, "/files/sample.lance/rows?ids=1,2&columns=i64")
        p.terminate()
        p.wait()
    lines = open(path).read().splitlines()
    reqs = [l for l in lines if "/files/sample.lance/rows" in l]
    want = "<6>lanced info: " if journal else "lanced info: "
    sent = len(body.split(b"\r\n\r\n", 1)[1])
    check(len(reqs) == 1 and reqs[0].startswith(want) and " rows=2 " in reqs[0] and " in=0 " in reqs[0]
          and f" out={sent} " in reqs[0] and re.search(r" id=\d+", reqs[0]),
          f"request log line ({'journal' if journal else 'file'}): priority, rows, bytes in/out, id: {reqs}")
T.finish()
