"""The README's Python examples run as written against a daemon serving the sample root
(scripts/sample-root.sh, the one `make run` serves), with its URL in place of :8080."""
import os
import re
import subprocess

import pytest

from conftest import REPO, _start


def _blocks():
    with open(os.path.join(REPO, "README.md")) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


@pytest.fixture(scope="module")
def sample_url(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("sample"))
    subprocess.run([os.path.join(REPO, "scripts", "sample-root.sh"), root], check=True,
                   capture_output=True)
    proc, url = _start(root)
    yield url
    proc.terminate()
    proc.wait()


def test_readme_has_examples():
    assert len(_blocks()) >= 2


@pytest.mark.parametrize("n", range(len(_blocks())))
def test_readme_example_runs(sample_url, n):
    code = _blocks()[n].replace("http://127.0.0.1:8080", sample_url)
    scope = {}
    exec(compile(code, "README.md python block %d" % (n + 1), "exec"), scope)
    if "rows" in scope:
        assert scope["rows"]["emb"].shape == (3, 128)
    if "loss" in scope:
        assert scope["batch"]["emb"].shape[1] == 128
