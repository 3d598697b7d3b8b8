"""`pip install --no-build-isolation clients/python` builds with Debian's setuptools, runs
protoc at build time and gives a package that imports without the source tree."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def test_pip_install(tmp_path):
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip("pip is not installed for %s (Debian python3-pip)" % sys.executable)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation",
                    "--no-deps", "--no-index", "--target", str(target), os.path.dirname(HERE)],
                   check=True, cwd=tmp_path)
    out = subprocess.run([sys.executable, "-c", "import lanced, lanced._pb as p; "
                          "print(lanced.Client.__name__, p.pb.__file__)"],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(target)},
                         check=True, capture_output=True, text=True).stdout
    assert out.startswith("Client " + str(target)) and "_gen" in out
