#!/usr/bin/env python3
"""Where connections go and where heavy requests run (accept.c least_loaded, server.c crowded).

1. Placement: a new connection goes to the network thread with the fewest connections in a
   request, not the fewest open: idle keep-alive connections (a client's metadata connection
   beside its data connection) must not put a busy connection beside another busy one. Fails
   on the old rule (fewest open), which placed the connection beside the busy one.
2. Crowding: when placement has put two busy connections on one thread anyway (both opened
   while neither was busy yet), the heavy requests of one (its last take held the thread over
   1 ms) run on take threads while the other's answer is still being sent, and every answer is
   what the same request gets alone.
A request that stays in progress is a description stalled on its take thread
(LANCED_TEST_STALL_PATH), or an answer its client does not read (a small receive buffer).
Usage: tests/integration/daemon_placement.py BIN ROOT"""
import os
import re
import socket
import sys
import time

from lanced_it import Checks, metric, metric_in, metrics, start

BIN, ROOT = sys.argv[1], sys.argv[2]
T = Checks("placement")
check = T.check
env = dict(os.environ, LANCED_TEST_STALL_PATH="train.lance", LANCED_TEST_STALL_MS="1500")
p, port, _ = start(BIN, ROOT, "--io-mode", "buffered", env=env)  # --workers 2: two network threads


def connect(rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(20)
    s.connect(("127.0.0.1", port))
    time.sleep(0.15)  # its network thread has seen it (counted as waiting for a request)
    return s


def answers(s, n):
    """n HTTP answers read from s: [(status, body)] (every answer here has a Content-Length)."""
    out, buf = [], b""
    while len(out) < n:
        while b"\r\n\r\n" not in buf:
            d = s.recv(65536)
            if not d:
                return out
            buf += d
        head, _, buf = buf.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        while len(buf) < length:
            d = s.recv(65536)
            if not d:
                return out
            buf += d
        out.append((int(head.split(b" ")[1]), buf[:length]))
        buf = buf[length:]
    return out


STALLED = b"GET /files/train.lance HTTP/1.1\r\nHost: x\r\n\r\n"

# ---- 1. placement by busy connections ---------------------------------------------------
i1 = connect()                      # thread 0 (both empty: the lowest index)
x = connect()                       # thread 1 (fewer open)
x.sendall(STALLED)                  # ... and busy for 1.5 s on a take thread
time.sleep(0.2)
i2 = connect()                      # thread 0 (not busy)
y = connect()                       # the old rule: thread 1, beside the busy x (2 open against 2)
text = metrics(port)                    # its own connection goes to thread 0 as well
per = [metric_in(text, 'lanced_network_thread_connections{thread="%d"}' % t) for t in (0, 1)]
check(per == [4, 1], "a new connection goes where no request is in progress: per-thread "
      "connections [4, 1] with the busy one alone (got %s)" % per)
got = answers(x, 1)
check(got and got[0][0] == 200, "the stalled description is answered (%s)" % (got[0][0] if got else None))
for s in (i1, i2, y, x):
    s.close()
time.sleep(0.3)

# ---- 2. two heavy connections on one thread -------------------------------------------------
ids = ",".join(str(k) for k in range(0, 40000, 20))  # 2,000 rows, every column: tens of ms each
HEAVY = b"GET /files/sample.lance/rows?ids=%s HTTP/1.1\r\nHost: x\r\n\r\n" % ids.encode()
ref = socket.create_connection(("127.0.0.1", port), timeout=20)
ref.sendall(HEAVY)
want = answers(ref, 1)
ref.close()
time.sleep(0.3)
check(want and want[0][0] == 200 and len(want[0][1]) > 100000,
      "a 2,000-row answer alone: 200, %d bytes" % (len(want[0][1]) if want else 0))

s = connect()                       # thread 0
s.sendall(STALLED)                  # ... busy while the two heavy ones connect
time.sleep(0.2)
h1 = connect(rcvbuf=4096)           # thread 1
h2 = connect(rcvbuf=4096)           # thread 1: beside h1, neither busy yet
check(answers(s, 1)[0][0] == 200, "the stalled description is answered (thread 0 is idle again)")
before = metric(port, "lanced_take_handoffs_crowded_total") or 0
h1.sendall(HEAVY * 3)               # the first runs inline (now heavy); its answer is not read
time.sleep(0.5)
h2.sendall(HEAVY * 3)               # h1 still in its first answer: thread 0 has two busy
time.sleep(0.5)
got1 = answers(h1, 3)               # h1's next two: heavy, h2's answer unsent meanwhile
got2 = answers(h2, 3)
after = metric(port, "lanced_take_handoffs_crowded_total")
check(len(got1) == 3 and len(got2) == 3, "all six pipelined answers come (%d + %d)" % (len(got1), len(got2)))
check(all(g == want[0] for g in got1 + got2), "each is the 2,000-row answer byte for byte")
check(after is not None and after - before >= 1,
      "heavy requests of a crowded thread ran on take threads (%s handed over)" % (None if after is None else after - before))
for c in (h1, h2, s):
    c.close()

# Light requests stay on their thread: single rows on two crowded connections are not handed over.
a, b = connect(), connect()
before = metric(port, "lanced_take_handoffs_crowded_total")
for k in range(20):
    for c in (a, b):
        c.sendall(b"GET /files/sample.lance/rows?ids=%d HTTP/1.1\r\nHost: x\r\n\r\n" % k)
    answers(a, 1), answers(b, 1)
check(metric(port, "lanced_take_handoffs_crowded_total") == before,
      "single-row requests are never handed over for crowding")
p.terminate()
p.wait(timeout=10)
T.finish()
