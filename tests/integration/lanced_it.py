"""Shared by the Python integration tests (daemon_*.py): starting the real daemon on an
ephemeral port, and ok/FAIL lines with a summary. Like lib.sh for the shell tests."""
import re
import socket
import subprocess
import sys
import time


class Checks:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, cond, msg):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
        print("ok  " if cond else "FAIL", msg, flush=True)

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)


def start(bin_dir, root, *args, listen=True, **popen):
    """Starts lanced over root (on 127.0.0.1:0 unless listen=False), returns (process, port, log
    lines so far); port is None when listen=False. Raises SystemExit if it does not start."""
    cmd = [f"{bin_dir}/lanced", "--root", root, "--workers", "2"]
    if listen:
        cmd += ["--listen", "127.0.0.1:0"]
    p = subprocess.Popen(cmd + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **popen)
    log, port, deadline = [], None, time.time() + 10
    while time.time() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        log.append(line)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
        if "serving" in line:
            return p, port, log
    p.kill()
    raise SystemExit("daemon did not start: " + "".join(log))


def read_to_close(s, errors=(socket.timeout,)):
    """Everything socket s receives until the server closes it, or until one of `errors`
    (a timeout by default; () lets every error through); s is closed. Returns (bytes, whether
    the server closed it)."""
    out, closed = b"", False
    try:
        while True:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            out += d
    except errors:
        pass
    s.close()
    return out, closed


def metrics(port, src="127.0.0.1"):
    """The daemon's /metrics page (its text), read on a connection of its own from address src
    (a second loopback address is another client to the per-client limits)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data, _ = read_to_close(s, errors=())
    return data.decode(errors="replace").split("\r\n\r\n", 1)[-1]


def metric_in(text, name):
    """The value of series name on a /metrics page: an unlabelled metric, or a series named with
    its labels (name{label="v"}); a labelled metric's first series when name has none. An int
    when whole, None when the page has no such series."""
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            v = float(line.rsplit(" ", 1)[1])
            return int(v) if v.is_integer() else v
    return None


def metric(port, name, src="127.0.0.1"):
    """metric_in of the daemon's /metrics page, read now."""
    return metric_in(metrics(port, src), name)
