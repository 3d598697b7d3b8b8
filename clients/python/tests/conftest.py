"""Starts a real lanced over tests/fixtures for the session (bin/lanced of the repository, or
$LANCED) on an ephemeral port."""
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.normpath(os.path.join(HERE, "..")))  # the package, from the tree
FIXTURES = os.path.join(REPO, "tests", "fixtures")


def _start(root):
    binary = os.environ.get("LANCED") or os.path.join(REPO, "bin", "lanced")
    log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "lanced-pytest-%d.log" % os.getpid()), "w+")
    proc = subprocess.Popen([binary, "--root", root, "--listen", "127.0.0.1:0", "--workers", "2"],
                            stderr=log)
    for _ in range(200):
        log.seek(0)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read())
        if m:
            url = "http://127.0.0.1:%s" % m.group(1)
            for _ in range(100):
                try:
                    urllib.request.urlopen(url + "/healthz").read()
                    return proc, url
                except OSError:
                    time.sleep(0.05)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    log.seek(0)
    raise RuntimeError("lanced did not start:\n" + log.read())


@pytest.fixture(scope="session")
def daemon():
    proc, url = _start(FIXTURES)
    yield url
    proc.terminate()
    proc.wait()
